// SentencePiece model loading, encoding (unigram Viterbi, BPE merges) and
// decoding, following sentencepiece 0.1.97 (model_interface.cc,
// unigram_model.cc EncodeOptimized, bpe_model.cc, sentencepiece_processor.cc).
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "size.h"
#include "spm_types.h"

// ---------------------------------------------------------------------------
// Protobuf wire format: just what a ModelProto needs.

typedef struct {
  const uint8_t *p, *end, *start;  // start: of the whole file, for error offsets
} pb_reader;

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_BYTES = 2, PB_FIXED32 = 5 };

static int pb_corrupt(const pb_reader *r, const char *what) {
  return rmt_error(RMT_E_FORMAT, "spm: the model file is corrupt or truncated (%s at byte %zu)",
                   what, (size_t)(r->p - r->start));
}

static int pb_varint(pb_reader *r, uint64_t *value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) return pb_corrupt(r, "truncated varint");
    uint8_t b = *r->p++;
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      *value = v;
      return RMT_OK;
    }
  }
  return pb_corrupt(r, "overlong varint");
}

// Reads the next field's tag; *field 0 at the end of the message.
static int pb_tag(pb_reader *r, uint32_t *field, int *wire) {
  *field = 0;
  if (r->p >= r->end) return RMT_OK;
  uint64_t tag;
  int rc = pb_varint(r, &tag);
  if (rc) return rc;
  if (tag >> 3 == 0 || tag >> 3 > 0x1FFFFFFF) return pb_corrupt(r, "bad field number");
  *field = (uint32_t)(tag >> 3);
  *wire = (int)(tag & 7);
  return RMT_OK;
}

static int pb_bytes(pb_reader *r, const uint8_t **data, size_t *len) {
  uint64_t n;
  int rc = pb_varint(r, &n);
  if (rc) return rc;
  if (n > (uint64_t)(r->end - r->p)) return pb_corrupt(r, "length past the end");
  *data = r->p;
  *len = (size_t)n;
  r->p += n;
  return RMT_OK;
}

static int pb_skip(pb_reader *r, int wire) {
  uint64_t v;
  const uint8_t *d;
  size_t n;
  switch (wire) {
    case PB_VARINT: return pb_varint(r, &v);
    case PB_BYTES: return pb_bytes(r, &d, &n);
    case PB_FIXED64:
    case PB_FIXED32:
      n = wire == PB_FIXED64 ? 8 : 4;
      if ((size_t)(r->end - r->p) < n) return pb_corrupt(r, "truncated fixed field");
      r->p += n;
      return RMT_OK;
    default: return pb_corrupt(r, "unsupported wire type");
  }
}

// Checks the wire type of a known field.
static int pb_expect(pb_reader *r, int wire, int expected) {
  return wire == expected ? RMT_OK : pb_corrupt(r, "wrong wire type");
}

static pb_reader pb_sub(const pb_reader *r, const uint8_t *data, size_t len) {
  return (pb_reader){data, data + len, r->start};
}

// A string field copied out (NUL-terminated).
static int pb_string(pb_reader *r, char **out) {
  const uint8_t *d;
  size_t n;
  int rc = pb_bytes(r, &d, &n);
  if (rc) return rc;
  char *s = malloc(n + 1);
  if (!s) return rmt_error(RMT_E_NOMEM, "spm: out of memory");
  memcpy(s, d, n);
  s[n] = 0;
  free(*out);
  *out = s;
  return RMT_OK;
}

// ---------------------------------------------------------------------------
// Loading.

// What the loader gathers before building the tokenizer.
typedef struct {
  spm_piece *pieces;
  int n_pieces, cap_pieces;
  spm_buf strings;
  int model_type;
  bool byte_fallback, treat_whitespace_as_suffix;
  char *unk_surface;  // NULL: the default " ⁇ "
  char *special_piece[4];
  const uint8_t *charsmap, *denorm_charsmap;  // views into the file
  size_t charsmap_size, denorm_charsmap_size;
  bool has_denorm;
} spm_proto;

static int parse_piece(pb_reader *r, spm_proto *m) {
  if (m->n_pieces == m->cap_pieces) {
    int cap = m->cap_pieces ? 2 * m->cap_pieces : 1024;
    if (cap > (1 << 24)) return pb_corrupt(r, "too many pieces");
    spm_piece *p = realloc(m->pieces, (size_t)cap * sizeof *p);
    if (!p) return rmt_error(RMT_E_NOMEM, "spm: out of memory");
    m->pieces = p;
    m->cap_pieces = cap;
  }
  spm_piece *piece = &m->pieces[m->n_pieces];
  *piece = (spm_piece){.offset = (uint32_t)m->strings.len, .type = RMT_SPM_NORMAL};
  const uint8_t *text = (const uint8_t *)"";
  size_t text_len = 0;
  uint32_t field;
  int wire, rc;
  uint64_t v;
  while (!(rc = pb_tag(r, &field, &wire)) && field) {
    if (field == 1) {
      if ((rc = pb_expect(r, wire, PB_BYTES)) || (rc = pb_bytes(r, &text, &text_len))) return rc;
    } else if (field == 2) {
      if ((rc = pb_expect(r, wire, PB_FIXED32))) return rc;
      if (r->end - r->p < 4) return pb_corrupt(r, "truncated score");
      uint32_t bits = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
                      (uint32_t)r->p[3] << 24;
      memcpy(&piece->score, &bits, 4);
      r->p += 4;
    } else if (field == 3) {
      if ((rc = pb_expect(r, wire, PB_VARINT)) || (rc = pb_varint(r, &v))) return rc;
      if (v < RMT_SPM_NORMAL || v > RMT_SPM_BYTE)
        return rmt_error(RMT_E_FORMAT, "spm: piece %d has an unknown type %llu", m->n_pieces,
                         (unsigned long long)v);
      piece->type = (uint8_t)v;
    } else if ((rc = pb_skip(r, wire))) {
      return rc;
    }
  }
  if (rc) return rc;
  if (text_len == 0) return rmt_error(RMT_E_FORMAT, "spm: piece %d is empty", m->n_pieces);
  if (memchr(text, 0, text_len))
    return rmt_error(RMT_E_FORMAT, "spm: piece %d contains a NUL byte", m->n_pieces);
  if (m->strings.len + text_len + 1 > UINT32_MAX) return pb_corrupt(r, "pieces too long");
  if ((rc = spm_buf_append(&m->strings, (const char *)text, text_len)) ||
      (rc = spm_buf_append(&m->strings, "", 1)))
    return rc;
  piece->len = (uint32_t)text_len;
  m->n_pieces++;
  return RMT_OK;
}

