// Parity on trained weights: small Marian-architecture es -> en models
// trained in PyTorch and written in Marian's own formats by
// tests/fixtures/make_marian_parity.py (tests/fixtures/marian-trained/: model.bin
// float32 and model.intgemm.alphas.bin, for an SSRU decoder and a
// self-attention one; the SSRU one also as model.npz), translated by Bergamot's WASM build and by ours from
// models/convert_marian.py's conversions, on held-out sentences (the
// corpus's modern-test: software messages and package descriptions of
// packages no training pair came from).
//
// Bergamot's API gives text, not ids or scores: its text is compared with
// our output ids as SentencePiece decodes them (as tests/marian.test.js
// does); our ids and scores are compared with the PyTorch reference's
// greedy outputs (pytorch-greedy.json, written with the models). Bergamot
// runs as tests/marian.test.js runs it (skip-cost false, normalize 1,
// max-length-factor 2), one sentence a call, with ssplit-mode sentence: a
// line is one sentence (its default would split a line with two sentences
// and translate each, where ours translates the line).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Engine } from '../js/engine/binding.js';
import { bergamotTranslate, convertMarian, loadConverted } from './lib/marian.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = join(ROOT, 'tests', 'fixtures', 'marian-trained');
const VOCAB = join(FIXTURE, 'vocab.spm');
const BLEU = join(ROOT, 'models', 'bleu.py');
const PARITY = { maxLenA: 2, maxLenB: 0, minLen: 0, lenpen: 1 };
const BERGAMOT = { 'ssplit-mode': 'sentence' };

const readLines = (path) => readFileSync(path, 'utf8').split('\n').slice(0, -1);
const TEXTS = readLines(join(FIXTURE, 'test.es'));
const REFS = readLines(join(FIXTURE, 'test.en'));
const vocab = readFileSync(VOCAB);

