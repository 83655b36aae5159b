// The f32 GEMM kernel and its weight packing as exports of the wasm module, so
// that a benchmark (tests/bench/relaxed_bench.js) can time the kernel alone on
// the model's own shapes. Thin wrappers: the engine calls the kernels directly.
#include "kernels.h"
#include "rmt.h"

RMT_API size_t rmt_kernel_packed_weight_floats(int N, int K) { return rmt_packed_weight_floats(N, K); }

RMT_API void rmt_kernel_pack_weight(float *packed, const float *weight, int N, int K) {
  rmt_pack_weight(packed, weight, N, K);
}

RMT_API void rmt_kernel_gemm_f32(float *C, const float *A, const float *packed_weight, const float *bias,
                                 int M, int N, int K) {
  rmt_gemm_f32_4x8__wasmsimd(C, A, packed_weight, bias, M, N, K);
}
