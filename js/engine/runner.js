// The engine side of a translator: one Engine and one Model, and the jobs the
// API sends (translate, stream, measure), each through the text pipeline
// (pipeline.js). Runs in a Web Worker, a Node worker_thread, or in-process;
// it paces the pipeline, which steps translations one token at a time: a
// yield between steps, so that cancellation is seen and the thread stays
// responsive. One job at a time: jobs never interleave inside the engine.

import { openKeptWeights } from '../load/cache.js';
import { Engine } from './binding.js';
import { LanguageIdentifier } from './langid.js';
import { timeStep } from '../util/env.js';
import { quotaExceeded, unknownError } from '../util/errors.js';
import { engineTarget } from '../util/languages.js';
import { JobLock } from './lock.js';
import { Assembly, decodeSentences, splitTexts, tokenizedPieces } from './pipeline.js';

const SLICE_MS = 12;           // longest run of work between two yields

const yieldNow = typeof setImmediate === 'function'
  ? () => new Promise((resolve) => setImmediate(resolve))
  : (() => {
    if (typeof MessageChannel !== 'function') return () => new Promise((resolve) => setTimeout(resolve, 0));
    const channel = new MessageChannel();
    const waiting = [];
    channel.port1.onmessage = () => waiting.shift()?.();
    return () => new Promise((resolve) => {
      waiting.push(resolve);
      channel.port2.postMessage(0);
    });
  })();

const now = () => (typeof performance === 'object' ? performance.now() : Date.now());

// Yields to the event loop once SLICE_MS have passed since the last yield, and
// throws the cancellation reason if there is one: long synchronous work
// (splitting a megabyte of text, a decoding loop) calls it between pieces.
function pacer(cancelled) {
  let sliceStart = now();
  return async (always = false) => {
    if (always || now() - sliceStart > SLICE_MS) {
      await yieldNow();
      sliceStart = now();
    }
    const reason = cancelled();
    if (reason) throw reason;
  };
}

// The error for sentences that got no translation (an UnknownError, as the
// API names a failed translation). err.translations holds what translate()
// would have returned, those sentences left as they were. err.texts: the
// indices of the texts with such a sentence.
function untranslated(failures, sentences, results) {
  const quote = (text) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
  const list = failures.map((f) => `${quote(sentences[f.sentence])}: ${f.message}`).join('; ');
  const err = unknownError(`residual-mt: ${failures.length} of ${sentences.length} sentences could not be translated ` +
    `(kept as they were in err.translations): ${list}`);
  err.translations = results;
  err.texts = [...new Set(failures.map((f) => f.text))];
  return err;
}

// The search options of a translate() call as the engine takes them (its
// search fields, the target language and the batch size); the API's
// maxLength (checked here, the one place it is read) is an output length of
// its own: no term in the source's length.
function engineOptions(options, fields) {
  const search = {};
  for (const key of [...fields, 'targetLanguage', 'batch']) if (options[key] !== undefined) search[key] = options[key];
  if (options.maxLength !== undefined) {
    if (!Number.isInteger(options.maxLength) || options.maxLength < 1) {
      throw new RangeError(`residual-mt: maxLength must be a positive integer, got ${options.maxLength}`);
    }
    search.maxLenA = 0;
    search.maxLenB = options.maxLength;
  }
  return search;
}

export class Runner {
  constructor() {
    this.model = null;
    this.lock = new JobLock();
  }

  // Loads the engine (a compiled WebAssembly.Module or its bytes) on
  // `threads` threads, before the model's files are in: load() then needs
  // no wasm. Resolves once it is ready.
  // Its threads start meanwhile: a load waits for them only once its model
  // is in (the model's load runs on this thread alone).
  loadEngine({ wasm, threads }) {
    this.engineSteps = [];
    const done = timeStep('engine', this.engineSteps);
    const threadsDone = timeStep('engine threads', this.engineSteps);
    this.engineReady = Engine.load(wasm, { threads, waitForThreads: false }).then((engine) => {
      this.engine = engine;
      done();
    });
    this.threadsReady = this.engineReady.then(() => this.engine.threadsStarted).then(threadsDone);
    this.threadsReady.catch(() => {}); // the engine's failure is load()'s
    return this.threadsReady;
  }

