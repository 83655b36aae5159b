// Text in, text out: SentencePiece encoding, the target-language token, and
// decoding of hypotheses, so that callers (JS, the CLI) never juggle ids.
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "size.h"
#include "spm.h"
#include "translation.h"

// User text never yields a language token: "<2en>" typed in a sentence is
// encoded as ordinary pieces, so it cannot change the translation's direction.
RMT_API int rmt_text_encode(const rmt_model *model, const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                            int max_ids) {
  if (!model) return rmt_error(RMT_E_INVALID, "rmt_text_encode: no model");
  const rmt_config *c = &model->config;
  return rmt_spm_encode_excluding(spm, text, len, ids, max_ids, c->target_lang_ids, c->n_target_langs);
}

typedef enum { HYP_TEXT, STABLE_TEXT } text_kind;

// The ids of sentence s that `kind` reads (hypothesis k, or the stable
// prefix) and, if align is not NULL, their alignment; returns how
// many there are (copies at most cap).
static int ids_of(const rmt_translation *tr, int s, int k, text_kind kind, int32_t *ids, int32_t *align, int cap) {
  int n = kind == HYP_TEXT ? rmt_translation_hyp(tr, s, k, ids, cap, NULL, NULL) : rmt_translation_stable(tr, s, ids, cap);
  if (n < 0 || !align) return n;
  int m = kind == HYP_TEXT ? rmt_translation_hyp_alignment(tr, s, k, align, cap < n ? cap : n)
          : rmt_translation_live_alignment(tr, s, align, cap < n ? cap : n);
  return m < 0 ? m : n;
}

// Sentence s's ids that `kind` reads, as text (snprintf convention), with
// what the model had no piece for carried from the source when it is known
// (rmt_translation_begin_text); spans as rmt_spm_decode_spans's.
static int decode_sentence(const rmt_translation *tr, const rmt_spm *spm, int s, int k, text_kind kind, char *out,
                           size_t cap, int32_t *spans, rmt_verbatim_result *res) {
  int n = ids_of(tr, s, k, kind, NULL, NULL, 0);
  if (n < 0) return n;
  int32_t *ids = malloc(sizeof(int32_t) * 2 * ((size_t)n + 1));  // n < max_positions
  if (!ids) return rmt_error(RMT_E_NOMEM, "out of memory");
  int32_t *align = ids + n + 1;
  int len = ids_of(tr, s, k, kind, ids, tr->text ? align : NULL, n);
  if (len >= 0 && !tr->text) len = rmt_spm_decode_spans(spm, ids, n, out, cap, spans);
  else if (len >= 0) len = rmt_verbatim_decode(tr, spm, s, ids, align, n, kind != STABLE_TEXT || tr->finished[s], out, cap, spans, res);
  free(ids);
  return len;
}

// Hypothesis k of sentence s as text.
RMT_API int rmt_translation_hyp_text(const rmt_translation *tr, const rmt_spm *spm, int s, int k, char *out,
                                     size_t cap) {
  return decode_sentence(tr, spm, s, k, HYP_TEXT, out, cap, NULL, NULL);
}

// What sentence s's translation is sure to start with, as text (streaming).
RMT_API int rmt_translation_stable_text(const rmt_translation *tr, const rmt_spm *spm, int s, char *out, size_t cap) {
  return decode_sentence(tr, spm, s, 0, STABLE_TEXT, out, cap, NULL, NULL);
}

// Writes spans (as rmt_translation_hyp_alignment_text's) of the first n tokens
// of hypothesis k of sentence s, whose source ids' spans are src_spans
// (src_len of them, the language token left out); pos and tgt_spans: room
// for n + 1. 0 or an error code.
static int write_spans(const rmt_translation *tr, const rmt_spm *spm, int s, int k, const int32_t *src_spans,
                       int src_len, int32_t *pos, int32_t *tgt_spans, int32_t *spans, int n) {
  int prefix = tr->model->config.n_target_langs ? 1 : 0;
  int rc = rmt_translation_hyp_alignment(tr, s, k, pos, n);
  if (rc >= 0) rc = decode_sentence(tr, spm, s, k, HYP_TEXT, NULL, 0, tgt_spans, NULL);
  if (rc < 0) return rc;
  for (int i = 0; i < n; i++) {
    int j = pos[i] - prefix;  // a position in the text's ids (the language token is never one)
    int32_t *out = spans + 4 * (size_t)i;
    out[0] = j >= 0 && j < src_len ? src_spans[2 * j] : -1;
    out[1] = j >= 0 && j < src_len ? src_spans[2 * j + 1] : -1;
    out[2] = tgt_spans[2 * i];
    out[3] = tgt_spans[2 * i + 1];
  }
  return RMT_OK;
}

