// Writes the seed corpora of the fuzz targets (node fuzz/make_seeds.mjs):
//   seeds/model/      fuzz_model: tiny model directories (config.json, a NUL
//                     byte, model.safetensors) for every residual style, shared
//                     and separate embeddings, float32 / float16 / bfloat16,
//                     with and without language tokens, and as converted from
//                     Marian (SSRU or self-attention decoder, swish, output bias,
//                     a lexical shortlist); random weights from a fixed
//                     generator (the seeds need to load, not translate well)
//   seeds/spm_load/   fuzz_spm_load: small SentencePiece models from Debian's
//                     spm_train (apt-get install sentencepiece), a few KB each so
//                     that the fuzzer runs fast; the big nfkc fixtures in
//                     tests/fixtures/spm are exercised by the parity tests
// seeds/spm_encode/ holds hand-written texts and is not rewritten.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SEEDS = fileURLToPath(new URL('./seeds/', import.meta.url));
const OUT = `${SEEDS}model/`;

let state = 0x2545f491;
function random() { // xorshift32 in [-1, 1)
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 2 ** 31 - 1;
}

function tensorsFor(config) {
  const { d_model: d, ffn_dim: f, vocab_size: v, encoder_layers: enc, decoder_layers: dec } = config;
  const list = [['encoder.embed_tokens.weight', [v, d]]];
  if (!config.share_embeddings) list.push(['decoder.embed_tokens.weight', [v, d]], ['decoder.output_projection.weight', [v, d]]);
  const linear = (name, n, k) => list.push([`${name}.weight`, [n, k]], [`${name}.bias`, [n]]);
  const norm = (name) => list.push([`${name}.weight`, [d]], [`${name}.bias`, [d]]);
  const attention = (name) => { for (const p of ['q_proj', 'k_proj', 'v_proj', 'out_proj']) linear(`${name}.${p}`, d, d); };
  for (const [stack, layers] of [['encoder', enc], ['decoder', dec]]) {
    for (let i = 0; i < layers; i++) {
      const prefix = `${stack}.layers.${i}`;
      if (stack === 'decoder' && config.decoder_self === 'ssru') {
        list.push([`${prefix}.ssru.in_proj.weight`, [d, d]]);
        linear(`${prefix}.ssru.forget_proj`, d, d);
        norm(`${prefix}.ssru_layer_norm`);
      } else {
        attention(`${prefix}.self_attn`);
        norm(`${prefix}.self_attn_layer_norm`);
      }
      if (stack === 'decoder') {
        attention(`${prefix}.encoder_attn`);
        norm(`${prefix}.encoder_attn_layer_norm`);
      }
      linear(`${prefix}.fc1`, f, d);
      linear(`${prefix}.fc2`, d, f);
      norm(`${prefix}.final_layer_norm`);
    }
    if (config.style !== 'post') norm(`${stack}.layer_norm`);
  }
  if (config.output_bias) list.push(['decoder.output_projection.bias', [v]]);
  if (config.shortlist_first != null) {
    // Each id brings in the next two: offsets 0, 2, 4, ... (I32 index tables).
    list.push(['shortlist.offsets', [v + 1], Array.from({ length: v + 1 }, (_, i) => 2 * i)]);
    list.push(['shortlist.targets', [2 * v], Array.from({ length: 2 * v }, (_, i) => (i + 1 + (i >> 1)) % v)]);
  }
  return list;
}

function encode(values, dtype) {
  const f32 = new Float32Array(values);
  if (dtype === 'F32') return new Uint8Array(f32.buffer);
  const out = new Uint16Array(values.length);
  const bits = new Uint32Array(f32.buffer);
  for (let i = 0; i < values.length; i++) {
    if (dtype === 'BF16') out[i] = bits[i] >>> 16;
    else { // F16: values here are small normal numbers; round to nearest
      const sign = (bits[i] >>> 16) & 0x8000, exponent = ((bits[i] >>> 23) & 0xff) - 127 + 15;
      const mantissa = Math.round((bits[i] & 0x7fffff) / 8192);
      out[i] = exponent <= 0 ? sign : sign | (exponent << 10) + mantissa;
    }
  }
  return new Uint8Array(out.buffer);
}

