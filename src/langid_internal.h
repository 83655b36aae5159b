// Between the language identifier's two files: the feature walk
// (langid_features.c) and the model (langid.c).
#ifndef RMT_LANGID_INTERNAL_H
#define RMT_LANGID_INTERNAL_H
#include <stdint.h>

#include "langid.h"

typedef struct {
  int n;                                  // groups (tables)
  int32_t orders[RMT_LANGID_MAX_GROUPS];  // 0: whole words, n: n-grams
  int32_t buckets[RMT_LANGID_MAX_GROUPS]; // rows of each table
} rmt_langid_groups;

// Called once per feature: row `row` of table `group`.
typedef void (*rmt_langid_emit)(void *ctx, int group, uint32_t row);

// 0, or RMT_E_INVALID naming what is out of range.
int rmt_langid_groups_check(const rmt_langid_groups *groups);
// Walks the text's features (groups checked by the caller); returns the number of words.
int rmt_langid_each_feature(const char *text, size_t len, const rmt_langid_groups *groups, rmt_langid_emit emit,
                            void *ctx);
#endif
