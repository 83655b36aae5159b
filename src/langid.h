// Language identification: which language a text is written in.
//
// A small model in the style of CLD3: the text's hashed character n-grams
// (and whole words), one embedding table per n-gram order, each order's
// embeddings averaged, the averages concatenated into x, then
//   h = relu(W1 x + b1)   (when the model has a hidden layer)
//   p = softmax(W2 h + b2)   over the model's languages (BCP 47 tags).
// The tables are int8 (a float32 scale per row, or one per table); the dense
// layers are read in any dtype the safetensors reader widens to float32.
//
// The model file is safetensors (src/safetensors.h) with
//   __metadata__: {"format": "rmt-langid", "version": "1",
//                  "languages": "af,am,...", "orders": "0,1,2,3,4"}
//   table.K        I8 [buckets_K, D] (+ table.K.qscale), K = 0 .. groups-1:
//                  order orders[K] (0: whole words)
//   hidden.weight [H, groups*D], hidden.bias [H]   (optional)
//   output.weight [L, H or groups*D], output.bias [L]
// Any other tensor, a missing one, or a wrong shape is an RMT_E_FORMAT error.
//
// Features (rmt_langid_features: the one definition, which training uses
// too): the UTF-8 text is read as code points (an invalid byte is a
// separator); a letter is an ASCII letter or any code point from U+00C0 on
// that is not punctuation, a symbol or a space in the ranges of
// langid_is_separator; letters are lower-cased (ASCII, Latin-1, Latin
// Extended-A, Greek, Cyrillic, Armenian) and every run of other characters
// separates words; words longer than RMT_LANGID_WORD_MAX letters are cut.
// For a word w: order 0 hashes w, order n >= 1 each window of n code points
// of " w " (space-padded; for n = 1 the letters only). A feature's row is
// hash(order, code points) % buckets of its table.
#ifndef RMT_LANGID_H
#define RMT_LANGID_H
#include <stddef.h>
#include <stdint.h>

#include "rmt.h"

#define RMT_LANGID_MAX_GROUPS 8      // n-gram orders in one model
#define RMT_LANGID_MAX_ORDER 8       // the longest n-gram
#define RMT_LANGID_MAX_LANGS 1024
#define RMT_LANGID_MAX_DIM 1024      // D, and H
#define RMT_LANGID_MAX_BUCKETS (1 << 24)
#define RMT_LANGID_TAG_MAX 16        // bytes of a tag, with its NUL
#define RMT_LANGID_WORD_MAX 64       // letters of a word before it is cut

typedef struct rmt_langid rmt_langid;              // the model: read-only after load
typedef struct rmt_langid_state rmt_langid_state;  // one caller's scratch

// Loads a model from the bytes of its file (copied: the caller may free
// them). NULL on failure, with the reason in rmt_last_error().
RMT_API rmt_langid *rmt_langid_load(const uint8_t *bytes, size_t size);
RMT_API void rmt_langid_free(rmt_langid *model);
// Bytes the loaded model holds.
RMT_API size_t rmt_langid_bytes(const rmt_langid *model);
RMT_API int rmt_langid_n_languages(const rmt_langid *model);
// Tag of language i (0 <= i < n_languages), or NULL.
RMT_API const char *rmt_langid_language(const rmt_langid *model, int i);

// Scratch for rmt_langid_detect, sized by the model; NULL on failure.
RMT_API rmt_langid_state *rmt_langid_state_new(const rmt_langid *model);
RMT_API void rmt_langid_state_free(rmt_langid_state *state);
// Scores `len` bytes of UTF-8 text: afterwards rmt_langid_probs holds one
// probability per language. Returns the number of features seen (0 when the
// text has no letters: the probabilities are then all 0), or a negative code.
// Allocates nothing.
RMT_API int rmt_langid_detect(rmt_langid_state *state, const char *text, size_t len);
// The probabilities of the last detect (n_languages floats, in model order).
RMT_API const float *rmt_langid_probs(const rmt_langid_state *state);

// The features of a text for orders[0 .. n_groups-1] hashed into
// buckets[0 .. n_groups-1] rows: feature k is row rows[k] of group groups[k].
// Writes at most `cap`; returns how many there are (more than cap: call
// again with room), or RMT_E_INVALID for a bad order or bucket count.
RMT_API int rmt_langid_features(const char *text, size_t len, const int32_t *orders, const int32_t *buckets,
                                int n_groups, int32_t *rows, int32_t *groups, int cap);
#endif
