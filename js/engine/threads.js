// The engine's worker threads (the threads build, dist/residual-mt-threads.wasm;
// the C side is src/threads.h). The thread that loads the engine is thread 0;
// this starts threads 1..n-1, each a worker (a Web Worker, or a worker_thread
// in Node) running js/pool-worker.js: an instance of the same module over the
// same shared memory, with a stack of its own, parked in rmt_thread_run until
// a matrix product is split over the threads. stop() ends them; an engine
// that is never stopped does not keep Node running (the workers are unref'd).
// A worker that fails or ends after it started is reported to the pool
// (rmt_thread_lost: thread 0 waits for it no more) and to onLost.

import { POOL_WORKER_URL } from '../defaults.js';
import { startWorker } from '../util/port.js';


// Starts one worker and resolves with it once it is about to enter
// rmt_thread_run; rejects if it fails first. afterStart(message): its failure later.
async function startThread(start, afterStart) {
  const worker = await startWorker(POOL_WORKER_URL, `residual-mt-thread-${start.index}`);
  let settled = false;
  await new Promise((resolve, reject) => {
    worker.listen((msg) => {
      if (settled) return afterStart(msg.message);
      settled = true;
      if (msg.type === 'ready') resolve();
      else reject(new Error(msg.message));
    }, (err) => {
      if (settled) return afterStart(err.message);
      settled = true;
      reject(err);
    });
    worker.post(start);
  }).catch((err) => {
    worker.terminate();
    throw new Error(`residual-mt: engine thread ${start.index} failed: ${err.message}`);
  });
  worker.unref();
  return worker;
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 1));

// Runs the engine `wasm` (an instance of `module`, its pool sized for n
// threads: rmt_threads_prepare) on n threads; returns { stop(), workers },
// stop ending them (the engine is then single-threaded). onLost(message): a
// worker failed or ended after it started (the engine should stop the pool).
export async function startThreads(wasm, module, n, onLost = () => {}) {
  const x = wasm.exports;
  const workers = [];
  let stopping = false;
  const stop = () => {
    stopping = true;
    x.rmt_threads_stop(); // returns once every worker still working has left rmt_thread_run
    for (const worker of workers) worker.terminate();
    workers.length = 0;
  };
  const lost = (index) => (message) => {
    if (stopping) return;
    x.rmt_thread_lost(index);
    onLost(`engine thread ${index} failed (${message})`);
  };
  try {
    const started = await Promise.allSettled(Array.from({ length: n - 1 }, (_, k) => startThread({
      module, memory: wasm.memory, index: k + 1, stackTop: x.rmt_thread_stack_top(k + 1),
    }, lost(k + 1))));
    for (const s of started) if (s.status === 'fulfilled') workers.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    // Each has said it is about to enter rmt_thread_run: a few microseconds.
    while (x.rmt_threads_running() < n - 1) await pause();
  } catch (err) {
    // The workers that started are about to enter rmt_thread_run, on stacks
    // that stop() frees: let them in first (they leave at once).
    for (let i = 0; i < 1000 && x.rmt_threads_running() < workers.length; i++) await pause();
    stop();
    throw err;
  }
  return { stop, workers };
}
