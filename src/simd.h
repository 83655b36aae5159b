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
#endif
