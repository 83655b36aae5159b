#include "arena.h"

#include <stdlib.h>

#include "error.h"

int rmt_arena_init(rmt_arena *arena, size_t size) {
  arena->base = NULL;
  arena->size = arena->used = 0;
  size_t reserved = rmt_arena_bytes(size, 1);
  // Over-allocate by one alignment unit so the first chunk can be aligned.
  size_t total = rmt_size_add(reserved, RMT_ALIGN);
  if (total == RMT_SIZE_OVERFLOW) {
    return rmt_error(RMT_E_SIZE, "too large: the arena size overflows this build's %zu-bit sizes", 8 * sizeof(size_t));
  }
  arena->base = malloc(total);
  if (!arena->base) return rmt_error(RMT_E_NOMEM, "out of memory: cannot allocate %zu bytes", total);
  arena->size = reserved;
  return RMT_OK;
}

void rmt_arena_free(rmt_arena *arena) {
  free(arena->base);
  arena->base = NULL;
  arena->size = arena->used = 0;
}

void *rmt_arena_alloc(rmt_arena *arena, size_t size) {
  size_t bytes = rmt_arena_bytes(size, 1);
  if (!arena->base || bytes > arena->size - arena->used) return NULL;
  unsigned char *aligned = arena->base + (RMT_ALIGN - (size_t)arena->base % RMT_ALIGN) % RMT_ALIGN;
  void *chunk = aligned + arena->used;
  arena->used += bytes;
  return chunk;
}
