// Compute kernels, each variant by its name. Model code calls them through
// src/ops.h, by ISA-neutral names (rmt_layer_norm_f32, rmt_gemm_f32,
// rmt_linear_i8, ...), which maps each to the variant this build runs; the
// int8 products choose between the relaxed-dot and the dot_i16x8 kernel in
// the kernel layer too (per layer at load; rmt_gemm_i8_cols runs the one a
// layer was packed for).
// Each SIMD kernel (suffix __wasmsimd, WebAssembly SIMD128, or __wasmrelaxed,
// relaxed SIMD; SIMDe provides the same intrinsics natively) has a plain C
// twin (suffix __ref); those names are for the kernel tests
// (tests/c/test_kernels.c), which compare each kernel with its twin.
//
// Size letters, used in every signature:
//   M  rows of activations (tokens, or sentence x beam rows)
//   N  output features     K  input features (the reduced dimension)
//   D  model width (d_model)  T  number of keys   H  heads   E  head_dim (D / H)
// Arguments come outputs first, then inputs, then sizes. Matrices are row-major
// and dense (leading dimension = row length).
#ifndef RMT_KERNELS_H
#define RMT_KERNELS_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>

// ---- GEMM: C[M,N] = A[M,K] * W[N,K]^T + bias[N]  (W is torch's Linear.weight)
// The SIMD kernel reads W packed once at load time into panels of 8 output
// features: panel p holds W[8p..8p+7][k] for k = 0..K-1, interleaved as
// [k][8], zero-filled past N. bias may be NULL. A row of C is computed
// alike whatever rows are computed with it (4-row tiles, then one of the
// M % 4 rows left; each value sums over k in order): bit-identical in any
// batch, or in any thread's block of a batch's rows (src/transformer.c).
#define RMT_GEMM_NR 8
#define RMT_GEMM_MR 4  // rows of A a tile of the kernels computes at once
// The panels of RMT_GEMM_NR output features that n features fill, the last one maybe partly.
static inline int rmt_gemm_panels(int n) { return n / RMT_GEMM_NR + (n % RMT_GEMM_NR != 0); }
// The weights a batch's row tiles share while they stay in cache (the int8
// and float32 GEMMs), and how many panels of panel_bytes that is (one at least).
#ifndef RMT_GEMM_BLOCK_BYTES
#define RMT_GEMM_BLOCK_BYTES (64 * 1024)
#endif
static inline int rmt_gemm_block_panels(size_t panel_bytes) {
  return panel_bytes >= RMT_GEMM_BLOCK_BYTES ? 1 : (int)(RMT_GEMM_BLOCK_BYTES / panel_bytes);
}
// From this many rows, two or more 4-row tiles read each block, and the
// block's weights are touched first (rmt_touch_lines): a model's step reads
// each product's weights from beyond L2, and the first tile's own loads,
// each behind a chain of multiply-adds, keep few misses in flight (the int8
// GEMM at M 16 with its weights cold: 51 % of the dot peak in Node, 47 % in
// Chromium; touched first, 78 % and 72 %: tests/bench/gemm_sizes.js). One or
// two tiles of rows stream a block once or twice, which the hardware's
// prefetch keeps up with, and touching would only add loads.
#define RMT_GEMM_TOUCH_ROWS 8
// One load a 64-byte cache line over [p, p + bytes): independent loads, so
// the block arrives at the memory's bandwidth, not at its latency.
void rmt_touch_lines(const void *p, size_t bytes);
size_t rmt_packed_weight_floats(int N, int K);
void rmt_pack_weight(float *packed, const float *weight, int N, int K);
// Rows rows[0..n) of a packed weight of K columns, packed anew as an (n, K)
// weight: the output layer of a lexical shortlist's candidates.
void rmt_gather_packed_weight(float *dst, const float *packed, const int *rows, int n, int K);
void rmt_gemm_f32_4x8__wasmsimd(float *C, const float *A, const float *packed_weight, const float *bias,
                                int M, int N, int K);
// The same for output features n_begin..n_end-1 only (n_begin a multiple of
// RMT_GEMM_NR; n_end one too, or N): bit-identical to the full GEMM's columns
// (each value sums over k in the same order), so threads that each take a
// range of panels (src/threads.c) give exactly the single-thread result.
void rmt_gemm_f32_4x8_cols__wasmsimd(float *C, const float *A, const float *packed_weight, const float *bias,
                                     int M, int N, int K, int n_begin, int n_end);
