// Random-weight Marian models, written the way Marian writes them, and
// Bergamot's own WASM build (the npm package @browsermt/bergamot-translator)
// to translate with them: the parity tests' reference is Marian itself.
//
// Formats, as read in Marian's sources (browsermt/marian-dev):
// - .bin (src/common/binary.cpp): u64 version 1, u64 count, count headers of
//   four u64 (name length with its NUL, type, shape length, data length), the
//   names, the shapes (i32), a u64 pad count and pad to a 256-byte boundary,
//   then the data of each item in order.
// - .npz: a zip of .npy arrays; the architecture travels as the int8 array
//   "special:model.yml" (YAML text) in both.
// Parameter names and shapes follow Marian's transformer (src/models/transformer.h):
// weights are [in, out] (Marian computes x W + b), biases and LN parameters [1, out].
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';

const CONVERT = new URL('../../models/convert_marian.py', import.meta.url).pathname;
// Debian's Python, with Debian's python3-yaml (scripts/dev-deps.sh), as tests/python.test.js runs it.
export const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

// Runs models/convert_marian.py; the spawnSync result (status, stderr).
export function convertMarian(modelPath, vocabPath, out, extra = []) {
  return spawnSync(PYTHON, [CONVERT, '--model', modelPath, '--vocab', vocabPath, '--out', out, ...extra], { encoding: 'utf8' });
}

// A converted model directory's files, as an Engine (js/engine/binding.js) loads
// them; loadConverted loads them into one.
export function convertedFiles(dir) {
  return {
    config: readFileSync(join(dir, 'config.json'), 'utf8'),
    weights: readFileSync(join(dir, 'model.safetensors')),
    spm: readFileSync(join(dir, 'spm.model')),
  };
}

export const loadConverted = (engine, dir) => engine.loadModel(convertedFiles(dir));

export const TYPE_INT8 = 0x0101;
export const TYPE_FLOAT32 = 0x0404;
export const TYPE_INTGEMM8 = 0x4101;

// The shapes of the Marian models people have (mozilla/translations'
// pipeline/train/configs/model/student.*.yml; OPUS-MT's Transformer-base), as
// randomMarianModel options; every student has an SSRU decoder, ReLU and tied
// embeddings, OPUS-MT a self-attention decoder and swish.
const STUDENT = { heads: 8, encDepth: 6, decoder: 'ssru', activation: 'relu', tied: 'all' };
export const MARIAN_SHAPES = Object.freeze({
  tiny: { ...STUDENT, dim: 256, ffn: 1536, decDepth: 2 },
  base: { ...STUDENT, dim: 512, ffn: 2048, decDepth: 2 },
  'base-memory': { ...STUDENT, dim: 384, ffn: 1536, decDepth: 4 },
  'opus-mt': { heads: 8, encDepth: 6, decDepth: 6, decoder: 'self-attention', activation: 'swish', tied: 'all', dim: 512, ffn: 2048 },
});

