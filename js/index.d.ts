// Type declarations for residual-mt's ES module API (js/index.js).

/** Language pair [source, target], BCP 47 codes such as "es" or "en". */
export type LanguagePair = [string, string];

export type Availability = 'unavailable' | 'downloadable' | 'downloading' | 'available';

/** Fired on the monitor while the engine and the model download. */
export class DownloadProgressEvent extends Event {
  readonly type: 'downloadprogress';
  /** Bytes loaded so far, over all files (engine and model). */
  readonly loaded: number;
  /** Bytes in all (from manifest.json or Content-Length); loaded / total is the fraction. */
  readonly total: number;
  readonly lengthComputable: boolean;
  /** The file the last bytes belong to, or null for the first and last events. */
  readonly file: string | null;
}

export interface CreateMonitor extends EventTarget {
  ondownloadprogress: ((event: DownloadProgressEvent) => void) | null;
  addEventListener(type: 'downloadprogress', listener: (event: DownloadProgressEvent) => void,
    options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions): void;
}

export interface CreateTranslatorOptions {
  /** URL or directory (Node) of a model: config.json, model.safetensors, spm.model, manifest.json. Default: the shipped model. */
  model?: string | URL;
  /** Source language; checked against the model; also the sentence splitter's locale. */
  sourceLanguage?: string;
  /** Target language; required when the model translates into several languages. */
  targetLanguage?: string;
  /** Receives an EventTarget that fires 'downloadprogress' events. */
  monitor?: (monitor: CreateMonitor) => void;
  /** Aborts loading; aborted later, it destroys the translator. */
  signal?: AbortSignal;
  /** Run the engine in a worker. Default: a Web Worker in browsers (the page's thread if none can start), in-process in Node; true: required (worker_threads in Node). */
  worker?: boolean;
  /** URL, path or bytes of residual-mt.wasm. Default: the package's dist/residual-mt.wasm. */
  wasm?: string | URL | Uint8Array | ArrayBuffer;
  /** Check each file against manifest.json (SHA-256, size). true: when the manifest exists (default); 'require': it must. */
  verify?: boolean | 'require';
}

export interface TranslateOptions {
  signal?: AbortSignal;
  /** Beam size (1 = greedy), at most 256. Default: 5. */
  beam?: number;
  /** Most output tokens per sentence. Default: 1.2 x source length + 10, within the model's max_positions. */
  maxLength?: number;
  /** Length penalty (fairseq's lenpen). Default 1. */
  lenpen?: number;
}

export interface TranslationDetails {
  text: string;
  /** Sentences translated. */
  sentences: number;
  /** Output tokens (best hypotheses). */
  outputTokens: number;
  /** Time in the engine for the whole batch, ms. */
  ms: number;
}

export class Translator {
  /** Same as createTranslator(). */
  static create(options?: CreateTranslatorOptions): Promise<Translator>;
  static availability(options?: { model?: string | URL; sourceLanguage?: string; targetLanguage?: string; signal?: AbortSignal }): Promise<Availability>;

  readonly sourceLanguage: string | null;
  readonly targetLanguage: string | null;
  /** Infinity: long input is split into sentences. */
  readonly inputQuota: number;
  /** The model directory URL. */
  readonly model: string;
  /** The model's parsed config.json. */
  readonly config: Record<string, unknown>;
  /** The pairs the model translates. */
  readonly languagePairs: LanguagePair[];
  /** Whether the engine runs in a worker. */
  readonly inWorker: boolean;
  readonly destroyed: boolean;

  /**
   * Translates one text: split into sentences, batched, joined with the original whitespace.
   * Rejects with a RangeError for a limit (err.code 'RMT_E_SIZE': one sentence needs more than the
   * engine's memory limit), or with an Error naming the sentences the model gave no translation,
   * whose `translations` holds the result with those sentences left as they were.
   */
  translate(text: string, options?: TranslateOptions & { details?: false }): Promise<string>;
  /** Translates texts in one batch; results in order. */
  translate(texts: string[], options?: TranslateOptions & { details?: false }): Promise<string[]>;
  translate(text: string, options: TranslateOptions & { details: true }): Promise<TranslationDetails>;
  translate(texts: string[], options: TranslateOptions & { details: true }): Promise<TranslationDetails[]>;

  /**
   * The translation as it is decoded: each chunk is the whole output so far
   * (it grows, and may revise its last words as the search goes on); the last
   * chunk equals what translate() returns. Cancel the stream to stop the work.
   */
  translateStreaming(text: string, options?: TranslateOptions): ReadableStream<string> & AsyncIterable<string>;

  /** Input tokens the text uses (tokens of each sentence plus its end-of-sentence token). */
  measureInputUsage(text: string, options?: { signal?: AbortSignal }): Promise<number>;

  /** Rejects queued and running calls with an AbortError (or `reason`) and frees the model when no other translator uses it. */
  destroy(reason?: unknown): void;
}

/** Loads the engine and the model (with progress events) and returns a translator. */
export function createTranslator(options?: CreateTranslatorOptions): Promise<Translator>;

/** Whether createTranslator() with these options would work, and whether it would download first. */
export function availability(options?: { model?: string | URL; sourceLanguage?: string; targetLanguage?: string; signal?: AbortSignal }): Promise<Availability>;

/** What a model translates, reading only its config.json. */
export function modelInfo(options?: { model?: string | URL; signal?: AbortSignal }): Promise<{ url: string; config: Record<string, unknown>; pairs: LanguagePair[] }>;

/** Language pairs in a model config (or from a directory name such as ".../es-en/"). */
export function languagePairs(config: Record<string, unknown>, modelUrl?: string): LanguagePair[];

/** The default model directories, relative to the package root, in order of preference. */
export const DEFAULT_MODELS: readonly string[];

/** Pieces of text: sentences to translate and the whitespace between them (concatenated, they give the text back). */
export function segmentText(text: string, options?: { locale?: string; rules?: boolean }): { text: string; translate: boolean }[];

/** Sentences of a paragraph, each with its trailing whitespace (Intl.Segmenter, or rules). */
export function splitSentences(text: string, options?: { locale?: string; rules?: boolean }): string[];