RMT_API int rmt_translation_hyp_alignment_text(const rmt_translation *tr, const rmt_spm *spm, int s, int k,
                                               const char *text, size_t len, int32_t *spans, int cap) {
  int n = rmt_translation_hyp(tr, s, k, NULL, 0, NULL, NULL);
  if (n < 0) return n;
  if (!spm || (!text && len) || cap < 0 || (!spans && cap > 0)) {
    return rmt_error(RMT_E_INVALID, "rmt_translation_hyp_alignment_text: bad arguments");
  }
  const rmt_config *c = &tr->model->config;
  // The source ids again, with their spans: they must be the sentence's (a
  // language token first when the model has them, as begin_text puts it).
  int prefix = c->n_target_langs ? 1 : 0, src_len = tr->src_len[s] - 1 - prefix;
  const int *src = tr->src_ids + tr->src_offset[s] + prefix;
  // n and src_len are below max_positions: these sizes cannot wrap.
  int32_t *ids = malloc(sizeof(int32_t) * ((size_t)n + (size_t)src_len + 1)), *pos = malloc(sizeof(int32_t) * ((size_t)n + 1));
  int32_t *src_spans = malloc(sizeof(int32_t) * 2 * ((size_t)src_len + 1)), *tgt_spans = malloc(sizeof(int32_t) * 2 * ((size_t)n + 1));
  int rc = ids && pos && src_spans && tgt_spans ? RMT_OK : rmt_error(RMT_E_NOMEM, "out of memory");
  int32_t *src_ids = ids + n;
  int m = rc ? rc : rmt_spm_encode_spans(spm, text, len, src_ids, src_spans, src_len, c->target_lang_ids, c->n_target_langs);
  if (m >= 0) {
    int same = m == src_len && src_len >= 0;
    for (int i = 0; same && i < m; i++) same = src_ids[i] == src[i];
    rc = same ? RMT_OK : rmt_error(RMT_E_INVALID, "sentence %d: the text given is not the one translated", s);
  } else {
    rc = m;
  }
  if (!rc) rc = write_spans(tr, spm, s, k, src_spans, src_len, pos, tgt_spans, spans, n < cap ? n : cap);
  free(ids), free(pos), free(src_spans), free(tgt_spans);
  return rc ? rc : n;
}

RMT_API int rmt_translation_verbatim(const rmt_translation *tr, const rmt_spm *spm, int s, int k, int32_t *out, int cap) {
  int n = rmt_translation_hyp(tr, s, k, NULL, 0, NULL, NULL);
  if (n < 0) return n;
  if (!spm || cap < 0 || (!out && cap > 0)) return rmt_error(RMT_E_INVALID, "rmt_translation_verbatim: bad arguments");
  if (!tr->verbatim) return rmt_error(RMT_E_STATE, "verbatim spans need a translation begun from text");
  int n_v = tr->verbatim_at[s + 1] - tr->verbatim_at[s];
  rmt_verbatim_result *res = malloc(sizeof(rmt_verbatim_result) * ((size_t)n_v + 1));  // n_v spans of 20 bytes are in memory: no wrap
  if (!res) return rmt_error(RMT_E_NOMEM, "out of memory");
  int rc = decode_sentence(tr, spm, s, k, HYP_TEXT, NULL, 0, NULL, res);
  for (int i = 0; rc >= 0 && i < n_v && i < cap; i++) {
    const rmt_verbatim *v = tr->verbatim + tr->verbatim_at[s] + i;
    int32_t *row = out + 6 * (size_t)i;
    row[0] = v->begin, row[1] = v->end, row[2] = v->kind, row[3] = res[i].from, row[4] = res[i].to, row[5] = res[i].how;
  }
  free(res);
  return rc < 0 ? rc : n_v;
}

RMT_API int rmt_text_max_ids(const rmt_model *model, const rmt_search_params *params) {
  if (!model) return rmt_error(RMT_E_INVALID, "rmt_text_max_ids: no model");
  rmt_search_params p;
  if (params) p = *params;
  else rmt_search_params_default(&p);
  int n = rmt_translation_max_source(&model->config, &p) - (model->config.n_target_langs ? 1 : 0);
  return n > 1 ? n : 1;
}

RMT_API int rmt_text_count(const rmt_model *model, const rmt_spm *spm, const char *texts, const int32_t *text_lens,
                           int n_texts, int32_t *counts) {
  if (!model || !spm || (!texts && n_texts > 0) || (!text_lens && n_texts > 0) || (!counts && n_texts > 0)) {
    return rmt_error(RMT_E_INVALID, "rmt_text_count: bad arguments");
  }
  const char *text = texts;
  for (int i = 0; i < n_texts; i++) {
    if (text_lens[i] < 0) return rmt_error(RMT_E_INVALID, "negative text length");
    int n = rmt_text_encode(model, spm, text, (size_t)text_lens[i], NULL, 0);
    if (n < 0) return n;
    counts[i] = n;
    text += text_lens[i];
  }
  return RMT_OK;
}

