// The engine side of a translator: one Engine and one Model, and the jobs the
// API sends (translate, stream, measure). Runs in a Web Worker, a Node
// worker_thread, or in-process; it steps translations one token at a time and
// yields between steps so that cancellation is seen and the thread stays
// responsive. One job at a time: jobs never interleave inside the engine.

import { openKeptWeights } from './cache.js';
import { Engine, nextBatch, planBatches } from './engine.js';
import { LanguageIdentifier } from './langid.js';
import { timeStep } from './env.js';
import { quotaExceeded, unknownError } from './errors.js';
import { JobLock } from './queue.js';
import { segmentPieces, splitLong } from './segment.js';

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

// [start, end] of `text` less the whitespace at either end.
function trimSpan(text, [start, end]) {
  while (start < end && /\s/u.test(text[start])) start++;
  while (end > start && /\s/u.test(text[end - 1])) end--;
  return [start, end];
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

const SEARCH_OPTIONS = ['beam', 'nbest', 'lenpen', 'maxLenA', 'maxLenB', 'minLen', 'shortlist', 'targetLanguage', 'batch'];

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
      const tokens = this.model.config.languages?.target_lang_tokens;
      const targetLanguage = tokens ? Object.keys(tokens)[0] : undefined;
      await this.translateNow(['Hello, world. Hola, mundo.'], { targetLanguage, maxLength: 8 });
    } catch { /* only a warm-up */ }
  }

  info() {
    return { config: this.model.config, threads: this.engine.threads };
  }

  // Runs fn alone: the engine never sees two jobs interleaved.
  exclusive(fn) {
    return this.lock.run(fn);
  }

  // The pieces of `text` and the source tokens of each piece to translate.
  async *tokenized(text, options, pace) {
    for (const piece of segmentPieces(text, { locale: options.sourceLanguage })) {
      await pace();
      yield { ...piece, tokens: piece.translate ? this.model.sourceIds(piece.text).length : 0 };
    }
  }

  // Input usage, as measureInputUsage() reports it and inputQuota bounds it:
  // each sentence's tokens plus its </s>.
  measure(text, options = {}) {
    return this.exclusive(async () => {
      this.model.checkAlive();
      let n = 0;
      for await (const piece of this.tokenized(text, options, async () => {})) if (piece.tokens) n += piece.tokens + 1;
      return n;
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
    const search = {};
    for (const key of SEARCH_OPTIONS) if (options[key] !== undefined) search[key] = options[key];
    if (options.maxLength !== undefined) {
      search.maxLenA = 0;
      search.maxLenB = options.maxLength;
    }
    const pace = pacer(cancelled);
    const limit = model.maxSourceIds(search);
    const countTokens = (t) => model.sourceIds(t).length;

    // Sentences of all texts, each split further if too long for the model. A
    // piece with nothing to translate (no letter, or no tokens) is kept as it
    // came, and the rest still is translated.
    const docs = [];  // per text: its pieces' texts
    const units = []; // { doc, piece, parts: [index into sentences] }
    const sentences = [];
    let usage = 0;
    for (const [doc, text] of texts.entries()) {
      const pieces = [];
      for await (const piece of this.tokenized(text, options, pace)) {
        pieces.push(piece.text);
        if (!piece.tokens) continue;
        usage += piece.tokens + 1;
        const parts = piece.tokens <= limit ? [piece.text] : splitLong(piece.text, limit, countTokens);
        units.push({ doc, piece: pieces.length - 1, parts: parts.map((part) => sentences.push(part) - 1),
          at: options.details ? partOffsets(piece.text, parts) : null });
      }
      docs.push(pieces);
    }
    if (usage > (options.inputQuota ?? Infinity)) throw quotaExceeded(usage, options.inputQuota);

    const hyps = new Array(sentences.length).fill(null); // [{ text, score, tokens, links }] once decoded
    const stable = new Array(sentences.length).fill('');  // while decoding
    const failures = []; // { sentence, message }
    const started = now();
    const unitAt = docs.map(() => new Map());
    const unitOf = [];
    for (const unit of units) {
      unitAt[unit.doc].set(unit.piece, unit);
      for (const s of unit.parts) unitOf[s] = unit;
    }
    const candidate = (s, k) => hyps[s][Math.min(k, hyps[s].length - 1)];
    // The text of `doc` with the k-th candidate of each sentence; with live,
    // only as far as it is sure: up to the first sentence not yet decoded,
    // with its stable prefix. links: an array that gets the best candidates'
    // alignment links, placed in the input and the output.
    const assemble = (doc, k = 0, live = false, links = null) => {
      let out = '', from = 0;
      for (const [p, piece] of docs[doc].entries()) {
        const unit = unitAt[doc].get(p);
        const start = from;
        from += piece.length;
        if (!unit) {
          out += piece;
          continue;
        }
        const parts = [];
        for (const s of unit.parts) {
          if (hyps[s]) parts.push(candidate(s, k).text);
          else if (live) return out + [...parts, showable(stable[s])].filter(Boolean).join(' ');
          else parts.push(sentences[s]); // no translation (reported): kept as it was
        }
        let separator = '';
        parts.forEach((part, j) => {
          if (!part) return;
          out += separator;
          separator = ' ';
          const s = unit.parts[j];
          for (const link of (links && hyps[s]?.[0].links) ?? []) {
            links.push({ source: link.source.map((i) => start + unit.at[j][i]), target: link.target.map((i) => out.length + i) });
          }
          out += part;
        });
      }
      return out;
    };
    let emitted = '';
    const emit = () => {
      const sure = assemble(0, 0, true);
      if (sure.length > emitted.length && sure.startsWith(emitted)) {
        onPartial(sure.slice(emitted.length));
        emitted = sure;
      }
    };

    const pending = planBatches(sentences.map((s) => s.length), { beam: search.beam ?? model.engine.defaults.beam,
      most: search.batch, keepOrder: !!onPartial });
    for (let next; (next = nextBatch(pending, (batch) => model.beginText(batch.map((s) => sentences[s]), search)));) {
      const { batch, translation: tr } = next;
      try {
        for (;;) {
          await pace(!!onPartial);
          const left = tr.step();
          if (onPartial && left > 0) {
            batch.forEach((s, k) => { stable[s] = tr.stableText(k); });
            emit();
          }
          if (left === 0) break;
        }
        tr.results(true).forEach((list, k) => {
          const s = batch[k];
          if (!list.length) {
            // Broken weights: this sentence has no translation; the others do.
            failures.push({ sentence: s, text: unitOf[s].doc, message: 'every hypothesis scored NaN or -inf (non-finite activations: broken weights?)' });
            return;
          }
          hyps[s] = list.map((h) => ({ text: h.text.trim(), score: h.score, tokens: h.ids.length }));
          if (options.details) hyps[s][0].links = alignmentLinks(tr.alignmentText(k, sentences[s]), sentences[s], list[0].text);
        });
      } finally {
        tr.free();
      }
      if (onPartial && !failures.length) emit();
      await pace(true);
    }
    if (onPartial && !failures.length && emitted !== assemble(0)) {
      throw new Error('residual-mt: the streamed text is not the start of the translation (a bug: please report it)');
    }
    const ms = now() - started;
    const results = texts.map((_, doc) => {
      if (options.nbest !== undefined) {
        const mine = units.filter((u) => u.doc === doc).flatMap((u) => u.parts);
        // score null: nothing in this text was translated.
        return Array.from({ length: options.nbest }, (__, k) => ({
          text: assemble(doc, k), score: mine.length ? mine.reduce((sum, s) => sum + (hyps[s] ? candidate(s, k).score : 0), 0) : null,
        }));
      }
      if (!options.details) return assemble(doc);
      const alignment = [];
      const text = assemble(doc, 0, false, alignment);
      const mine = units.filter((u) => u.doc === doc);
      const outputTokens = mine.reduce((n, u) => n + u.parts.reduce((m, s) => m + (hyps[s]?.[0].tokens ?? 0), 0), 0);
      return { text, sentences: mine.length, outputTokens, ms, alignment };
    });
    if (failures.length) throw untranslated(failures, sentences, results);
    return results;
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
