// One include for the 128-bit SIMD intrinsics: the real WebAssembly ones when
// compiling to wasm, SIMDe's portable implementation of the same names natively.
#ifndef RMT_SIMD_H
#define RMT_SIMD_H
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#else
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/wasm/simd128.h>
#endif
#include <string.h>

// For a kernel's helper with a row count or variant argument: each call with
// a constant is compiled on its own, its loops unrolled.
#define ALWAYS_INLINE inline __attribute__((always_inline))

// Stores the first `cols` (1..8) floats of lo, hi at dst: a GEMM's panel of 8
// output features clipped at N goes through a small buffer, so nothing is
// written past dst + cols.
static inline void rmt_store_f32x8_clipped(float *dst, v128_t lo, v128_t hi, int cols) {
  if (cols == 8) {
    wasm_v128_store(dst, lo);
    wasm_v128_store(dst + 4, hi);
  } else {
    float tile[8];
    wasm_v128_store(tile, lo);
    wasm_v128_store(tile + 4, hi);
    memcpy(dst, tile, sizeof(float) * (size_t)cols);
  }
}

// a * b + c, lane-wise. The relaxed-SIMD build (-mrelaxed-simd, build.sh's
// dist/residual-mt-relaxed.wasm) makes it one f32x4.relaxed_madd: fused (one
// rounding) where the CPU has FMA, a multiply and an add elsewhere. Every other
// build multiplies, then adds (two roundings). clang 16's wasm_simd128.h has no
// wrapper for it yet, hence the builtin.
static inline v128_t rmt_f32x4_madd(v128_t a, v128_t b, v128_t c) {
#if defined(__wasm_relaxed_simd__)
  typedef float f32x4 __attribute__((__vector_size__(16)));
  return (v128_t)__builtin_wasm_relaxed_madd_f32x4((f32x4)a, (f32x4)b, (f32x4)c);
#else
  return wasm_f32x4_add(c, wasm_f32x4_mul(a, b));
#endif
}

// c + the dot products of a (int8) and b (unsigned bytes) in groups of 4
// lanes: lane i of the result is c[i] + sum_j a[4i + j] * b[4i + j], j = 0..3.
// The relaxed-SIMD build makes it one i32x4.relaxed_dot_i8x16_i7x16_add_s,
// which gives these sums on every CPU only while b <= 127 (the engine checks
// the runtime's at load: kernels.h rmt_relaxed_dot_exact), and for b up to 255
// where the CPU multiplies unsigned by signed bytes in 32 bits (VNNI's
// vpdpbusd: rmt_relaxed_dot_u8_exact); elsewhere the same sums in SIMD128,
// widened to int16 (exact: |a * b| <= 32640).
static inline v128_t rmt_i32x4_dot_i8x16_u8x16_add(v128_t a, v128_t b, v128_t c) {
#if defined(__wasm_relaxed_simd__)
  typedef signed char i8x16 __attribute__((__vector_size__(16)));
  typedef int i32x4 __attribute__((__vector_size__(16)));
  return (v128_t)__builtin_wasm_relaxed_dot_i8x16_i7x16_add_s_i32x4((i8x16)a, (i8x16)b, (i32x4)c);
#else
  v128_t lo = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a), wasm_u16x8_extend_low_u8x16(b));
  v128_t hi = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a), wasm_u16x8_extend_high_u8x16(b));
  v128_t even = wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), odd = wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7);
  return wasm_i32x4_add(c, wasm_i32x4_add(even, odd));
#endif
}
#endif