static int parse_trainer_spec(pb_reader *r, spm_proto *m) {
  uint32_t field;
  int wire, rc;
  uint64_t v;
  while (!(rc = pb_tag(r, &field, &wire)) && field) {
    if (field == 3 || field == 24 || field == 35) {
      if ((rc = pb_expect(r, wire, PB_VARINT)) || (rc = pb_varint(r, &v))) return rc;
      if (field == 3) m->model_type = (int)(v > 100 ? 100 : v);
      if (field == 24) m->treat_whitespace_as_suffix = v != 0;
      if (field == 35) m->byte_fallback = v != 0;
    } else if (field == 44) {
      if ((rc = pb_expect(r, wire, PB_BYTES)) || (rc = pb_string(r, &m->unk_surface))) return rc;
    } else if (field >= 45 && field <= 48) {  // unk, bos, eos, pad pieces
      if ((rc = pb_expect(r, wire, PB_BYTES)) ||
          (rc = pb_string(r, &m->special_piece[field - 45])))
        return rc;
    } else if ((rc = pb_skip(r, wire))) {
      return rc;
    }
  }
  return rc;
}

static int parse_normalizer_spec(pb_reader *r, spm_normalizer *norm, const uint8_t **charsmap,
                                 size_t *charsmap_size) {
  uint32_t field;
  int wire, rc;
  uint64_t v;
  while (!(rc = pb_tag(r, &field, &wire)) && field) {
    if (field == 2) {
      if ((rc = pb_expect(r, wire, PB_BYTES)) || (rc = pb_bytes(r, charsmap, charsmap_size)))
        return rc;
    } else if (field >= 3 && field <= 5) {
      if ((rc = pb_expect(r, wire, PB_VARINT)) || (rc = pb_varint(r, &v))) return rc;
      if (field == 3) norm->add_dummy_prefix = v != 0;
      if (field == 4) norm->remove_extra_whitespaces = v != 0;
      if (field == 5) norm->escape_whitespaces = v != 0;
    } else if ((rc = pb_skip(r, wire))) {  // name, rule TSV: not needed
      return rc;
    }
  }
  return rc;
}

static int parse_model(const uint8_t *data, size_t size, spm_proto *m, rmt_spm *spm) {
  pb_reader r = {data, data + size, data};
  uint32_t field;
  int wire, rc;
  const uint8_t *d = NULL;
  size_t n = 0;
  while (!(rc = pb_tag(&r, &field, &wire)) && field) {
    if (field >= 1 && field <= 5 && field != 4) {
      if ((rc = pb_expect(&r, wire, PB_BYTES)) || (rc = pb_bytes(&r, &d, &n))) return rc;
      pb_reader sub = pb_sub(&r, d, n);
      if (field == 1) rc = parse_piece(&sub, m);
      if (field == 2) rc = parse_trainer_spec(&sub, m);
      if (field == 3) rc = parse_normalizer_spec(&sub, &spm->norm, &m->charsmap, &m->charsmap_size);
      if (field == 5) {
        m->has_denorm = true;
        rc = parse_normalizer_spec(&sub, &spm->denorm, &m->denorm_charsmap,
                                   &m->denorm_charsmap_size);
      }
      if (rc) return rc;
    } else if ((rc = pb_skip(&r, wire))) {
      return rc;
    }
  }
  return rc;
}

// ---------------------------------------------------------------------------
// The piece trie.

static int trie_add_edge(spm_trie *t, int node, uint8_t byte, int *child) {
  if (node == 0) {
    if (t->root[byte] < 0) t->root[byte] = t->n_nodes++;
    *child = t->root[byte];
    return RMT_OK;
  }
  uint32_t key = (uint32_t)node * 256u + byte + 1u;
  uint32_t h = (key * 2654435761u) & t->mask;
  while (t->edges[h].key && t->edges[h].key != key) h = (h + 1) & t->mask;
  if (!t->edges[h].key) {
    t->edges[h].key = key;
    t->edges[h].child = t->n_nodes++;
  }
  *child = t->edges[h].child;
  return RMT_OK;
}

