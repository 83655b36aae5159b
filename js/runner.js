// The engine side of a translator: one Engine and one Model, and the jobs the
// API sends (translate, stream, measure). Runs in a Web Worker, a Node
// worker_thread, or in-process; it steps translations one token at a time and
// yields between steps so that cancellation is seen and the thread stays
// responsive. One job at a time: jobs never interleave inside the engine.

import { openKeptWeights } from './cache.js';
import { Engine, nextBatch, planBatches, textSpans } from './engine.js';
import { LanguageIdentifier } from './langid.js';
import { timeStep } from './env.js';
import { quotaExceeded, unknownError } from './errors.js';
import { engineTarget } from './languages.js';
import { JobLock } from './queue.js';
import { segmentPieces, splitLong, trimSpan } from './segment.js';

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

// A sentence's stable text as it may be shown: without the trailing
// whitespace the next token may or may not follow, nor the replacement
// character of a UTF-8 sequence whose next bytes are still to come.
function showable(text) {
  return text.trimStart().replace(/[\s\uFFFD]+$/u, '');
}

// The engine's alignment of one sentence (Translation.alignmentText) as
// links { source: [start, end], target: [start, end] } between the sentence
// and `output` as the caller shows it (trimmed): each span without the
// whitespace around it, tokens with no source or no text left out.
function alignmentLinks(tokens, sentence, output) {
  const lead = output.length - output.trimStart().length, length = output.trim().length;
  const links = [];
  for (const { source, target } of tokens) {
    const from = source && trimSpan(sentence, source);
    const to = trimSpan(output, target).map((i) => Math.min(Math.max(i - lead, 0), length));
    if (from && from[0] < from[1] && to[0] < to[1]) links.push({ source: from, target: to });
  }
  return links;
}

// Steps tr to its end, pacing between steps (a yield every step when
// streaming); onStep(), if given, after each step but the last.
async function stepAll(tr, pace, onStep) {
  for (;;) {
    await pace(!!onStep);
    const left = tr.step();
    if (left === 0) return;
    onStep?.();
  }
}

// Streaming text 0 of `out`: emit() sends onPartial what its sure prefix
// grew by; check() at the end, that what was sent is the whole result.
function streamer(out, onPartial) {
  let emitted = '';
  return {
    emit() {
      const sure = out.text(0, 0, true);
      if (sure.length > emitted.length && sure.startsWith(emitted)) {
        onPartial(sure.slice(emitted.length));
        emitted = sure;
      }
    },
    check() {
      if (emitted !== out.text(0)) {
        throw new Error('residual-mt: the streamed text is not the start of the translation (a bug: please report it)');
      }
    },
  };
}

