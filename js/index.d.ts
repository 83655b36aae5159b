// Type declarations for residual-mt's ES module API (js/index.js).

/** Language pair [source, target], BCP 47 codes such as "es" or "en". */
export type LanguagePair = [string, string];

export type Availability = 'unavailable' | 'downloadable' | 'downloading' | 'available';

/** Options of addEventListener (as in the DOM; written out so that a Node-only project needs no DOM lib). */
export type ListenerOptions = boolean | { capture?: boolean; once?: boolean; passive?: boolean; signal?: AbortSignal };

/**
 * One Marian file: a URL or path, its bytes (gzipped, zstd or not), or either with the SHA-256 (hex) it must have;
 * a URL may also give its size, name, and the size and SHA-256 it must have decompressed (as Firefox's registry does).
 */
export type MarianFile = string | URL | Uint8Array | ArrayBuffer
  | { url: string | URL; sha256?: string; size?: number; name?: string; decompressed?: { sha256?: string; size?: number } }
  | { bytes: Uint8Array | ArrayBuffer; sha256?: string; name?: string };

/** A Marian model's files: model (.bin, .npz), vocab (.spm, or OPUS-MT's vocab.yml with sourceSpm and targetSpm), shortlist (lex.*.s2t.bin). */
export interface MarianFiles {
  model: MarianFile;
  vocab: MarianFile;
  shortlist?: MarianFile;
  /** The target vocabulary where a model names two (srcvocab, trgvocab): it must be the same as vocab. */
  targetVocab?: MarianFile;
  sourceSpm?: MarianFile;
  targetSpm?: MarianFile;
}

/** Fired on the monitor while the engine and the model load, as the Translator API fires it. */
export class DownloadProgressEvent extends Event {
  readonly type: 'downloadprogress';
  /** The fraction loaded, from 0 (the first event) to 1 (the last), in steps of 1/65536. */
  readonly loaded: number;
  /** Always 1. */
  readonly total: 1;
  readonly lengthComputable: true;
  /** Bytes downloaded so far by this load (files found in the cache are not downloaded). */
  readonly bytesLoaded: number;
  /** Bytes to download in all (from manifest.json or Content-Length). */
  readonly bytesTotal: number;
  /** The file the last bytes belong to, or null. */
  readonly file: string | null;
}

export interface CreateMonitor extends EventTarget {
  ondownloadprogress: ((event: DownloadProgressEvent) => void) | null;
  addEventListener(type: 'downloadprogress', listener: (event: DownloadProgressEvent) => void, options?: ListenerOptions): void;
  addEventListener(type: string, listener: ((event: Event) => void) | { handleEvent(event: Event): void } | null,
    options?: ListenerOptions): void;
}

/** A catalogue of models (docs/API.md): its JSON, or the URL of it; or Firefox's model registry ('firefox', or a Remote Settings server root). */
export type Catalog = string | URL | { models: { model: string | { marian: MarianFiles }; pairs?: [string, string][] }[] } |
  { firefox: string | URL; collection?: string };

export interface AvailabilityOptions {
  /** BCP 47 tag, e.g. "es" or "es-ES" (matched to the model's languages by language). Required. */
  sourceLanguage: string;
  /** BCP 47 tag. Required. The same language as sourceLanguage: the text is passed through. */
  targetLanguage: string;
  /**
   * URL or directory (Node) of a model, or a Marian model's files (Firefox Translations, OPUS-MT),
   * converted in memory as they load. Default: the shipped model (residual-mt-es-en).
   */
  model?: string | URL | { marian: MarianFiles };
  /**
   * A catalogue of models, consulted when `model` is not given: { models: [{ model, pairs? }] } or the URL of
   * its JSON. Its model for the pair, or two through English (a PivotTranslator); then the shipped model's pairs.
   */
  catalog?: Catalog;
  signal?: AbortSignal;
  /** Use (and fill) the model cache. Default true. */
  cache?: boolean;
}

