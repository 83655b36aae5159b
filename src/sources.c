// Sentences tokenized once: a caller (js/engine/runner.js) adds each sentence's text
// as it splits its input, learns the sentence's length in ids from the
// answer (to split it or to count its usage), and then begins translations
// of any of them without tokenizing their text again. The texts, their ids
// and each id's bytes of its text are kept here, in plain allocations that
// grow as sentences are added.
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "size.h"
#include "spm.h"
#include "translation.h"

// Text bytes a set of sources may hold in all (carry.c's offsets are int32).
#define MAX_SOURCE_BYTES ((size_t)INT32_MAX / 4)

struct rmt_sources {
  const rmt_model *model;
  const rmt_spm *spm;
  int n;                             // sentences added
  char *text;                        // their texts back to back
  int32_t *ids, *spans;              // their ids, and 2 per id: its bytes of its text
  size_t *text_at, *ids_at;          // [n + 1] where each sentence starts in text and ids
  size_t text_cap, ids_cap, spans_cap, text_at_cap, ids_at_cap;  // elements each allocation holds
};

RMT_API rmt_sources *rmt_sources_new(const rmt_model *model, const rmt_spm *spm) {
  rmt_clear_error();
  if (!model || !spm) {
    rmt_error(RMT_E_INVALID, "rmt_sources_new: no model or no tokenizer");
    return NULL;
  }
  if (rmt_spm_vocab_size(spm) > model->config.vocab_size) {
    rmt_error(RMT_E_FORMAT, "the tokenizer has %d pieces but the model only %d", rmt_spm_vocab_size(spm),
              model->config.vocab_size);
    return NULL;
  }
  rmt_sources *src = calloc(1, sizeof *src);
  if (!src) rmt_error(RMT_E_NOMEM, "out of memory");
  else src->model = model, src->spm = spm;
  return src;
}

RMT_API void rmt_sources_free(rmt_sources *src) {
  if (!src) return;
  free(src->text), free(src->ids), free(src->spans), free(src->text_at), free(src->ids_at);
  free(src);
}

// Makes *ptr hold at least `need` elements of `elem` bytes (*cap of them now),
// doubling; 0 or an error code, *ptr unchanged on error.
static int reserve(void **ptr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return RMT_OK;
  size_t grown = *cap ? *cap : 64;
  while (grown < need) grown = rmt_size_mul(grown, 2);
  size_t bytes = rmt_size_mul(grown, elem);
  if (bytes == RMT_SIZE_OVERFLOW) return rmt_error(RMT_E_SIZE, "too large: %zu items of %zu bytes", need, elem);
  void *more = realloc(*ptr, bytes);
  if (!more) return rmt_error(RMT_E_NOMEM, "out of memory");
  *ptr = more;
  *cap = grown;
  return RMT_OK;
}

// Room for one more sentence of len bytes and at most max_ids ids.
static int reserve_sentence(rmt_sources *src, size_t len, size_t max_ids) {
  size_t ids = rmt_size_add(src->n ? src->ids_at[src->n] : 0, max_ids);
  int err = reserve((void **)&src->text, &src->text_cap, rmt_size_add(src->n ? src->text_at[src->n] : 0, len), 1);
  if (!err) err = reserve((void **)&src->text_at, &src->text_at_cap, (size_t)src->n + 2, sizeof(size_t));
  if (!err) err = reserve((void **)&src->ids_at, &src->ids_at_cap, (size_t)src->n + 2, sizeof(size_t));
  if (!err) err = reserve((void **)&src->ids, &src->ids_cap, ids, sizeof(int32_t));
  if (!err) err = reserve((void **)&src->spans, &src->spans_cap, ids, 2 * sizeof(int32_t));  // 2 per id
  return err;
}

