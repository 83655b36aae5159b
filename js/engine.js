// A thin object layer over the C API (src/rmt.h, src/translation.h,
// src/spm.h): models, translations stepped from JS (so callers can stream
// and cancel between steps), and C errors turned into thrown Errors.

import { loadWasm } from './wasm.js';

const PARAMS_SIZE = 32; // rmt_search_params: 4 x int32, 2 x float64

export const DEFAULT_SEARCH = Object.freeze({
  beam: 5, nbest: 1, minLen: 1, maxLenA: 1.2, maxLenB: 10, lenpen: 1.0,
});

const RMT_LIMIT_BEAM = 0; // src/translation.h

function checkInteger(name, value, min, max) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`residual-mt: ${name} must be an integer in [${min}, ${max}], got ${value}`);
  }
}

// Large batches are translated in chunks (a chunk's cache is sized by its
// row count, sentences x beam, and its longest sentence).
const MAX_CHUNK_ROWS = 256;

// Sentences per chunk at this beam (at most `most`).
export function sentencesPerChunk(beam = DEFAULT_SEARCH.beam, most = Infinity) {
  return Math.max(1, Math.min(most, Math.floor(MAX_CHUNK_ROWS / beam)));
}

// Chunks of sentences of similar length; the results are put back in input order.
function inChunks(items, length, options, translate) {
  const perChunk = sentencesPerChunk(options.beam);
  if (items.length <= perChunk) return translate(items);
  const order = items.map((_, i) => i).sort((a, b) => length(items[a]) - length(items[b]));
  const results = new Array(items.length);
  for (let start = 0; start < order.length; start += perChunk) {
    const chunk = order.slice(start, start + perChunk);
    translate(chunk.map((i) => items[i])).forEach((result, k) => { results[chunk[k]] = result; });
  }
  return results;
}

// Decodes a translation to the end and frees it.
function runToEnd(translation, withText) {
  try {
    translation.run();
    return translation.results(withText);
  } finally {
    translation.free();
  }
}

export class Engine {
  constructor(wasm) {
    this.wasm = wasm;
  }

  // source: wasm bytes, a URL, or nothing for dist/residual-mt.wasm.
  static async load(source) {
    return new Engine(await loadWasm(source));
  }

  // files: { config: string | Uint8Array, weights: Uint8Array, spm?: Uint8Array }
  loadModel({ config, weights, spm }) {
    const w = this.wasm;
    if (config === undefined || weights === undefined) throw new TypeError('residual-mt: a model needs config and weights');
    const configBytes = typeof config === 'string' ? w.encoder.encode(config) : new Uint8Array(config);
    const [configPtr, configLen] = w.copyString(configBytes);
    const weightsBytes = weights instanceof Uint8Array ? weights : new Uint8Array(weights);
    let weightsPtr = 0, spmPtr = 0, modelPtr = 0, spmHandle = 0;
    try {
      weightsPtr = w.copyIn(weightsBytes);
      modelPtr = w.exports.rmt_model_load(configPtr, configLen, weightsPtr, weightsBytes.length);
      if (!modelPtr) throw w.error('cannot load the model: ');
      if (spm) {
        const spmBytes = spm instanceof Uint8Array ? spm : new Uint8Array(spm);
        spmPtr = w.copyIn(spmBytes);
        spmHandle = w.exports.rmt_spm_load(spmPtr, spmBytes.length);
        if (!spmHandle) throw w.error('cannot load the tokenizer (spm.model): ');
      }
      const configJson = JSON.parse(w.decoder.decode(configBytes));
      const model = new Model(this, modelPtr, spmHandle, configJson);
      modelPtr = spmHandle = 0;
      return model;
    } finally {
      w.free(configPtr);
      w.free(weightsPtr);
      w.free(spmPtr);
      if (modelPtr) w.exports.rmt_model_free(modelPtr);
      if (spmHandle) w.exports.rmt_spm_free(spmHandle);
    }
  }
}

export class Model {
  constructor(engine, ptr, spm, config) {
    this.engine = engine;
    this.wasm = engine.wasm;
    this.ptr = ptr;
    this.spm = spm;
    this.config = config;
    this.translations = new Set(); // freed with the model
    this.maxBeam = this.wasm.exports.rmt_limit(RMT_LIMIT_BEAM);
  }

  checkAlive() {
    if (!this.ptr) {
      const err = new Error('residual-mt: the model has been disposed');
      err.name = 'AbortError';
      throw err;
    }
  }

