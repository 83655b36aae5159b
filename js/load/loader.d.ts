// Type declarations for residual-mt/loader: fetching the engine and model
// files (js/load/loader.js), with progress, manifest checks and the model cache.

export interface ModelFiles {
  /** The engine: compiled while it downloaded where the browser could (WebAssembly.compileStreaming), else its bytes. */
  wasm: Uint8Array | object; // object: a WebAssembly.Module (typed loosely: no DOM lib needed)
  config: string;
  /** The weights, or (deferVerify, in a browser) the file the cache keeps them in, which the engine reads itself. */
  weights: Uint8Array | { kept: string[]; size: number };
  spm: Uint8Array;
  manifest: { format?: string; files: Record<string, { sha256: string; size?: number }> } | null;
  manifestBytes: Uint8Array | null;
  /** Bytes downloaded (cached files are not). */
  bytes: number;
  /** With deferVerify: the SHA-256 check of the downloaded weights, left to the caller (null when there is none): their bytes, or their digest (hex) and size. */
  checkWeights: ((weights: Uint8Array | { sha256: string; size: number }) => Promise<void>) | null;
  /** With deferVerify: keeps the weights that passed checkWeights in the cache (call once they are loaded). */
  keep(): Promise<void>;
  /** The kept weights (weights.kept) could not be loaded: they are kept no more. */
  dropKept(): Promise<void>;
}

/** A file location as a URL: strings are paths in Node, URLs relative to the page in browsers. */
export function toUrl(source: string | URL): Promise<URL>;
/** A model directory as a URL ending in "/". */
export function toLocation(model: string | URL): Promise<URL>;
/** The default model: the installed residual-mt-es-en, the repository's copy, or the pinned URL. */
export function resolveDefaultModel(options?: { signal?: AbortSignal }): Promise<URL>;
export function defaultWasmUrl(): URL;
export function sha256Hex(bytes: Uint8Array | ArrayBuffer): Promise<string>;
export function loadFiles(base: URL, options?: {
  wasm?: string | URL | Uint8Array | ArrayBuffer;
  signal?: AbortSignal;
  onProgress?: (progress: { loaded: number; total: number; file: string | null }) => void;
  verify?: boolean | 'require';
  cache?: boolean;
  /** Leave the weights' check to the caller (checkWeights), who loads them meanwhile. */
  deferVerify?: boolean;
  /** Called with the engine as soon as it is here, before the model's files may be. */
  onEngine?: (wasm: Uint8Array | object) => void;
  /** false: read no copy of the weights whose check is left to the caller (kept file, the page's Cache Storage). Default true. */
  cachedCopies?: boolean;
  /** The most bytes of a file whose size neither manifest.json nor (for the weights) config.json states. Default MAX_MODEL_BYTES (1 GiB). */
  maxModelBytes?: number;
}): Promise<ModelFiles>;
export function readConfig(base: URL, options?: { signal?: AbortSignal; cache?: boolean }): Promise<Record<string, unknown>>;
export function readManifest(base: URL, options?: { signal?: AbortSignal }): Promise<{ manifest: ModelFiles['manifest']; bytes: Uint8Array } | null>;
/** Whether the whole model at `base` is in the cache. */
export function isCached(base: URL): Promise<boolean>;
