#include "arena.h"

#include <stdlib.h>

#include "error.h"

int rmt_arena_init(rmt_arena *arena, size_t size) {
  arena->size = rmt_align_up(size);
  arena->used = 0;
  // Over-allocate by one alignment unit so the first chunk can be aligned.
  arena->base = malloc(arena->size + RMT_ALIGN);
  if (!arena->base) {
    arena->size = 0;
    return rmt_error(RMT_E_NOMEM, "out of memory: cannot allocate %zu bytes", size);
  }
  return RMT_OK;
}

void rmt_arena_free(rmt_arena *arena) {
  free(arena->base);
  arena->base = NULL;
  arena->size = arena->used = 0;
}

void *rmt_arena_alloc(rmt_arena *arena, size_t size) {
  unsigned char *aligned = (unsigned char *)rmt_align_up((size_t)arena->base);
  size_t bytes = rmt_align_up(size);
  if (!arena->base || arena->used + bytes > arena->size) return NULL;
  void *chunk = aligned + arena->used;
  arena->used += bytes;
  return chunk;
}
