// Loaded models, shared by the translators that use them: one download and
// one engine per model (and engine, worker mode, verification, caching), freed
// once no translator uses it and no create() waits for it.

import { InProcessBackend, WorkerBackend } from './backends.js';
import { replaySteps, timeStep } from '../util/env.js';
import { WEIGHTS, defaultWasmUrl } from '../defaults.js';
import { makeError } from '../util/errors.js';
import { keptCopyFailed } from '../load/copies.js';
import { loadFiles } from '../load/loader.js';
import { JobQueue } from './queue.js';
import { onAbort } from '../util/streams.js';

const hosts = new Map(); // key -> Host

function startBackend(backend, step) {
  const started = timeStep(step);
  return { backend, started: backend.start().then(started) };
}

class Host {
  constructor(key) {
    this.key = key;
    this.refs = 0;
    this.listeners = new Set();
    this.loadController = new AbortController();
    this.waiting = 0;
    this.state = 'downloading';
  }

  progress(p) {
    this.lastProgress = p;
    for (const listener of this.listeners) listener(p);
  }

  async open(options) {
    const { base, marian, wasm, useWorker, workerRequired, verify, cache, cachedCopies = true, maxModelBytes } = options;
    let { threads } = options;
    // The worker starts while the files download.
    let { backend, started } = useWorker ? startBackend(new WorkerBackend('translator'), 'worker start') : startBackend(new InProcessBackend(), 'runner start');
    if (useWorker && !workerRequired) {
      // A page that cannot start the worker (a Content Security Policy, a
      // file: URL) still gets translations, on its own thread.
      started = started.catch((err) => {
        console.warn(`residual-mt: running on the page's thread: ${err.message}`);
        backend.terminate?.();
        backend = new InProcessBackend();
        threads = 1; // what stops a worker (a Content Security Policy) stops the engine's threads too
        return backend.start();
      });
    }
    let files;
    // The engine loads (instantiated, its threads started) while the model's
    // files are still coming; the model's load, asked for once that has been
    // (enginePosted), waits for it there and fails with it.
    let enginePosted = null;
    const onEngine = (compiled) => {
      enginePosted = started.then(() => { backend.loadEngine({ wasm: compiled, threads }).catch(() => {}); });
    };
    try {
      // A Marian model is converted as it loads (marian-load.js, imported only for one).
      const load = marian ? async (_, o) => (await import('../marian/load.js')).loadMarianFiles(marian, o) : loadFiles;
      [files] = await Promise.all([
        load(base, { wasm: wasm ?? defaultWasmUrl(threads), verify, cache, deferVerify: true, onEngine, cachedCopies, maxModelBytes,
          signal: this.loadController.signal, onProgress: (p) => this.progress(p) }),
        started,
      ]);
    } catch (err) {
      started.then(() => backend.dispose(), () => backend.terminate?.()).catch(() => {});
      throw err;
    }
    try {
      // The engine loads the model while its SHA-256 is checked (loadFiles'
      // deferVerify): the backend hands the weights back once they are in the
      // engine's memory. A file that fails the check fails the load.
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
      if (this.loadController.signal.aborted) throw this.loadController.signal.reason;
      this.config = info.config;
      this.threads = info.threads;
      this.searchOptions = info.searchOptions;
    } catch (err) {
      await backend.dispose().catch(() => {});
      if (this.loadController.signal.aborted || err.name === 'AbortError') throw err;
      // A copy of the weights (kept in the file system, or the page's Cache
      // Storage) did not match (stale or damaged), or the kept file could not
      // be read: once more, through the network.
      if (files.weights?.kept) await files.dropKept();
      if ((err.cachedCopy || files.weights?.kept) && cachedCopies) {
        return this.open({ ...options, cachedCopies: false }).catch((again) => { throw keptCopyFailed(WEIGHTS, err.message, again); });
      }
      // The files came, the engine could not use them: the API's OperationError.
      throw makeError('OperationError', err.message);
    }
    // Weights that came otherwise are kept now (for the engine to read
    // itself next time), not while the load ran.
    files.keep().catch(() => {});
    this.backend = backend;
    backend.onDead = () => { if (hosts.get(this.key) === this) hosts.delete(this.key); };
    this.queue = new JobQueue(backend);
    this.state = 'available';
  }

  get inWorker() {
    return this.backend instanceof WorkerBackend;
  }

  release() {
    this.refs--;
    this.closeIfUnused();
  }

  // Frees the engine when no translator uses it and no create() waits for it.
  closeIfUnused() {
    if (this.refs > 0 || this.waiting > 0 || this.state !== 'available') return;
    if (hosts.get(this.key) === this) hosts.delete(this.key);
    this.state = 'closed';
    this.backend.retire?.();
    this.queue.drained().then(() => this.backend.dispose()).catch(() => {});
  }
}

// What a model at this URL is doing here: 'downloading', 'available' (loaded),
// or null when no translator has it.
export function hostState(modelHref) {
  for (const host of hosts.values()) {
    if (host.base === modelHref) return host.state === 'downloading' ? 'downloading' : 'available';
  }
  return null;
}

// The config of a model already loaded here (no need to read it again), or null.
export function loadedConfig(modelHref) {
  for (const host of hosts.values()) if (host.base === modelHref && host.config) return host.config;
  return null;
}

// The loaded model for these options (loading it if no one has), counted as
// used until release(); onProgress(bytes) while it downloads. Rejects with
// signal.reason when it aborts (the download stops when no one else waits).
export async function acquireHost(options, onProgress, signal) {
  const key = [options.base.href, options.wasmKey, options.useWorker ? 'worker' : 'inline', options.verify, options.cache,
    `threads${options.threads}`, `max${options.maxModelBytes ?? ''}`].join(' ');
  let host = hosts.get(key);
  if (!host) {
    host = new Host(key);
    host.base = options.base.href;
    hosts.set(key, host);
    host.ready = host.open(options);
    host.ready.catch(() => { if (hosts.get(key) === host) hosts.delete(key); });
  }
  host.waiting++;
  let waiting = true;
  const leave = () => {
    if (!waiting) return;
    waiting = false;
    host.waiting--;
  };
  host.listeners.add(onProgress);
  if (host.lastProgress) onProgress(host.lastProgress);
  let rejectAbort;
  const aborted = new Promise((_, reject) => { rejectAbort = reject; });
  const aborting = () => {
    leave();
    rejectAbort(signal.reason);
    // Stop the download only when no one else waits for it.
    if (host.waiting === 0 && host.state === 'downloading') {
      host.loadController.abort(signal.reason);
      if (hosts.get(key) === host) hosts.delete(key);
    }
    host.closeIfUnused();
  };
  let off = null;
  if (signal?.aborted) aborting();
  else if (signal) off = onAbort(signal, aborting);
  try {
    await Promise.race([host.ready, aborted]);
  } finally {
    off?.();
    host.listeners.delete(onProgress);
  }
  host.refs++;
  leave();
  return host;
}
