// Where the engine runs: in this thread (InProcessBackend) or in a worker
// (WorkerBackend: a Web Worker in browsers, a worker_thread in Node). Both
// offer start(), loadEngine(engine), load(files), loadDetector(files),
// call(type, payload, onPartial) -> { promise, cancel(reason) } and dispose().

import { replaySteps } from './env.js';
import { reviveError, unknownError } from './errors.js';
import { startWorker } from './port.js';

export class InProcessBackend {
  async start() {
    const { Runner } = await import('./runner.js');
    this.runner = new Runner();
  }

  // The engine ({ wasm, threads }) before its model (Runner.loadEngine).
  loadEngine(engine) {
    return this.runner.loadEngine(engine);
  }

  // onWeights(weights): called with the weights (or their digest: engine.js
  // loadModel) once they are in the engine's memory.
  load(files, onWeights) {
    return this.runner.load({ ...files, onWeights, onWarmedUp: replaySteps });
  }

  // files: { model, wasm?, threads } (Runner.loadDetector).
  loadDetector(files) {
    return this.runner.loadDetector(files);
  }

  // Returns { promise, cancel(reason) }.
  call(type, payload, onPartial) {
    let reason = null;
    const run = {
      translate: () => this.runner.translate(payload.texts, payload.options,
        { cancelled: () => reason, onPartial: payload.stream ? onPartial : undefined }),
      measure: () => this.runner.measure(payload.text, payload.options),
      detect: () => this.runner.detect(payload.text),
    }[type];
    return { promise: run(), cancel: (why) => { reason = why; } };
  }

  async dispose() {
    await this.runner.exclusive(() => this.runner.dispose());
  }
}

export class WorkerBackend {
  async start() {
    const url = new URL('./worker.js', import.meta.url);
    this.pending = new Map();
    this.nextId = 1;
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
    // A worker that fails or exits takes its jobs with it: they and every
    // later call reject (never hang), and the next createTranslator starts a new one.
    const onFailure = (err) => {
      if (this.failed || this.closing) return;
      const error = unknownError(`residual-mt: the translation worker failed: ${err?.message ?? err}`);
      onReady.reject(error);
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
      this.failed = error;
      this.onDead?.();
    };
    this.worker = await startWorker(url, 'residual-mt');
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

  // The engine ({ wasm, threads }: bytes move, a compiled module is shared)
  // before its model.
  loadEngine({ wasm, threads }) {
    return this.send({ type: 'engine', wasm, threads }, ArrayBuffer.isView(wasm) ? [wasm.buffer] : []).promise;
  }

  // Bytes move to the worker (a compiled WebAssembly.Module is shared with
  // it); onWeights(weights): the weights (or their digest) moved back once they are in the
  // engine's memory (to be checked while the worker loads them).
  load(files, onWeights) {
    const transfer = [files.wasm, files.weights, files.spm].filter((a) => ArrayBuffer.isView(a)).map((a) => a.buffer);
    return this.send({ type: 'load', ...files, returnWeights: !!onWeights }, transfer, onWeights).promise;
  }

  // The model's bytes move to the worker.
  loadDetector({ model, wasm, threads }) {
    const transfer = [model, wasm].filter((a) => ArrayBuffer.isView(a)).map((a) => a.buffer);
    return this.send({ type: 'detector', model, wasm, threads }, transfer).promise;
  }

  call(type, payload, onPartial) {
    const { id, promise } = this.send({ type, ...payload }, [], onPartial);
    return {
      promise,
      cancel: (why) => this.worker.post({ type: 'cancel', target: id, message: why?.message }),
    };
  }

  async dispose() {
    const reply = this.send({ type: 'dispose' }).promise;
    this.closing = true; // its exit is expected now
    try {
      await reply;
    } catch { /* the worker goes anyway */ }
    this.terminate();
  }

  terminate() {
    this.worker?.terminate();
  }
}
