// Rule of js/api/: the public API's objects and calls, as the Translator and
// LanguageDetector APIs define them: they check, queue and answer; the
// engines are host/'s. Imports host/, text/, load/, marian/ and util/;
// only the entry points (js/*.js) import api/.
//
// The Translator itself, with create() and availability() as the Translator
// API (webmachinelearning/translation-api) defines them: language tags
// validated and matched, same-language pairs passed through, streamed chunks
// to append, 'downloadprogress' from 0 to 1, an input quota, and the error
// names the API uses. The engine runs elsewhere (host/models.js); this file checks,
// queues and answers.

import { modelBound } from '../load/bounded.js';
import { PIVOT_LANGUAGE, describeCatalog, findRoute, loadCatalog } from './catalog.js';
import { INPUT_QUOTA, checkThreads, defaultWasmUrl, threadCount } from '../defaults.js';
import { checkDocument, isNode, missingFeatures } from '../util/env.js';
import { abortError, makeError, notSupported } from '../util/errors.js';
import { CreateMonitor, progressReporter } from './events.js';
import { workerWanted } from '../host/backends.js';
import { acquireModel, loadedConfig, modelState } from '../host/models.js';
import { canonicalTag, describePairs, engineTarget, languagePairs, resolvePair, sameLanguage } from '../util/languages.js';
import { isCached, readConfig, resolveDefaultModel, toLocation } from '../load/loader.js';
import { prepareEngine } from '../load/engine-fetch.js';
import { translateHtml, translateHtmlStreaming } from '../text/html.js';
import { PivotTranslator } from './pivot.js';
import { hasTranslatable, wellFormed } from '../text/segment.js';
import { anySignal, asyncIterable, callSignal, nextTask, onAbort, streamOf } from '../util/streams.js';

// What a translate() call passes on to the engine besides its search
// options (the engine's own, engine.searchOptions, less nbest, which the API has not).
const CALL_OPTIONS = ['maxLength', 'details'];

async function modelLocation(model, signal) {
  return model === undefined || model === null ? resolveDefaultModel({ signal }) : toLocation(model);
}

async function configOf(base, { signal, cache }) {
  return loadedConfig(base.href) ?? readConfig(base, { signal, cache });
}

// { url, config, pairs }: what a model translates, reading only config.json.
export async function modelInfo({ model, signal, cache = true } = {}) {
  const url = await modelLocation(model, signal);
  const config = await configOf(url, { signal, cache });
  return { url: url.href, config, pairs: languagePairs(config, url.href) };
}

// 'unavailable' | 'downloadable' | 'downloading' | 'available': whether
// create() with these options would work, and whether it would download.
export async function availability(options) {
  checkDocument();
  const { model, signal, cache = true } = options ?? {};
  const source = canonicalTag(options?.sourceLanguage, 'sourceLanguage');
  const target = canonicalTag(options?.targetLanguage, 'targetLanguage');
  if (missingFeatures()) return 'unavailable';
  if (sameLanguage(source, target)) return 'available';
  if (options.catalog !== undefined && model === undefined) return catalogAvailability(options, source, target);
  if (isMarian(model)) return marianAvailability(model, source, target, cache);
  let base;
  try {
    base = await modelLocation(model, signal);
    if (!resolvePair(languagePairs(await configOf(base, { signal, cache }), base.href), source, target)) return 'unavailable';
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    return 'unavailable';
  }
  return downloadState(base, cache);
}

// With a catalogue (catalog.js): the route's models, the least available of them.
const STATES = ['unavailable', 'downloadable', 'downloading', 'available'];
async function catalogAvailability(options, source, target) {
  let route;
  try {
    route = findRoute(await catalogEntries(options), source, target);
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason;
    return 'unavailable';
  }
  if (!route) return 'unavailable';
  const legs = route.length === 1 ? [[source, target]] : [[source, PIVOT_LANGUAGE], [PIVOT_LANGUAGE, target]];
  const states = await Promise.all(route.map((m, i) => availability({ ...options, catalog: undefined, model: m,
    sourceLanguage: legs[i][0], targetLanguage: legs[i][1] })));
  return STATES[Math.min(...states.map((state) => STATES.indexOf(state)))];
}

