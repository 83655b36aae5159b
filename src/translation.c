// A translation's lifecycle: sizing and carving the arena, encoding the
// batch, results, and teacher forcing. Its parameters are search_params.c's,
// its lexical shortlist shortlist.c's; the search step itself is in search.c.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "ops.h"
#include "profile.h"
#include "shortlist.h"
#include "threads.h"
#include "translation.h"

// ---------------------------------------------------------------- allocation

// The sizes a translation's arrays are made of, as size_t: they come from the
// call (sentences, lengths, beam), so they are checked before any becomes an int.
typedef struct {
  size_t n_sent, beam, rows, src_rows, src_max, steps, keys, threads;
  size_t int8_in;  // the model's widest int8 Linear input (rmt_model.int8_max_in); 0: none
  // With the model's lexical shortlist in use: its sizes (shortlist.h), and
  // the output projection whose rows for the batch's words are gathered
  // (NULL: no shortlist).
  rmt_shortlist_sizes shortlist;
  const rmt_linear *output;
} layout_dims;

// What layout's chunks add up to: with arena == NULL the bytes they take
// (saturating: size.h), else the chunks carved from it (missing counts the
// ones it had no room for).
typedef struct {
  rmt_arena *arena;
  size_t bytes;
  int missing;
} carving;

// tr->field = `count` values of `type`, carved or counted.
#define MUL rmt_size_mul
#define TAKE(field, type, count)                                                                            \
  do {                                                                                                      \
    size_t n_ = (count);                                                                                    \
    if (cv->arena) cv->missing += !(tr->field = (type *)rmt_arena_alloc(cv->arena, MUL(sizeof(type), n_))); \
    else cv->bytes = rmt_size_add(cv->bytes, rmt_arena_bytes(n_, sizeof(type)));                            \
  } while (0)

// The lexical shortlist's arrays: each sentence's candidates, the batch's
// words and the output layer's rows for those or each sentence's (from a
// weight panel of its own: shortlist.h), as the model keeps its own
// (float32; int8 with a 16-bit input, kr RMT_GEMM_I8_KR_DOT16; or int16 for
// "output_layer": "int16").
static void layout_shortlist(const rmt_config *c, const layout_dims *d, rmt_translation *tr, carving *cv) {
  const rmt_linear *o = d->output;
  size_t panels = d->shortlist.panels, columns = d->shortlist.columns;
  TAKE(cand_ids, int, d->shortlist.total);
  TAKE(cand_offset, int, rmt_size_add(d->n_sent, 1));
  TAKE(cand_panel, int, rmt_size_add(d->n_sent, 1));
  TAKE(cand_scratch, float, MUL(d->threads, d->shortlist.most));
  TAKE(word_mark, unsigned char, (size_t)c->vocab_size);
  TAKE(out_ids, int, d->shortlist.words);
  if (o->weight) {
    TAKE(out_layer.weight, float, MUL(panels, rmt_packed_weight_floats(RMT_GEMM_NR, o->n_in)));
  } else {
    size_t panel = rmt_packed_weight_i8_bytes(RMT_GEMM_NR, o->n_in, o->kr);  // int16 values for an int16 layer
    if (o->weight_i16) TAKE(out_layer.weight_i16, int16_t, MUL(panels, panel));
    else TAKE(out_layer.weight_i8, int8_t, MUL(panels, panel));
    TAKE(out_layer.weight_scale, float, columns);
  }
  if (o->bias) TAKE(out_layer.bias, float, columns);
  TAKE(out_logits, float, MUL(d->rows, d->shortlist.by_sentence ? d->shortlist.most : d->shortlist.words));
}