export interface CreateTranslatorOptions extends AvailabilityOptions {
  /** Receives an EventTarget that fires 'downloadprogress' events. */
  monitor?: (monitor: CreateMonitor) => void;
  /** Run the engine in a worker. Default: a Web Worker in browsers (the page's thread if none can start), in-process in Node; true: required (worker_threads in Node). */
  worker?: boolean;
  /** URL, path or bytes of the engine. Default: dist/residual-mt-threads.wasm for more than one thread, else dist/residual-mt-relaxed.wasm where the runtime has relaxed SIMD, else dist/residual-mt.wasm. */
  wasm?: string | URL | Uint8Array | ArrayBuffer;
  /** How many threads the engine runs on, 1 to MAX_THREADS (16). Default: the processors (navigator.hardwareConcurrency, os.availableParallelism()) up to DEFAULT_THREADS_CAP (4). Always 1 where memory cannot be shared (a page that is not cross-origin isolated). */
  threads?: number;
  /** Check each file against manifest.json (SHA-256, size). true: when the manifest exists (default); 'require': it must. */
  verify?: boolean | 'require';
  /** The input usage one call may have (a QuotaExceededError past it). Default: INPUT_QUOTA. */
  inputQuota?: number;
  /**
   * The most bytes of a model file whose size nothing else states (no manifest.json entry; for the weights, no
   * config.json to bound them), downloaded or decompressed (a Marian model's files, gzipped or not); a file past
   * it fails the load with an OperationError naming it. Default: MAX_MODEL_BYTES (1 GiB).
   */
  maxModelBytes?: number;
}

export interface TranslateOptions {
  signal?: AbortSignal;
  /** Beam size (1 = greedy), at most 256 (the engine's limit). Default: 5. */
  beam?: number;
  /** Most output tokens per sentence. Default: 1.2 x source length + 10, within the model's max_positions. */
  maxLength?: number;
  /** Length penalty (fairseq's lenpen). Default 1. */
  lenpen?: number;
  /** Also: fairseq's search options. */
  minLen?: number;
  maxLenA?: number;
  maxLenB?: number;
  /**
   * With a model that has a lexical shortlist (the default model does), each sentence's output words are
   * chosen among those its source words bring in (faster). false: among all words. Default true.
   */
  shortlist?: boolean;
  /**
   * 'html': the text is HTML; its markup is kept (inline elements go around the target words the
   * model aligned to theirs; script, style, code, pre, translate="no" and class="notranslate" stay
   * as they are). Needs a DOM in browsers, parse5 (an optional peer dependency) in Node.
   * Default 'plain-text'.
   */
  format?: 'plain-text' | 'html';
}

/** Target words aligned to source words: character ranges [start, end) of the input and of `text`. */
export interface AlignmentLink {
  source: [number, number];
  target: [number, number];
}

export interface TranslationDetails {
  text: string;
  /** Sentences translated. */
  sentences: number;
  /** Output tokens (best hypotheses). */
  outputTokens: number;
  /** Time in the engine for the whole batch, ms. */
  ms: number;
  /**
   * Per target token with a source, its span in `text` and the span of the input token the last
   * decoder layer's encoder attention (heads averaged) weighted most when choosing it, without the
   * whitespace around them. Plain text only (not with format 'html').
   */
  alignment?: AlignmentLink[];
  /**
   * The verbatim spans of the input (URLs, e-mail addresses, numbers, times, dates, codes, tags,
   * paths, inline code, symbols and emoji: docs/API.md, "Verbatim spans"), in order, each given
   * back byte for byte: where it is in the input and in `text`, and what the engine did.
   */
  spans?: VerbatimSpan[];
}

export interface VerbatimSpan {
  kind: 'url' | 'email' | 'number' | 'time' | 'date' | 'code' | 'tag' | 'path' | 'inline-code' | 'symbol';
  /** 'kept': the model wrote it so; 'replaced': the target words aligned to it replaced; 'inserted': the model dropped it. */
  how: 'kept' | 'replaced' | 'inserted';
  /** Its [start, end) in the input (UTF-16 indices). */
  source: [number, number];
  /** Its [start, end) in `text`: the same characters. */
  target: [number, number];
}

export class Translator {
  /** Same as createTranslator(). */
  static create(options: CreateTranslatorOptions): Promise<Translator>;
  static availability(options: AvailabilityOptions): Promise<Availability>;
  /** The built-in this one replaced (residual-mt/polyfill/replace), if any. */
  static readonly builtin?: unknown;

  /** The model's tag for the language it matched ("es" for "es-ES"); the canonical tag for a same-language translator. */
  readonly sourceLanguage: string;
  readonly targetLanguage: string;
  /** The input usage one call may have (Infinity for a same-language translator). */
  readonly inputQuota: number;
  /** The model directory URL (null for a same-language translator). */
  readonly model: string | null;
  /** The model's parsed config.json. */
  readonly config: Record<string, unknown> | null;
  /** The pairs the model translates. */
  readonly languagePairs: LanguagePair[];
  /** Whether the engine runs in a worker. */
  readonly inWorker: boolean;
  /** How many threads the engine runs on (1 for a same-language translator). */
  readonly threads: number;
  readonly destroyed: boolean;