// Builds the trie of all pieces; fails on a piece defined twice in the same
// map (normal or reserved), as SentencePiece does.
static int build_trie(rmt_spm *spm) {
  spm_trie *t = &spm->trie;
  size_t total = 1;
  for (int i = 0; i < spm->n_pieces; i++) total += spm->pieces[i].len;
  if (total >= (1u << 23)) return rmt_error(RMT_E_FORMAT, "spm: pieces too long in total");
  uint32_t size = 1024;
  while (size < 2 * total) size *= 2;
  t->edges = calloc(size, sizeof *t->edges);
  t->norm_id = malloc(total * sizeof *t->norm_id);
  t->resv_id = malloc(total * sizeof *t->resv_id);
  t->user_path = calloc(total, 1);
  if (!t->edges || !t->norm_id || !t->resv_id || !t->user_path) return rmt_error(RMT_E_NOMEM, "spm: out of memory");
  t->mask = size - 1;
  for (int b = 0; b < 256; b++) t->root[b] = -1;
  for (size_t i = 0; i < total; i++) t->norm_id[i] = t->resv_id[i] = -1;
  t->n_nodes = 1;
  for (int i = 0; i < spm->n_pieces; i++) {
    const spm_piece *p = &spm->pieces[i];
    const uint8_t *s = (const uint8_t *)spm->strings + p->offset;
    int node = 0;
    for (uint32_t k = 0; k < p->len; k++) {
      trie_add_edge(t, node, s[k], &node);
      if (p->type == RMT_SPM_USER_DEFINED) t->user_path[node] = 1;
    }
    bool normal = p->type == RMT_SPM_NORMAL || p->type == RMT_SPM_USER_DEFINED ||
                  p->type == RMT_SPM_UNUSED;
    int32_t *slot = normal ? &t->norm_id[node] : &t->resv_id[node];
    if (*slot >= 0)
      return rmt_error(RMT_E_FORMAT, "spm: piece %d \"%.64s\" is already defined (as %d)", i,
                       spm->strings + p->offset, *slot);
    *slot = i;
  }
  return RMT_OK;
}

// The trie node of `text`, or -1.
static int trie_find(const spm_trie *t, const char *text, size_t len) {
  int node = 0;
  for (size_t i = 0; i < len && node >= 0; i++) node = spm_trie_child(t, node, (uint8_t)text[i]);
  return node;
}

// SentencePiece's PieceToId: reserved pieces first, then normal ones, else unk.
static int piece_to_id(const rmt_spm *spm, const char *text, size_t len) {
  int node = trie_find(&spm->trie, text, len);
  if (node < 0) return spm->unk_id;
  if (spm->trie.resv_id[node] >= 0) return spm->trie.resv_id[node];
  if (spm->trie.norm_id[node] >= 0) return spm->trie.norm_id[node];
  return spm->unk_id;
}

static void normalizer_free(spm_normalizer *norm) {
  free(norm->units);
  free(norm->repl);
}

RMT_API void rmt_spm_free(rmt_spm *spm) {
  if (!spm) return;
  free(spm->pieces);
  free(spm->strings);
  free(spm->canon_id);
  free(spm->trie.edges);
  free(spm->trie.norm_id);
  free(spm->trie.resv_id);
  free(spm->trie.user_path);
  free(spm->unk_surface);
  normalizer_free(&spm->norm);
  normalizer_free(&spm->denorm);
  free(spm);
}

static const char *const default_special[4] = {"<unk>", "<s>", "</s>", "<pad>"};

// One byte piece's byte: its text exactly <0xXX> (upper case), byte_fallback on.
static int read_byte_piece(const rmt_spm *spm, spm_piece *p, const char *s) {
  unsigned byte = 256;
  char name[16] = "";
  if (!spm->byte_fallback) return rmt_error(RMT_E_FORMAT, "spm: byte piece %.64s but byte_fallback is off", s);
  if (p->len == 6 && sscanf(s, "<0x%2X>", &byte) == 1 && byte < 256) snprintf(name, sizeof name, "<0x%02X>", byte);
  if (strcmp(name, s) != 0) return rmt_error(RMT_E_FORMAT, "spm: byte piece %.64s is invalid", s);
  p->byte = (uint8_t)byte;
  return RMT_OK;
}

// What each piece's type tells the encoder: the normal pieces' score range,
// the user-defined pieces' first bytes, unk's id, the bytes' pieces.
static int scan_pieces(rmt_spm *spm, bool byte_seen[256]) {
  spm->unk_id = -1;
  spm->min_score = FLT_MAX;
  spm->max_score = FLT_MIN;
  for (int i = 0; i < spm->n_pieces; i++) {
    spm_piece *p = &spm->pieces[i];
    const char *s = spm->strings + p->offset;
    int rc;
    switch (p->type) {
      case RMT_SPM_NORMAL:
        if (p->score < spm->min_score) spm->min_score = p->score;
        if (p->score > spm->max_score) spm->max_score = p->score;
        break;
      case RMT_SPM_USER_DEFINED:
        spm->has_user_defined = true;
        spm->user_first[(uint8_t)s[0]] = true;
        break;
      case RMT_SPM_UNUSED: spm->has_unused = true; break;
      case RMT_SPM_UNKNOWN:
        if (spm->unk_id >= 0) return rmt_error(RMT_E_FORMAT, "spm: unk is defined twice");
        spm->unk_id = i;
        break;
      case RMT_SPM_BYTE:
        if ((rc = read_byte_piece(spm, p, s))) return rc;
        byte_seen[p->byte] = true;
        break;
      default: break;
    }
  }
  return spm->unk_id < 0 ? rmt_error(RMT_E_FORMAT, "spm: unk is not defined") : RMT_OK;
}

// With byte_fallback every byte needs its piece; a unigram model needs a piece it can choose.
static int check_coverage(rmt_spm *spm, const bool byte_seen[256]) {
  for (int b = 0; spm->byte_fallback && b < 256; b++) {
    char name[8];
    snprintf(name, sizeof name, "<0x%02X>", b);
    if (!byte_seen[b]) return rmt_error(RMT_E_FORMAT, "spm: byte_fallback is on but piece %s is missing", name);
    spm->byte_id[b] = piece_to_id(spm, name, 6);
  }
  if (spm->model_type != SPM_UNIGRAM) return RMT_OK;
  for (int i = 0; i < spm->n_pieces; i++) {
    int t = spm->pieces[i].type;
    if (t == RMT_SPM_NORMAL || t == RMT_SPM_USER_DEFINED || t == RMT_SPM_UNUSED) return RMT_OK;
  }
  return rmt_error(RMT_E_FORMAT, "spm: the unigram model has no normal pieces");
}

