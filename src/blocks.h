// A batch's independent items (the encoder's sentences, a decoding step's
// rows) cut into blocks, one a thread, for transformer.c to run each block's
// whole network on its own thread: one hand-over instead of one for every
// product, attention and LayerNorm, and a block's activations stay in one
// core's cache. Block i is items start[i]..start[i + 1]-1.
#ifndef RMT_BLOCKS_H
#define RMT_BLOCKS_H

#include "threads.h"

#define RMT_MAX_BLOCKS RMT_THREADS_MAX  // one block a thread
typedef struct {
  int blocks, start[RMT_MAX_BLOCKS + 1];
} rmt_blocks;

// How many blocks n items are cut into on `threads` threads: one a thread
// when each gets at least min_per_thread items, else 1 (the loops inside
// then split over the threads instead).
int rmt_blocks_count(int threads, int n, int min_per_thread);

// Item i's cost (its multiply-adds, say): what the blocks share equally.
typedef long long (*rmt_item_cost_fn)(const void *ctx, int item, long long arg);

// b->start for b->blocks blocks of n items: each boundary where the summed
// cost crosses an equal share, at the nearer of the two items.
void rmt_blocks_split(rmt_blocks *b, int n, rmt_item_cost_fn cost_of, const void *ctx, long long arg);

#endif
