// What the model has no piece for, carried from a sentence's source text to
// its translation's text, byte for byte.
//
// An emoji, a name in another script, a symbol or a control character is an
// unknown id in the source, or no id at all where the tokenizer's normalizer
// drops it (U+FFFD, zero-width and most C0 control characters); the model
// then writes <unk>, or nothing. Here each such part of the source is a span:
// a run of unknown ids with the one-character pieces joined to them (a letter
// of that script the vocabulary happens to have, a variation selector), or
// the characters the normalizer dropped. In the output:
//  1. an <unk> stands for the free span nearest (in source ids) to the id it
//     is aligned to, unknown ids before dropped characters; or for nothing
//     when aligned inside a span an earlier <unk> stands for (another piece
//     of the same word), or when none is left. A one-character piece that a
//     span holds is not written again.
//  2. a span no <unk> stands for goes before the first word (a token that
//     starts with a space or ASCII punctuation, or the output's first) aligned
//     at or after it, else before the closing punctuation, else at the end.
// Spaces around a span follow the source's. Only rule 2 looks ahead, so a
// stable prefix (streaming) stops where rule 2 could still place a span: the
// text it shows is always the start of the final text.
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "spm.h"
#include "translation.h"

// ---------------------------------------------------------------- the source's spans

// Bytes of the whitespace character (JavaScript's \s but U+FEFF) at text[i]
// (of len), or 0.
static int space_len(const char *text, size_t i, size_t len) {
  const unsigned char *t = (const unsigned char *)text + i;
  size_t left = len - i;
  if (left >= 1 && (t[0] == ' ' || (t[0] >= '\t' && t[0] <= '\r'))) return 1;
  if (left >= 2 && t[0] == 0xC2 && t[1] == 0xA0) return 2;  // U+00A0
  if (left < 3) return 0;
  if (t[0] == 0xE1 && t[1] == 0x9A && t[2] == 0x80) return 3;  // U+1680
  if (t[0] == 0xE2 && t[1] == 0x80 && (t[2] <= 0x8A || t[2] == 0xA8 || t[2] == 0xA9 || t[2] == 0xAF)) return 3;
  if (t[0] == 0xE2 && t[1] == 0x81 && t[2] == 0x9F) return 3;  // U+205F
  if (t[0] == 0xE3 && t[1] == 0x80 && t[2] == 0x80) return 3;  // U+3000
  return 0;
}

// Bytes of the whitespace character that ends at text[i] and starts at or
// after text[from], or 0.
static int space_ending(const char *text, size_t from, size_t i) {
  for (size_t k = 1; k <= 3 && k <= i - from; k++)
    if (space_len(text, i - k, i) == (int)k) return (int)k;
  return 0;
}

static int is_unknown(const rmt_spm *spm, int id) { return rmt_spm_piece_type(spm, id) == RMT_SPM_UNKNOWN; }

// A piece of one non-ASCII character that does not start a word.
static int is_glyph(const rmt_spm *spm, int id) {
  if (rmt_spm_piece_type(spm, id) != RMT_SPM_NORMAL) return 0;
  const char *piece = rmt_spm_id_to_piece(spm, id);
  unsigned char lead = (unsigned char)piece[0];
  size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  return want && strlen(piece) == want && memcmp(piece, "\xE2\x96\x81", 3) != 0;  // not "▁"
}

// Whether ids j and j + 1 (spans: their bytes) join without whitespace.
static int joined(const char *text, const int32_t *spans, int j) {
  int32_t from = spans[2 * j + 1], to = spans[2 * j + 2];
  for (int32_t i = from; i < to; i++)
    if (space_len(text, (size_t)i, (size_t)to)) return 0;
  return 1;
}

// The run from id j of unknown ids and glyphs joined without whitespace: its
// last id in *last (j - 1 when id j is neither); whether it has an unknown id.
static int find_run(const rmt_spm *spm, const char *text, const int *ids, const int32_t *spans, int n_ids, int j,
                    int *last) {
  int unknown = 0;
  *last = j - 1;
  for (int k = j; k < n_ids && (is_unknown(spm, ids[k]) || is_glyph(spm, ids[k])); k++) {
    *last = k;
    unknown |= is_unknown(spm, ids[k]);
    if (k + 1 < n_ids && !joined(text, spans, k)) break;
  }
  return unknown;
}