// A small seeded generator (mulberry32): the same model on every run.
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The items of a random Marian transformer: { name, shape, values } in
// Marian's names, plus the YAML text that describes it. Options:
// dim (dim-emb), ffn, heads, encDepth, decDepth, vocab, activation
// ('relu' | 'swish'), decoder ('self-attention' | 'ssru'), tied ('all' |
// 'target' | 'none': tied-embeddings-all, tied-embeddings with separate
// encoder/decoder embeddings, or an output matrix of its own), seed, yml
// (the form of special:model.yml: marianYml).
export function randomMarianModel(opts) {
  const o = { dim: 32, ffn: 64, heads: 4, encDepth: 2, decDepth: 2, vocab: 150, activation: 'relu',
    decoder: 'self-attention', tied: 'all', seed: 1, ...opts };
  const rand = random(o.seed);
  const items = [];
  const uniform = (shape, scale, offset = 0) => {
    const n = shape.reduce((a, b) => a * b, 1), values = new Float32Array(n);
    for (let i = 0; i < n; i++) values[i] = offset + (rand() * 2 - 1) * scale;
    return values;
  };
  // Glorot-uniform weights as Marian initialises them, with biases and LN
  // parameters off their defaults so that every parameter counts.
  const weight = (name, rows, cols) => items.push({ name, shape: [rows, cols], values: uniform([rows, cols], Math.sqrt(6 / (rows + cols))) });
  const bias = (name, n, scale = 0.1) => items.push({ name, shape: [1, n], values: uniform([n], scale) });
  const norm = (prefix) => {
    items.push({ name: `${prefix}_ln_scale`, shape: [1, o.dim], values: uniform([o.dim], 0.2, 1) });
    bias(`${prefix}_ln_bias`, o.dim);
  };
  const attention = (prefix) => {
    for (const p of ['q', 'k', 'v', 'o']) {
      weight(`${prefix}_W${p}`, o.dim, o.dim);
      bias(`${prefix}_b${p}`, o.dim);
    }
    norm(`${prefix}_Wo`);
  };
  const ffn = (prefix) => {
    weight(`${prefix}_W1`, o.dim, o.ffn);
    bias(`${prefix}_b1`, o.ffn);
    weight(`${prefix}_W2`, o.ffn, o.dim);
    bias(`${prefix}_b2`, o.dim);
    norm(`${prefix}_ffn`);
  };
  // Embedding rows of unit-ish length (Marian scales them by sqrt(dim)).
  const embedding = (name) => items.push({ name, shape: [o.vocab, o.dim], values: uniform([o.vocab, o.dim], Math.sqrt(3 / o.dim)) });
  if (o.tied === 'all') embedding('Wemb');
  else {
    embedding('encoder_Wemb');
    embedding('decoder_Wemb');
  }
  for (let l = 1; l <= o.encDepth; l++) {
    attention(`encoder_l${l}_self`);
    ffn(`encoder_l${l}_ffn`);
  }
  for (let l = 1; l <= o.decDepth; l++) {
    if (o.decoder === 'ssru') {
      weight(`decoder_l${l}_rnn_W`, o.dim, o.dim);
      weight(`decoder_l${l}_rnn_Wf`, o.dim, o.dim);
      bias(`decoder_l${l}_rnn_bf`, o.dim);
      norm(`decoder_l${l}_rnn_ffn`);
    } else {
      attention(`decoder_l${l}_self`);
    }
    attention(`decoder_l${l}_context`);
    ffn(`decoder_l${l}_ffn`);
  }
  if (o.tied === 'none') weight('decoder_ff_logit_out_W', o.dim, o.vocab);
  bias('decoder_ff_logit_out_b', o.vocab, 0.05);

  const yml = marianYml(o, o.yml);
  return { items, yml, options: o };
}

// The options Marian saves in special:model.yml (src/models/encoder_decoder.cpp's
// model features, Marian 1.11) for a model of randomMarianModel's options.
function modelOptions(o) {
  const ssru = o.decoder === 'ssru';
  return {
    'bert-train-type-embeddings': true, 'bert-type-vocab-size': 2,
    'dec-cell': ssru ? 'ssru' : 'gru', 'dec-cell-base-depth': 2, 'dec-cell-high-depth': 1, 'dec-depth': o.decDepth,
    'dim-emb': o.dim, 'dim-rnn': 1024, 'dim-vocabs': [o.vocab, o.vocab],
    'enc-cell': 'gru', 'enc-cell-depth': 1, 'enc-depth': o.encDepth, 'enc-type': 'bidirectional',
    'factors-combine': 'sum', 'factors-dim-emb': 0, 'input-types': [], 'layer-normalization': false,
    'lemma-dependency': '', 'lemma-dim-emb': 0, 'output-omit-bias': false, 'right-left': false, skip: false,
    'tied-embeddings': o.tied !== 'none', 'tied-embeddings-all': o.tied === 'all', 'tied-embeddings-src': false,
    'transformer-aan-activation': 'swish', 'transformer-aan-depth': 2, 'transformer-aan-nogate': false,
    'transformer-decoder-autoreg': ssru ? 'rnn' : 'self-attention', 'transformer-decoder-dim-ffn': 0,
    'transformer-decoder-ffn-depth': 0, 'transformer-depth-scaling': false, 'transformer-dim-aan': 2048,
    'transformer-dim-ffn': o.ffn, 'transformer-ffn-activation': o.activation, 'transformer-ffn-depth': 2,
    'transformer-guided-alignment-layer': 'last', 'transformer-heads': o.heads, 'transformer-no-projection': false,
    'transformer-pool': false, 'transformer-postprocess': 'dan', 'transformer-postprocess-emb': 'd',
    'transformer-postprocess-top': '', 'transformer-preprocess': '', 'transformer-rnn-projection': false,
    'transformer-tied-layers': [], 'transformer-train-position-embeddings': false, type: 'transformer',
    ulr: false, 'ulr-dim-emb': 0, 'ulr-trainable-transformation': false,
    version: 'v1.11.0 f00d062 2021-11-24 17:52:58 +0000',
  };
}

