// The engine side of a translator: one Engine and one Model, and the jobs the
// API sends (translate, stream, measure). Runs in a Web Worker, a Node
// worker_thread, or in-process; it steps translations one token at a time and
// yields between steps so that cancellation is seen and the thread stays
// responsive. One job at a time: jobs never interleave inside the engine.

import { Engine } from './engine.js';
import { segmentText, splitLong } from './segment.js';

const MAX_BATCH = 32;          // sentences decoded together
const SLICE_MS = 12;           // longest run of steps between two yields

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

export function abortError(message = 'The operation was aborted') {
  if (typeof DOMException === 'function') return new DOMException(message, 'AbortError');
  const err = new Error(message);
  err.name = 'AbortError';
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
    const a = options.maxLenA ?? 1.2;
    const b = options.maxLenB ?? 10;
    if (a > 0) limit = Math.min(limit, Math.floor((maxPositions - 1 - b) / a));
    return Math.max(8, limit);
  }

  measure(text, options = {}) {
    return this.exclusive(() => {
      this.model.checkAlive();
      let n = 0;
      for (const piece of segmentText(text, { locale: options.sourceLanguage })) {
        if (piece.translate) n += this.model.tokenize(piece.text).length + 1;
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
    for (const key of ['beam', 'nbest', 'lenpen', 'maxLenA', 'maxLenB', 'minLen', 'targetLanguage']) {
      if (options[key] !== undefined) search[key] = options[key];
    }
    if (options.maxLength !== undefined) {
      search.maxLenA = 0;
      search.maxLenB = options.maxLength;
    }
    const limit = this.sourceLimit(search);
    // SentencePiece gives at most one id per UTF-8 byte, plus one: tokenize only when needed.
    const encoder = new TextEncoder();
    const countTokens = (t) => (encoder.encode(t).length + 1 <= limit ? 0 : model.tokenize(t).length);

    // Sentences of all texts, each split further if too long for the model.
    const docs = texts.map((text) => segmentText(text, { locale: options.sourceLanguage }));
    const units = []; // { doc, piece, parts: [index into sentences] }
    const sentences = [];
    docs.forEach((pieces, doc) => pieces.forEach((piece, p) => {
      if (!piece.translate) return;
      const parts = countTokens(piece.text) <= limit ? [piece.text] : splitLong(piece.text, limit, (t) => model.tokenize(t).length);
      units.push({ doc, piece: p, parts: parts.map((part) => sentences.push(part) - 1) });
    }));

    const outputs = new Array(sentences.length).fill('');
    const tokens = new Array(sentences.length).fill(0);
    const started = now();
    const assemble = (doc) => {
      const pieces = docs[doc].map((piece) => piece.text);
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

    for (let first = 0; first < sentences.length; first += MAX_BATCH) {
      const batch = sentences.slice(first, first + MAX_BATCH);
      const tr = model.beginText(batch, search);
      try {
        let sliceStart = now();
        for (;;) {
          const reason = cancelled();
          if (reason) throw reason;
          const left = tr.step();
          if (onPartial) {
            for (let s = 0; s < batch.length; s++) outputs[first + s] = tr.partialText(s).trim();
            emit();
          }
          if (left === 0) break;
          if (onPartial || now() - sliceStart > SLICE_MS) {
            await yieldNow();
            sliceStart = now();
          }
        }
        tr.results(true).forEach((hyps, s) => {
          outputs[first + s] = hyps[0].text.trim();
          tokens[first + s] = hyps[0].ids.length;
        });
      } finally {
        tr.free();
      }
      emit();
      await yieldNow();
    }
    const ms = now() - started;
    return texts.map((_, doc) => {
      const text = assemble(doc);
      if (!options.details) return text;
      const mine = units.filter((u) => u.doc === doc);
      const outputTokens = mine.reduce((n, u) => n + u.parts.reduce((m, i) => m + tokens[i], 0), 0);
      return { text, sentences: mine.length, outputTokens, ms };
    });
  }

  dispose() {
    this.model?.dispose();
    this.model = null;
  }
}
