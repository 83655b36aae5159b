// Marian models, converted by models/convert_marian.py, against Marian itself:
// small random-weight models of each supported kind are generated here,
// written as Marian writes them (.bin, .npz), translated by Bergamot's WASM
// build (the devDependency @browsermt/bergamot-translator) and by ours, and
// the outputs must be identical, greedy and beam: Bergamot's text against
// our output ids as SentencePiece decodes them (our own text also carries
// source characters the vocabulary has no piece for, which Marian drops).
//
// Bergamot runs with skip-cost false (log-softmax scores, as marian-decoder
// by default; its browser worker's skip-cost true sums raw logits), normalize
// 1 and max-length-factor 2: ours with lenpen 1, maxLenA 2, maxLenB 0, minLen 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Engine } from '../js/engine/binding.js';
import { createTranslator } from '../js/index.js';
import { MARIAN_SHAPES, bergamotTranslate, convertMarian, loadConverted, random, randomMarianModel, quantiseMarian, randomShortlist, spmPieces, writeMarianBin, writeMarianNpz } from './lib/marian.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VOCAB = join(ROOT, 'tests', 'fixtures', 'models', 'residual-text', 'spm.model');
const PARITY = { maxLenA: 2, maxLenB: 0, minLen: 0, lenpen: 1 };
const TEXTS = [
  'Hello world.',
  'This is a test of the model',
  'la casa',
  'Un perro grande y negro corre por el parque.',
  'In the beginning God created the heaven and the earth.',
  '¿Dónde está la biblioteca?',
];