// Lays out every array of the translation; with arena == NULL only counts the
// bytes, so the arena is sized exactly by the same code that carves it. Counts
// saturate (size.h): an impossible size comes back as RMT_SIZE_OVERFLOW. When
// carving, returns RMT_SIZE_OVERFLOW if a chunk is missing (a sizing bug).
static size_t layout(const rmt_config *c, const layout_dims *d, rmt_translation *tr, rmt_arena *arena) {
  carving carve = {arena, 0, 0}, *cv = &carve;
  size_t N = d->n_sent, B = d->beam, S = d->steps, R = d->rows, D = (size_t)c->d_model, L = (size_t)c->decoder_layers;
  size_t rows = R > d->src_rows ? R : d->src_rows;
  TAKE(max_len, int, N);
  TAKE(finished, int, N);
  TAKE(ignore, int, MUL(N, B));
  TAKE(hyps, rmt_hypothesis, MUL(N, B));
  TAKE(n_hyps, int, N);
  TAKE(hyp_tokens, int, MUL(MUL(N, B), S));
  TAKE(hyp_align, int, MUL(MUL(N, B), S));
  TAKE(src_ids, int, d->src_rows);
  TAKE(enc_out, float, MUL(d->src_rows, D));
  TAKE(cross_k, float, MUL(MUL(L, d->src_rows), D));
  TAKE(cross_v, float, MUL(MUL(L, d->src_rows), D));
  TAKE(row_sent, int, R);
  TAKE(next_row_sent, int, R);
  TAKE(tokens, int, MUL(R, rmt_size_add(S, 1)));
  TAKE(next_tokens, int, MUL(R, rmt_size_add(S, 1)));
  TAKE(path, int, MUL(R, S));
  TAKE(next_path, int, MUL(R, S));
  TAKE(row_score, float, R);
  TAKE(next_row_score, float, R);
  TAKE(self_k, float, MUL(MUL(MUL(L, S), R), D));
  TAKE(self_v, float, MUL(MUL(MUL(L, S), R), D));
  TAKE(cross_probs, float, MUL(R, d->src_max));
  TAKE(align, int, MUL(S, R));
  TAKE(x, float, MUL(rows, D));
  TAKE(dual, float, MUL(rows, D));
  TAKE(normed, float, MUL(rows, D));
  TAKE(q, float, MUL(rows, D));
  TAKE(k, float, MUL(rows, D));
  TAKE(v, float, MUL(rows, D));
  TAKE(attn, float, MUL(rows, D));
  TAKE(sub_out, float, MUL(rows, D));
  TAKE(hidden, float, MUL(rows, (size_t)c->ffn_dim));
  TAKE(logits, float, MUL(R, (size_t)c->vocab_size));
  TAKE(scores, float, MUL(MUL(2, d->keys), d->threads));  // two rows at a time (rmt_attention_rows_f32)
  TAKE(key_rows, const float *, MUL(d->keys, d->threads));
  TAKE(value_rows, const float *, MUL(d->keys, d->threads));
  TAKE(cand_score, float, MUL(N, MUL(2, B)));
  TAKE(cand_index, int, MUL(N, MUL(2, B)));
  TAKE(n_cand, int, N);
  TAKE(groups, int, MUL(N, 2));
  if (d->int8_in) {  // room for either int8 kernel's activations (kernels.h)
    TAKE(act_q, int16_t, MUL(rows, (size_t)rmt_quantized_row_len_any((int)d->int8_in)));
    TAKE(act_scale, float, rows);
  }
  if (d->output) layout_shortlist(c, d, tr, cv);
  return cv->missing ? RMT_SIZE_OVERFLOW : cv->bytes;
}
#undef MUL
#undef TAKE

// Target tokens allowed for a source of src_len tokens (counting its </s>):
// fairseq rounds down and then forces </s>; Marian (max-length-factor) stops
// once ceil(a * src_len) tokens are out, the last of them perhaps </s>.
static int max_target_len(const rmt_config *c, const rmt_search_params *p, int src_len) {
  double limit = p->max_len_a * (double)src_len + p->max_len_b;
  if (c->search == RMT_SEARCH_MARIAN) limit = ceil(limit);
  return limit < c->max_positions - 1 ? (int)limit : c->max_positions - 1;
}

// The most source tokens (a language token included, </s> not) one sentence
// may have: within the model's positions, and short enough that its longest
// allowed output (max_len_a * (n + 1) + max_len_b) is not cut by them, so that
// a caller splitting long text gets whole translations. At least 8 (within
// the positions), whatever the parameters.
int rmt_translation_max_source(const rmt_config *c, const rmt_search_params *p) {
  int limit = c->max_positions - 1;
  if (p->max_len_a > 0) {
    double by_output = floor((c->max_positions - 1 - p->max_len_b) / p->max_len_a) - 1;
    if (by_output < limit) limit = by_output < 0 ? 0 : (int)by_output;
  }
  int floor_ = c->max_positions - 1 < 8 ? c->max_positions - 1 : 8;
  return limit > floor_ ? limit : floor_;
}

