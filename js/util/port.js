// Both ends of a worker, one way in Node (worker_threads) and in browsers
// (Web Workers): startWorker on the side that starts one (the translation
// worker: backends.js; the engine's threads: threads.js), connect inside it
// (worker.js, pool-worker.js). Each end is { post(message, transfer), listen }.

import { isNode } from './env.js';

// The flags a Node worker_thread starts with: the process's, less those a
// worker refuses. Node refuses per-process flags in a worker ("invalid execArgv
// flags": --expose-gc, --max-old-space-size=N, --stack-size=N, --title ...):
// they are the whole process's anyway, as are V8's wasm flags (such as
// --experimental-wasm-relaxed-simd), so dropping them changes nothing. The
// refused ones are learnt from Node's own error, once, rather than listed here.
// `node -e`'s --input-type is accepted, then fails the worker's own entry
// module: it is about the main script alone, so it never goes.
const refusedFlags = new Set();
const workerExecArgv = () => process.execArgv.filter((arg) => !refusedFlags.has(arg) && !arg.startsWith('--input-type'));

function startNodeWorker(Worker, url) {
  // Twice at most: the refused flags named, then (should Node name none we pass) none at all.
  for (let attempt = 0; ; attempt++) {
    try {
      return new Worker(url, { execArgv: workerExecArgv() });
    } catch (err) {
      if (err?.code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || attempt === 2) throw err;
      const named = (err.message.split(': ')[1] ?? '').split(', ').filter((flag) => process.execArgv.includes(flag));
      (named.length && attempt === 0 ? named : process.execArgv).forEach((flag) => refusedFlags.add(flag));
    }
  }
}

// A page may not start a worker from another origin (the package on a CDN):
// then the worker is a same-origin blob that imports the real one (CORS).
function browserWorkerUrl(url) {
  const origin = globalThis.location?.origin;
  if (!origin || origin === 'null' || url.origin === origin) return url;
  const source = `import ${JSON.stringify(url.href)};`;
  return URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
}

// Starts the module at `url` (a URL) as a worker named `name` (browsers show
// it). Returns { post, listen(onMessage, onFailure), terminate(), ref(), unref() }:
// onFailure(err) when it fails to start, throws, exits or cannot read a
// message; an unref'd worker does not keep Node running (browsers: no-ops).
export async function startWorker(url, name) {
  if (isNode()) {
    const { Worker } = await import('node:worker_threads');
    const worker = startNodeWorker(Worker, url);
    return {
      post: (message, transfer) => worker.postMessage(message, transfer ?? []),
      listen(onMessage, onFailure) {
        worker.on('message', onMessage);
        worker.on('error', onFailure);
        worker.on('exit', (code) => onFailure(new Error(`exited with code ${code}`)));
      },
      terminate: () => worker.terminate(),
      ref: () => worker.ref(),
      unref: () => worker.unref(),
    };
  }
  const worker = new Worker(browserWorkerUrl(url), { type: 'module', name });
  return {
    post: (message, transfer) => worker.postMessage(message, transfer ?? []),
    listen(onMessage, onFailure) {
      worker.onmessage = (event) => onMessage(event.data);
      worker.onerror = (event) => { event.preventDefault?.(); onFailure(new Error(event.message || 'could not start (see the console)')); };
      worker.onmessageerror = () => onFailure(new Error('a message could not be read'));
    },
    terminate: () => worker.terminate(),
    ref: () => {},
    unref: () => {},
  };
}

// The worker's end of its channel to the thread that started it:
// { post(message, transfer), listen(handler), close() }.
export async function connect() {
  if (typeof WorkerGlobalScope !== 'undefined' && typeof self !== 'undefined') {
    return {
      post: (message, transfer) => self.postMessage(message, transfer ?? []),
      listen: (handler) => { self.onmessage = (event) => handler(event.data); },
      close: () => self.close(),
    };
  }
  const { parentPort } = await import('node:worker_threads');
  return {
    post: (message, transfer) => parentPort.postMessage(message, transfer ?? []),
    listen: (handler) => parentPort.on('message', handler),
    close: () => parentPort.close(),
  };
}
