// The engine side of a translator: one Engine and one Model, and the jobs the
// API sends (translate, stream, measure). Runs in a Web Worker, a Node
// worker_thread, or in-process; it steps translations one token at a time and
// yields between steps so that cancellation is seen and the thread stays
// responsive. One job at a time: jobs never interleave inside the engine.

import { DEFAULT_SEARCH, Engine, sentencesPerChunk } from './engine.js';
import { segmentPieces, splitLong } from './segment.js';

const MAX_BATCH = 32;          // sentences decoded together (fewer at large beams: engine.js)
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

export function abortError(message = 'The operation was aborted') {
  if (typeof DOMException === 'function') return new DOMException(message, 'AbortError');
  const err = new Error(message);
  err.name = 'AbortError';
  return err;
}

// The error for sentences that got no translation. err.translations holds
// what translate() would have returned, those sentences left as they were.
function untranslated(failures, sentences, results) {
  const quote = (text) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
  const list = failures.map((f) => `${quote(sentences[f.sentence])}: ${f.message}`).join('; ');
  const err = new Error(`residual-mt: ${failures.length} of ${sentences.length} sentences could not be translated ` +
    `(kept as they were in err.translations): ${list}`);
  err.translations = results;
  return err;
}

export class Runner {
  constructor() {
    this.model = null;
    this.lock = Promise.resolve();
  }

  async load({ wasm, config, weights, spm, warmup = true }) {
    this.engine = await Engine.load(wasm);
    this.model = this.engine.loadModel({ config, weights, spm });
    if (warmup) this.warmup();
    return this.info();
  }

  // A short translation right after loading: the engine's memory grows to
  // its working size and the JS engine optimizes the hot wasm code, so the
  // user's first translation is about as fast as the next ones.
  warmup() {
    try {
      const tokens = this.model.config.languages?.target_lang_tokens;
      const targetLanguage = tokens ? Object.keys(tokens)[0] : undefined;
      this.model.translateTexts(['Hello, world. Hola, mundo.'], { targetLanguage, maxLenA: 0, maxLenB: 8 });
    } catch { /* only a warm-up */ }
  }

  info() {
    return { config: this.model.config };
  }