// Each piece's canonical id (the first piece of its text), the special ids, unk's surface.
static int set_ids(rmt_spm *spm, spm_proto *m) {
  spm->canon_id = malloc((size_t)spm->n_pieces * sizeof *spm->canon_id);
  if (!spm->canon_id) return rmt_error(RMT_E_NOMEM, "spm: out of memory");
  for (int i = 0; i < spm->n_pieces; i++)
    spm->canon_id[i] = piece_to_id(spm, spm->strings + spm->pieces[i].offset, spm->pieces[i].len);
  for (int k = 0; k < 4; k++) {
    const char *name = m->special_piece[k] ? m->special_piece[k] : default_special[k];
    int id = piece_to_id(spm, name, strlen(name));
    int want = k == RMT_SPM_UNK_ID ? RMT_SPM_UNKNOWN : RMT_SPM_CONTROL;
    spm->special[k] = spm->pieces[id].type == want ? id : -1;
  }
  spm->unk_surface = m->unk_surface;
  m->unk_surface = NULL;
  if (!spm->unk_surface) {
    spm->unk_surface = malloc(sizeof " \xE2\x81\x87 ");
    if (!spm->unk_surface) return rmt_error(RMT_E_NOMEM, "spm: out of memory");
    memcpy(spm->unk_surface, " \xE2\x81\x87 ", sizeof " \xE2\x81\x87 ");
  }
  return RMT_OK;
}

static int set_normalizers(rmt_spm *spm, const spm_proto *m) {
  int rc;
  if (m->charsmap_size &&
      (rc = spm_normalizer_set_charsmap(&spm->norm, m->charsmap, m->charsmap_size, "normalizer")))
    return rc;
  // SentencePiece applies a denormalizer only when it has a charsmap.
  if (m->has_denorm && m->denorm_charsmap_size) {
    spm->has_denorm = true;
    return spm_normalizer_set_charsmap(&spm->denorm, m->denorm_charsmap, m->denorm_charsmap_size, "denormalizer");
  }
  return RMT_OK;
}

static int setup(rmt_spm *spm, spm_proto *m) {
  int rc;
  spm->pieces = m->pieces;
  spm->n_pieces = m->n_pieces;
  spm->strings = m->strings.data;
  m->pieces = NULL;
  m->strings.data = NULL;
  if (spm->n_pieces == 0) return rmt_error(RMT_E_FORMAT, "spm: the model has no pieces");
  if (m->model_type != SPM_UNIGRAM && m->model_type != SPM_BPE)
    return rmt_error(RMT_E_FORMAT, "spm: model type %d is not supported (only unigram and BPE)",
                     m->model_type);
  spm->model_type = m->model_type;
  spm->byte_fallback = m->byte_fallback;
  spm->norm.treat_whitespace_as_suffix = m->treat_whitespace_as_suffix;
  bool byte_seen[256] = {false};
  if ((rc = build_trie(spm)) || (rc = scan_pieces(spm, byte_seen)) || (rc = check_coverage(spm, byte_seen)) ||
      (rc = set_ids(spm, m))) {
    return rc;
  }
  return set_normalizers(spm, m);
}

RMT_API rmt_spm *rmt_spm_load(const uint8_t *data, size_t size) {
  rmt_clear_error();
  if (!data && size) {
    rmt_error(RMT_E_INVALID, "spm: no model data");
    return NULL;
  }
  rmt_spm *spm = calloc(1, sizeof *spm);
  if (!spm) {
    rmt_error(RMT_E_NOMEM, "spm: out of memory");
    return NULL;
  }
  // Proto defaults.
  static const spm_normalizer norm_defaults = {
      .add_dummy_prefix = true, .remove_extra_whitespaces = true, .escape_whitespaces = true};
  spm->norm = spm->denorm = norm_defaults;
  spm_proto m = {.model_type = SPM_UNIGRAM};
  int rc = size ? parse_model(data, size, &m, spm) : rmt_error(RMT_E_FORMAT, "spm: empty model file");
  if (!rc) rc = setup(spm, &m);
  free(m.pieces);
  free(m.strings.data);
  free(m.unk_surface);
  for (int k = 0; k < 4; k++) free(m.special_piece[k]);
  if (rc) {
    rmt_spm_free(spm);
    return NULL;
  }
  return spm;
}

// ---------------------------------------------------------------------------
// Encoding.

// A piece of the segmentation: bytes [start, start + len) of the normalized text.
typedef struct {
  int32_t start, len, id;
} spm_seg;

// Per-call working memory, sized from the normalized length.
typedef struct {
  const spm_excluded *excluded;
  spm_buf norm;
  void *block;
  spm_seg *segs;
  int n_segs;
} spm_work;

static void work_free(spm_work *w) {
  free(w->norm.data);
  free(w->block);
}

