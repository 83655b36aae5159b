// A bump allocator: one malloc up front, aligned chunks handed out, all freed
// together. The model's weights live in one arena; each translation has its own.
#ifndef RMT_ARENA_H
#define RMT_ARENA_H
#include <stddef.h>

#include "size.h"

#define RMT_ALIGN 64  // bytes: a cache line, a multiple of every SIMD width used

typedef struct {
  unsigned char *base;
  size_t size;  // bytes reserved
  size_t used;  // bytes handed out (including alignment padding)
} rmt_arena;

// Bytes an array of `count` elements of `elem_size` takes in an arena
// (rounded up to the alignment); RMT_SIZE_OVERFLOW when that does not fit in
// size_t. Sizing code adds these with rmt_size_add, so it counts exactly.
static inline size_t rmt_arena_bytes(size_t count, size_t elem_size) { return rmt_size_array(count, elem_size, RMT_ALIGN); }

// 0 on success; RMT_E_SIZE when `size` is RMT_SIZE_OVERFLOW or too large to
// allocate in this address space, RMT_E_NOMEM when malloc fails (with a message).
int rmt_arena_init(rmt_arena *arena, size_t size);
void rmt_arena_free(rmt_arena *arena);
// An aligned chunk (not zeroed), or NULL when the arena is exhausted (a sizing bug).
void *rmt_arena_alloc(rmt_arena *arena, size_t size);
#endif
