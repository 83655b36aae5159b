// residual-mt: on-device translation, shaped like the W3C/WICG Translator API.
//
//   import { createTranslator } from 'residual-mt';
//   const translator = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
//   console.log(await translator.translate('Hola, mundo.'));
//
// The engine runs in a Web Worker in browsers (in-process in Node unless
// { worker: true }); calls are queued and run one at a time; long text is split
// into sentences, translated as one batch and joined again.

import {
  isNode, loadFiles, makeError, missingFeatures, notSupported, readConfig, resolveDefaultModel, toLocation,
} from './loader.js';

export { DEFAULT_MODELS } from './defaults.js';
export { segmentText, splitSentences } from './segment.js';

// ---- events

const EventBase = typeof Event === 'function' ? Event : class { constructor(type) { this.type = type; } };

export class DownloadProgressEvent extends EventBase {
  constructor(type, { loaded = 0, total = 0, file = null } = {}) {
    super(type);
    Object.defineProperties(this, {
      loaded: { value: loaded, enumerable: true },
      total: { value: total, enumerable: true },
      lengthComputable: { value: total > 0, enumerable: true },
      file: { value: file, enumerable: true },
    });
  }
}

// The object handed to `monitor(m)`: an EventTarget with 'downloadprogress'.
class CreateMonitor extends EventTarget {
  constructor() {
    super();
    this.ondownloadprogress = null;
  }

  dispatchEvent(event) {
    if (event.type === 'downloadprogress' && typeof this.ondownloadprogress === 'function') this.ondownloadprogress(event);
    return super.dispatchEvent(event);
  }
}

// ---- errors

function abortError(message) {
  return makeError('AbortError', message);
}

function destroyedError() {
  return abortError('residual-mt: the translator has been destroyed');
}

function reviveError(e) {
  if (e.name === 'AbortError' || e.name === 'NotSupportedError' || e.name === 'InvalidStateError') return makeError(e.name, e.message);
  const Ctor = { TypeError, RangeError }[e.name] ?? Error;
  const err = new Ctor(e.message);
  if (!(e.name in { TypeError: 1, RangeError: 1, Error: 1 })) err.name = e.name;
  if (e.translations) err.translations = e.translations;
  return err;
}

// `for await (const chunk of stream)` where ReadableStream lacks it (Safari):
// leaving the loop early cancels the stream, as the standard iterator does.
function asyncIterable(stream) {
  if (typeof stream[Symbol.asyncIterator] === 'function') return stream;
  stream[Symbol.asyncIterator] = async function* iterate() {
    const reader = stream.getReader();
    let finished = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) { finished = true; return; }
        yield value;
      }
    } catch (err) {
      finished = true;
      throw err;
    } finally {
      if (!finished) await reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  };
  return stream;
}

