// The WASM engine against the PyTorch reference fixtures (made by
// tests/fixtures/make_fixtures.py), and its answers to bad input. The engine is the
// runtime's default build (defaults.js) for its default thread count: the
// threads build here (the plain one on a single processor), the relaxed-SIMD
// one when tests/relaxed.test.js runs this file again with relaxed SIMD on and
// RMT_TEST_THREADS=1 (fused multiply-adds round differently: same tolerances,
// same tokens). tests/threads.test.js compares threads with one thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Engine } from '../js/engine/binding.js';
import { textSpans } from '../js/engine/pipeline.js';
import { defaultWasmUrl, threadCount } from '../js/defaults.js';
import { readSafetensors, rewriteWeights, roundToBf16, safetensors } from './lib/weights.js';

const FIXTURES = new URL('./fixtures/models/', import.meta.url);
const MODELS = ['post-2x2', 'post-3x1', 'pre-2x2', 'pre-3x1', 'residual-2x2', 'residual-3x1', 'residual-2x2-int8', 'residual-3x1-int8', 'residual-2x2-int16', 'residual-3x1-int16'];
const THREADS = await threadCount(process.env.RMT_TEST_THREADS ? Number(process.env.RMT_TEST_THREADS) : undefined);
const engine = await Engine.load(undefined, { threads: THREADS });
const BUILD = defaultWasmUrl(THREADS).pathname.split('/').at(-1);

function readFixture(name) {
  const dir = new URL(`${name}/`, FIXTURES);
  return {
    config: readFileSync(new URL('config.json', dir), 'utf8'),
    weights: readFileSync(new URL('model.safetensors', dir)),
    reference: JSON.parse(readFileSync(new URL('reference.json', dir), 'utf8')),
  };
}

function maxAbsDiff(got, want, offset = 0) {
  let max = 0;
  for (let i = 0; i < want.length; i++) max = Math.max(max, Math.abs(got[offset + i] - want[i]));
  return max;
}

// The reference's alignment margins below this are float-rounding near-ties,
// where the engine may choose the runner-up (as in tests/c/test_model.c).
const ALIGN_TIE = 1e-4;
// An integer output layer (int8 or 16-bit weights) quantizes its input to 16
// bits (src/kernels.h rmt_qmax_i16, rmt_qmax_w16): where the engine's float32
// arithmetic and torch's put a value on either side of a rounding boundary, a
// logit (and the score summing it) moves by one step, max|x| / qmax * |w|
// (~1.5e-4 on residual-3x1-int8); a wrong quantization moves them by 1e-2 or more.
const INTEGER_OUTPUT_TOLERANCE = 5e-4;

function compareAlignment(got, want, counts, what) {
  assert.equal(got.length, want.alignment.length, `${what}: alignment length`);
  got.forEach((position, i) => {
    counts.tokens++;
    if (position === want.alignment[i]) counts.equal++;
    else if (want.margins[i] !== null && want.margins[i] < ALIGN_TIE) counts.ties++;
    else assert.fail(`${what} token ${i}: aligned to source position ${position}, the reference ${want.alignment[i]}`);
  });
}

