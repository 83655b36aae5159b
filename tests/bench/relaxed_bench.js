// The relaxed-SIMD build (dist/residual-mt-relaxed.wasm) against the plain
// SIMD128 build (dist/residual-mt.wasm), both loaded in this one process, in
// rounds that alternate between them; each figure is the best of its rounds
// (the machine is shared). Node 20 needs --experimental-wasm-relaxed-simd
// (bench.js starts this file with it).
//   - peak GFLOP/s: a dependency-free loop of 8 independent f32x4
//     accumulations in registers (the GEMM tile's shape), mul + add in the
//     plain column, relaxed_madd in the relaxed one;
//   - the GEMM kernel (rmt_kernel_gemm_f32) on the default model's shapes,
//     GFLOP/s and its fraction of that build's peak;
//   - greedy translation, batched (32 sentences a call): target tokens/s on a
//     default-sized random model (20 target tokens each) and on the shipped model.
//
//   node --experimental-wasm-relaxed-simd tests/bench/relaxed_bench.js [--quick]

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../js/engine/binding.js';
import { DEFAULT_WASM, RELAXED_WASM, packageUrl } from '../../js/defaults.js';
import { hasRelaxedSimd } from '../../js/util/env.js';
import { DEFAULT_SHAPE, randomModel, randomSentences } from './random.js';
import { PEAK_ROWS, PEAK_COLS, gemmBench, peakRunner } from './kernels.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;

if (!hasRelaxedSimd()) {
  console.log('relaxed SIMD is off in this runtime (Node 20: --experimental-wasm-relaxed-simd): relaxed benchmark skipped');
  process.exit(0);
}
if (readFileSync(packageUrl(RELAXED_WASM)).equals(readFileSync(packageUrl(DEFAULT_WASM)))) {
  console.log(`${RELAXED_WASM} is a copy of the plain build (built without clang-16): relaxed benchmark skipped`);
  process.exit(0);
}

const builds = [
  { name: 'plain', file: DEFAULT_WASM, relaxed: false },
  { name: 'relaxed', file: RELAXED_WASM, relaxed: true },
];
for (const b of builds) {
  b.engine = await Engine.load(packageUrl(b.file));
  b.peakRun = peakRunner(b.relaxed ? 'relaxed_madd' : 'f32');
}

console.log(`relaxed-SIMD build vs plain SIMD128 build, one process, best of ${ROUNDS} alternating rounds`);
const peaks = Object.fromEntries(builds.map((b) => [b.name, 0]));
for (let r = 0; r < 2 * ROUNDS; r++) for (const b of builds) peaks[b.name] = Math.max(peaks[b.name], b.peakRun());
console.log(`\npeak (${PEAK_ROWS}x${PEAK_COLS} independent f32x4 accumulators, weights loaded from L1, mul + add; relaxed: relaxed_madd): plain ${peaks.plain.toFixed(1)} GFLOP/s, ` +
  `relaxed ${peaks.relaxed.toFixed(1)} GFLOP/s, ratio ${(peaks.relaxed / peaks.plain).toFixed(2)}`);

// ---- the GEMM kernel on the default model's shapes

const { d_model: d, ffn_dim: ffn, vocab_size: V } = DEFAULT_SHAPE;
const shapes = [
  ['decoder step, 32 rows', 32, d, d], ['', 32, ffn, d], ['', 32, d, ffn], ['output layer', 32, V, d],
  ['encoder, 640 rows', 640, d, d], ['', 640, ffn, d], ['', 640, d, ffn],
];
console.log('\nGEMM kernel (rmt_kernel_gemm_f32), GFLOP/s and fraction of the build\'s peak');
console.log('shape                         M      N      K    plain      relaxed     relaxed/plain');
for (const [label, M, N, K] of shapes) {
  const runs = builds.map((b) => gemmBench(b.engine.wasm, M, N, K));
  const best = [0, 0];
  for (let r = 0; r < ROUNDS; r++) runs.forEach((g, i) => { best[i] = Math.max(best[i], g.run()); });
  runs.forEach((g) => g.free());
  const cell = (g, peak) => `${g.toFixed(1).padStart(5)} (${Math.round((100 * g) / peak)}%)`;
  console.log(`${label.padEnd(24)} ${String(M).padStart(6)} ${String(N).padStart(6)} ${String(K).padStart(6)}  ${cell(best[0], peaks.plain)}  ` +
    `${cell(best[1], peaks.relaxed)}   ${(best[1] / best[0]).toFixed(2)}`);
}

// ---- greedy batched translation

// Target tokens/s of translating `inputs` 32 at a time; also returns the outputs.
function translateAll(translate, inputs) {
  let tokens = 0;
  const outputs = [];
  const start = performance.now();
  for (let i = 0; i < inputs.length; i += 32) {
    for (const hyps of translate(inputs.slice(i, i + 32))) {
      tokens += hyps[0].ids.length + 1; // + </s>
      outputs.push(hyps[0].ids.join(' '));
    }
  }
  return { tokensPerSecond: tokens / ((performance.now() - start) / 1000), outputs };
}

function sideBySide(label, translators, inputs) {
  translators.forEach((t) => t(inputs.slice(0, 8))); // warm up: V8 tiers up hot wasm functions
  const best = [0, 0];
  let outputs;
  for (let r = 0; r < ROUNDS; r++) {
    outputs = translators.map((t, i) => {
      const got = translateAll(t, inputs);
      best[i] = Math.max(best[i], got.tokensPerSecond);
      return got.outputs;
    });
  }
  const same = outputs[0].filter((o, i) => o === outputs[1][i]).length;
  console.log(`${label.padEnd(58)} ${best[0].toFixed(0).padStart(7)} ${best[1].toFixed(0).padStart(9)}   ${(best[1] / best[0]).toFixed(2)}` +
    `   ${same}/${inputs.length} outputs equal`);
}

console.log('\ngreedy, batched 32 sentences a call: target tokens/s       plain   relaxed   relaxed/plain');
const count = quick ? 64 : 128;
{
  const files = randomModel(DEFAULT_SHAPE);
  const models = builds.map((b) => b.engine.loadModel(files));
  const sentences = randomSentences(count, V, 11);
  sideBySide(`default-sized random model, ${count} sentences x 20 tokens`,
    models.map((m) => (chunk) => m.translateIds(chunk, { beam: 1, maxLenA: 0, maxLenB: 20, minLen: 20 })), sentences);
  models.forEach((m) => m.dispose());
}
const shipped = `${root}models/es-en/`;
if (existsSync(`${shipped}model.safetensors`)) {
  const read = (f) => readFileSync(`${shipped}${f}`);
  const files = { config: read('config.json'), weights: read('model.safetensors'), spm: read('spm.model') };
  const models = builds.map((b) => b.engine.loadModel(files));
  const sample = JSON.parse(readFileSync(`${root}tests/fixtures/shipped-sample.json`, 'utf8'));
  let texts = sample.cases.filter((c) => c.source_language === 'es').map((c) => c.text);
  const distinct = texts.length;
  while (texts.length < count) texts = texts.concat(texts);
  texts = texts.slice(0, count);
  const targetLanguage = models[0].config.languages?.target_lang_tokens ? 'en' : undefined;
  sideBySide(`shipped model es->en, ${count} test-book verses (${distinct} distinct)`,
    models.map((m) => (chunk) => m.translateTexts(chunk, { beam: 1, targetLanguage })), texts);
  models.forEach((m) => m.dispose());
}