// special:model.yml as text, in one of the forms Marian's files have
// (tests/fixtures/marian-yml/README.md says where each was seen):
// 'yaml-cpp' (the default: Marian's own writer: keys sorted, an empty list as
// "[]" on a line of its own, block lists indented two spaces, "" for the empty
// string, the version line), 'flow' (lists in flow style, "[]" and "[a, b]",
// as yaml-cpp writes lists that came from a config file written so), or
// 'pyyaml' (Python's yaml.dump: keys in their order, lists not indented, '').
export function marianYml(o, form = 'yaml-cpp') {
  const options = modelOptions(o);
  const keys = form === 'pyyaml' ? Object.keys(options) : Object.keys(options).sort();
  const empty = form === 'pyyaml' ? "''" : '""';
  const lines = keys.map((key) => {
    const value = options[key];
    if (!Array.isArray(value)) return `${key}: ${value === '' ? empty : value}`;
    if (form === 'flow') return `${key}: [${value.join(', ')}]`;
    if (form === 'pyyaml') return value.length ? `${key}:\n${value.map((v) => `- ${v}`).join('\n')}` : `${key}: []`;
    return `${key}:\n${value.length ? value.map((v) => `  - ${v}`).join('\n') : '  []'}`;
  });
  return lines.join('\n') + '\n';
}

// Marian's intgemm8 layout: int8 values, weights stored transposed, then the
// float32 multiplier (127 / max |w|): value = q * (1 / multiplier).
// multiplier: one for every matrix (default: each its own, 127 / max |w|).
export function quantiseMarian(marian, multiplier = null) {
  return {
    ...marian,
    items: marian.items.map((item) => {
      if (item.shape[0] === 1) return item;  // biases and LN parameters stay float32
      const [rows, cols] = item.shape, bytes = Buffer.alloc(rows * cols + 4);
      const mult = multiplier ?? 127 / item.values.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      const embedding = item.name.includes('Wemb');
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const q = Math.max(-127, Math.min(127, Math.round(item.values[r * cols + c] * mult)));
          bytes.writeInt8(q, embedding ? r * cols + c : c * rows + r);
        }
      }
      bytes.writeFloatLE(mult, rows * cols);
      return { ...item, type: TYPE_INTGEMM8, bytes };
    }),
  };
}

function ymlItem(yml) {
  const text = Buffer.from(yml + '\0');
  return { name: 'special:model.yml', shape: [text.length], type: TYPE_INT8, bytes: text };
}

function itemBytes(item) {
  if (item.bytes) return item.bytes;
  return Buffer.from(item.values.buffer, item.values.byteOffset, item.values.byteLength);
}

// Marian's binary format (.bin) of the items and the YAML.
export function writeMarianBin({ items, yml }) {
  const all = [...items.map((it) => ({ type: TYPE_FLOAT32, ...it })), ymlItem(yml)];
  const parts = [];
  const u64 = (v) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    parts.push(b);
    return 8;
  };
  let pos = u64(1) + u64(all.length);
  for (const it of all) {
    pos += u64(Buffer.byteLength(it.name) + 1) + u64(it.type) + u64(it.shape.length) + u64(itemBytes(it).length);
  }
  for (const it of all) {
    parts.push(Buffer.from(it.name + '\0'));
    pos += Buffer.byteLength(it.name) + 1;
  }
  for (const it of all) {
    const shape = Buffer.alloc(4 * it.shape.length);
    it.shape.forEach((d, i) => shape.writeInt32LE(d, 4 * i));
    parts.push(shape);
    pos += shape.length;
  }
  const next = (Math.floor((pos + 8) / 256) + 1) * 256;
  u64(next - pos - 8);
  parts.push(Buffer.alloc(next - pos - 8));
  for (const it of all) parts.push(itemBytes(it));
  return Buffer.concat(parts);
}

