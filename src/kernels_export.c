// The f32 and int8 GEMM kernels and their weight packing as exports of the
// wasm module, so that a benchmark (tests/bench/relaxed_bench.js,
// tests/bench/int8_bench.js) can time a kernel alone on the model's own
// shapes, and a test can check a kernel in the wasm build itself
// (tests/kernels.test.js). Thin wrappers: the engine calls the kernels directly.
#include "ops.h"
#include "rmt.h"
#include "size.h"

RMT_API size_t rmt_kernel_packed_weight_floats(int N, int K) { return rmt_packed_weight_floats(N, K); }

RMT_API void rmt_kernel_pack_weight(float *packed, const float *weight, int N, int K) {
  rmt_pack_weight(packed, weight, N, K);
}

RMT_API void rmt_kernel_gemm_f32(float *C, const float *A, const float *packed_weight, const float *bias,
                                 int M, int N, int K) {
  rmt_gemm_f32(C, A, packed_weight, bias, M, N, K);
}

// Swish in place (rmt_swish_f32), or by its plain C twin if reference: for
// tests/kernels.test.js, which checks in the wasm build that they agree.
RMT_API void rmt_kernel_swish_f32(float *x, size_t n, int reference) {
  if (reference) rmt_swish_f32__ref(x, n);
  else rmt_swish_f32(x, n);
}

// The SSRU cell (rmt_ssru_cell_f32), or its plain C twin if reference; prev may be NULL.
RMT_API void rmt_kernel_ssru_cell_f32(float *cell, float *out, const float *prev, const float *xw, const float *gate,
                                      int n, int reference) {
  if (reference) rmt_ssru_cell_f32__ref(cell, out, prev, xw, gate, n);
  else rmt_ssru_cell_f32(cell, out, prev, xw, gate, n);
}

// int8: nonneg selects the kernel as the model does for a layer whose input
// is >= 0 (rmt_gemm_i8_kr, rmt_gemm_i8_offset); scratch holds
// rmt_kernel_quantized_bytes(M, K).

// 1 when int8 layers whose input is >= 0 run the relaxed-dot kernel here; 2
// when every 8-bit layer does (rmt_relaxed_dot_u8_exact).
RMT_API int rmt_kernel_i8_relaxed_dot(void) {
  return rmt_gemm_i8_kr(0) == RMT_GEMM_I8_KR_RELAXED ? 2 : rmt_gemm_i8_kr(1) == RMT_GEMM_I8_KR_RELAXED;
}

// As the model packs an int8 weight: bytes in k groups of the kernel's kr,
// then the offset sums where the relaxed kernel's activations have an offset.
RMT_API size_t rmt_kernel_packed_weight_i8_bytes(int N, int K, int nonneg) {
  int kr = rmt_gemm_i8_kr(nonneg);
  size_t sums = rmt_gemm_i8_offset(nonneg) ? rmt_size_mul((size_t)N, sizeof(int32_t)) : 0;
  return rmt_size_add(rmt_packed_weight_i8_bytes(N, K, kr), sums);
}

static int32_t *offset_sums(void *packed, int N, int K, int nonneg) {
  if (!rmt_gemm_i8_offset(nonneg)) return NULL;
  return (int32_t *)((int8_t *)packed + rmt_packed_weight_i8_bytes(N, K, RMT_GEMM_I8_KR_RELAXED));
}

RMT_API void rmt_kernel_pack_weight_i8(void *packed, const int8_t *weight, int N, int K, int nonneg) {
  rmt_pack_weight_i8(packed, weight, N, K, rmt_gemm_i8_kr(nonneg));
  if (rmt_gemm_i8_offset(nonneg)) rmt_weight_offset_sums(offset_sums(packed, N, K, nonneg), weight, N, K);
}

RMT_API size_t rmt_kernel_quantized_bytes(int M, int K) {
  return rmt_size_mul(rmt_size_mul((size_t)M, (size_t)rmt_quantized_row_len(K, RMT_GEMM_I8_KR_RELAXED)),
                      sizeof(int16_t) + sizeof(float));
}

// C = A W^T + bias with int8 weights: A quantized per row, then the GEMM.
RMT_API void rmt_kernel_gemm_i8(float *C, const float *A, void *scratch, const void *packed_weight,
                                const float *w_scale, const float *bias, int M, int N, int K, int nonneg) {
  float *a_scale = scratch;
  rmt_linear_i8(C, A, (int16_t *)(a_scale + M), a_scale, packed_weight, rmt_gemm_i8_kr(nonneg), RMT_QMAX_I8,
                rmt_gemm_i8_offset(nonneg), w_scale, offset_sums((void *)packed_weight, N, K, nonneg), bias, M, N, K);
}
