// Where an engine runs: in this thread (InProcessBackend) or in a worker
// (WorkerBackend: a Web Worker in browsers, a worker_thread in Node, shared
// by a translation model and the language detector). Both offer start(),
// request(type, payload, hooks) -> { promise, cancel(reason) } (the
// requests of js/engine/protocol.js; a translator's and a detector's jobs
// come through JobQueue), loadEngine(engine), load(files, onWeights),
// loadDetector(files) and dispose().

import { WORKER_URL } from '../defaults.js';
import { dispatch, transferList } from '../engine/protocol.js';
import { isNode, replaySteps } from '../util/env.js';
import { notSupported, reviveError, unknownError } from '../util/errors.js';
import { startWorker } from '../util/port.js';

// The loads both backends offer over their request().
class Backend {
  // The engine ({ wasm, threads }) before its model (Runner.loadEngine).
  loadEngine(engine) {
    return this.request('engine', engine).promise;
  }

  // onWeights(weights): called with the weights (or their digest:
  // binding.js loadModel) once they are in the engine's memory.
  load(files, onWeights) {
    return this.request('load', files, { onWeights, onWarmedUp: replaySteps }).promise;
  }

  // files: { model, wasm?, threads } (Runner.loadDetector).
  loadDetector(files) {
    return this.request('detector', files).promise;
  }
}

export class InProcessBackend extends Backend {
  async start() {
    const { Runner } = await import('../engine/runner.js');
    this.runner = new Runner();
  }

  request(type, payload, hooks = {}) {
    let reason = null;
    return { promise: dispatch(this.runner, type, payload, { ...hooks, cancelled: () => reason }), cancel: (why) => { reason = why; } };
  }

  async dispose() {
    await this.runner.exclusive(() => this.runner.dispose());
  }
}

// One worker serves this realm's engines: a translation model's
// (host/models.js) and the language detector's (api/detector.js), each a Runner of its
// own there (its slot), so a page that detects and then translates starts
// one worker, and one engine's dispose never touches the other's. A worker
// holds one translation model at most: a second model gets a worker of its
// own, and the two translate in parallel. The worker ends when its last
// engine is disposed.
const workers = new Set(); // the EngineWorkers that take new engines

class EngineWorker {
  constructor() {
    this.slots = new Set(); // the WorkerBackends in it, an engine each
    this.pending = new Map();
    this.nextId = 1;
    this.nextSlot = 1;
    this.started = this.start();
    // Each engine's start() reports it; new engines go to a new worker.
    this.started.catch((err) => {
      this.failed ??= err;
      workers.delete(this);
    });
  }

  has(role) {
    for (const backend of this.slots) if (backend.role === role && !backend.retired) return true;
    return false;
  }

  async start() {
    let onReady;
    const ready = new Promise((resolve, reject) => { onReady = { resolve, reject }; });
    const onMessage = (msg) => {
      if (msg.type === 'ready') {
        onReady.resolve();
        return;
      }
      if (msg.type === 'steps') { // the warm-up's, after the load
        replaySteps(msg.steps);
        return;
      }
      if (msg.type === 'lock') {
        // Granted only once the worker, which holds it, has gone.
        navigator.locks.request(msg.lock, () => onFailure(new Error('it stopped (closed or crashed)')));
        return;
      }
      const job = this.pending.get(msg.id);
      if (!job) return;
      if (msg.type === 'partial') { job.onPartial?.(msg.text); return; }
      if (msg.type === 'weights') { job.onPartial?.(msg.weights); return; }
      this.pending.delete(msg.id);
      if (!this.pending.size) this.worker.unref();
      if (msg.type === 'done') job.resolve(msg.value);
      else job.reject(reviveError(msg.error));
    };
    // A worker that fails or exits takes the jobs of all its engines with
    // it: they and every later call reject (never hang), and the next
    // translator or detector starts a new one.
    const onFailure = (err) => {
      if (this.failed || this.closing) return;
      const error = unknownError(`residual-mt: the translation worker failed: ${err?.message ?? err}`);
      this.failed = error;
      workers.delete(this);
      onReady.reject(error);
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
      for (const backend of this.slots) backend.onDead?.();
    };
    this.worker = await startWorker(WORKER_URL, 'residual-mt');
    this.worker.listen(onMessage, onFailure);
    await ready;
    this.worker.unref();
  }

