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

#endif
