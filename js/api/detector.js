// The LanguageDetector API (webmachinelearning/translation-api) over the
// engine's language identifier (src/langid.h, model models/langid/):
//
//   const detector = await LanguageDetector.create();
//   const [best] = await detector.detect('Hola, ¿qué tal?');   // { detectedLanguage: 'es', confidence: 0.99... }
//
// The model (954 KB) is a package of its own, residual-mt-langid (the
// directory models/langid/), found as the translation model is: installed
// beside residual-mt, the repository's copy, or its pinned URL on a CDN.
// availability() is 'available' for the languages it knows ('unavailable'
// for others) and create() needs no user gesture. Its engine runs where a
// translator's does (in a worker in browsers, in-process in Node: the `worker`
// option as createTranslator's): in the translators' worker, the one a
// translator uses or will use (host/backends.js), as an engine of its own there;
// one engine shared by every detector, freed when the last is destroyed.

import { workerWanted } from '../host/backends.js';
import { engines, startBackend } from '../host/engine-registry.js';
import { DETECTOR_INPUT_QUOTA, DETECTOR_MODEL, defaultWasmUrl } from '../defaults.js';
import { checkDocument } from '../util/env.js';
import { abortError, makeError, notSupported, quotaExceeded } from '../util/errors.js';
import { CreateMonitor, progressReporter } from './events.js';
import { networkError, open, readAll } from '../load/files.js';
import { canonicalTag, sameLanguage } from '../util/languages.js';
import { resolveModelPackage } from '../load/discover.js';
import { callSignal, nextTask, onAbort, untilAborted } from '../util/streams.js';

// The spec's cut: languages are listed, most likely first, until their
// confidences add up to this.
const CUMULATIVE = 0.99;
// What 'und' holds at least: the engine's probabilities are float32, whose
// steps near 1 are 2^-24, so a list that leaves 'und' less is rounding.
const UND_FLOOR = 2 ** -24;

// ---------------------------------------------------------------- the model file

let modelFile = null; // Promise<{ bytes, languages }>, read once

// Read within DETECTOR_MODEL.maxBytes (a wrong URL's endless answer stops there).
async function readBytes(url) {
  const file = await open(url, 'the language detector model');
  if (file.missing) throw networkError(file.message);
  if (file.error) throw file.error;
  return readAll(file, () => {}, file.size, { maxBytes: DETECTOR_MODEL.maxBytes, name: `the language detector model (${url.href})`,
    why: 'DETECTOR_MODEL.maxBytes' });
}

// What a model file declares in its safetensors header's metadata, read here
// so that availability() needs no engine: its languages, and the prior over
// them (models/langid_train.py: each language's log share of speakers, and
// the weight W that detect() gives it: W / the text's feature count, ending
// at its fade's feature count).
export function declaredModel(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = bytes.byteLength >= 8 ? Number(view.getBigUint64(0, true)) : Infinity;
  if (!(length <= bytes.byteLength - 8)) throw new Error('residual-mt: the language detector model is not a safetensors file');
  const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length))).__metadata__ ?? {};
  const languages = String(meta.languages ?? '').split(',').filter(Boolean);
  const prior = meta.prior === undefined ? [] : String(meta.prior).split(',').map(Number);
  const weight = meta.prior_weight === undefined ? 0 : Number(meta.prior_weight);
  const fade = meta.prior_fade === undefined ? 0 : Number(meta.prior_fade);
  if ((prior.length && prior.length !== languages.length) || !prior.every(Number.isFinite) || !(weight >= 0 && weight < Infinity)
    || !(fade >= 0 && fade < Infinity)) {
    throw new Error('residual-mt: the language detector model\'s prior does not fit its languages');
  }
  return { languages, prior: prior.length && weight ? { logs: prior, weight, ...(fade ? { fade } : {}) } : null };
}

// A tag as detect() reports it: without its script where that is the
// language's usual one (zh-Hans is zh, as Chrome's detector and the
// web-platform-tests name it); sr-Latn, zh-Hant, el-Latn keep theirs.
export function reportedTag(tag) {
  const locale = new Intl.Locale(tag);
  if (!locale.script || locale.region) return tag;
  try {
    return new Intl.Locale(locale.language).maximize().script === locale.script ? locale.language : tag;
  } catch {
    return tag;
  }
}