  // Starts a step-wise translation of sentences of token ids (without </s>).
  begin(sentences, options = {}) {
    this.checkAlive();
    if (!Array.isArray(sentences) || sentences.length === 0) throw new Error('residual-mt: empty input: no sentences');
    const w = this.wasm;
    const flat = [];
    const lens = sentences.map((ids) => {
      if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) throw new TypeError('residual-mt: each sentence must be an array of token ids');
      for (const id of ids) {
        if (!Number.isInteger(id)) throw new TypeError(`residual-mt: token id ${id} is not an integer`);
        flat.push(id);
      }
      return ids.length;
    });
    const idsPtr = w.copyInt32(flat.length ? flat : [0]);
    const lensPtr = w.copyInt32(lens);
    try {
      return this.withParams(options, (paramsPtr) =>
        w.exports.rmt_translation_begin(this.ptr, idsPtr, lensPtr, sentences.length, paramsPtr), sentences.length);
    } finally {
      w.free(idsPtr);
      w.free(lensPtr);
    }
  }

  // Starts a step-wise translation of texts (tokenized in the engine; the
  // target-language token added when the model has them).
  beginText(texts, options = {}) {
    this.checkTokenizer();
    if (!Array.isArray(texts) || texts.length === 0) throw new Error('residual-mt: empty input: no texts');
    const w = this.wasm;
    const encoded = texts.map((text) => {
      if (typeof text !== 'string') throw new TypeError('residual-mt: each text must be a string');
      return w.encoder.encode(text);
    });
    const joined = new Uint8Array(encoded.reduce((n, e) => n + e.length, 0));
    encoded.reduce((offset, e) => { joined.set(e, offset); return offset + e.length; }, 0);
    const textPtr = w.copyIn(joined.length ? joined : new Uint8Array(1));
    const lensPtr = w.copyInt32(encoded.map((e) => e.length));
    const [langPtr] = w.copyString(options.targetLanguage ?? '');
    try {
      return this.withParams(options, (paramsPtr) => w.exports.rmt_translation_begin_text(
        this.ptr, this.spm, textPtr, lensPtr, texts.length, langPtr, paramsPtr), texts.length);
    } finally {
      w.free(textPtr);
      w.free(lensPtr);
      w.free(langPtr);
    }
  }

  // Writes rmt_search_params, calls begin(paramsPtr) and wraps the result.
  withParams(options, begin, nSentences) {
    const p = { ...DEFAULT_SEARCH, ...options };
    checkInteger('beam', p.beam, 1, this.maxBeam);
    checkInteger('nbest', p.nbest, 1, p.beam);
    checkInteger('minLen', p.minLen, 0, 1 << 20);
    checkInteger('maxLenB', p.maxLenB, 0, 1 << 20);
    const w = this.wasm;
    const paramsPtr = w.malloc(PARAMS_SIZE);
    try {
      const view = new DataView(w.memory.buffer, paramsPtr, PARAMS_SIZE);
      view.setInt32(0, p.beam, true);
      view.setInt32(4, p.nbest, true);
      view.setInt32(8, p.minLen, true);
      view.setInt32(12, p.maxLenB, true);
      view.setFloat64(16, Number(p.maxLenA), true);
      view.setFloat64(24, Number(p.lenpen), true);
      const tr = begin(paramsPtr);
      if (!tr) throw w.error();
      const translation = new Translation(this, tr, nSentences);
      this.translations.add(translation);
      return translation;
    } finally {
      w.free(paramsPtr);
    }
  }

  // Translates texts; returns per text its n-best list [{ text, score, hitMaxLength }].
  translateTexts(texts, options = {}) {
    if (!Array.isArray(texts) || texts.length === 0) throw new Error('residual-mt: empty input: no texts');
    return inChunks(texts, (text) => text.length, options, (chunk) => runToEnd(this.beginText(chunk, options), true));
  }

  // Translates sentences of ids; returns per sentence its n-best list
  // [{ ids, score, hitMaxLength }], best first.
  translateIds(sentences, options = {}) {
    if (!Array.isArray(sentences) || sentences.length === 0) throw new Error('residual-mt: empty input: no sentences');
    return inChunks(sentences, (ids) => ids.length, options, (chunk) => runToEnd(this.begin(chunk, options), false));
  }

  // ---- tokenizer (spm.model)

  checkTokenizer() {
    this.checkAlive();
    if (!this.spm) throw new Error('residual-mt: this model has no tokenizer (spm.model)');
  }

  // SentencePiece's ids of `text`, as spm_encode gives them.
  tokenize(text) {
    return this.encode(text, (textPtr, textLen, idsPtr, cap) => this.wasm.exports.rmt_spm_encode(this.spm, textPtr, textLen, idsPtr, cap));
  }

  // The ids a translation's source gets for `text`: never a language token
  // (text that spells "<2en>" is encoded as ordinary pieces). [] when the text
  // has nothing to translate (only spaces, control or zero-width characters).
  sourceIds(text) {
    return this.encode(text, (textPtr, textLen, idsPtr, cap) => this.wasm.exports.rmt_text_encode(this.ptr, this.spm, textPtr, textLen, idsPtr, cap));
  }

  encode(text, encodeInto) {
    this.checkTokenizer();
    const w = this.wasm;
    const [textPtr, textLen] = w.copyString(text);
    let cap = textLen + 8, idsPtr = 0;
    try {
      for (;;) {
        idsPtr = w.malloc(cap * 4);
        const n = encodeInto(textPtr, textLen, idsPtr, cap);
        if (n < 0) throw w.error();
        if (n <= cap) return Array.from(w.i32.subarray(idsPtr >> 2, (idsPtr >> 2) + n));
        w.free(idsPtr);
        idsPtr = 0;
        cap = n;
      }
    } finally {
      w.free(textPtr);
      w.free(idsPtr);
    }
  }

  detokenize(ids) {
    this.checkTokenizer();
    const w = this.wasm;
    const idsPtr = w.copyInt32(ids.length ? ids : [0]);
    try {
      return w.readText((out, cap) => w.exports.rmt_spm_decode(this.spm, idsPtr, ids.length, out, cap), ids.length * 16 + 16);
    } finally {
      w.free(idsPtr);
    }
  }

  pieceToId(piece) {
    this.checkTokenizer();
    const [ptr] = this.wasm.copyString(piece);
    try {
      return this.wasm.exports.rmt_spm_piece_to_id(this.spm, ptr);
    } finally {
      this.wasm.free(ptr);
    }
  }

  dispose() {
    if (!this.ptr) return;
    for (const translation of this.translations) translation.free();
    this.wasm.exports.rmt_model_free(this.ptr);
    if (this.spm) this.wasm.exports.rmt_spm_free(this.spm);
    this.ptr = 0;
    this.spm = 0;
  }
}

