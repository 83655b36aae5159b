// The package's fixed names and paths, each defined here once.

import { hasRelaxedSimd, hasThreads, processorCount } from './util/env.js';

// The default model: its own npm package (the directory models/es-en/ of this
// repository, with its package.json), found in this order (loader.js):
// installed next to residual-mt, then the repository's copy, then `url`, the
// package at its pinned version on an npm CDN.
const MODEL_PACKAGE = 'residual-mt-es-en';
const MODEL_VERSION = '0.6.0'; // models/es-en/package.json's version
export const DEFAULT_MODEL = Object.freeze({
  package: MODEL_PACKAGE,
  version: MODEL_VERSION,
  repoPath: 'models/es-en/',
  url: `https://cdn.jsdelivr.net/npm/${MODEL_PACKAGE}@${MODEL_VERSION}/`,
});

// The engine, relative to the package root: four builds of one source, the
// plain SIMD128 one, the relaxed-SIMD one (fused multiply-adds, the relaxed
// int8 dot) that runtimes with relaxed SIMD get by default, and the same two
// with threads (shared memory) for more than one thread (defaultWasmUrl, the
// one place the choice is made).
export const DEFAULT_WASM = 'dist/residual-mt.wasm';
export const RELAXED_WASM = 'dist/residual-mt-relaxed.wasm';
export const THREADS_WASM = 'dist/residual-mt-threads.wasm';
export const RELAXED_THREADS_WASM = 'dist/residual-mt-relaxed-threads.wasm';

// Threads: by default as many as the runtime reports processors, up to
// DEFAULT_THREADS_CAP (the model's products are small: past a few threads the
// hand-offs cost what the extra threads save, and the page has other work);
// `threads` set by the user may go up to MAX_THREADS: the engine's
// RMT_THREADS_MAX (src/threads.h), here because `threads` is checked before
// any engine is loaded (tests/defaults.test.js checks they agree).
export const DEFAULT_THREADS_CAP = 4;
export const MAX_THREADS = 16;

// Batches (pipeline.js planBatches, the one batching policy): at most
// BATCH_SENTENCES sentences a batch (the API's `batch` option lowers it) and
// BATCH_ROWS rows (sentences x beam: the decoder's cache grows with rows).
export const BATCH_SENTENCES = 32;
export const BATCH_ROWS = 256;

// Runs of a page or of streamed HTML go to the engine a group at a time
// (text/groups.js textGroups): a page's PAGE_WORDS words a call (enough for the
// engine to batch sentences, few enough that the first translated text shows
// soon); streamed HTML's first group STREAM_FIRST_WORDS, each next one twice
// as large, up to STREAM_WORDS (larger batches decode faster).
export const PAGE_WORDS = 200;
export const STREAM_FIRST_WORDS = 16;
export const STREAM_WORDS = 256;

// A page translated live (live.js): its main-thread work in slices of at most
// LIVE_SLICE_MS (a frame stays smooth, no task near 50 ms); a text or
// attribute the page rewrites within LIVE_ECHO_MS of our write (a script
// re-rendering what we wrote) is translated again at most LIVE_REWRITES
// times, then left as the page wrote it (such a script would otherwise loop
// with us); the last LIVE_CACHE translations kept, so the same text (a menu
// repeated, a re-rendered list) does not go to the engine again; text out of
// view waits at most LIVE_IDLE_MS for an idle moment (the engine is in its
// worker: the wait only gives the page's own work room).
export const LIVE_SLICE_MS = 8;
export const LIVE_REWRITES = 3;
export const LIVE_ECHO_MS = 300;
export const LIVE_CACHE = 4096;
export const LIVE_IDLE_MS = 20;

// The drop-in widget (widget.js): its element's name, and the localStorage
// keys (per site, as localStorage is) of the language chosen and of the
// default model's URL once found (a visit offline loads it from the device).
export const WIDGET_TAG = 'residual-mt-translate';
export const WIDGET_STORAGE_KEY = 'residual-mt.widget.target';
export const WIDGET_MODEL_KEY = 'residual-mt.widget.model';

// Input usage one LanguageDetector call may have, in UTF-16 code units (the
// identifier reads all of a text: this bounds one call's work, ~50 ms).
export const DETECTOR_INPUT_QUOTA = 1 << 20;

// The files a model directory holds; manifest.json lists their SHA-256 and size.
export const CONFIG = 'config.json';
export const WEIGHTS = 'model.safetensors';
export const TOKENIZER = 'spm.model';
export const MODEL_FILES = Object.freeze([CONFIG, WEIGHTS, TOKENIZER]);
export const MANIFEST = 'manifest.json';