// Tokenizes one sentence's text (never a language token: text that spells
// one is encoded as ordinary pieces) and keeps it as sentence number
// (sentences added before). Returns its number of ids (0: nothing to
// translate), or an error code.
RMT_API int rmt_sources_add(rmt_sources *src, const char *text, size_t len) {
  if (!src || (!text && len)) return rmt_error(RMT_E_INVALID, "rmt_sources_add: bad arguments");
  if (src->n == INT32_MAX - 1) return rmt_error(RMT_E_SIZE, "too many sentences");
  size_t text_used = src->n ? src->text_at[src->n] : 0, ids_used = src->n ? src->ids_at[src->n] : 0;
  if (len > MAX_SOURCE_BYTES - text_used) {
    return rmt_error(RMT_E_SIZE, "too large: more than %zu bytes of text in all", MAX_SOURCE_BYTES);
  }
  // SentencePiece gives at most one id per byte, plus one for the dummy prefix.
  size_t max_ids = len + 2;
  int err = reserve_sentence(src, len, max_ids);
  if (err) return err;
  if (!src->n) src->text_at[0] = src->ids_at[0] = 0;
  const rmt_config *c = &src->model->config;
  int n = rmt_spm_encode_spans(src->spm, text, len, src->ids + ids_used, src->spans + 2 * ids_used, (int)max_ids,
                               c->target_lang_ids, c->n_target_langs);
  if (n < 0) return n;
  if ((size_t)n > max_ids) return rmt_error(RMT_E_LIMIT, "sentence %d: tokenizer output larger than expected", src->n);
  if (len) memcpy(src->text + text_used, text, len);
  src->n++;
  src->text_at[src->n] = text_used + len;
  src->ids_at[src->n] = ids_used + (size_t)n;
  return n;
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

// The chosen sentences packed as rmt_translation_begin and rmt_carry_keep take
// them: ids (each sentence's after `prefix` language tokens), their lengths,
// spans (2 per id, packed like the ids), texts back to back and their lengths.
typedef struct {
  int32_t *ids, *lens, *spans, *text_lens;
  char *texts;
  size_t total;  // bytes of texts
} packed_batch;

static void packed_free(packed_batch *b) {
  free(b->ids), free(b->lens), free(b->spans), free(b->text_lens), free(b->texts);
}

static int pack(const rmt_sources *src, const int32_t *which, int n, int lang_id, packed_batch *b) {
  int prefix = lang_id >= 0;
  size_t ids = 0;
  b->total = 0;
  for (int i = 0; i < n; i++) {
    if (which[i] < 0 || which[i] >= src->n) return rmt_error(RMT_E_INVALID, "sentence %d: no such source (%d)", i, which[i]);
    size_t k = (size_t)which[i], n_ids = src->ids_at[k + 1] - src->ids_at[k];
    if (!n_ids) return rmt_error(RMT_E_INVALID, "empty input: text %d has no tokens", i);
    ids += n_ids + (size_t)prefix;  // each below what was added: no wrap
    b->total += src->text_at[k + 1] - src->text_at[k];
  }
  b->ids = malloc(sizeof(int32_t) * ids), b->spans = malloc(2 * sizeof(int32_t) * ids);
  b->lens = malloc(sizeof(int32_t) * (size_t)n), b->text_lens = malloc(sizeof(int32_t) * (size_t)n);
  b->texts = malloc(b->total ? b->total : 1);
  if (!b->ids || !b->spans || !b->lens || !b->text_lens || !b->texts) return rmt_error(RMT_E_NOMEM, "out of memory");
  size_t at = 0, text_at = 0;
  for (int i = 0; i < n; i++) {
    size_t k = (size_t)which[i], n_ids = src->ids_at[k + 1] - src->ids_at[k], len = src->text_at[k + 1] - src->text_at[k];
    if (prefix) b->ids[at] = lang_id, b->spans[2 * at] = b->spans[2 * at + 1] = 0;
    memcpy(b->ids + at + prefix, src->ids + src->ids_at[k], sizeof(int32_t) * n_ids);
    memcpy(b->spans + 2 * (at + prefix), src->spans + 2 * src->ids_at[k], 2 * sizeof(int32_t) * n_ids);
    memcpy(b->texts + text_at, src->text + src->text_at[k], len);
    b->lens[i] = (int32_t)(n_ids + (size_t)prefix);
    b->text_lens[i] = (int32_t)len;  // below MAX_SOURCE_BYTES
    at += n_ids + (size_t)prefix;
    text_at += len;
  }
  return RMT_OK;
}

RMT_API rmt_translation *rmt_translation_begin_sources(const rmt_sources *src, const int32_t *which, int n,
                                                       const char *target_lang, const rmt_search_params *params) {
  rmt_clear_error();
  if (!src || !which || n < 1) {
    rmt_error(RMT_E_INVALID, "empty input: no texts");
    return NULL;
  }
  int lang_id;
  if (target_token(&src->model->config, target_lang, &lang_id)) return NULL;
  packed_batch b = {0};
  rmt_translation *tr = NULL;
  if (!pack(src, which, n, lang_id, &b)) {
    tr = rmt_translation_begin(src->model, b.ids, b.lens, n, params);
    if (tr && (rmt_carry_keep(tr, src->spm, b.texts, b.text_lens, b.total, b.spans, lang_id >= 0) || rmt_verbatim_keep(tr))) {
      rmt_translation_free(tr);
      tr = NULL;
    }
  }
  packed_free(&b);
  return tr;
}

RMT_API rmt_translation *rmt_translation_begin_text(const rmt_model *model, const rmt_spm *spm, const char *texts,
                                                    const int32_t *text_lens, int n_texts, const char *target_lang,
                                                    const rmt_search_params *params) {
  rmt_clear_error();
  if (!model || !spm || !texts || !text_lens || n_texts < 1) {
    rmt_error(RMT_E_INVALID, "empty input: no texts");
    return NULL;
  }
  rmt_sources *src = rmt_sources_new(model, spm);
  int32_t *which = src ? malloc(sizeof(int32_t) * (size_t)n_texts) : NULL;
  rmt_translation *tr = NULL;
  int err = !src ? RMT_E_NOMEM : !which ? rmt_error(RMT_E_NOMEM, "out of memory") : RMT_OK;
  const char *text = texts;
  for (int i = 0; !err && i < n_texts; i++) {
    if (text_lens[i] < 0) err = rmt_error(RMT_E_INVALID, "negative text length");
    else if ((err = rmt_sources_add(src, text, (size_t)text_lens[i])) > 0) err = RMT_OK;
    which[i] = i;
    text += text_lens[i] > 0 ? text_lens[i] : 0;
  }
  if (!err) tr = rmt_translation_begin_sources(src, which, n_texts, target_lang, params);
  free(which);
  rmt_sources_free(src);
  return tr;
}
