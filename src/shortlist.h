// A model's lexical shortlist over one batch (shortlist.c): the output words
// each sentence may produce, the batch's (their union), and the output
// layer's rows for those. translation.c lays out the arena they live in and
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
} rmt_shortlist_sizes;

// The sizes for n_sent sentences of lens[s] ids each (back to back in ids,
// without their </s>), as rmt_shortlist_start fills them. 0, or RMT_E_NOMEM
// without scratch memory.
int rmt_shortlist_count(const rmt_model *m, const int32_t *ids, const int32_t *lens, int n_sent,
                        rmt_shortlist_sizes *sizes);

// Once the sources are in tr->src_ids: each sentence's candidates and the
// batch's (cand_ids, cand_offset, out_ids, n_out), the output layer's rows
// for the batch's (out_layer), and -inf in every logit off them (the decoder
// writes only the batch's places: transformer.c).
void rmt_shortlist_start(rmt_translation *tr);
#endif
