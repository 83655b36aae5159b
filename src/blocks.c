// Cutting a batch into blocks of equal cost, one a thread (blocks.h).
#include "blocks.h"

int rmt_blocks_count(int threads, int n, int min_per_thread) {
  if (threads > RMT_MAX_BLOCKS) threads = RMT_MAX_BLOCKS;
  return threads >= 2 && n >= min_per_thread * threads ? threads : 1;
}

void rmt_blocks_split(rmt_blocks *b, int n, rmt_item_cost_fn cost_of, const void *ctx, long long arg) {
  int next = 1;
  long long total = 0, sum = 0;
  for (int i = 0; i < n; i++) total += cost_of(ctx, i, arg);
  b->start[0] = 0;
  for (int i = 0; i < n && next < b->blocks; i++) {
    long long cost = cost_of(ctx, i, arg);
    sum += cost;
    // The share of block `next` ends in item i: before it or after it, whichever is nearer.
    while (next < b->blocks && sum * b->blocks >= total * next) {
      b->start[next] = (sum - cost / 2) * b->blocks >= total * next ? i : i + 1;
      next++;
    }
  }
  for (; next <= b->blocks; next++) b->start[next] = n;
}