const work = mkdtempSync(join(tmpdir(), 'rmt-marian-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const engine = await Engine.load();
const vocab = readFileSync(VOCAB);

const convert = (modelPath, out, extra = []) => convertMarian(modelPath, VOCAB, out, extra);

function convertedModel(name, marian, format = 'bin', extra = []) {
  const path = join(work, `${name}.${format}`), out = join(work, `${name}-${format}`);
  writeFileSync(path, format === 'bin' ? writeMarianBin(marian) : writeMarianNpz(marian));
  const r = convert(path, out, ['--source-language', 'es', '--target-language', 'en', ...extra]);
  assert.equal(r.status, 0, r.stderr);
  return out;
}

const loadDir = (dir) => loadConverted(engine, dir);

const KINDS = [
  ['transformer, relu, tied embeddings', { seed: 11, activation: 'relu' }],
  ['transformer, swish, tied embeddings', { seed: 12, activation: 'swish' }],
  ['SSRU decoder (Firefox Translations students)', { seed: 13, decoder: 'ssru', activation: 'relu', encDepth: 3 }],
  ['transformer, separate encoder/decoder embeddings, tied output', { seed: 14, tied: 'target', activation: 'swish' }],
  ['transformer, output matrix of its own', { seed: 15, tied: 'none' }],
];

for (const [kind, options] of KINDS) {
  test(`Marian ${kind}: identical to Bergamot, greedy and beam 4`, async () => {
    const marian = randomMarianModel(options);
    const dir = convertedModel(`m${options.seed}`, marian);
    const model = loadDir(dir);
    const bin = writeMarianBin(marian);
    try {
      for (const beam of [1, 4]) {
        const theirs = await bergamotTranslate({ model: bin, vocab, options: { 'beam-size': beam } }, TEXTS);
        const ours = model.translateTexts(TEXTS, { beam, ...PARITY }).map((hyps) => model.detokenize(hyps[0].ids));
        assert.deepEqual(ours, theirs, `beam ${beam}`);
        // Outputs that end with </s> and outputs cut at the length limit both occur.
        console.log(`# ${kind}, beam ${beam}: ${TEXTS.length} sentences identical (${ours.map((t) => t.length).join(', ')} characters)`);
      }
    } finally {
      model.dispose();
    }
  });
}

// The real shapes (tests/lib/marian.js MARIAN_SHAPES): converted with
// model.yml in each form Marian's files have, and translating as Bergamot
// does; two sentences, greedy (the shapes matter here, not the weights).
const SHAPE_FORMS = { tiny: 'flow', base: 'yaml-cpp', 'base-memory': 'pyyaml', 'opus-mt': 'yaml-cpp' };
for (const [shape, form] of Object.entries(SHAPE_FORMS)) {
  test(`Marian ${shape} shape (model.yml in ${form} form): converted, identical to Bergamot`, async () => {
    const marian = randomMarianModel({ ...MARIAN_SHAPES[shape], seed: 91, yml: form });
    let dir;
    if (shape === 'opus-mt') {
      // OPUS-MT: .npz, ids from vocab.yml (here the spm's own order), source and target spm files of their own.
      const pieces = spmPieces(vocab), quote = (p) => JSON.stringify(p).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
      writeFileSync(join(work, 'shape.vocab.yml'), pieces.map((p, id) => `${quote(p)}: ${id}\n`).join(''));
      writeFileSync(join(work, 'source.spm'), vocab);
      writeFileSync(join(work, 'target.spm'), vocab);
      writeFileSync(join(work, 'shape.npz'), writeMarianNpz(marian));
      dir = join(work, 'shape-opus');
      const r = convertMarian(join(work, 'shape.npz'), join(work, 'shape.vocab.yml'), dir,
        ['--source-spm', join(work, 'source.spm'), '--target-spm', join(work, 'target.spm')]);
      assert.equal(r.status, 0, r.stderr);
    } else {
      dir = convertedModel(`shape-${shape}`, marian);
    }
    const model = loadDir(dir);
    try {
      const texts = TEXTS.slice(3, 5);
      const theirs = await bergamotTranslate({ model: writeMarianBin(marian), vocab }, texts);
      assert.deepEqual(model.translateTexts(texts, { beam: 1, ...PARITY }).map((hyps) => hyps[0].text), theirs);
      const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')), o = MARIAN_SHAPES[shape];
      assert.deepEqual([c.d_model, c.ffn_dim, c.encoder_layers, c.decoder_layers], [o.dim, o.ffn, o.encDepth, o.decDepth]);
      console.log(`# ${shape}: ${o.dim} / ${o.ffn}, ${o.encDepth} + ${o.decDepth} layers (${c.decoder_self}): ${texts.length} sentences identical`);
    } finally {
      model.dispose();
    }
  });
}

test('Marian with a lexical shortlist: identical to Bergamot with it, greedy and beam 4', async () => {
  // Few words always allowed and short lists, so that the shortlist decides
  // much of each output (and a translation without it differs).
  const marian = randomMarianModel({ seed: 16, decoder: 'ssru', activation: 'swish' });
  const shortlist = randomShortlist({ vocab: 150, first: 10, best: 6, seed: 17 });
  const shortlistPath = join(work, 'lex.s2t.bin');
  writeFileSync(shortlistPath, shortlist);
  const model = loadDir(convertedModel('lex', marian, 'bin', ['--shortlist', shortlistPath]));
  const bin = writeMarianBin(marian);
  try {
    for (const beam of [1, 4]) {
      const theirs = await bergamotTranslate({ model: bin, vocab, shortlist, options: { 'beam-size': beam } }, TEXTS);
      const ours = model.translateTexts(TEXTS, { beam, ...PARITY }).map((hyps) => model.detokenize(hyps[0].ids));
      assert.deepEqual(ours, theirs, `beam ${beam}`);
      const without = await bergamotTranslate({ model: bin, vocab, options: { 'beam-size': beam } }, TEXTS);
      const changed = without.filter((t, i) => t !== theirs[i]).length;
      assert.ok(changed > 0, 'the shortlist changes some translations');
      console.log(`# shortlist, beam ${beam}: ${TEXTS.length} sentences identical; ${changed} differ without the shortlist`);
    }
  } finally {
    model.dispose();
  }
});

test('an OPUS-MT model (ids from vocab.yml, text through source/target spm) translates as Marian does', async () => {
  // The same model twice: with the spm's ids (Bergamot runs it), and with
  // the ids of an OPUS-MT-style vocab.yml (</s>, <unk>, then the pieces
  // shuffled): embedding rows and output bias follow the renaming.
  const pieces = spmPieces(vocab);
  const rand = random(51), order = pieces.map((_, i) => i).filter((i) => !['</s>', '<unk>'].includes(pieces[i]));
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const ymlOrder = [pieces.indexOf('</s>'), pieces.indexOf('<unk>'), ...order];  // yml id -> spm id
  const quote = (p) => JSON.stringify(p).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const ymlPath = join(work, 'opus.vocab.yml');
  writeFileSync(ymlPath, ymlOrder.map((spmId, id) => `${quote(pieces[spmId])}: ${id}\n`).join(''));
  const marian = randomMarianModel({ seed: 52, activation: 'swish' });
  const renamed = {
    ...marian,
    items: marian.items.map((item) => {
      if (item.name !== 'Wemb' && item.name !== 'decoder_ff_logit_out_b') return item;
      const width = item.values.length / pieces.length, values = new Float32Array(item.values.length);
      ymlOrder.forEach((spmId, id) => values.set(item.values.subarray(spmId * width, (spmId + 1) * width), id * width));
      return { ...item, values };
    }),
  };
  const npz = join(work, 'opus.npz');
  writeFileSync(npz, writeMarianNpz(renamed));
  const out = join(work, 'opus');
  const r = convertMarian(npz, ymlPath, out, ['--source-spm', VOCAB, '--target-spm', VOCAB]);
  assert.equal(r.status, 0, r.stderr);
  const model = loadDir(out);
  try {
    for (const beam of [1, 4]) {
      const theirs = await bergamotTranslate({ model: writeMarianBin(marian), vocab, options: { 'beam-size': beam } }, TEXTS);
      const ours = model.translateTexts(TEXTS, { beam, ...PARITY }).map((hyps) => model.detokenize(hyps[0].ids));
      assert.deepEqual(ours, theirs, `beam ${beam}`);
    }
    // Target-only pieces (a target spm of its own) are appended as unused:
    // decodable, never produced by segmenting the source.
    const extra = spmPieces(readFileSync(join(ROOT, 'tests/fixtures/spm/bpe_unused.model'))).filter((p) => !pieces.includes(p)).slice(0, 50);
    const yml2 = join(work, 'opus2.vocab.yml');
    writeFileSync(yml2, readFileSync(ymlPath, 'utf8') + extra.map((p, i) => `${quote(p)}: ${pieces.length + i}\n`).join(''));
    const bigger = randomMarianModel({ seed: 53, vocab: pieces.length + extra.length });
    writeFileSync(join(work, 'opus2.npz'), writeMarianNpz(bigger));
    const r2 = convertMarian(join(work, 'opus2.npz'), yml2, join(work, 'opus2'),
      ['--source-spm', VOCAB, '--target-spm', join(ROOT, 'tests/fixtures/spm/bpe_unused.model')]);
    assert.equal(r2.status, 0, r2.stderr);
    const model2 = loadDir(join(work, 'opus2'));
    try {
      for (const text of TEXTS) assert.deepEqual(model2.tokenize(text), model.tokenize(text));
      const ids = [pieces.length, pieces.length + 1];
      assert.equal(model2.detokenize(ids), extra.slice(0, 2).join('').replaceAll('\u2581', ' ').trimStart());
    } finally {
      model2.dispose();
    }
  } finally {
    model.dispose();
  }
});

test('a Marian .npz converts to the same model as the .bin', () => {
  const marian = randomMarianModel({ seed: 21, activation: 'swish' });
  const fromBin = convertedModel('same', marian, 'bin'), fromNpz = convertedModel('same', marian, 'npz');
  for (const file of ['config.json', 'model.safetensors', 'spm.model']) {
    const a = readFileSync(join(fromBin, file)), b = readFileSync(join(fromNpz, file));
    if (file === 'config.json') {
      // Only the name of the file it came from differs.
      const ca = JSON.parse(a), cb = JSON.parse(b);
      delete ca.converted_from;
      delete cb.converted_from;
      assert.deepEqual(ca, cb);
    } else {
      assert.ok(a.equals(b), `${file} differs`);
    }
  }
});

// float16 keeps 11 significant bits: each weight moves by at most 2^-12 of
// itself (~2.4e-4), and so, summed over a few layers, do the logits. Measured
// on this model: the f32 conversion's greedy outputs teacher-forced through
// the f16 one give logits at most LOGIT_F16 / 4 away; greedy and beam-4 outputs
// identical (6/6: a seeded model and deterministic arithmetic, so the same on
// every machine) with scores (mean log-probability per token) at most
// SCORE_F16 / 4 apart. The bounds are four times what was measured: room for
// another float16 rounding of the same weights, and far below the changes a
// wrong conversion gives (a weight off by one float16 step in its top bits,
// a transposed or misnamed matrix: differences of order 1).
const LOGIT_F16 = 4 * 2.4e-3, SCORE_F16 = 4 * 7.1e-4;

test('--dtype f16 halves model.safetensors; the model translates as the float32 conversion does, within float16 rounding', () => {
  const marian = randomMarianModel({ seed: 23, decoder: 'ssru' });
  const path = join(work, 'half.bin');
  writeFileSync(path, writeMarianBin(marian));
  const full = convertedModel('full', marian), half = join(work, 'half');
  const r = convert(path, half, ['--dtype', 'f16']);
  assert.equal(r.status, 0, r.stderr);
  const ratio = readFileSync(join(half, 'model.safetensors')).length / readFileSync(join(full, 'model.safetensors')).length;
  assert.ok(ratio < 0.55, `size ratio ${ratio}`);  // the header stays the same size
  const a = loadDir(full), b = loadDir(half);
  try {
    let scoreDiff = 0;
    for (const beam of [1, 4]) {
      const ta = a.translateTexts(TEXTS, { beam, ...PARITY }), tb = b.translateTexts(TEXTS, { beam, ...PARITY });
      TEXTS.forEach((text, i) => {
        assert.deepEqual(tb[i][0].ids, ta[i][0].ids, `beam ${beam}: "${text}"`);
        scoreDiff = Math.max(scoreDiff, Math.abs(tb[i][0].score - ta[i][0].score));
      });
    }
    // Teacher forcing: the f32 model's greedy outputs fed to both, step by step.
    const V = a.config.vocab_size, sources = TEXTS.map((text) => a.sourceIds(text));
    const targets = a.translateIds(sources, { beam: 1, ...PARITY }).map(([best]) => best.ids);
    const T = Math.max(...targets.map((ids) => ids.length));
    const fa = a.begin(sources, { beam: 1, ...PARITY }), fb = b.begin(sources, { beam: 1, ...PARITY });
    let logitDiff = 0, compared = 0;
    try {
      for (let t = 0; t < T; t++) {
        // Step t is fed the token before it (step 0: </s>, which a Marian decoder's start ignores).
        const feed = targets.map((ids) => (t === 0 ? a.config.eos_id : ids[Math.min(t, ids.length) - 1]));
        const la = fa.forceStep(feed), lb = fb.forceStep(feed);
        targets.forEach((ids, s) => {
          if (t >= ids.length) return;
          for (let v = s * V; v < (s + 1) * V; v++) logitDiff = Math.max(logitDiff, Math.abs(la[v] - lb[v]));
          compared++;
        });
      }
    } finally {
      fa.free();
      fb.free();
    }
    console.log(`# f16: ${(100 * ratio).toFixed(0)} % of the size; outputs identical at beam 1 and 4, scores within ${scoreDiff.toExponential(2)}, ` +
      `logits of ${compared} forced steps within ${logitDiff.toExponential(2)}`);
    assert.ok(compared > 100 && logitDiff > 0, 'the weights were rounded, and compared over the outputs');
    assert.ok(logitDiff < LOGIT_F16, `logits ${logitDiff} apart (at most ${LOGIT_F16})`);
    assert.ok(scoreDiff < SCORE_F16, `scores ${scoreDiff} apart (at most ${SCORE_F16})`);
  } finally {
    a.dispose();
    b.dispose();
  }
});

test('intgemm8 weights are dequantised as Marian does (value * (1 / multiplier), stored transposed)', () => {
  // A model whose every weight matrix is exactly representable in int8 with
  // multiplier 64: dequantised, it must equal the float32 model's conversion.
  const marian = randomMarianModel({ seed: 22 });
  for (const item of marian.items) {
    for (let i = 0; i < item.values.length; i++) item.values[i] = Math.round(item.values[i] * 64) / 64 + 0;  // + 0: no -0 (int8 has none)
  }
  const quantised = quantiseMarian(marian, 64);
  const a = convertedModel('f32', marian), b = convertedModel('int8', quantised, 'bin', ['--dtype', 'f32']);
  // No value reaches the int8 limit (|w| * 64 < 127): the two conversions are equal to the bit.
  assert.ok(readFileSync(join(a, 'model.safetensors')).equals(readFileSync(join(b, 'model.safetensors'))));
});

test('intgemm8 weights kept as int8 (the default) are computed in int8, in less memory', () => {
  const marian = randomMarianModel({ seed: 22 });
  for (const item of marian.items) {
    for (let i = 0; i < item.values.length; i++) item.values[i] = Math.round(item.values[i] * 64) / 64 + 0;
  }
  const a = convertedModel('f32-kept', marian), c = convertedModel('int8-kept', quantiseMarian(marian, 64));
  const ratio = readFileSync(join(c, 'model.safetensors')).length / readFileSync(join(a, 'model.safetensors')).length;
  assert.ok(ratio < 0.4, `size ratio ${ratio}`);
  const ma = loadDir(a), mc = loadDir(c);
  try {
    // In memory: int8 matrices in 8 bits (kernels.h: every int8 kernel loads bytes), float32 biases,
    // LayerNorms and positions; this model's matrices are small, so those weigh more than in a real one
    // (measured: 47 %; 64 % when the plain build widened its int8 matrices to int16 at load).
    const memory = mc.bytes / ma.bytes;
    assert.ok(memory < 0.55, `engine memory ${mc.bytes} vs ${ma.bytes} bytes`);
    // The same weights, but activations quantized per row (kernels.h): outputs
    // differ where two words are near a tie (random weights have many; measured:
    // 5 of 6 texts identical at beam 1 and 4, their scores within 0.012).
    for (const beam of [1, 4]) {
      const ta = ma.translateTexts(TEXTS, { beam, ...PARITY }), tc = mc.translateTexts(TEXTS, { beam, ...PARITY });
      const same = TEXTS.map((_, i) => ta[i][0].text === tc[i][0].text);
      assert.ok(same.filter(Boolean).length >= 4, `beam ${beam}: ${same}`);
      for (let i = 0; i < TEXTS.length; i++) {
        if (same[i]) assert.ok(Math.abs(ta[i][0].score - tc[i][0].score) < 0.05, `beam ${beam} text ${i}: ${ta[i][0].score} vs ${tc[i][0].score}`);
      }
    }
    console.log(`# intgemm8 kept as int8: file ${(100 * ratio).toFixed(0)} %, engine memory ${(100 * memory).toFixed(0)} % of the float32 conversion's`);
  } finally {
    ma.dispose();
    mc.dispose();
  }
});

test('a converted Marian model loads with createTranslator({ model }) and translates like the engine', async () => {
  const marian = randomMarianModel({ seed: 31, decoder: 'ssru' });
  const dir = convertedModel('api', marian);
  const translator = await createTranslator({ model: dir, sourceLanguage: 'es', targetLanguage: 'en' });
  try {
    const model = loadDir(dir);
    try {
      const text = 'Un perro grande.';
      const expected = model.translateTexts([text], { beam: 5 })[0][0].text;
      assert.equal(await translator.translate(text, { beam: 5 }), expected);
    } finally {
      model.dispose();
    }
  } finally {
    translator.destroy();
  }
});

test('the converter refuses what it cannot convert exactly, with a message', () => {
  const cases = [
    ['pre-norm', { yml: (y) => y.replace('transformer-preprocess: ""', 'transformer-preprocess: n') }, /transformer-preprocess is 'n'/],
    ['gelu', { yml: (y) => y.replace('transformer-ffn-activation: relu', 'transformer-ffn-activation: gelu') }, /transformer-ffn-activation is 'gelu'/],
    ['average attention', { yml: (y) => y.replace('transformer-decoder-autoreg: self-attention', 'transformer-decoder-autoreg: average-attention') }, /transformer-decoder-autoreg/],
    ['an unknown parameter', { extra: { name: 'decoder_l1_self_Wq_gamma', shape: [1, 32], values: new Float32Array(32) } }, /does not know: decoder_l1_self_Wq_gamma/],
    ['a missing parameter', { drop: 'encoder_l2_ffn_W1' }, /missing parameter encoder_l2_ffn_W1/],
    ['float16 weights', { retype: ['encoder_l1_ffn_b1', 0x0402] }, /encoder_l1_ffn_b1 is float16/],
    ['tied layers', { yml: (y) => y.replace('transformer-tied-layers:\n  []', 'transformer-tied-layers:\n  - 1\n  - 1') }, /transformer-tied-layers is \[1, 1\]/],
    ['right-to-left decoding', { yml: (y) => y.replace('right-left: false', 'right-left: true') }, /right-left is 'true'/],
    ['a decoder FFN of another size', { yml: (y) => y.replace('transformer-decoder-dim-ffn: 0', 'transformer-decoder-dim-ffn: 128') }, /transformer-decoder-dim-ffn is '128'/],
    ['an option given twice', { yml: (y) => `${y}dim-emb: 32\n` }, /dim-emb/],
    ['a flag that is not true or false', { yml: (y) => y.replace('tied-embeddings-all: true', 'tied-embeddings-all: maybe') }, /tied-embeddings-all is 'maybe', not true or false/],
  ];
  for (const [what, change, message] of cases) {
    const marian = randomMarianModel({ seed: 41 });
    if (change.yml) marian.yml = change.yml(marian.yml);
    if (change.extra) marian.items.push(change.extra);
    if (change.drop) marian.items = marian.items.filter((it) => it.name !== change.drop);
    if (change.retype) {
      const it = marian.items.find((x) => x.name === change.retype[0]);
      it.type = change.retype[1];
    }
    const path = join(work, `bad-${what.replace(/\W/g, '')}.bin`);
    writeFileSync(path, writeMarianBin(marian));
    const r = convert(path, join(work, 'bad-out'));
    assert.equal(r.status, 1, what);
    assert.match(r.stderr, message, what);
  }
  const path = join(work, 'ok.bin');
  writeFileSync(path, writeMarianBin(randomMarianModel({ seed: 42 })));
  for (const [args, message] of [
    [['--shortlist', path], /shortlist: not a binary lexical shortlist/],
    [['--target-vocab', join(ROOT, 'tests', 'fixtures', 'spm', 'bpe_unused.model')], /separate source and target vocabularies/],
  ]) {
    const r = convert(path, join(work, 'bad-out'), args);
    assert.equal(r.status, 1);
    assert.match(r.stderr, message);
  }
  // Truncated models and shortlists: an error that says so, never a Python traceback.
  const whole = writeMarianBin(randomMarianModel({ seed: 43, dim: 8, ffn: 16, heads: 2, encDepth: 1, decDepth: 1 }));
  const lex = randomShortlist({ vocab: 150, first: 10, best: 3, seed: 44 });
  writeFileSync(join(work, 'whole.bin'), whole);
  for (const fraction of [0.001, 0.01, 0.05, 0.3, 0.9]) {
    writeFileSync(join(work, 'cut.bin'), whole.subarray(0, Math.floor(whole.length * fraction)));
    writeFileSync(join(work, 'cut-lex.bin'), lex.subarray(0, Math.floor(lex.length * fraction)));
    for (const [model, args] of [['cut.bin', []], ['whole.bin', ['--shortlist', join(work, 'cut-lex.bin')]]]) {
      const r = convert(join(work, model), join(work, 'bad-out'), args);
      assert.equal(r.status, 1, `${model} ${args} cut at ${fraction}`);
      assert.match(r.stderr, /^convert_marian: /);
      assert.doesNotMatch(r.stderr, /Traceback/);
    }
  }
  writeFileSync(join(work, 'junk.bin'), Buffer.from('not a model at all'));
  const r = convert(join(work, 'junk.bin'), join(work, 'bad-out'));
  assert.equal(r.status, 1);
  assert.match(r.stderr, /convert_marian: /);
  assert.doesNotMatch(r.stderr, /Traceback/);
});
