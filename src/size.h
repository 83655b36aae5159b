// Size arithmetic that cannot wrap. Every size that comes from a model file,
// a config or a call's options is computed with these: WASM's size_t is 32
// bits, so a product that is harmless natively wraps there (and a wrapped
// size is a small allocation followed by a large write). They saturate at
// SIZE_MAX instead, so a chain of them needs one check at the end; build.sh's
// native32 build runs the C tests with the same 32-bit size_t as WASM.
#ifndef RMT_SIZE_H
#define RMT_SIZE_H
#include <stddef.h>
#include <stdint.h>

#define RMT_SIZE_OVERFLOW SIZE_MAX  // the saturated result: never a real size

static inline size_t rmt_size_mul(size_t a, size_t b) {
  size_t product;
  return __builtin_mul_overflow(a, b, &product) ? RMT_SIZE_OVERFLOW : product;
}

static inline size_t rmt_size_add(size_t a, size_t b) {
  size_t sum;
  return __builtin_add_overflow(a, b, &sum) ? RMT_SIZE_OVERFLOW : sum;
}

// count elements of elem_size bytes, each array rounded up to `align` (a power of two).
static inline size_t rmt_size_array(size_t count, size_t elem_size, size_t align) {
  size_t bytes = rmt_size_add(rmt_size_mul(count, elem_size), align - 1);
  return bytes == RMT_SIZE_OVERFLOW ? bytes : bytes & ~(align - 1);
}
#endif
