// SIMD128 kernels (WebAssembly SIMD; SIMDe natively). Each mirrors its twin in
// kernels_ref.c; tails that do not fill a 4-lane vector are done in scalar code.
// The GEMM and attention products accumulate through rmt_f32x4_madd (simd.h):
// fused multiply-adds in the relaxed-SIMD build, a multiply and an add elsewhere.
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "simd.h"
#include "size.h"

static inline float hsum_f32x4(v128_t v) {
  return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) +
         wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

// ---------------------------------------------------------------- GEMM

size_t rmt_packed_weight_floats(int N, int K) {
  return rmt_size_mul((size_t)rmt_gemm_panels(N) * RMT_GEMM_NR, (size_t)K);  // saturates (size.h)
}

// Four rows of four values each, transposed: column k of them is cols[k].
static inline void transpose_4x4(const v128_t rows[4], v128_t cols[4]) {
  v128_t r01_lo = wasm_i32x4_shuffle(rows[0], rows[1], 0, 4, 1, 5), r23_lo = wasm_i32x4_shuffle(rows[2], rows[3], 0, 4, 1, 5);
  v128_t r01_hi = wasm_i32x4_shuffle(rows[0], rows[1], 2, 6, 3, 7), r23_hi = wasm_i32x4_shuffle(rows[2], rows[3], 2, 6, 3, 7);
  cols[0] = wasm_i32x4_shuffle(r01_lo, r23_lo, 0, 1, 4, 5);
  cols[1] = wasm_i32x4_shuffle(r01_lo, r23_lo, 2, 3, 6, 7);
  cols[2] = wasm_i32x4_shuffle(r01_hi, r23_hi, 0, 1, 4, 5);
  cols[3] = wasm_i32x4_shuffle(r01_hi, r23_hi, 2, 3, 6, 7);
}

void rmt_pack_weight(float *packed, const float *weight, int N, int K) {
  int panels = rmt_gemm_panels(N);
  for (int p = 0; p < panels; p++) {
    float *panel = packed + (size_t)p * RMT_GEMM_NR * K;
    int k_from = 0;
    if ((p + 1) * RMT_GEMM_NR <= N) {
      // A panel of whole rows: four columns at a time, two 4x4 transposes
      // (rows 0-3 and 4-7 of the panel) give four panel rows of 8.
      const float *rows = weight + (size_t)p * RMT_GEMM_NR * K;
      for (k_from = 0; k_from + 4 <= K; k_from += 4) {
        for (int half = 0; half < 2; half++) {
          v128_t in[4], out[4];
          for (int r = 0; r < 4; r++) in[r] = wasm_v128_load(rows + (size_t)(4 * half + r) * K + k_from);
          transpose_4x4(in, out);
          for (int c = 0; c < 4; c++) wasm_v128_store(panel + (size_t)(k_from + c) * RMT_GEMM_NR + 4 * half, out[c]);
        }
      }
    }
    for (int k = k_from; k < K; k++) {
      for (int j = 0; j < RMT_GEMM_NR; j++) {
        int n = p * RMT_GEMM_NR + j;
        panel[(size_t)k * RMT_GEMM_NR + j] = n < N ? weight[(size_t)n * K + k] : 0.0f;
      }
    }
  }
}

void rmt_gather_packed_weight(float *dst, const float *packed, const int *rows, int n, int K) {
  int panels = rmt_gemm_panels(n);
  for (int p = 0; p < panels; p++) {
    float *panel = dst + (size_t)p * RMT_GEMM_NR * K;
    for (int j = 0; j < RMT_GEMM_NR; j++) {
      int i = p * RMT_GEMM_NR + j;
      // Row rows[i] is lane rows[i] % 8 of its panel.
      const float *src = i < n ? packed + (size_t)(rows[i] / RMT_GEMM_NR) * RMT_GEMM_NR * K + rows[i] % RMT_GEMM_NR : NULL;
      for (int k = 0; k < K; k++) panel[(size_t)k * RMT_GEMM_NR + j] = src ? src[(size_t)k * RMT_GEMM_NR] : 0.0f;
    }
  }
}

// Adds the bias to two accumulator vectors and stores the first `cols` of
// them (a partial column panel goes through a small buffer).
static inline void store_tile_row(float *dst, v128_t lo, v128_t hi, const float *bias, int cols) {
  float tile[RMT_GEMM_NR] = {0};
  if (bias) memcpy(tile, bias, sizeof(float) * (size_t)cols);
  lo = wasm_f32x4_add(lo, wasm_v128_load(tile));
  hi = wasm_f32x4_add(hi, wasm_v128_load(tile + 4));
  rmt_store_f32x8_clipped(dst, lo, hi, cols);
}