// int8: matrices as I8 with a float32 scale ("<name>.qscale"), as
// convert_marian.py keeps intgemm8 weights; written last so offsets stay aligned.
function safetensors(config, dtype, int8 = false) {
  const header = {};
  const chunks = [], late = [];
  let offset = 0;
  const add = (name, type, shape, bytes) => {
    header[name] = { dtype: type, shape, data_offsets: [offset, offset + bytes.length] };
    chunks.push(bytes);
    offset += bytes.length;
  };
  for (const [name, shape, ints] of tensorsFor(config)) {
    const count = shape.reduce((a, b) => a * b, 1);
    if (ints) add(name, 'I32', shape, new Uint8Array(new Int32Array(ints).buffer));
    else if (int8 && shape.length === 2) {
      late.push([name, shape, new Uint8Array(new Int8Array(Array.from({ length: count }, () => Math.round(random() * 127))).buffer)]);
      add(`${name}.qscale`, 'F32', [1], encode([0.01 + Math.abs(random()) / 50], 'F32'));
    } else add(name, dtype, shape, encode(Array.from({ length: count }, random), dtype));
  }
  for (const [name, shape, bytes] of late) add(name, 'I8', shape, bytes);
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8); // data aligned to 8 bytes, as safetensors writes it
  const length = new Uint8Array(8);
  new DataView(length.buffer).setBigUint64(0, BigInt(text.length), true);
  return Buffer.concat([length, Buffer.from(text), ...chunks]);
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const dtypes = ['F32', 'F16', 'BF16'];
let n = 0;
for (const style of ['post', 'pre', 'residual']) {
  for (const share of [true, false]) {
    for (const langs of [false, true]) {
      const dtype = dtypes[n % 3];
      const config = {
        format: 'residual-mt/1', style, d_model: 8, ffn_dim: 6, n_heads: 2, encoder_layers: 1, decoder_layers: style === 'pre' ? 2 : 1,
        vocab_size: 9, max_positions: 12, bos_id: 0, pad_id: 1, eos_id: 2, unk_id: 3, activation: 'relu',
        ln_eps: 1e-5, final_ln_eps: 1e-7, res_scale: 0.8, enc_alpha: 1.0, dec_alpha: 1.25, share_embeddings: share,
        languages: langs ? { source: ['en', 'es'], target: ['en', 'es'], target_lang_tokens: { en: 4, es: 5 } } : {},
      };
      const name = `${style}-${share ? 'shared' : 'separate'}-${dtype.toLowerCase()}${langs ? '-langs' : ''}`;
      writeFileSync(`${OUT}${name}`, Buffer.concat([Buffer.from(JSON.stringify(config)), Buffer.from([0]), safetensors(config, dtype)]));
      n++;
    }
  }
}
// As models/convert_marian.py writes them (after the others: their bytes stay as they were).
for (const [name, extra, int8] of [
  ['marian-ssru-shortlist', { decoder_self: 'ssru', shortlist_first: 4, share_embeddings: false }, false],
  ['marian-attention', { decoder_self: 'attention', shortlist_first: null, share_embeddings: true }, false],
  ['marian-int8', { decoder_self: 'ssru', shortlist_first: null, share_embeddings: true }, true],
]) {
  const config = {
    format: 'residual-mt/1', style: 'post', d_model: 8, ffn_dim: 6, n_heads: 2, encoder_layers: 1, decoder_layers: 2,
    vocab_size: 9, max_positions: 12, bos_id: null, pad_id: null, eos_id: 2, unk_id: 3, activation: 'swish', ln_eps: 1e-6,
    output_bias: true, positions: 'marian', decoder_start: 'zeros', search: 'marian', ...extra,
  };
  writeFileSync(`${OUT}${name}`, Buffer.concat([Buffer.from(JSON.stringify(config)), Buffer.from([0]), safetensors(config, 'F32', int8)]));
  n++;
}
console.log(`wrote ${n} seeds to ${OUT}`);

// Tokenizers: identity normalization keeps them small (no charsmap).
const SPM_OUT = `${SEEDS}spm_load/`;
rmSync(SPM_OUT, { recursive: true, force: true });
mkdirSync(SPM_OUT, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'rmt-seeds-'));
const licence = readFileSync('/usr/share/common-licenses/GPL-3', 'utf8').split('\n').filter((l) => l.trim()).slice(0, 120);
writeFileSync(join(work, 'corpus.txt'), `${licence.join('\n')}\nHola, ¿qué tal? Adiós. 日本語 ①②\n`);
writeFileSync(join(work, 'rules.tsv'), '41\t61\n42 43\t62\n');
const common = ['--input=corpus.txt', '--character_coverage=1.0', '--minloglevel=2', '--normalization_rule_name=identity'];
const tokenizers = {
  unigram: ['--model_type=unigram', '--vocab_size=120'],
  bpe: ['--model_type=bpe', '--vocab_size=120'],
  'unigram-bytes-user': ['--model_type=unigram', '--vocab_size=400', '--byte_fallback=true', '--user_defined_symbols=<2en>,<2es>,@@'],
  'bpe-suffix-control': ['--model_type=bpe', '--vocab_size=140', '--treat_whitespace_as_suffix=true', '--add_dummy_prefix=false',
    '--control_symbols=<sep>', '--pad_id=3', '--unk_id=0', '--bos_id=1', '--eos_id=2'],
  'unigram-rules': ['--model_type=unigram', '--vocab_size=120', '--normalization_rule_tsv=rules.tsv',
    '--remove_extra_whitespaces=false', '--unk_surface=<?>'],
};
for (const [name, args] of Object.entries(tokenizers)) {
  const options = [...common.filter((o) => !(args.some((a) => a.startsWith('--normalization_rule_tsv')) && o.startsWith('--normalization_rule_name'))), ...args];
  const run = spawnSync('spm_train', [...options, `--model_prefix=${name}`], { cwd: work, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`spm_train ${name}: ${run.stderr || run.error?.message}`);
  writeFileSync(`${SPM_OUT}${name}.model`, readFileSync(join(work, `${name}.model`)));
}
rmSync(work, { recursive: true, force: true });
console.log(`wrote ${Object.keys(tokenizers).length} seeds to ${SPM_OUT}`);
