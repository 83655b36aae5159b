// Rule of js/util/: small helpers every side uses (the runtime, errors,
// streams and signals, language tags, a worker's ends). Imports nothing
// outside util/ (and defaults.js).
//
// What the runtime offers: Node or a browser, WebAssembly SIMD (the one probe
// for it, used before anything downloads and before the engine loads),
// relaxed SIMD (the probe that picks the engine build: defaults.js), and
// threads (shared memory and workers: the threads build, js/engine/threads.js).

import { makeError } from './errors.js';

export function isNode() {
  return typeof process === 'object' && !!process.versions?.node && typeof window === 'undefined';
}

// Whether this realm's document is no longer fully active: a removed
// iframe's (its document has lost its window). Never in Node or a worker.
export function documentInactive() {
  const doc = globalThis.document;
  return typeof doc === 'object' && doc !== null && 'defaultView' in doc && doc.defaultView === null;
}

// As in the Translator and LanguageDetector APIs: every call made from a
// document that is no longer fully active (a removed iframe's realm) fails.
export function checkDocument() {
  if (documentInactive()) throw makeError('InvalidStateError', 'residual-mt: the document is not fully active (a removed iframe?)');
}

// A module with one v128 instruction: validates only where WASM SIMD works.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65,
  0, 253, 15, 253, 98, 11]);

// What the runtime lacks for the engine, or null when nothing.
export function missingFeatures() {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.validate !== 'function') {
    return 'WebAssembly is not available in this JavaScript engine';
  }
  try {
    if (!WebAssembly.validate(SIMD_PROBE)) {
      return 'this browser lacks WebAssembly SIMD (fixed-width 128-bit SIMD: Chrome/Edge 91+, Firefox 89+, Safari 16.4+)';
    }
  } catch {
    return 'this browser lacks WebAssembly SIMD';
  }
  return null;
}

// A module with one f32x4.relaxed_madd (0xfd 0x105): validates only where
// relaxed SIMD works (Chrome 114+; Node 20 with --experimental-wasm-relaxed-simd).
const RELAXED_SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 19, 1,
  17, 0, 65, 0, 253, 15, 65, 0, 253, 15, 65, 0, 253, 15, 253, 133, 2, 11]);

let relaxedSimd;
export function hasRelaxedSimd() {
  if (relaxedSimd === undefined) {
    try {
      relaxedSimd = typeof WebAssembly === 'object' && WebAssembly.validate(RELAXED_SIMD_PROBE);
    } catch {
      relaxedSimd = false;
    }
  }
  return relaxedSimd;
}

// The load's steps as User Timing measures named "rmt:<step>" (a browser's
// performance panel shows them; tests/bench/load_bench.js reads them).
// timeStep(name) starts one and returns the function that ends it. With a
// `log` array the step is pushed there instead, as { name, start, end } in ms
// since the epoch, for a worker to send to the page (replaySteps).
export function timeStep(name, log) {
  const perf = globalThis.performance;
  if (typeof perf?.now !== 'function') return () => {};
  const start = perf.now();
  return () => {
    const end = perf.now();
    if (log) log.push({ name, start: perf.timeOrigin + start, end: perf.timeOrigin + end });
    else measure(name, start, end);
  };
}

// Records steps a worker logged (timeStep's `log`) on this thread's timeline.
export function replaySteps(log) {
  const origin = globalThis.performance?.timeOrigin;
  for (const step of log ?? []) measure(step.name, step.start - origin, step.end - origin);
}

function measure(name, start, end) {
  try {
    globalThis.performance.measure(`rmt:${name}`, { start, end });
  } catch { /* no User Timing here */ }
}

// Whether the engine may run on several threads here: shared WebAssembly
// memory and workers to share it with. Node has both (worker_threads); a
// browser shares memory only with a cross-origin isolated page (COOP and
// COEP headers: `npm start` sends them), and workers there may start workers.
export function hasThreads() {
  if (typeof SharedArrayBuffer !== 'function' || typeof WebAssembly !== 'object') return false;
  if (isNode()) return true;
  return globalThis.crossOriginIsolated === true && typeof Worker === 'function';
}

// How many logical processors the runtime reports (1 when it does not say).
export async function processorCount() {
  if (isNode()) {
    const os = await import('node:os');
    return os.availableParallelism?.() ?? os.cpus().length;
  }
  return globalThis.navigator?.hardwareConcurrency || 1;
}

// Whether this thread may sleep in Atomics.wait / memory.atomic.wait32: not
// a browser page's own thread (only its workers may).
export function canBlock() {
  return isNode() || typeof WorkerGlobalScope !== 'undefined';
}
