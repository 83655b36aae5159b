// One job in the engine at a time: calls wait in order, an aborted one leaves
// the queue (or stops between two decoding steps when it is running).

import { onAbort } from './streams.js';

export class JobQueue {
  constructor(backend) {
    this.backend = backend;
    this.jobs = [];
    this.running = null;
  }

  // Resolves with the job's value; rejects at once when `signal` aborts, even
  // while the engine is still finishing (the next job waits for it).
  push(type, payload, { signal, onPartial }) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) { reject(signal.reason); return; }
      const job = { type, payload, onPartial, resolve, reject, signal, settled: false };
      job.settle = (fn, value) => {
        if (job.settled) return;
        job.settled = true;
        job.off?.();
        fn(value);
      };
      job.off = signal && onAbort(signal, (reason) => this.abort(job, reason));
      this.jobs.push(job);
      this.pump();
    });
  }

  abort(job, reason) {
    if (job === this.running) job.cancel?.(reason);
    else this.jobs = this.jobs.filter((j) => j !== job);
    job.settle(job.reject, reason);
  }

  async pump() {
    if (this.running || !this.jobs.length) return;
    const job = this.jobs.shift();
    this.running = job;
    try {
      const { promise, cancel } = this.backend.call(job.type, job.payload, (text) => { if (!job.settled) job.onPartial?.(text); });
      job.cancel = cancel;
      job.settle(job.resolve, await promise);
    } catch (err) {
      job.settle(job.reject, err);
    } finally {
      this.running = null;
      if (this.idle && !this.jobs.length) this.idle();
      this.pump();
    }
  }

  // Resolves when nothing runs or waits.
  drained() {
    if (!this.running && !this.jobs.length) return Promise.resolve();
    return new Promise((resolve) => { this.idle = resolve; });
  }
}