// The probabilities with the prior added to their logits, weighted by
// W / features: decisive between neighbours on a few words, fading on long
// text, and gone from `fade` features on (where the model declares one).
export function withPrior(probabilities, features, prior) {
  if (!prior) return probabilities;
  const scale = (prior.weight / Math.max(features, 1)) * (prior.fade ? Math.max(0, 1 - features / prior.fade) : 1);
  const raw = probabilities.map((p, i) => p * Math.exp(scale * prior.logs[i]));
  const total = raw.reduce((a, b) => a + b, 0);
  return total > 0 ? raw.map((p) => p / total) : probabilities;
}

function readModel() {
  modelFile ??= resolveModelPackage(DETECTOR_MODEL, 'package.json')
    .then((dir) => readBytes(new URL(DETECTOR_MODEL.file, dir)))
    .then((bytes) => ({ bytes, ...declaredModel(bytes) }));
  modelFile.catch(() => { modelFile = null; }); // a later call tries again
  return modelFile;
}

// ---------------------------------------------------------------- the engine

// Loads the detector's model into `engine` (a SharedEngine of the
// registry): on a worker of its own role where one is wanted, else (or when
// none can start and none was required: a Content Security Policy) on this
// thread, as a translator's.
async function openDetector(engine, useWorker, workerRequired) {
  const start = startBackend({ useWorker, workerRequired, role: 'detector', warning: 'the language detector runs on the page\'s thread' });
  try {
    const [{ bytes, languages, prior }, backend] = await Promise.all([readModel(), start.ready]);
    await backend.loadDetector({ model: bytes.slice(), wasm: defaultWasmUrl(1).href, threads: 1 });
    engine.loadController.signal.throwIfAborted();
    Object.assign(engine, { languages: languages.map(reportedTag), prior });
    engine.attach(backend);
  } catch (err) {
    start.ready.then((backend) => backend.dispose(), () => {}).catch(() => {});
    throw err;
  }
}

// The detectors' one engine (in a worker or on this thread), counted as
// used until release().
function acquireDetector(useWorker, workerRequired, signal) {
  return engines.acquire(`detector ${useWorker ? 'worker' : 'inline'}`, (engine) => openDetector(engine, useWorker, workerRequired), { signal });
}

// ---------------------------------------------------------------- options

// expectedInputLanguages as the spec canonicalizes them: a list of tags
// (TypeError when not a sequence, RangeError for a malformed tag), deduplicated.
function expectedLanguages(options) {
  const given = options?.expectedInputLanguages;
  if (given === undefined) return [];
  if (typeof given === 'string' || typeof given?.[Symbol.iterator] !== 'function') {
    throw new TypeError('residual-mt: expectedInputLanguages must be a sequence of language tags');
  }
  return [...new Set([...given].map((tag) => canonicalTag(tag, 'expectedInputLanguages')))];
}

function supports(languages, wanted) {
  return wanted.every((tag) => languages.some((have) => sameLanguage(have, tag)));
}

// 'available' when the model knows every expected language, else 'unavailable'.
export async function detectorAvailability(options = {}) {
  checkDocument();
  const wanted = expectedLanguages(options);
  const { languages } = await readModel();
  return supports(languages, wanted) ? 'available' : 'unavailable';
}

// ---------------------------------------------------------------- results

// The spec's list: the languages by confidence, most likely first, until
// they add up to 0.99, then 'und' with 1 minus what the list holds, so that
// all add up to 1 (its explainer: very low confidences are "lumped together
// into an und language"). A language less likely than 'und' is lumped in
// too: of the lists the 0.99 cut allows, the longest whose last language is
// still more likely than what 'und' then holds (so every listed language is;
// none at 0), as the web-platform-tests check.
export function rankLanguages(languages, probabilities) {
  const order = probabilities.map((p, i) => i).sort((a, b) => probabilities[b] - probabilities[a]);
  const listed = [];
  let cumulative = 0;
  let kept = 0;
  for (const i of order) {
    // (float32 probabilities may add up to a hair over 1: never past it here)
    const confidence = Math.min(probabilities[i], 1 - cumulative);
    if (!(confidence > 0)) break;
    listed.push({ detectedLanguage: languages[i], confidence });
    cumulative += confidence;
    if (confidence > 1 - cumulative) kept = listed.length;
    if (cumulative >= CUMULATIVE) break;
  }
  const results = listed.slice(0, kept);
  let sum = results.reduce((total, r) => total + r.confidence, 0);
  if (results.length && 1 - sum < UND_FLOOR) {
    results.at(-1).confidence -= UND_FLOOR - (1 - sum);
    sum = results.reduce((total, r) => total + r.confidence, 0);
  }
  results.push({ detectedLanguage: 'und', confidence: 1 - sum });
  return results;
}

