// Arithmetic figures of an engine build, for the benchmarks (Node and
// Chromium alike: no Node modules here).
//   - peak: a dependency-free loop of 8 independent accumulations (the GEMM
//     tile's shape), the module written here, byte by byte (no toolchain
//     needed), of one of PEAK_KINDS: f32x4 mul + add, or relaxed_madd
//     (GFLOP/s); i32x4.dot_i16x8_s + i32x4.add, or
//     i32x4.relaxed_dot_i8x16_i7x16_add_s (GOP/s: a multiply-add counts 2,
//     as a GEMM's 2 M N K does); and dot_i16 with the int8 tile's loads;
//   - the GEMM kernels (rmt_kernel_gemm_f32, rmt_kernel_gemm_i8) on given shapes.

const leb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
const f32 = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
export const PEAK_ROWS = 4, PEAK_COLS = 2; // as the GEMM's 4x8 tile: 4 broadcast rows x 2 weight vectors
const STEPS = 4;

// Each kind: step(x, w, acc), the bytes of one accumulation acc += x . w
// (local indices); ops, the operations it counts; float: f32 lanes (else i32
// lanes, as the integer instructions read them).
const F32_ADD = [0xfd, 0xe4, 0x01], F32_MUL = [0xfd, 0xe6, 0x01], F32_MADD = [0xfd, 0x85, 0x02];
const I32_ADD = [0xfd, 0xae, 0x01], DOT_I16 = [0xfd, 0xba, 0x01], RELAXED_DOT_I8 = [0xfd, 0x93, 0x02];
const dotI16Step = (x, w, acc) => [0x20, acc, 0x20, x, 0x20, w, ...DOT_I16, ...I32_ADD];
export const PEAK_KINDS = {
  f32: { ops: 8, float: true, step: (x, w, acc) => [0x20, acc, 0x20, x, 0x20, w, ...F32_MUL, ...F32_ADD] }, // 4 lanes x (mul + add)
  relaxed_madd: { ops: 8, float: true, step: (x, w, acc) => [0x20, x, 0x20, w, 0x20, acc, ...F32_MADD] },
  dot_i16: { ops: 16, float: false, step: dotI16Step }, // 8 products, 8 adds
  // dot_i16 in the int8 tile's own form: int8 weights widened as they are
  // loaded (v128.load8x8_s), each row's pair of k broadcast from memory
  // (v128.load32_splat): what the tile's loop runs beyond the peak's
  dot_i16_tile: { ops: 16, float: false, widen: true, rowsLoaded: true, step: dotI16Step },
  relaxed_dot_i8: { ops: 32, float: false, step: (x, w, acc) => [0x20, w, 0x20, x, 0x20, acc, ...RELAXED_DOT_I8] }, // 16 and 16
};

