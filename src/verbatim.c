// The source's verbatim spans (verbatim_find.c) given back in the output
// text, byte for byte. After the model's text is decoded (with what carry.c
// carries), each span of the sentence:
//  1. is kept where the output holds its bytes as they are, not inside a
//     longer number, word or address (each occurrence serves one span);
//  2. else replaces the target tokens aligned to it: the first run of them,
//     widened to whole words (ayuda|ted -> the URL), the space before kept;
//  3. else, when no token is aligned to it, is put before the first word
//     aligned after it, else before the closing punctuation, else at the end.
// A stable prefix (streaming) stops at the last word before which a span
// could still change, so it is always the start of the final text.
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "size.h"
#include "translation.h"
#include "verbatim.h"

int rmt_verbatim_keep(rmt_translation *tr) {
  int prefix = tr->model->config.n_target_langs ? 1 : 0;
  // Counted first: at most one span a byte, and the texts may hold INT32_MAX / 4 bytes (rmt_carry_keep).
  tr->verbatim_at = malloc(sizeof(int32_t) * ((size_t)tr->n_sent + 1));
  if (!tr->verbatim_at) return rmt_error(RMT_E_NOMEM, "out of memory");
  tr->verbatim_at[0] = 0;
  for (int s = 0; s < tr->n_sent; s++) {
    int n = rmt_verbatim_find(tr->text + tr->text_at[s], (size_t)(tr->text_at[s + 1] - tr->text_at[s]), NULL, 0);
    if (n < 0) return n;
    tr->verbatim_at[s + 1] = tr->verbatim_at[s] + n;
  }
  size_t bytes = rmt_size_mul(sizeof(rmt_verbatim), (size_t)tr->verbatim_at[tr->n_sent] + 1);
  if (bytes == RMT_SIZE_OVERFLOW) return rmt_error(RMT_E_SIZE, "too large: %d verbatim spans", tr->verbatim_at[tr->n_sent]);
  tr->verbatim = malloc(bytes);
  if (!tr->verbatim) return rmt_error(RMT_E_NOMEM, "out of memory");
  for (int s = 0; s < tr->n_sent; s++) {
    const char *text = tr->text + tr->text_at[s];
    size_t len = (size_t)(tr->text_at[s + 1] - tr->text_at[s]);
    rmt_verbatim *v = tr->verbatim + tr->verbatim_at[s];
    int n = rmt_verbatim_find(text, len, v, tr->verbatim_at[s + 1] - tr->verbatim_at[s]);
    if (n < 0) return n;
    // The source ids each span overlaps (an id's bytes may start with the space before it).
    const int32_t *spans = tr->src_spans + 2 * ((size_t)tr->src_offset[s] + prefix);
    int n_ids = tr->src_len[s] - 1 - prefix;
    for (int i = 0; i < n; i++) {
      v[i].first = n_ids, v[i].last = -1;
      for (int j = 0; j < n_ids; j++) {
        if (spans[2 * j] >= v[i].end || spans[2 * j + 1] <= v[i].begin) continue;
        if (j < v[i].first) v[i].first = j;
        v[i].last = j;
      }
    }
  }
  return RMT_OK;
}

// ---------------------------------------------------------------- the output

static int alnum(unsigned char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }
static int space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

typedef struct {
  const char *src;           // the sentence's text
  int32_t src_len;
  const rmt_verbatim *v;     // its spans
  int n_v;
  const char *text;          // the decoded output
  int32_t len;
  const int32_t *tok, *at;   // per output token: its bytes of text, its source id (-1: none)
  int n_tok, whole;
  rmt_verbatim_result *res;  // [n_v] what becomes of each span
  int *owner;                // [n_tok] the span a token is replaced by or kept in (-1: none)
} repair;

// Whether text[b..e) may hold a span: not inside a longer number or word
// (1.5 in 21.5, $19.99 in $19.99.99); a prefix must show what follows.
static int bounded(const repair *r, int32_t b, int32_t e) {
  const unsigned char *t = (const unsigned char *)r->text;
  if (b > 0 && alnum(t[b - 1]) && alnum(t[b])) return 0;
  if (!r->whole && e + 2 > r->len) return 0;
  if (e < r->len && alnum(t[e]) && alnum(t[e - 1])) return 0;
  return !(e + 1 < r->len && strchr(".,:/-_@", t[e]) && alnum(t[e + 1]) && alnum(t[e - 1]));
}