void rmt_gemm_f32__ref(float *C, const float *A, const float *weight, const float *bias, int M, int N, int K);

// ---- int8 GEMM: C[M,N] = (Aq[M,K] . Wq[N,K]^T) * a_scale[m] * w_scale[n] + bias[n]
// Wq holds int8 weights, one scale per output feature (row of W: value =
// q * w_scale[n]); Aq the activations quantized per row on the fly by
// rmt_quantize_rows_*: symmetric, to qmax (127, 8 bits; the output layer
// rmt_qmax_i16(K), 16 bits), a_scale[m] = max|A[m,:]| / qmax,
// q = round-half-even(A * (qmax / max|A[m,:]|)) (0 for a row of zeros). The
// integer sum is exact (int32: K <= RMT_GEMM_I8_MAX_K); each output is then
// ((float)sum * a_scale[m]) * w_scale[n] + bias[n] in float32, in that order.
// Two kernels, computing the same numbers:
//   __wasmsimd    any activations, stored as int16: i32x4.dot_i16x8_s over
//                 pairs of k, the int8 weights widened to int16 as the loop
//                 loads them (rmt_gemm_w8a16_4x8);
//   __wasmrelaxed i32x4.relaxed_dot_i8x16_i7x16_add_s over groups of 4 k,
//                 activations as bytes: activations >= 0 (a ReLU's output)
//                 as q (0..127), the 7-bit operand it computes exactly on
//                 every CPU; any activations as q + RMT_RELAXED_ACT_OFFSET
//                 (1..255) where the runtime multiplies such bytes exactly
//                 (VNNI: rmt_relaxed_dot_u8_exact), each sum then less
//                 offset_sum[n] = RMT_RELAXED_ACT_OFFSET * sum_k Wq[n][k]
//                 (rmt_weight_offset_sums). With VNNI it multiplies 16 bytes
//                 an instruction, twice dot_i16x8's 8 products.
// Packing: panels of RMT_GEMM_NR output features as for f32, each panel
// [ceil(K / kr)][8][kr] int8 (kr consecutive k of one feature together), zero
// past N and past K; kr = 2 for __wasmsimd, 4 for __wasmrelaxed. Activation
// rows are padded with zeros to a multiple of kr (stride rmt_quantized_row_len).
#define RMT_GEMM_I8_KR_DOT16 2    // the __wasmsimd kernel's k group
#define RMT_GEMM_I8_KR_RELAXED 4  // the __wasmrelaxed kernel's
#define RMT_GEMM_I8_MAX_K 65536   // 255 * 127 * K stays below 2^31
#define RMT_RELAXED_ACT_OFFSET 128
#define RMT_QMAX_I8 127
#define RMT_QMAX_I16 32767
// The output layer's activations are quantized to 16 bits (its logits are
// what the search compares: 8 bits there cost ~0.5 BLEU, models/es-en/CARD.md),
// which the __wasmsimd kernel multiplies as fast as 8 (it stores them as
// int16 either way): the largest qmax <= RMT_QMAX_I16 whose sums over K stay
// exact in int32 (127 * qmax * K < 2^31).
int rmt_qmax_i16(int K);
#if defined(__wasm_relaxed_simd__)
#define RMT_HAVE_RELAXED_DOT 1  // this build can run __wasmrelaxed
#else
#define RMT_HAVE_RELAXED_DOT 0
#endif
// The k group (and so the kernel) for a layer with 8-bit activations:
// RMT_GEMM_I8_KR_RELAXED in a build with the relaxed dot when the runtime's
// computes the sums the layer needs (input >= 0: rmt_relaxed_dot_exact; any:
// rmt_relaxed_dot_u8_exact), else RMT_GEMM_I8_KR_DOT16.
int rmt_gemm_i8_kr(int input_nonnegative);
// The offset its activations are stored with: RMT_RELAXED_ACT_OFFSET for a
// signed input run by __wasmrelaxed, else 0.
int rmt_gemm_i8_offset(int input_nonnegative);
// 1 when rmt_i32x4_dot_i8x16_u8x16_add (simd.h) gives the exact sums on a
// test vector of bytes 0..127. Not every runtime's relaxed dot does: Node 20's
// V8 (11.3, with --experimental-wasm-relaxed-simd) returns twice the products
// and drops the accumulator; the int8 kernels then use dot_i16x8 everywhere.
int rmt_relaxed_dot_exact(void);
// 1 when it does for bytes 128..255 too (test vectors at the extremes where
// other lowerings saturate or read the bytes as signed): Chromium's V8 on a
// CPU with VNNI. 0 in builds without the relaxed dot.
int rmt_relaxed_dot_u8_exact(void);
// offset_sum[n] = RMT_RELAXED_ACT_OFFSET * sum_k weight[n][k] (weight N x K int8, unpacked).
void rmt_weight_offset_sums(int32_t *offset_sum, const int8_t *weight, int N, int K);
size_t rmt_packed_weight_i8_bytes(int N, int K, int kr);
void rmt_pack_weight_i8(int8_t *packed, const int8_t *weight, int N, int K, int kr);
// rmt_gather_packed_weight for an int8 weight packed with k groups of kr.
void rmt_gather_packed_weight_i8(int8_t *dst, const int8_t *packed, const int *rows, int n, int K, int kr);
int rmt_quantized_row_len(int K, int kr);
// Row m of quantized activations Aq (int16 for RMT_GEMM_I8_KR_DOT16, bytes for
// RMT_GEMM_I8_KR_RELAXED, rows of rmt_quantized_row_len(K, kr)).
int16_t *rmt_quantized_row(int16_t *Aq, int m, int K, int kr);
// Per row m of A (M x K): a_scale[m] and Aq's row (stride rmt_quantized_row_len),
// q in [-qmax, qmax] (qmax <= RMT_QMAX_I16).
void rmt_quantize_rows_i16__wasmsimd(int16_t *Aq, float *a_scale, const float *A, int M, int K, int qmax);
// The same as bytes, qmax RMT_QMAX_I8: offset 0, for A >= 0 (q 0..127; a
// negative value is clamped to 0); offset RMT_RELAXED_ACT_OFFSET, any A (q + offset).
void rmt_quantize_rows_u8__wasmsimd(uint8_t *Aq, float *a_scale, const float *A, int M, int K, int offset);
// offset_sum: NULL for activations stored without an offset.
void rmt_gemm_i8_4x8__wasmrelaxed(float *C, const uint8_t *Aq, const float *a_scale, const int8_t *packed_weight,
                                  const float *w_scale, const int32_t *offset_sum, const float *bias, int M, int N,
                                  int K);