function anySignal(signals) {
  const list = signals.filter(Boolean);
  if (list.length <= 1) return list[0];
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(list);
  const controller = new AbortController();
  for (const s of list) {
    if (s.aborted) { controller.abort(s.reason); break; }
    s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}

// ---- backends: where the engine runs

class InProcessBackend {
  async start() {
    const { Runner } = await import('./runner.js');
    this.runner = new Runner();
  }

  load(files) {
    return this.runner.load(files);
  }

  // Returns { promise, cancel(reason) }.
  call(type, payload, onPartial) {
    let reason = null;
    const promise = type === 'translate'
      ? this.runner.translate(payload.texts, payload.options, { cancelled: () => reason, onPartial: payload.stream ? onPartial : undefined })
      : this.runner.measure(payload.text, payload.options);
    return { promise, cancel: (why) => { reason = why; } };
  }

  async dispose() {
    await this.runner.exclusive(() => this.runner.dispose());
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

class WorkerBackend {
  async start() {
    const url = new URL('./worker.js', import.meta.url);
    this.pending = new Map();
    this.nextId = 1;
    let onReady;
    const ready = new Promise((resolve, reject) => { onReady = { resolve, reject }; });
    const onMessage = (msg) => {
      if (msg.type === 'ready') {
        // Granted only once the worker, which holds it, has gone.
        if (msg.lock) navigator.locks.request(msg.lock, () => onFailure(new Error('it stopped (closed or crashed)')));
        onReady.resolve();
        return;
      }
      const job = this.pending.get(msg.id);
      if (!job) return;
      if (msg.type === 'partial') { job.onPartial?.(msg.text); return; }
      this.pending.delete(msg.id);
      if (!this.pending.size) this.worker.unref?.();
      if (msg.type === 'done') job.resolve(msg.value);
      else job.reject(reviveError(msg.error));
    };
    // A worker that fails or exits takes its jobs with it: they and every
    // later call reject (never hang), and the next createTranslator starts a new one.
    const onFailure = (err) => {
      if (this.failed || this.closing) return;
      const error = new Error(`residual-mt: the translation worker failed: ${err?.message ?? err}`);
      onReady.reject(error);
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
      this.failed = error;
      this.onDead?.();
    };
    if (isNode()) {
      const { Worker } = await import('node:worker_threads');
      this.worker = new Worker(url);
      this.worker.on('message', onMessage);
      this.worker.on('error', onFailure);
      this.worker.on('exit', (code) => onFailure(new Error(`exited with code ${code}`)));
      this.terminate = () => this.worker.terminate();
    } else {
      this.worker = new Worker(browserWorkerUrl(url), { type: 'module', name: 'residual-mt' });
      this.worker.onmessage = (event) => onMessage(event.data);
      this.worker.onerror = (event) => { event.preventDefault?.(); onFailure(new Error(event.message || 'could not start (see the console)')); };
      this.worker.onmessageerror = () => onFailure(new Error('a message could not be read'));
      this.terminate = () => this.worker.terminate();
    }
    await ready;
    this.worker.unref?.();
  }

  send(message, transfer, onPartial) {
    if (this.failed) return { id: 0, promise: Promise.reject(this.failed) };
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, onPartial }));
    // Node: an idle worker does not keep the process alive (no destroy() needed to exit).
    this.worker.ref?.();
    this.worker.postMessage({ ...message, id }, transfer ?? []);
    return { id, promise };
  }

  load(files) {
    const transfer = [files.wasm, files.weights, files.spm].filter(Boolean).map((a) => a.buffer);
    return this.send({ type: 'load', ...files }, transfer).promise;
  }

  call(type, payload, onPartial) {
    const { id, promise } = this.send({ type, ...payload }, [], onPartial);
    return {
      promise,
      cancel: (why) => this.worker.postMessage({ type: 'cancel', target: id, message: why?.message }),
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
}

// ---- the queue: one job in the engine at a time

class JobQueue {
  constructor(backend) {
    this.backend = backend;
    this.jobs = [];
    this.running = null;
  }

  // Resolves with the job's value; rejects at once when `signal` aborts, even
  // while the engine is still finishing (the next job waits for it).
  push(type, payload, { signal, onPartial, owner }) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) { reject(signal.reason); return; }
      const job = { type, payload, onPartial, owner, resolve, reject, signal, settled: false };
      job.settle = (fn, value) => {
        if (job.settled) return;
        job.settled = true;
        signal?.removeEventListener('abort', job.onAbort);
        fn(value);
      };
      job.onAbort = () => this.abort(job, signal.reason);
      signal?.addEventListener('abort', job.onAbort, { once: true });
      this.jobs.push(job);
      this.pump();
    });
  }

  abort(job, reason) {
    if (job === this.running) job.cancel?.(reason);
    else this.jobs = this.jobs.filter((j) => j !== job);
    job.settle(job.reject, reason);
  }

  abortOwner(owner, reason) {
    for (const job of [...this.jobs, ...(this.running ? [this.running] : [])]) {
      if (job.owner === owner) this.abort(job, reason);
    }
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

// ---- loaded models, shared by the translators that use them

const hosts = new Map(); // key -> Host

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

  async open({ base, wasm, useWorker, workerRequired, verify }) {
    // The worker starts while the files download.
    let backend = useWorker ? new WorkerBackend() : new InProcessBackend();
    let started = backend.start();
    if (useWorker && !workerRequired) {
      // A page that cannot start the worker (a Content Security Policy, a
      // file: URL) still gets translations, on its own thread.
      started = started.catch((err) => {
        console.warn(`residual-mt: running on the page's thread: ${err.message}`);
        backend.terminate?.();
        backend = new InProcessBackend();
        return backend.start();
      });
    }
    let files;
    try {
      [files] = await Promise.all([
        loadFiles(base, { wasm, verify, signal: this.loadController.signal, onProgress: (p) => this.progress(p) }),
        started,
      ]);
    } catch (err) {
      started.then(() => backend.dispose(), () => backend.terminate?.()).catch(() => {});
      throw err;
    }
    this.manifest = files.manifest;
    this.bytes = files.bytes;
    try {
      const info = await backend.load({ wasm: files.wasm, config: files.config, weights: files.weights, spm: files.spm });
      if (this.loadController.signal.aborted) throw this.loadController.signal.reason;
      this.config = info.config;
    } catch (err) {
      await backend.dispose().catch(() => {});
      throw err;
    }
    this.backend = backend;
    backend.onDead = () => { if (hosts.get(this.key) === this) hosts.delete(this.key); };
    this.queue = new JobQueue(backend);
    this.state = 'available';
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
    this.queue.drained().then(() => this.backend.dispose()).catch(() => {});
  }
}

