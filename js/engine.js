// A thin object layer over the C API (src/rmt.h, src/translation.h,
// src/spm.h): models, translations stepped from JS (so callers can stream
// and cancel between steps), and C errors turned into thrown Errors. Search
// defaults, ranges and limits are the engine's: read from it, never repeated.

import { hexDigest } from './cache.js';
import { timeStep } from './env.js';
import { threadCount } from './defaults.js';
import { loadWasm } from './wasm.js';

// The search parameters as the engine defines them (src/translation.c): the
// JS option of each field is its C name in camelCase ("max_len_a" -> maxLenA).
function searchFields(wasm) {
  const fields = [];
  for (let i = 0; ; i++) {
    const ptr = wasm.exports.rmt_search_param_name(i);
    if (!ptr) return fields;
    fields.push({ index: i, option: wasm.readString(ptr).replace(/_(.)/g, (_, c) => c.toUpperCase()) });
  }
}

// The one batching policy. Sentences are decoded in batches of at most `most`
// sentences (32) and MAX_BATCH_ROWS rows (sentences x beam: the cache is
// sized by rows and by the batch's longest sentence), sorted by length so
// that a batch holds sentences of similar length, or kept in their order
// (streaming shows them in order). Returns lists of sentence indices.
const MAX_BATCH = 32;
const MAX_BATCH_ROWS = 256;

export function planBatches(lengths, { beam, most = MAX_BATCH, keepOrder = false }) {
  const perBatch = Math.max(1, Math.min(most, Math.floor(MAX_BATCH_ROWS / beam)));
  const order = lengths.map((_, i) => i);
  if (!keepOrder) order.sort((a, b) => lengths[a] - lengths[b]);
  const batches = [];
  for (let start = 0; start < order.length; start += perBatch) batches.push(order.slice(start, start + perBatch));
  return batches;
}

// A batch the engine refuses as too large for its memory limit (RMT_E_SIZE)
// is decoded as two halves instead; one sentence alone over it is the error,
// as is any other, its sentence numbered as the caller numbered it.
function halveOrThrow(err, batch) {
  if (err.code !== 'RMT_E_SIZE' || batch.length === 1) {
    // (A DOMException, such as a lost thread's UnknownError, names no sentence and keeps its message.)
    if (!(err instanceof globalThis.DOMException)) {
      err.message = err.message.replace(/\b(sentence|text) (\d+)\b/g, (_, what, k) => `${what} ${batch[Number(k)] ?? k}`);
    }
    throw err;
  }
  const middle = batch.length >> 1;
  return [batch.slice(0, middle), batch.slice(middle)];
}

// Takes the next batch off `pending` (planBatches' lists) and starts it with
// begin(batch); a batch too large for the engine goes back as two halves.
// Returns { batch, translation }, or null when no batch is left.
export function nextBatch(pending, begin) {
  while (pending.length) {
    const batch = pending.shift();
    try {
      return { batch, translation: begin(batch) };
    } catch (err) {
      pending.unshift(...halveOrThrow(err, batch));
    }
  }
  return null;
}

// Decodes every batch to the end: begin(batch) starts one, finish(translation,
// batch) reads its results.
function decodeAll(items, length, options, begin, finish) {
  if (!Array.isArray(items) || items.length === 0) throw new Error('residual-mt: empty input: no sentences');
  const pending = planBatches(items.map(length), { beam: options.beam ?? 1, most: options.batch });
  for (let next; (next = nextBatch(pending, (batch) => begin(batch.map((i) => items[i]))));) {
    const { batch, translation } = next;
    try {
      translation.run();
      finish(translation, batch);
    } finally {
      translation.free();
    }
  }
}

export class Engine {
  constructor(wasm) {
    this.wasm = wasm;
    this.searchFields = searchFields(wasm);
    this.defaults = Object.freeze(this.withParams({}, (ptr) => Object.fromEntries(this.searchFields.map(
      ({ index, option }) => [option, wasm.exports.rmt_search_param_get(ptr, index)]))));
  }

  // Calls use(ptr) with an rmt_search_params holding the engine's defaults
  // and `options` (beam, nbest, minLen, maxLenA, maxLenB, lenpen, shortlist),
  // each checked by the engine (a RangeError names the option and its range).
  // A boolean is 1 or 0 (shortlist: false).
  withParams(options, use) {
    const w = this.wasm;
    const ptr = w.malloc(w.exports.rmt_search_params_size());
    try {
      w.exports.rmt_search_params_default(ptr);
      for (const { index, option } of this.searchFields) {
        if (options[option] === undefined) continue;
        const given = options[option];
        const value = typeof given === 'number' ? given : typeof given === 'boolean' ? Number(given) : NaN;
        if (w.exports.rmt_search_param_set(ptr, index, value) < 0) throw w.error();
      }
      return use(ptr);
    } finally {
      w.free(ptr);
    }
  }

  // source: wasm bytes, a URL, or nothing for the default build (defaults.js).
  // options.threads: how many threads to run on (default: the processors,
  // up to DEFAULT_THREADS_CAP; 1 where memory cannot be shared). Only the
  // threads build runs on more than one: engine.threads says how many it has.
  // waitForThreads: as loadWasm's (engine.threadsStarted).
  static async load(source, { threads, waitForThreads = true } = {}) {
    return new Engine(await loadWasm(source, { threads: await threadCount(threads), waitForThreads }));
  }