// Whether a token overlapping text[b..e) is aligned inside span i.
static int aligned_within(const repair *r, int i, int32_t b, int32_t e) {
  for (int t = 0; t < r->n_tok; t++)
    if (r->tok[2 * t + 1] > b && r->tok[2 * t] < e && r->at[t] >= r->v[i].first && r->at[t] <= r->v[i].last) return 1;
  return 0;
}

// Rule 1: span i's bytes in the text where no other span is kept (with
// `aligned`, only where a token is aligned to it: of two equal spans, each
// takes its own); 1 if found. The tokens there are the span's.
static int find_kept(repair *r, int i, int aligned) {
  const char *bytes = r->src + r->v[i].begin;
  int32_t n = r->v[i].end - r->v[i].begin;
  for (int32_t b = 0; b + n <= r->len; b++) {
    if (memcmp(r->text + b, bytes, (size_t)n) != 0 || !bounded(r, b, b + n)) continue;
    int taken = 0;
    for (int k = 0; k < r->n_v && !taken; k++)
      taken = k != i && r->res[k].how == RMT_SPAN_KEPT && r->res[k].to > b && r->res[k].from < b + n;
    if (taken || (aligned && !aligned_within(r, i, b, b + n))) continue;
    r->res[i] = (rmt_verbatim_result){b, b + n, RMT_SPAN_KEPT};
    for (int t = 0; t < r->n_tok; t++)
      if (r->tok[2 * t + 1] > b && r->tok[2 * t] < b + n) r->owner[t] = i;
    return 1;
  }
  return 0;
}

static int starts_word(const repair *r, int t) {
  return t == 0 || (r->tok[2 * t + 1] > r->tok[2 * t] && space((unsigned char)r->text[r->tok[2 * t]]));
}

// Whether token t writes more than ASCII punctuation and spaces (a token
// that does not may be the sentence's own full stop, aligned to the span).
static int writes_word(const repair *r, int t) {
  for (int32_t k = r->tok[2 * t]; k < r->tok[2 * t + 1]; k++)
    if (alnum((unsigned char)r->text[k]) || (unsigned char)r->text[k] >= 0x80) return 1;
  return 0;
}

// Whether span i holds the character at text[k] (ASCII letters in either case).
static int span_has(const repair *r, int i, int32_t k) {
  const unsigned char *t = (const unsigned char *)r->text + k;
  int n = t[0] < 0x80 ? 1 : t[0] >= 0xF0 ? 4 : t[0] >= 0xE0 ? 3 : 2;
  if (k + n > r->len) return 0;
  for (int32_t j = r->v[i].begin; j + n <= r->v[i].end; j++) {
    const unsigned char *s = (const unsigned char *)r->src + j;
    if (n == 1 ? (s[0] | 0x20) == (t[0] | 0x20) : memcmp(s, t, (size_t)n) == 0) return 1;
  }
  return 0;
}

// Whether token t may be the model's rendering of span i: only punctuation,
// or a letter, digit or other character the span has ("ted" of a URL, "+C"
// of "⌘+C"; not "with" for "€", nor "Te" of "Temperature" for "≈").
static int resembles(const repair *r, int t, int i) {
  if (!writes_word(r, t)) return 1;
  for (int32_t k = r->tok[2 * t]; k < r->tok[2 * t + 1]; k++)
    if ((alnum((unsigned char)r->text[k]) || (unsigned char)r->text[k] >= 0xC0) && span_has(r, i, k)) return 1;
  return 0;
}

static int aligned_to(const repair *r, int t, int i) {
  return r->owner[t] < 0 && r->at[t] >= r->v[i].first && r->at[t] <= r->v[i].last;
}

// The end of the run of tokens from t aligned to span i that resemble it,
// less the punctuation at its end that is the sentence's ("19,99 ." for
// "19,99 €."; not the span's own closing "`"): after a word, any; else the
// one the source has after the span or, as the output's last token, at its end.
static int run_end(const repair *r, int i, int t) {
  int e = t - 1;
  while (e + 1 < r->n_tok && aligned_to(r, e + 1, i) && resembles(r, e + 1, i)) e++;
  if (e < t) return e;
  int end = e;
  while (end >= t && !writes_word(r, end) &&
         (r->tok[2 * end + 1] == r->tok[2 * end] || r->text[r->tok[2 * end + 1] - 1] != r->src[r->v[i].end - 1]))
    end--;
  if (end >= t) return end;
  const char *after = r->src + r->v[i].end;
  int32_t from = r->tok[2 * e], to = r->tok[2 * e + 1];
  while (from < to && space((unsigned char)r->text[from])) from++;
  int32_t last = r->src_len;  // the source's last character (its full stop)
  while (last > 0 && space((unsigned char)r->src[last - 1])) last--;
  int final = e == r->n_tok - 1 && last > 0 && r->text[from] == r->src[last - 1];
  int own = to - from == 1 && ((r->v[i].end < r->src_len && r->text[from] == *after) || final);
  return own ? e - 1 : e;
}