  // Runs fn alone: the engine never sees two jobs interleaved.
  exclusive(fn) {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => {});
    return run;
  }

  // How many ids a sentence may have (without the target-language token and </s>).
  sourceLimit(options) {
    const c = this.model.config;
    const prefix = c.languages?.target_lang_tokens ? 1 : 0;
    const maxPositions = c.max_positions ?? 1024;
    let limit = maxPositions - 1 - prefix;
    // Keep the output within max_positions too (max_len = a * src + b).
    const a = options.maxLenA ?? DEFAULT_SEARCH.maxLenA;
    const b = options.maxLenB ?? DEFAULT_SEARCH.maxLenB;
    if (a > 0) limit = Math.min(limit, Math.floor((maxPositions - 1 - b) / a));
    return Math.max(8, limit);
  }

  measure(text, options = {}) {
    return this.exclusive(() => {
      this.model.checkAlive();
      let n = 0;
      for (const piece of segmentPieces(text, { locale: options.sourceLanguage })) {
        const ids = piece.translate ? this.model.sourceIds(piece.text).length : 0;
        if (ids) n += ids + 1;
      }
      return n;
    });
  }

  // texts: strings. options: search options (targetLanguage, beam, maxLength,
  // ...), details, sourceLanguage (sentence-splitting locale).
  // hooks: { cancelled(): reason or null, onPartial(text) when streaming one text }
  translate(texts, options = {}, hooks = {}) {
    return this.exclusive(() => this.translateNow(texts, options, hooks));
  }

  async translateNow(texts, options, { cancelled = () => null, onPartial } = {}) {
    const model = this.model;
    if (!model) throw new Error('residual-mt: no model loaded');
    model.checkAlive();
    const search = {};
    for (const key of ['beam', 'lenpen', 'maxLenA', 'maxLenB', 'minLen', 'targetLanguage']) {
      if (options[key] !== undefined) search[key] = options[key];
    }
    if (options.maxLength !== undefined) {
      search.maxLenA = 0;
      search.maxLenB = options.maxLength;
    }
    const pace = pacer(cancelled);
    const limit = this.sourceLimit(search);
    const countTokens = (t) => model.sourceIds(t).length;

    // Sentences of all texts, each split further if too long for the model. A
    // piece with no tokens (only zero-width or control characters) is kept as
    // it came: there is nothing to translate, and the rest still is.
    const docs = [];
    const units = []; // { doc, piece, parts: [index into sentences] }
    const sentences = [];
    for (const [doc, text] of texts.entries()) {
      const pieces = [];
      for (const piece of segmentPieces(text, { locale: options.sourceLanguage })) {
        await pace();
        pieces.push(piece.text);
        const n = piece.translate ? countTokens(piece.text) : 0;
        if (!n) continue;
        const parts = n <= limit ? [piece.text] : splitLong(piece.text, limit, countTokens);
        units.push({ doc, piece: pieces.length - 1, parts: parts.map((part) => sentences.push(part) - 1) });
      }
      docs.push(pieces);
    }

    const outputs = new Array(sentences.length).fill('');
    const tokens = new Array(sentences.length).fill(0);
    const failures = []; // { sentence, message }
    const started = now();
    const assemble = (doc) => {
      const pieces = [...docs[doc]];
      for (const unit of units) {
        if (unit.doc === doc) pieces[unit.piece] = unit.parts.map((i) => outputs[i]).filter(Boolean).join(' ');
      }
      return pieces.join('');
    };
    let lastPartial = null;
    const emit = () => {
      if (!onPartial) return;
      const text = assemble(0);
      if (text !== lastPartial) {
        lastPartial = text;
        onPartial(text);
      }
    };

    // Batches of sentences; one the engine refuses as too large (beam x
    // sentences x length over its memory limit) is halved until it fits.
    const perBatch = sentencesPerChunk(search.beam, MAX_BATCH);
    const pending = [];
    for (let first = 0; first < sentences.length; first += perBatch) pending.push([first, Math.min(sentences.length, first + perBatch)]);
    while (pending.length) {
      const [first, end] = pending.shift();
      let tr;
      try {
        tr = model.beginText(sentences.slice(first, end), search);
      } catch (err) {
        if (err.code !== 'RMT_E_SIZE' || end - first === 1) throw err;
        const middle = (first + end) >> 1;
        pending.unshift([first, middle], [middle, end]);
        continue;
      }
      try {
        for (;;) {
          await pace(!!onPartial);
          const left = tr.step();
          if (onPartial) {
            for (let s = first; s < end; s++) outputs[s] = tr.partialText(s - first).trim();
            emit();
          }
          if (left === 0) break;
        }
        tr.results(true).forEach((hyps, k) => {
          const s = first + k;
          if (!hyps.length) {
            // Broken weights: this sentence has no translation; the others do.
            outputs[s] = sentences[s];
            failures.push({ sentence: s, message: 'every hypothesis scored NaN or -inf (non-finite activations: broken weights?)' });
            return;
          }
          outputs[s] = hyps[0].text.trim();
          tokens[s] = hyps[0].ids.length;
        });
      } finally {
        tr.free();
      }
      emit();
      await pace(true);
    }
    const ms = now() - started;
    const results = texts.map((_, doc) => {
      const text = assemble(doc);
      if (!options.details) return text;
      const mine = units.filter((u) => u.doc === doc);
      const outputTokens = mine.reduce((n, u) => n + u.parts.reduce((m, i) => m + tokens[i], 0), 0);
      return { text, sentences: mine.length, outputTokens, ms };
    });
    if (failures.length) throw untranslated(failures, sentences, results);
    return results;
  }

  dispose() {
    this.model?.dispose();
    this.model = null;
  }
}
