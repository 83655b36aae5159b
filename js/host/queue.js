// A page's end of an engine's jobs: each call goes to the engine at once
// (the engine runs one at a time: js/engine/lock.js), and leaves at once when
// its signal aborts (the engine then skips it, or stops it between two
// decoding steps when it is running).

import { onAbort } from '../util/streams.js';

export class JobQueue {
  constructor(backend) {
    this.backend = backend;
    this.sent = new Set(); // the engine's answers still to come
  }

  // Resolves with the job's value; rejects at once when `signal` aborts, even
  // while the engine is still finishing (the next job waits for it there).
  // onPartial(text): the job's partial results until it settles.
  push(type, payload, { signal, onPartial }) {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      let settled = false, off = null;
      const settle = (fn, value) => {
        if (settled) return;
        settled = true;
        off?.();
        fn(value);
      };
      let call;
      try {
        call = this.backend.request(type, payload, { onPartial: (text) => { if (!settled) onPartial?.(text); } });
      } catch (err) {
        settle(reject, err);
        return;
      }
      off = signal && onAbort(signal, (reason) => {
        call.cancel(reason);
        settle(reject, reason);
      });
      const answer = call.promise.then((value) => settle(resolve, value), (err) => settle(reject, err));
      this.sent.add(answer);
      answer.finally(() => this.sent.delete(answer));
    });
  }

  // Resolves when the engine has answered every job sent to it.
  async drained() {
    while (this.sent.size) await Promise.all(this.sent);
  }
}