// ---------------------------------------------------------------- one hypothesis in one call

static const struct {
  const char *name;
  size_t offset;
} VIEW_FIELDS[] = {
    {"n_ids", offsetof(rmt_hyp_view, n_ids)}, {"score", offsetof(rmt_hyp_view, score)},
    {"hit_max_len", offsetof(rmt_hyp_view, hit_max_len)}, {"text_len", offsetof(rmt_hyp_view, text_len)},
    {"ids", offsetof(rmt_hyp_view, ids)}, {"text", offsetof(rmt_hyp_view, text)}, {"spans", offsetof(rmt_hyp_view, spans)},
};
#define N_VIEW_FIELDS ((int)(sizeof VIEW_FIELDS / sizeof VIEW_FIELDS[0]))

RMT_API const char *rmt_hyp_view_field(int field) {
  return field >= 0 && field < N_VIEW_FIELDS ? VIEW_FIELDS[field].name : NULL;
}

RMT_API int rmt_hyp_view_offset(int field) {
  return field >= 0 && field < N_VIEW_FIELDS ? (int)VIEW_FIELDS[field].offset : -1;
}

// Makes tr->view_buf hold at least `bytes`; 0 or an error code.
static int view_reserve(rmt_translation *tr, size_t bytes) {
  if (bytes == RMT_SIZE_OVERFLOW) return rmt_error(RMT_E_SIZE, "too large: a hypothesis's text");
  if (bytes <= tr->view_cap) return RMT_OK;
  char *grown = realloc(tr->view_buf, bytes);
  if (!grown) return rmt_error(RMT_E_NOMEM, "out of memory");
  tr->view_buf = grown;
  tr->view_cap = bytes;
  return RMT_OK;
}

// The spans of hypothesis k of sentence s (n tokens) into out, from the
// source spans the translation kept (rmt_carry_keep).
static int kept_spans(const rmt_translation *tr, const rmt_spm *spm, int s, int k, int n, int32_t *out) {
  if (!tr->src_spans) return rmt_error(RMT_E_STATE, "spans need a translation begun from text");
  int prefix = tr->model->config.n_target_langs ? 1 : 0;
  // n is below max_positions: this size cannot wrap.
  int32_t *pos = malloc(sizeof(int32_t) * 3 * ((size_t)n + 1));
  if (!pos) return rmt_error(RMT_E_NOMEM, "out of memory");
  const int32_t *src_spans = tr->src_spans + 2 * ((size_t)tr->src_offset[s] + prefix);
  int rc = write_spans(tr, spm, s, k, src_spans, tr->src_len[s] - 1 - prefix, pos, pos + n + 1, out, n);
  free(pos);
  return rc;
}

// Fills the view's text (in view_buf from byte `at`); 0 or an error code.
static int view_text(rmt_translation *tr, const rmt_spm *spm, int s, int k, size_t at) {
  for (;;) {
    size_t room = tr->view_cap - at;
    int len = decode_sentence(tr, spm, s, k, HYP_TEXT, tr->view_buf + at, room, NULL, NULL);
    if (len < 0) return len;
    if ((size_t)len < room) {
      tr->view.text_len = len;
      return RMT_OK;
    }
    int err = view_reserve(tr, rmt_size_add(at, (size_t)len + 1));
    if (err) return err;
  }
}

RMT_API const rmt_hyp_view *rmt_translation_read(rmt_translation *tr, const rmt_spm *spm, int s, int k, int with_text,
                                                 int with_spans) {
  rmt_clear_error();
  float score;
  int32_t hit;
  int n = rmt_translation_hyp(tr, s, k, NULL, 0, &score, &hit);
  if (n < 0) return NULL;
  if ((with_text || with_spans) && !spm) {
    rmt_error(RMT_E_INVALID, "rmt_translation_read: no tokenizer");
    return NULL;
  }
  // ids, then spans (4 a token), then the text: n is below max_positions.
  size_t spans_at = sizeof(int32_t) * (size_t)n, text_at = spans_at + (with_spans ? 4 * spans_at : 0);
  if (view_reserve(tr, text_at + 256)) return NULL;
  int32_t *ids = (int32_t *)tr->view_buf, *spans = (int32_t *)(tr->view_buf + spans_at);
  rmt_translation_hyp(tr, s, k, ids, n, NULL, NULL);
  if (with_spans && kept_spans(tr, spm, s, k, n, spans)) return NULL;
  tr->view = (rmt_hyp_view){n, score, hit, -1, ids, NULL, with_spans ? spans : NULL};
  if (with_text) {
    if (view_text(tr, spm, s, k, text_at)) return NULL;
    // view_text may have moved the buffer.
    tr->view.ids = (int32_t *)tr->view_buf;
    tr->view.spans = with_spans ? (int32_t *)(tr->view_buf + spans_at) : NULL;
    tr->view.text = tr->view_buf + text_at;
  }
  return &tr->view;
}