// Where each part of a piece (splitLong: its words, whitespace runs made one
// space, or cuts of one long word) is in the piece: per part, the piece's
// index of each of its indices (and of its end).
function partOffsets(piece, parts) {
  let at = 0;
  return parts.map((part) => {
    const map = new Int32Array(part.length + 1);
    while (at < piece.length && /\s/u.test(piece[at]) && !/\s/u.test(part[0] ?? '')) at++;
    for (let i = 0; i < part.length; i++) {
      map[i] = at;
      if (/\s/u.test(part[i])) while (at < piece.length && /\s/u.test(piece[at])) at++;
      else at++;
    }
    map[part.length] = at;
    return map;
  });
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

// The texts of one translate() call as sentences: per text its pieces
// (docs), the pieces to translate (units: { doc, piece, parts: sentence
// indices, at: partOffsets }), each sentence's text and its number in the
// call's Sources (tokenized once), and the input usage.
class Split {
  constructor() {
    this.docs = [];
    this.units = [];
    this.sentences = [];
    this.sourceOf = [];
    this.usage = 0;
  }

  // A piece (its ids counted: tokens) as one sentence, or parts when too
  // long for the model; countMany(texts) counts the ids of many at once.
  addPiece(doc, pieces, piece, { limit, details, sources, countMany }) {
    this.usage += piece.tokens + 1;
    const parts = piece.tokens <= limit ? [piece.text] : splitLong(piece.text, limit, (t) => countMany([t])[0], countMany);
    const indices = parts.map((part) => {
      this.sourceOf.push(part === piece.text ? piece.source : (sources.add(part), sources.count - 1));
      return this.sentences.push(part) - 1;
    });
    this.units.push({ doc, piece: pieces.length - 1, parts: indices, at: details ? partOffsets(piece.text, parts) : null });
  }
}

// The output of one translate() call as it is decoded: hyps[s] (sentence s's
// candidates [{ text, score, tokens, links }] once decoded), stable[s] (its
// sure prefix while decoding), and the texts they make.
class Assembly {
  constructor(split) {
    this.split = split;
    this.hyps = new Array(split.sentences.length).fill(null);
    this.stable = new Array(split.sentences.length).fill('');
    this.unitAt = split.docs.map(() => new Map());
    this.unitOf = [];
    for (const unit of split.units) {
      this.unitAt[unit.doc].set(unit.piece, unit);
      for (const s of unit.parts) this.unitOf[s] = unit;
    }
  }

  candidate(s, k) {
    return this.hyps[s][Math.min(k, this.hyps[s].length - 1)];
  }

  // The text of `doc` with the k-th candidate of each sentence; with live,
  // only as far as it is sure: up to the first sentence not yet decoded,
  // with its stable prefix. links: an array that gets the best candidates'
  // alignment links, placed in the input and the output.
  text(doc, k = 0, live = false, links = null) {
    let out = '', from = 0;
    for (const [p, piece] of this.split.docs[doc].entries()) {
      const unit = this.unitAt[doc].get(p);
      const start = from;
      from += piece.length;
      if (!unit) {
        out += piece;
        continue;
      }
      const parts = [];
      for (const s of unit.parts) {
        if (this.hyps[s]) parts.push(this.candidate(s, k).text);
        else if (live) return out + [...parts, showable(this.stable[s])].filter(Boolean).join(' ');
        else parts.push(this.split.sentences[s]); // no translation (reported): kept as it was
      }
      out = this.joinParts(out, unit, parts, start, links);
    }
    return out;
  }

  // out with a unit's parts appended, one space between them (their links
  // placed: the unit's piece starts at `start` of the input).
  joinParts(out, unit, parts, start, links) {
    let separator = '';
    parts.forEach((part, j) => {
      if (!part) return;
      out += separator;
      separator = ' ';
      for (const link of (links && this.hyps[unit.parts[j]]?.[0].links) ?? []) {
        links.push({ source: link.source.map((i) => start + unit.at[j][i]), target: link.target.map((i) => out.length + i) });
      }
      out += part;
    });
    return out;
  }

  // What translate() returns for text `doc` (see Runner.translate).
  result(doc, options, ms) {
    const mine = this.split.units.filter((u) => u.doc === doc);
    if (options.nbest !== undefined) {
      const sentences = mine.flatMap((u) => u.parts);
      // score null: nothing in this text was translated.
      return Array.from({ length: options.nbest }, (__, k) => ({
        text: this.text(doc, k),
        score: sentences.length ? sentences.reduce((sum, s) => sum + (this.hyps[s] ? this.candidate(s, k).score : 0), 0) : null,
      }));
    }
    if (!options.details) return this.text(doc);
    const alignment = [];
    const text = this.text(doc, 0, false, alignment);
    const outputTokens = mine.reduce((n, u) => n + u.parts.reduce((m, s) => m + (this.hyps[s]?.[0].tokens ?? 0), 0), 0);
    return { text, sentences: mine.length, outputTokens, ms, alignment };
  }
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

  // The pieces of `text`, each piece to translate tokenized once into
  // `sources`: its number there (source) and its number of ids (tokens).
  async *tokenized(text, options, pace, sources) {
    for (const piece of segmentPieces(text, { locale: options.sourceLanguage })) {
      await pace();
      if (!piece.translate) yield { ...piece, tokens: 0 };
      else yield { ...piece, tokens: sources.add(piece.text), source: sources.count - 1 };
    }
  }

  // Input usage, as measureInputUsage() reports it and inputQuota bounds it:
  // each sentence's tokens plus its </s>.
  measure(text, options = {}) {
    return this.exclusive(async () => {
      this.model.checkAlive();
      const sources = this.model.sources();
      try {
        let n = 0;
        for await (const piece of this.tokenized(text, options, async () => {}, sources)) if (piece.tokens) n += piece.tokens + 1;
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
      const split = await this.split(texts, options, search, pace, sources);
      if (split.usage > (options.inputQuota ?? Infinity)) throw quotaExceeded(split.usage, options.inputQuota);
      const out = new Assembly(split);
      const started = now();
      const failures = await this.decode(out, sources, search, { details: !!options.details, pace, onPartial });
      const ms = now() - started;
      const results = texts.map((_, doc) => out.result(doc, options, ms));
      if (failures.length) throw untranslated(failures, split.sentences, results);
      return results;
    } finally {
      sources.free();
    }
  }

  // Sentences of all texts, each split further if too long for the model. A
  // piece with nothing to translate (no letter, or no tokens) is kept as it
  // came, and the rest still is translated.
  async split(texts, options, search, pace, sources) {
    const model = this.model;
    const split = new Split();
    const context = { limit: model.maxSourceIds(search), details: options.details, sources, countMany: (t) => model.countIds(t) };
    for (const [doc, text] of texts.entries()) {
      const pieces = [];
      for await (const piece of this.tokenized(text, options, pace, sources)) {
        pieces.push(piece.text);
        if (piece.tokens) split.addPiece(doc, pieces, piece, context);
      }
      split.docs.push(pieces);
    }
    return split;
  }

  // Decodes every sentence of `out` in batches (the one batching policy:
  // planBatches), filling out.hyps; with onPartial, streams text 0's sure
  // prefix as it grows. Returns the failures ({ sentence, text, message }).
  async decode(out, sources, search, { details, pace, onPartial }) {
    const model = this.model, { sentences, sourceOf } = out.split;
    const failures = [];
    const stream = onPartial && streamer(out, onPartial);
    const pending = planBatches(sentences.map((s) => s.length), { beam: search.beam ?? model.engine.defaults.beam,
      most: search.batch, keepOrder: !!onPartial });
    for (let next; (next = nextBatch(pending, (batch) => model.beginSources(sources, batch.map((s) => sourceOf[s]), search)));) {
      const { batch, translation: tr } = next;
      try {
        await stepAll(tr, pace, stream && (() => {
          batch.forEach((s, k) => { out.stable[s] = tr.stableText(k); });
          stream.emit();
        }));
        tr.results(true, details).forEach((list, k) => {
          const s = batch[k];
          if (!list.length) {
            // Broken weights: this sentence has no translation; the others do.
            failures.push({ sentence: s, text: out.unitOf[s].doc, message: 'every hypothesis scored NaN or -inf (non-finite activations: broken weights?)' });
            return;
          }
          out.hyps[s] = list.map((h) => ({ text: h.text.trim(), score: h.score, tokens: h.ids.length }));
          if (details) out.hyps[s][0].links = alignmentLinks(textSpans(list[0].spans, sentences[s], list[0].text), sentences[s], list[0].text);
        });
      } finally {
        tr.free();
      }
      if (stream && !failures.length) stream.emit();
      await pace(true);
    }
    if (stream && !failures.length) stream.check();
    return failures;
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