// A random binary lexical shortlist (marian-dev data/shortlist.cpp): six u64
// (magic, checksum, firstNum, bestNum, offsets length, targets length), the
// u64 offsets of each source id's list, the u32 target ids (each list sorted).
// Bergamot does not verify the checksum unless asked (check-bytearray): 0 here.
export function randomShortlist({ vocab, first, best, seed }) {
  const rand = random(seed), offsets = [0], targets = [];
  for (let id = 0; id < vocab; id++) {
    const list = new Set();
    while (list.size < best) list.add(Math.floor(rand() * vocab));
    targets.push(...[...list].sort((a, b) => a - b));
    offsets.push(targets.length);
  }
  const bytes = Buffer.alloc(48 + 8 * offsets.length + 4 * targets.length);
  [0xf11a48d5013417f5n, 0n, BigInt(first), BigInt(best), BigInt(offsets.length), BigInt(targets.length)]
    .forEach((v, i) => bytes.writeBigUInt64LE(v, 8 * i));
  offsets.forEach((v, i) => bytes.writeBigUInt64LE(BigInt(v), 48 + 8 * i));
  targets.forEach((v, i) => bytes.writeUInt32LE(v, 48 + 8 * offsets.length + 4 * i));
  return bytes;
}

// The pieces of a SentencePiece model (ModelProto field 1, each piece's field 1), in id order.
export function spmPieces(bytes) {
  const pieces = [];
  let pos = 0;
  const varint = () => {
    let v = 0, shift = 0, b;
    do { b = bytes[pos++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
    return v;
  };
  while (pos < bytes.length) {
    const key = varint(), wire = key & 7;
    if (wire === 0) { varint(); continue; }
    if (wire === 5 || wire === 1) { pos += wire === 5 ? 4 : 8; continue; }
    const len = varint(), end = pos + len;
    if (key >>> 3 === 1) {
      const inner = bytes.subarray(pos, end);
      // the piece string is the first field (tag 0x0a) of a SentencePiece message (under 128 bytes here)
      const n = inner[1];
      pieces.push(Buffer.from(inner.subarray(2, 2 + n)).toString('utf8'));
    }
    pos = end;
  }
  return pieces;
}

// ---------------------------------------------------------------- .npz

function npy(descr, shape, data) {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre.writeUInt16LE(header.length, 8);
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), data]);
}

// The items as Marian's .npz (an uncompressed zip of .npy files).
export function writeMarianNpz({ items, yml }) {
  const files = items.map((it) => ({ name: `${it.name}.npy`, data: npy('<f4', it.shape, itemBytes(it)) }));
  const text = Buffer.from(yml + '\0');
  files.push({ name: 'special:model.yml.npy', data: npy('|i1', [text.length], text) });
  const local = [], central = [];
  let offset = 0;
  for (const f of files) {
    const name = Buffer.from(f.name), crc = crc32(f.data);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt32LE(crc, 14);
    h.writeUInt32LE(f.data.length, 18);
    h.writeUInt32LE(f.data.length, 22);
    h.writeUInt16LE(name.length, 26);
    local.push(h, name, f.data);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(f.data.length, 20);
    c.writeUInt32LE(f.data.length, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += 30 + name.length + f.data.length;
  }
  const centralBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(centralBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...local, centralBytes, end]);
}

// ---------------------------------------------------------------- Bergamot

let bergamot = null;

