// Arithmetic figures of an engine build, for the benchmarks (Node and
// Chromium alike: no Node modules here).
//   - peak GFLOP/s: a dependency-free loop of 8 independent f32x4
//     accumulations in registers (the GEMM tile's shape), mul + add, or one
//     relaxed_madd for the relaxed build; the module is written here, byte
//     by byte (no toolchain needed);
//   - the GEMM kernel (rmt_kernel_gemm_f32) on given shapes.

const leb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
const f32 = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
export const PEAK_ROWS = 4, PEAK_COLS = 2; // as the GEMM's 4x8 tile: 4 broadcast rows x 2 weight vectors
const STEPS = 2;
const PEAK_FLOPS = PEAK_ROWS * PEAK_COLS * STEPS * 8; // per iteration: 4 lanes x (mul + add)

// (func (param $n i32) (result f32)): $n iterations of STEPS x ROWS x COLS
// independent accumulations, acc_ij += x_i * w_j (plain: mul then add;
// relaxed: relaxed_madd), in registers (no memory). Locals: 0 n, then w_j, x_i, acc_ij.
export function peakModule(relaxed) {
  const W = 1, X = W + PEAK_COLS, ACC = X + PEAK_ROWS;
  const splat = (value, local) => [0x43, ...f32(value), 0xfd, 0x13, 0x21, local];
  const ADD = [0xfd, 0xe4, 0x01], MUL = [0xfd, 0xe6, 0x01], MADD = [0xfd, 0x85, 0x02];
  const body = [1, PEAK_COLS + PEAK_ROWS + PEAK_ROWS * PEAK_COLS, 0x7b];
  for (let j = 0; j < PEAK_COLS; j++) body.push(...splat(1 + j * 1e-3, W + j));
  for (let i = 0; i < PEAK_ROWS; i++) body.push(...splat(1e-3 * (i + 1), X + i));
  body.push(0x02, 0x40, 0x03, 0x40, 0x20, 0, 0x45, 0x0d, 1); // block, loop, br_if n == 0
  for (let step = 0; step < STEPS; step++) {
    for (let i = 0; i < PEAK_ROWS; i++) {
      for (let j = 0; j < PEAK_COLS; j++) {
        const acc = ACC + i * PEAK_COLS + j;
        body.push(...(relaxed ? [0x20, X + i, 0x20, W + j, 0x20, acc, ...MADD] : [0x20, acc, 0x20, X + i, 0x20, W + j, ...MUL, ...ADD]), 0x21, acc);
      }
    }
  }
  body.push(0x20, 0, 0x41, 1, 0x6b, 0x21, 0, 0x0c, 0, 0x0b, 0x0b); // n--, br loop, end, end
  body.push(0x20, ACC);
  for (let a = 1; a < PEAK_ROWS * PEAK_COLS; a++) body.push(0x20, ACC + a, ...ADD);
  body.push(0xfd, 0x1f, 0, 0x0b); // extract lane 0, end
  const name = [...new TextEncoder().encode('peak')];
  return new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]), ...section(3, [1, 0]),
    ...section(7, [1, name.length, ...name, 0, 0]), ...section(10, [1, ...leb(body.length), ...body])]);
}

// GFLOP/s of `work` (flops per call), timed over enough calls for ~50 ms.
export function gflops(flops, work) {
  let calls = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) work();
    const ms = performance.now() - start;
    if (ms > 50) return (flops * calls) / (ms * 1e6);
    calls *= 2;
  }
}

// A function that measures the peak loop once (GFLOP/s).
export function peakRunner(relaxed) {
  const peak = new WebAssembly.Instance(new WebAssembly.Module(peakModule(relaxed))).exports.peak;
  const n = 1 << 16;
  return () => gflops(n * PEAK_FLOPS, () => peak(n));
}

// The GEMM kernel of `wasm` (js/wasm.js's Wasm) on C[M,N] = A[M,K] W[N,K]^T + b:
// { run: () => GFLOP/s, free }.
export function gemmBench(wasm, M, N, K) {
  const w = wasm.exports;
  let seed = 3;
  const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 2 ** 32 - 0.5; };
  const alloc = (n) => wasm.malloc(n * 4);
  const A = alloc(M * K), W = alloc(N * K), P = alloc(w.rmt_kernel_packed_weight_floats(N, K)), C = alloc(M * N), B = alloc(N);
  for (const [ptr, n] of [[A, M * K], [W, N * K], [B, N]]) for (let i = 0; i < n; i++) wasm.f32[(ptr >> 2) + i] = rand();
  w.rmt_kernel_pack_weight(P, W, N, K);
  const run = () => gflops(2 * M * N * K, () => w.rmt_kernel_gemm_f32(C, A, P, B, M, N, K));
  return { run, free: () => [A, W, P, C, B].forEach((p) => wasm.free(p)) };
}

// The GEMM shapes [label, M, N, K] a model of this config multiplies while
// translating batches of 32 sentences: decoder steps (32 rows greedy, 160 at
// beam 5), the output layer, and the encoder (32 sentences of ~40 tokens).
export function modelGemmShapes({ d_model: d, ffn_dim: ffn, vocab_size: V }) {
  const shapes = [];
  for (const [what, M] of [['decoder step, greedy', 32], ['decoder step, beam 5', 160], ['encoder', 1280]]) {
    shapes.push([`${what}: d x d`, M, d, d], [`${what}: ffn in`, M, ffn, d], [`${what}: ffn out`, M, d, ffn]);
    if (what !== 'encoder') shapes.push([`${what}: output layer`, M, V, d]);
  }
  return shapes;
}

// Best of `rounds` for each shape, and all shapes together (total flops over
// total time, one call of each): { shapes: [{ label, M, N, K, gflops }], gflops }.
export function gemmFigures(wasm, shapes, rounds) {
  const out = [];
  let flops = 0, seconds = 0;
  for (const [label, M, N, K] of shapes) {
    const g = gemmBench(wasm, M, N, K);
    let best = 0;
    for (let r = 0; r < rounds; r++) best = Math.max(best, g.run());
    g.free();
    out.push({ label, M, N, K, gflops: best });
    flops += 2 * M * N * K;
    seconds += (2 * M * N * K) / (best * 1e9);
  }
  return { shapes: out, gflops: flops / seconds / 1e9 };
}