// 16-bit layers (the output layer of a model whose config says "output_layer":
// "int16"): int16 weights, one scale per row, and int16 activations, both
// quantized to rmt_qmax_w16(K) levels each way (the largest q <= RMT_QMAX_I16
// with q * q * K < 2^31: exact int32 sums; 2,896 for K = 256), weights packed
// in pairs of k as RMT_GEMM_I8_KR_DOT16 int8 ones are (twice the bytes).
// Otherwise as the int8 GEMM.
int rmt_qmax_w16(int K);
size_t rmt_packed_weight_i16_bytes(int N, int K);
// A float weight (N, K) quantized per row to [-qmax, qmax] (rmt_weight_scale)
// into w_scale and the 16-bit kernel's panels.
void rmt_quantize_pack_weight_i16(int16_t *packed, float *w_scale, const float *weight, int N, int K, int qmax);
void rmt_gather_packed_weight_i16(int16_t *dst, const int16_t *packed, const int *rows, int n, int K);
void rmt_gemm_i16_4x8__wasmsimd(float *C, const int16_t *Aq, const float *a_scale, const int16_t *packed_weight,
                                const float *w_scale, const float *bias, int M, int N, int K);
void rmt_gemm_i16_cols(float *C, const int16_t *Aq, const float *a_scale, const int16_t *packed_weight,
                       const float *w_scale, const float *bias, int M, int N, int K, int first_panel, int n_panels);
// int8 weights packed with kr RMT_GEMM_I8_KR_DOT16 against int16 activations.
void rmt_gemm_w8a16_4x8__wasmsimd(float *C, const int16_t *Aq, const float *a_scale, const int8_t *packed_weight,
                                  const float *w_scale, const float *bias, int M, int N, int K);
