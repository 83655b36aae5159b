// The language identifier's features: a text's words and character n-grams,
// hashed into table rows (the definition is in langid.h). Training reads the
// same function through ctypes (models/residual_mt/langid/features.py), so the model and
// the engine cannot disagree about what a feature is.
#include <string.h>

#include "error.h"
#include "langid.h"
#include "langid_internal.h"

// One code point from s[*i], advancing *i; 0xFFFD for an invalid sequence
// (one byte consumed), which the caller treats as a separator.
static uint32_t next_code_point(const unsigned char *s, size_t len, size_t *i) {
  uint32_t c = s[*i];
  int extra = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
  static const uint32_t least[4] = {0, 0x80, 0x800, 0x10000};
  if (extra < 0 || *i + (size_t)extra >= len) {
    (*i)++;
    return 0xFFFD;
  }
  uint32_t cp = extra ? c & (0x3F >> extra) : c;
  for (int k = 1; k <= extra; k++) {
    unsigned char b = s[*i + k];
    if ((b & 0xC0) != 0x80) {
      (*i)++;
      return 0xFFFD;
    }
    cp = cp << 6 | (b & 0x3F);
  }
  if (cp < least[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    (*i)++;
    return 0xFFFD;
  }
  *i += (size_t)extra + 1;
  return cp;
}

// Punctuation, symbols, spaces and digits outside ASCII that separate words
// (Unicode blocks, not a full table: what a text in any script uses).
static int is_separator(uint32_t c) {
  return (c >= 0x80 && c <= 0xBF) || c == 0xD7 || c == 0xF7 ||
         (c >= 0x2000 && c <= 0x2BFF) ||    // general punctuation, symbols, arrows, maths, boxes
         (c >= 0x3000 && c <= 0x303F) ||    // CJK punctuation
         (c >= 0xFF00 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) ||
         (c >= 0xFF5B && c <= 0xFF65) || (c >= 0xFF10 && c <= 0xFF19) ||  // fullwidth punctuation, digits
         (c >= 0x0660 && c <= 0x0669) || (c >= 0x06F0 && c <= 0x06F9) ||  // Arabic digits
         (c >= 0x0964 && c <= 0x096F) ||    // Devanagari danda and digits
         c == 0x060C || c == 0x061B || c == 0x061F || c == 0x06D4 ||      // Arabic comma, semicolon, ? and stop
         c == 0x0589 || c == 0x055D || c == 0x05BE || c == 0x05C3 ||      // Armenian, Hebrew stops
         (c >= 0xFE30 && c <= 0xFE6F) || c == 0xFEFF || c == 0xFFFD ||
         (c >= 0x1F000 && c <= 0x1FAFF);    // emoji and pictographs
}

// Lower case for the scripts whose case pairs sit at a fixed distance.
static uint32_t fold_case(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x178 && c != 0x17F) {
    int odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    return odd_upper ? c + (c & 1) : c | 1;
  }
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c >= 0x531 && c <= 0x556) return c + 48;
  return c;
}

static int is_letter(uint32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return !is_separator(c);
}

// FNV-1a over the order and the code points, then murmur3's finaliser, so
// that the low bits (what the modulo keeps) depend on every input bit.
static uint32_t hash_gram(int order, const uint32_t *cps, int n) {
  uint32_t h = 2166136261u;
  h = (h ^ (uint32_t)order) * 16777619u;
  for (int k = 0; k < n; k++) h = (h ^ cps[k]) * 16777619u;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// The features of one word, padded[1 .. n] with spaces at 0 and n + 1.
static void word_features(const uint32_t *padded, int n, const rmt_langid_groups *g, rmt_langid_emit emit, void *ctx) {
  for (int k = 0; k < g->n; k++) {
    int order = g->orders[k];
    uint32_t buckets = (uint32_t)g->buckets[k];
    if (order == 0) {
      emit(ctx, k, hash_gram(0, padded + 1, n) % buckets);
    } else if (order == 1) {
      for (int i = 1; i <= n; i++) emit(ctx, k, hash_gram(1, padded + i, 1) % buckets);
    } else {
      for (int i = 0; i + order <= n + 2; i++) emit(ctx, k, hash_gram(order, padded + i, order) % buckets);
    }
  }
}

int rmt_langid_each_feature(const char *text, size_t len, const rmt_langid_groups *groups, rmt_langid_emit emit,
                            void *ctx) {
  uint32_t padded[RMT_LANGID_WORD_MAX + 2];
  int n = 0, words = 0;
  padded[0] = ' ';
  const unsigned char *s = (const unsigned char *)text;
  for (size_t i = 0; i <= len;) {
    uint32_t c = i < len ? next_code_point(s, len, &i) : (i++, ' ');
    int letter = is_letter(c);
    if (letter) padded[1 + n++] = fold_case(c);
    if (n > 0 && (!letter || n == RMT_LANGID_WORD_MAX)) {
      padded[n + 1] = ' ';
      word_features(padded, n, groups, emit, ctx);
      words++;
      n = 0;
    }
  }
  return words;
}

int rmt_langid_groups_check(const rmt_langid_groups *g) {
  if (g->n < 1 || g->n > RMT_LANGID_MAX_GROUPS) {
    return rmt_error(RMT_E_INVALID, "langid: %d n-gram orders, expected 1 to %d", g->n, RMT_LANGID_MAX_GROUPS);
  }
  for (int k = 0; k < g->n; k++) {
    if (g->orders[k] < 0 || g->orders[k] > RMT_LANGID_MAX_ORDER) {
      return rmt_error(RMT_E_INVALID, "langid: order %d is outside [0, %d]", g->orders[k], RMT_LANGID_MAX_ORDER);
    }
    if (g->buckets[k] < 1 || g->buckets[k] > RMT_LANGID_MAX_BUCKETS) {
      return rmt_error(RMT_E_INVALID, "langid: %d rows for order %d, expected 1 to %d", g->buckets[k], g->orders[k],
                       RMT_LANGID_MAX_BUCKETS);
    }
  }
  return RMT_OK;
}

typedef struct {
  int32_t *rows, *groups;
  int cap, count;
} feature_list;

static void list_feature(void *ctx, int group, uint32_t row) {
  feature_list *list = ctx;
  if (list->count < list->cap) {
    list->rows[list->count] = (int32_t)row;
    list->groups[list->count] = group;
  }
  if (list->count < INT32_MAX) list->count++;
}

RMT_API int rmt_langid_features(const char *text, size_t len, const int32_t *orders, const int32_t *buckets,
                                int n_groups, int32_t *rows, int32_t *groups, int cap) {
  rmt_langid_groups g = {.n = n_groups};
  if (n_groups < 1 || n_groups > RMT_LANGID_MAX_GROUPS || !orders || !buckets || (!text && len) || cap < 0 ||
      (cap && (!rows || !groups))) {
    return rmt_error(RMT_E_INVALID, "langid: bad arguments to rmt_langid_features");
  }
  memcpy(g.orders, orders, sizeof *orders * (size_t)n_groups);
  memcpy(g.buckets, buckets, sizeof *buckets * (size_t)n_groups);
  int err = rmt_langid_groups_check(&g);
  if (err) return err;
  feature_list list = {rows, groups, cap, 0};
  rmt_langid_each_feature(text ? text : "", len, &g, list_feature, &list);
  return list.count;
}