// (func (param $n i32) (result i32)): $n iterations of STEPS x ROWS x COLS
// independent accumulations of PEAK_KINDS[kind]: rows in registers, weights
// loaded from a ring of RING iterations' worth in the module's memory (L1),
// as a GEMM loads its panel. Loaded, because a product of two values fixed
// in the loop need not be computed more than once: on values in registers,
// Chromium 156.0.8078.129 ran this loop at 163 GOP/s (dot_i16, Intel Xeon),
// more than 128-bit dot_i16x8 can give, and 94 on loaded weights.
// Locals: 0 n, 1 the iteration's address, then w_j, x_i, acc_ij.
const RING = 16;
export function peakModule(kind) {
  const { step, float, widen = false, rowsLoaded = false } = PEAK_KINDS[kind];
  const W_BYTES = widen ? 8 : 16, STEP_BYTES = PEAK_COLS * W_BYTES + (rowsLoaded ? PEAK_ROWS * 4 : 0);
  const ADDR = 1, W = 2, X = W + PEAK_COLS, ACC = X + PEAK_ROWS, STRIDE = STEPS * STEP_BYTES;
  // Small values (integers: bytes 1..7) that no accumulation can overflow or fold away.
  const splat = (i, local) => (float ? [0x43, ...f32(1 + i * 1e-3), 0xfd, 0x13] : [0x41, 1 + i, 0xfd, 0x11]).concat(0x21, local);
  const body = [2, 1, 0x7f, PEAK_COLS + PEAK_ROWS + PEAK_ROWS * PEAK_COLS, 0x7b];
  for (let i = 0; i < PEAK_ROWS; i++) body.push(...splat(i, X + i));
  body.push(0x02, 0x40, 0x03, 0x40, 0x20, 0, 0x45, 0x0d, 1); // block, loop, br_if n == 0
  body.push(0x20, 0, 0x41, RING - 1, 0x71, 0x41, ...leb(STRIDE), 0x6c, 0x21, ADDR); // addr = (n & (RING - 1)) * STRIDE
  for (let s = 0; s < STEPS; s++) {
    for (let j = 0; j < PEAK_COLS; j++) {  // w_j = v128.load, or v128.load8x8_s
      body.push(0x20, ADDR, ...(widen ? [0xfd, 0x01, 3] : [0xfd, 0x00, 4]), ...leb(s * STEP_BYTES + j * W_BYTES), 0x21, W + j);
    }
    for (let i = 0; i < PEAK_ROWS; i++) {
      if (rowsLoaded) body.push(0x20, ADDR, 0xfd, 0x09, 2, ...leb(s * STEP_BYTES + PEAK_COLS * W_BYTES + i * 4), 0x21, X + i); // v128.load32_splat
      for (let j = 0; j < PEAK_COLS; j++) {
        const acc = ACC + i * PEAK_COLS + j;
        body.push(...step(X + i, W + j, acc), 0x21, acc);
      }
    }
  }
  body.push(0x20, 0, 0x41, 1, 0x6b, 0x21, 0, 0x0c, 0, 0x0b, 0x0b); // n--, br loop, end, end
  body.push(0x20, ACC);
  for (let a = 1; a < PEAK_ROWS * PEAK_COLS; a++) body.push(0x20, ACC + a, ...I32_ADD); // the bits, summed: all live
  body.push(0xfd, 0x1b, 0, 0x0b); // i32x4.extract_lane 0, end
  const name = [...new TextEncoder().encode('peak')];
  return new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7f]), ...section(3, [1, 0]), ...section(5, [1, 0, 1]),
    ...section(7, [1, name.length, ...name, 0, 0]), ...section(10, [1, ...leb(body.length), ...body])]);
}

// The profiling build's operations (src/profile.c's names) that are
// products, and attention's (its products counted, softmax timed with them).
export const GEMM = new Set(['QKV projections', 'encoder-attention K/V', 'attention output projection', 'FFN up', 'FFN down',
  'SSRU products', 'output layer']);
export const ATTENTION = 'attention (softmax included)';

