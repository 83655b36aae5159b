// A thin object layer over the C API (src/rmt.h, src/translation.h,
// src/spm.h): models, translations stepped from JS (so callers can stream
// and cancel between steps), and C errors turned into thrown Errors. Search
// defaults, ranges and limits are the engine's: read from it, never repeated.

import { hexDigest } from '../load/cache.js';
import { timeStep } from '../util/env.js';
import { threadCount } from '../defaults.js';
import { decodeAll, textSpans } from './pipeline.js';
import { loadWasm } from './wasm.js';

// The batching policy is the text pipeline's; residual-mt/engine hands it on
// to callers that step translations themselves.
export { nextBatch, planBatches } from './pipeline.js';

const SHA256_BYTES = 32; // rmt_sha256_start's digest

const camelCase = (name) => name.replace(/_(.)/g, (_, c) => c.toUpperCase());

// Names the engine numbers (its search parameters, its limits): name(i) for
// i = 0, 1, ... until it returns NULL, each as { index, name, option: its camelCase }.
function namedFields(wasm, name) {
  const fields = [];
  for (let i = 0; ; i++) {
    const ptr = name(i);
    if (!ptr) return fields;
    const cName = wasm.readString(ptr);
    fields.push({ index: i, name: cName, option: camelCase(cName) });
  }
}

// The search parameters as the engine defines them (src/search_params.c): the
// JS option of each field is its C name in camelCase ("max_len_a" -> maxLenA);
// integer: whether it takes only integers.
function searchFields(wasm) {
  return namedFields(wasm, wasm.exports.rmt_search_param_name).map((field) =>
    ({ ...field, integer: wasm.exports.rmt_search_param_integer(field.index) === 1 }));
}

// The engine's limits (rmt_limit): { beam, translationBytes, len, jsonBytes, threads }.
function engineLimits(wasm) {
  return Object.freeze(Object.fromEntries(namedFields(wasm, wasm.exports.rmt_limit_name).map(({ index, option }) =>
    [option, wasm.exports.rmt_limit(index) >>> 0])));
}

export class Engine {
  constructor(wasm) {
    this.wasm = wasm;
    this.searchFields = searchFields(wasm);
    this.limits = engineLimits(wasm);
    // rmt_hyp_view's byte offset of each field (Translation.read).
    this.hypView = Object.freeze(Object.fromEntries(namedFields(wasm, wasm.exports.rmt_hyp_view_field).map(({ index, name }) =>
      [name, wasm.exports.rmt_hyp_view_offset(index)])));
    // The names of the verbatim spans' kinds and outcomes (src/verbatim.h), by number.
    this.spanKinds = namedFields(wasm, wasm.exports.rmt_verbatim_kind_name).map(({ name }) => name);
    this.spanHows = namedFields(wasm, wasm.exports.rmt_verbatim_how_name).map(({ name }) => name);
    this.defaults = Object.freeze(this.withParams({}, (ptr) => Object.fromEntries(this.searchFields.map(
      ({ index, option }) => [option, wasm.exports.rmt_search_param_get(ptr, index)]))));
  }

  // Calls use(ptr) with an rmt_search_params holding the engine's defaults
  // and `options` (fillParams).
  withParams(options, use) {
    const w = this.wasm;
    const ptr = w.malloc(w.exports.rmt_search_params_size());
    try {
      this.fillParams(ptr, this.paramValues(options));
      return use(ptr);
    } finally {
      w.free(ptr);
    }
  }

  // The value of each search field in `options` (beam, nbest, minLen,
  // maxLenA, maxLenB, lenpen, shortlist), in the engine's order: undefined
  // where not given, a boolean as 1 or 0 (shortlist: false), NaN for what is
  // not a number (which the engine refuses).
  paramValues(options) {
    return this.searchFields.map(({ option }) => {
      const given = options[option];
      return given === undefined ? undefined : typeof given === 'number' ? given : typeof given === 'boolean' ? Number(given) : NaN;
    });
  }

