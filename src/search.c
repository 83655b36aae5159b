// Beam search with fairseq's SequenceGenerator semantics (models/residual_mt/reference.py
// beam_search is the executable spec), over a batch of sentences whose
// hypotheses are the rows of one decoder pass: one step at a time, and what a
// caller may show of a sentence while it is being decoded. The translation's
// lifecycle (parameters, memory, results) is in translation.c.
#include <math.h>
#include <string.h>

#include "error.h"
#include "ops.h"
#include "profile.h"
#include "threads.h"
#include "translation.h"

// ---------------------------------------------------------------- search step

// The row's log-probabilities with fairseq's per-step masks (reference.py's
// step_log_probs): no padding, only </s> at the length limit, no </s> before
// min_len; with Marian's search, only <unk> is masked. Words off the
// sentence's lexical shortlist, if the model has one, are out from the start.
static void step_log_probs(const rmt_translation *tr, float *lprobs, int s, int thread) {
  const rmt_config *c = &tr->model->config;
  if (tr->cand_ids) {
    // Marian's log-softmax runs over the shortlist's words only: the same as
    // leaving the others out of it (-inf). The sentence's candidates are
    // compacted into this thread's scratch for it; of the row's other words
    // only the batch's may hold values (those of a sentence the row held
    // before: transformer.c), the rest are -inf already.
    const int *cand = tr->cand_ids + tr->cand_offset[s];
    int n = tr->cand_offset[s + 1] - tr->cand_offset[s];
    float *compact = tr->cand_scratch + (size_t)thread * tr->cand_most;
    for (int i = 0; i < n; i++) compact[i] = lprobs[cand[i]];
    rmt_log_softmax_f32(compact, compact, n);
    for (int j = 0; j < tr->n_out; j++) lprobs[tr->out_ids[j]] = -INFINITY;
    for (int i = 0; i < n; i++) lprobs[cand[i]] = compact[i];
  } else {
    rmt_log_softmax_f32(lprobs, lprobs, c->vocab_size);
  }
  if (c->search == RMT_SEARCH_MARIAN) {
    lprobs[c->unk_id] = -INFINITY;  // Marian suppresses <unk> unless --allow-unk
    return;
  }
  if (c->pad_id >= 0) lprobs[c->pad_id] = -INFINITY;
  if (tr->step >= tr->max_len[s]) {
    float eos = lprobs[c->eos_id];
    for (int i = 0; i < c->vocab_size; i++) lprobs[i] = -INFINITY;
    lprobs[c->eos_id] = eos;
  } else if (tr->step < tr->params.min_len) {
    lprobs[c->eos_id] = -INFINITY;
  }
}

// Rows begin..end-1 of the logits become their log-probabilities, each row
// on its own (so the pool's threads may share them: threads.h).
static void all_log_probs(void *ctx, int begin, int end, int thread) {
  const rmt_translation *tr = ctx;
  int V = tr->model->config.vocab_size;
  rmt_profile_begin(RMT_OP_LOG_SOFTMAX, (long long)(end - begin) * V);
  for (int r = begin; r < end; r++) step_log_probs(tr, tr->logits + (size_t)r * V, tr->row_sent[r], thread);
  rmt_profile_end();
}

// Keeps the k best (score, index) pairs in descending order.
static void topk_insert(float *score, int *index, int *count, int k, float value, int idx) {
  if (*count == k && !(value > score[k - 1])) return;
  int pos = *count < k ? (*count)++ : k - 1;
  while (pos > 0 && value > score[pos - 1]) {
    score[pos] = score[pos - 1];
    index[pos] = index[pos - 1];
    pos--;
  }
  score[pos] = value;
  index[pos] = idx;
}

// The k best of row score + log-probability over rows first..first+n_rows-1,
// best first (ties: the lower row, then the lower word), over the words
// words[0..n_words-1] (ascending), or over every word when words is NULL.
static int best_of_rows(const rmt_translation *tr, int first, int n_rows, const int *words, int n_words, int k,
                        float *cand_score, int *cand_index) {
  int V = tr->model->config.vocab_size, n_cand = 0;
  for (int b = 0; b < n_rows; b++) {
    int r = first + b;
    const float *lprobs = tr->logits + (size_t)r * V;  // log-probabilities: all_log_probs
    float base = tr->step > 0 ? tr->row_score[r] : 0.0f;
    if (!words) {
      for (int i = 0; i < V; i++) topk_insert(cand_score, cand_index, &n_cand, k, base + lprobs[i], b * V + i);
      continue;
    }
    for (int j = 0; j < n_words; j++) {
      int i = words[j];
      topk_insert(cand_score, cand_index, &n_cand, k, base + lprobs[i], b * V + i);
    }
  }
  return n_cand;
}

