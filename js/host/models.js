// Translation models in engines: one download and one engine per model (and
// engine build, worker mode, verification, caching), shared by the
// translators that use it through the EngineRegistry (engine-registry.js).
// A model loads in steps: its backend starts while its files download
// (startBackend), the engine while the rest comes (onEngine), the weights go
// into the engine while their SHA-256 is checked (loadVerified), and a kept
// copy that fails is fetched once more from the network (openModel).

import { WEIGHTS, defaultWasmUrl } from '../defaults.js';
import { keptCopyFailed } from '../load/copies.js';
import { loadFiles } from '../load/loader.js';
import { replaySteps, timeStep } from '../util/env.js';
import { makeError } from '../util/errors.js';
import { engines, startBackend } from './engine-registry.js';

// The key of a model's engine: what makes two loads of it differ.
function keyOf(options) {
  return [options.base.href, options.wasmKey, options.useWorker ? 'worker' : 'inline', options.verify, options.cache,
    `threads${options.threads}`, `max${options.maxModelBytes ?? ''}`].join(' ');
}

// The model's files, read while the backend starts; the engine (its
// compiled module, onEngine) goes to the backend as soon as both are there.
// Returns { files, enginePosted }: enginePosted resolves once it has been
// sent (null when the engine came with the files).
async function downloadFiles(engine, options, start, threads) {
  const { base, marian, wasm, verify, cache, cachedCopies = true, maxModelBytes } = options;
  let enginePosted = null;
  const onEngine = (compiled) => {
    enginePosted = start.ready.then((backend) => { backend.loadEngine({ wasm: compiled, threads: threads() }).catch(() => {}); });
  };
  // A Marian model is converted as it loads (marian/load.js, imported only for one).
  const load = marian ? async (_, o) => (await import('../marian/load.js')).loadMarianFiles(marian, o) : loadFiles;
  try {
    const [files] = await Promise.all([
      load(base, { wasm: wasm ?? defaultWasmUrl(options.threads), verify, cache, deferVerify: true, onEngine, cachedCopies, maxModelBytes,
        signal: engine.loadController.signal, onProgress: (p) => engine.progress(p) }),
      start.ready,
    ]);
    return { files, enginePosted };
  } catch (err) {
    start.ready.then((backend) => backend.dispose(), () => start.backend.terminate?.()).catch(() => {});
    throw err;
  }
}

// Loads the model into the engine while its SHA-256 is checked (loadFiles'
// deferVerify): the backend hands the weights back once they are in the
// engine's memory. A file that fails the check fails the load. Returns the
// backend's info.
async function loadVerified(backend, { files, enginePosted }, threads) {
  const loaded = timeStep('load');
  let verified = null;
  const loading = (enginePosted ?? Promise.resolve()).then(() => backend.load({ wasm: enginePosted ? undefined : files.wasm,
    config: files.config, weights: files.weights, spm: files.spm, threads },
    files.checkWeights && ((weights) => {
      verified = files.checkWeights(weights);
      verified.catch(() => {}); // awaited below, once the load has settled
    })));
  await loading.catch(() => {});
  if (verified) await verified;
  else if (files.checkWeights) await loading.then(() => { throw new Error('residual-mt: the weights were not handed back to be checked'); });
  const info = await loading;
  loaded();
  replaySteps(info.steps);
  return info;
}

// One try at loading the model into `engine`: resolves once it is attached;
// resolves with `retry` (the error) when a kept copy of the weights failed
// and may be fetched again.
async function openOnce(engine, options) {
  const start = startBackend({ useWorker: options.useWorker, workerRequired: options.workerRequired, role: 'translator',
    warning: 'running on the page\'s thread', timed: true });
  // What stops a worker (a Content Security Policy) stops the engine's threads too.
  const threads = () => (options.useWorker && start.inline() ? 1 : options.threads);
  const download = await downloadFiles(engine, options, start, threads);
  const { files } = download;
  try {
    const info = await loadVerified(start.backend, download, threads());
    if (engine.loadController.signal.aborted) throw engine.loadController.signal.reason;
    Object.assign(engine, { config: info.config, threads: info.threads, searchOptions: info.searchOptions });
  } catch (err) {
    await start.backend.dispose().catch(() => {});
    if (engine.loadController.signal.aborted || err.name === 'AbortError') throw err;
    // A copy of the weights (kept in the file system, or the page's Cache
    // Storage) did not match (stale or damaged), or the kept file could not
    // be read: once more, through the network.
    if (files.weights?.kept) await files.dropKept();
    if ((err.cachedCopy || files.weights?.kept) && options.cachedCopies !== false) return { retry: err };
    // The files came, the engine could not use them: the API's OperationError.
    throw makeError('OperationError', err.message);
  }
  // Weights that came otherwise are kept now (for the engine to read
  // itself next time), not while the load ran.
  files.keep().catch(() => {});
  engine.attach(start.backend);
  return {};
}

async function openModel(engine, options) {
  engine.base = options.base.href;
  const { retry } = await openOnce(engine, options);
  if (!retry) return;
  try {
    await openOnce(engine, { ...options, cachedCopies: false });
  } catch (again) {
    throw keptCopyFailed(WEIGHTS, retry.message, again);
  }
}

// What a model at this URL is doing here: 'downloading', 'available' (loaded),
// or null when no translator has it.
export function modelState(modelHref) {
  for (const engine of engines.values()) {
    if (engine.base === modelHref) return engine.state === 'downloading' ? 'downloading' : 'available';
  }
  return null;
}

// The config of a model already loaded here (no need to read it again), or null.
export function loadedConfig(modelHref) {
  for (const engine of engines.values()) if (engine.base === modelHref && engine.config) return engine.config;
  return null;
}

// The engine of the model for these options (loading it if no one has),
// counted as used until release(); onProgress(bytes) while it downloads.
// Rejects with signal.reason when it aborts (the download stops when no one
// else waits for it).
export function acquireModel(options, onProgress, signal) {
  return engines.acquire(keyOf(options), (engine) => openModel(engine, options), { onProgress, signal });
}