// Checks sentence s (len ids at `ids`) against the model and the parameters;
// *max_len gets its output length. 0 or an error code.
static int check_sentence(const rmt_config *c, const rmt_search_params *p, const int32_t *ids, int len, int s, int *max_len) {
  if (len < 1) return rmt_error(RMT_E_INVALID, "empty input: sentence %d has no tokens", s);
  if (len + 1 > c->max_positions) {
    return rmt_error(RMT_E_LIMIT, "input too long: sentence %d has %d tokens, the model takes at most %d (plus </s>)", s,
                     len, c->max_positions - 1);
  }
  for (int t = 0; t < len; t++) {
    int id = ids[t];
    int pad = c->pad_id >= 0 && id == c->pad_id;
    if (id < 0 || id >= c->vocab_size || pad) {
      return rmt_error(RMT_E_INVALID, "token id %d (sentence %d, position %d) is %s", id, s, t,
                       pad ? "the padding id" : "outside the vocabulary");
    }
  }
  *max_len = max_target_len(c, p, len + 1);
  // Past the output length, min_len would only pad the output up to the cut
  // (an output of 0 tokens has none to pad).
  if (p->min_len > *max_len && *max_len > 0) {
    return rmt_error(RMT_E_LIMIT, "min_len must be at most the output length allowed, %d tokens for sentence %d "
                     "(max_len_a * (source + 1) + max_len_b, within the model's %d positions), got %d", *max_len, s,
                     c->max_positions, p->min_len);
  }
  return RMT_OK;
}

// Validates the batch and sizes everything before anything is allocated:
// fills dims and returns the arena's bytes, or 0 with the error set.
static size_t size_batch(const rmt_model *model, const rmt_search_params *p, const int32_t *ids, const int32_t *lens,
                         int n_sent, layout_dims *dims) {
  const rmt_config *c = &model->config;
  *dims = (layout_dims){.n_sent = (size_t)n_sent, .beam = (size_t)p->beam,
                        .rows = rmt_size_mul((size_t)n_sent, (size_t)p->beam), .int8_in = (size_t)model->int8_max_in};
  size_t id_count = 0;
  int max_target = 0;
  for (int s = 0; s < n_sent; s++) {
    int max_len = 0;
    if (check_sentence(c, p, ids + id_count, lens[s], s, &max_len)) return 0;
    id_count += (size_t)lens[s];  // at most n_sent * max_positions: the ids are in memory
    dims->src_rows = rmt_size_add(dims->src_rows, (size_t)lens[s] + 1);
    if ((size_t)lens[s] + 1 > dims->src_max) dims->src_max = (size_t)lens[s] + 1;
    max_target = max_len > max_target ? max_len : max_target;
  }
  dims->steps = (size_t)max_target + 1;
  dims->keys = dims->steps > dims->src_max ? dims->steps : dims->src_max;
  // Attention's and the shortlist's scratch, one copy per thread that may use it (threads.h).
  dims->threads = (size_t)rmt_threads_available();
  size_t bytes = layout(c, dims, NULL, NULL);
  // The shortlist's candidates are counted (a pass over the vocabulary per
  // sentence) only for a batch that fits without them.
  if (bytes <= RMT_MAX_TRANSLATION_BYTES && c->shortlist_first >= 0 && p->shortlist) {
    if (rmt_shortlist_count(model, ids, lens, n_sent, p->beam, &dims->shortlist)) return 0;
    dims->output = &model->output_projection;
    bytes = layout(c, dims, NULL, NULL);
  }
  if (bytes > RMT_MAX_TRANSLATION_BYTES) {
    // Every count below the limit also fits the int fields of rmt_translation.
    char need[64];
    if (bytes == RMT_SIZE_OVERFLOW) snprintf(need, sizeof need, "more memory than %zu-bit sizes address", 8 * sizeof(size_t));
    else snprintf(need, sizeof need, "%zu MB", bytes >> 20);
    rmt_error(RMT_E_SIZE, "too large: beam %d over %d sentence%s of up to %d output tokens needs %s (the limit is %zu MB); "
              "use a smaller beam, maxLength or batch", p->beam, n_sent, n_sent == 1 ? "" : "s", max_target, need,
              RMT_MAX_TRANSLATION_BYTES >> 20);
    return 0;
  }
  return bytes;
}