// Adds bytes [begin, end) of `text` less the whitespace at either end, as a
// span of ids first..last; returns 1, or 0 when nothing is left.
static int add_span(const char *text, int32_t begin, int32_t end, int first, int last, int unknown, rmt_carried *out) {
  int k;
  while (begin < end && (k = space_len(text, (size_t)begin, (size_t)end)) > 0) begin += k;
  while (end > begin && (k = space_ending(text, (size_t)begin, (size_t)end)) > 0) end -= k;
  if (begin >= end) return 0;
  *out = (rmt_carried){begin, end, first, last, unknown};
  return 1;
}

// The spans of one sentence's text (len bytes; its ids and their spans, as
// rmt_spm_encode_spans gave them), in order; `dropped`: room for len + 1
// ranges. Returns how many (at most ids + len + 1), or an RMT_E_* code.
static int find_spans(const rmt_spm *spm, const rmt_config *c, const char *text, int32_t len, const int *ids,
                      const int32_t *spans, int n_ids, int32_t *dropped, rmt_carried *out) {
  int n_dropped = rmt_spm_dropped(spm, text, (size_t)len, dropped, len + 1, c->target_lang_ids, c->n_target_langs);
  if (n_dropped < 0) return n_dropped;
  int n = 0, d = 0;
  for (int j = 0; j <= n_ids; j++) {
    int last = j, run = j < n_ids && find_run(spm, text, ids, spans, n_ids, j, &last);
    if (j == n_ids || last < j) last = j;
    int32_t begin = j < n_ids ? spans[2 * j] : len, end = j < n_ids ? spans[2 * last + 1] : len;
    // Dropped characters up to the end of this id (or run): at this id, but
    // those inside the run, which holds them.
    for (; d < n_dropped && dropped[2 * d] < end; d++) {
      if (run && dropped[2 * d] >= begin) continue;
      n += add_span(text, dropped[2 * d], dropped[2 * d + 1], j, j, 0, out + n);
    }
    if (run) n += add_span(text, begin, end, j, last, 1, out + n);
    j = last;
  }
  return n;
}

int rmt_carry_keep(rmt_translation *tr, const rmt_spm *spm, const char *texts, const int32_t *text_lens, size_t total,
                   const int32_t *spans, int prefix) {
  if (total > INT32_MAX / 4) return rmt_error(RMT_E_SIZE, "too large: %zu bytes of text", total);
  size_t most = (size_t)tr->src_rows + total + (size_t)tr->n_sent;  // find_spans' bound, summed
  tr->text = malloc(total ? total : 1);
  tr->text_at = malloc(sizeof(int32_t) * ((size_t)tr->n_sent + 1));
  tr->carried_at = malloc(sizeof(int32_t) * ((size_t)tr->n_sent + 1));
  tr->carried = malloc(sizeof(rmt_carried) * most);
  tr->src_spans = calloc(2 * (size_t)tr->src_rows, sizeof(int32_t));  // src_rows is below the arena's limit
  int32_t *dropped = malloc(sizeof(int32_t) * 2 * (total + 1));
  int rc = tr->text && tr->text_at && tr->carried_at && tr->carried && tr->src_spans && dropped
               ? RMT_OK : rmt_error(RMT_E_NOMEM, "out of memory");
  if (!rc && total) memcpy(tr->text, texts, total);
  if (!rc) tr->text_at[0] = tr->carried_at[0] = 0;
  size_t packed = 0;  // where sentence s's ids are in `spans`
  for (int s = 0; !rc && s < tr->n_sent; s++) {
    const int *ids = tr->src_ids + tr->src_offset[s] + prefix;
    int n_ids = tr->src_len[s] - 1 - prefix;
    tr->text_at[s + 1] = tr->text_at[s] + text_lens[s];
    int n = find_spans(spm, &tr->model->config, tr->text + tr->text_at[s], text_lens[s], ids,
                       spans + 2 * (packed + (size_t)prefix), n_ids, dropped, tr->carried + tr->carried_at[s]);
    if (n < 0) rc = n;
    else tr->carried_at[s + 1] = tr->carried_at[s] + n;
    // Kept for the alignment in text (rmt_translation_read), so the text is never tokenized again.
    memcpy(tr->src_spans + 2 * ((size_t)tr->src_offset[s] + prefix), spans + 2 * (packed + (size_t)prefix),
           2 * sizeof(int32_t) * (size_t)n_ids);
    packed += (size_t)(tr->src_len[s] - 1);
  }
  free(dropped);
  return rc;
}

// ---------------------------------------------------------------- the output

// A span while one text is written.
typedef struct {
  rmt_carried c;
  int state;  // 0: free, 1: an output <unk> stands for it, 2: written
} span_state;

enum { TOKEN_TEXT, TOKEN_UNKNOWN, TOKEN_HELD };  // TOKEN_HELD: a glyph a span holds, not written