  send(message, transfer, onPartial) {
    if (this.failed) return { id: 0, promise: Promise.reject(this.failed) };
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, onPartial }));
    // Node: an idle worker does not keep the process alive (no destroy() needed to exit).
    this.worker.ref();
    this.worker.post({ ...message, id }, transfer);
    return { id, promise };
  }

  // Takes `engine` out; true when it was the last (the worker then takes no
  // new engine, and its exit is expected).
  leave(backend) {
    this.slots.delete(backend);
    if (this.slots.size) return false;
    workers.delete(this);
    this.closing = true;
    return true;
  }

  terminate() {
    this.worker?.terminate();
  }
}

// The worker for a new engine of this role ('translator' or 'detector'):
// one that runs, or is starting, and holds no engine of that role; else a new one.
function workerFor(backend) {
  let shared = [...workers].find((w) => !w.has(backend.role));
  if (!shared) {
    shared = new EngineWorker();
    workers.add(shared);
  }
  shared.slots.add(backend);
  return shared;
}

// One engine (a Runner, its slot) in this realm's shared worker.
export class WorkerBackend extends Backend {
  constructor(role = 'translator') {
    super();
    this.role = role;
  }

  async start() {
    this.shared = workerFor(this);
    this.slot = this.shared.nextSlot++;
    try {
      await this.shared.started;
    } catch (err) {
      this.terminate();
      throw err;
    }
  }

  send(message, transfer, onPartial) {
    return this.shared.send({ ...message, slot: this.slot }, transfer, onPartial);
  }

  // Bytes move to the worker (a compiled WebAssembly.Module is shared with
  // it); onWeights(weights): the weights (or their digest) moved back once
  // they are in the engine's memory (to be checked while the worker loads them).
  request(type, payload, { onWeights, onPartial } = {}) {
    const message = { type, ...payload, ...(type === 'load' ? { returnWeights: !!onWeights } : {}) };
    const { id, promise } = this.send(message, transferList(type, payload), onWeights ?? onPartial);
    return {
      promise,
      cancel: (why) => { if (!this.shared.failed) this.shared.worker.post({ type: 'cancel', target: id, message: why?.message }); },
    };
  }

  // This engine is going (its last calls drain, then dispose()): a new one
  // of its role may join its worker meanwhile (a page that destroys its
  // translator and makes another keeps one worker).
  retire() {
    this.retired = true;
  }

  // Frees this engine; the worker closes with its last one.
  async dispose() {
    if (this.left) return;
    this.left = true;
    const last = this.shared.leave(this);
    try {
      await this.shared.send({ type: 'dispose', slot: this.slot, close: last }).promise;
    } catch { /* the worker goes anyway */ }
    if (last) this.shared.terminate();
  }

  // As dispose(), without waiting for the engine (a start or load that failed).
  terminate() {
    if (this.left || !this.shared) return;
    this.left = true;
    if (this.shared.leave(this)) this.shared.terminate();
    else this.shared.send({ type: 'dispose', slot: this.slot }).promise.catch(() => {});
  }
}

// Whether an engine runs in a worker: `worker` as given, by default in
// browsers (not in Node); a NotSupportedError where none can run.
export function workerWanted(worker) {
  const useWorker = worker ?? (!isNode() && typeof Worker === 'function');
  if (useWorker && !isNode() && typeof Worker !== 'function') throw notSupported('this environment has no Web Workers; pass { worker: false }');
  return useWorker;
}