// Unigram: the best-scoring segmentation (Viterbi over positions, pieces from
// the trie, an unknown character scoring min_score - 10). Scores are summed
// exactly as SentencePiece's EncodeOptimized does, in the same types, so ties
// break the same way.
static int encode_unigram(const rmt_spm *spm, spm_work *w) {
  const char *s = w->norm.data;
  int n = (int)w->norm.len;
  typedef struct {
    float score;
    int32_t start, id;
  } best_t;
  size_t bytes = rmt_size_add(rmt_size_mul((size_t)n + 1, sizeof(best_t)), rmt_size_mul((size_t)n, sizeof(spm_seg)));
  if (bytes == RMT_SIZE_OVERFLOW) return rmt_error(RMT_E_SIZE, "spm: text too long (%d bytes normalized)", n);
  w->block = malloc(bytes);
  if (!w->block) return rmt_error(RMT_E_NOMEM, "spm: out of memory (%zu bytes)", bytes);
  best_t *best = w->block;
  w->segs = (spm_seg *)(best + n + 1);
  for (int i = 0; i <= n; i++) best[i] = (best_t){0.0f, -1, -1};
  const float unk_score = spm->min_score - 10.0f;
  const spm_trie *t = &spm->trie;
  for (int start = 0; start < n;) {
    const float till_here = best[start].score;
    int mblen = "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[(uint8_t)s[start] >> 4];
    if (mblen > n - start) mblen = n - start;
    bool has_single = false;
    int node = 0;
    for (int end = start; end < n;) {
      node = spm_trie_child(t, node, (uint8_t)s[end++]);
      if (node < 0) break;
      int id = t->norm_id[node];
      if (id < 0) continue;
      const spm_piece *p = &spm->pieces[id];
      if (p->type == RMT_SPM_UNUSED || spm_is_excluded(w->excluded, id)) continue;
      int len = end - start;
      double score = p->type == RMT_SPM_USER_DEFINED
                         ? (double)((float)len * spm->max_score) - 0.1
                         : (double)p->score;
      double cand = score + (double)till_here;
      best_t *target = &best[end];
      if (target->start < 0 || cand > (double)target->score) {
        target->score = (float)cand;
        target->start = start;
        target->id = id;
      }
      if (len == mblen) has_single = true;
    }
    if (!has_single) {
      best_t *target = &best[start + mblen];
      float cand = unk_score + till_here;
      if (target->start < 0 || cand > target->score) {
        target->score = cand;
        target->start = start;
        target->id = spm->unk_id;
      }
    }
    start += mblen;
  }
  // Backtrack, then reverse in place.
  int k = 0;
  for (int end = n; end > 0; end = best[end].start)
    w->segs[k++] = (spm_seg){best[end].start, end - best[end].start, best[end].id};
  for (int i = 0; i < k / 2; i++) {
    spm_seg tmp = w->segs[i];
    w->segs[i] = w->segs[k - 1 - i];
    w->segs[k - 1 - i] = tmp;
  }
  w->n_segs = k;
  return RMT_OK;
}

// BPE symbols and candidate merges.
typedef struct {
  int32_t prev, next;  // neighbouring symbols, -1 at the ends
  int32_t start, len;  // bytes of the normalized text; len 0 once merged away
  int32_t node;        // trie node of its text, -1 when no piece starts so
  bool freeze;         // a user-defined piece: never merged
} bpe_symbol;

typedef struct {
  float score;
  int32_t left, right, size, node;  // node: of the merged text
} bpe_pair;

// Heap order: higher score first, then the leftmost.
static inline bool pair_before(const bpe_pair *a, const bpe_pair *b) {
  return a->score > b->score || (a->score == b->score && a->left < b->left);
}

typedef struct {
  bpe_pair *heap;
  int n;
  bpe_symbol *sym;
  int32_t *rev_left;  // per piece: left length of its last candidate merge (unused pieces)
  spm_seg *pending;    // resegmentation stack
} bpe_state;

static void bpe_push(bpe_state *st, bpe_pair pair) {
  int i = st->n++;
  while (i > 0) {
    int parent = (i - 1) / 2;
    if (!pair_before(&pair, &st->heap[parent])) break;
    st->heap[i] = st->heap[parent];
    i = parent;
  }
  st->heap[i] = pair;
}

static bpe_pair bpe_pop(bpe_state *st) {
  bpe_pair top = st->heap[0], last = st->heap[--st->n];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= st->n) break;
    if (c + 1 < st->n && pair_before(&st->heap[c + 1], &st->heap[c])) c++;
    if (!pair_before(&st->heap[c], &last)) break;
    st->heap[i] = st->heap[c];
    i = c;
  }
  if (st->n > 0) st->heap[i] = last;
  return top;
}

static void bpe_maybe_add(const rmt_spm *spm, const spm_excluded *ex, const char *s, bpe_state *st, int left,
                          int right) {
  if (left < 0 || right < 0 || st->sym[left].freeze || st->sym[right].freeze) return;
  int32_t size = st->sym[left].len + st->sym[right].len;
  // Continue from the left symbol's node over the right symbol's bytes.
  int node = st->sym[left].node;
  for (int32_t k = st->sym[right].start, end = k + st->sym[right].len; k < end && node >= 0; k++)
    node = spm_trie_child(&spm->trie, node, (uint8_t)s[k]);
  int id = node < 0 ? -1 : spm->trie.norm_id[node];
  if (id < 0 || spm_is_excluded(ex, id)) return;
  bpe_push(st, (bpe_pair){spm->pieces[id].score, left, right, size, node});
  if (spm->pieces[id].type == RMT_SPM_UNUSED) st->rev_left[id] = st->sym[left].len;
}