// Both steps for float activations A (M, K): quantize per row into Aq / a_scale
// (scratch of rmt_quantized_row_len(K, kr) int16 per row, and M floats), then
// the kernel for int8 weights packed with k groups of kr: __wasmrelaxed
// (RMT_GEMM_I8_KR_RELAXED) or rmt_gemm_w8a16_4x8 (RMT_GEMM_I8_KR_DOT16).
// qmax: RMT_QMAX_I8, or up to rmt_qmax_i16(K) with kr RMT_GEMM_I8_KR_DOT16.
void rmt_linear_i8(float *C, const float *A, int16_t *Aq, float *a_scale, const int8_t *packed_weight, int kr,
                   int qmax, int offset, const float *w_scale, const int32_t *offset_sum, const float *bias, int M,
                   int N, int K);
// The two steps apart, for threads (threads.h): the quantization for kernel kr,
// then panels first_panel .. first_panel + n_panels - 1 of the product (each
// value as the whole product computes it): int8 weights packed with kr here
// (as rmt_linear_i8), 16-bit ones in rmt_gemm_i16_cols.
void rmt_quantize_rows_i8(int16_t *Aq, float *a_scale, const float *A, int M, int K, int kr, int qmax, int offset);
void rmt_gemm_i8_cols(float *C, const int16_t *Aq, const float *a_scale, const int8_t *packed_weight, int kr,
                      const float *w_scale, const int32_t *offset_sum, const float *bias, int M, int N, int K,
                      int first_panel, int n_panels);
// A weight row's quantization (models/residual_mt/reference.py quantize_weight): scale =
// max|row| / qmax (1 for a row of zeros), q = round-half-even(w / scale)
// clamped to [-qmax, qmax]. At load: model.c's int8 matrices, the 16-bit
// output layer.
static inline float rmt_weight_scale_of(float amax, int qmax) { return amax > 0.0f ? amax / (float)qmax : 1.0f; }
static inline float rmt_weight_scale(const float *row, int K, int qmax) {
  float amax = 0.0f;
  for (int k = 0; k < K; k++) amax = fabsf(row[k]) > amax ? fabsf(row[k]) : amax;
  return rmt_weight_scale_of(amax, qmax);
}
// v rounded half to even (the default rounding mode) and clamped to [lo, hi],
// NaN to 0, as the SIMD kernels' rounding gives them: never a float-to-int
// conversion of a value int cannot hold (undefined in C, a trap in WebAssembly;
// an activation overflowed to inf, times a scale of 0, is NaN).
static inline int rmt_round_clamp(float v, int lo, int hi) {
  float q = nearbyintf(v);
  return q != q ? 0 : q > hi ? hi : q < lo ? lo : (int)q;
}
static inline int rmt_quantize_weight(float w, float scale, int qmax) { return rmt_round_clamp(w / scale, -qmax, qmax); }
// The plain C twins: q = the quantized row, weights unpacked (N, K).
void rmt_quantize_row__ref(int32_t *q, float *a_scale, const float *x, int K, int qmax);
void rmt_gemm_i8__ref(float *C, const int32_t *Aq, const float *a_scale, const int8_t *weight, const float *w_scale,
                      const float *bias, int M, int N, int K);

// ---- LayerNorm over rows of length D: out = (x - mean) / sqrt(var + eps) * gamma + beta
// (biased variance, as torch). out may alias x.
void rmt_layer_norm_f32__wasmsimd(float *out, const float *x, const float *gamma, const float *beta,
                                  int M, int D, float eps);
void rmt_layer_norm_f32__ref(float *out, const float *x, const float *gamma, const float *beta,
                             int M, int D, float eps);

// ---- Elementwise on n floats
void rmt_relu_f32__wasmsimd(float *x, size_t n);
void rmt_relu_f32__ref(float *x, size_t n);
// x *= sigmoid(x) = 1 / (1 + e^-x) (Marian's swish), in that order of float
// operations; the SIMD one takes e^-x from libm's expf as the wasm build links
// it (expf 4 at a time, as rmt_softmax_f32__wasmsimd): the same floats there,
// natively within an ulp or two (another libm's expf).
void rmt_swish_f32__wasmsimd(float *x, size_t n);
void rmt_swish_f32__ref(float *x, size_t n);
// Marian's SSRU cell on n features: f = sigmoid(gate) (as swish computes it),
// cell = f * prev + (1 - f) * xw (prev NULL: the first step, f * prev left
// out), out = max(cell, 0); the SIMD one the same floats as swish's are.
void rmt_ssru_cell_f32__wasmsimd(float *cell, float *out, const float *prev, const float *xw, const float *gate,
                                 int n);