// Rule 2: the longest run of free tokens aligned inside span i that
// resemble it (run_end; "datos de archivo_2027.csv": "_2027.csv", not
// "datos"), widened to whole words when the span has letters or digits
// (ayuda|ted), as [*first, *last]; 0 when there is none.
static int aligned_run(const repair *r, int i, int *first, int *last) {
  int t = -1, e = -1;
  for (int k = 0; k < r->n_tok; k++) {
    int end = aligned_to(r, k, i) ? run_end(r, i, k) : -1;
    if (end < k) continue;
    if (t < 0 || r->tok[2 * end + 1] - r->tok[2 * k] > r->tok[2 * e + 1] - r->tok[2 * t]) t = k, e = end;
    k = end;
  }
  if (t < 0) return 0;
  int wordy = 0;
  for (int32_t k = r->v[i].begin; k < r->v[i].end; k++) wordy |= alnum((unsigned char)r->src[k]);
  while (wordy && t > 0 && r->tok[2 * t] > 0 && !starts_word(r, t) && r->owner[t - 1] < 0 && resembles(r, t - 1, i) &&
         alnum((unsigned char)r->text[r->tok[2 * t] - 1]))
    t--;
  while (wordy && e + 1 < r->n_tok && r->owner[e + 1] < 0 && !starts_word(r, e + 1) && resembles(r, e + 1, i) &&
         r->tok[2 * e + 3] > r->tok[2 * e + 2] && alnum((unsigned char)r->text[r->tok[2 * e + 2]]))
    e++;
  *first = t, *last = e;
  return 1;
}

// Rule 3: where span i goes when no token is aligned to it: the start of the
// first word aligned after it, else of the closing punctuation, else the end.
static int32_t insert_at(const repair *r, int i) {
  for (int t = 0; t < r->n_tok; t++)
    if (r->owner[t] < 0 && starts_word(r, t) && r->at[t] > r->v[i].last) return r->tok[2 * t];
  int32_t e = r->len;
  while (e > 0 && (space((unsigned char)r->text[e - 1]) || strchr(".,;:!?)\"'", r->text[e - 1]))) e--;
  return e;
}

// The start of the last word of the text (a stable prefix stops there while a span is undecided).
static int32_t last_word(const repair *r) {
  int32_t e = r->len;
  while (e > 0 && space((unsigned char)r->text[e - 1])) e--;
  while (e > 0 && !space((unsigned char)r->text[e - 1])) e--;
  return e;
}

// Decides each span (res), in rules 1, 2, 3 order; returns where a stable
// prefix must stop (len: nowhere).
static int32_t decide(repair *r) {
  int32_t stop = r->len;
  for (int i = 0; i < r->n_v; i++) r->res[i] = (rmt_verbatim_result){-1, -1, RMT_SPAN_UNDECIDED};
  for (int t = 0; t < r->n_tok; t++) r->owner[t] = -1;
  for (int i = 0; i < r->n_v; i++) find_kept(r, i, 1);
  for (int i = 0; i < r->n_v; i++)
    if (r->res[i].how == RMT_SPAN_UNDECIDED) find_kept(r, i, 0);
  for (int i = 0; i < r->n_v; i++) {
    int first, last;
    if (r->res[i].how != RMT_SPAN_UNDECIDED || r->v[i].first > r->v[i].last || !aligned_run(r, i, &first, &last)) continue;
    int32_t b = r->tok[2 * first], e = r->tok[2 * last + 1];
    while (b < e && space((unsigned char)r->text[b])) b++;
    r->res[i] = (rmt_verbatim_result){b, e, RMT_SPAN_REPLACED};
    for (int t = first; t <= last; t++) r->owner[t] = i;
    if (b < stop) stop = b;
  }
  // A span kept inside what another replaces (carry.c put it between that one's tokens) goes right after it.
  for (int i = 0; i < r->n_v; i++)
    for (int j = 0; j < r->n_v && r->res[i].how == RMT_SPAN_KEPT; j++) {
      const rmt_verbatim_result *other = &r->res[j];
      if (other->how == RMT_SPAN_REPLACED && r->res[i].from < other->to && r->res[i].to > other->from) {
        r->res[i] = (rmt_verbatim_result){other->to, other->to, RMT_SPAN_INSERTED};
        if (other->to < stop) stop = other->to;
      }
    }
  for (int i = 0; i < r->n_v; i++) {
    if (r->res[i].how != RMT_SPAN_UNDECIDED) continue;
    int32_t at = insert_at(r, i);
    r->res[i] = (rmt_verbatim_result){at, at, RMT_SPAN_INSERTED};
    if (at < stop) stop = at;
  }
  // A prefix: a later token may still make another run the longest, or keep the span.
  for (int i = 0; i < r->n_v && !r->whole; i++) {
    if (r->res[i].how == RMT_SPAN_KEPT) continue;
    if (last_word(r) < stop) stop = last_word(r);
    int t = 0;
    while (t < r->n_tok && (r->at[t] < r->v[i].first || r->at[t] > r->v[i].last)) t++;
    while (t > 0 && t < r->n_tok && !starts_word(r, t)) t--;
    if (t < r->n_tok && r->tok[2 * t] < stop) stop = r->tok[2 * t];
  }
  return stop;
}