// Appends the segment of [start, start+len), splitting unused pieces back
// into the two pieces they were last merged from (their texts are this
// piece's, split at the recorded length), depth first, left first.
static void bpe_resegment(const rmt_spm *spm, const char *s, const bpe_state *st, spm_work *w,
                          int32_t start, int32_t len) {
  int top = 0;
  st->pending[top++] = (spm_seg){start, len, 0};
  while (top > 0) {
    spm_seg g = st->pending[--top];
    int id = piece_to_id(spm, s + g.start, (size_t)g.len);
    int32_t left = st->rev_left ? st->rev_left[id] : 0;
    if (spm->pieces[id].type == RMT_SPM_UNUSED && left > 0 && left < g.len) {
      st->pending[top++] = (spm_seg){g.start + left, g.len - left, 0};
      st->pending[top++] = (spm_seg){g.start, left, 0};
    } else {
      w->segs[w->n_segs++] = (spm_seg){g.start, g.len, id};
    }
  }
}

// BPE: start from characters (user-defined pieces whole and frozen), then
// repeatedly merge the adjacent pair whose union is the best-scoring piece.
static int encode_bpe(const rmt_spm *spm, spm_work *w) {
  const char *s = w->norm.data;
  int n = (int)w->norm.len;
  size_t rev_bytes = spm->has_unused ? (size_t)spm->n_pieces * sizeof(int32_t) : 0;
  // At most n symbols, segments and pending ranges (all non-empty and
  // disjoint); n - 1 initial pairs and 2 per merge.
  size_t bytes = rmt_size_add(rmt_size_add(rmt_size_mul(3 * (size_t)n + 1, sizeof(bpe_pair)),
                                            rmt_size_mul((size_t)n, sizeof(bpe_symbol) + 2 * sizeof(spm_seg))),
                              rev_bytes);
  if (bytes == RMT_SIZE_OVERFLOW) return rmt_error(RMT_E_SIZE, "spm: text too long (%d bytes normalized)", n);
  w->block = malloc(bytes);
  if (!w->block) return rmt_error(RMT_E_NOMEM, "spm: out of memory (%zu bytes)", bytes);
  bpe_state st = {0};
  st.heap = w->block;
  st.sym = (bpe_symbol *)(st.heap + 3 * (size_t)n + 1);
  w->segs = (spm_seg *)(st.sym + n);
  st.pending = w->segs + n;
  if (rev_bytes) {
    st.rev_left = (int32_t *)(st.pending + n);
    memset(st.rev_left, 0, rev_bytes);
  }
  int n_sym = 0;
  for (int i = 0; i < n;) {
    size_t len = 0;
    if (spm->has_user_defined && spm->user_first[(uint8_t)s[i]])
      len = spm_match_user_defined(spm, w->excluded, s + i, (size_t)(n - i));
    bool freeze = len > 0;
    if (!len) {
      len = (size_t)"\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[(uint8_t)s[i] >> 4];
      if (len > (size_t)(n - i)) len = (size_t)(n - i);
    }
    int node = trie_find(&spm->trie, s + i, len);
    st.sym[n_sym] = (bpe_symbol){n_sym - 1, -1, i, (int32_t)len, node, freeze};
    if (n_sym > 0) st.sym[n_sym - 1].next = n_sym;
    n_sym++;
    i += (int)len;
  }
  for (int i = 1; i < n_sym; i++) bpe_maybe_add(spm, w->excluded, s, &st, i - 1, i);
  while (st.n > 0) {
    bpe_pair top = bpe_pop(&st);
    bpe_symbol *l = &st.sym[top.left], *r = &st.sym[top.right];
    if (l->len == 0 || r->len == 0 || l->len + r->len != top.size) continue;  // stale
    l->len += r->len;
    l->node = top.node;
    l->next = r->next;
    if (r->next >= 0) st.sym[r->next].prev = top.left;
    r->len = 0;
    bpe_maybe_add(spm, w->excluded, s, &st, l->prev, top.left);
    bpe_maybe_add(spm, w->excluded, s, &st, top.left, l->next);
  }
  w->n_segs = 0;
  for (int i = n_sym ? 0 : -1; i >= 0; i = st.sym[i].next)
    bpe_resegment(spm, s, &st, w, st.sym[i].start, st.sym[i].len);
  return RMT_OK;
}

RMT_API int rmt_spm_encode(const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                           int max_ids) {
  return rmt_spm_encode_spans(spm, text, len, ids, NULL, max_ids, NULL, 0);
}

RMT_API int rmt_spm_encode_excluding(const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                                     int max_ids, const int32_t *excluded, int n_excluded) {
  return rmt_spm_encode_spans(spm, text, len, ids, NULL, max_ids, excluded, n_excluded);
}

// The input bytes behind normalized bytes [start, start + len) (len > 0):
// from the first one's begin to the last one's end.
static void input_span(const spm_buf *map, int32_t start, int32_t len, int32_t *span) {
  const spm_span *m = (const spm_span *)map->data;
  span[0] = m[start].begin;
  span[1] = m[start + len - 1].end;
}