  /**
   * Translates one text: split into sentences, batched, joined with the original whitespace; text
   * without a letter comes back as it was. Rejects with a QuotaExceededError past inputQuota, a
   * RangeError for a limit (err.code 'RMT_E_SIZE': one sentence needs more than the engine's memory
   * limit), or an UnknownError DOMException naming the sentences the model gave no translation,
   * whose `translations` holds the result with those sentences left as they were (an UnknownError
   * too when the engine's worker dies).
   */
  translate(text: string, options?: TranslateOptions & { details?: false }): Promise<string>;
  /** Translates texts in one batch; results in order. */
  translate(texts: string[], options?: TranslateOptions & { details?: false }): Promise<string[]>;
  translate(text: string, options: TranslateOptions & { details: true }): Promise<TranslationDetails>;
  translate(texts: string[], options: TranslateOptions & { details: true }): Promise<TranslationDetails[]>;
  translate(text: string, options: TranslateOptions & { details: boolean }): Promise<string | TranslationDetails>;
  translate(texts: string[], options: TranslateOptions & { details: boolean }): Promise<string[] | TranslationDetails[]>;

  /**
   * The translation in pieces to append: each chunk is text the search can no longer change, and
   * together they are what translate() returns. Cancel the stream to stop the work.
   */
  translateStreaming(text: string, options?: TranslateOptions): ReadableStream<string> & AsyncIterable<string>;

  /** Input usage of the text against inputQuota: each sentence's tokens plus its end-of-sentence token (0 when nothing is translated). */
  measureInputUsage(text: string, options?: { signal?: AbortSignal }): Promise<number>;

  /** Rejects queued, running and later calls with an AbortError (or `reason`) and frees the model when no other translator uses it. */
  destroy(reason?: unknown): void;
}

/** Loads the engine and the model (with progress events) and returns a translator. */
/** A translator through English: the second model's translation of the first's (from a catalogue). */
export interface PivotTranslator {
  readonly sourceLanguage: string;
  readonly pivotLanguage: string;
  readonly targetLanguage: string;
  readonly inputQuota: number;
  readonly model: [string, string];
  readonly inWorker: boolean;
  readonly threads: number;
  translate: Translator['translate'];
  translateStreaming: Translator['translateStreaming'];
  measureInputUsage: Translator['measureInputUsage'];
  destroy(reason?: unknown): void;
  readonly destroyed: boolean;
}

/** With a catalogue, a pair two of its models cover through English gives a PivotTranslator. */
export function createTranslator<O extends CreateTranslatorOptions = CreateTranslatorOptions>(options?: O):
  Promise<O extends { catalog: Catalog } ? Translator | PivotTranslator : Translator>;

export interface LanguageDetectorCreateCoreOptions {
  /** Languages the text is expected in (BCP 47; canonicalized; a RangeError for a malformed tag). */
  expectedInputLanguages?: Iterable<string>;
}

export interface LanguageDetectorCreateOptions extends LanguageDetectorCreateCoreOptions {
  signal?: AbortSignal;
  monitor?: (monitor: CreateMonitor) => void;
  /** residual-mt: run the engine in a worker (default: true in browsers, false in Node). */
  worker?: boolean;
}

export interface LanguageDetectionResult {
  /** A BCP 47 tag (its script only where not the language's usual one: zh, zh-Hant, el-Latn), or 'und' (the last entry: the languages less likely than the rest together, or no letters). */
  detectedLanguage: string;
  confidence: number;
}

/** The Language Detector API (webmachinelearning/translation-api) on residual-mt's own model. */
export class LanguageDetector {
  static create(options?: LanguageDetectorCreateOptions): Promise<LanguageDetector>;
  /** 'available' when the model knows every expected language, else 'unavailable'. */
  static availability(options?: LanguageDetectorCreateCoreOptions): Promise<Availability>;
  /** The built-in this one replaced (residual-mt/polyfill/replace), if any. */
  static readonly builtin?: unknown;
  private constructor();
  /** Most likely first, each more likely than 'und', which is last with what the others leave: the confidences add up to 1. */
  detect(input: string, options?: { signal?: AbortSignal }): Promise<LanguageDetectionResult[]>;
  /** The input's length in UTF-16 code units. */
  measureInputUsage(input: string, options?: { signal?: AbortSignal }): Promise<number>;
  readonly expectedInputLanguages: readonly string[] | null;
  readonly inputQuota: number;
  /** The tags the model can detect. */
  readonly languages: string[];
  readonly destroyed: boolean;
  destroy(reason?: unknown): void;
}