// One batch being decoded. step() advances every unfinished sentence by one
// token; partial(s) shows the best hypothesis so far.
export class Translation {
  constructor(model, ptr, nSentences) {
    this.model = model;
    this.wasm = model.wasm;
    this.ptr = ptr;
    this.nSentences = nSentences;
  }

  checkAlive() {
    if (!this.ptr) throw new Error('residual-mt: the translation has been freed');
    this.model.checkAlive();
  }

  // Returns the number of unfinished sentences (0 when done).
  step() {
    this.checkAlive();
    const left = this.wasm.exports.rmt_translation_step(this.ptr);
    if (left < 0) throw this.wasm.error();
    return left;
  }

  run() {
    while (this.step() > 0) { /* each step decodes one token of every sentence */ }
  }

  readIds(fill, cap) {
    const w = this.wasm;
    const ptr = w.malloc(Math.max(1, cap) * 4);
    try {
      const n = fill(ptr);
      if (n < 0) throw w.error();
      return Array.from(w.i32.subarray(ptr >> 2, (ptr >> 2) + Math.min(n, cap)));
    } finally {
      w.free(ptr);
    }
  }

  partialText(s) {
    this.checkAlive();
    this.model.checkTokenizer();
    return this.wasm.readText((ptr, cap) => this.wasm.exports.rmt_translation_partial_text(this.ptr, this.model.spm, s, ptr, cap));
  }

  partial(s) {
    this.checkAlive();
    return this.readIds((ptr) => this.wasm.exports.rmt_translation_partial(this.ptr, s, ptr, 1 << 16), 1 << 16);
  }

  // Per sentence, its n-best list [{ ids, score, hitMaxLength }] (and text
  // when withText, decoded by the model's tokenizer). A sentence whose every
  // hypothesis scored NaN or -inf (broken weights) has an empty list.
  results(withText = false) {
    this.checkAlive();
    const w = this.wasm;
    const out = [];
    const extra = w.malloc(8);
    try {
      for (let s = 0; s < this.nSentences; s++) {
        const n = w.exports.rmt_translation_n_hyps(this.ptr, s);
        if (n < 0) throw w.error();
        const hyps = [];
        for (let k = 0; k < n; k++) {
          const ids = this.readIds((ptr) => w.exports.rmt_translation_hyp(this.ptr, s, k, ptr, 1 << 16, extra, extra + 4), 1 << 16);
          const hyp = { ids, score: w.f32[extra >> 2], hitMaxLength: w.i32[(extra >> 2) + 1] !== 0 };
          if (withText) hyp.text = w.readText((out, cap) => w.exports.rmt_translation_hyp_text(this.ptr, this.model.spm, s, k, out, cap));
          hyps.push(hyp);
        }
        out.push(hyps);
      }
    } finally {
      w.free(extra);
    }
    return out;
  }

  // For tests and scoring: the encoder output of sentence s ([len + 1, d_model]).
  encoderOut(s) {
    this.checkAlive();
    const ptr = this.wasm.exports.rmt_translation_encoder_out(this.ptr, s);
    const d = this.model.config.d_model;
    const n = this.wasm.exports.rmt_translation_src_len(this.ptr, s) * d;
    return this.wasm.f32.slice(ptr >> 2, (ptr >> 2) + n);
  }

  // Teacher forcing: feeds one token per sentence, returns logits [nSentences * vocab].
  forceStep(tokens) {
    this.checkAlive();
    const w = this.wasm;
    const ptr = w.copyInt32(tokens);
    try {
      if (w.exports.rmt_translation_force_step(this.ptr, ptr) < 0) throw w.error();
    } finally {
      w.free(ptr);
    }
    const logits = w.exports.rmt_translation_logits(this.ptr) >> 2;
    return w.f32.slice(logits, logits + this.nSentences * this.model.config.vocab_size);
  }

  free() {
    if (this.ptr) this.wasm.exports.rmt_translation_free(this.ptr);
    this.ptr = 0;
    this.model.translations.delete(this);
  }
}