// One row of A against the P panels of output features n..n+8P-1 (P = 1,
// 2 or 4, a constant after inlining; clipped at N): a[k] loaded once for all
// of them, 2P independent add chains.
static ALWAYS_INLINE void row_panels_f32(float *C, const float *a, const float *packed_weight, const float *bias,
                                         int n, int N, int K, int P) {
  size_t panel = (size_t)RMT_GEMM_NR * K;
  const float *w = packed_weight + (size_t)(n / RMT_GEMM_NR) * panel;
  v128_t c[8];
  for (int j = 0; j < 2 * P; j++) c[j] = wasm_f32x4_splat(0);
  for (int k = 0; k < K; k++, w += RMT_GEMM_NR) {
    v128_t x = wasm_f32x4_splat(a[k]);
    for (int q = 0; q < P; q++) {
      c[2 * q] = rmt_f32x4_madd(x, wasm_v128_load(w + q * panel), c[2 * q]);
      c[2 * q + 1] = rmt_f32x4_madd(x, wasm_v128_load(w + q * panel + 4), c[2 * q + 1]);
    }
  }
  for (int q = 0; q < P; q++) {
    int at = n + q * RMT_GEMM_NR, cols = N - at < RMT_GEMM_NR ? N - at : RMT_GEMM_NR;
    store_tile_row(C + at, c[2 * q], c[2 * q + 1], bias ? bias + at : NULL, cols);
  }
}

// One row of A against every panel: the tail when M is not a multiple of 4
// (in decoding M is often 1..3, where a 4-row tile would waste most of its
// work). Four whole panels at a time, then two, then one (1.10x one a call in
// Chromium against two at a time); each output still sums over k in order,
// exactly as the 4x8 tile does, so a row's result does not depend on which
// kernel (or which batch) computed it.
static void gemm_f32_1x8(float *C, const float *a, const float *packed_weight, const float *bias, int N, int K) {
  int n = 0;
  for (; n + 4 * RMT_GEMM_NR <= N; n += 4 * RMT_GEMM_NR) row_panels_f32(C, a, packed_weight, bias, n, N, K, 4);
  for (; n + 2 * RMT_GEMM_NR <= N; n += 2 * RMT_GEMM_NR) row_panels_f32(C, a, packed_weight, bias, n, N, K, 2);
  for (; n < N; n += RMT_GEMM_NR) row_panels_f32(C, a, packed_weight, bias, n, N, K, 1);
}

// Rows m..m+3 of C (row length N) against the panel of output features
// n..n+7: 4 rows of A broadcast one element at a time against 8 packed
// weights (two vectors), 8 accumulators.
static inline void tile_4x8(float *C, const float *A, const float *packed_weight, const float *bias, int m, int n,
                            int N, int K) {
  const float *a0 = A + (size_t)m * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;
  const float *w = packed_weight + (size_t)(n / RMT_GEMM_NR) * RMT_GEMM_NR * K;
  v128_t c00 = wasm_f32x4_splat(0), c01 = c00, c10 = c00, c11 = c00;
  v128_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  for (int k = 0; k < K; k++, w += RMT_GEMM_NR) {
    v128_t w0 = wasm_v128_load(w), w1 = wasm_v128_load(w + 4);
    v128_t x0 = wasm_f32x4_splat(a0[k]), x1 = wasm_f32x4_splat(a1[k]);
    v128_t x2 = wasm_f32x4_splat(a2[k]), x3 = wasm_f32x4_splat(a3[k]);
    c00 = rmt_f32x4_madd(x0, w0, c00);
    c01 = rmt_f32x4_madd(x0, w1, c01);
    c10 = rmt_f32x4_madd(x1, w0, c10);
    c11 = rmt_f32x4_madd(x1, w1, c11);
    c20 = rmt_f32x4_madd(x2, w0, c20);
    c21 = rmt_f32x4_madd(x2, w1, c21);
    c30 = rmt_f32x4_madd(x3, w0, c30);
    c31 = rmt_f32x4_madd(x3, w1, c31);
  }
  int cols = N - n < RMT_GEMM_NR ? N - n : RMT_GEMM_NR;
  const float *b = bias ? bias + n : NULL;
  float *dst = C + (size_t)m * N + n;
  store_tile_row(dst, c00, c01, b, cols);
  store_tile_row(dst + N, c10, c11, b, cols);
  store_tile_row(dst + 2 * (size_t)N, c20, c21, b, cols);
  store_tile_row(dst + 3 * (size_t)N, c30, c31, b, cols);
}

// Rows m..m+R-1 (R of 2 or 3: the rows a 4x8 tile leaves) against the panel
// of output features n..n+7, as tile_4x8 computes each of them.
static ALWAYS_INLINE void tile_rx8(float *C, const float *A, const float *packed_weight, const float *bias, int m,
                                   int n, int N, int K, int R) {
  const float *a = A + (size_t)m * K;
  const float *w = packed_weight + (size_t)(n / RMT_GEMM_NR) * RMT_GEMM_NR * K;
  v128_t c[3][2];
  for (int r = 0; r < R; r++) c[r][0] = c[r][1] = wasm_f32x4_splat(0);
  for (int k = 0; k < K; k++, w += RMT_GEMM_NR) {
    v128_t w0 = wasm_v128_load(w), w1 = wasm_v128_load(w + 4);
    for (int r = 0; r < R; r++) {
      v128_t x = wasm_f32x4_splat(a[(size_t)r * K + k]);
      c[r][0] = rmt_f32x4_madd(x, w0, c[r][0]);
      c[r][1] = rmt_f32x4_madd(x, w1, c[r][1]);
    }
  }
  int cols = N - n < RMT_GEMM_NR ? N - n : RMT_GEMM_NR;
  for (int r = 0; r < R; r++) store_tile_row(C + (size_t)(m + r) * N + n, c[r][0], c[r][1], bias ? bias + n : NULL, cols);
}