async function acquireHost(options, onProgress, signal) {
  const key = `${options.base.href} ${options.wasmKey} ${options.useWorker ? 'worker' : 'inline'} ${options.verify}`;
  let host = hosts.get(key);
  if (!host) {
    host = new Host(key);
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
  const onAbort = () => {
    leave();
    rejectAbort(signal.reason);
    // Stop the download only when no one else waits for it.
    if (host.waiting === 0 && host.state === 'downloading') {
      host.loadController.abort(signal.reason);
      if (hosts.get(key) === host) hosts.delete(key);
    }
    host.closeIfUnused();
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.race([host.ready, aborted]);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    host.listeners.delete(onProgress);
  }
  host.refs++;
  leave();
  return host;
}

// ---- languages

// Language pairs [source, target] a model config supports.
export function languagePairs(config, modelUrl) {
  const langs = config?.languages ?? {};
  const targets = langs.target_lang_tokens ? Object.keys(langs.target_lang_tokens) : langs.target ?? [];
  const sources = langs.source ?? [];
  const pairs = [];
  for (const s of sources) for (const t of targets) if (s !== t) pairs.push([s, t]);
  if (!pairs.length) {
    const m = /(?:^|\/)([a-z]{2,3})-([a-z]{2,3})\/?$/.exec(String(modelUrl ?? '').replace(/\/$/, ''));
    if (m) pairs.push([m[1], m[2]]);
  }
  return pairs;
}

// The engine's target-language argument, after checking the pair.
function checkLanguages(config, modelUrl, sourceLanguage, targetLanguage) {
  const langs = config.languages ?? {};
  const pairs = languagePairs(config, modelUrl);
  const tokens = langs.target_lang_tokens;
  if (sourceLanguage && targetLanguage && sourceLanguage === targetLanguage) {
    throw notSupported(`sourceLanguage and targetLanguage are both "${sourceLanguage}"`);
  }
  if (pairs.length) {
    const sources = [...new Set(pairs.map((p) => p[0]))];
    const targets = [...new Set(pairs.map((p) => p[1]))];
    if (sourceLanguage && !sources.includes(sourceLanguage)) {
      throw notSupported(`this model does not translate from "${sourceLanguage}" (it translates from ${sources.join(', ')})`);
    }
    if (targetLanguage && !targets.includes(targetLanguage)) {
      throw notSupported(`this model does not translate into "${targetLanguage}" (it translates into ${targets.join(', ')})`);
    }
    if (!targetLanguage) {
      const possible = pairs.filter((p) => !sourceLanguage || p[0] === sourceLanguage).map((p) => p[1]);
      if (new Set(possible).size === 1) targetLanguage = possible[0];
      else if (tokens) throw new TypeError(`residual-mt: targetLanguage is required: this model translates into ${targets.join(', ')}`);
    }
    if (!sourceLanguage) {
      const possible = pairs.filter((p) => p[1] === targetLanguage).map((p) => p[0]);
      if (new Set(possible).size === 1) sourceLanguage = possible[0];
    }
  }
  return {
    sourceLanguage: sourceLanguage ?? null,
    targetLanguage: targetLanguage ?? null,
    engineTarget: tokens && targetLanguage && targetLanguage in tokens ? targetLanguage : undefined,
  };
}

async function modelLocation(model, signal) {
  return model === undefined || model === null ? resolveDefaultModel({ signal }) : toLocation(model);
}

// { url, config, pairs }: what a model translates, reading only config.json.
export async function modelInfo({ model, signal } = {}) {
  const url = await modelLocation(model, signal);
  const config = await readConfig(url, { signal });
  return { url: url.href, config, pairs: languagePairs(config, url.href) };
}

// 'unavailable' | 'downloadable' | 'downloading' | 'available', as in the
// Translator API: whether createTranslator() with these options would work,
// and whether it would download.
export async function availability({ model, sourceLanguage, targetLanguage, signal } = {}) {
  if (missingFeatures()) return 'unavailable';
  let url;
  let config;
  try {
    url = await modelLocation(model, signal);
    config = await readConfig(url, { signal });
    checkLanguages(config, url.href, sourceLanguage, targetLanguage);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    return 'unavailable';
  }
  for (const host of hosts.values()) {
    if (host.key.startsWith(`${url.href} `)) return host.state === 'downloading' ? 'downloading' : 'available';
  }
  if (url.protocol === 'file:') return 'available';
  if (typeof caches === 'object' && caches) {
    try {
      if (await caches.match(new URL('model.safetensors', url).href)) return 'available';
    } catch { /* no Cache Storage (opaque origin): fall through */ }
  }
  return 'downloadable';
}

// ---- the translator

export class Translator {
  #host;
  #destroyed = false;
  #engineTarget;
  #createSignal;
  #onCreateAbort;

  constructor(host, langs, createSignal) {
    this.#host = host;
    this.#engineTarget = langs.engineTarget;
    this.sourceLanguage = langs.sourceLanguage;
    this.targetLanguage = langs.targetLanguage;
    this.inputQuota = Infinity; // long input is split into sentences
    this.model = host.key.split(' ')[0];
    this.config = host.config;
    this.languagePairs = languagePairs(host.config, this.model);
    this.inWorker = host.backend instanceof WorkerBackend;
    this.#createSignal = createSignal;
    if (createSignal) {
      // As in the Translator API: aborting create()'s signal later destroys the translator.
      this.#onCreateAbort = () => this.destroy(createSignal.reason);
      createSignal.addEventListener('abort', this.#onCreateAbort, { once: true });
    }
  }

  #check(signal) {
    if (this.#destroyed) throw destroyedError();
    signal?.throwIfAborted();
  }

  #options(options = {}) {
    const out = { sourceLanguage: this.sourceLanguage ?? undefined, targetLanguage: this.#engineTarget };
    // n-best lists are the engine's (residual-mt/engine); the engine checks beam and the rest.
    for (const key of ['beam', 'lenpen', 'maxLenA', 'maxLenB', 'minLen', 'maxLength', 'details']) {
      if (options[key] !== undefined) out[key] = options[key];
    }
    if (out.maxLength !== undefined && (!Number.isInteger(out.maxLength) || out.maxLength < 1)) {
      throw new RangeError(`residual-mt: maxLength must be a positive integer, got ${out.maxLength}`);
    }
    return out;
  }

  // translate(text) -> Promise<string>; translate([texts]) -> Promise<string[]>
  // (one batch). options: { signal, beam, maxLength, details }.
  async translate(input, options = {}) {
    this.#check(options.signal);
    const many = Array.isArray(input);
    const texts = many ? input : [input];
    for (const t of texts) if (typeof t !== 'string') throw new TypeError('residual-mt: translate() takes a string or an array of strings');
    const opts = this.#options(options);
    const empty = (text) => (opts.details ? { text: '', sentences: 0, outputTokens: 0, ms: 0 } : '');
    const todo = texts.map((t, i) => [t, i]).filter(([t]) => /\S/.test(t));
    const out = texts.map(empty);
    if (todo.length) {
      const place = (results) => {
        todo.forEach(([, i], k) => { out[i] = results[k]; });
        return many ? out : out[0];
      };
      try {
        place(await this.#host.queue.push('translate', { texts: todo.map(([t]) => t), options: opts },
          { signal: options.signal, owner: this }));
      } catch (err) {
        // Sentences without a translation: the rest comes with the error.
        if (err.translations) err.translations = place(err.translations);
        throw err;
      }
    }
    return many ? out : out[0];
  }

  // A ReadableStream of the translation so far (each chunk is the whole
  // output up to now, growing as tokens are decoded; the last chunk is what
  // translate() would return). Async-iterable.
  translateStreaming(text, options = {}) {
    const cancelController = new AbortController();
    let closed = false;
    return asyncIterable(new ReadableStream({
      start: (controller) => {
        try {
          this.#check(options.signal);
          if (typeof text !== 'string') throw new TypeError('residual-mt: translateStreaming() takes a string');
        } catch (err) {
          controller.error(err);
          return;
        }
        const opts = this.#options(options);
        if (!/\S/.test(text)) {
          controller.enqueue('');
          controller.close();
          return;
        }
        let last = null;
        const signal = anySignal([options.signal, cancelController.signal]);
        this.#host.queue.push('translate', { texts: [text], options: opts, stream: true }, {
          signal,
          owner: this,
          onPartial: (partial) => {
            if (closed || partial === last) return;
            last = partial;
            controller.enqueue(partial);
          },
        }).then(([final]) => {
          if (closed) return;
          if (final !== last) controller.enqueue(final);
          closed = true;
          controller.close();
        }, (err) => {
          if (closed) return;
          closed = true;
          controller.error(err);
        });
      },
      cancel: (reason) => {
        closed = true;
        cancelController.abort(reason ?? abortError('The stream was cancelled'));
      },
    }));
  }

  // Input tokens the text uses (sentences' tokens plus </s> each).
  async measureInputUsage(text, options = {}) {
    this.#check(options.signal);
    return this.#host.queue.push('measure', { text: String(text), options: this.#options() }, { signal: options.signal, owner: this });
  }

  // Ends queued and running calls (they reject with an AbortError) and frees
  // the model once no other translator uses it. Idempotent.
  destroy(reason) {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#createSignal?.removeEventListener('abort', this.#onCreateAbort);
    this.#host.queue.abortOwner(this, reason ?? destroyedError());
    this.#host.release();
  }

  get destroyed() {
    return this.#destroyed;
  }
}

