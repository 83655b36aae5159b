// Rule of js/host/: the page side of the engines (which engine, where it
// runs, its jobs' queue). Imports engine/ (the in-process backend, the
// protocol), load/, marian/ and util/, never api/.
//
// The page side of the engines: the one EngineRegistry of this realm, which
// holds every engine in use (a translation model's, the language
// detector's), each a SharedEngine: loaded once for all who ask for the same
// key, counted while used and while a create() waits for it, freed (its
// jobs drained, then disposed) once neither; forgotten when its worker dies.
// Rule of js/host/: the page side. It imports js/engine/ (the in-process
// backend), js/load/ and js/util/, never js/api/.

import { InProcessBackend, WorkerBackend } from './backends.js';
import { JobQueue } from './queue.js';
import { timeStep } from '../util/env.js';
import { onAbort } from '../util/streams.js';

// A started backend ({ backend, ready, inline() }): a worker of this role
// when useWorker, else this thread; a worker that cannot start (a Content
// Security Policy, a file: URL), unless required, leaves the engine on this
// thread, with `warning` in the console. ready resolves with the backend
// that runs; timed: its start recorded as a User Timing step (env.js).
export function startBackend({ useWorker, workerRequired, role, warning, timed = false }) {
  const first = useWorker ? new WorkerBackend(role) : new InProcessBackend();
  const started = { backend: first, inline: () => started.backend instanceof InProcessBackend };
  const step = timed ? timeStep(useWorker ? 'worker start' : 'runner start') : () => {};
  started.ready = first.start().then(step).catch((err) => {
    if (!useWorker || workerRequired) throw err;
    console.warn(`residual-mt: ${warning}: ${err.message}`);
    first.terminate?.();
    started.backend = new InProcessBackend();
    return started.backend.start();
  }).then(() => started.backend);
  return started;
}

// One engine in use: state 'downloading' (loading), 'available', 'closed'.
export class SharedEngine {
  constructor(registry, key) {
    this.registry = registry;
    this.key = key;
    this.refs = 0; // the translators or detectors that use it
    this.waiting = 0; // the create() calls that wait for it
    this.listeners = new Set();
    this.loadController = new AbortController();
    this.state = 'downloading';
  }

  progress(p) {
    this.lastProgress = p;
    for (const listener of this.listeners) listener(p);
  }

  // The loaded engine runs on `backend`: its jobs go through one queue.
  attach(backend) {
    this.backend = backend;
    backend.onDead = () => this.registry.forget(this);
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

  // Frees the engine when no one uses it and no create() waits for it.
  closeIfUnused() {
    if (this.refs > 0 || this.waiting > 0 || this.state !== 'available') return;
    this.registry.forget(this);
    this.state = 'closed';
    this.backend.retire?.();
    this.queue.drained().then(() => this.backend.dispose()).catch(() => {});
  }

  // Waits for the load, counted as waiting meanwhile; rejects with
  // signal.reason when it aborts (the load stops when no one else waits).
  async wait(onProgress, signal) {
    this.waiting++;
    let waiting = true;
    const leave = () => {
      if (waiting) this.waiting--;
      waiting = false;
    };
    if (onProgress) {
      this.listeners.add(onProgress);
      if (this.lastProgress) onProgress(this.lastProgress);
    }
    let off = null;
    const aborted = new Promise((_, reject) => {
      const aborting = () => {
        leave();
        reject(signal.reason);
        if (this.waiting === 0 && this.state === 'downloading') {
          this.loadController.abort(signal.reason);
          this.registry.forget(this);
        }
        this.closeIfUnused();
      };
      if (signal?.aborted) aborting();
      else if (signal) off = onAbort(signal, aborting);
    });
    try {
      await Promise.race([this.ready, aborted]);
    } finally {
      off?.();
      this.listeners.delete(onProgress);
    }
    this.refs++;
    leave();
    return this;
  }
}

export class EngineRegistry {
  #engines = new Map(); // key -> SharedEngine

  // The engine for `key`, loaded by open(engine) if no one has (open
  // attaches its backend; engine.loadController.signal stops it), counted as
  // used until release(); onProgress(p) while it loads.
  acquire(key, open, { onProgress, signal } = {}) {
    let engine = this.#engines.get(key);
    if (!engine) {
      engine = new SharedEngine(this, key);
      this.#engines.set(key, engine);
      engine.ready = open(engine);
      engine.ready.catch(() => this.forget(engine));
    }
    return engine.wait(onProgress, signal);
  }

  forget(engine) {
    if (this.#engines.get(engine.key) === engine) this.#engines.delete(engine.key);
  }

  // The engines in use, loaded or loading.
  values() {
    return this.#engines.values();
  }
}

// This realm's engines: translators' and the language detector's.
export const engines = new EngineRegistry();