// 4x8 tiles over columns n_begin..n_end-1 of C; rows left over when M is not
// a multiple of 4 go through a 3x8 or 2x8 tile, or the 1x8 kernel, over the
// same columns (as a product of n_end - n_begin output features whose panels
// start at n_begin's).
static void gemm_f32_block(float *C, const float *A, const float *packed_weight, const float *bias, int M, int N,
                           int K, int n_begin, int n_end) {
  int m = 0;
  for (; m + RMT_GEMM_MR <= M; m += RMT_GEMM_MR) {
    for (int n = n_begin; n < n_end; n += RMT_GEMM_NR) tile_4x8(C, A, packed_weight, bias, m, n, N, K);
  }
  if (M - m == 3) {
    for (int n = n_begin; n < n_end; n += RMT_GEMM_NR) tile_rx8(C, A, packed_weight, bias, m, n, N, K, 3);
  } else if (M - m == 2) {
    for (int n = n_begin; n < n_end; n += RMT_GEMM_NR) tile_rx8(C, A, packed_weight, bias, m, n, N, K, 2);
  } else if (M - m == 1) {
    const float *panels = packed_weight + (size_t)(n_begin / RMT_GEMM_NR) * RMT_GEMM_NR * K;
    gemm_f32_1x8(C + (size_t)m * N + n_begin, A + (size_t)m * K, panels, bias ? bias + n_begin : NULL,
                 n_end - n_begin, K);
  }
}

// The sum of the bytes touched goes to a volatile, so that the loads stay.
static volatile int touched_sum;

void rmt_touch_lines(const void *p, size_t bytes) {
  const unsigned char *byte = (const unsigned char *)p;
  int sum = 0;
  for (size_t i = 0; i < bytes; i += 64) sum += byte[i];
  touched_sum = sum;
}

// Columns in blocks of at most RMT_GEMM_BLOCK_BYTES of weights, every row
// tile over a block while it is in cache, touched first where several tiles
// read it (as the int8 GEMM does); a value's sum does not depend on its block.
void rmt_gemm_f32_4x8_cols__wasmsimd(float *C, const float *A, const float *packed_weight, const float *bias,
                                     int M, int N, int K, int n_begin, int n_end) {
  size_t panel_bytes = (size_t)RMT_GEMM_NR * K * sizeof(float);
  int block = RMT_GEMM_NR * rmt_gemm_block_panels(panel_bytes);
  for (int n = n_begin; n < n_end; n += block) {
    int block_end = n_end - n < block ? n_end : n + block;
    if (M >= RMT_GEMM_TOUCH_ROWS) {  // the block's panels, the last one maybe partly filled
      rmt_touch_lines((const char *)packed_weight + (size_t)(n / RMT_GEMM_NR) * panel_bytes,
                      (size_t)rmt_gemm_panels(block_end - n) * panel_bytes);
    }
    gemm_f32_block(C, A, packed_weight, bias, M, N, K, n, block_end);
  }
}

void rmt_gemm_f32_4x8__wasmsimd(float *C, const float *A, const float *packed_weight, const float *bias,
                                int M, int N, int K) {
  rmt_gemm_f32_4x8_cols__wasmsimd(C, A, packed_weight, bias, M, N, K, 0, N);
}

// ---------------------------------------------------------------- LayerNorm

void rmt_layer_norm_f32__wasmsimd(float *out, const float *x, const float *gamma, const float *beta,
                                  int M, int D, float eps) {
  int D4 = D & ~3;
  for (int m = 0; m < M; m++) {
    const float *row = x + (size_t)m * D;
    float *dst = out + (size_t)m * D;
    v128_t acc = wasm_f32x4_splat(0);
    for (int i = 0; i < D4; i += 4) acc = wasm_f32x4_add(acc, wasm_v128_load(row + i));
    float sum = hsum_f32x4(acc);
    for (int i = D4; i < D; i++) sum += row[i];
    float mean = sum / D;
    v128_t mean4 = wasm_f32x4_splat(mean);
    acc = wasm_f32x4_splat(0);
    for (int i = 0; i < D4; i += 4) {
      v128_t c = wasm_f32x4_sub(wasm_v128_load(row + i), mean4);
      acc = wasm_f32x4_add(acc, wasm_f32x4_mul(c, c));
    }
    float var = hsum_f32x4(acc);
    for (int i = D4; i < D; i++) var += (row[i] - mean) * (row[i] - mean);
    var /= D;
    float inv_std = 1.0f / sqrtf(var + eps);
    v128_t inv4 = wasm_f32x4_splat(inv_std);
    for (int i = 0; i < D4; i += 4) {
      v128_t c = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(row + i), mean4), inv4);
      wasm_v128_store(dst + i, wasm_f32x4_add(wasm_f32x4_mul(c, wasm_v128_load(gamma + i)), wasm_v128_load(beta + i)));
    }
    for (int i = D4; i < D; i++) dst[i] = (row[i] - mean) * inv_std * gamma[i] + beta[i];
  }
}