// A call's answer, given in a later task as the API's are (its work runs in
// parallel): a signal aborted before then rejects the call, as it would have
// stopped the work.
function answerLater(signal, value) {
  return new Promise((resolve, reject) => {
    const off = onAbort(signal, reject);
    setTimeout(() => {
      off();
      if (signal.aborted) reject(signal.reason);
      else resolve(value);
    }, 0);
  });
}

// ---------------------------------------------------------------- the detector

// The text is a required argument (the API's IDL): a call without one
// rejects, as the built-in's does, rather than detecting "undefined".
function requireInput(count, method) {
  if (count === 0) throw new TypeError(`residual-mt: LanguageDetector.${method}() needs the text to read (1 argument required, 0 given)`);
}

export class LanguageDetector {
  #engine;
  #destruction = new AbortController();

  constructor(engine, { expectedInputLanguages, createSignal }) {
    this.#engine = engine;
    this.expectedInputLanguages = expectedInputLanguages.length ? Object.freeze(expectedInputLanguages) : null;
    this.inputQuota = DETECTOR_INPUT_QUOTA;
    // As in the API: aborting create()'s signal later destroys the detector.
    if (createSignal) this.#destruction.signal.addEventListener('abort', onAbort(createSignal, (reason) => this.destroy(reason)), { once: true });
  }

  #signal(options) {
    checkDocument();
    return callSignal(this.#destruction.signal, options);
  }

  // [{ detectedLanguage, confidence }], most likely first, 'und' last with
  // the confidence the list leaves (1 for a text with no letters).
  async detect(input, options = {}) {
    requireInput(arguments.length, 'detect');
    const signal = this.#signal(options);
    const text = String(input);
    if (text.length > this.inputQuota) throw quotaExceeded(text.length, this.inputQuota);
    const nothing = [{ detectedLanguage: 'und', confidence: 1 }];
    if (!text) return answerLater(signal, nothing);
    const { features, probabilities } = await this.#engine.queue.push('detect', { text }, { signal });
    signal.throwIfAborted();
    if (!features) return nothing;
    return rankLanguages(this.#engine.languages, withPrior(probabilities, features, this.#engine.prior));
  }

  // Input usage: the text's length in UTF-16 code units (what the model reads).
  async measureInputUsage(input, options = {}) {
    requireInput(arguments.length, 'measureInputUsage');
    const signal = this.#signal(options);
    return answerLater(signal, String(input).length);
  }

  // Ends running and later calls (an AbortError, or `reason`); the engine is
  // freed once no other detector uses it. Idempotent.
  destroy(reason = abortError('residual-mt: the language detector has been destroyed')) {
    if (this.#destruction.signal.aborted) return;
    this.#destruction.abort(reason);
    this.#engine.release();
  }

  get destroyed() {
    return this.#destruction.signal.aborted;
  }

  // The languages this detector can name (the model's tags, as detect() reports them).
  get languages() {
    return [...this.#engine.languages];
  }
}

// create(options): expectedInputLanguages, signal, monitor (as the API), and
// worker (residual-mt's: run the engine in a worker; default as createTranslator's).
export async function createLanguageDetector(options = {}) {
  checkDocument();
  const { signal, monitor, worker } = options ?? {};
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('residual-mt: signal must be an AbortSignal');
  signal?.throwIfAborted();
  const wanted = expectedLanguages(options);
  const monitorTarget = new CreateMonitor();
  if (typeof monitor === 'function') monitor(monitorTarget);
  const useWorker = workerWanted(worker);
  const { languages } = await readModel();
  if (!supports(languages, wanted)) {
    throw notSupported(`the language detector knows no ${wanted.filter((t) => !supports(languages, [t])).join(', ')}`);
  }
  signal?.throwIfAborted();
  let engine = null;
  try {
    engine = await acquireDetector(useWorker, worker === true, signal);
    signal?.throwIfAborted();
    progressReporter(monitorTarget, signal).finish();
    // The detector comes a task after the last progress event, as a built-in's
    // would: a signal aborted from that event's handler still aborts the create.
    await untilAborted(nextTask(), signal);
    signal?.throwIfAborted();
    return new LanguageDetector(engine, { expectedInputLanguages: wanted, createSignal: signal });
  } catch (err) {
    engine?.release();
    if (err?.name === 'AbortError' || signal?.aborted) throw signal?.reason ?? err;
    throw makeError('OperationError', `residual-mt: the language detector could not load: ${err.message}`);
  }
}

// The API's static shape, for code written against it.
LanguageDetector.create = createLanguageDetector;
LanguageDetector.availability = detectorAvailability;
