// A model's lexical shortlist over one batch (shortlist.c): the output words
// each sentence may produce, the batch's (their union), and the output
// layer's rows for those: the batch's, or each sentence's (by_sentence). translation.c lays out the arena they live in and
// asks here only how much room they take.
#ifndef RMT_SHORTLIST_H
#define RMT_SHORTLIST_H
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "translation.h"

typedef struct {
  size_t total;  // the sentences' candidates, summed (tr->cand_ids)
  size_t most;   // the most of one sentence (tr->cand_most)
  size_t words;  // the batch's: the words any of its sentences allows (tr->n_out)
  int by_sentence;  // the output layer computes each row's sentence's candidates, not the batch's
  size_t panels;    // its weight panels (RMT_GEMM_NR words each; by sentence: each sentence's from its own)
  size_t columns;   // and their words: the batch's, or by sentence the sentences' summed
} rmt_shortlist_sizes;

// The sizes for n_sent sentences of lens[s] ids each (back to back in ids,
// without their </s>) searched at `beam`, as rmt_shortlist_start fills them.
// 0, or RMT_E_NOMEM without scratch memory.
int rmt_shortlist_count(const rmt_model *m, const int32_t *ids, const int32_t *lens, int n_sent, int beam,
                        rmt_shortlist_sizes *sizes);

// Once the sources are in tr->src_ids: each sentence's candidates and the
// batch's (cand_ids, cand_offset, out_ids, n_out), the output layer's rows
// for the batch's or (out_by_sentence) each sentence's (out_layer; sentence
// s's from panel cand_panel[s]), and -inf in every logit (the decoder writes
// only the places it computes: transformer.c).
void rmt_shortlist_start(rmt_translation *tr);
// The output layer that computes sentence s's rows (a view into
// tr->out_layer), and in *ids the words of its columns.
rmt_linear rmt_shortlist_layer(const rmt_translation *tr, int s, const int **ids);
#endif