  // Loads the model (and the engine, given wasm; else loadEngine's). Returns
  // info() with `steps`: how long each part took (timeStep's log).
  // weights: bytes, or the file the cache keeps them in ({ kept, size }:
  // read here, straight into the engine's memory where it can be).
  // onWeights(bytes): as engine.loadModel's. warmup: a short translation
  // (see warmup()), run as the first job after the load has answered: a job
  // sent meanwhile waits for it; onWarmedUp(steps) once it is done.
  async load({ wasm, config, weights, spm, threads, warmup = true, onWeights, onWarmedUp }) {
    if (wasm !== undefined || !this.engineReady) this.loadEngine({ wasm, threads });
    const opened = [];
    let done = timeStep('open kept weights', opened);
    const file = weights?.kept ? await openKeptWeights(weights) : weights;
    if (weights?.kept) done();
    await this.engineReady;
    const steps = [];
    this.model = this.engine.loadModel({ config, weights: file, spm }, steps, onWeights);
    await this.threadsReady;
    steps.unshift(...this.engineSteps, ...opened);
    if (warmup) {
      this.exclusive(async () => {
        await yieldNow(); // the load's answer goes out first
        const log = [];
        done = timeStep('warmup', log);
        await this.warmup();
        done();
        onWarmedUp?.(log);
      });
    }
    return { ...this.info(), steps };
  }

  // A short translation right after loading, the way a user's goes (its
  // sentences split: a runtime's first Intl.Segmenter takes ~20 ms to set
  // up): the engine's memory grows to its working size and the JS engine
  // optimizes the hot code, so the user's first translation is about as
  // fast as the next ones.
  async warmup() {
    try {
      await this.translateNow(['Hello, world. Hola, mundo.'], { targetLanguage: engineTarget(this.model.config), maxLength: 8 });
    } catch { /* only a warm-up */ }
  }

  // searchOptions: the engine's search options (what a translator passes on).
  info() {
    return { config: this.model.config, threads: this.engine.threads, searchOptions: this.engine.searchFields.map((f) => f.option) };
  }

  // Runs fn alone: the engine never sees two jobs interleaved.
  exclusive(fn) {
    return this.lock.run(fn);
  }

  // Input usage, as measureInputUsage() reports it and inputQuota bounds it:
  // each sentence's tokens plus its </s>.
  measure(text, options = {}) {
    return this.exclusive(async () => {
      this.model.checkAlive();
      const sources = this.model.sources();
      try {
        let n = 0;
        for await (const piece of tokenizedPieces(text, options, async () => {}, sources)) if (piece.tokens) n += piece.tokens + 1;
        return n;
      } finally {
        sources.free();
      }
    });
  }

  // texts: strings. options: search options (targetLanguage, beam, nbest,
  // maxLength, ...), details, sourceLanguage (sentence-splitting locale),
  // inputQuota (a QuotaExceededError past it). With nbest, each text gives
  // nbest candidates [{ text, score }]: the k-th joins each sentence's k-th
  // hypothesis (its last when it has fewer), its score their sum.
  // hooks: { cancelled(): reason or null, onPartial(delta) when streaming one
  // text: pieces to append, never taken back, that add up to the result }
  translate(texts, options = {}, hooks = {}) {
    return this.exclusive(() => this.translateNow(texts, options, hooks));
  }

  async translateNow(texts, options, { cancelled = () => null, onPartial } = {}) {
    const model = this.model;
    if (!model) throw new Error('residual-mt: no model loaded');
    model.checkAlive();
    const search = engineOptions(options, model.engine.searchFields.map((f) => f.option));
    const pace = pacer(cancelled);
    const sources = model.sources();
    try {
      const split = await splitTexts(model, sources, texts, options, search, pace);
      if (split.usage > (options.inputQuota ?? Infinity)) throw quotaExceeded(split.usage, options.inputQuota);
      const out = new Assembly(split);
      const started = now();
      const failures = await decodeSentences(model, sources, out, search, { details: !!options.details, pace, onPartial });
      const ms = now() - started;
      const results = texts.map((_, doc) => out.result(doc, options, ms));
      if (failures.length) throw untranslated(failures, split.sentences, results);
      return results;
    } finally {
      sources.free();
    }
  }

  // The language identifier (a LanguageDetector's model) from its file's
  // bytes, on this runner's engine (loaded first when it has none).
  // Returns { languages, bytes }.
  async loadDetector({ wasm, threads, model }) {
    if (wasm !== undefined || !this.engineReady) this.loadEngine({ wasm, threads });
    await this.engineReady;
    return this.exclusive(() => {
      this.detector?.dispose();
      this.detector = LanguageIdentifier.load(this.engine.wasm, model);
      return { languages: this.detector.languages, bytes: this.detector.bytes };
    });
  }

  // { features, probabilities } of `text` (LanguageIdentifier.scores).
  detect(text) {
    return this.exclusive(() => {
      if (!this.detector) throw new Error('residual-mt: no language detector is loaded');
      return this.detector.scores(text);
    });
  }

  dispose() {
    this.model?.dispose();
    this.model = null;
    this.detector?.dispose();
    this.detector = null;
    this.engine?.dispose();
  }
}