// The catalogue's models, then the default model's pairs where there is one.
export async function catalogEntries({ catalog, signal, cache = true }) {
  const entries = await loadCatalog(catalog, { signal, cache });
  try {
    const info = await modelInfo({ signal, cache });
    entries.push({ model: info.url, pairs: info.pairs });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;  // no default model: the catalogue's alone
  }
  return entries;
}

// 'available' when nothing is to be downloaded, else 'downloading' or 'downloadable'.
async function downloadState(base, cache) {
  const state = modelState(base.href);
  if (state) return state;
  if (base.protocol === 'file:' || (cache !== false && await isCached(base))) return 'available';
  return 'downloadable';
}

// The polyfill (polyfill.js) makes create() behave as the built-in API's:
// a download needs a user gesture where the runtime tracks them.
let activationRequired = false;
export function requireUserActivation() {
  activationRequired = true;
}

async function checkActivation(base, cache) {
  const activation = globalThis.navigator?.userActivation;
  if (!activationRequired || !activation || activation.isActive) return;
  if (await downloadState(base, cache) === 'downloadable') {
    throw makeError('NotAllowedError', 'residual-mt: the model has to be downloaded first, which needs a user gesture ' +
      '(call Translator.create() from a click or key handler)');
  }
}

export class Translator {
  #engine;
  #pair;
  #destruction = new AbortController();

  constructor(engine, pair, { createSignal, inputQuota }) {
    this.#engine = engine;
    this.#pair = pair;
    this.sourceLanguage = pair.sourceLanguage;
    this.targetLanguage = pair.targetLanguage;
    // Same-language translators send nothing to a model: no quota, no usage.
    this.inputQuota = engine ? inputQuota : Infinity;
    this.model = engine?.base ?? null;
    this.config = engine?.config ?? null;
    this.languagePairs = engine ? languagePairs(engine.config, engine.base) : [];
    this.inWorker = engine?.inWorker ?? false;
    this.threads = engine?.threads ?? 1;
    // As in the API: aborting create()'s signal later destroys the translator.
    // (One listener on that signal for all the translators it created: onAbort.)
    if (createSignal) this.#destruction.signal.addEventListener('abort', onAbort(createSignal, (reason) => this.destroy(reason)), { once: true });
  }

  // The call's signal joined with the translator's destruction; throws the
  // reason when either has aborted.
  #signal(options) {
    checkDocument();
    return callSignal(this.#destruction.signal, options);
  }

  #options(options = {}) {
    if (options.nbest !== undefined) {
      throw new TypeError('residual-mt: Translator has no nbest option (n-best lists: residual-mt/engine, or the CLI\'s --nbest)');
    }
    const out = { sourceLanguage: this.sourceLanguage, inputQuota: this.inputQuota };
    const target = engineTarget(this.config, this.targetLanguage);
    if (target !== undefined) out.targetLanguage = target;
    for (const key of [...this.#engine?.searchOptions ?? [], ...CALL_OPTIONS]) if (options[key] !== undefined) out[key] = options[key];
    return out;
  }

  // Whether the model has anything to do with `text`.
  #needsModel(text) {
    return !this.#pair.identity && hasTranslatable(text);
  }

