// The lexical shortlist (shortlist.h): a model's table of the target words
// each source word may bring in, applied to one batch of sentences.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ops.h"
#include "shortlist.h"

// A sentence's output candidates under the lexical shortlist, as Marian's
// BinaryShortlistGenerator::generate picks them for a batch of one sentence
// (data/shortlist.cpp): the ids below shortlist_first, every source id (the
// vocabulary is shared), the targets each source id (</s> included) brings
// in, then the lowest unpicked ids from shortlist_first on until the count is
// a multiple of 8 (intgemm's tile, which changes which words may win).
// ids: the sentence without its </s>.
static void shortlist_candidates(const rmt_model *m, const int32_t *ids, int n_ids, unsigned char *allowed) {
  int V = m->config.vocab_size, count = 0;
  memset(allowed, 0, (size_t)V);
  for (int i = 0; i < m->config.shortlist_first && i < V; i++) allowed[i] = 1;
  for (int t = 0; t <= n_ids; t++) {
    int id = t < n_ids ? ids[t] : m->config.eos_id;
    allowed[id] = 1;
    for (int j = m->shortlist_offsets[id]; j < m->shortlist_offsets[id + 1]; j++) allowed[m->shortlist_targets[j]] = 1;
  }
  for (int i = 0; i < V; i++) count += allowed[i];
  for (int i = m->config.shortlist_first; i < V && count % 8; i++) {
    if (!allowed[i]) allowed[i] = 1, count++;
  }
}

// The batch's words are counted too. The output layer computes them for
// every row (its weights read once for all rows) when each sentence has one
// row (greedy); with a beam, each sentence's own for its rows: the union of
// many sentences' candidates is several times one's, and a sentence's beam
// rows make a product as efficient per multiply-add as the batch's.
int rmt_shortlist_count(const rmt_model *m, const int32_t *ids, const int32_t *lens, int n_sent, int beam,
                        rmt_shortlist_sizes *sizes) {
  int V = m->config.vocab_size;
  unsigned char *sentence = malloc((size_t)V), *batch = calloc((size_t)V, 1);
  if (!sentence || !batch) {
    free(sentence);
    free(batch);
    return rmt_error(RMT_E_NOMEM, "out of memory");
  }
  *sizes = (rmt_shortlist_sizes){.by_sentence = beam > 1};
  for (int s = 0; s < n_sent; ids += lens[s], s++) {
    shortlist_candidates(m, ids, lens[s], sentence);
    size_t count = 0;
    for (int i = 0; i < V; i++) count += sentence[i], batch[i] |= sentence[i];
    sizes->total += count;  // at most n_sent * V: the sentences' ids are in memory, V is an int
    sizes->panels += (size_t)rmt_gemm_panels((int)count);  // count <= V, an int
    if (count > sizes->most) sizes->most = count;
  }
  for (int i = 0; i < V; i++) sizes->words += batch[i];
  if (!sizes->by_sentence) sizes->panels = (size_t)rmt_gemm_panels((int)sizes->words);
  sizes->columns = sizes->by_sentence ? sizes->total : sizes->words;
  free(sentence);
  free(batch);
  return RMT_OK;
}

// Lists each sentence's candidates and the batch's (tr->cand_ids, tr->out_ids)
// once the sentences are in src_ids.
static void list_candidates(rmt_translation *tr) {
  const rmt_model *m = tr->model;
  int V = m->config.vocab_size, count = 0;
  tr->cand_panel[0] = 0;
  for (int s = 0; s < tr->n_sent; s++) {
    shortlist_candidates(m, tr->src_ids + tr->src_offset[s], tr->src_len[s] - 1, tr->word_mark);
    tr->cand_offset[s] = count;
    for (int i = 0; i < V; i++) {
      if (tr->word_mark[i]) tr->cand_ids[count++] = i;
    }
    tr->cand_panel[s + 1] = tr->cand_panel[s] + rmt_gemm_panels(count - tr->cand_offset[s]);
  }
  tr->cand_offset[tr->n_sent] = count;
  memset(tr->word_mark, 0, (size_t)V);
  for (int j = 0; j < count; j++) tr->word_mark[tr->cand_ids[j]] = 1;
  tr->n_out = 0;
  for (int i = 0; i < V; i++) {
    if (tr->word_mark[i]) tr->out_ids[tr->n_out++] = i;
  }
}

// The output layer for sentence s's rows (rmt_shortlist_layer): the batch's
// words, or by sentence its own: rows from panel cand_panel[s] of out_layer,
// scales and biases from cand_offset[s].
rmt_linear rmt_shortlist_layer(const rmt_translation *tr, int s, const int **ids) {
  rmt_linear lin = tr->out_layer;
  if (!tr->out_by_sentence) {
    lin.n_out = tr->n_out;
    *ids = tr->out_ids;
    return lin;
  }
  int K = lin.n_in, first = tr->cand_offset[s];
  *ids = tr->cand_ids + first;
  size_t panel = (size_t)tr->cand_panel[s];
  lin.n_out = tr->cand_offset[s + 1] - first;
  if (lin.weight) lin.weight += panel * rmt_packed_weight_floats(RMT_GEMM_NR, K);
  if (lin.weight_i8) lin.weight_i8 += panel * rmt_packed_weight_i8_bytes(RMT_GEMM_NR, K, lin.kr);
  if (lin.weight_i16) lin.weight_i16 += panel * rmt_packed_weight_i8_bytes(RMT_GEMM_NR, K, lin.kr);
  if (lin.weight_scale) lin.weight_scale += first;
  if (lin.bias) lin.bias += first;
  return lin;
}

// The rows of the output projection for the batch's candidates, or for each sentence's.
static void gather_output_layer(rmt_translation *tr) {
  const rmt_linear *full = &tr->model->output_projection;
  rmt_linear *out = &tr->out_layer;
  int K = full->n_in;
  out->n_in = K;
  out->relu_input = full->relu_input;
  out->kr = full->kr;
  out->act_qmax = full->act_qmax;
  out->act_offset = full->act_offset;  // 0: an integer output layer is 16-bit
  for (int s = 0; s < (tr->out_by_sentence ? tr->n_sent : 1); s++) {
    const int *rows;
    rmt_linear lin = rmt_shortlist_layer(tr, s, &rows);
    int n = lin.n_out;
    if (full->weight) {
      rmt_gather_packed_weight(lin.weight, full->weight, rows, n, K);
    } else {
      if (full->weight_i16) rmt_gather_packed_weight_i16(lin.weight_i16, full->weight_i16, rows, n, K);
      else rmt_gather_packed_weight_i8(lin.weight_i8, full->weight_i8, rows, n, K, full->kr);
      for (int i = 0; i < n; i++) lin.weight_scale[i] = full->weight_scale[rows[i]];
    }
    for (int i = 0; full->bias && i < n; i++) lin.bias[i] = full->bias[rows[i]];
  }
}

void rmt_shortlist_start(rmt_translation *tr) {
  list_candidates(tr);
  gather_output_layer(tr);
  // Words off a row's sentence's candidates are -inf in its logits from
  // here on: the decoder writes only the candidates' places.
  size_t n = (size_t)tr->rows_max * (size_t)tr->model->config.vocab_size;
  for (size_t i = 0; i < n; i++) tr->logits[i] = -INFINITY;
}