// The candidates of sentences begin..end-1 of this step's groups (each a
// sentence's rows: tr->groups), best first, into the sentence's slots of
// cand_score, cand_index and n_cand: the k best of row score + log-probability
// over its rows (k: 2 * beam, fairseq's; Marian's: beam less its finished
// hypotheses). Each sentence on its own, so threads may share them. Under a
// lexical shortlist every other word is -inf, so the sentence's candidates
// give the same k best whenever k of them are finite; otherwise (a step that
// forces </s>) every word is scanned, as without it.
static void sentence_candidates(void *ctx, int begin, int end, int thread) {
  rmt_translation *tr = ctx;
  int V = tr->model->config.vocab_size, beam = tr->params.beam;
  (void)thread;
  for (int g = begin; g < end; g++) {
    int first = tr->groups[2 * g], n_rows = tr->groups[2 * g + 1], s = tr->row_sent[first];
    int k = tr->model->config.search == RMT_SEARCH_MARIAN ? beam - tr->n_hyps[s]
                                                          : (2 * beam < n_rows * V - 1 ? 2 * beam : n_rows * V - 1);
    float *cand_score = tr->cand_score + (size_t)s * 2 * beam;
    int *cand_index = tr->cand_index + (size_t)s * 2 * beam, n_cand = -1;
    if (tr->cand_ids) {
      const int *words = tr->cand_ids + tr->cand_offset[s];
      n_cand = best_of_rows(tr, first, n_rows, words, tr->cand_offset[s + 1] - tr->cand_offset[s], k, cand_score,
                            cand_index);
      if (k > 0 && (n_cand < k || !(cand_score[k - 1] > -INFINITY))) n_cand = -1;
    }
    if (n_cand < 0) n_cand = best_of_rows(tr, first, n_rows, NULL, 0, k, cand_score, cand_index);
    tr->n_cand[s] = n_cand;
  }
}

static void finish_sentence(rmt_translation *tr, int s) {
  rmt_hypothesis *h = tr->hyps + (size_t)s * tr->params.beam;
  // Stable insertion sort by descending score (ties keep finalisation order).
  for (int i = 1; i < tr->n_hyps[s]; i++) {
    rmt_hypothesis key = h[i];
    int j = i;
    while (j > 0 && key.score > h[j - 1].score) h[j] = h[j - 1], j--;
    h[j] = key;
  }
  tr->finished[s] = 1;
}

// Adds the next step's row for one chosen candidate.
static void push_row(rmt_translation *tr, int *n_next, int s, int parent, int token, float score) {
  int r = (*n_next)++, t = tr->step, stride = tr->steps_max + 1;
  memcpy(tr->next_tokens + (size_t)r * stride, tr->tokens + (size_t)parent * stride, sizeof(int) * (size_t)(t + 1));
  tr->next_tokens[(size_t)r * stride + t + 1] = token;
  memcpy(tr->next_path + (size_t)r * tr->steps_max, tr->path + (size_t)parent * tr->steps_max,
         sizeof(int) * (size_t)(t + 1));
  tr->next_row_sent[r] = s;
  tr->next_row_score[r] = score;
}

// Selection for sentence s whose rows are first..first+n_rows-1.
static void select_sentence(rmt_translation *tr, int s, int first, int n_rows, int *n_next) {
  const rmt_config *c = &tr->model->config;
  int V = c->vocab_size, beam = tr->params.beam, t = tr->step;
  (void)n_rows;
  const float *cand_score = tr->cand_score + (size_t)s * 2 * beam;  // sentence_candidates
  const int *cand_index = tr->cand_index + (size_t)s * 2 * beam, n_cand = tr->n_cand[s];
  // Finalise hypotheses ending in </s> among the top `beam` candidates.
  int *ignore = tr->ignore + (size_t)s * beam;
  int is_eos[2 * RMT_MAX_BEAM];
  for (int j = 0; j < n_cand; j++) {
    is_eos[j] = cand_index[j] % V == c->eos_id && cand_score[j] != -INFINITY;
    if (j >= beam || !is_eos[j] || ignore[j]) continue;
    if (tr->n_hyps[s] < beam) {
      rmt_hypothesis *h = &tr->hyps[(size_t)s * beam + tr->n_hyps[s]++];
      int parent = first + cand_index[j] / V;
      size_t slot = ((size_t)s * beam + (size_t)(h - &tr->hyps[(size_t)s * beam])) * tr->steps_max;
      h->tokens = tr->hyp_tokens + slot;
      h->align = tr->hyp_align + slot;
      h->len = t;
      memcpy(h->tokens, tr->tokens + (size_t)parent * (tr->steps_max + 1) + 1, sizeof(int) * (size_t)t);
      // Token i was chosen at step i, by the row that held this history then.
      const int *path = tr->path + (size_t)parent * tr->steps_max;
      for (int i = 0; i < t; i++) h->align[i] = tr->align[(size_t)i * tr->rows_max + path[i]];
      h->score = (float)(cand_score[j] / pow((double)(t + 1), tr->params.lenpen));
      h->hit_max_len = t >= tr->max_len[s];
    }
  }
  if (tr->n_hyps[s] == beam || t >= tr->max_len[s]) {
    finish_sentence(tr, s);
    return;
  }
  // Continue with the best `beam` candidates that are not finished: candidates
  // ending in </s> (and, among the first `beam`, ignored ones) go last.
  int chosen = 0, new_ignore[RMT_MAX_BEAM];
  for (int pass = 0; pass < 2 && chosen < beam; pass++) {
    for (int j = 0; j < n_cand && chosen < beam; j++) {
      int skip = is_eos[j] || (j < beam && ignore[j]);
      if (skip != pass) continue;
      new_ignore[chosen++] = skip;
      push_row(tr, n_next, s, first + cand_index[j] / V, cand_index[j] % V, cand_score[j]);
    }
  }
  memcpy(ignore, new_ignore, sizeof(int) * (size_t)beam);
  // Every candidate scored NaN (non-finite activations): nothing can continue,
  // so the sentence ends with the hypotheses it has, perhaps none.
  if (chosen == 0) finish_sentence(tr, s);
}