  // options.format: 'plain-text' (default) or 'html' (markup kept: html.js).
  // HTML through a same-language translator comes back as it was.
  #html(options) {
    const format = options?.format ?? 'plain-text';
    if (format !== 'plain-text' && format !== 'html') {
      throw new TypeError(`residual-mt: format must be 'plain-text' or 'html', got ${JSON.stringify(format)}`);
    }
    return format === 'html' && !this.#pair.identity;
  }

  // translate(text) -> Promise<string>; translate([texts]) -> Promise<string[]>
  // (one batch). options: { signal, beam, maxLength, details, format }.
  async translate(input, options = {}) {
    const signal = this.#signal(options);
    const many = Array.isArray(input);
    for (const t of many ? input : [input]) if (typeof t !== 'string') throw new TypeError('residual-mt: translate() takes a string or an array of strings');
    const texts = (many ? input : [input]).map(wellFormed);
    if (this.#html(options)) {
      const shape = (results) => {
        const out = results.map((r) => (options.details ? r : r.text));
        return many ? out : out[0];
      };
      try {
        return shape(await translateHtml((runs, opts) => this.translate(runs, { ...opts, format: 'plain-text' }), texts,
          { ...options, signal }));
      } catch (err) {
        if (err.translations) err.translations = shape(err.translations);
        throw err;
      }
    }
    const opts = this.#options(options);
    const out = texts.map((text) => (opts.details ? { text, sentences: 0, outputTokens: 0, ms: 0 } : text));
    const todo = texts.map((t, i) => [t, i]).filter(([t]) => this.#needsModel(t));
    if (todo.length) {
      const place = (results) => {
        todo.forEach(([, i], k) => { out[i] = results[k]; });
        return many ? out : out[0];
      };
      try {
        place(await this.#engine.queue.push('translate', { texts: todo.map(([t]) => t), options: opts }, { signal }));
      } catch (err) {
        // Sentences without a translation: the rest comes with the error.
        if (err.translations) err.translations = place(err.translations);
        throw err;
      }
    }
    return many ? out : out[0];
  }

  // A ReadableStream of the translation in pieces to append: each chunk is
  // text the search can no longer change, and the chunks add up to what
  // translate() returns. Async-iterable; cancelling it stops the work.
  translateStreaming(input, options = {}) {
    checkDocument(); // thrown: a removed iframe's realm cannot make a stream
    let html;
    try {
      html = this.#html(options);
      if (html && typeof input !== 'string') throw new TypeError('residual-mt: translateStreaming() takes a string');
    } catch (err) {
      return streamOf(async function* failed() { throw err; });  // errors come through the stream
    }
    if (html) {
      return streamOf((signal) => translateHtmlStreaming((runs, opts) => this.translate(runs, { ...opts, format: 'plain-text' }),
        wellFormed(input), { ...options, signal: anySignal([signal, options.signal]) }));
    }
    const cancelled = new AbortController();
    let closed = false;
    return asyncIterable(new ReadableStream({
      start: (controller) => {
        let signal, opts;
        try {
          signal = anySignal([this.#signal(options), cancelled.signal]);
          if (typeof input !== 'string') throw new TypeError('residual-mt: translateStreaming() takes a string');
          input = wellFormed(input);
          opts = this.#options(options);
        } catch (err) {
          controller.error(err);
          return;
        }
        if (!this.#needsModel(input)) {
          if (input) controller.enqueue(input);
          controller.close();
          return;
        }
        this.#engine.queue.push('translate', { texts: [input], options: opts, stream: true }, {
          signal,
          onPartial: (delta) => { if (!closed) controller.enqueue(delta); },
        }).then(() => {
          if (closed) return;
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
        cancelled.abort(reason ?? abortError('The stream was cancelled'));
      },
    }));
  }

  // The input usage of `text` against inputQuota: its sentences' tokens plus
  // an end-of-sentence token each; 0 for text sent to no model.
  async measureInputUsage(input, options = {}) {
    const signal = this.#signal(options);
    const text = String(input);
    if (!this.#needsModel(text)) return 0;
    return this.#engine.queue.push('measure', { text, options: this.#options() }, { signal });
  }

  // Ends queued and running calls (they reject with an AbortError, or
  // `reason`), later calls too, and frees the model once no other translator
  // uses it. Idempotent.
  destroy(reason = abortError('residual-mt: the translator has been destroyed')) {
    if (this.#destruction.signal.aborted) return;
    this.#destruction.abort(reason);
    this.#engine?.release();
  }

  get destroyed() {
    return this.#destruction.signal.aborted;
  }
}

// The Translator API's create(): sourceLanguage and targetLanguage (required),
// monitor, signal, plus:
//   model: URL or directory of a model (default: the shipped model, see README),
//          or { marian: { model, vocab, shortlist, sourceSpm, targetSpm } }: a
//          Marian model's files (URLs, paths or bytes; each may be { url, sha256 }),
//          converted in memory (marian-load.js)
//   wasm: URL or bytes of residual-mt.wasm (default: the package's dist/)
//   worker: run the engine in a worker (default: true in browsers, false in Node)
//   verify: check files against manifest.json (default true; 'require' when a
//           manifest must be there)
//   cache: keep downloaded models for offline reuse (default true)
//   inputQuota: input usage one call may have (default INPUT_QUOTA)
//   maxModelBytes: the most bytes of a model file whose size no manifest or
//           config states, downloaded or decompressed (default MAX_MODEL_BYTES)
//   threads: how many threads the engine runs on (default: the processors up
//           to DEFAULT_THREADS_CAP; always 1 where memory cannot be shared)
export async function createTranslator(options) {
  checkDocument();
  if (options?.catalog !== undefined && options.model === undefined) return createFromCatalog(options);
  const { model, monitor, signal, worker, wasm } = options ?? {};
  const { source, target, inputQuota } = checkedOptions(options);
  const monitorTarget = new CreateMonitor();
  if (typeof monitor === 'function') monitor(monitorTarget);
  signal?.throwIfAborted();
  const missing = missingFeatures();
  if (missing) throw notSupported(missing);
  const progress = progressReporter(monitorTarget, signal);
  const created = async (engine, pair) => {
    progress.finish();
    await nextTask();
    if (signal?.aborted) {
      engine?.release();
      throw signal.reason;
    }
    return new Translator(engine, pair, { createSignal: signal, inputQuota });
  };
  if (sameLanguage(source, target)) return created(null, { sourceLanguage: source, targetLanguage: target, identity: true });
  const shared = await modelOptions(options, workerWanted(worker));
  // In a browser (where no user gesture is asked for first), the load does
  // not wait for what it can do without: the default engine compiles while
  // the model is found (engine-fetch.js prepareEngine), and the model loads (its
  // worker starts) while its config is read; a model that turns out not to
  // translate this pair stops loading then.
  const early = !isNode() && !activationRequired;
  if (early && wasm === undefined) prepareEngine(defaultWasmUrl(shared.threads));
  if (isMarian(model)) {
    const engine = await acquireMarian(model, { source, target, shared, progress, signal });
    return created(engine, { sourceLanguage: source, targetLanguage: target, identity: false });
  }
  const { engine, pair } = await acquireForPair(model, { source, target, shared, progress, signal, early });
  return created(engine, pair);
}

// create()'s options checked before anything loads: { source, target, inputQuota }.
function checkedOptions(options) {
  const { inputQuota = INPUT_QUOTA, threads, maxModelBytes } = options ?? {};
  checkThreads(threads);
  modelBound(maxModelBytes);
  const source = canonicalTag(options?.sourceLanguage, 'sourceLanguage');
  const target = canonicalTag(options?.targetLanguage, 'targetLanguage');
  if (!(inputQuota === Infinity || (Number.isInteger(inputQuota) && inputQuota > 0))) {
    throw new RangeError(`residual-mt: inputQuota must be a positive integer or Infinity, got ${inputQuota}`);
  }
  return { source, target, inputQuota };
}

// What the model's engine is made with (the registry's key: host/models.js).
async function modelOptions({ wasm, worker, verify = true, cache = true, threads, maxModelBytes }, useWorker) {
  const wasmKey = wasm instanceof Uint8Array || wasm instanceof ArrayBuffer ? `bytes${wasm.byteLength}` : String(wasm ?? '');
  return { wasm, wasmKey, useWorker, workerRequired: worker === true, verify, cache, threads: await threadCount(threads), maxModelBytes };
}

// The model's engine and the pair it translates ({ engine, pair }); with
// `early`, its load starts while its config is read, and stops when the
// model does not translate the pair.
async function acquireForPair(model, { source, target, shared, progress, signal, early }) {
  const unneeded = new AbortController();
  let loading = null;
  try {
    const base = await modelLocation(model, signal);
    const acquire = () => acquireModel({ base, ...shared }, (bytes) => progress.bytes(bytes), anySignal([signal, unneeded.signal]));
    loading = early ? acquire() : null;
    loading?.catch(() => {}); // awaited below, once the pair is known
    const pairs = languagePairs(await configOf(base, { signal, cache: shared.cache }), base.href);
    const pair = resolvePair(pairs, source, target);
    if (!pair) throw notSupported(`the model at ${base.href} does not translate ${source} → ${target} (it translates ${describePairs(pairs)})`);
    await checkActivation(base, shared.cache);
    return { engine: await (loading ?? acquire()), pair };
  } catch (err) {
    unneeded.abort(err);
    loading?.then((loaded) => loaded.release(), () => {}); // had it loaded already
    throw err;
  }
}

// create() with a catalogue (catalog.js): its model for the pair, or two
// through PIVOT_LANGUAGE (a PivotTranslator), loaded at once, their download
// progress summed on the one monitor.
async function createFromCatalog(options) {
  const source = canonicalTag(options.sourceLanguage, 'sourceLanguage');
  const target = canonicalTag(options.targetLanguage, 'targetLanguage');
  const plain = { ...options, catalog: undefined };
  if (sameLanguage(source, target)) return createTranslator(plain);
  const entries = await catalogEntries(options);
  const route = findRoute(entries, source, target);
  if (!route) {
    throw notSupported(`no model of the catalogue translates ${source} → ${target}, directly or through ` +
      `${PIVOT_LANGUAGE} (it has ${describeCatalog(entries)})`);
  }
  if (route.length === 1) return createTranslator({ ...plain, model: route[0] });
  const outer = new CreateMonitor();
  if (typeof options.monitor === 'function') options.monitor(outer);
  const progress = progressReporter(outer, options.signal), parts = [{}, {}];
  const watch = (i) => (m) => m.addEventListener('downloadprogress', (e) => {
    parts[i] = { loaded: e.bytesLoaded, total: e.bytesTotal, file: e.file };
    const sum = (key) => (parts[0][key] ?? 0) + (parts[1][key] ?? 0);
    progress.bytes({ loaded: sum('loaded'), total: sum('total'), file: e.file });
  });
  const legs = await Promise.allSettled([
    createTranslator({ ...plain, targetLanguage: PIVOT_LANGUAGE, model: route[0], monitor: watch(0) }),
    createTranslator({ ...plain, sourceLanguage: PIVOT_LANGUAGE, model: route[1], monitor: watch(1) }),
  ]);
  const failed = legs.find((leg) => leg.status === 'rejected');
  if (failed) {
    for (const leg of legs) if (leg.status === 'fulfilled') leg.value.destroy();
    throw failed.reason;
  }
  progress.finish();
  return new PivotTranslator(legs[0].value, legs[1].value);
}

// A Marian model's files (model: { marian }: marian-load.js, imported only
// then), converted as they load; it translates the pair create() names,
// which its config.json then declares.
const isMarian = (model) => !!model && typeof model === 'object' && !(model instanceof URL) && 'marian' in model;

// A Marian model translates any pair it is given: loaded, loading, kept
// converted (known when every file has its sha256), or to be downloaded.
async function marianAvailability(model, source, target, cache) {
  const { isConverted, marianSources } = await import('../marian/load.js');
  const marian = await marianSources(model, { sourceLanguage: source, targetLanguage: target });
  return modelState(marian.href) ?? (await isConverted(marian, cache) ? 'available' : 'downloadable');
}

async function acquireMarian(model, { source, target, shared, progress, signal }) {
  const { marianSources } = await import('../marian/load.js');
  const marian = await marianSources(model, { sourceLanguage: source, targetLanguage: target });
  return acquireModel({ base: new URL(marian.href), marian, ...shared }, (bytes) => progress.bytes(bytes), signal);
}

// The Translator API's static shape, for code written against it:
//   const t = await Translator.create({ sourceLanguage, targetLanguage });
Translator.create = createTranslator;
Translator.availability = availability;