  get threadsStarted() {
    return this.wasm.threadsStarted;
  }

  get threads() {
    return this.wasm.threads;
  }

  // Ends the engine's threads (their workers); it then runs on one thread.
  dispose() {
    this.wasm.dispose();
  }

  // files: { config: string | Uint8Array, weights, spm?: Uint8Array,
  // int8?: boolean }. weights: bytes, or a file to read straight into the
  // engine's memory ({ size, readInto(view) }: cache.js openKeptWeights).
  // A model whose matrices are int8 (models/quantize.py) runs
  // in int8 as it is; int8: true quantizes a float model the same way as it loads.
  // steps: an array for the time each part takes (env.js timeStep), if wanted;
  // onWeights(weights): called with the weights once they are in the engine,
  // before they are read (the caller may check them meanwhile). For a file,
  // with what the engine read: on more than one thread, their SHA-256
  // ({ sha256, size }, hex), computed by another of the engine's threads
  // while the model loads, once the model is in; on one, a copy of the bytes.
  loadModel({ config, weights, spm, int8 = false }, steps, onWeights) {
    const w = this.wasm;
    if (config === undefined || weights === undefined) throw new TypeError('residual-mt: a model needs config and weights');
    if (typeof int8 !== 'boolean') throw new TypeError('residual-mt: int8 must be true or false');
    const configBytes = typeof config === 'string' ? w.encoder.encode(config) : new Uint8Array(config);
    const [configPtr, configLen] = w.copyString(configBytes);
    const file = typeof weights?.readInto === 'function' ? weights : null;
    const weightsBytes = file ? null : weights instanceof Uint8Array ? weights : new Uint8Array(weights);
    const weightsLength = file ? file.size : weightsBytes.length; // onWeights may move the bytes elsewhere
    // Hashed in the engine, no copy, where another thread can do it meanwhile
    // (its pool is sized: its threads are running or starting).
    const digest = file && onWeights && w.exports.rmt_threads_count() > 1;
    let weightsPtr = 0, spmPtr = 0, modelPtr = 0, spmHandle = 0, digestPtr = 0;
    try {
      let done;
      if (file) {
        done = timeStep('read weights', steps);
        weightsPtr = w.malloc(weightsLength);
        file.readInto(new Uint8Array(w.memory.buffer, weightsPtr, weightsLength));
        done();
      }
      if (digest) {
        digestPtr = w.malloc(32);
        w.exports.rmt_sha256_start(weightsPtr, weightsLength, digestPtr);
      } else {
        done = timeStep('copy weights', steps);
        const copied = file ? (onWeights && w.u8.slice(weightsPtr, weightsPtr + weightsLength)) : weightsBytes;
        if (!file) weightsPtr = w.copyIn(weightsBytes);
        done();
        onWeights?.(copied);
      }
      done = timeStep('model', steps);
      const load = int8 ? w.exports.rmt_model_load_quantized : w.exports.rmt_model_load;
      modelPtr = load(configPtr, configLen, weightsPtr, weightsLength);
      done();
      if (digest) {
        done = timeStep('sha256 weights', steps); // what is left of it once the model is in
        w.exports.rmt_sha256_wait();
        done();
        onWeights({ sha256: hexDigest(w.u8.subarray(digestPtr, digestPtr + 32)), size: weightsLength });
      }
      if (!modelPtr) throw w.error('cannot load the model: ');
      if (spm) {
        done = timeStep('spm', steps);
        const spmBytes = spm instanceof Uint8Array ? spm : new Uint8Array(spm);
        spmPtr = w.copyIn(spmBytes);
        spmHandle = w.exports.rmt_spm_load(spmPtr, spmBytes.length);
        done();
        if (!spmHandle) throw w.error('cannot load the tokenizer (spm.model): ');
      }
      const configJson = JSON.parse(w.decoder.decode(configBytes));
      const model = new Model(this, modelPtr, spmHandle, configJson);
      modelPtr = spmHandle = 0;
      return model;
    } finally {
      if (digestPtr) w.exports.rmt_sha256_wait(); // it reads the weights until then
      w.free(digestPtr);
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
  }

  // The bytes its weights take in the engine's memory.
  get bytes() {
    this.checkAlive();
    return this.wasm.exports.rmt_model_bytes(this.ptr) >>> 0;
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

  // Calls begin(paramsPtr) with the search parameters and wraps the result.
  withParams(options, begin, nSentences) {
    const w = this.wasm;
    return this.engine.withParams(options, (paramsPtr) => {
      const tr = begin(paramsPtr);
      if (!tr) throw w.error();
      const translation = new Translation(this, tr, nSentences);
      this.translations.add(translation);
      return translation;
    });
  }

  // The most ids of text one sentence may have with these options (longer
  // text is split first: js/runner.js).
  maxSourceIds(options = {}) {
    this.checkAlive();
    return this.engine.withParams(options, (ptr) => this.wasm.exports.rmt_text_max_ids(this.ptr, ptr));
  }

  // Translates texts; returns per text its n-best list [{ text, score, hitMaxLength }].
  translateTexts(texts, options = {}) {
    const out = new Array(texts.length);
    decodeAll(texts, (text) => text.length, options, (batch) => this.beginText(batch, options), (tr, batch) => {
      tr.results(true).forEach((hyps, k) => { out[batch[k]] = hyps; });
    });
    return out;
  }

  // Translates sentences of ids; returns per sentence its n-best list
  // [{ ids, score, hitMaxLength }], best first.
  translateIds(sentences, options = {}) {
    const out = new Array(Array.isArray(sentences) ? sentences.length : 0);
    decodeAll(sentences, (ids) => ids.length, options, (batch) => this.begin(batch, options), (tr, batch) => {
      tr.results(false).forEach((hyps, k) => { out[batch[k]] = hyps; });
    });
    return out;
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

// UTF-16 index of each byte offset of `text`'s UTF-8 encoding (an offset
// inside a character maps to the character's start): the engine's spans are
// in bytes, JS strings count UTF-16 units.
function utf16Offsets(text, byteLength) {
  const at = new Int32Array(byteLength + 1);
  let byte = 0, unit = 0;
  for (const ch of text) {
    const bytes = ch.codePointAt(0) < 0x80 ? 1 : ch.codePointAt(0) < 0x800 ? 2 : ch.codePointAt(0) < 0x10000 ? 3 : 4;
    for (let k = 0; k < bytes && byte + k <= byteLength; k++) at[byte + k] = unit;
    byte += bytes;
    unit += ch.length;
  }
  if (byte <= byteLength) at[byteLength] = unit;
  return at;
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

  // fill(ptr) writes up to cap items of `width` int32 each and returns how many there are.
  readIds(fill, cap, width = 1) {
    const w = this.wasm;
    const ptr = w.malloc(Math.max(1, cap * width) * 4);
    try {
      const n = fill(ptr);
      if (n < 0) throw w.error();
      return Array.from(w.i32.subarray(ptr >> 2, (ptr >> 2) + Math.min(n, cap) * width));
    } finally {
      w.free(ptr);
    }
  }

  // What sentence s's translation is sure to start with (streaming: it never
  // takes back a token); the whole best translation once it is finished.
  stableText(s) {
    this.checkAlive();
    this.model.checkTokenizer();
    return this.wasm.readText((ptr, cap) => this.wasm.exports.rmt_translation_stable_text(this.ptr, this.model.spm, s, ptr, cap));
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

  // The alignment of hypothesis k of sentence s: per token, the position in
  // the sentence's source ids it was aligned to (-1: none). See
  // rmt_translation_hyp_alignment (src/translation.h).
  alignment(s, k = 0) {
    this.checkAlive();
    return this.readIds((ptr) => this.wasm.exports.rmt_translation_hyp_alignment(this.ptr, s, k, ptr, 1 << 16), 1 << 16);
  }

  // The alignment of hypothesis k of sentence s in text: per token,
  // { source: [start, end] of `text` (sentence s's text as given to
  // beginText) or null, target: [start, end] of the hypothesis's text },
  // in UTF-16 indices (JavaScript string positions).
  alignmentText(s, text, k = 0) {
    this.checkAlive();
    this.model.checkTokenizer();
    const w = this.wasm;
    const source = w.encoder.encode(text);
    const [textPtr, textLen] = w.copyString(source);
    let spans;
    try {
      const n = w.exports.rmt_translation_hyp(this.ptr, s, k, 0, 0, 0, 0);
      if (n < 0) throw w.error();
      spans = this.readIds((ptr) => w.exports.rmt_translation_hyp_alignment_text(this.ptr, this.model.spm, s, k, textPtr,
        textLen, ptr, n), n, 4);
    } finally {
      w.free(textPtr);
    }
    const hypText = w.readText((out, n) => w.exports.rmt_translation_hyp_text(this.ptr, this.model.spm, s, k, out, n));
    const fromSource = utf16Offsets(text, source.length);
    const fromTarget = utf16Offsets(hypText, w.encoder.encode(hypText).length);
    const out = [];
    for (let i = 0; i + 3 < spans.length; i += 4) {
      out.push({
        source: spans[i] < 0 ? null : [fromSource[spans[i]], fromSource[spans[i + 1]]],
        target: [fromTarget[spans[i + 2]], fromTarget[spans[i + 3]]],
      });
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

  // After forceStep: sentence s's last-layer encoder-attention weights,
  // averaged over the heads ([len + 1]).
  crossAttention(s) {
    this.checkAlive();
    const ptr = this.wasm.exports.rmt_translation_cross_attention(this.ptr, s);
    if (!ptr) throw this.wasm.error();
    const n = this.wasm.exports.rmt_translation_src_len(this.ptr, s);
    return this.wasm.f32.slice(ptr >> 2, (ptr >> 2) + n);
  }

  free() {
    if (this.ptr) this.wasm.exports.rmt_translation_free(this.ptr);
    this.ptr = 0;
    this.model.translations.delete(this);
  }
}