for (const name of MODELS) {
  test(`${BUILD} ${name} matches the reference`, () => {
    const { config, weights, reference: ref } = readFixture(name);
    const model = engine.loadModel({ config, weights });
    const V = model.config.vocab_size;
    let encoderDiff = 0, logitDiff = 0, scoreDiff = 0, sequences = 0;

    let attentionDiff = 0;
    const tr = model.begin(ref.sentences, { beam: 1 });
    ref.sentences.forEach((_, s) => { encoderDiff = Math.max(encoderDiff, maxAbsDiff(tr.encoderOut(s), ref.encoder_out[s])); });
    const T = ref.forced.prev_tokens[0].length;
    for (let t = 0; t < T; t++) {
      const logits = tr.forceStep(ref.forced.prev_tokens.map((row) => row[t]));
      ref.sentences.forEach((sentence, s) => {
        logitDiff = Math.max(logitDiff, maxAbsDiff(logits, ref.forced.logits[s].slice(t * V, (t + 1) * V), s * V));
        const S = sentence.length + 1;
        attentionDiff = Math.max(attentionDiff, maxAbsDiff(tr.crossAttention(s), ref.forced.cross_attention[s].slice(t * S, (t + 1) * S)));
      });
    }
    tr.free();
    const alignment = { tokens: 0, equal: 0, ties: 0 };

    for (const search of ref.searches) {
      const tr = model.begin(ref.sentences, {
        beam: search.beam, lenpen: search.lenpen, nbest: search.nbest,
        maxLenA: search.max_len_a, maxLenB: search.max_len_b, minLen: search.min_len,
      });
      tr.run();
      const got = tr.results();
      search.hyps.forEach((want, s) => {
        assert.equal(got[s].length, want.length, `beam ${search.beam} sentence ${s}: n-best size`);
        want.forEach((hyp, k) => {
          assert.deepEqual(got[s][k].ids, hyp.tokens, `beam ${search.beam} sentence ${s} hypothesis ${k}`);
          scoreDiff = Math.max(scoreDiff, Math.abs(got[s][k].score - hyp.score));
          sequences++;
          compareAlignment(tr.alignment(s, k), hyp, alignment, `beam ${search.beam} sentence ${s} hypothesis ${k}`);
        });
      });
      tr.free();
    }
    const long = model.translateIds([ref.long.sentence], { beam: 1 });
    assert.deepEqual(long[0][0].ids, ref.long.greedy, 'long input, greedy');
    model.dispose();

    console.log(`${BUILD} ${name.padEnd(13)} max|encoder diff| ${encoderDiff.toExponential(2)}  max|logit diff| ` +
      `${logitDiff.toExponential(2)}  max|score diff| ${scoreDiff.toExponential(2)}  max|attention diff| ` +
      `${attentionDiff.toExponential(2)}  ${sequences} sequences equal  alignment ${alignment.equal}/${alignment.tokens} ` +
      `equal (${alignment.ties} near-ties)`);
    assert.ok(attentionDiff <= 1e-5, `encoder-attention difference ${attentionDiff}`);
    assert.ok(alignment.tokens > 0);
    assert.ok(encoderDiff <= 1e-4, `encoder difference ${encoderDiff}`);
    const tolerance = /-int(8|16)$/.test(name) ? INTEGER_OUTPUT_TOLERANCE : 1e-4;
    assert.ok(logitDiff <= tolerance, `logit difference ${logitDiff}`);
    assert.ok(scoreDiff <= tolerance, `score difference ${scoreDiff}`);
  });
}

test('greedy output of a batch equals each sentence alone', () => {
  const { config, weights, reference: ref } = readFixture('residual-2x2');
  const model = engine.loadModel({ config, weights });
  const batch = model.translateIds(ref.sentences, { beam: 1 });
  ref.sentences.forEach((sentence, s) => {
    assert.deepEqual(model.translateIds([sentence], { beam: 1 })[0][0].ids, batch[s][0].ids);
  });
  model.dispose();
});

test('int8: true quantizes a float model as models/quantize.py does: the same logits, bit for bit, as its int8 copy', () => {
  for (const name of ['residual-2x2', 'residual-3x1']) {
    const float = readFixture(name), copy = readFixture(`${name}-int8`);
    const a = engine.loadModel({ config: float.config, weights: float.weights, int8: true });
    const b = engine.loadModel({ config: copy.config, weights: copy.weights });
    const ta = a.begin(copy.reference.sentences, { beam: 1 }), tb = b.begin(copy.reference.sentences, { beam: 1 });
    for (let t = 0; t < copy.reference.forced.prev_tokens[0].length; t++) {
      const step = copy.reference.forced.prev_tokens.map((row) => row[t]);
      assert.deepEqual(Float32Array.from(ta.forceStep(step)), Float32Array.from(tb.forceStep(step)), `${name} step ${t}`);
    }
    ta.free(), tb.free();
    assert.deepEqual(a.translateIds(copy.reference.sentences, { beam: 5, nbest: 5 }),
      b.translateIds(copy.reference.sentences, { beam: 5, nbest: 5 }));
    a.dispose(), b.dispose();
  }
  assert.throws(() => engine.loadModel({ ...good, int8: 'yes' }), /int8 must be true or false/);
});