// The language identifier (LanguageDetector's model): a package of its own,
// the directory models/langid/ (its package.json), found as DEFAULT_MODEL is.
const DETECTOR_PACKAGE = 'residual-mt-langid';
const DETECTOR_VERSION = '0.4.0'; // models/langid/package.json's version
export const DETECTOR_MODEL = Object.freeze({
  package: DETECTOR_PACKAGE,
  version: DETECTOR_VERSION,
  repoPath: 'models/langid/',
  url: `https://cdn.jsdelivr.net/npm/${DETECTOR_PACKAGE}@${DETECTOR_VERSION}/`,
  file: WEIGHTS,
  maxBytes: 16 * 2 ** 20, // the most bytes of its file read (it has 954 KB): a download past it stops
});

// The most bytes of a JSON file read whole (config.json, manifest.json),
// checked before it is read (its size on disk, Content-Length, or as it
// comes): ours have under 1 KB. The engine's RMT_MAX_JSON_BYTES (src/json.h),
// which C enforces on the config it is given; here because these files are
// read before any engine is loaded (tests/defaults.test.js checks they agree).
export const MAX_JSON_BYTES = 1 << 20;

// The largest window a zstd frame may ask the decoder (js/load/zstd/zstd.js) to keep:
// 128 MiB, the reference decoder's own default limit (zstd --long=27; a
// larger window needs `zstd -d --memory=`). A frame of known size up to this
// decodes into one buffer of its size.
export const ZSTD_MAX_WINDOW = 1 << 27;

// The most bytes of a model file whose size nothing else states (no manifest
// entry; for the weights no config to bound them: bounded.js weightsBound),
// downloaded or decompressed (a Marian model's files, gzipped or not): a
// download or an inflate that passes it is stopped (bounded.js). The
// `maxModelBytes` option raises or lowers it. 1 GiB: above the Marian
// models in use (OPUS-MT's big ones have under 600 MB), below what a page's
// 32-bit engine could load anyway.
export const MAX_MODEL_BYTES = 2 ** 30;

// The most bytes of an engine (residual-mt*.wasm) downloaded: ours have under 300 KB.
export const MAX_ENGINE_BYTES = 16 * 2 ** 20;

// Input usage (tokens) one translate() call may have; a QuotaExceededError
// past it. Long text is split into sentences, so this bounds only the work and
// memory of one call (a few MB of text).
export const INPUT_QUOTA = 1 << 20;

const PACKAGE_ROOT = new URL('../', import.meta.url);

// The modules a worker starts, beside this file: js/ unbundled, dist/ in the
// demo's bundles (scripts/bundle.js writes dist/worker.js and dist/pool-worker.js).
export const WORKER_URL = new URL('./worker.js', import.meta.url);
export const POOL_WORKER_URL = new URL('./pool-worker.js', import.meta.url);

export function packageUrl(path) {
  return new URL(path, PACKAGE_ROOT);
}

// The engine this runtime loads when none is given, for `threads` threads
// (threadCount's answer).
export function defaultWasmUrl(threads = 1) {
  const relaxed = hasRelaxedSimd();
  if (threads > 1) return packageUrl(relaxed ? RELAXED_THREADS_WASM : THREADS_WASM);
  return packageUrl(relaxed ? RELAXED_WASM : DEFAULT_WASM);
}

// Checks the `threads` option: undefined (the default) or an integer from 1
// to MAX_THREADS.
export function checkThreads(threads) {
  if (threads === undefined) return;
  if (typeof threads !== 'number' || !Number.isInteger(threads)) {
    throw new TypeError(`residual-mt: threads must be an integer, got ${typeof threads === 'number' ? threads : typeof threads}`);
  }
  if (threads < 1 || threads > MAX_THREADS) {
    throw new RangeError(`residual-mt: threads must be from 1 to ${MAX_THREADS}, got ${threads}`);
  }
}

// How many threads the engine runs on: `threads` (checked) or by default the
// processors up to DEFAULT_THREADS_CAP, and 1 wherever memory cannot be
// shared (a page that is not cross-origin isolated: env.js's hasThreads).
export async function threadCount(threads) {
  checkThreads(threads);
  if (!hasThreads()) return 1;
  return threads ?? Math.max(1, Math.min(await processorCount(), DEFAULT_THREADS_CAP));
}

// Firefox's model registry (registry.js): Mozilla's public Remote Settings
// server, the collections read there (the current one first: zstd
// attachments; then the older one: plain or gzip), the majors of the model
// versions this reader knows (1.x and 2.x: Marian students, plain or gzip;
// 3.x: the same zstd-compressed), and the most bytes of a record list read
// whole (an attachment's bound is its record's size, within MAX_MODEL_BYTES).
export const FIREFOX_REGISTRY = 'https://firefox.settings.services.mozilla.com/v1/';
export const REGISTRY_COLLECTIONS = Object.freeze(['translations-models-v2', 'translations-models']);
export const REGISTRY_MAJORS = Object.freeze({ min: 1, max: 3 });
export const MAX_RECORDS_BYTES = 32 << 20;

// Where the demo looks for models `residual-mt models pull --out` wrote
// (npm start serves them), relative to the package root, and the name of the
// catalogue pull writes there.
export const PULLED_MODELS = 'models/pulled/';
export const CATALOG = 'catalog.json';