  // Writes the engine's defaults and `values` (paramValues) into the
  // rmt_search_params at ptr, each checked by the engine (a RangeError names
  // the option and its range).
  fillParams(ptr, values) {
    const w = this.wasm;
    w.exports.rmt_search_params_default(ptr);
    values.forEach((value, index) => {
      if (value !== undefined && w.exports.rmt_search_param_set(ptr, index, value) < 0) throw w.error();
    });
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
    // What the engine holds until the model takes it (freed here on a failure).
    const held = { weightsPtr: 0, digestPtr: 0, spmPtr: 0, modelPtr: 0, spmHandle: 0 };
    try {
      const weightsLength = this.#weightsIn(weights, steps, onWeights, held);
      let done = timeStep('model', steps);
      const load = int8 ? w.exports.rmt_model_load_quantized : w.exports.rmt_model_load;
      held.modelPtr = load(configPtr, configLen, held.weightsPtr, weightsLength);
      done();
      if (held.digestPtr) {
        done = timeStep('sha256 weights', steps); // what is left of it once the model is in
        w.exports.rmt_sha256_wait();
        done();
        onWeights({ sha256: hexDigest(w.u8.subarray(held.digestPtr, held.digestPtr + SHA256_BYTES)), size: weightsLength });
      }
      if (!held.modelPtr) throw w.error('cannot load the model: ');
      if (spm) this.#tokenizerIn(spm, steps, held);
      const model = new Model(this, held.modelPtr, held.spmHandle, JSON.parse(w.decoder.decode(configBytes)));
      held.modelPtr = held.spmHandle = 0;
      return model;
    } finally {
      if (held.digestPtr) w.exports.rmt_sha256_wait(); // it reads the weights until then
      w.free(held.digestPtr);
      w.free(configPtr);
      w.free(held.weightsPtr);
      w.free(held.spmPtr);
      if (held.modelPtr) w.exports.rmt_model_free(held.modelPtr);
      if (held.spmHandle) w.exports.rmt_spm_free(held.spmHandle);
    }
  }

  // The weights into the engine's memory (held.weightsPtr), read from their
  // file or copied; onWeights gets them now (a copy of a file's), or their
  // digest once the model is in (held.digestPtr: hashed by another of the
  // engine's threads meanwhile, where its pool has one). Returns their length.
  #weightsIn(weights, steps, onWeights, held) {
    const w = this.wasm;
    const file = typeof weights?.readInto === 'function' ? weights : null;
    const weightsBytes = file ? null : weights instanceof Uint8Array ? weights : new Uint8Array(weights);
    const length = file ? file.size : weightsBytes.length; // onWeights may move the bytes elsewhere
    let done;
    if (file) {
      done = timeStep('read weights', steps);
      held.weightsPtr = w.malloc(length);
      file.readInto(new Uint8Array(w.memory.buffer, held.weightsPtr, length));
      done();
    }
    // Hashed in the engine, no copy, where another thread can do it meanwhile
    // (its pool is sized: its threads are running or starting).
    if (file && onWeights && w.exports.rmt_threads_count() > 1) {
      held.digestPtr = w.malloc(SHA256_BYTES);
      w.exports.rmt_sha256_start(held.weightsPtr, length, held.digestPtr);
      return length;
    }
    done = timeStep('copy weights', steps);
    const copied = file ? (onWeights && w.u8.slice(held.weightsPtr, held.weightsPtr + length)) : weightsBytes;
    if (!file) held.weightsPtr = w.copyIn(weightsBytes);
    done();
    onWeights?.(copied);
    return length;
  }

  // The tokenizer (spm.model's bytes) into the engine (held.spmHandle).
  #tokenizerIn(spm, steps, held) {
    const w = this.wasm;
    const done = timeStep('spm', steps);
    const spmBytes = spm instanceof Uint8Array ? spm : new Uint8Array(spm);
    held.spmPtr = w.copyIn(spmBytes);
    held.spmHandle = w.exports.rmt_spm_load(held.spmPtr, spmBytes.length);
    done();
    if (!held.spmHandle) throw w.error('cannot load the tokenizer (spm.model): ');
  }
}

export class Model {
  constructor(engine, ptr, spm, config) {
    this.engine = engine;
    this.wasm = engine.wasm;
    this.ptr = ptr;
    this.spm = spm;
    this.config = config;
    this.translations = new Set(); // freed with the model, as are its sources
    this.sourceSets = new Set();
    this.paramsPtr = 0;    // one rmt_search_params, filled again only when the options change
    this.paramsKey = null;
    this.scratchPtr = 0;   // memory for what a call hands the engine or reads back, grown as needed
    this.scratchBytes = 0;
  }

  // The search parameters for `options`: one struct for the model, filled
  // again only when the options differ from the last call's (a translator's
  // stay the same from call to call).
  params(options) {
    const engine = this.engine;
    const values = engine.paramValues(options);
    const key = values.join();
    if (key === this.paramsKey) return this.paramsPtr;
    this.paramsPtr ||= this.wasm.malloc(this.wasm.exports.rmt_search_params_size());
    this.paramsKey = null; // until filled without error
    engine.fillParams(this.paramsPtr, values);
    this.paramsKey = key;
    return this.paramsPtr;
  }