// ---------------------------------------------------------------- elementwise

void rmt_relu_f32__wasmsimd(float *x, size_t n) {
  size_t n4 = n & ~(size_t)3;
  v128_t zero = wasm_f32x4_splat(0);
  for (size_t i = 0; i < n4; i += 4) wasm_v128_store(x + i, wasm_f32x4_max(wasm_v128_load(x + i), zero));
  for (size_t i = n4; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

// Eight halves at a time. Exponent and mantissa shifted into a float's place
// (h & 0x7fff) << 13 read as a float are the value times 2^-112 (a subnormal
// half becomes a subnormal float): one multiply by 2^112 rescales it exactly.
// Inf and NaN (exponent 0x1f) get the float's all-ones exponent instead; the
// sign bit moves to bit 31.
void rmt_f16_to_f32__wasmsimd(float *out, const unsigned char *src, size_t n) {
  size_t n8 = n & ~(size_t)7;
  const v128_t magnitude = wasm_i32x4_splat(0x7fff), sign_bit = wasm_i32x4_splat(0x8000);
  const v128_t exponent_half = wasm_i32x4_splat(0x7c00), exponent_float = wasm_i32x4_splat(0x7f800000);
  const v128_t scale = wasm_f32x4_splat(0x1p112f);
  for (size_t i = 0; i < n8; i += 8) {
    v128_t h8 = wasm_v128_load(src + 2 * i);
    v128_t halves[2] = {wasm_u32x4_extend_low_u16x8(h8), wasm_u32x4_extend_high_u16x8(h8)};
    for (int j = 0; j < 2; j++) {
      v128_t h = halves[j];
      v128_t value = wasm_f32x4_mul(wasm_i32x4_shl(wasm_v128_and(h, magnitude), 13), scale);
      v128_t special = wasm_i32x4_eq(wasm_v128_and(h, exponent_half), exponent_half);
      value = wasm_v128_or(value, wasm_v128_and(special, exponent_float));
      value = wasm_v128_or(value, wasm_i32x4_shl(wasm_v128_and(h, sign_bit), 16));
      wasm_v128_store(out + i + 4 * j, value);
    }
  }
  rmt_f16_to_f32__ref(out + n8, src + 2 * n8, n - n8);
}

// A float is Inf or NaN when its exponent bits are all ones: 16 values a
// step, and the plain twin finds which one in the step that has one.
size_t rmt_first_nonfinite_f32__wasmsimd(const float *x, size_t n) {
  size_t n16 = n & ~(size_t)15;
  const v128_t exponent = wasm_i32x4_splat(0x7f800000);
  for (size_t i = 0; i < n16; i += 16) {
    v128_t any = wasm_i32x4_splat(0);
    for (int j = 0; j < 16; j += 4) any = wasm_v128_or(any, wasm_i32x4_eq(wasm_v128_and(wasm_v128_load(x + i + j), exponent), exponent));
    if (wasm_v128_any_true(any)) return i + rmt_first_nonfinite_f32__ref(x + i, 16);
  }
  return n16 + rmt_first_nonfinite_f32__ref(x + n16, n - n16);
}

// 32 halves a step, as above.
size_t rmt_first_nonfinite_f16__wasmsimd(const unsigned char *src, size_t n) {
  size_t n32 = n & ~(size_t)31;
  const v128_t exponent = wasm_i16x8_splat(0x7c00);
  for (size_t i = 0; i < n32; i += 32) {
    v128_t any = wasm_i16x8_splat(0);
    for (int j = 0; j < 32; j += 8) {
      any = wasm_v128_or(any, wasm_i16x8_eq(wasm_v128_and(wasm_v128_load(src + 2 * (i + j)), exponent), exponent));
    }
    if (wasm_v128_any_true(any)) return i + rmt_first_nonfinite_f16__ref(src + 2 * i, 32);
  }
  return n32 + rmt_first_nonfinite_f16__ref(src + 2 * n32, n - n32);
}

void rmt_add_scaled_f32__wasmsimd(float *out, const float *a, const float *b, float scale, size_t n) {
  size_t n4 = n & ~(size_t)3;
  v128_t s = wasm_f32x4_splat(scale);
  for (size_t i = 0; i < n4; i += 4) {
    wasm_v128_store(out + i, wasm_f32x4_add(wasm_v128_load(a + i), wasm_f32x4_mul(wasm_v128_load(b + i), s)));
  }
  for (size_t i = n4; i < n; i++) out[i] = a[i] + b[i] * scale;
}

void rmt_scale_f32__wasmsimd(float *x, float scale, size_t n) {
  size_t n4 = n & ~(size_t)3;
  v128_t s = wasm_f32x4_splat(scale);
  for (size_t i = 0; i < n4; i += 4) wasm_v128_store(x + i, wasm_f32x4_mul(wasm_v128_load(x + i), s));
  for (size_t i = n4; i < n; i++) x[i] *= scale;
}

// ---------------------------------------------------------------- attention

// e^x on 4 lanes for x <= 0 (a logit less the row's max): x = k ln2 + r with
// |r| <= ln2 / 2, e^r by its Taylor polynomial to r^6 (relative error below
// 2e-7 there), 2^k put into the exponent bits. x below -87 gives e^-87
// (~1.6e-38) instead of less: nothing next to the max's e^0 = 1 in a sum.
static inline v128_t exp_nonpositive_f32x4(v128_t x) {
  x = wasm_f32x4_max(x, wasm_f32x4_splat(-87.0f));
  v128_t k = wasm_f32x4_nearest(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504f)));
  // r = x - k ln2, with ln2 in two parts so that k * ln2_hi is exact
  v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(k, wasm_f32x4_splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(k, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t p = wasm_f32x4_splat(1.0f / 720.0f);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 120.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 24.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 6.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(0.5f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f));
  v128_t two_k = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(k), wasm_i32x4_splat(127)), 23);
  return wasm_f32x4_mul(p, two_k);
}