export function createLanguageDetector(options?: LanguageDetectorCreateOptions): Promise<LanguageDetector>;
export function detectorAvailability(options?: LanguageDetectorCreateCoreOptions): Promise<Availability>;
/** Input usage (UTF-16 code units) one LanguageDetector call may have. */
export const DETECTOR_INPUT_QUOTA: number;
/** The language detector's model package (models/langid/), found as DEFAULT_MODEL is. */
export const DETECTOR_MODEL: Readonly<{ package: string; version: string; repoPath: string; url: string; file: string }>;

/** Whether createTranslator() with these options would work, and whether it would download first. */
export function availability(options: AvailabilityOptions): Promise<Availability>;

/** What a model translates, reading only its config.json. */
export function modelInfo(options?: { model?: string | URL; signal?: AbortSignal; cache?: boolean }): Promise<{ url: string; config: Record<string, unknown>; pairs: LanguagePair[] }>;

/** Language pairs in a model config (or from a directory name such as ".../es-en/"). */
export function languagePairs(config: Record<string, unknown>, modelUrl?: string): LanguagePair[];

/** The default model: its npm package, pinned version, path in a checkout, and CDN URL. */
export const DEFAULT_MODEL: Readonly<{ package: string; version: string; repoPath: string; url: string }>;

/** The default input quota (tokens per call). */
export const INPUT_QUOTA: number;
/** The default maxModelBytes: the most bytes of a model file whose size nothing else states (1 GiB). */
export const MAX_MODEL_BYTES: number;
/** The default thread count's cap (the processors, up to this). */
export const DEFAULT_THREADS_CAP: number;
/** The most threads the threads option takes. */
export const MAX_THREADS: number;

/** Where the default model is: the installed package, the repository's copy, or the pinned URL. */
export function resolveDefaultModel(options?: { signal?: AbortSignal }): Promise<URL>;

/** Pieces of text: sentences to translate and the text kept as it is between them (concatenated, they give the text back). */
export function segmentText(text: string, options?: { locale?: string; rules?: boolean }): { text: string; translate: boolean }[];

/** Sentences of a paragraph, each with its trailing whitespace (Intl.Segmenter, or rules). */
export function splitSentences(text: string, options?: { locale?: string; rules?: boolean }): string[];

/** A DOM Element, as much of it as the declarations need (so that a Node-only project needs no DOM lib). */
export interface DomElement {
  readonly nodeType: number;
  readonly ownerDocument: unknown;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
}

/**
 * Translates a DOM subtree in place (browsers): the text in view first, a batch at a time, the same
 * element nodes kept around the aligned words; sets `lang` to the target language. An element
 * translated before is restored first. Rejects (keeping what was done) when aborted.
 */
export function translateElement(element: DomElement, translator: Translator, options?: TranslateOptions):
  Promise<{ runs: number; words: number; ms: number }>;

/** Puts back what translateElement() changed (stopping it if it runs); false when there was nothing. */
export function restoreElement(element: DomElement): boolean;

/** What translatePage() returns. */
export interface LiveTranslation {
  /** Stops watching the page; what is translated stays. */
  stop(): void;
  /** Stops, then puts back the original (in slices): text the page changed since is left as the page wrote it. */
  restore(): Promise<void>;
  /** Resolves once nothing is waiting to be walked or translated. */
  idle(): Promise<void>;
  /** ms from the start to the text in view translated (null when stopped before). */
  readonly firstScreen: Promise<number | null>;
  /** ms from the start to all the page's text translated (null when stopped before). */
  readonly done: Promise<number | null>;
  readonly stats: {
    runs: number; attributes: number; words: number; batches: number; engineTexts: number;
    longestTaskMs: number; firstScreenMs: number | null; doneMs: number | null; givenUp: number; errors: Error[];
  };
}

/**
 * Translates a page or subtree in place and keeps it translated (browsers): the text in view first,
 * the rest when the page is idle, then what the page adds or changes (text, translatable attributes,
 * <option>s, open shadow roots) as it appears. translate="no", .notranslate and editable regions are left alone.
 */
export function translatePage(root: DomElement | object, translator: Pick<Translator, 'translate' | 'targetLanguage'>,
  options?: TranslateOptions): LiveTranslation;