test('"output_layer": "int16" needs a float output projection, and names its choices', () => {
  const withKey = (config, value) => JSON.stringify({ ...JSON.parse(config), output_layer: value });
  for (const name of ['residual-2x2-int8', 'residual-3x1-int8']) {  // the embedding / the projection int8
    const { config, weights } = readFixture(name);
    assert.throws(() => engine.loadModel({ config: withKey(config, 'int16'), weights }),
      /tensor (encoder\.embed_tokens|decoder\.output_projection)\.weight is int8, but config\.json's "output_layer": "int16" quantizes a float output projection/);
    engine.loadModel({ config: withKey(config, 'float'), weights }).dispose();
  }
  const { config, weights } = readFixture('residual-2x2');
  assert.throws(() => engine.loadModel({ config: withKey(config, 'int8'), weights }),
    /unsupported "output_layer" \(expected "float" or "int16"\)/);
  // The same float weights with the key compute the output layer in 16 bits: the same words, close logits.
  const float = engine.loadModel({ config, weights }), int16 = engine.loadModel({ config: withKey(config, 'int16'), weights });
  const { sentences } = readFixture('residual-2x2').reference;
  const a = float.begin(sentences, { beam: 1 }), b = int16.begin(sentences, { beam: 1 });
  const la = a.forceStep(sentences.map(() => 5)), lb = b.forceStep(sentences.map(() => 5));
  assert.ok(maxAbsDiff(lb, Array.from(la)) < 1e-2 && maxAbsDiff(lb, Array.from(la)) > 0, 'logits: 16-bit, not float');
  a.free(), b.free(), float.dispose(), int16.dispose();
});

// ---------------------------------------------------------------- bad input

const good = readFixture('residual-2x2');
const { header, data: goodData } = readSafetensors(good.weights);

// A safetensors file from a header object and the original data section.
function withHeader(edit) {
  const h = structuredClone(header);
  edit(h);
  return safetensors(JSON.stringify(h), goodData);
}

function expectLoadError(files, pattern) {
  assert.throws(() => engine.loadModel({ config: good.config, weights: good.weights, ...files }),
    (err) => err instanceof Error && pattern.test(err.message), `expected ${pattern}`);
}

// residual-2x2 with a lexical shortlist: id i brings in targets(i), stored
// with targets as `dtype` (I32 or I16); edit(offsets, targets) may break it.
function withShortlist(dtype, targets, edit = () => {}) {
  const config = JSON.parse(good.config);
  const offsets = new Int32Array(config.vocab_size + 1);
  const flat = [];
  for (let i = 0; i < config.vocab_size; i++) flat.push(...targets(i)), offsets[i + 1] = flat.length;
  const ids = dtype === 'I16' ? Int16Array.from(flat) : Int32Array.from(flat);
  edit(offsets, ids);
  const h = structuredClone(header), at = goodData.length;
  const o = Buffer.from(offsets.buffer), t = Buffer.from(ids.buffer);
  h['shortlist.offsets'] = { dtype: 'I32', shape: [offsets.length], data_offsets: [at, at + o.length] };
  h['shortlist.targets'] = { dtype, shape: [ids.length], data_offsets: [at + o.length, at + o.length + t.length] };
  return { config: JSON.stringify({ ...config, shortlist_first: 4 }), weights: safetensors(JSON.stringify(h), Buffer.concat([goodData, o, t])) };
}

test('a lexical shortlist (I32 or I16 ids): each output word is a candidate, shortlist: false scores all words', () => {
  const V = JSON.parse(good.config).vocab_size;
  const targets = (i) => [(i * 7 + 3) % V, (i * 13 + 5) % V];
  const sentences = good.reference.sentences;
  const plain = engine.loadModel({ config: good.config, weights: good.weights });
  const all = plain.translateIds(sentences, { beam: 3, nbest: 3 });
  const results = [];
  for (const dtype of ['I32', 'I16']) {
    const model = engine.loadModel(withShortlist(dtype, targets));
    const out = model.translateIds(sentences, { beam: 3, nbest: 3 });
    results.push(out);
    // Marian's rule (src/shortlist.c): ids below shortlist_first, the source's ids with its </s>,
    // their targets, then the lowest others from shortlist_first on up to a multiple of 8.
    sentences.forEach((src, s) => {
      const allowed = new Set([0, 1, 2, 3]);
      for (const id of [...src, 2]) allowed.add(id), targets(id).forEach((t) => allowed.add(t));
      for (let i = 4; allowed.size % 8; i++) allowed.add(i);
      for (const hyp of out[s]) assert.ok(hyp.ids.every((id) => allowed.has(id)), `${dtype} sentence ${s}: ${hyp.ids} outside its candidates`);
    });
    assert.deepEqual(model.translateIds(sentences, { beam: 3, nbest: 3, shortlist: false }), all, `${dtype}: shortlist: false`);
    assert.throws(() => model.translateIds(sentences, { shortlist: 2 }), /shortlist must be an integer in \[0, 1\], got 2/);
    model.dispose();
  }
  assert.deepEqual(results[0], results[1], 'I16 ids translate as I32 ones do');
  assert.notDeepEqual(results[0], all, 'the shortlist changes some translations of this random model');
  plain.dispose();
  const broken = (edit) => () => engine.loadModel(withShortlist('I16', targets, edit));
  assert.throws(broken((o, t) => { t[5] = -3; }), /shortlist\.targets: element 5 is -3, outside \[0, \d+\]/);
  assert.throws(broken((o) => { o[3] = o[4] + 1; }), /shortlist\.offsets decreases at element 4/);
  assert.throws(() => engine.loadModel({ ...withShortlist('I32', targets), config: good.config }), /unknown tensor shortlist/);
});

test('bad model files give clear errors', async (t) => {
  await t.test('truncated file', () => expectLoadError({ weights: good.weights.subarray(0, good.weights.length >> 1) }, /beyond .*truncated/));
  await t.test('file shorter than the length prefix', () => expectLoadError({ weights: good.weights.subarray(0, 5) }, /too short/));
  await t.test('header length beyond the file', () => {
    const bad = Buffer.from(good.weights);
    bad.writeBigUInt64LE(1n << 40n);
    expectLoadError({ weights: bad }, /header length \d+ is beyond the file size/);
  });
  await t.test('malformed header JSON', () => {
    const bad = Buffer.from(good.weights);
    bad[8] = '['.charCodeAt(0);
    expectLoadError({ weights: bad }, /header: malformed JSON/);
  });
  await t.test('missing tensor', () => expectLoadError({
    weights: withHeader((h) => { h['decoder.layers.0.fc1.bia_'] = h['decoder.layers.0.fc1.bias']; delete h['decoder.layers.0.fc1.bias']; }),
  }, /missing tensor decoder\.layers\.0\.fc1\.bias/));
  await t.test('extra unknown tensor is an error', () => expectLoadError({
    weights: withHeader((h) => { h['encoder.extra.weight'] = { dtype: 'F32', shape: [0], data_offsets: [0, 0] }; }),
  }, /unknown tensor encoder\.extra\.weight/));
  await t.test('wrong shape', () => expectLoadError({
    weights: withHeader((h) => { h['decoder.layers.0.fc1.bias'].shape = [38, 2]; }),
  }, /decoder\.layers\.0\.fc1\.bias has shape \[38, 2\], expected \[76\]/));
  await t.test('unsupported dtype', () => expectLoadError({
    weights: withHeader((h) => { h['encoder.layer_norm.weight'].dtype = 'I64'; }),
  }, /unsupported dtype I64/));
  await t.test('an index table (I32) where weights belong', () => expectLoadError({
    weights: withHeader((h) => { h['encoder.layer_norm.weight'].dtype = 'I32'; }),
  }, /encoder\.layer_norm\.weight is I32, expected a float dtype/));
  await t.test('data size not matching the shape', () => expectLoadError({
    weights: withHeader((h) => { h['encoder.layer_norm.weight'].shape = [65]; }),
  }, /do not match its shape/));
  await t.test('d_model not divisible by n_heads', () => expectLoadError({
    config: good.config.replace('"n_heads": 4', '"n_heads": 5'),
  }, /not divisible by n_heads/));
  await t.test('config inconsistent with the weights', () => expectLoadError({
    config: good.config.replace('"d_model": 64', '"d_model": 32'),
  }, /encoder\.embed_tokens\.weight has shape \[101, 64\], expected \[101, 32\]/));
  await t.test('malformed config', () => expectLoadError({ config: '{"style": "residual"' }, /config\.json: malformed JSON/));
  await t.test('unknown style', () => expectLoadError({ config: good.config.replace('"residual"', '"sandwich"') }, /"style" must be/));
  // Found attacking the loader (each trapped, overran or read garbage in WASM before).
  await t.test('a [32768, 32768] float32 tensor whose byte size wraps to 0 in 32 bits', () => {
    const config = good.config.replace('"d_model": 64', '"d_model": 32768').replace('"vocab_size": 101', '"vocab_size": 32768')
      .replace('"n_heads": 4', '"n_heads": 1');
    const weights = safetensors(JSON.stringify({ 'encoder.embed_tokens.weight': { dtype: 'F32', shape: [32768, 32768], data_offsets: [0, 0] } }),
      Buffer.alloc(140_000));
    expectLoadError({ config, weights }, /encoder\.embed_tokens\.weight: 0 data bytes do not match its shape and dtype/);
  });
  await t.test('header keys without values', () => expectLoadError({ weights: safetensors('{"__metadata__" "x" "y"}') },
    /header: malformed JSON at byte 16/));
  // A header with a value JSON.stringify cannot write: "X" replaced by `raw`.
  const withRaw = (edit, raw) => {
    const h = structuredClone(header);
    edit(h);
    return safetensors(JSON.stringify(h).replace('"X"', raw), goodData);
  };
  await t.test('data_offsets 1e400', () => expectLoadError({
    weights: withRaw((h) => { h['encoder.layer_norm.weight'].data_offsets[0] = 'X'; }, '1e400'),
  }, /encoder\.layer_norm\.weight: bad data_offsets/));
  await t.test('a -nan shape', () => expectLoadError({
    weights: withRaw((h) => { h['encoder.layer_norm.weight'].shape = ['X']; }, '-nan'),
  }, /header: malformed JSON at byte \d+/));
  await t.test('overlapping tensors', () => expectLoadError({
    weights: withHeader((h) => { h['encoder.layer_norm.bias'].data_offsets = h['encoder.layer_norm.weight'].data_offsets; }),
  }, /tensors encoder\.layer_norm\.(bias|weight) and encoder\.layer_norm\.(bias|weight) overlap/));
  await t.test('a misaligned tensor', () => expectLoadError({
    weights: withHeader((h) => { h['encoder.extra'] = { dtype: 'F32', shape: [0], data_offsets: [6, 6] }; }),
  }, /encoder\.extra: data offset 6 is not a multiple of its element size/));
  await t.test('a tensor named twice (C read the first, JSON.parse the last)', () => {
    const text = JSON.stringify(header);
    const entry = `"encoder.layer_norm.bias":${JSON.stringify(header['encoder.layer_norm.bias'])}`;
    expectLoadError({ weights: safetensors(`{${entry},${text.slice(1)}`, goodData) }, /duplicate key "encoder\.layer_norm\.bias"/);
  });
  await t.test('a config key given twice', () => expectLoadError({ config: good.config.replace('"d_model": 64', '"d_model": 64, "d_model": 32') },
    /config\.json: duplicate key "d_model"/));
  await t.test('NaN and Inf weights', () => {
    for (const [value, word] of [[NaN, 'NaN'], [-Infinity, 'Inf']]) {
      expectLoadError({ weights: rewriteWeights(good.weights, 'F32', (name, v) => { if (name === 'decoder.layers.0.fc1.bias') v[3] = value; }) },
        new RegExp(`tensor decoder\\.layers\\.0\\.fc1\\.bias has a non-finite value \\(${word}\\) at element 3`));
    }
  });
  await t.test('special ids that collide (pad_id == eos_id)', () => expectLoadError({ config: good.config.replace('"pad_id": 1', '"pad_id": 2') },
    /special token ids must differ \(bos_id 0, pad_id 2, eos_id 2, unk_id 3\)/));
});

test('bfloat16 weights: a BF16 file translates exactly as float32 of the same values', () => {
  const f32 = engine.loadModel({ config: good.config, weights: rewriteWeights(good.weights, 'F32', roundToBf16) });
  const bf16Weights = rewriteWeights(good.weights, 'BF16', roundToBf16);
  assert.ok(bf16Weights.length < good.weights.length * 0.6 && bf16Weights.includes('"BF16"'));
  const bf16 = engine.loadModel({ config: good.config, weights: bf16Weights });
  const options = { beam: 5, nbest: 5 };
  assert.deepEqual(bf16.translateIds(good.reference.sentences, options), f32.translateIds(good.reference.sentences, options));
  const [a, b] = [f32, bf16].map((m) => m.begin(good.reference.sentences, { beam: 1 }));
  const prev = good.reference.forced.prev_tokens.map((row) => row[0]);
  assert.deepEqual(b.forceStep(prev), a.forceStep(prev), 'logits bit for bit');
  f32.dispose();
  bf16.dispose();
});

test('bad translation input gives clear errors, and the engine stays usable', () => {
  const model = engine.loadModel({ config: good.config, weights: good.weights });
  assert.throws(() => model.translateIds([[5, 6, 101]]), /token id 101 .* outside the vocabulary/);
  assert.throws(() => model.translateIds([[5, -1]]), /outside the vocabulary/);
  assert.throws(() => model.translateIds([[5, 1]]), /padding id/);
  assert.throws(() => model.translateIds([]), /empty input/);
  assert.throws(() => model.translateIds([[5], []]), /empty input: sentence 1/);
  assert.throws(() => model.translateIds([Array(64).fill(7)]), /input too long: .* at most 63/);
  assert.throws(() => model.translateIds([[5]], { beam: 0 }), /beam must be/);
  assert.throws(() => model.translateIds([[5]], { beam: 2, nbest: 3 }), /nbest must be/);
  assert.throws(() => model.translateIds([[5.5]]), /not an integer/);
  assert.equal(model.translateIds([Array(63).fill(7)], { beam: 2 })[0].length, 1);
  model.dispose();
  assert.throws(() => model.translateIds([[5]]), (err) => err.name === 'AbortError' && /disposed/.test(err.message));
  model.dispose(); // twice is harmless
  // A failed load leaves the module usable.
  assert.throws(() => engine.loadModel({ config: good.config, weights: good.weights.subarray(0, 100) }));
  const again = engine.loadModel({ config: good.config, weights: good.weights });
  assert.equal(again.translateIds([[5, 6, 7]], { beam: 1 }).length, 1);
  again.dispose();
});

test('a model with target-language tokens needs a known target language', () => {
  const dir = new URL('residual-text/', FIXTURES);
  const model = engine.loadModel({
    config: readFileSync(new URL('config.json', dir)), weights: readFileSync(new URL('model.safetensors', dir)),
    spm: readFileSync(new URL('spm.model', dir)),
  });
  assert.throws(() => model.translateTexts(['hi']), /name the target language/);
  assert.throws(() => model.translateTexts(['hi'], { targetLanguage: 'fr' }), /cannot translate into "fr"/);
  assert.throws(() => model.translateTexts([''], { targetLanguage: 'en' }), /empty input: text 0 has no tokens/);
  assert.equal(model.translateTexts(['hi'], { targetLanguage: 'es', beam: 1 })[0].length, 1);
  model.dispose();
});

test('text that spells a language token ("<2en>") is encoded as ordinary pieces', () => {
  const dir = new URL('residual-text/', FIXTURES);
  const model = engine.loadModel({
    config: readFileSync(new URL('config.json', dir)), weights: readFileSync(new URL('model.safetensors', dir)),
    spm: readFileSync(new URL('spm.model', dir)),
  });
  const { en, es } = model.config.languages.target_lang_tokens;
  const text = 'Hello <2en> world<2es>';
  assert.ok(model.tokenize(text).includes(en) && model.tokenize(text).includes(es), "spm_encode's own reading");
  const ids = model.sourceIds(text);
  assert.ok(!ids.includes(en) && !ids.includes(es), `${ids}`);
  assert.equal(model.detokenize(ids), text);
  // The translation's source is exactly [<2es>] + those ids.
  const options = { beam: 3, nbest: 3 };
  const viaText = model.translateTexts([text], { ...options, targetLanguage: 'es' })[0];
  const viaIds = model.translateIds([[es, ...ids]], options)[0];
  assert.deepEqual(viaText.map((h) => h.ids), viaIds.map((h) => h.ids));
  assert.deepEqual(viaText.map((h) => h.score), viaIds.map((h) => h.score));
  model.dispose();
});

test('n-best lists through the text API, and a tokenizer larger than the model refused', () => {
  const dir = new URL('residual-text/', FIXTURES);
  const files = { config: readFileSync(new URL('config.json', dir)), weights: readFileSync(new URL('model.safetensors', dir)), spm: readFileSync(new URL('spm.model', dir)) };
  const model = engine.loadModel(files);
  const texts = JSON.parse(readFileSync(new URL('reference.json', dir), 'utf8')).texts;
  const nbest = model.translateTexts(texts, { beam: 4, nbest: 3, targetLanguage: 'en' });
  const en = model.config.languages.target_lang_tokens.en;
  const byIds = model.translateIds(texts.map((t) => [en, ...model.sourceIds(t)]), { beam: 4, nbest: 3 });
  nbest.forEach((hyps, i) => {
    assert.equal(hyps.length, 3);
    assert.deepEqual(hyps.map((h) => h.ids), byIds[i].map((h) => h.ids));
    assert.deepEqual(hyps.map((h) => h.text), hyps.map((h) => model.detokenize(h.ids)));
    assert.ok(hyps[0].score >= hyps[1].score && hyps[1].score >= hyps[2].score, 'best first');
  });
  model.dispose();
  // residual-2x2 has 101 ids; this tokenizer has 150 pieces.
  const mismatched = engine.loadModel({ config: good.config, weights: good.weights, spm: files.spm });
  assert.throws(() => mismatched.translateTexts(['hello']), /the tokenizer has 150 pieces but the model only 101/);
  mismatched.dispose();
});

test('a batch larger than one chunk comes back in input order, equal to one-by-one', () => {
  const { config, weights } = readFixture('post-3x1');
  const model = engine.loadModel({ config, weights });
  // 300 sentences of varied lengths at beam 1: more than one chunk of 256 rows.
  const sentences = Array.from({ length: 300 }, (_, i) => Array.from({ length: 1 + ((i * 7) % 23) }, (_, t) => 4 + ((i * 31 + t * 17) % 90)));
  const batch = model.translateIds(sentences, { beam: 1 });
  assert.equal(batch.length, 300);
  for (const i of [0, 1, 2, 150, 298, 299]) {
    assert.deepEqual(batch[i], model.translateIds([sentences[i]], { beam: 1 })[0], `sentence ${i}`);
  }
  model.dispose();
});

test('alignment through the text API: the reference\'s positions, as spans of the texts', () => {
  const dir = new URL('residual-text/', FIXTURES);
  const ref = JSON.parse(readFileSync(new URL('reference.json', dir), 'utf8'));
  const model = engine.loadModel({ config: readFileSync(new URL('config.json', dir), 'utf8'),
    weights: readFileSync(new URL('model.safetensors', dir)), spm: readFileSync(new URL('spm.model', dir)) });
  const counts = { tokens: 0, equal: 0, ties: 0 };
  for (const [lang, want] of Object.entries(ref.translations)) {
    const tr = model.beginText(ref.texts, { targetLanguage: lang, beam: 1 });
    tr.run();
    const results = tr.results(true);
    ref.texts.forEach((text, s) => {
      assert.deepEqual(results[s][0].ids, want.ids[s]);
      const positions = tr.alignment(s);
      // Positions count the language token the source starts with, which is never one.
      compareAlignment(positions, want.aligned[s], counts, `${lang} text ${s}`);
      assert.ok(positions.every((p) => p >= 1 && p <= ref.ids[s].length), `${lang} text ${s}: ${positions}`);
      const spans = tr.alignmentText(s, text);
      const pieces = model.tokenize(text).length;
      assert.equal(pieces, ref.ids[s].length);
      const output = results[s][0].text;
      let end = 0;
      spans.forEach(({ source, target }, i) => {
        // The source span is the text of the aligned piece (less the space its "▁" stands for).
        const piece = model.detokenize([ref.ids[s][positions[i] - 1]]).trim();
        assert.equal(text.slice(...source).trim(), piece, `${lang} text ${s} token ${i}: source span`);
        // Target spans tile the output, each the text of its token.
        assert.equal(target[0], end, `${lang} text ${s} token ${i}: target spans follow each other`);
        end = target[1];
      });
      assert.equal(end, output.length, `${lang} text ${s}: target spans cover the output`);
    });
    assert.throws(() => tr.alignmentText(0, `${ref.texts[0]} and more`), /not the one translated/);
    assert.throws(() => tr.alignmentText(99, ref.texts[0]), /out of range/);
    // read(): ids, score, text and spans in one call, the same as the calls above.
    ref.texts.forEach((text, s) => {
      const hyp = tr.read(s, 0, { text: true, spans: true });
      assert.deepEqual({ ...hyp, spans: undefined }, { ...results[s][0], spans: undefined });
      assert.deepEqual(textSpans(hyp.spans, text, hyp.text), tr.alignmentText(s, text), `${lang} text ${s}: spans`);
    });
    tr.free();
  }
  assert.ok(counts.tokens > 20 && counts.equal + counts.ties === counts.tokens);
  model.dispose();
});

test('sources: each sentence tokenized once, translated by its number as beginText translates its text', () => {
  const dir = new URL('residual-text/', FIXTURES);
  const ref = JSON.parse(readFileSync(new URL('reference.json', dir), 'utf8'));
  const model = engine.loadModel({ config: readFileSync(new URL('config.json', dir), 'utf8'),
    weights: readFileSync(new URL('model.safetensors', dir)), spm: readFileSync(new URL('spm.model', dir)) });
  const sources = model.sources();
  const counts = ['', ...ref.texts].map((text) => sources.add(text));
  assert.deepEqual(counts, [0, ...ref.texts.map((text) => model.sourceIds(text).length)]);
  assert.deepEqual(model.countIds(['', ...ref.texts]), counts, 'countIds counts as add does, in one call');
  const lang = Object.keys(ref.translations)[0];
  const which = [...ref.texts.keys()].reverse().map((i) => i + 1);
  const tr = sources.model.beginSources(sources, which, { targetLanguage: lang, beam: 1 });
  tr.run();
  const byText = model.translateTexts([...ref.texts].reverse(), { targetLanguage: lang, beam: 1 });
  assert.deepEqual(tr.results(true), byText);
  tr.free();
  assert.throws(() => model.beginSources(sources, [0], { targetLanguage: lang }), /empty input: text 0 has no tokens/);
  assert.throws(() => model.beginSources(sources, [1, counts.length], { targetLanguage: lang }), /sentence 1: no such source/);
  assert.throws(() => model.beginSources(sources, [1, -1], { targetLanguage: lang }), /no such source/);
  assert.throws(() => model.beginSources(sources, [1], { targetLanguage: 'xx' }), /cannot translate into "xx"/);
  sources.free();
  assert.throws(() => model.beginSources(sources, [1], { targetLanguage: lang }), /sources have been freed/);
  model.dispose();
});