void rmt_log_softmax_f32__wasmsimd(float *out, const float *x, int n) {
  int i = 0;
  v128_t max4 = wasm_f32x4_splat(-INFINITY);
  for (; i + 4 <= n; i += 4) max4 = wasm_f32x4_max(max4, wasm_v128_load(x + i));
  float max = fmaxf(fmaxf(wasm_f32x4_extract_lane(max4, 0), wasm_f32x4_extract_lane(max4, 1)),
                    fmaxf(wasm_f32x4_extract_lane(max4, 2), wasm_f32x4_extract_lane(max4, 3)));
  for (; i < n; i++) max = x[i] > max ? x[i] : max;
  v128_t vmax = wasm_f32x4_splat(max), sum4 = wasm_f32x4_splat(0.0f);
  for (i = 0; i + 4 <= n; i += 4) {
    sum4 = wasm_f32x4_add(sum4, exp_nonpositive_f32x4(wasm_f32x4_sub(wasm_v128_load(x + i), vmax)));
  }
  double sum = (double)hsum_f32x4(sum4);
  for (; i < n; i++) sum += expf(x[i] - max);
  float log_sum = (float)log(sum);
  v128_t vlog_sum = wasm_f32x4_splat(log_sum);
  for (i = 0; i + 4 <= n; i += 4) {
    wasm_v128_store(out + i, wasm_f32x4_sub(wasm_f32x4_sub(wasm_v128_load(x + i), vmax), vlog_sum));
  }
  for (; i < n; i++) out[i] = x[i] - max - log_sum;
}

// libm's expf as the WebAssembly build links it (Emscripten's musl: Arm's
// optimized-routines expf, EXP2F_TABLE_BITS 5, a cubic in double), two lanes
// at a time in f64x2: the same double operations in the same order, so the
// same float for every x (checked over every float in [-128, 90] against
// expf in the wasm build). A group of 4 with a lane where expf takes its
// special path (|x| >= 88 or NaN: tiny, overflowing or Inf/NaN results) is
// handed to expf itself. These constants are musl's __exp2f_data.
static const uint64_t exp2f_tab[32] = {
  0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
  0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
  0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
  0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
  0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
  0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
  0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
  0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};

static inline v128_t expf_f64x2(v128_t xd) {
  const double invln2_scaled = 0x1.71547652b82fep+0 * 32;
  const double c0 = 0x1.c6af84b912394p-5 / 32 / 32 / 32, c1 = 0x1.ebfce50fac4f3p-3 / 32 / 32,
               c2 = 0x1.62e42ff0c52d6p-1 / 32;
  // x * 32 / ln2 = k + r, k rounded half to even by musl's own step: z + 1.5 * 2^52
  // (|z| < 2^51 here) leaves k in the low bits of the sum, read as integers
  // without a conversion (SSE2 doubles, natively on i386 too: no excess precision)
  const v128_t shift = wasm_f64x2_splat(0x1.8p52);
  v128_t z = wasm_f64x2_mul(wasm_f64x2_splat(invln2_scaled), xd);
  v128_t ki = wasm_f64x2_add(z, shift);
  v128_t r = wasm_f64x2_sub(z, wasm_f64x2_sub(ki, shift));
  // s = 2^(k/32): the table's 2^((k % 32)/32) with k / 32 added to the
  // exponent (the sum's high bits shift out of the 64)
  uint64_t k0 = (uint64_t)wasm_i64x2_extract_lane(ki, 0), k1 = (uint64_t)wasm_i64x2_extract_lane(ki, 1);
  v128_t s = wasm_i64x2_add(wasm_i64x2_make((int64_t)exp2f_tab[k0 & 31], (int64_t)exp2f_tab[k1 & 31]),
                            wasm_i64x2_shl(ki, 52 - 5));
  // e^x ~= s * (c0 r^3 + c1 r^2 + c2 r + 1)
  z = wasm_f64x2_add(wasm_f64x2_mul(wasm_f64x2_splat(c0), r), wasm_f64x2_splat(c1));
  v128_t r2 = wasm_f64x2_mul(r, r);
  v128_t y = wasm_f64x2_add(wasm_f64x2_mul(wasm_f64x2_splat(c2), r), wasm_f64x2_splat(1.0));
  y = wasm_f64x2_add(wasm_f64x2_mul(z, r2), y);
  return wasm_f64x2_mul(y, s);
}