// A translation with its arena of `bytes` carved as dims says; NULL (the
// error set) when memory runs out.
static rmt_translation *translation_new(const rmt_model *model, const rmt_search_params *p, const int32_t *lens,
                                        const layout_dims *dims, size_t bytes) {
  rmt_translation *tr = calloc(1, sizeof *tr);
  if (!tr) {
    rmt_error(RMT_E_NOMEM, "out of memory");
    return NULL;
  }
  int n_sent = (int)dims->n_sent;
  tr->model = model;
  tr->params = *p;
  tr->n_sent = n_sent;
  tr->rows_max = (int)dims->rows;
  tr->steps_max = (int)dims->steps;
  tr->src_rows = (int)dims->src_rows;
  tr->src_max = (int)dims->src_max;
  tr->keys_max = (int)dims->keys;
  tr->scratch_threads = (int)dims->threads;
  tr->act_row_len = dims->int8_in ? rmt_quantized_row_len_any((int)dims->int8_in) : 0;
  tr->cand_most = (int)dims->shortlist.most;
  tr->out_by_sentence = dims->shortlist.by_sentence;
  tr->src_len = malloc(sizeof(int) * (size_t)n_sent);
  tr->src_offset = malloc(sizeof(int) * (size_t)n_sent);
  if (!tr->src_len || !tr->src_offset) {
    rmt_error(RMT_E_NOMEM, "out of memory");
    goto fail;
  }
  for (int s = 0, offset = 0; s < n_sent; s++) {
    tr->src_len[s] = lens[s] + 1;
    tr->src_offset[s] = offset;
    offset += tr->src_len[s];
  }
  if (rmt_arena_init(&tr->arena, bytes)) goto fail;
  if (layout(&model->config, dims, tr, &tr->arena) == RMT_SIZE_OVERFLOW) {
    rmt_error(RMT_E_STATE, "translation arena exhausted (sizing bug)");
    goto fail;
  }
  // Only the search bookkeeping needs zeros; caches and scratch are written before read.
  memset(tr->finished, 0, sizeof(int) * (size_t)n_sent);
  memset(tr->n_hyps, 0, sizeof(int) * (size_t)n_sent);
  memset(tr->ignore, 0, sizeof(int) * (size_t)n_sent * p->beam);
  return tr;
fail:
  rmt_translation_free(tr);
  return NULL;
}

// Places the sources (each ending in </s>), the shortlist's output layer,
// runs the encoder, and sets up step 0: one row per sentence (all beams
// would be identical), starting from </s>.
static void translation_start(rmt_translation *tr, const int32_t *ids, const int32_t *lens) {
  const rmt_config *c = &tr->model->config;
  const int32_t *in = ids;
  for (int s = 0; s < tr->n_sent; s++) {
    int *dst = tr->src_ids + tr->src_offset[s];
    for (int t = 0; t < lens[s]; t++) dst[t] = *in++;
    dst[lens[s]] = c->eos_id;
    tr->max_len[s] = max_target_len(c, &tr->params, tr->src_len[s]);
  }
  if (tr->cand_ids) rmt_shortlist_start(tr);
  rmt_encode(tr);
  tr->n_rows = tr->n_sent;
  for (int s = 0; s < tr->n_sent; s++) {
    tr->row_sent[s] = s;
    tr->tokens[(size_t)s * (tr->steps_max + 1)] = c->eos_id;
  }
}

RMT_API rmt_translation *rmt_translation_begin(const rmt_model *model, const int32_t *ids, const int32_t *lens,
                                               int n_sent, const rmt_search_params *params) {
  rmt_clear_error();
  if (!model || !ids || !lens) {
    rmt_error(RMT_E_INVALID, "rmt_translation_begin: missing model or input");
    return NULL;
  }
  rmt_search_params p;
  if (params) p = *params;
  else rmt_search_params_default(&p);
  if (rmt_search_params_check(&p)) return NULL;
  if (n_sent < 1) {
    rmt_error(RMT_E_INVALID, "empty input: no sentences");
    return NULL;
  }
  layout_dims dims;
  size_t bytes = size_batch(model, &p, ids, lens, n_sent, &dims);
  if (!bytes) return NULL;
  rmt_profile_begin(RMT_OP_SETUP, n_sent);
  rmt_translation *tr = translation_new(model, &p, lens, &dims, bytes);
  if (tr) translation_start(tr, ids, lens);
  rmt_profile_end();
  return tr;
}

RMT_API void rmt_translation_free(rmt_translation *tr) {
  if (!tr) return;
  rmt_arena_free(&tr->arena);
  free(tr->src_len);
  free(tr->src_offset);
  free(tr->text);
  free(tr->text_at);
  free(tr->carried);
  free(tr->carried_at);
  free(tr->src_spans);
  free(tr->verbatim);
  free(tr->verbatim_at);
  free(tr->view_buf);
  free(tr);
}

// ---------------------------------------------------------------- results

RMT_API int rmt_translation_n_hyps(const rmt_translation *tr, int s) {
  if (!tr || s < 0 || s >= tr->n_sent) return rmt_error(RMT_E_INVALID, "sentence index %d out of range", s);
  if (!tr->finished[s]) return rmt_error(RMT_E_STATE, "sentence %d is not finished", s);
  return tr->n_hyps[s] < tr->params.nbest ? tr->n_hyps[s] : tr->params.nbest;
}

