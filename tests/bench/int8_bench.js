// int8 weights against float32, and the relaxed-SIMD build against the plain
// SIMD128 one, side by side in one process, in rounds that alternate between
// the four (best of the rounds: the machine is shared): batched greedy
// translation (all sentences in one call) on a random model of the default
// shape (tests/bench/random.js; the int8 one has I8 matrices with row scales,
// as models/quantize.py writes them), target lengths forced equal (20 tokens).
//   target tokens/s: f32 plain, int8 plain, f32 relaxed, int8 relaxed, and
//   the ratios int8/f32 (plain) and relaxed/plain (int8).
// Without relaxed SIMD in the runtime (Node 20: --experimental-wasm-relaxed-simd)
// only the plain columns run.
//
//   node --experimental-wasm-relaxed-simd tests/bench/int8_bench.js [--quick] [--sentences N]

import { readFileSync } from 'node:fs';
import { Engine } from '../../js/engine/binding.js';
import { DEFAULT_WASM, RELAXED_WASM, packageUrl } from '../../js/defaults.js';
import { hasRelaxedSimd } from '../../js/util/env.js';
import { DEFAULT_SHAPE, randomModel, randomSentences } from './random.js';
import { gemmBench, gemmBenchI8 } from './kernels.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const ROUNDS = quick ? 2 : 5;
const COUNT = Number(args[args.indexOf('--sentences') + 1]) || (quick ? 64 : 200);
const TARGET = 20;

const relaxedReal = hasRelaxedSimd() && !readFileSync(packageUrl(RELAXED_WASM)).equals(readFileSync(packageUrl(DEFAULT_WASM)));
const builds = [['plain', DEFAULT_WASM], ...(relaxedReal ? [['relaxed', RELAXED_WASM]] : [])];
const f32Files = randomModel(DEFAULT_SHAPE);
const int8Files = randomModel(DEFAULT_SHAPE, 1, { int8: true });
const sentences = randomSentences(COUNT, DEFAULT_SHAPE.vocab_size, 11);
const options = { beam: 1, maxLenA: 0, maxLenB: TARGET, minLen: TARGET, batch: COUNT };

// ---- the GEMM kernels alone on the default model's shapes (rmt_kernel_gemm_f32 /
// rmt_kernel_gemm_i8, activations quantized inside), GFLOP/s counting 2 M N K

const engines = [];
for (const [build, file] of builds) engines.push([build, await Engine.load(packageUrl(file))]);
if (relaxedReal) {
  // The relaxed dot serves int8 layers whose input is >= 0 (fc2) where the runtime computes it as specified.
  const used = engines[1][1].wasm.exports.rmt_kernel_i8_relaxed_dot();
  console.log(`relaxed build, int8: ${used === 2 ? 'i32x4.relaxed_dot_i8x16_i7x16_add_s for every 8-bit layer (bytes 128..255 exact here: VNNI)' :
    used ? 'i32x4.relaxed_dot_i8x16_i7x16_add_s on inputs >= 0 (fc2)' :
    'the plain dot_i16x8 kernel everywhere (this runtime\'s relaxed dot does not give the specified sums: Node 20)'}`);
}
const { d_model: d, ffn_dim: ffn, vocab_size: V } = DEFAULT_SHAPE;
const shapes = [['decoder, 32 rows', 32, d, d, 0], ['fc1', 32, ffn, d, 0], ['fc2 (input >= 0)', 32, d, ffn, 1],
  ['output layer', 32, V, d, 0], ['encoder, 640 rows', 640, d, d, 0], ['fc1', 640, ffn, d, 0], ['fc2 (input >= 0)', 640, d, ffn, 1]];
const columns = engines.flatMap(([build]) => [`${build} f32`, `${build} int8`]);
console.log('GEMM kernels, GFLOP/s (best of rounds)');
console.log(`shape                     M      N      K ${columns.map((c) => c.padStart(13)).join('')}   int8/f32 plain${relaxedReal ? '   int8 relaxed/plain' : ''}`);
for (const [label, M, N, K, nonneg] of shapes) {
  const gemms = engines.flatMap(([, { wasm }]) => [gemmBench(wasm, M, N, K), gemmBenchI8(wasm, M, N, K, nonneg)]);
  const best = gemms.map(() => 0);
  for (let r = 0; r < ROUNDS; r++) gemms.forEach((g, i) => { best[i] = Math.max(best[i], g.run()); });
  gemms.forEach((g) => g.free());
  console.log(`${label.padEnd(20)} ${String(M).padStart(6)} ${String(N).padStart(6)} ${String(K).padStart(6)} ` +
    `${best.map((g) => g.toFixed(1).padStart(13)).join('')}   ${(best[1] / best[0]).toFixed(2).padStart(14)}` +
    `${relaxedReal ? (best[3] / best[1]).toFixed(2).padStart(21) : ''}`);
}

// ---- batched greedy translation

const runs = [];
for (const [build, engine] of engines) {
  for (const [kind, files] of [['f32', f32Files], ['int8', int8Files]]) {
    runs.push({ build, kind, model: engine.loadModel(files), best: 0 });
  }
}

// Target tokens/s of one call translating every sentence.
function tokensPerSecond(model) {
  const start = performance.now();
  const hyps = model.translateIds(sentences, options);
  const seconds = (performance.now() - start) / 1000;
  return hyps.reduce((n, h) => n + h[0].ids.length + 1, 0) / seconds;  // + </s>
}

console.log(`int8 vs f32, relaxed vs plain: batched greedy, ${COUNT} random sentences in one call, ${TARGET} target tokens each, ` +
  `random model of the default shape (d=${DEFAULT_SHAPE.d_model}, ffn ${DEFAULT_SHAPE.ffn_dim}, ` +
  `${DEFAULT_SHAPE.encoder_layers}+${DEFAULT_SHAPE.decoder_layers} layers, vocab ${DEFAULT_SHAPE.vocab_size}); best of ${ROUNDS} alternating rounds`);
if (!relaxedReal) console.log('(relaxed SIMD unavailable here: node --experimental-wasm-relaxed-simd, and a real relaxed build, for its columns)');
for (const r of runs) tokensPerSecond(r.model);  // warm up
for (let round = 0; round < ROUNDS; round++) {
  for (const r of runs) r.best = Math.max(r.best, tokensPerSecond(r.model));
}
const get = (build, kind) => runs.find((r) => r.build === build && r.kind === kind)?.best;
console.log('build     f32 tok/s   int8 tok/s   int8/f32');
for (const [build] of builds) {
  const f = get(build, 'f32'), q = get(build, 'int8');
  console.log(`${build.padEnd(8)} ${f.toFixed(0).padStart(10)} ${q.toFixed(0).padStart(12)} ${(q / f).toFixed(2).padStart(10)}`);
}
if (relaxedReal) {
  console.log(`relaxed/plain: f32 ${(get('relaxed', 'f32') / get('plain', 'f32')).toFixed(2)}, ` +
    `int8 ${(get('relaxed', 'int8') / get('plain', 'int8')).toFixed(2)}; ` +
    `int8 relaxed / f32 plain ${(get('relaxed', 'int8') / get('plain', 'f32')).toFixed(2)}`);
}