  // A pointer to at least `bytes` bytes of the model's scratch memory (valid
  // until the next call that uses it).
  scratch(bytes) {
    if (bytes > this.scratchBytes) {
      const w = this.wasm;
      const size = Math.max(bytes, 2 * this.scratchBytes, 4096);
      const ptr = w.malloc(size);
      w.free(this.scratchPtr);
      this.scratchPtr = ptr;
      this.scratchBytes = size;
    }
    return this.scratchPtr;
  }

  // Text from a C call with snprintf's convention (fill(ptr, cap) returns the
  // full length, negative on error), written into the scratch memory.
  readText(fill) {
    const w = this.wasm;
    for (let cap = Math.max(this.scratchBytes, 256); ;) {
      const ptr = this.scratch(cap);
      const n = fill(ptr, cap);
      if (n < 0) throw w.error();
      if (n < cap) return w.readString(ptr, n);
      cap = n + 1;
    }
  }

  // UTF-8 `bytes` then `ints` (int32) in the scratch memory: [bytesPtr, intsPtr].
  stage(bytes, ints = []) {
    const intsAt = (bytes.length + 4) & ~3; // a NUL after the bytes, then aligned
    const ptr = this.scratch(intsAt + 4 * ints.length);
    const w = this.wasm;
    w.u8.set(bytes, ptr);
    w.u8[ptr + bytes.length] = 0;
    w.i32.set(ints, (ptr + intsAt) >> 2);
    return [ptr, ptr + intsAt];
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
    const params = this.params(options);
    const [, idsPtr] = this.stage(new Uint8Array(0), [...flat, ...lens]);
    const lensPtr = idsPtr + 4 * flat.length;
    return this.wrap(w.exports.rmt_translation_begin(this.ptr, idsPtr, lensPtr, sentences.length, params), sentences.length);
  }

  // Sentences to tokenize once, translated later by beginSources (Sources).
  sources() {
    this.checkTokenizer();
    const ptr = this.wasm.exports.rmt_sources_new(this.ptr, this.spm);
    if (!ptr) throw this.wasm.error();
    const sources = new Sources(this, ptr);
    this.sourceSets.add(sources);
    return sources;
  }

  // Starts a step-wise translation of the sentences numbered `which` in
  // `sources`, as beginText of their texts would.
  beginSources(sources, which, options = {}) {
    sources.checkAlive();
    if (!Array.isArray(which) || which.length === 0) throw new Error('residual-mt: empty input: no texts');
    if (!which.every(Number.isInteger)) throw new TypeError('residual-mt: sentences are numbered by integers');
    const w = this.wasm;
    const params = this.params(options);
    const [langPtr, whichPtr] = this.stage(w.encoder.encode(options.targetLanguage ?? ''), which);
    return this.wrap(w.exports.rmt_translation_begin_sources(sources.ptr, whichPtr, which.length, langPtr, params), which.length);
  }

  // The number of source ids (as sourceIds gives them) of each text, in one call.
  countIds(texts) {
    this.checkTokenizer();
    const w = this.wasm;
    const encoded = texts.map((text) => w.encoder.encode(text));
    const joined = new Uint8Array(encoded.reduce((n, e) => n + e.length, 0));
    encoded.reduce((offset, e) => { joined.set(e, offset); return offset + e.length; }, 0);
    const lens = encoded.map((e) => e.length);
    const [textPtr, lensPtr] = this.stage(joined, [...lens, ...lens]); // the second copy: room for the counts
    const countsPtr = lensPtr + 4 * lens.length;
    if (w.exports.rmt_text_count(this.ptr, this.spm, textPtr, lensPtr, texts.length, countsPtr) < 0) throw w.error();
    return Array.from(w.i32.subarray(countsPtr >> 2, (countsPtr >> 2) + texts.length));
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
    const params = this.params(options);
    const lang = w.encoder.encode(options.targetLanguage ?? '');
    const langAt = (joined.length + 4) & ~3;
    const all = new Uint8Array(langAt + lang.length);
    all.set(joined);
    all.set(lang, langAt);
    const [textPtr, lensPtr] = this.stage(all, encoded.map((e) => e.length));
    return this.wrap(w.exports.rmt_translation_begin_text(this.ptr, this.spm, textPtr, lensPtr, texts.length,
      textPtr + langAt, params), texts.length);
  }

  // The Translation of tr (null: the engine's error).
  wrap(tr, nSentences) {
    if (!tr) throw this.wasm.error();
    const translation = new Translation(this, tr, nSentences);
    this.translations.add(translation);
    return translation;
  }

