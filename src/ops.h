// The kernels as model code calls them: ISA-neutral names, each the variant
// of src/kernels.h this build runs (every build has SIMD128: natively through
// SIMDe). The int8 and 16-bit products need no mapping: rmt_linear_i8,
// rmt_quantize_rows_i8, rmt_gemm_i8_cols and rmt_gemm_i16_cols pick their
// kernel themselves. Kernel files include kernels.h only, so the layer below
// never reads this one.
#ifndef RMT_OPS_H
#define RMT_OPS_H
#include "kernels.h"

// The int16 values a row of K activations takes for whichever int8 kernel a
// layer runs (the relaxed kernel's k group is the wider; its bytes take half).
static inline int rmt_quantized_row_len_any(int K) { return rmt_quantized_row_len(K, RMT_GEMM_I8_KR_RELAXED); }

static inline void rmt_gemm_f32(float *C, const float *A, const float *packed_weight, const float *bias, int M, int N,
                                int K) {
  rmt_gemm_f32_4x8__wasmsimd(C, A, packed_weight, bias, M, N, K);
}
static inline void rmt_gemm_f32_cols(float *C, const float *A, const float *packed_weight, const float *bias, int M,
                                     int N, int K, int n_begin, int n_end) {
  rmt_gemm_f32_4x8_cols__wasmsimd(C, A, packed_weight, bias, M, N, K, n_begin, n_end);
}
static inline void rmt_layer_norm_f32(float *out, const float *x, const float *gamma, const float *beta, int M, int D,
                                      float eps) {
  rmt_layer_norm_f32__wasmsimd(out, x, gamma, beta, M, D, eps);
}
static inline void rmt_relu_f32(float *x, size_t n) { rmt_relu_f32__wasmsimd(x, n); }
static inline void rmt_swish_f32(float *x, size_t n) { rmt_swish_f32__wasmsimd(x, n); }
static inline void rmt_ssru_cell_f32(float *cell, float *out, const float *prev, const float *xw, const float *gate,
                                     int n) {
  rmt_ssru_cell_f32__wasmsimd(cell, out, prev, xw, gate, n);
}
static inline void rmt_add_scaled_f32(float *out, const float *a, const float *b, float scale, size_t n) {
  rmt_add_scaled_f32__wasmsimd(out, a, b, scale, n);
}
static inline void rmt_scale_f32(float *x, float scale, size_t n) { rmt_scale_f32__wasmsimd(x, scale, n); }
static inline void rmt_f16_to_f32(float *out, const unsigned char *src, size_t n) { rmt_f16_to_f32__wasmsimd(out, src, n); }
static inline size_t rmt_first_nonfinite_f32(const float *x, size_t n) { return rmt_first_nonfinite_f32__wasmsimd(x, n); }
static inline size_t rmt_first_nonfinite_f16(const unsigned char *src, size_t n) {
  return rmt_first_nonfinite_f16__wasmsimd(src, n);
}
static inline void rmt_log_softmax_f32(float *out, const float *x, int n) { rmt_log_softmax_f32__wasmsimd(out, x, n); }
static inline void rmt_attention_row_f32(float *out, float *probs, const float *q, const float *const *keys,
                                         const float *const *values, int T, int H, int E, float *scores) {
  rmt_attention_row_f32__wasmsimd(out, probs, q, keys, values, T, H, E, scores);
}
static inline void rmt_attention_rows_f32(float *out, const float *q, int n, int D, const float *const *keys,
                                          const float *const *values, int T, int H, int E, float *scores) {
  rmt_attention_rows_f32__wasmsimd(out, q, n, D, keys, values, T, H, E, scores);
}
#endif
