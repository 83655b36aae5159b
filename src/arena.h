// A bump allocator: one malloc up front, aligned chunks handed out, all freed
// together. The model's weights live in one arena; each translation has its own.
#ifndef RMT_ARENA_H
#define RMT_ARENA_H
#include <stddef.h>

#define RMT_ALIGN 64  // bytes: a cache line, a multiple of every SIMD width used

typedef struct {
  unsigned char *base;
  size_t size;  // bytes reserved
  size_t used;  // bytes handed out (including alignment padding)
} rmt_arena;

// Rounds n up to the arena alignment; sizing code uses it to count exactly.
static inline size_t rmt_align_up(size_t n) { return (n + RMT_ALIGN - 1) & ~(size_t)(RMT_ALIGN - 1); }

// 0 on success, RMT_E_NOMEM (with a message) if the block cannot be allocated.
int rmt_arena_init(rmt_arena *arena, size_t size);
void rmt_arena_free(rmt_arena *arena);
// An aligned chunk (not zeroed), or NULL when the arena is exhausted (a sizing bug).
void *rmt_arena_alloc(rmt_arena *arena, size_t size);
#define RMT_ARENA_ARRAY(arena, type, count) ((type *)rmt_arena_alloc((arena), sizeof(type) * (size_t)(count)))
#endif