const work = mkdtempSync(join(tmpdir(), 'rmt-marian-trained-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const engine = await Engine.load();

function converted(decoder, file) {
  const out = join(work, `${decoder}-${file}`);
  const r = convertMarian(join(FIXTURE, decoder, file), VOCAB, out, ['--source-language', 'es', '--target-language', 'en']);
  assert.equal(r.status, 0, r.stderr);
  return out;
}

// Corpus BLEU of hyps against refs (models/bleu.py: sacreBLEU's defaults).
function bleu(hyps, refs) {
  const refPath = join(work, 'bleu-ref.txt');
  writeFileSync(refPath, refs.join('\n') + '\n');
  const r = spawnSync('python3', [BLEU, refPath], { input: hyps.join('\n') + '\n', encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return Number(/BLEU = ([\d.]+)/.exec(r.stdout)[1]);
}

const ours = (model, beam) => model.translateTexts(TEXTS, { beam, ...PARITY }).map((hyps) => hyps[0]);
const bergamot = (decoder, file, beam, gemm) => bergamotTranslate({
  model: readFileSync(join(FIXTURE, decoder, file)), vocab,
  options: { 'beam-size': beam, 'gemm-precision': gemm, ...BERGAMOT },
}, TEXTS);
const same = (a, b) => a.filter((t, i) => t === b[i]).length;

test('the trained fixtures: at least 200 held-out sentences; the model as .npz and as .bin converts alike', () => {
  assert.ok(TEXTS.length >= 200 && TEXTS.length === REFS.length, `${TEXTS.length} sentences, ${REFS.length} references`);
  // Marian's two float32 formats convert to the same model, byte for byte.
  const a = readFileSync(join(converted('ssru', 'model.npz'), 'model.safetensors'));
  const b = readFileSync(join(converted('ssru', 'model.bin'), 'model.safetensors'));
  assert.ok(a.equals(b), 'model.npz and model.bin convert differently');
});

const models = JSON.parse(readFileSync(join(FIXTURE, 'models.json'), 'utf8'));
const float32 = {};

for (const decoder of ['ssru', 'attention']) {
  test(`trained Marian, ${decoder} decoder, float32: the PyTorch reference's greedy ids and scores, Bergamot's outputs, greedy and beam 4`, async () => {
    const model = loadConverted(engine, converted(decoder, 'model.bin'));
    try {
      // Greedy ids as PyTorch computes them, scores to float32 rounding of
      // sums over up to 82 steps (measured: within 2e-6 of PyTorch's).
      const reference = JSON.parse(readFileSync(join(FIXTURE, decoder, 'pytorch-greedy.json'), 'utf8'));
      const greedy = ours(model, 1);
      let worst = 0;
      greedy.forEach((h, i) => {
        assert.deepEqual(h.ids, reference[i].ids, `sentence ${i}: ${TEXTS[i]}`);
        worst = Math.max(worst, Math.abs(h.score - reference[i].score));
      });
      assert.ok(worst < 1e-4, `scores differ from PyTorch's by up to ${worst}`);
      float32[decoder] = {};
      for (const beam of [1, 4]) {
        const theirs = await bergamot(decoder, 'model.bin', beam, 'float32');
        const text = (beam === 1 ? greedy : ours(model, beam)).map((h) => model.detokenize(h.ids));
        assert.deepEqual(text, theirs, `beam ${beam}`);
        float32[decoder][beam] = text;
        console.log(`# ${decoder} float32, beam ${beam}: ${TEXTS.length}/${TEXTS.length} identical to Bergamot; ` +
          `BLEU ${bleu(text, REFS).toFixed(2)} (trained ${models[decoder].training_minutes} min, ${models[decoder].updates} updates); ` +
          `greedy scores within ${worst.toExponential(1)} of PyTorch's`);
      }
    } finally {
      model.dispose();
    }
  });
}

// int8: Marian's intgemm8 weights, computed in int8 by both engines, which
// quantize activations differently: ours one scale a row (kernels.h; the
// output layer's rows in 16 bits), Marian one multiplier for the whole matrix
// (the batch's rows: with beam 4, the beam's), at run time (int8shiftAll:
// 127 / max |A|) or precomputed from a sample run (int8shiftAlphaAll: the
// model's *_QuantMultA, clamping what lies beyond), and intgemm (Bergamot's
// WASM fallback) sums pairs of products saturated to int16. Outputs then
// part where two words are near a tie: agreement is measured, not identity.
// FLOORS: the measured counts of outputs identical to ours (of 250), less 5
// (2 %: room for a change of summation order in either engine, which moves a
// near tie), and the largest BLEU gap between ours and Bergamot's int8 (to
// the reference; measured up to 0.57) as at most 1.0.
const FLOORS = {
  ssru: { 1: { int8shiftAll: 175, int8shiftAlphaAll: 145 }, 4: { int8shiftAll: 185, int8shiftAlphaAll: 146 } },
  attention: { 1: { int8shiftAll: 147, int8shiftAlphaAll: 127 } },
};
const BLEU_GAP = 1.0;
// PyTorch's simulations (tests/fixtures/make_marian_parity.py int8_product) of each
// engine's int8 match it but for a few near ties (measured 247 and 248 of
// 250 for ours, per row; 248 and 243 for Bergamot's int8shiftAlphaAll,
// intgemm with alphas): the floor 235 holds each to what it simulates.
// (Bergamot's int8shiftAll is simulated less closely for the self-attention
// decoder, 166: Marian projects the whole history's keys and values at each
// step, the multiplier then the history's, the simulation one row's.)
const SIMULATED_FLOOR = 235;

const simulated = Object.fromEntries(['ssru', 'attention'].map((d) => [d, JSON.parse(readFileSync(join(FIXTURE, d, 'pytorch-int8-greedy.json'), 'utf8'))]));

for (const decoder of ['ssru', 'attention']) {
  test(`trained Marian, ${decoder} decoder, intgemm8: agreement with Bergamot's int8, greedy${decoder === 'ssru' ? ' and beam 4' : ''}`, async () => {
    const model = loadConverted(engine, converted(decoder, 'model.intgemm.alphas.bin'));
    try {
      // Beam 4 for the SSRU model only (Firefox Translations' architecture): the test's time.
      for (const beam of decoder === 'ssru' ? [1, 4] : [1]) {
        const mine = ours(model, beam).map((h) => model.detokenize(h.ids));
        const f32 = float32[decoder]?.[beam];
        const row = { ours: bleu(mine, REFS) };
        const parts = [`ours ${row.ours.toFixed(2)}`];
        for (const gemm of ['int8shiftAll', 'int8shiftAlphaAll']) {
          const theirs = await bergamot(decoder, 'model.intgemm.alphas.bin', beam, gemm);
          row[gemm] = { identical: same(mine, theirs), bleu: bleu(theirs, REFS), mutual: bleu(mine, theirs), text: theirs };
          parts.push(`${gemm}: ${row[gemm].identical}/${TEXTS.length} identical to ours, BLEU ${row[gemm].bleu.toFixed(2)}, ` +
            `ours against it ${row[gemm].mutual.toFixed(2)}` + (f32 ? `, ${same(theirs, f32)} as its float32` : ''));
        }
        console.log(`# ${decoder} int8, beam ${beam}: BLEU ${parts.join('; ')}` +
          (f32 ? `; ours ${same(mine, f32)}/${TEXTS.length} as float32` : ''));
        if (beam === 1) {
          // The two ways of quantizing activations, each simulated in PyTorch
          // (pytorch-int8-greedy.json: "row" ours, "tensor" int8shiftAll's,
          // "alpha" int8shiftAlphaAll's), against both engines' greedy outputs.
          const sim = Object.fromEntries(Object.entries(simulated[decoder]).map(([way, ids]) => [way, ids.map((i) => model.detokenize(i))]));
          const against = (name, text) => `${name}: ` + Object.keys(sim).map((way) => `${way} ${same(text, sim[way])}`).join(', ');
          console.log(`# ${decoder} int8 greedy, identical to PyTorch's simulations of ${TEXTS.length}: ${against('ours', mine)}; ` +
            ['int8shiftAll', 'int8shiftAlphaAll'].map((g) => against(g, row[g].text)).join('; ') +
            (f32 ? `; ${against('float32', f32)}` : ''));
          assert.ok(same(mine, sim.row) >= SIMULATED_FLOOR, `ours: ${same(mine, sim.row)} as simulated per row`);
          const alpha = same(row.int8shiftAlphaAll.text, sim['intgemm-alpha']);
          assert.ok(alpha >= SIMULATED_FLOOR, `int8shiftAlphaAll: ${alpha} as simulated`);
        }
        for (const gemm of ['int8shiftAll', 'int8shiftAlphaAll']) {
          const floor = FLOORS[decoder][beam][gemm];
          assert.ok(row[gemm].identical >= floor, `beam ${beam} ${gemm}: ${row[gemm].identical} identical, fewer than ${floor}`);
          assert.ok(Math.abs(row.ours - row[gemm].bleu) <= BLEU_GAP, `beam ${beam} ${gemm}: BLEU ${row.ours} vs ${row[gemm].bleu}`);
        }
      }
    } finally {
      model.dispose();
    }
  });
}