// expf of 4 lanes into out[0..3].
static inline void expf_f32x4(float *out, v128_t x) {
  v128_t special = wasm_i32x4_ge(wasm_v128_and(x, wasm_i32x4_splat(0x7fffffff)), wasm_i32x4_splat(0x42b00000));
  if (wasm_v128_any_true(special)) {
    float lanes[4];
    wasm_v128_store(lanes, x);
    for (int j = 0; j < 4; j++) out[j] = expf(lanes[j]);
    return;
  }
  v128_t lo = wasm_f32x4_demote_f64x2_zero(expf_f64x2(wasm_f64x2_promote_low_f32x4(x)));
  v128_t hi = wasm_f32x4_demote_f64x2_zero(expf_f64x2(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(x, x, 2, 3, 2, 3))));
  wasm_v128_store(out, wasm_i32x4_shuffle(lo, hi, 0, 1, 4, 5));
}

// rmt_swish_f32__ref 4 lanes at a time: its float operations in its order,
// expf as libm's (expf_f32x4), so the same floats in the wasm build.
void rmt_swish_f32__wasmsimd(float *x, size_t n) {
  size_t n4 = n & ~(size_t)3;
  v128_t one = wasm_f32x4_splat(1.0f);
  for (size_t i = 0; i < n4; i += 4) {
    v128_t v = wasm_v128_load(x + i);
    expf_f32x4(x + i, wasm_f32x4_neg(v));
    v128_t sigmoid = wasm_f32x4_div(one, wasm_f32x4_add(one, wasm_v128_load(x + i)));
    wasm_v128_store(x + i, wasm_f32x4_mul(v, sigmoid));
  }
  if (n4 < n) rmt_swish_f32__ref(x + n4, n - n4);
}

// rmt_ssru_cell_f32__ref 4 lanes at a time, its float operations in its
// order and expf as libm's (expf_f32x4): the same floats in the wasm build.
void rmt_ssru_cell_f32__wasmsimd(float *cell, float *out, const float *prev, const float *xw, const float *gate,
                                 int n) {
  v128_t one = wasm_f32x4_splat(1.0f), zero = wasm_f32x4_splat(0.0f);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    float e[4];
    expf_f32x4(e, wasm_f32x4_neg(wasm_v128_load(gate + i)));
    v128_t f = wasm_f32x4_div(one, wasm_f32x4_add(one, wasm_v128_load(e)));
    v128_t kept = prev ? wasm_f32x4_mul(f, wasm_v128_load(prev + i)) : zero;
    v128_t c = wasm_f32x4_add(kept, wasm_f32x4_mul(wasm_f32x4_sub(one, f), wasm_v128_load(xw + i)));
    wasm_v128_store(cell + i, c);
    wasm_v128_store(out + i, wasm_f32x4_pmax(zero, c));  // c > 0 ? c : 0, as the reference (NaN and -0 give 0)
  }
  if (i < n) rmt_ssru_cell_f32__ref(cell + i, out + i, prev ? prev + i : NULL, xw + i, gate + i, n - i);
}