  // The most ids of text one sentence may have with these options (longer
  // text is split first: js/engine/pipeline.js).
  maxSourceIds(options = {}) {
    this.checkAlive();
    return this.wasm.exports.rmt_text_max_ids(this.ptr, this.params(options));
  }

  // Translates texts; returns per text its n-best list [{ text, score, hitMaxLength }].
  translateTexts(texts, options = {}) {
    return decodeAll(texts, (text) => text.length, this.batching(options), (batch) => this.beginText(batch, options),
      (tr) => tr.results(true));
  }

  // Translates sentences of ids; returns per sentence its n-best list
  // [{ ids, score, hitMaxLength }], best first.
  translateIds(sentences, options = {}) {
    return decodeAll(sentences, (ids) => ids.length, this.batching(options), (batch) => this.begin(batch, options),
      (tr) => tr.results(false));
  }

  // What the batching policy reads of `options`: the beam (the engine's
  // default when not given) and the batch size.
  batching(options) {
    return { beam: options.beam ?? this.engine.defaults.beam, batch: options.batch };
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

  // SentencePiece gives at most one id per byte, plus one for the dummy
  // prefix: room for them after the text, in one call.
  encode(text, encodeInto) {
    this.checkTokenizer();
    const w = this.wasm;
    const bytes = w.encoder.encode(text);
    const cap = bytes.length + 8;
    const [textPtr, idsPtr] = this.stage(bytes, new Int32Array(cap));
    const n = encodeInto(textPtr, bytes.length, idsPtr, cap);
    if (n < 0) throw w.error();
    if (n > cap) throw new Error(`residual-mt: the tokenizer gave ${n} ids for ${bytes.length} bytes (a bug: please report it)`);
    return Array.from(w.i32.subarray(idsPtr >> 2, (idsPtr >> 2) + n));
  }

  detokenize(ids) {
    this.checkTokenizer();
    const w = this.wasm;
    // The ids in their own allocation: readText's scratch is the text's.
    const idsPtr = w.copyInt32(ids.length ? ids : [0]);
    try {
      return this.readText((out, cap) => w.exports.rmt_spm_decode(this.spm, idsPtr, ids.length, out, cap));
    } finally {
      w.free(idsPtr);
    }
  }

  pieceToId(piece) {
    this.checkTokenizer();
    const [ptr] = this.stage(this.wasm.encoder.encode(piece));
    return this.wasm.exports.rmt_spm_piece_to_id(this.spm, ptr);
  }

  dispose() {
    if (!this.ptr) return;
    for (const translation of this.translations) translation.free();
    for (const sources of this.sourceSets) sources.free();
    const w = this.wasm;
    w.free(this.paramsPtr);
    w.free(this.scratchPtr);
    this.paramsPtr = this.scratchPtr = this.scratchBytes = 0;
    this.paramsKey = null;
    w.exports.rmt_model_free(this.ptr);
    if (this.spm) w.exports.rmt_spm_free(this.spm);
    this.ptr = 0;
    this.spm = 0;
  }
}

// Sentences tokenized once (src/sources.c): add(text) tokenizes one and
// returns its number of ids; Model.beginSources translates any of them by
// their numbers (in the order added, from 0).
export class Sources {
  constructor(model, ptr) {
    this.model = model;
    this.ptr = ptr;
    this.count = 0;
  }

  checkAlive() {
    if (!this.ptr) throw new Error('residual-mt: the sources have been freed');
    this.model.checkAlive();
  }

  // Sentence `text` tokenized and kept as number this.count - 1; its number of ids.
  add(text) {
    this.checkAlive();
    const w = this.model.wasm;
    const bytes = w.encoder.encode(text);
    const [ptr] = this.model.stage(bytes);
    const n = w.exports.rmt_sources_add(this.ptr, ptr, bytes.length);
    if (n < 0) throw w.error();
    this.count++;
    return n;
  }