RMT_API int rmt_spm_encode_spans(const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                                 int32_t *spans, int max_ids, const int32_t *excluded, int n_excluded) {
  if (!spm || (!text && len) || max_ids < 0 || (!ids && max_ids > 0) || n_excluded < 0 ||
      (!excluded && n_excluded > 0))
    return rmt_error(RMT_E_INVALID, "spm: bad arguments to rmt_spm_encode");
  if (len > (size_t)INT32_MAX / 8) return rmt_error(RMT_E_LIMIT, "spm: text too long (%zu bytes)", len);
  const spm_excluded ex = {excluded, n_excluded};
  spm_work w = {.excluded = &ex};
  spm_buf map = {0};
  int rc = spm_normalize(&spm->norm, spm, &ex, text, len, &w.norm, spans ? &map : NULL);
  if (!rc && w.norm.len > (size_t)INT32_MAX / 16)
    rc = rmt_error(RMT_E_LIMIT, "spm: text too long (%zu bytes normalized)", w.norm.len);
  if (!rc && w.norm.len > 0)
    rc = spm->model_type == SPM_BPE ? encode_bpe(spm, &w) : encode_unigram(spm, &w);
  if (rc) {
    work_free(&w);
    free(map.data);
    return rc;
  }
  // Unknown pieces become their bytes with byte fallback; otherwise a run of
  // unknown pieces becomes one unknown id (its span then grows over the run).
  int count = 0;
  bool prev_unk = false;
  for (int i = 0; i < w.n_segs; i++) {
    spm_seg *g = &w.segs[i];
    // A single character that is itself an excluded piece: unknown, never the piece.
    if (spm_is_excluded(&ex, g->id)) g->id = spm->unk_id;
    bool unk = spm->pieces[g->id].type == RMT_SPM_UNKNOWN;
    if (unk && spm->byte_fallback) {
      for (int k = 0; k < g->len; k++, count++) {
        if (count >= max_ids) continue;
        ids[count] = spm->byte_id[(uint8_t)w.norm.data[g->start + k]];
        if (spans) input_span(&map, g->start + k, 1, spans + 2 * (size_t)count);
      }
    } else if (!(unk && prev_unk)) {
      if (count < max_ids) {
        ids[count] = g->id;
        if (spans) input_span(&map, g->start, g->len, spans + 2 * (size_t)count);
      }
      count++;
    } else if (spans && count <= max_ids) {
      int32_t run[2];
      input_span(&map, g->start, g->len, run);
      spans[2 * (size_t)count - 1] = run[1];
    }
    prev_unk = unk;
  }
  work_free(&w);
  free(map.data);
  return count;
}

RMT_API int rmt_spm_dropped(const rmt_spm *spm, const char *text, size_t len, int32_t *ranges, int max_ranges,
                            const int32_t *excluded, int n_excluded) {
  if (!spm || (!text && len) || max_ranges < 0 || (!ranges && max_ranges > 0) || n_excluded < 0 ||
      (!excluded && n_excluded > 0))
    return rmt_error(RMT_E_INVALID, "spm: bad arguments to rmt_spm_dropped");
  if (len > (size_t)INT32_MAX / 8) return rmt_error(RMT_E_LIMIT, "spm: text too long (%zu bytes)", len);
  const spm_excluded ex = {excluded, n_excluded};
  spm_buf norm = {0}, map = {0};
  int rc = spm_normalize(&spm->norm, spm, &ex, text, len, &norm, &map);
  free(norm.data);
  if (rc) {
    free(map.data);
    return rc;
  }
  // The map's input ranges come in order: what lies between them is dropped.
  const spm_span *m = (const spm_span *)map.data;
  size_t n = map.len / sizeof(spm_span);
  int count = 0;
  int32_t covered = 0;
  for (size_t i = 0; i <= n; i++) {
    int32_t begin = i < n ? m[i].begin : (int32_t)len;
    if (begin > covered) {
      if (count < max_ranges) ranges[2 * count] = covered, ranges[2 * count + 1] = begin;
      count++;
    }
    if (i < n && m[i].end > covered) covered = m[i].end;
  }
  free(map.data);
  return count;
}

// ---------------------------------------------------------------------------
// Decoding.

// Sets the span of ids [from, to) to output bytes [begin, end) (spans may be NULL).
static void set_spans(int32_t *spans, int from, int to, size_t begin, size_t end) {
  for (int i = from; spans && i < to; i++) {
    spans[2 * (size_t)i] = (int32_t)begin;
    spans[2 * (size_t)i + 1] = (int32_t)end;
  }
}

// Appends the text of a run of byte pieces: valid UTF-8 as is, each byte of
// an invalid sequence as U+FFFD. The ids of one character share its span.
static int decode_bytes(const rmt_spm *spm, const int32_t *ids, int from, int to, spm_buf *out, int32_t *spans) {
  int rc = spm_buf_reserve(out, 3 * (size_t)(to - from));
  if (rc) return rc;
  for (int i = from; i < to;) {
    char window[4];
    int n = to - i < 4 ? to - i : 4;
    for (int k = 0; k < n; k++) window[k] = (char)spm->pieces[spm->canon_id[ids[i + k]]].byte;
    size_t len = spm_valid_utf8_len(window, (size_t)n), begin = out->len;
    if (len) {
      memcpy(out->data + out->len, window, len);
      out->len += len;
    } else {
      memcpy(out->data + out->len, "\xEF\xBF\xBD", 3);
      out->len += 3;
      len = 1;
    }
    set_spans(spans, i, i + (int)len, begin, out->len);
    i += (int)len;
  }
  return RMT_OK;
}

