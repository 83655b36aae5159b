// Text in, text out: SentencePiece encoding, the target-language token, and
// decoding of hypotheses, so that callers (JS, the CLI) never juggle ids.
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

// Sets *id to the target-language token for `lang`, or -1 when the model has
// no such tokens (a one-direction model). 0 or an error code.
static int target_token(const rmt_config *c, const char *lang, int *id) {
  *id = -1;
  if (!c->n_target_langs) return RMT_OK;
  if (!lang || !*lang) {
    return rmt_error(RMT_E_INVALID, "this model translates into several languages: name the target language");
  }
  for (int i = 0; i < c->n_target_langs; i++) {
    if (strcmp(c->target_lang_codes[i], lang) == 0) {
      *id = c->target_lang_ids[i];
      return RMT_OK;
    }
  }
  return rmt_error(RMT_E_INVALID, "this model cannot translate into \"%s\"", lang);
}

RMT_API rmt_translation *rmt_translation_begin_text(const rmt_model *model, const rmt_spm *spm, const char *texts,
                                                    const int32_t *text_lens, int n_texts, const char *target_lang,
                                                    const rmt_search_params *params) {
  rmt_clear_error();
  if (!model || !spm || !texts || !text_lens || n_texts < 1) {
    rmt_error(RMT_E_INVALID, "empty input: no texts");
    return NULL;
  }
  const rmt_config *c = &model->config;
  if (rmt_spm_vocab_size(spm) > c->vocab_size) {
    rmt_error(RMT_E_FORMAT, "the tokenizer has %d pieces but the model only %d", rmt_spm_vocab_size(spm), c->vocab_size);
    return NULL;
  }
  int lang_id;
  if (target_token(c, target_lang, &lang_id)) return NULL;
  int prefix = lang_id >= 0;
  // Each sentence may use at most max_positions - 1 ids (plus </s>); a longer
  // text is reported as too long by rmt_translation_begin.
  size_t total = 0;
  for (int i = 0; i < n_texts; i++) {
    if (text_lens[i] < 0) {
      rmt_error(RMT_E_INVALID, "negative text length");
      return NULL;
    }
    total = rmt_size_add(total, (size_t)text_lens[i]);
  }
  // SentencePiece gives at most one id per byte, plus one for the dummy prefix.
  size_t cap = rmt_size_add(total, rmt_size_mul((size_t)n_texts, 2 + (size_t)prefix));
  size_t ids_bytes = rmt_size_mul(sizeof(int32_t), cap), spans_bytes = rmt_size_mul(2, ids_bytes);
  if (spans_bytes == RMT_SIZE_OVERFLOW || cap > INT32_MAX) {
    rmt_error(RMT_E_SIZE, "too large: %d texts of %zu bytes in all", n_texts, total);
    return NULL;
  }
  int32_t *ids = malloc(ids_bytes), *lens = calloc((size_t)n_texts, sizeof(int32_t));
  int32_t *spans = malloc(spans_bytes);  // each id's bytes of its text (rmt_carry_keep)
  rmt_translation *tr = NULL;
  if (!ids || !lens || !spans) {
    rmt_error(RMT_E_NOMEM, "out of memory");
    goto done;
  }
  size_t used = 0;
  const char *text = texts;
  for (int i = 0; i < n_texts; i++) {
    if (prefix) ids[used] = lang_id;
    int n = rmt_spm_encode_spans(spm, text, (size_t)text_lens[i], ids + used + prefix, spans + 2 * (used + prefix),
                                 (int)(cap - used - prefix), c->target_lang_ids, c->n_target_langs);
    if (n < 0) goto done;
    if ((size_t)n > cap - used - prefix) {
      rmt_error(RMT_E_LIMIT, "text %d: tokenizer output larger than expected", i);
      goto done;
    }
    if (n == 0) {
      rmt_error(RMT_E_INVALID, "empty input: text %d has no tokens", i);
      goto done;
    }
    lens[i] = n + prefix;
    used += (size_t)lens[i];
    text += text_lens[i];
  }
  tr = rmt_translation_begin(model, ids, lens, n_texts, params);
  if (tr && rmt_carry_keep(tr, spm, texts, text_lens, total, spans, prefix)) {
    rmt_translation_free(tr);
    tr = NULL;
  }
done:
  free(ids);
  free(lens);
  free(spans);
  return tr;
}

typedef enum { HYP_TEXT, PARTIAL_TEXT, STABLE_TEXT } text_kind;