// Bergamot's WASM module, loaded once per process from node_modules (the
// package's worker script is Emscripten glue meant for a Web Worker: it is
// evaluated here with the module object it expects, and its integer GEMM
// imports are linked to the fallbacks it carries, as its own worker does).
export function loadBergamot() {
  if (bergamot) return bergamot;
  const require = createRequire(import.meta.url);
  const dir = join(dirname(require.resolve('@browsermt/bergamot-translator/package.json')), 'worker');
  const wasm = readFileSync(join(dir, 'bergamot-translator-worker.wasm'));
  const glue = readFileSync(join(dir, 'bergamot-translator-worker.js'), 'utf8');
  bergamot = new Promise((resolve, reject) => {
    const gemm = ['int8_prepare_a', 'int8_prepare_b', 'int8_prepare_b_from_transposed',
      'int8_prepare_b_from_quantized_transposed', 'int8_prepare_bias', 'int8_multiply_and_add_bias',
      'int8_select_columns_of_b'];
    const fallback = (name) => name.replace(/_(\w)/g, (_, c) => c.toUpperCase()) + 'Fallback';
    const Module = {
      print: () => {},
      printErr: process.env.BERGAMOT_LOG ? console.error : () => {},  // Marian's log, when debugging
      instantiateWasm(imports, accept) {
        const wasmGemm = Object.fromEntries(gemm.map((n) => [n, (...args) => Module.asm[fallback(n)](...args)]));
        WebAssembly.instantiate(wasm, { ...imports, wasm_gemm: wasmGemm })
          .then(({ instance }) => accept(instance), reject);
        return {};
      },
      onRuntimeInitialized: () => resolve(Module),
      onAbort: reject,
    };
    globalThis.Module = Module;
    (0, eval)(glue);
  });
  return bergamot;
}

function aligned(Module, bytes, alignment) {
  const memory = new Module.AlignedMemory(bytes.length, alignment);
  memory.getByteArrayView().set(bytes);
  return memory;
}

// Translates texts (one sentence each) with a Marian model through
// Bergamot: model (.bin bytes), vocab (.spm bytes), shortlist (bytes or
// null), options (Marian options: beam-size, normalize, max-length-factor,
// gemm-precision ...). Each text is its own call, so that Marian's length
// limit (a factor of the batch's longest source) is each sentence's own.
// times, when given, receives each call's milliseconds (model loading apart).
// batch: all texts in one call (Bergamot batches them by its mini-batch
// options), one time in `times`; otherwise one call a text, one time each.
export async function bergamotTranslate({ model, vocab, shortlist = null, options = {}, batch = false }, texts, times = null) {
  const Module = await loadBergamot();
  const config = {
    'beam-size': 1, normalize: 1.0, 'word-penalty': 0, 'max-length-factor': 2.0, 'max-length-break': 128,
    'mini-batch-words': 1024, workspace: 128, 'gemm-precision': 'float32', 'skip-cost': false,
    'cpu-threads': 0, quiet: true, 'quiet-translation': true, alignment: 'soft', ...options,
  };
  const yaml = Object.entries(config).map(([k, v]) => `${k}: ${v}`).join('\n') + '\n';
  const vocabs = new Module.AlignedMemoryList();
  vocabs.push_back(aligned(Module, vocab, 64));
  const translationModel = new Module.TranslationModel(yaml, aligned(Module, model, 256),
    aligned(Module, shortlist ?? new Uint8Array(0), 64), vocabs, null);
  const service = new Module.BlockingService({ cacheSize: 0 });
  const out = [];
  try {
    for (const group of batch ? [texts] : texts.map((text) => [text])) {
      const input = new Module.VectorString(), options_ = new Module.VectorResponseOptions();
      for (const text of group) {
        input.push_back(text);
        options_.push_back({ qualityScores: false, alignment: false, html: false });
      }
      const t0 = performance.now();
      const responses = service.translate(translationModel, input, options_);
      times?.push(performance.now() - t0);
      for (let i = 0; i < group.length; i++) out.push(responses.get(i).getTranslatedText());
      responses.delete();
      input.delete();
      options_.delete();
    }
  } finally {
    service.delete();
    translationModel.delete();
    vocabs.delete();
  }
  return out;
}