// Finalises the hypothesis parent's tokens + token (token -1: none, the
// candidate ended in </s>), scored sum / (t + 1)^lenpen.
static void add_hypothesis(rmt_translation *tr, int s, int parent, int token, float score) {
  int beam = tr->params.beam, t = tr->step;
  rmt_hypothesis *h = &tr->hyps[(size_t)s * beam + tr->n_hyps[s]];
  size_t slot = ((size_t)s * beam + (size_t)tr->n_hyps[s]++) * tr->steps_max;
  h->tokens = tr->hyp_tokens + slot;
  h->align = tr->hyp_align + slot;
  h->len = t + (token >= 0);
  memcpy(h->tokens, tr->tokens + (size_t)parent * (tr->steps_max + 1) + 1, sizeof(int) * (size_t)t);
  const int *path = tr->path + (size_t)parent * tr->steps_max;
  for (int i = 0; i < t; i++) h->align[i] = tr->align[(size_t)i * tr->rows_max + path[i]];
  if (token >= 0) {
    h->tokens[t] = token;
    h->align[t] = tr->align[(size_t)t * tr->rows_max + parent];
  }
  h->score = (float)(score / pow((double)(t + 1), tr->params.lenpen));
  h->hit_max_len = token >= 0;
}

// Marian's beam search (marian-dev translator/beam_search.cpp, history.h):
// the sentence keeps k = beam - finished hypotheses; its k best candidates
// over all rows are taken, those ending in </s> are finished and the others
// continue, so the beam narrows as hypotheses finish. At the length limit
// (max_len tokens, see translation.c) every candidate is finished as it is.
static void select_sentence_marian(rmt_translation *tr, int s, int first, int n_rows, int *n_next) {
  const rmt_config *c = &tr->model->config;
  int V = c->vocab_size, t = tr->step, pushed = *n_next;
  (void)n_rows;
  const float *cand_score = tr->cand_score + (size_t)s * 2 * tr->params.beam;  // sentence_candidates
  const int *cand_index = tr->cand_index + (size_t)s * 2 * tr->params.beam, n_cand = tr->n_cand[s];
  int last = t + 1 >= tr->max_len[s];
  for (int j = 0; j < n_cand; j++) {
    float score = cand_score[j];
    if (!(score > -INFINITY)) continue;  // NaN or masked: nothing to extend (Marian's invalid path score)
    int parent = first + cand_index[j] / V, token = cand_index[j] % V;
    if (token == c->eos_id) add_hypothesis(tr, s, parent, -1, score);
    else if (last) add_hypothesis(tr, s, parent, token, score);
    else push_row(tr, n_next, s, parent, token, score);
  }
  if (*n_next == pushed) finish_sentence(tr, s);  // all finished (or the length limit, or only NaN)
}

static int unfinished(const rmt_translation *tr) {
  int n = 0;
  for (int s = 0; s < tr->n_sent; s++) n += !tr->finished[s];
  return n;
}