// One output token: its decoded bytes [from, to), the source id it is aligned
// to (-1: none), and for an <unk> the span it stands for (-1: none).
typedef struct {
  size_t from, to;
  int at, kind, stands_for;
} out_token;

typedef struct {
  const char *src;  // the sentence's text
  size_t src_len;
  span_state *spans;
  int n_spans;
  char *out;        // room for the decoded text, the source and a space either side of each span
  size_t len;
  int space_owed;   // the source has a space after the span written last
} carry_out;

static int distance(const rmt_carried *c, int at) { return at < c->first ? c->first - at : at > c->last ? at - c->last : 0; }

// Rule 1: the span an <unk> aligned to source id `at` (-1: none) stands for, or -1.
static int stands_for(const span_state *sp, int n, int at) {
  for (int i = 0; i < n; i++)
    if (sp[i].state && at >= sp[i].c.first && at <= sp[i].c.last) return -1;
  int best = -1;
  for (int i = 0; i < n; i++) {
    if (sp[i].state) continue;
    if (best < 0 || sp[i].c.unknown > sp[best].c.unknown) best = i;
    else if (at >= 0 && sp[i].c.unknown == sp[best].c.unknown && distance(&sp[i].c, at) < distance(&sp[best].c, at)) best = i;
  }
  return best;
}

// Whether output id `id` is a glyph that a span of unknown ids holds (ids: the source's).
static int held(const rmt_spm *spm, const span_state *sp, int n, const int *src_ids, int id) {
  if (!is_glyph(spm, id)) return 0;
  for (int i = 0; i < n; i++)
    for (int j = sp[i].c.first; sp[i].c.unknown && j <= sp[i].c.last; j++)
      if (src_ids[j] == id) return 1;
  return 0;
}