// The ids of sentence s that `kind` reads (hypothesis k, the best so far, or
// the stable prefix) and, if align is not NULL, their alignment; returns how
// many there are (copies at most cap).
static int ids_of(const rmt_translation *tr, int s, int k, text_kind kind, int32_t *ids, int32_t *align, int cap) {
  int n = kind == HYP_TEXT ? rmt_translation_hyp(tr, s, k, ids, cap, NULL, NULL)
          : kind == PARTIAL_TEXT ? rmt_translation_partial(tr, s, ids, cap) : rmt_translation_stable(tr, s, ids, cap);
  if (n < 0 || !align) return n;
  int m = kind == HYP_TEXT ? rmt_translation_hyp_alignment(tr, s, k, align, cap < n ? cap : n)
          : rmt_translation_live_alignment(tr, s, align, cap < n ? cap : n);
  return m < 0 ? m : n;
}

// Sentence s's ids that `kind` reads, as text (snprintf convention), with
// what the model had no piece for carried from the source when it is known
// (rmt_translation_begin_text); spans as rmt_spm_decode_spans's.
static int decode_sentence(const rmt_translation *tr, const rmt_spm *spm, int s, int k, text_kind kind, char *out,
                           size_t cap, int32_t *spans) {
  int n = ids_of(tr, s, k, kind, NULL, NULL, 0);
  if (n < 0) return n;
  int32_t *ids = malloc(sizeof(int32_t) * 2 * ((size_t)n + 1));  // n < max_positions
  if (!ids) return rmt_error(RMT_E_NOMEM, "out of memory");
  int32_t *align = ids + n + 1;
  int len = ids_of(tr, s, k, kind, ids, tr->text ? align : NULL, n);
  if (len >= 0 && !tr->text) len = rmt_spm_decode_spans(spm, ids, n, out, cap, spans);
  else if (len >= 0) len = rmt_carry_decode(tr, spm, s, ids, align, n, kind != STABLE_TEXT || tr->finished[s], out, cap, spans);
  free(ids);
  return len;
}

// Hypothesis k of sentence s as text.
RMT_API int rmt_translation_hyp_text(const rmt_translation *tr, const rmt_spm *spm, int s, int k, char *out,
                                     size_t cap) {
  return decode_sentence(tr, spm, s, k, HYP_TEXT, out, cap, NULL);
}

// The best hypothesis so far of sentence s as text.
RMT_API int rmt_translation_partial_text(const rmt_translation *tr, const rmt_spm *spm, int s, char *out, size_t cap) {
  return decode_sentence(tr, spm, s, 0, PARTIAL_TEXT, out, cap, NULL);
}

// What sentence s's translation is sure to start with, as text (streaming).
RMT_API int rmt_translation_stable_text(const rmt_translation *tr, const rmt_spm *spm, int s, char *out, size_t cap) {
  return decode_sentence(tr, spm, s, 0, STABLE_TEXT, out, cap, NULL);
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
  if (!rc) rmt_translation_hyp(tr, s, k, ids, n, NULL, NULL);
  if (!rc) rmt_translation_hyp_alignment(tr, s, k, pos, n);
  if (!rc && (rc = decode_sentence(tr, spm, s, k, HYP_TEXT, NULL, 0, tgt_spans)) > 0) rc = RMT_OK;
  for (int i = 0; !rc && i < n && i < cap; i++) {
    int j = pos[i] - prefix;  // a position in the text's ids (the language token is never one)
    int32_t *out = spans + 4 * (size_t)i;
    out[0] = j >= 0 && j < src_len ? src_spans[2 * j] : -1;
    out[1] = j >= 0 && j < src_len ? src_spans[2 * j + 1] : -1;
    out[2] = tgt_spans[2 * i];
    out[3] = tgt_spans[2 * i + 1];
  }
  free(ids), free(pos), free(src_spans), free(tgt_spans);
  return rc ? rc : n;
}

RMT_API int rmt_text_max_ids(const rmt_model *model, const rmt_search_params *params) {
  if (!model) return rmt_error(RMT_E_INVALID, "rmt_text_max_ids: no model");
  rmt_search_params p;
  if (params) p = *params;
  else rmt_search_params_default(&p);
  int n = rmt_translation_max_source(&model->config, &p) - (model->config.n_target_langs ? 1 : 0);
  return n > 1 ? n : 1;
}
