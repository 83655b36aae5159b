// Marian models (Firefox Translations, OPUS-MT) converted in memory into a
// residual-mt model directory (config.json, model.safetensors, spm.model):
// the same mapping as models/convert_marian.py, written to the byte as it
// writes them (tests/marian-js.test.js converts every model shape both ways),
// so that a page needs no Python. Reading the files: marian-files.js and
// marian-vocab.js; downloading, checking and caching them: marian-load.js.
//
// special:model.yml is read with js-yaml (a dependency, imported only here,
// when a Marian model is converted), every scalar a string (its failsafe
// schema), as PyYAML's BaseLoader reads it in Python.

import { MAX_MODEL_BYTES } from '../defaults.js';
import { TYPE_FLOAT32, TYPE_INTGEMM8, conversionError, readBin, readNpz, readShortlist, typeName } from './files.js';
import { concat } from '../load/bounded.js';
import { mergedSpm, readVocabYml, spmSpecialIds } from './vocab.js';

let jsYaml = null;
async function yamlParser() {
  try {
    jsYaml ??= await import('js-yaml');
    return jsYaml;
  } catch (err) {
    throw conversionError('a Marian model needs the js-yaml package to read its model.yml: npm install js-yaml ' +
      `(a page without a bundler maps "js-yaml" to js-yaml/dist/js-yaml.mjs in its import map): ${err.message}`);
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// special:model.yml: a mapping of options to a string or a list of strings.
export async function parseYml(text) {
  const { load, FAILSAFE_SCHEMA } = await yamlParser();
  let doc;
  try {
    doc = load(text, { schema: FAILSAFE_SCHEMA });
  } catch (err) {
    throw conversionError(`special:model.yml is not YAML: ${err.message.split(/\s+/).join(' ')}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw conversionError('special:model.yml is not a mapping of options');
  return doc;
}

// A config value as the messages name it: 'text', [a, b].
function shown(value) {
  if (Array.isArray(value)) return `[${value.map((v) => (typeof v === 'string' ? v : shown(v))).join(', ')}]`;
  if (value && typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${k}: ${shown(v)}`).join(', ')}}`;
  return `'${value}'`;
}

const unsupported = (key, value, why = '') => conversionError(`unsupported model: ${key} is ${shown(value)}${why ? ` (${why})` : ''}`);
const NULL_WORDS = ['~', 'null', 'Null', 'NULL']; // YAML's null: the option is unset
const has = (yml, key) => Object.hasOwn(yml, key) && yml[key] !== null && !NULL_WORDS.includes(yml[key]);

function scalar(yml, key, fallback) {
  if (!has(yml, key)) return fallback;
  if (typeof yml[key] !== 'string') throw unsupported(key, yml[key], 'expected one value');
  return yml[key];
}

// The spellings of true and false yaml-cpp's as<bool>() accepts.
const TRUE_WORDS = ['true', 'yes', 'on', 'y'], FALSE_WORDS = ['false', 'no', 'off', 'n'];
const capitalized = (s) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();

function flag(yml, key, fallback = false) {
  const value = scalar(yml, key, null);
  if (value === null) return fallback;
  if ([value.toLowerCase(), value.toUpperCase(), capitalized(value)].includes(value)) {
    if (TRUE_WORDS.includes(value.toLowerCase())) return true;
    if (FALSE_WORDS.includes(value.toLowerCase())) return false;
  }
  throw conversionError(`special:model.yml: ${key} is ${shown(value)}, not true or false`);
}

function integer(yml, key, fallback) {
  const value = scalar(yml, key, null);
  if (value === null) return fallback;
  if (!/^[-+]?[0-9]+$/.test(value)) throw conversionError(`special:model.yml: ${key} is ${shown(value)}, not an integer`);
  return Number(value);
}

// What special:model.yml says the engine computes; refuses, naming the
// option and its value, what the engine does not compute as Marian does.
export function architecture(yml) {
  const need = (key, allowed, fallback) => {
    const value = scalar(yml, key, fallback);
    if (!allowed.includes(value)) throw unsupported(key, value, `supported: ${allowed.map(shown).join(', ')}`);
    return value;
  };
  need('type', ['transformer'], 'transformer');
  need('transformer-preprocess', [''], '');
  need('transformer-postprocess', ['dan'], 'dan');
  need('transformer-postprocess-emb', ['d', ''], 'd');
  need('transformer-postprocess-top', [''], '');
  need('transformer-ffn-depth', ['2'], '2');
  need('transformer-decoder-ffn-depth', ['0', '2'], '0');
  const activation = need('transformer-ffn-activation', ['relu', 'swish'], 'swish');
  const autoreg = need('transformer-decoder-autoreg', ['self-attention', 'rnn'], 'self-attention');
  if (autoreg === 'rnn') {
    need('dec-cell', ['ssru'], 'ssru');
    if (flag(yml, 'layer-normalization')) throw unsupported('layer-normalization', yml['layer-normalization'], 'inside the SSRU cell');
  }
  for (const key of ['transformer-train-position-embeddings', 'transformer-no-projection', 'transformer-pool',
    'output-omit-bias', 'ulr', 'right-left']) {
    if (flag(yml, key)) throw unsupported(key, yml[key]);
  }
  const tied = yml['transformer-tied-layers'];
  if (has(yml, 'transformer-tied-layers') && tied !== '' && !(Array.isArray(tied) && !tied.length)) {
    throw unsupported('transformer-tied-layers', tied, 'layers that share weights; [] (none) is supported');
  }
  if (integer(yml, 'lemma-dim-emb', 0) !== 0) throw unsupported('lemma-dim-emb', yml['lemma-dim-emb'], 'a factored vocabulary');
  const ffn = integer(yml, 'transformer-dim-ffn', 2048), decoderFfn = integer(yml, 'transformer-decoder-dim-ffn', 0);
  if (decoderFfn !== 0 && decoderFfn !== ffn) {
    throw unsupported('transformer-decoder-dim-ffn', yml['transformer-decoder-dim-ffn'], `the decoder's FFN must be transformer-dim-ffn's ${ffn}`);
  }
  return {
    heads: integer(yml, 'transformer-heads', 8), ffn, enc_depth: integer(yml, 'enc-depth', 6),
    dec_depth: integer(yml, 'dec-depth', 6), activation, ssru: autoreg === 'rnn',
    tied_all: flag(yml, 'tied-embeddings-all'), tied: flag(yml, 'tied-embeddings'), tied_src: flag(yml, 'tied-embeddings-src'),
  };
}

// ---- weights

const elements = (shape) => shape.reduce((a, b) => a * b, 1);

function transpose(values, rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c];
  return out;
}

// An intgemm8 weight kept as int8: { q, scale } (value = q * scale, scale = 1 / Marian's multiplier).
function int8Weights(item) {
  const n = elements(item.shape);
  if (item.data.length < n + 4) throw conversionError(`${item.name}: ${item.data.length} bytes for ${n} int8 values and their multiplier`);
  const mult = new DataView(item.data.buffer, item.data.byteOffset + n, 4).getFloat32(0, true);
  if (!(mult > 0 && Number.isFinite(mult))) throw conversionError(`${item.name}: quantisation multiplier ${mult} is not a positive number`);
  return { q: new Int8Array(item.data.slice(0, n).buffer), scale: Math.fround(1 / mult) };
}

// The item's values as float32, row-major in its Marian shape (intgemm8
// weights, not embeddings, are stored transposed).
function f32Values(item) {
  const n = elements(item.shape);
  if (item.type === TYPE_FLOAT32) {
    if (item.data.length < 4 * n) throw conversionError(`${item.name}: ${item.data.length} bytes for ${n} float32 values`);
    return new Float32Array(item.data.slice(0, 4 * n).buffer);
  }
  if (item.type === TYPE_INTGEMM8) {
    const w = int8Weights(item), values = Float32Array.from(w.q, (v) => v * w.scale);
    if (item.shape.length === 2 && !item.name.includes('Wemb')) return transpose(values, item.shape[1], item.shape[0]);
    return values;
  }
  throw conversionError(`${item.name} is ${typeName(item.type)}: float32 and intgemm8 weights are supported`);
}

// The model's parameters by our names: [name, shape, values] in the order
// convert_marian.py puts them (the order of model.safetensors).
function mapTensors(items, arch, { V, D, dtype, shortlist }) {
  const used = new Set(), tensors = [], F = arch.ffn;
  const item = (name) => {
    if (!items.has(name)) throw conversionError(`missing parameter ${name}`);
    used.add(name);
    return items.get(name);
  };
  const checked = (name, shape) => {
    const it = item(name), same = (s) => s.length === it.shape.length && s.every((d, i) => d === it.shape[i]);
    if (elements(it.shape) !== elements(shape) || (it.shape.length === 2 && !same(shape) && !same([1, shape.at(-1)]))) {
      throw conversionError(`${name} has shape [${it.shape.join(', ')}], expected [${shape.join(', ')}]`);
    }
    return it;
  };
  const kept = (it) => dtype === 'auto' && it.type === TYPE_INTGEMM8;
  const put = (name, values, shape) => tensors.push([name, shape, values]);
  const values = (name, shape) => f32Values(checked(name, shape));
  const embedding = (name) => {
    const it = checked(name, [V, D]);
    return kept(it) ? int8Weights(it) : f32Values(it);
  };
  // Marian: x W with W (in, out); ours (out, in), which is how intgemm8 stores it.
  const linear = (name, nIn, nOut) => {
    const it = checked(name, [nIn, nOut]);
    return kept(it) ? int8Weights(it) : transpose(f32Values(it), nIn, nOut);
  };
  const norm = (ours, marian) => {
    put(`${ours}.weight`, values(`${marian}_ln_scale`, [1, D]), [D]);
    put(`${ours}.bias`, values(`${marian}_ln_bias`, [1, D]), [D]);
  };
  const attention = (ours, marian) => {
    for (const [o, m] of [['q_proj', 'q'], ['k_proj', 'k'], ['v_proj', 'v'], ['out_proj', 'o']]) {
      put(`${ours}.${o}.weight`, linear(`${marian}_W${m}`, D, D), [D, D]);
      put(`${ours}.${o}.bias`, values(`${marian}_b${m}`, [1, D]), [D]);
    }
  };
  const ffn = (ours, marian) => {
    put(`${ours}.fc1.weight`, linear(`${marian}_W1`, D, F), [F, D]);
    put(`${ours}.fc1.bias`, values(`${marian}_b1`, [1, F]), [F]);
    put(`${ours}.fc2.weight`, linear(`${marian}_W2`, F, D), [D, F]);
    put(`${ours}.fc2.bias`, values(`${marian}_b2`, [1, D]), [D]);
    norm(`${ours}.final_layer_norm`, `${marian}_ffn`);
  };
  mapEmbeddings(items, arch, { put, embedding, linear, values, V, D });
  for (let i = 0; i < arch.enc_depth; i++) {
    const p = `encoder.layers.${i}`, m = `encoder_l${i + 1}`;
    attention(`${p}.self_attn`, `${m}_self`);
    norm(`${p}.self_attn_layer_norm`, `${m}_self_Wo`);
    ffn(p, `${m}_ffn`);
  }
  for (let i = 0; i < arch.dec_depth; i++) {
    const p = `decoder.layers.${i}`, m = `decoder_l${i + 1}`;
    if (arch.ssru) {
      put(`${p}.ssru.in_proj.weight`, linear(`${m}_rnn_W`, D, D), [D, D]);
      put(`${p}.ssru.forget_proj.weight`, linear(`${m}_rnn_Wf`, D, D), [D, D]);
      put(`${p}.ssru.forget_proj.bias`, values(`${m}_rnn_bf`, [1, D]), [D]);
      norm(`${p}.ssru_layer_norm`, `${m}_rnn_ffn`);
    } else {
      attention(`${p}.self_attn`, `${m}_self`);
      norm(`${p}.self_attn_layer_norm`, `${m}_self_Wo`);
    }
    attention(`${p}.encoder_attn`, `${m}_context`);
    norm(`${p}.encoder_attn_layer_norm`, `${m}_context_Wo`);
    ffn(p, `${m}_ffn`);
  }
  if (shortlist) {
    put('shortlist.offsets', shortlist.offsets, [V + 1]);
    put('shortlist.targets', shortlist.targets, [shortlist.targets.length]);
  }
  checkAllUsed(items, used);
  return tensors;
}

// The embeddings and the output layer (tied as the options say).
function mapEmbeddings(items, arch, { put, embedding, linear, values, V, D }) {
  const embName = arch.tied_all || arch.tied_src ? 'Wemb' : 'encoder_Wemb';
  put('encoder.embed_tokens.weight', embedding(embName), [V, D]);
  if (!arch.tied_all && items.has('decoder_Wemb') && items.get('decoder_Wemb').shape[0] !== V) {
    throw conversionError(`unsupported model: separate source and target vocabularies (${V} and ` +
      `${items.get('decoder_Wemb').shape[0]} entries); one vocabulary serves both sides`);
  }
  if (!arch.tied_all) {
    const dec = embedding('decoder_Wemb');
    put('decoder.embed_tokens.weight', dec, [V, D]);
    put('decoder.output_projection.weight', arch.tied ? dec : linear('decoder_ff_logit_out_W', D, V), [V, D]);
  } else if (items.has('decoder_ff_logit_out_W')) {
    throw conversionError('unsupported model: tied-embeddings-all with an output matrix of its own');
  }
  put('decoder.output_projection.bias', values('decoder_ff_logit_out_b', [1, V]), [V]);
}

// Activation-quantisation scales of int8 models (Bergamot's "alphas") serve
// only Marian's int8 arithmetic; any other parameter left over is refused.
function checkAllUsed(items, used) {
  const leftover = [...items.keys()].filter((n) => !used.has(n) && !n.endsWith('_QuantMultA')).sort();
  if (leftover.length) {
    throw conversionError(`unsupported model: parameters this converter does not know: ${leftover.slice(0, 8).join(', ')}` +
      (leftover.length > 8 ? ' ...' : ''));
  }
}

// model.safetensors: index tables as I32, kept intgemm8 weights as I8 with
// their scale ("<name>.qscale"), other weights as F32; I32 first, I8 last,
// so that every offset stays aligned.
export function safetensors(tensors) {
  const entries = []; // [order, name, dtype, shape, blob]
  const bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  for (const [name, shape, values] of tensors) {
    if (values.q) {
      entries.push([2, name, 'I8', shape, bytes(values.q)]);
      entries.push([1, `${name}.qscale`, 'F32', [1], bytes(Float32Array.of(values.scale))]);
    } else if (values instanceof Int32Array) entries.push([0, name, 'I32', shape, bytes(values)]);
    else entries.push([1, name, 'F32', shape, bytes(values)]);
  }
  entries.sort((a, b) => a[0] - b[0]);
  const header = {};
  let offset = 0;
  for (const [, name, dtype, shape, blob] of entries) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + blob.length] };
    offset += blob.length;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8); // data 8-byte aligned
  const head = new Uint8Array(8 + text.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(text.length), true);
  head.set(new TextEncoder().encode(text), 8);
  return concat([head, ...entries.map((e) => e[4])]);
}

// A Uint8Array itself (a Node Buffer's slice() is a view, not a copy).
const plainBytes = (b) => (b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength));

// The model's items (.npz or .bin) and its options from special:model.yml.
async function readModel(bytes, maxBytes) {
  const items = bytes[0] === 0x50 && bytes[1] === 0x4b ? await readNpz(bytes, { maxBytes }) : readBin(bytes);
  const yml = items.get('special:model.yml');
  if (!yml) throw conversionError('the model has no special:model.yml (not a Marian model, or saved without its config)');
  items.delete('special:model.yml');
  const end = yml.data.indexOf(0);
  let text;
  try {
    text = strictUtf8.decode(end < 0 ? yml.data : yml.data.subarray(0, end));
  } catch {
    throw conversionError('special:model.yml is not UTF-8');
  }
  return { items, yml: await parseYml(text) };
}

// The vocabulary as one spm: the spm itself, or (OPUS-MT) an spm made from
// vocab.yml with sourceSpm (and targetSpm).
function vocabulary({ vocab, targetVocab, sourceSpm, targetSpm }) {
  if (targetVocab && (targetVocab.length !== vocab.length || targetVocab.some((b, i) => b !== vocab[i]))) {
    throw conversionError('unsupported model: separate source and target vocabularies (one spm.model is used)');
  }
  if (!sourceSpm) {
    if (targetSpm) throw conversionError('targetSpm goes with a vocab.yml and its sourceSpm');
    return vocab;
  }
  let text;
  try {
    text = strictUtf8.decode(vocab);
  } catch {
    throw conversionError('vocab.yml is not UTF-8');
  }
  return mergedSpm(readVocabYml(text), sourceSpm, targetSpm ?? null);
}

// Converts a Marian model given as bytes (decompressed): files { model, vocab,
// shortlist?, sourceSpm?, targetSpm?, targetVocab? }; options { file (the
// model's file name, for config.json's converted_from), sourceLanguage,
// targetLanguage, maxPositions (512), dtype ('auto': intgemm8 weights stay
// int8; 'f32'), maxBytes (an .npz's arrays inflate to at most this many bytes:
// MAX_MODEL_BYTES) }. Returns { config (config.json's text), weights, spm }.
export async function convertMarian(files, { file = 'model.bin', sourceLanguage, targetLanguage, maxPositions = 512, dtype = 'auto',
  maxBytes = MAX_MODEL_BYTES } = {}) {
  if (dtype !== 'auto' && dtype !== 'f32') throw new TypeError(`residual-mt: dtype must be 'auto' or 'f32', got ${dtype}`);
  if (!(Number.isInteger(maxPositions) && maxPositions >= 2 && maxPositions <= 65536)) {
    throw new RangeError('residual-mt: maxPositions must be an integer in [2, 65536]');
  }
  files = Object.fromEntries(Object.entries(files).filter(([, b]) => b).map(([k, b]) => [k, plainBytes(b)]));
  const { items, yml } = await readModel(files.model, maxBytes);
  const arch = architecture(yml);
  if ([...items.keys()].some((n) => n.startsWith('encoder2_') || n.includes('_enc2'))) {
    throw conversionError('unsupported model: more than one encoder');
  }
  const spm = vocabulary(files);
  const { eos, unk, size } = spmSpecialIds(spm);
  const emb = items.get(arch.tied_all || arch.tied_src ? 'Wemb' : 'encoder_Wemb');
  if (!emb) throw conversionError(`missing parameter ${arch.tied_all || arch.tied_src ? 'Wemb' : 'encoder_Wemb'}`);
  const [V, D] = emb.shape;
  if (V !== size) {
    throw conversionError(`the vocabulary has ${size} pieces but the model's embedding has ${V} rows ` +
      '(an OPUS-MT model\'s ids come from its vocab.yml: vocab: the vocab.yml, sourceSpm, targetSpm)');
  }
  if (D % arch.heads) throw conversionError(`dim-emb ${D} is not divisible by transformer-heads ${arch.heads}`);
  const shortlist = files.shortlist ? readShortlist(files.shortlist, V) : null;
  const tensors = mapTensors(items, arch, { V, D, dtype, shortlist });
  const config = {
    format: 'residual-mt/1', style: 'post', d_model: D, ffn_dim: arch.ffn, n_heads: arch.heads,
    encoder_layers: arch.enc_depth, decoder_layers: arch.dec_depth, vocab_size: V, max_positions: maxPositions,
    bos_id: null, pad_id: null, eos_id: eos, unk_id: unk, activation: arch.activation, ln_eps: 1e-6,
    share_embeddings: arch.tied_all, output_bias: true, positions: 'marian', decoder_start: 'zeros',
    decoder_self: arch.ssru ? 'ssru' : 'attention', search: 'marian', shortlist_first: shortlist?.first ?? null,
    converted_from: { format: 'marian', file },
  };
  if (sourceLanguage && targetLanguage) config.languages = { source: [sourceLanguage], target: [targetLanguage] };
  return { config: `${JSON.stringify(config, null, 2)}\n`, weights: safetensors(tensors), spm };
}