// rmt_softmax_f32__ref with its expf 4 at a time (the same values: expf_f32x4) and
// the scaling by 1 / sum and the flush of subnormal weights in vectors; the
// max and the sum stay in its order. Lanes of x - max at or below -88, whose
// e^x is subnormal or 0 and so leaves the sum as it is and ends flushed, are
// 0 at once, not through expf's slow path (-inf included; NaN still takes it).
void rmt_softmax_f32__wasmsimd(float *x, int n) {
  float max = -INFINITY;
  for (int i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
  int i = 0;
  const v128_t zero = wasm_f32x4_splat(0.0f), vanishing = wasm_f32x4_splat(-88.0f);
  for (; i + 4 <= n; i += 4) {
    v128_t d = wasm_f32x4_sub(wasm_v128_load(x + i), wasm_f32x4_splat(max)), gone = wasm_f32x4_le(d, vanishing);
    expf_f32x4(x + i, wasm_v128_bitselect(zero, d, gone));
    wasm_v128_store(x + i, wasm_v128_andnot(wasm_v128_load(x + i), gone));
  }
  for (; i < n; i++) x[i] = expf(x[i] - max);
  float sum = 0.0f;
  for (i = 0; i < n; i++) sum += x[i];
  float inv = 1.0f / sum;
  v128_t inv4 = wasm_f32x4_splat(inv), smallest = wasm_f32x4_splat(FLT_MIN);
  for (i = 0; i + 4 <= n; i += 4) {
    v128_t w = wasm_f32x4_mul(wasm_v128_load(x + i), inv4);
    wasm_v128_store(x + i, wasm_v128_andnot(w, wasm_f32x4_lt(w, smallest)));
  }
  for (; i < n; i++) {
    x[i] *= inv;
    if (x[i] < FLT_MIN) x[i] = 0.0f;
  }
}

static inline float dot_f32(const float *a, const float *b, int n) {
  int n4 = n & ~3;
  v128_t acc = wasm_f32x4_splat(0);
  for (int i = 0; i < n4; i += 4) acc = rmt_f32x4_madd(wasm_v128_load(a + i), wasm_v128_load(b + i), acc);
  float sum = hsum_f32x4(acc);
  for (int i = n4; i < n; i++) sum += a[i] * b[i];
  return sum;
}

// probs (T, heads averaged) += this head's weights / H; the first head sets it.
static void add_head_probs(float *probs, const float *scores, int h, int T, int H) {
  if (!probs) return;
  float w = 1.0f / (float)H;
  for (int t = 0; t < T; t++) probs[t] = (h ? probs[t] : 0.0f) + scores[t] * w;
}

// Lanes ((0 + 1) + 2) + 3 of a0..a3 (hsum_f32x4's order) into out[0..3]: a
// 4x4 transpose, then three vector adds.
static inline void hsum4_f32x4(float *out, v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  v128_t t0 = wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5);
  v128_t t2 = wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7), t3 = wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7);
  v128_t sum = wasm_f32x4_add(wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5), wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7));
  sum = wasm_f32x4_add(sum, wasm_i32x4_shuffle(t2, t3, 0, 1, 4, 5));
  sum = wasm_f32x4_add(sum, wasm_i32x4_shuffle(t2, t3, 2, 3, 6, 7));
  wasm_v128_store(out, sum);
}

// dot_f32 of q with 4 keys at once (4 independent add chains), each sum in
// dot_f32's order: lanes ((0 + 1) + 2) + 3 after a 4x4 transpose, then the tail.
static inline void dot4_f32(float *out, const float *q, const float *const *keys, int off, int n) {
  int n4 = n & ~3;
  const float *k0 = keys[0] + off, *k1 = keys[1] + off, *k2 = keys[2] + off, *k3 = keys[3] + off;
  v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
  for (int i = 0; i < n4; i += 4) {
    v128_t x = wasm_v128_load(q + i);
    a0 = rmt_f32x4_madd(x, wasm_v128_load(k0 + i), a0);
    a1 = rmt_f32x4_madd(x, wasm_v128_load(k1 + i), a1);
    a2 = rmt_f32x4_madd(x, wasm_v128_load(k2 + i), a2);
    a3 = rmt_f32x4_madd(x, wasm_v128_load(k3 + i), a3);
  }
  hsum4_f32x4(out, a0, a1, a2, a3);
  for (int j = 0; j < 4; j++) {
    for (int i = n4; i < n; i++) out[j] += q[i] * keys[j][off + i];
  }
}

// dot4_f32 of two query rows q0, q1 with the same 4 keys: each key vector
// loaded once for both, 8 add chains; every sum in dot4_f32's order.
static inline void dot4x2_f32(float *out0, float *out1, const float *q0, const float *q1, const float *const *keys,
                              int off, int n) {
  int n4 = n & ~3;
  const float *k0 = keys[0] + off, *k1 = keys[1] + off, *k2 = keys[2] + off, *k3 = keys[3] + off;
  v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  for (int i = 0; i < n4; i += 4) {
    v128_t x = wasm_v128_load(q0 + i), y = wasm_v128_load(q1 + i), k;
    k = wasm_v128_load(k0 + i), a0 = rmt_f32x4_madd(x, k, a0), b0 = rmt_f32x4_madd(y, k, b0);
    k = wasm_v128_load(k1 + i), a1 = rmt_f32x4_madd(x, k, a1), b1 = rmt_f32x4_madd(y, k, b1);
    k = wasm_v128_load(k2 + i), a2 = rmt_f32x4_madd(x, k, a2), b2 = rmt_f32x4_madd(y, k, b2);
    k = wasm_v128_load(k3 + i), a3 = rmt_f32x4_madd(x, k, a3), b3 = rmt_f32x4_madd(y, k, b3);
  }
  hsum4_f32x4(out0, a0, a1, a2, a3);
  hsum4_f32x4(out1, b0, b1, b2, b3);
  for (int j = 0; j < 4; j++) {
    for (int i = n4; i < n; i++) out0[j] += q0[i] * keys[j][off + i], out1[j] += q1[i] * keys[j][off + i];
  }
}