void rmt_ssru_cell_f32__ref(float *cell, float *out, const float *prev, const float *xw, const float *gate, int n);
// out = a + b * scale  (residual add with scale 1, and ResiDual's d += out * s). out may alias a or b.
void rmt_add_scaled_f32__wasmsimd(float *out, const float *a, const float *b, float scale, size_t n);
void rmt_add_scaled_f32__ref(float *out, const float *a, const float *b, float scale, size_t n);
// x *= scale
void rmt_scale_f32__wasmsimd(float *x, float scale, size_t n);

// ---- IEEE half precision (little-endian bytes, any alignment) to float:
// every value exact (normals, subnormals, zeros, inf, NaN with its payload).
// The model's f16 weights are widened with it at load.
void rmt_f16_to_f32__wasmsimd(float *out, const unsigned char *src, size_t n);
void rmt_f16_to_f32__ref(float *out, const unsigned char *src, size_t n);

// ---- The index of x's first Inf or NaN, or n when every value is finite
// (the model's load refuses weights that are not).
size_t rmt_first_nonfinite_f32__wasmsimd(const float *x, size_t n);
size_t rmt_first_nonfinite_f32__ref(const float *x, size_t n);
// The same for n halves (little-endian bytes, any alignment): a float16
// embedding kept as it is stored is checked without widening it.
size_t rmt_first_nonfinite_f16__wasmsimd(const unsigned char *src, size_t n);
size_t rmt_first_nonfinite_f16__ref(const unsigned char *src, size_t n);

// ---- Softmax family over one row of n values (in place)
// Attention's weights: a weight below FLT_MIN (a subnormal) is 0. It changes
// no sum it would join (the row's sum is at least the max's e^0 = 1, and a
// weighted value below FLT_MIN times a value's size is lost next to any
// value of normal size), and multiplying by a subnormal costs x86 a microcode
// assist of about a hundred cycles: a random-weight OPUS-MT base in float32,
// one sentence a call, ran 1.085x faster in Node and 1.04x in Chromium with
// them flushed, every output the same (tests/bench/engine_ab.js).
void rmt_softmax_f32__ref(float *x, int n);
// The same values in the wasm build (its e^x 4 at a time as that libm's expf
// computes it, 2 lanes of double); natively within 2 ulps (another expf).
void rmt_softmax_f32__wasmsimd(float *x, int n);
// out = x - max - log(sum(exp(x - max))); returns nothing, out may alias x.
void rmt_log_softmax_f32__ref(float *out, const float *x, int n);
// The same with e^x on 4 lanes (a polynomial, relative error < 2e-7, and the
// sum in float32 lanes): within ~1e-6 of rmt_log_softmax_f32__ref on a
// vocabulary's logits, several times faster than libm's expf one at a time.
void rmt_log_softmax_f32__wasmsimd(float *out, const float *x, int n);

// ---- Attention for one query row, all heads:
//   out[h*E..] = sum_t softmax_t(q_h . k_t,h) v_t,h
// q is already scaled by E^-0.5 (as fairseq scales q before the product).
// Keys and values are given as T row pointers (rows of width D = H*E), so a
// caller can attend over a strided matrix or over a beam's cache history
// without copying; masked keys are simply not listed. scores: T floats scratch.
// probs, unless NULL, receives the attention weights averaged over the heads
// (T floats: the decoder's alignment, src/search.c).
void rmt_attention_row_f32__wasmsimd(float *out, float *probs, const float *q, const float *const *keys,
                                     const float *const *values, int T, int H, int E, float *scores);
void rmt_attention_row_f32__ref(float *out, float *probs, const float *q, const float *const *keys,
                                const float *const *values, int T, int H, int E, float *scores);
// The same for n query rows q (rows of width D) over the same keys and values,
// out likewise, no probs: the same floats as n calls of the row kernel. The
// SIMD one takes rows in pairs (each key and value vector loaded once for
// two rows). scores: 2 T floats scratch.
void rmt_attention_rows_f32__wasmsimd(float *out, const float *q, int n, int D, const float *const *keys,
                                      const float *const *values, int T, int H, int E, float *scores);
void rmt_attention_rows_f32__ref(float *out, const float *q, int n, int D, const float *const *keys,
                                 const float *const *values, int T, int H, int E, float *scores);
#endif
