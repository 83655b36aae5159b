// Compute kernels. Each SIMD kernel (suffix __wasmsimd, WebAssembly SIMD128;
// SIMDe provides the same intrinsics natively) has a plain C twin (suffix
// __ref) that it is tested against.
//
// Size letters, used in every signature:
//   M  rows of activations (tokens, or sentence x beam rows)
//   N  output features     K  input features (the reduced dimension)
//   D  model width (d_model)  T  number of keys   H  heads   E  head_dim (D / H)
// Arguments come outputs first, then inputs, then sizes. Matrices are row-major
// and dense (leading dimension = row length).
#ifndef RMT_KERNELS_H
#define RMT_KERNELS_H
#include <stddef.h>

// ---- GEMM: C[M,N] = A[M,K] * W[N,K]^T + bias[N]  (W is torch's Linear.weight)
// The SIMD kernel reads W packed once at load time into panels of 8 output
// features: panel p holds W[8p..8p+7][k] for k = 0..K-1, interleaved as
// [k][8], zero-filled past N. bias may be NULL.
#define RMT_GEMM_NR 8
size_t rmt_packed_weight_floats(int N, int K);
void rmt_pack_weight(float *packed, const float *weight, int N, int K);
void rmt_gemm_f32_4x8__wasmsimd(float *C, const float *A, const float *packed_weight, const float *bias,
                                int M, int N, int K);
// The same for output features n_begin..n_end-1 only (n_begin a multiple of
// RMT_GEMM_NR; n_end one too, or N): bit-identical to the full GEMM's columns
// (each value sums over k in the same order), so threads that each take a
// range of panels (src/threads.c) give exactly the single-thread result.
void rmt_gemm_f32_4x8_cols__wasmsimd(float *C, const float *A, const float *packed_weight, const float *bias,
                                     int M, int N, int K, int n_begin, int n_end);
void rmt_gemm_f32__ref(float *C, const float *A, const float *weight, const float *bias, int M, int N, int K);
// The same, for the output features of the listed panels only (panel p:
// features 8p..8p+7, clipped at N); other columns of C are left as they are.
// Each value is bit-identical to the full GEMM's (same order of summation):
// the output layer under a lexical shortlist.
void rmt_gemm_f32_4x8_panels__wasmsimd(float *C, const float *A, const float *packed_weight, const float *bias,
                                       int M, int N, int K, const int *panels, int n_panels);

// ---- LayerNorm over rows of length D: out = (x - mean) / sqrt(var + eps) * gamma + beta
// (biased variance, as torch). out may alias x.
void rmt_layer_norm_f32__wasmsimd(float *out, const float *x, const float *gamma, const float *beta,
                                  int M, int D, float eps);
void rmt_layer_norm_f32__ref(float *out, const float *x, const float *gamma, const float *beta,
                             int M, int D, float eps);

// ---- Elementwise on n floats
void rmt_relu_f32__wasmsimd(float *x, size_t n);
void rmt_relu_f32__ref(float *x, size_t n);
// out = a + b * scale  (residual add with scale 1, and ResiDual's d += out * s). out may alias a or b.
void rmt_add_scaled_f32__wasmsimd(float *out, const float *a, const float *b, float scale, size_t n);
void rmt_add_scaled_f32__ref(float *out, const float *a, const float *b, float scale, size_t n);
// x *= scale
void rmt_scale_f32__wasmsimd(float *x, float scale, size_t n);

// ---- Softmax family over one row of n values (in place)
void rmt_softmax_f32(float *x, int n);
// out = x - max - log(sum(exp(x - max))); returns nothing, out may alias x.
void rmt_log_softmax_f32(float *out, const float *x, int n);

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
#endif