// Same options as the Translator API's create(), plus:
//   model: URL or directory of a model (default: the shipped model)
//   wasm: URL or bytes of residual-mt.wasm (default: the package's dist/)
//   worker: run the engine in a worker (default: true in browsers, false in Node)
//   verify: check files against manifest.json (default true; 'require' when a
//           manifest must be there)
export async function createTranslator(options = {}) {
  const { model, sourceLanguage, targetLanguage, monitor, signal, worker, wasm, verify = true } = options;
  signal?.throwIfAborted();
  const missing = missingFeatures();
  if (missing) throw notSupported(missing);
  const monitorTarget = new CreateMonitor();
  if (typeof monitor === 'function') monitor(monitorTarget);
  const base = await modelLocation(model, signal);
  const useWorker = worker ?? (!isNode() && typeof Worker === 'function');
  if (useWorker && !isNode() && typeof Worker !== 'function') throw notSupported('this environment has no Web Workers; pass { worker: false }');
  let lastLoaded = -1;
  const onProgress = ({ loaded, total, file }) => {
    if (loaded === lastLoaded && loaded !== 0) return;
    lastLoaded = loaded;
    monitorTarget.dispatchEvent(new DownloadProgressEvent('downloadprogress', { loaded, total, file }));
  };
  const wasmKey = wasm instanceof Uint8Array || wasm instanceof ArrayBuffer ? `bytes${wasm.byteLength}` : String(wasm ?? '');
  const host = await acquireHost({ base, wasm, wasmKey, useWorker, workerRequired: worker === true, verify }, onProgress, signal);
  let langs;
  try {
    langs = checkLanguages(host.config, base.href, sourceLanguage, targetLanguage);
  } catch (err) {
    host.release();
    throw err;
  }
  if (host.lastProgress) {
    const { total } = host.lastProgress;
    onProgress({ loaded: Math.max(total, host.lastProgress.loaded), total: Math.max(total, host.lastProgress.loaded), file: null });
  }
  return new Translator(host, langs, signal);
}

// The Translator API's static shape, for code written against it:
//   const t = await Translator.create({ sourceLanguage, targetLanguage });
Translator.create = createTranslator;
Translator.availability = availability;