RMT_API int rmt_translation_step(rmt_translation *tr) {
  if (!tr) return rmt_error(RMT_E_INVALID, "rmt_translation_step: no translation");
  if (tr->forced) return rmt_error(RMT_E_STATE, "rmt_translation_step: cannot search after forced decoding");
  if (!unfinished(tr)) return 0;
  rmt_profile_begin(RMT_OP_SEARCH, tr->n_rows);
  rmt_decoder_step(tr, all_log_probs);
  // Rows come grouped by sentence: each sentence's candidates, then (in order,
  // as the rows of the next step are numbered) its selection.
  int n_groups = 0;
  for (int first = 0; first < tr->n_rows; n_groups++) {
    int s = tr->row_sent[first], n = 1;
    while (first + n < tr->n_rows && tr->row_sent[first + n] == s) n++;
    tr->groups[2 * n_groups] = first;
    tr->groups[2 * n_groups + 1] = n;
    first += n;
  }
  rmt_parallel_for(n_groups, sentence_candidates, tr, 2LL * tr->n_rows * tr->model->config.vocab_size, RMT_THREADS_ALL);
  int n_next = 0;
  for (int g = 0; g < n_groups; g++) {
    int first = tr->groups[2 * g], n = tr->groups[2 * g + 1], s = tr->row_sent[first];
    if (tr->model->config.search == RMT_SEARCH_MARIAN) select_sentence_marian(tr, s, first, n, &n_next);
    else select_sentence(tr, s, first, n, &n_next);
  }
  // The chosen rows become the current ones.
#define SWAP(a, b) do { void *t_ = (void *)tr->a; tr->a = tr->b; tr->b = t_; } while (0)
  SWAP(tokens, next_tokens);
  SWAP(path, next_path);
  SWAP(row_sent, next_row_sent);
  SWAP(row_score, next_row_score);
#undef SWAP
  tr->n_rows = n_next;
  tr->step++;
  rmt_profile_end();
  return unfinished(tr);
}

RMT_API int rmt_translation_run(rmt_translation *tr) {
  int remaining;
  while ((remaining = rmt_translation_step(tr)) > 0) {}
  return remaining;
}

// The best hypothesis so far (for streaming): the finished best once the
// sentence is done, otherwise its current top row. Returns its length.
RMT_API int rmt_translation_partial(const rmt_translation *tr, int s, int32_t *ids, int cap) {
  if (!tr || s < 0 || s >= tr->n_sent) return rmt_error(RMT_E_INVALID, "sentence index %d out of range", s);
  if (tr->finished[s]) return tr->n_hyps[s] ? rmt_translation_hyp(tr, s, 0, ids, cap, NULL, NULL) : 0;
  for (int r = 0; r < tr->n_rows; r++) {
    if (tr->row_sent[r] != s) continue;
    const int *tokens = tr->tokens + (size_t)r * (tr->steps_max + 1) + 1;
    for (int i = 0; i < tr->step && i < cap; i++) ids[i] = tokens[i];
    return tr->step;
  }
  return 0;
}

int rmt_translation_live_alignment(const rmt_translation *tr, int s, int32_t *src_pos, int cap) {
  if (!tr || s < 0 || s >= tr->n_sent) return rmt_error(RMT_E_INVALID, "sentence index %d out of range", s);
  if (tr->finished[s]) return tr->n_hyps[s] ? rmt_translation_hyp_alignment(tr, s, 0, src_pos, cap) : 0;
  for (int r = 0; r < tr->n_rows; r++) {
    if (tr->row_sent[r] != s) continue;
    // Token i was chosen at step i by the row that held this history then.
    const int *path = tr->path + (size_t)r * tr->steps_max;
    for (int i = 0; i < tr->step && i < cap; i++) src_pos[i] = tr->align[(size_t)i * tr->rows_max + path[i]];
    return tr->step;
  }
  return 0;
}

static int common_prefix(const int *a, const int *b, int len) {
  int i = 0;
  while (i < len && a[i] == b[i]) i++;
  return i;
}

// The longest token prefix that sentence s's final best hypothesis is sure to
// start with: the one every live row and every finished hypothesis share (the
// best is one of those, or extends a live row); the whole best once the
// sentence is finished. Streaming shows this, so it never takes back a word.
RMT_API int rmt_translation_stable(const rmt_translation *tr, int s, int32_t *ids, int cap) {
  if (!tr || s < 0 || s >= tr->n_sent) return rmt_error(RMT_E_INVALID, "sentence index %d out of range", s);
  if (tr->finished[s]) return tr->n_hyps[s] ? rmt_translation_hyp(tr, s, 0, ids, cap, NULL, NULL) : 0;
  const int *first = NULL;
  int len = 0;
  for (int r = 0; r < tr->n_rows; r++) {
    if (tr->row_sent[r] != s) continue;
    const int *tokens = tr->tokens + (size_t)r * (tr->steps_max + 1) + 1;
    if (!first) first = tokens, len = tr->step;
    len = common_prefix(first, tokens, len);
  }
  const rmt_hypothesis *h = tr->hyps + (size_t)s * tr->params.beam;
  for (int k = 0; first && k < tr->n_hyps[s]; k++) {
    len = common_prefix(first, h[k].tokens, h[k].len < len ? h[k].len : len);
  }
  for (int i = 0; i < len && i < cap; i++) ids[i] = first[i];
  return first ? len : 0;
}