// Copies hypothesis k of sentence s (best first) into ids (up to cap) and
// returns its length; score and hit_max_len may be NULL.
RMT_API int rmt_translation_hyp(const rmt_translation *tr, int s, int k, int32_t *ids, int cap, float *score,
                                int32_t *hit_max_len) {
  int n = rmt_translation_n_hyps(tr, s);
  if (n < 0) return n;
  if (n == 0) {
    return rmt_error(RMT_E_STATE, "sentence %d has no translation: every hypothesis scored NaN or -inf "
                     "(non-finite activations: broken weights?)", s);
  }
  if (k < 0 || k >= n) return rmt_error(RMT_E_INVALID, "hypothesis %d of sentence %d out of range", k, s);
  const rmt_hypothesis *h = &tr->hyps[(size_t)s * tr->params.beam + k];
  for (int i = 0; i < h->len && i < cap; i++) ids[i] = h->tokens[i];
  if (score) *score = h->score;
  if (hit_max_len) *hit_max_len = h->hit_max_len;
  return h->len;
}

RMT_API int rmt_translation_hyp_alignment(const rmt_translation *tr, int s, int k, int32_t *src_pos, int cap) {
  int len = rmt_translation_hyp(tr, s, k, NULL, 0, NULL, NULL);
  if (len < 0) return len;
  const rmt_hypothesis *h = &tr->hyps[(size_t)s * tr->params.beam + k];
  for (int i = 0; i < len && i < cap; i++) src_pos[i] = h->align[i];
  return len;
}

// Source length of sentence s, counting its </s>.
RMT_API int rmt_translation_src_len(const rmt_translation *tr, int s) {
  return tr && s >= 0 && s < tr->n_sent ? tr->src_len[s] : rmt_error(RMT_E_INVALID, "sentence index %d out of range", s);
}
RMT_API int rmt_translation_steps(const rmt_translation *tr) { return tr ? tr->step : 0; }


// ---------------------------------------------------------------- teacher forcing

// The encoder output of sentence s: [src_len(s), d_model] (its tokens + </s>).
RMT_API const float *rmt_translation_encoder_out(const rmt_translation *tr, int s) {
  if (!tr || s < 0 || s >= tr->n_sent) return NULL;
  return tr->enc_out + (size_t)tr->src_offset[s] * tr->model->config.d_model;
}

// Runs one decoder step with given tokens (one per sentence: the previous
// output token, starting with </s>), for scoring and for tests. Logits of the
// step: rmt_translation_logits, [n_sent, vocab]. Needs beam 1; no search after.
RMT_API int rmt_translation_force_step(rmt_translation *tr, const int32_t *tokens) {
  if (!tr || !tokens) return rmt_error(RMT_E_INVALID, "rmt_translation_force_step: missing arguments");
  const rmt_config *c = &tr->model->config;
  if (tr->params.beam != 1) return rmt_error(RMT_E_STATE, "forced decoding needs beam 1");
  if (tr->step > 0 && !tr->forced) return rmt_error(RMT_E_STATE, "forced decoding after a search step");
  if (tr->step >= tr->steps_max) return rmt_error(RMT_E_LIMIT, "forced decoding past the maximum length (%d)", tr->steps_max);
  for (int s = 0; s < tr->n_sent; s++) {
    if (tokens[s] < 0 || tokens[s] >= c->vocab_size) return rmt_error(RMT_E_INVALID, "token id %d outside the vocabulary", tokens[s]);
  }
  tr->forced = 1;
  tr->n_rows = tr->n_sent;
  for (int s = 0; s < tr->n_sent; s++) {
    tr->row_sent[s] = s;
    tr->tokens[(size_t)s * (tr->steps_max + 1) + tr->step] = tokens[s];
  }
  rmt_decoder_step(tr, NULL);
  tr->step++;
  return RMT_OK;
}

RMT_API const float *rmt_translation_logits(const rmt_translation *tr) { return tr ? tr->logits : NULL; }

RMT_API const float *rmt_translation_cross_attention(const rmt_translation *tr, int s) {
  if (!tr || s < 0 || s >= tr->n_sent) {
    rmt_error(RMT_E_INVALID, "sentence index %d out of range", s);
    return NULL;
  }
  if (!tr->forced) {
    rmt_error(RMT_E_STATE, "the encoder-attention weights are kept for forced decoding only");
    return NULL;
  }
  return tr->cross_probs + (size_t)s * tr->src_max;  // row s is sentence s in forced decoding
}