  free() {
    if (this.ptr) this.model.wasm.exports.rmt_sources_free(this.ptr);
    this.ptr = 0;
    this.model.sourceSets.delete(this);
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

  // fill(ptr, cap) writes up to cap items of `width` int32 each and returns
  // how many there are: asked once for the count (unless given: n), once for the items.
  readIds(fill, width = 1, n = fill(0, 0)) {
    const w = this.wasm;
    if (n < 0) throw w.error();
    const ptr = this.model.scratch(Math.max(1, n * width) * 4);
    if (fill(ptr, n) < 0) throw w.error();
    return Array.from(w.i32.subarray(ptr >> 2, (ptr >> 2) + n * width));
  }

  // What sentence s's translation is sure to start with (streaming: it never
  // takes back a token); the whole best translation once it is finished.
  stableText(s) {
    this.checkAlive();
    this.model.checkTokenizer();
    return this.model.readText((ptr, cap) => this.wasm.exports.rmt_translation_stable_text(this.ptr, this.model.spm, s, ptr, cap));
  }

  partial(s) {
    this.checkAlive();
    return this.readIds((ptr, cap) => this.wasm.exports.rmt_translation_partial(this.ptr, s, ptr, cap));
  }

  // Hypothesis k of sentence s in one call (rmt_translation_read): { ids,
  // score, hitMaxLength }, with text its text, with spans its alignment in
  // text (raw: per token [source begin, end, target begin, end] in bytes).
  read(s, k, { text = false, spans = false } = {}) {
    const w = this.wasm;
    const view = w.exports.rmt_translation_read(this.ptr, this.model.spm, s, k, text ? 1 : 0, spans ? 1 : 0) >>> 0;
    if (!view) throw w.error();
    const at = this.model.engine.hypView;
    const i32 = w.i32, int = (field) => i32[(view + at[field]) >>> 2];
    const n = int('n_ids'), ids = int('ids') >>> 2;
    const hyp = { ids: Array.from(i32.subarray(ids, ids + n)), score: w.f32[(view + at.score) >>> 2], hitMaxLength: int('hit_max_len') !== 0 };
    if (text) hyp.text = w.readString(int('text') >>> 0, int('text_len'));
    if (spans) hyp.spans = i32.slice(int('spans') >>> 2, (int('spans') >>> 2) + 4 * n);
    return hyp;
  }

  // The verbatim spans of sentence s (src/verbatim.h: URLs, numbers, codes
  // ... given back byte for byte) and what became of each in hypothesis k:
  // [{ kind, source: [begin, end] bytes of the sentence's text, target:
  // [from, to] bytes of the hypothesis's text, how: 'kept', 'replaced' or
  // 'inserted' }]. A translation begun from text only.
  verbatim(s, k = 0) {
    this.checkAlive();
    this.model.checkTokenizer();
    const { spanKinds, spanHows } = this.model.engine;
    const raw = this.readIds((ptr, cap) => this.wasm.exports.rmt_translation_verbatim(this.ptr, this.model.spm, s, k, ptr, cap), 6);
    const out = [];
    for (let i = 0; i + 5 < raw.length; i += 6) {
      out.push({ kind: spanKinds[raw[i + 2]], source: [raw[i], raw[i + 1]], target: [raw[i + 3], raw[i + 4]], how: spanHows[raw[i + 5]] });
    }
    return out;
  }

  // Per sentence, its n-best list [{ ids, score, hitMaxLength }] (and text
  // when withText, decoded by the model's tokenizer; and with withSpans,
  // the best hypothesis's spans: read()'s, and its verbatim spans when
  // withText: verbatim()'s). A sentence whose every
  // hypothesis scored NaN or -inf (broken weights) has an empty list.
  results(withText = false, withSpans = false) {
    this.checkAlive();
    const w = this.wasm;
    if (withText) this.model.checkTokenizer();
    const out = [];
    for (let s = 0; s < this.nSentences; s++) {
      const n = w.exports.rmt_translation_n_hyps(this.ptr, s);
      if (n < 0) throw w.error();
      const list = Array.from({ length: n }, (_, k) => this.read(s, k, { text: withText, spans: withSpans && k === 0 }));
      if (withText && withSpans && n) list[0].verbatim = this.verbatim(s, 0);
      out.push(list);
    }
    return out;
  }

  // The alignment of hypothesis k of sentence s: per token, the position in
  // the sentence's source ids it was aligned to (-1: none). See
  // rmt_translation_hyp_alignment (src/translation.h).
  alignment(s, k = 0) {
    this.checkAlive();
    return this.readIds((ptr, cap) => this.wasm.exports.rmt_translation_hyp_alignment(this.ptr, s, k, ptr, cap));
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
    const textPtr = w.copyIn(source.length ? source : new Uint8Array(1)); // its own: readIds uses the scratch
    let spans;
    try {
      const n = w.exports.rmt_translation_hyp(this.ptr, s, k, 0, 0, 0, 0);
      if (n < 0) throw w.error();
      spans = this.readIds((ptr, cap) => w.exports.rmt_translation_hyp_alignment_text(this.ptr, this.model.spm, s, k, textPtr,
        source.length, ptr, cap), 4, n);
    } finally {
      w.free(textPtr);
    }
    const hypText = this.model.readText((out, n) => w.exports.rmt_translation_hyp_text(this.ptr, this.model.spm, s, k, out, n));
    return textSpans(spans, text, hypText);
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
