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
import { Engine } from '../../js/engine.js';
import { DEFAULT_WASM, RELAXED_WASM, packageUrl } from '../../js/defaults.js';
import { hasRelaxedSimd } from '../../js/env.js';
import { DEFAULT_SHAPE, randomModel, randomSentences } from './random.js';

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

// Calls per second of work(), timed over at least 50 ms.
function callsPerSecond(work) {
  for (let calls = 1; ; calls *= 2) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) work();
    const ms = performance.now() - start;
    if (ms > 50) return (calls * 1000) / ms;
  }
}

function gemmRun(wasm, M, N, K, kind, nonneg) {
  const w = wasm.exports;
  let seed = 5;
  const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 2 ** 32 - 0.5; };
  const ptrs = [];
  const alloc = (bytes) => { const p = wasm.malloc(bytes); ptrs.push(p); return p; };
  const A = alloc(M * K * 4), C = alloc(M * N * 4), B = alloc(N * 4);
  for (let i = 0; i < M * K; i++) wasm.f32[(A >> 2) + i] = nonneg ? Math.max(0, rand()) : rand();
  for (let i = 0; i < N; i++) wasm.f32[(B >> 2) + i] = rand();
  let call;
  if (kind === 'f32') {
    const W = alloc(N * K * 4), P = alloc(w.rmt_kernel_packed_weight_floats(N, K) * 4);
    for (let i = 0; i < N * K; i++) wasm.f32[(W >> 2) + i] = rand();
    w.rmt_kernel_pack_weight(P, W, N, K);
    call = () => w.rmt_kernel_gemm_f32(C, A, P, B, M, N, K);
  } else {
    const W = alloc(N * K), P = alloc(w.rmt_kernel_packed_weight_i8_bytes(N, K, nonneg)), S = alloc(N * 4);
    const scratch = alloc(w.rmt_kernel_quantized_bytes(M, K));
    const bytes = new Int8Array(wasm.memory.buffer, W, N * K);
    for (let i = 0; i < N * K; i++) bytes[i] = Math.round(rand() * 254);
    for (let i = 0; i < N; i++) wasm.f32[(S >> 2) + i] = 1 / 127;
    w.rmt_kernel_pack_weight_i8(P, W, N, K, nonneg);
    call = () => w.rmt_kernel_gemm_i8(C, A, scratch, P, S, B, M, N, K, nonneg);
  }
  return { run: () => (2 * M * N * K * callsPerSecond(call)) / 1e9, free: () => ptrs.forEach((p) => wasm.free(p)) };
}

const engines = [];
for (const [build, file] of builds) engines.push([build, await Engine.load(packageUrl(file))]);
if (relaxedReal) {
  // The relaxed dot serves int8 layers whose input is >= 0 (fc2) where the runtime computes it as specified.
  const used = engines[1][1].wasm.exports.rmt_kernel_i8_relaxed_dot();
  console.log(`relaxed build, int8: ${used ? 'i32x4.relaxed_dot_i8x16_i7x16_add_s on inputs >= 0 (fc2)' :
    'the plain dot_i16x8 kernel everywhere (this runtime\'s relaxed dot does not give the specified sums: Node 20)'}`);
}
const { d_model: d, ffn_dim: ffn, vocab_size: V } = DEFAULT_SHAPE;
const shapes = [['decoder, 32 rows', 32, d, d, 0], ['fc1', 32, ffn, d, 0], ['fc2 (input >= 0)', 32, d, ffn, 1],
  ['output layer', 32, V, d, 0], ['encoder, 640 rows', 640, d, d, 0], ['fc1', 640, ffn, d, 0], ['fc2 (input >= 0)', 640, d, ffn, 1]];
const columns = engines.flatMap(([build]) => [`${build} f32`, `${build} int8`]);
console.log('GEMM kernels, GFLOP/s (best of rounds)');
console.log(`shape                     M      N      K ${columns.map((c) => c.padStart(13)).join('')}   int8/f32 plain${relaxedReal ? '   int8 relaxed/plain' : ''}`);
for (const [label, M, N, K, nonneg] of shapes) {
  const gemms = engines.flatMap(([, engine]) => ['f32', 'int8'].map((kind) => gemmRun(engine.wasm, M, N, K, kind, nonneg)));
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