// The profiling build's counters (bash build.sh profile: src/profile.h), one
// { name, ms, work } an operation (work: its multiply-adds), since the last
// rmt_profile_reset(); `wasm` a js/engine/wasm.js Wasm.
export function profileOps(wasm) {
  const w = wasm.exports;
  return Array.from({ length: w.rmt_profile_ops() }, (_, op) => ({
    name: wasm.readString(w.rmt_profile_name(op)), ms: w.rmt_profile_ms(op), work: w.rmt_profile_work(op) }));
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

// A function that measures the peak loop of a kind once (G operations/s).
export function peakRunner(kind) {
  const peak = new WebAssembly.Instance(new WebAssembly.Module(peakModule(kind))).exports.peak;
  const n = 1 << 16;
  return () => gflops(n * PEAK_ROWS * PEAK_COLS * STEPS * PEAK_KINDS[kind].ops, () => peak(n));
}

// The GEMM kernel of `wasm` (js/engine/wasm.js's Wasm) on C[M,N] = A[M,K] W[N,K]^T + b:
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

// The int8 kernel of `wasm` on the same product, activations quantized
// inside (rmt_kernel_gemm_i8: as the model runs an int8 layer; nonneg: its
// input is a ReLU's output, which the relaxed build's relaxed dot takes):
// { run: () => GOP/s, free }. copies > 1: that many packed copies of the
// weights, one a call in turn, so that each call finds its weights beyond
// L2 as a model's step does (it reads every product's weights once).
export function gemmBenchI8(wasm, M, N, K, nonneg, copies = 1) {
  const w = wasm.exports;
  let seed = 5;
  const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 2 ** 32 - 0.5; };
  const ptrs = [];
  const alloc = (bytes) => { const p = wasm.malloc(bytes); ptrs.push(p); return p; };
  const A = alloc(M * K * 4), C = alloc(M * N * 4), B = alloc(N * 4), S = alloc(N * 4), W = alloc(N * K);
  const scratch = alloc(w.rmt_kernel_quantized_bytes(M, K));
  for (let i = 0; i < M * K; i++) wasm.f32[(A >> 2) + i] = nonneg ? Math.max(0, rand()) : rand();
  for (let i = 0; i < N; i++) wasm.f32[(B >> 2) + i] = rand(), wasm.f32[(S >> 2) + i] = 1 / 127;
  const bytes = new Int8Array(wasm.memory.buffer, W, N * K);
  for (let i = 0; i < N * K; i++) bytes[i] = Math.round(rand() * 254);
  const packed = Array.from({ length: copies }, () => {
    const P = alloc(w.rmt_kernel_packed_weight_i8_bytes(N, K, nonneg));
    w.rmt_kernel_pack_weight_i8(P, W, N, K, nonneg);
    return P;
  });
  let call = 0;
  const run = () => gflops(2 * M * N * K, () => w.rmt_kernel_gemm_i8(C, A, scratch, packed[call++ % copies], S, B, M, N, K, nonneg));
  return { run, free: () => ptrs.forEach((p) => wasm.free(p)) };
}

// The GEMM shapes [label, M, N, K, reluInput] a model of this config
// multiplies while translating batches of 32 sentences: decoder steps (32
// rows greedy, 160 at beam 5), the output layer, and the encoder (32
// sentences of ~40 tokens); reluInput: the input is a ReLU's output (fc2).
export function modelGemmShapes({ d_model: d, ffn_dim: ffn, vocab_size: V, activation }) {
  const shapes = [];
  for (const [what, M] of [['decoder step, greedy', 32], ['decoder step, beam 5', 160], ['encoder', 1280]]) {
    shapes.push([`${what}: d x d`, M, d, d, false], [`${what}: ffn in`, M, ffn, d, false], [`${what}: ffn out`, M, d, ffn, activation === 'relu']);
    if (what !== 'encoder') shapes.push([`${what}: output layer`, M, V, d, false]);
  }
  return shapes;
}

// Best of `rounds` for each shape, and all shapes together (total operations
// over total time, one call of each), of the f32 kernel or (int8) the int8
// one: { shapes: [{ label, M, N, K, gflops }], gflops }.
export function gemmFigures(wasm, shapes, rounds, int8 = false) {
  const out = [];
  let flops = 0, seconds = 0;
  for (const [label, M, N, K, reluInput] of shapes) {
    const g = int8 ? gemmBenchI8(wasm, M, N, K, reluInput) : gemmBench(wasm, M, N, K);
    let best = 0;
    for (let r = 0; r < rounds; r++) best = Math.max(best, g.run());
    g.free();
    out.push({ label, M, N, K, gflops: best });
    flops += 2 * M * N * K;
    seconds += (2 * M * N * K) / (best * 1e9);
  }
  return { shapes: out, gflops: flops / seconds / 1e9 };
}
