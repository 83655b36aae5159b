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
#endif
