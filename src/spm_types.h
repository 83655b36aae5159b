// Internals of the SentencePiece tokenizer shared by spm.c (model file,
// encoder, decoder) and spm_normalize.c (normalizer).
#ifndef RMT_SPM_INTERNAL_H
#define RMT_SPM_INTERNAL_H
#include <stdbool.h>

#include "spm.h"

// "▁" (U+2581), which stands for a space inside pieces.
#define SPM_SPACE "\xe2\x96\x81"
#define SPM_SPACE_LEN 3

// A growable byte buffer (grown by doubling, never per character).
typedef struct {
  char *data;
  size_t len, cap;
} spm_buf;

int spm_buf_reserve(spm_buf *buf, size_t extra);  // 0 or RMT_E_NOMEM
int spm_buf_append(spm_buf *buf, const char *bytes, size_t n);

// One NormalizerSpec. The precompiled charsmap is a darts-clone double array
// (uint32 units) whose values are offsets of NUL-terminated replacement
// strings in `repl`.
typedef struct {
  uint32_t *units;  // the double array, host byte order; NULL: identity
  size_t n_units;
  char *repl;       // replacement strings, NUL-separated
  size_t repl_size;
  bool add_dummy_prefix;
  bool remove_extra_whitespaces;
  bool escape_whitespaces;
  bool treat_whitespace_as_suffix;  // from the trainer spec (main normalizer only)
} spm_normalizer;

// Piece trie: nodes are numbered from 0 (the root); an edge (node, byte) is
// an entry of an open-addressing hash table. A node records the ids of the
// piece spelled by the path to it: `norm_id` among normal, user-defined and
// unused pieces, `resv_id` among the others (unknown, control, byte).
typedef struct {
  uint32_t key;    // node * 256 + byte + 1; 0 = empty slot
  int32_t child;
} spm_edge;

typedef struct {
  spm_edge *edges;
  uint32_t mask;      // table size - 1 (a power of two)
  int32_t *norm_id;   // per node, -1 when none
  int32_t *resv_id;   // per node, -1 when none
  uint8_t *user_path; // per node: on the path of a user-defined piece
  int32_t root[256];  // children of the root, -1 when none (skips the hash)
  int n_nodes;
} spm_trie;

// Child of `node` by `byte`, or -1.
static inline int spm_trie_child(const spm_trie *trie, int node, uint8_t byte) {
  if (node == 0) return trie->root[byte];
  uint32_t key = (uint32_t)node * 256u + byte + 1u;
  uint32_t h = (key * 2654435761u) & trie->mask;
  for (;;) {
    const spm_edge *e = &trie->edges[h];
    if (e->key == key) return e->child;
    if (e->key == 0) return -1;
    h = (h + 1) & trie->mask;
  }
}

typedef struct {
  uint32_t offset;  // of the piece in rmt_spm.strings (NUL-terminated there)
  uint32_t len;
  float score;
  uint8_t type;     // RMT_SPM_*
  uint8_t byte;     // the byte of a BYTE piece
} spm_piece;

enum { SPM_UNIGRAM = 1, SPM_BPE = 2, SPM_WORD = 3, SPM_CHAR = 4 };

struct rmt_spm {
  int n_pieces;
  spm_piece *pieces;    // (n_pieces)
  char *strings;        // piece texts, each NUL-terminated
  int32_t *canon_id;    // (n_pieces) PieceToId(piece(id)): what spm_decode sees
  spm_trie trie;
  int model_type;       // SPM_UNIGRAM or SPM_BPE
  bool byte_fallback;
  bool has_user_defined;
  bool has_unused;
  bool user_first[256]; // bytes that start a user-defined piece
  int unk_id;           // the UNKNOWN piece
  int32_t byte_id[256]; // PieceToId("<0xXX>") when byte_fallback
  float min_score, max_score;  // over NORMAL pieces (max starts at FLT_MIN, as spm)
  int special[4];       // unk/bos/eos/pad ids (RMT_SPM_*_ID), -1 when none
  char *unk_surface;    // what an unknown piece decodes to
  spm_normalizer norm;
  spm_normalizer denorm;
  bool has_denorm;
};

// Ids an encoding must not produce (rmt_spm_encode_excluding); NULL for none.
typedef struct {
  const int32_t *ids;
  int n;
} spm_excluded;

static inline bool spm_is_excluded(const spm_excluded *ex, int id) {
  for (int i = 0; ex && i < ex->n; i++)
    if (ex->ids[i] == id) return true;
  return false;
}

// Length of the longest user-defined piece, not excluded, that prefixes `text`, or 0.
// (Here, beside the trie, for the encoder and the normalizer alike.)
static inline size_t spm_match_user_defined(const rmt_spm *spm, const spm_excluded *ex, const char *text, size_t len) {
  size_t best = 0;
  int node = 0;
  for (size_t i = 0; i < len; i++) {
    node = spm_trie_child(&spm->trie, node, (uint8_t)text[i]);
    if (node < 0 || !spm->trie.user_path[node]) break;
    int id = spm->trie.norm_id[node];
    if (id >= 0 && spm->pieces[id].type == RMT_SPM_USER_DEFINED && !spm_is_excluded(ex, id)) best = i + 1;
  }
  return best;
}

// SentencePiece's UTF-8 rules: the length of the character at `text` when it
// is valid (literal U+FFFD included), else 0.
size_t spm_valid_utf8_len(const char *text, size_t len);

// Where a normalized byte came from: bytes [begin, end) of the input (the
// whole chunk that the normalizer replaced; an empty range for a byte it
// added, like the dummy prefix). Kept per byte, so any byte range of the
// normalized text (a piece) maps back to the input text it stands for.
typedef struct {
  int32_t begin, end;
} spm_span;

// Normalizes `len` bytes of `text` into `out` (replacing its contents).
// `spm`, if not NULL, supplies the user-defined pieces (but those in `ex`),
// which pass unchanged. `map`, if not NULL, receives one spm_span per byte
// of `out` (its len counts bytes of spans); `len` must then fit an int32.
int spm_normalize(const spm_normalizer *norm, const rmt_spm *spm, const spm_excluded *ex,
                  const char *text, size_t len, spm_buf *out, spm_buf *map);

// Checks and copies a precompiled charsmap blob into `norm`.
int spm_normalizer_set_charsmap(spm_normalizer *norm, const uint8_t *blob, size_t size,
                                const char *what);
#endif