// Whether the output's text at `pos` is a space before closing punctuation
// that follows the span (ending at src_end) in the source without one, or
// that a span inserted before it now follows.
static int glued(const repair *r, int32_t src_end, int32_t pos, int insert) {
  return pos + 1 < r->len && r->text[pos] == ' ' && strchr(".,;:!?)", r->text[pos + 1]) && r->text[pos + 1] &&
         (insert || (src_end < r->src_len && r->src[src_end] == r->text[pos + 1]));
}

// An edit of the text: bytes [from, to) of the decoded text become [nfrom, nto) of the result.
typedef struct {
  int32_t from, to, nfrom, nto;
  int span;
} edit;

// Where byte x of the decoded text is in the result: as a start (after
// what is inserted at x) or as an end (before it).
static int32_t moved(const edit *ed, int n_ed, int32_t x, int as_end) {
  int32_t delta = 0;
  for (int k = 0; k < n_ed; k++) {
    if (ed[k].to < x || (ed[k].to == x && (!as_end || ed[k].from < x))) delta += (ed[k].nto - ed[k].nfrom) - (ed[k].to - ed[k].from);
    else if (ed[k].from < x) return ed[k].nto;  // inside what the edit replaced
  }
  return x + delta;
}

// Writes the text with the spans replaced and inserted (res, decided) into
// out (room: len + each span's bytes and 2 spaces); edits: room for n_v.
// Returns the result's length; res, tok_out (if not NULL) in its bytes.
static int32_t apply(repair *r, char *out, edit *ed, int32_t *tok_out) {
  int n_ed = 0;
  for (int i = 0; i < r->n_v; i++) {
    if (r->res[i].how == RMT_SPAN_KEPT) continue;
    int k = n_ed++;  // in text order; spans inserted at one place in source order
    while (k > 0 && ed[k - 1].from > r->res[i].from) ed[k] = ed[k - 1], k--;
    ed[k] = (edit){r->res[i].from, r->res[i].to, 0, 0, i};
  }
  int32_t pos = 0, o = 0;
  for (int k = 0; k < n_ed; k++) {
    // A span inserted inside what another replaced (or the space it took) goes right after it.
    if (ed[k].from < pos) ed[k].from = pos;
    if (ed[k].to < ed[k].from) ed[k].to = ed[k].from;
    memcpy(out + o, r->text + pos, (size_t)(ed[k].from - pos));
    o += ed[k].from - pos;
    pos = ed[k].to;
    const rmt_verbatim *v = &r->v[ed[k].span];
    int insert = r->res[ed[k].span].how == RMT_SPAN_INSERTED;
    int32_t lead = o, n = v->end - v->begin;
    // Spaces around the span: an inserted one's own; a replacing one's where the source has them.
    int before = insert || (v->begin > 0 && space((unsigned char)r->src[v->begin - 1]));
    int after = insert || (v->end < r->src_len && space((unsigned char)r->src[v->end]));
    if (before && o > 0 && !space((unsigned char)out[o - 1])) out[o++] = ' ';
    ed[k].nfrom = o;
    memcpy(out + o, r->src + v->begin, (size_t)n);
    o += n;
    ed[k].nto = o;
    if (after && pos < r->len && !space((unsigned char)r->text[pos]) && !strchr(".,;:!?)\"'", r->text[pos])) out[o++] = ' ';
    // The source's punctuation right after the span: the space the model put before it goes ("19,99 ." -> "19,99 €.").
    if (glued(r, v->end, pos, insert)) ed[k].to = ++pos;
    while (pos + 1 < r->len && r->text[pos] == ' ' && r->text[pos + 1] == ' ') ed[k].to = ++pos;  // what the model left
    r->res[ed[k].span].from = ed[k].nfrom, r->res[ed[k].span].to = ed[k].nto;
    // What the spaces added count as: the edit's, so that moved() shifts past them.
    ed[k].nfrom = lead, ed[k].nto = o;
  }
  memcpy(out + o, r->text + pos, (size_t)(r->len - pos));
  o += r->len - pos;
  for (int i = 0; i < r->n_v; i++) {
    if (r->res[i].how != RMT_SPAN_KEPT) continue;
    r->res[i].from = moved(ed, n_ed, r->res[i].from, 0), r->res[i].to = moved(ed, n_ed, r->res[i].to, 1);
  }
  for (int t = 0; tok_out && t < r->n_tok; t++) {
    int i = r->owner[t];
    int replaced = i >= 0 && r->res[i].how == RMT_SPAN_REPLACED;
    tok_out[2 * t] = replaced ? r->res[i].from : moved(ed, n_ed, r->tok[2 * t], 0);
    tok_out[2 * t + 1] = replaced ? r->res[i].to : moved(ed, n_ed, r->tok[2 * t + 1], 1);
  }
  return o;
}