// Decodes ids into `out`; with spans (2 per id), each id's bytes of the output.
static int decode_to_buf(const rmt_spm *spm, const int32_t *ids, int n_ids, spm_buf *out, int32_t *spans) {
  int rc;
  for (int i = 0; i < n_ids; i++)
    if (ids[i] < 0 || ids[i] >= spm->n_pieces)
      return rmt_error(RMT_E_INVALID, "spm: invalid id %d (vocabulary of %d)", ids[i],
                       spm->n_pieces);
  bool strip_bos_ws = spm->norm.add_dummy_prefix || spm->norm.remove_extra_whitespaces;
  bool is_bos_ws = true, bos_ws_seen = false;
  int byte_start = 0;
  for (int i = 0; i < n_ids; i++) {
    int id = spm->canon_id[ids[i]];
    const spm_piece *p = &spm->pieces[id];
    if (p->type == RMT_SPM_BYTE) continue;
    if ((rc = decode_bytes(spm, ids, byte_start, i, out, spans))) return rc;
    byte_start = i + 1;
    if (bos_ws_seen || out->len > 0) is_bos_ws = false;
    bos_ws_seen = false;
    size_t begin = out->len;
    if (p->type == RMT_SPM_CONTROL) {
      set_spans(spans, i, i + 1, begin, begin);
      continue;
    }
    if (p->type == RMT_SPM_UNKNOWN) {
      if ((rc = spm_buf_append(out, spm->unk_surface, strlen(spm->unk_surface)))) return rc;
      set_spans(spans, i, i + 1, begin, out->len);
      continue;
    }
    const char *s = spm->strings + p->offset;
    size_t len = p->len;
    if (is_bos_ws && strip_bos_ws && len >= SPM_SPACE_LEN && !memcmp(s, SPM_SPACE, SPM_SPACE_LEN)) {
      s += SPM_SPACE_LEN;
      len -= SPM_SPACE_LEN;
      bos_ws_seen = !spm->norm.remove_extra_whitespaces;
    }
    if ((rc = spm_buf_reserve(out, len))) return rc;
    for (size_t k = 0; k < len;) {
      if (k + SPM_SPACE_LEN <= len && !memcmp(s + k, SPM_SPACE, SPM_SPACE_LEN)) {
        out->data[out->len++] = ' ';
        k += SPM_SPACE_LEN;
      } else {
        out->data[out->len++] = s[k++];
      }
    }
    set_spans(spans, i, i + 1, begin, out->len);
  }
  return decode_bytes(spm, ids, byte_start, n_ids, out, spans);
}

// Moves n spans of a text through a normalization of it whose map is `map`:
// a span becomes the output bytes that came from input bytes inside it (an
// empty span where the first output byte from at or after its start is).
// Spans are in order (decoding writes them so), so one pass over the map does.
static void remap_spans(int32_t *spans, int n, const spm_buf *map) {
  const spm_span *m = (const spm_span *)map->data;
  int32_t m_len = (int32_t)(map->len / sizeof(spm_span)), j = 0;
  for (int i = 0; i < n; i++) {
    int32_t begin = spans[2 * i], end = spans[2 * i + 1];
    while (j < m_len && m[j].begin < begin) j++;
    int32_t k = j;
    while (k < m_len && m[k].begin < end) k++;
    spans[2 * i] = j;
    spans[2 * i + 1] = k;
  }
}

// Copies `buf` to `out` when it fits (snprintf convention).
static int copy_out(const spm_buf *buf, char *out, size_t cap) {
  if (buf->len > (size_t)INT32_MAX) return rmt_error(RMT_E_LIMIT, "spm: text too long");
  if (out && buf->len < cap) {
    if (buf->len) memcpy(out, buf->data, buf->len);
    out[buf->len] = 0;
  }
  return (int)buf->len;
}

RMT_API int rmt_spm_decode(const rmt_spm *spm, const int32_t *ids, int n_ids, char *out,
                           size_t cap) {
  return rmt_spm_decode_spans(spm, ids, n_ids, out, cap, NULL);
}

RMT_API int rmt_spm_decode_spans(const rmt_spm *spm, const int32_t *ids, int n_ids, char *out,
                                 size_t cap, int32_t *spans) {
  if (!spm || n_ids < 0 || (!ids && n_ids > 0) || (!out && cap > 0))
    return rmt_error(RMT_E_INVALID, "spm: bad arguments to rmt_spm_decode");
  spm_buf text = {0}, denorm = {0}, map = {0};
  int rc = decode_to_buf(spm, ids, n_ids, &text, spans);
  const spm_buf *result = &text;
  if (!rc && spm->has_denorm) {
    rc = spm_normalize(&spm->denorm, NULL, NULL, text.data, text.len, &denorm, spans ? &map : NULL);
    if (!rc && spans) remap_spans(spans, n_ids, &map);
    result = &denorm;
  }
  if (!rc) rc = copy_out(result, out, cap);
  free(text.data);
  free(denorm.data);
  free(map.data);
  return rc;
}

RMT_API int rmt_spm_normalize(const rmt_spm *spm, const char *text, size_t len, char *out,
                              size_t cap) {
  if (!spm || (!text && len) || (!out && cap > 0))
    return rmt_error(RMT_E_INVALID, "spm: bad arguments to rmt_spm_normalize");
  spm_buf buf = {0};
  int rc = spm_normalize(&spm->norm, spm, NULL, text, len, &buf, NULL);
  if (!rc) rc = copy_out(&buf, out, cap);
  free(buf.data);
  return rc;
}

RMT_API int rmt_spm_vocab_size(const rmt_spm *spm) { return spm ? spm->n_pieces : RMT_E_INVALID; }

RMT_API int rmt_spm_piece_to_id(const rmt_spm *spm, const char *piece) {
  if (!spm || !piece) return -1;
  int node = trie_find(&spm->trie, piece, strlen(piece));
  if (node < 0) return -1;
  if (spm->trie.resv_id[node] >= 0) return spm->trie.resv_id[node];
  return spm->trie.norm_id[node];
}

RMT_API const char *rmt_spm_id_to_piece(const rmt_spm *spm, int id) {
  if (!spm || id < 0 || id >= spm->n_pieces) return NULL;
  return spm->strings + spm->pieces[id].offset;
}

RMT_API int rmt_spm_piece_type(const rmt_spm *spm, int id) {
  if (!spm || id < 0 || id >= spm->n_pieces) return RMT_E_INVALID;
  return spm->pieces[id].type;
}

RMT_API int rmt_spm_special_id(const rmt_spm *spm, int which) {
  if (!spm || which < 0 || which > 3) return -1;
  return spm->special[which];
}
