// Type declarations for residual-mt/engine: the low-level objects over the C
// API (js/engine/binding.js): token ids, n-best lists, step-by-step decoding.

/** Search options; defaults and ranges are the engine's (Engine.defaults). */
export interface SearchOptions {
  beam?: number;
  nbest?: number;
  minLen?: number;
  maxLenA?: number;
  maxLenB?: number;
  lenpen?: number;
  /** Score only the words of the model's lexical shortlist, if it has one (default true); false: every word. */
  shortlist?: boolean | 0 | 1;
  /** For a model that translates into several languages. */
  targetLanguage?: string;
  /** Most sentences decoded together. Default 32. */
  batch?: number;
}

export interface Hypothesis {
  ids: number[];
  score: number;
  hitMaxLength: boolean;
  /** With text (translateTexts, results(true)). */
  text?: string;
  /** With spans (read, results(true, true)): per token [source begin, end, target begin, end] in UTF-8 bytes. */
  spans?: Int32Array;
}

export class Engine {
  /**
   * Loads the engine: bytes, a URL or path, or nothing for the package's dist/ build this runtime runs
   * (threads, relaxed SIMD or plain). threads: 1 to 16; default the processors up to 4, and 1 where
   * memory cannot be shared. Only the threads build runs on more than one (engine.threads says).
   */
  static load(source?: Uint8Array | ArrayBuffer | string | URL, options?: { threads?: number }): Promise<Engine>;
  /** How many threads the engine runs on. */
  readonly threads: number;
  /** Ends the engine's worker threads (it then runs on one). */
  dispose(): void;
  /** The engine's search defaults. */
  readonly defaults: Readonly<Required<Omit<SearchOptions, 'targetLanguage' | 'batch'>>>;
  /** The engine's limits (rmt_limit): the most beam, bytes of one translation, min_len and max_len_b, bytes of a JSON file, threads. */
  readonly limits: Readonly<{ beam: number; translationBytes: number; len: number; jsonBytes: number; threads: number }>;
  /** The search fields: their C names, JS options and whether they take only integers. */
  readonly searchFields: readonly { index: number; name: string; option: string; integer: boolean }[];
  /**
   * Loads a model. One whose matrices are int8 (models/quantize.py) computes in int8 as it is;
   * `int8: true` quantizes a float model as it loads, exactly as models/quantize.py would.
   */
  loadModel(files: { config: string | Uint8Array; weights: Uint8Array | ArrayBuffer; spm?: Uint8Array | ArrayBuffer; int8?: boolean }): Model;
}

export class Model {
  readonly engine: Engine;
  readonly config: Record<string, unknown>;
  /** The bytes its weights take in the engine's memory. */
  readonly bytes: number;
  /** Starts a translation of sentences of ids (without </s>). */
  begin(sentences: ArrayLike<number>[], options?: SearchOptions): Translation;
  /** Starts a translation of texts (tokenized in the engine). */
  beginText(texts: string[], options?: SearchOptions): Translation;
  /** Sentences to tokenize once and translate later (beginSources). */
  sources(): Sources;
  /** Starts a translation of the sentences of `sources` numbered `which`, as beginText of their texts. */
  beginSources(sources: Sources, which: number[], options?: SearchOptions): Translation;
  /** The number of source ids (as sourceIds) of each text, in one call. */
  countIds(texts: string[]): number[];
  /** The most ids of text one sentence may have with these options. */
  maxSourceIds(options?: SearchOptions): number;
  /** Per text, its n-best list, best first. */
  translateTexts(texts: string[], options?: SearchOptions): Hypothesis[][];
  /** Per sentence of ids, its n-best list, best first. */
  translateIds(sentences: ArrayLike<number>[], options?: SearchOptions): Hypothesis[][];
  tokenize(text: string): number[];
  sourceIds(text: string): number[];
  detokenize(ids: number[]): string;
  pieceToId(piece: string): number;
  dispose(): void;
}

export class Sources {
  /** How many sentences were added; the next one gets this number. */
  readonly count: number;
  /** Tokenizes a sentence and keeps it; returns its number of ids (0: nothing to translate). */
  add(text: string): number;
  free(): void;
}

export class Translation {
  /** One decoding step for every unfinished sentence; returns how many are left. */
  step(): number;
  run(): void;
  /** What sentence s's translation is sure to start with (its whole best once finished). */
  stableText(s: number): string;
  /** The best hypothesis so far of sentence s. */
  partial(s: number): number[];
  /** Hypothesis k of sentence s in one call: with text its text, with spans its alignment in text (raw bytes). */
  read(s: number, k: number, options?: { text?: boolean; spans?: boolean }): Hypothesis;
  /** Per sentence its n-best list; withSpans: the best hypothesis's spans too. */
  results(withText?: boolean, withSpans?: boolean): Hypothesis[][];
  /**
   * Per token of hypothesis k of sentence s, the source position (in its ids) the last decoder
   * layer's encoder attention, heads averaged, weighted most when the token was chosen (-1: none).
   */
  alignment(s: number, k?: number): number[];
  /** The same as spans: of `text` (sentence s's text as given to beginText; null: none) and of the hypothesis's text. */
  alignmentText(s: number, text: string, k?: number): { source: [number, number] | null; target: [number, number] }[];
  encoderOut(s: number): Float32Array;
  forceStep(tokens: number[]): Float32Array;
  /** After forceStep: sentence s's last-layer encoder-attention weights, heads averaged ([length + 1]). */
  crossAttention(s: number): Float32Array;
  free(): void;
}

/** The batching policy: lists of sentence indices, sorted by length unless keepOrder. */
export function planBatches(lengths: number[], options: { beam: number; most?: number; keepOrder?: boolean }): number[][];
/**
 * Takes the next batch off `pending` (planBatches' lists, changed in place) and starts it with
 * begin(batch); a batch too large for the engine's memory limit goes back as two halves, one
 * sentence alone over it throws. Null when no batch is left.
 */
export function nextBatch<T>(pending: number[][], begin: (batch: number[]) => T): { batch: number[]; translation: T } | null;