int rmt_verbatim_decode(const rmt_translation *tr, const rmt_spm *spm, int s, const int32_t *ids, const int32_t *align, int n,
                        int whole, char *out, size_t cap, int32_t *spans, rmt_verbatim_result *res) {
  int n_v = tr->verbatim ? tr->verbatim_at[s + 1] - tr->verbatim_at[s] : 0;
  if (!n_v) return rmt_carry_decode(tr, spm, s, ids, align, n, whole, out, cap, spans);
  int len = rmt_carry_decode(tr, spm, s, ids, align, n, whole, NULL, 0, NULL);
  if (len < 0) return len;
  int prefix = tr->model->config.n_target_langs ? 1 : 0;
  size_t src_len = (size_t)(tr->text_at[s + 1] - tr->text_at[s]);
  // The result holds the text, each span and 2 spaces a span (n_v <= src_len < INT32_MAX / 4).
  size_t most = rmt_size_add(rmt_size_add((size_t)len, src_len), 2 * (size_t)n_v);
  if (most > INT32_MAX) return rmt_error(RMT_E_LIMIT, "sentence %d: translation too long", s);
  // n < max_positions; n_v spans are in memory, so arrays of n_v of 20 bytes at most cannot wrap.
  char *text = malloc((size_t)len + 1), *result = malloc(most + 1);
  int32_t *tok = malloc(sizeof(int32_t) * 3 * ((size_t)n + 1));
  int *owner = malloc(sizeof(int) * ((size_t)n + 1));
  rmt_verbatim_result *mine = malloc(sizeof(rmt_verbatim_result) * (size_t)n_v);
  edit *ed = malloc(sizeof(edit) * (size_t)n_v);
  int rc = text && result && tok && owner && mine && ed ? RMT_OK : rmt_error(RMT_E_NOMEM, "out of memory");
  for (int t = 0; !rc && t < 2 * n; t++) tok[t] = -1;
  if (!rc) rc = rmt_carry_decode(tr, spm, s, ids, align, n, whole, text, (size_t)len + 1, tok);
  if (rc >= 0) {
    int32_t *at = tok + 2 * ((size_t)n + 1);
    for (int t = 0; t < n; t++) at[t] = align[t] >= 0 ? align[t] - prefix : -1;
    int n_tok = 0;  // a stable prefix's text may stop before its last tokens (carry.c): those are not in it
    while (n_tok < n && tok[2 * n_tok] >= 0) n_tok++;
    repair r = {tr->text + tr->text_at[s], (int32_t)src_len, tr->verbatim + tr->verbatim_at[s], n_v, text, len, tok, at, n_tok, whole, mine, owner};
    int32_t stop = decide(&r), o = stop;
    if (whole) o = apply(&r, result, ed, spans);
    else memcpy(result, text, (size_t)stop);
    for (int t = 0; spans && !whole && t < n; t++) {
      spans[2 * t] = t < n_tok && tok[2 * t] < stop ? tok[2 * t] : stop;
      spans[2 * t + 1] = t < n_tok && tok[2 * t + 1] < stop ? tok[2 * t + 1] : stop;
    }
    if (res) memcpy(res, mine, sizeof(rmt_verbatim_result) * (size_t)n_v);
    rc = o;
    if (out && (size_t)o < cap) {
      memcpy(out, result, (size_t)o);
      out[o] = 0;
    }
  }
  free(text), free(result), free(tok), free(owner), free(mine), free(ed);
  return rc;
}