// dst[0..E) = sum over t of p[t] * values[t][off..off+E), t in order (as a
// load-madd-store per t would give), 32 features at a time held in registers.
static void weighted_values(float *dst, const float *p, const float *const *values, int off, int T, int E) {
  int e = 0;
  for (; e + 32 <= E; e += 32) {
    v128_t acc[8];
    for (int j = 0; j < 8; j++) acc[j] = wasm_f32x4_splat(0);
    for (int t = 0; t < T; t++) {
      const float *v = values[t] + off + e;
      v128_t w = wasm_f32x4_splat(p[t]);
      for (int j = 0; j < 8; j++) acc[j] = rmt_f32x4_madd(w, wasm_v128_load(v + 4 * j), acc[j]);
    }
    for (int j = 0; j < 8; j++) wasm_v128_store(dst + e + 4 * j, acc[j]);
  }
  for (; e + 4 <= E; e += 4) {
    v128_t acc = wasm_f32x4_splat(0);
    for (int t = 0; t < T; t++) acc = rmt_f32x4_madd(wasm_f32x4_splat(p[t]), wasm_v128_load(values[t] + off + e), acc);
    wasm_v128_store(dst + e, acc);
  }
  for (; e < E; e++) {
    float acc = 0.0f;
    for (int t = 0; t < T; t++) acc += p[t] * values[t][off + e];
    dst[e] = acc;
  }
}

// weighted_values for two rows of weights p0, p1 over the same values: each
// value vector loaded once for both, 16 features of each row in registers;
// every sum over t in order, as weighted_values adds it.
static void weighted_values2(float *dst0, float *dst1, const float *p0, const float *p1, const float *const *values,
                             int off, int T, int E) {
  int e = 0;
  for (; e + 16 <= E; e += 16) {
    v128_t a[4], b[4];
    for (int j = 0; j < 4; j++) a[j] = b[j] = wasm_f32x4_splat(0);
    for (int t = 0; t < T; t++) {
      const float *v = values[t] + off + e;
      v128_t w0 = wasm_f32x4_splat(p0[t]), w1 = wasm_f32x4_splat(p1[t]);
      for (int j = 0; j < 4; j++) {
        v128_t x = wasm_v128_load(v + 4 * j);
        a[j] = rmt_f32x4_madd(w0, x, a[j]), b[j] = rmt_f32x4_madd(w1, x, b[j]);
      }
    }
    for (int j = 0; j < 4; j++) wasm_v128_store(dst0 + e + 4 * j, a[j]), wasm_v128_store(dst1 + e + 4 * j, b[j]);
  }
  if (e < E) {
    weighted_values(dst0 + e, p0, values, off + e, T, E - e);
    weighted_values(dst1 + e, p1, values, off + e, T, E - e);
  }
}

void rmt_attention_row_f32__wasmsimd(float *out, float *probs, const float *q, const float *const *keys,
                                     const float *const *values, int T, int H, int E, float *scores) {
  for (int h = 0; h < H; h++) {
    int off = h * E, t = 0;
    for (; t + 4 <= T; t += 4) dot4_f32(scores + t, q + off, keys + t, off, E);
    for (; t < T; t++) scores[t] = dot_f32(q + off, keys[t] + off, E);
    rmt_softmax_f32__wasmsimd(scores, T);
    add_head_probs(probs, scores, h, T, H);
    weighted_values(out + off, scores, values, off, T, E);
  }
}

void rmt_attention_rows_f32__wasmsimd(float *out, const float *q, int n, int D, const float *const *keys,
                                      const float *const *values, int T, int H, int E, float *scores) {
  int r = 0;
  for (; r + 2 <= n; r += 2) {
    float *out0 = out + (size_t)r * D, *out1 = out0 + D, *s0 = scores, *s1 = scores + T;
    const float *q0 = q + (size_t)r * D, *q1 = q0 + D;
    for (int h = 0; h < H; h++) {
      int off = h * E, t = 0;
      for (; t + 4 <= T; t += 4) dot4x2_f32(s0 + t, s1 + t, q0 + off, q1 + off, keys + t, off, E);
      for (; t < T; t++) s0[t] = dot_f32(q0 + off, keys[t] + off, E), s1[t] = dot_f32(q1 + off, keys[t] + off, E);
      rmt_softmax_f32__wasmsimd(s0, T);
      rmt_softmax_f32__wasmsimd(s1, T);
      weighted_values2(out0 + off, out1 + off, s0, s1, values, off, T, E);
    }
  }
  for (; r < n; r++) {
    rmt_attention_row_f32__wasmsimd(out + (size_t)r * D, NULL, q + (size_t)r * D, keys, values, T, H, E, scores);
  }
}