static int is_punct(char ch) {
  return ch > ' ' && ch < 0x7F && !(ch >= '0' && ch <= '9') && !((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z');
}
// Punctuation that follows a word without a space.
static int is_closing(char ch) { return ch && strchr(".,;:!?)]}%\"'", ch) != NULL; }

static void put_bytes(carry_out *o, const char *t, size_t n) {
  if (n) memcpy(o->out + o->len, t, n);
  o->len += n;
}

static void put_span(carry_out *o, span_state *sp) {
  const rmt_carried *c = &sp->c;
  int lead = space_ending(o->src, 0, (size_t)c->begin) > 0;
  if ((lead || o->space_owed) && o->len && o->out[o->len - 1] != ' ') o->out[o->len++] = ' ';
  put_bytes(o, o->src + c->begin, (size_t)(c->end - c->begin));
  o->space_owed = space_len(o->src, (size_t)c->end, o->src_len) > 0;
  sp->state = 2;
}

// Writes a token's text (but a space that would start the output); returns
// how many of its bytes it wrote.
static size_t put_token(carry_out *o, const char *t, size_t n) {
  while (o->len == 0 && n && t[0] == ' ') t++, n--;
  if (!n) return 0;
  if (o->space_owed && t[0] != ' ' && !is_closing(t[0])) o->out[o->len++] = ' ';
  o->space_owed = 0;
  put_bytes(o, t, n);
  return n;
}

// Rule 2 before a token aligned to source id `at` (INT_MAX: every span
// left): writes the free spans at or before it; with `stop`, writes nothing
// and returns 1 when there is one (the stable text ends there).
static int place_free(carry_out *o, int at, int stop) {
  for (int i = 0; i < o->n_spans; i++) {
    if (o->spans[i].state || o->spans[i].c.first > at) continue;
    if (stop) return 1;
    put_span(o, &o->spans[i]);
  }
  return 0;
}

// The tokens of a decoded hypothesis (tok_spans: each id's bytes of `text`),
// with rule 1 applied in output order, so that rule 2 leaves alone what a
// later <unk> stands for.
static void read_tokens(const rmt_spm *spm, const int *src_ids, const int32_t *ids, const int32_t *align, int n,
                        int prefix, const int32_t *tok_spans, span_state *sp, int n_spans, out_token *tok) {
  size_t cursor = 0;
  for (int i = 0; i < n; i++) {
    size_t end = (size_t)tok_spans[2 * i + 1] > cursor ? (size_t)tok_spans[2 * i + 1] : cursor;
    int at = align[i] >= 0 ? align[i] - prefix : -1;  // never the language token
    int kind = is_unknown(spm, ids[i]) ? TOKEN_UNKNOWN : held(spm, sp, n_spans, src_ids, ids[i]) ? TOKEN_HELD : TOKEN_TEXT;
    tok[i] = (out_token){cursor, end, at, kind, -1};
    cursor = end;
    if (kind != TOKEN_UNKNOWN) continue;
    tok[i].stands_for = stands_for(sp, n_spans, at);
    if (tok[i].stands_for >= 0) sp[tok[i].stands_for].state = 1;
  }
}

// The first of the tokens at the end that are only ASCII punctuation and spaces.
static int closing_start(const out_token *tok, int n, const char *text) {
  int tail = n;
  for (; tail > 0 && tok[tail - 1].kind == TOKEN_TEXT; tail--) {
    for (size_t i = tok[tail - 1].from; i < tok[tail - 1].to; i++)
      if (text[i] != ' ' && !is_punct(text[i])) return tail;
  }
  return tail;
}

// Writes the decoded text with the spans; out_spans (if not NULL): each
// token's bytes of the result. whole: a whole hypothesis (else a stable prefix).
static void write_text(carry_out *o, const out_token *tok, int n, const char *text, size_t text_len, int whole,
                       int32_t *out_spans) {
  int tail = closing_start(tok, n, text);
  for (int i = 0; i < n; i++) {
    const char *t = text + tok[i].from;
    size_t tn = tok[i].to - tok[i].from;
    int word = tok[i].kind == TOKEN_TEXT && tn && (o->len == 0 || t[0] == ' ' || is_punct(t[0]));
    int place = i >= tail ? INT_MAX : word ? tok[i].at : -1;
    if (place >= 0 && place_free(o, place, !whole)) return;
    size_t begin = o->len;
    if (tok[i].stands_for >= 0) {
      span_state *sp = &o->spans[tok[i].stands_for];
      put_span(o, sp);
      begin = o->len - (size_t)(sp->c.end - sp->c.begin);
    } else if (tok[i].kind == TOKEN_TEXT) {
      size_t written = put_token(o, t, tn);
      begin = o->len - written;
    }
    if (out_spans) {
      out_spans[2 * i] = (int32_t)begin;
      out_spans[2 * i + 1] = (int32_t)o->len;
    }
  }
  size_t rest = n ? tok[n - 1].to : 0;
  put_bytes(o, text + rest, text_len - rest);
  if (whole) place_free(o, INT_MAX, 0);
}

// Copies n bytes to out when they fit (snprintf convention).
static int copy_text(const char *text, size_t n, char *out, size_t cap) {
  if (n > INT32_MAX) return rmt_error(RMT_E_LIMIT, "text too long");
  if (out && n < cap) {
    if (n) memcpy(out, text, n);
    out[n] = 0;
  }
  return (int)n;
}

int rmt_carry_decode(const rmt_translation *tr, const rmt_spm *spm, int s, const int32_t *ids, const int32_t *align,
                     int n, int whole, char *out, size_t cap, int32_t *spans) {
  int len = rmt_spm_decode_spans(spm, ids, n, NULL, 0, NULL);
  if (len < 0) return len;
  int prefix = tr->model->config.n_target_langs ? 1 : 0, n_spans = tr->carried_at[s + 1] - tr->carried_at[s];
  size_t src_len = (size_t)(tr->text_at[s + 1] - tr->text_at[s]);
  // len < INT32_MAX, n < max_positions, the spans are in memory: these sizes cannot wrap.
  char *decoded = malloc((size_t)len + 1), *text = malloc((size_t)len + src_len + 2 * (size_t)n_spans + 1);
  int32_t *tok_spans = malloc(sizeof(int32_t) * 2 * ((size_t)n + 1));
  span_state *sp = malloc(sizeof(span_state) * ((size_t)n_spans + 1));
  out_token *tok = malloc(sizeof(out_token) * ((size_t)n + 1));
  int rc = decoded && text && tok_spans && sp && tok ? RMT_OK : rmt_error(RMT_E_NOMEM, "out of memory");
  if (!rc) rc = rmt_spm_decode_spans(spm, ids, n, decoded, (size_t)len + 1, tok_spans);
  if (rc >= 0) {
    for (int i = 0; i < n_spans; i++) sp[i] = (span_state){tr->carried[tr->carried_at[s] + i], 0};
    carry_out o = {tr->text + tr->text_at[s], src_len, sp, n_spans, text, 0, 0};
    read_tokens(spm, tr->src_ids + tr->src_offset[s] + prefix, ids, align, n, prefix, tok_spans, sp, n_spans, tok);
    write_text(&o, tok, n, decoded, (size_t)len, whole, spans);
    rc = copy_text(text, o.len, out, cap);
  }
  free(decoded), free(text), free(tok_spans), free(sp), free(tok);
  return rc;
}
