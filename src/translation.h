// Translation state: everything mutable for one batch of sentences, in one
// arena sized up front from the model config and the batch (no allocation
// happens once decoding starts). Read-only weights stay in rmt_model.
#ifndef RMT_TRANSLATION_H
#define RMT_TRANSLATION_H
#include "model.h"
#include "rmt.h"
#include "threads.h"
#include "verbatim.h"

typedef struct rmt_spm rmt_spm;  // spm.h

typedef struct rmt_search_params {
  int beam;          // hypotheses kept per sentence; 1 = greedy
  int nbest;         // finished hypotheses returned per sentence (<= beam)
  int min_len;       // eos is forbidden before this many target tokens (at most each sentence's max target tokens)
  int max_len_b;     // max target tokens = min(max_len_a * src_len + max_len_b, max_positions - 1),
  double max_len_a;  //   src_len counting the source's </s>
  double lenpen;     // finished score = sum of log-probs / length^lenpen (length counts </s>)
  int shortlist;     // 1: a model's lexical shortlist limits each sentence's output words; 0: all words
} rmt_search_params;

// RMT_OK when every field is in its range and nbest <= beam (search_params.c), else RMT_E_LIMIT.
int rmt_search_params_check(const rmt_search_params *params);

typedef struct {
  int *tokens;  // [len] without </s>
  int *align;   // [len] the source position each token was aligned to (rmt_translation_hyp_alignment)
  int len;
  float score;
  int hit_max_len;  // decoding was cut at the length limit
} rmt_hypothesis;

// A part of a sentence's text that the model has no piece for (carry.c).
typedef struct {
  int32_t begin, end;   // bytes of the sentence's text, without whitespace at either end
  int32_t first, last;  // the text's ids it is (unknown), or the one it lies in or before (dropped)
  int32_t unknown;      // 1: unknown ids (and glyphs joined to them); 0: characters the normalizer drops
} rmt_carried;

struct rmt_translation {
  const rmt_model *model;
  rmt_search_params params;
  rmt_arena arena;
  int n_sent;
  int rows_max;  // n_sent * beam
  int steps_max; // decoder steps = max over sentences of max_len + 1

  // Per sentence
  int *src_len;      // [n_sent] source tokens including </s>
  int *src_offset;   // [n_sent] first row of the sentence in enc_out / cross_k / cross_v
  int *max_len;      // [n_sent] target tokens allowed (without </s>)
  // With a lexical shortlist in use (else cand_ids is NULL): each sentence's
  // output candidates, ascending: cand_ids[cand_offset[s] .. cand_offset[s + 1]),
  int *cand_ids;
  int *cand_offset;        // [n_sent + 1]
  int *cand_panel;         // [n_sent + 1] the first weight panel of each sentence's in out_layer
  int cand_most;           // the most of one sentence
  float *cand_scratch;     // [scratch_threads][cand_most] their logits, compacted (search.c)
  unsigned char *word_mark;  // [V] scratch
  int n_out;               // the batch's candidates (the union of its sentences'): how many,
  int *out_ids;            //   [n_out] which, ascending
  int out_by_sentence;     // whether the output layer computes each sentence's candidates, or the batch's
  rmt_linear out_layer;    //   with the output projection's rows for them (gathered at the start;
                           //   shortlist.h rmt_shortlist_layer)
  float *out_logits;       // [rows_max][cand_most or n_out] a row's share of them, scattered into logits
  int *finished;     // [n_sent]
  int *ignore;       // [n_sent * beam] fairseq's cands_to_ignore
  rmt_hypothesis *hyps;  // [n_sent * beam] finished hypotheses, n_hyps[s] of them
  int *n_hyps;           // [n_sent]
  int *hyp_tokens;       // pool: [n_sent * beam * steps_max]
  int *hyp_align;        // pool: [n_sent * beam * steps_max]

  // Encoder
  int src_rows;      // sum of src_len
  int src_max;       // max of src_len
  int *src_ids;      // [src_rows] the sentences packed back to back, each ending in </s>
  float *enc_out;    // [src_rows, D]
  float *cross_k;    // [decoder_layers][src_rows, D] encoder_attn keys, computed once
  float *cross_v;    // [decoder_layers][src_rows, D]

  // Decoder: rows are the live hypotheses of unfinished sentences, renumbered
  // every step. A row's history is reached through `path`, so reordering beams
  // copies a few ints per step instead of the cache.
  int step;          // steps done
  int forced;        // 1 once rmt_translation_force_step was used (no search then)
  int n_rows;
  int *row_sent;     // [rows_max] sentence of each row
  int *tokens;       // [rows_max][steps_max + 1]: </s> then the tokens so far
  int *path;         // [rows_max][steps_max]: cache slot of this row's history at each step
  float *row_score;  // [rows_max] cumulative log-probability
  int *next_row_sent, *next_tokens, *next_path;  // double buffers for reordering
  float *next_row_score;
  float *self_k;     // [decoder_layers][steps_max][rows_max, D]
  float *self_v;

  // Alignment: the last decoder layer's encoder attention, heads averaged.
  float *cross_probs; // [rows_max, src_max] this step's weights of each row over its sentence's source
  int *align;         // [steps_max][rows_max] the source position each row attended to most at each
                      //   step (indexed by cache slot, like path); -1 when none qualifies

  // Scratch
  float *x, *dual, *normed, *q, *k, *v, *attn, *sub_out;  // [max(rows_max, src_rows), D]
  float *hidden;     // [max rows, ffn_dim]
  float *logits;     // [rows_max, vocab]
  int16_t *act_q;    // [max rows, int8 K padded] a Linear's input quantized per row (int8 models only;
                     //   int16, or bytes for the relaxed kernel, kernels.h)
  float *act_scale;  // [max rows] its row scales
  int act_row_len;   // act_q's int16 values a row (the widest input's: blocks of rows on several threads
                     //   quantize their rows at once, each product its own width)
  int keys_max;        // the most keys a row attends over (steps_max or src_max)
  int scratch_threads; // threads with their own copy of the attention scratch below (threads.h)
  float *scores;     // [scratch_threads][2 keys_max] attention scores (of two rows)
  const float **key_rows, **value_rows;  // [scratch_threads][keys_max]
  float *cand_score; // [n_sent][2 * beam] each sentence's candidates this step, best first
  int *cand_index;   // [n_sent][2 * beam] flat index beam * V + token
  int *n_cand;       // [n_sent]
  int *groups;       // [n_sent][2] this step's sentences: their first row and row count

  // The source text, kept by rmt_translation_begin_text (NULL after
  // rmt_translation_begin), so that what the model has no piece for comes
  // back in the output text (carry.c). Plain allocations, freed with tr.
  char *text;            // the sentences' texts back to back
  int32_t *text_at;      // [n_sent + 1] where each sentence's text starts in `text`
  rmt_carried *carried;  // what each has no piece for, in order: sentence s's are
  int32_t *carried_at;   //   carried[carried_at[s] .. carried_at[s + 1])
  int32_t *src_spans;    // [2 src_rows] each source id's bytes of its sentence's text, placed as src_ids
  rmt_verbatim *verbatim;              // what each must give back byte for byte (verbatim.c), in order:
  int32_t *verbatim_at;                //   sentence s's are verbatim[verbatim_at[s] .. verbatim_at[s + 1])

  // rmt_translation_read's answer and the memory it points into (grown as needed).
  rmt_hyp_view view;
  char *view_buf;
  size_t view_cap;
};
typedef struct rmt_translation rmt_translation;

// transformer.c: the forward passes.
void rmt_encode(rmt_translation *tr);
// Runs the decoder for all current rows at position tr->step (tokens already
// placed), writing logits [n_rows, V] and the rows' keys/values to the cache;
// then, unless it is NULL, then(tr, begin, end, thread) over the rows'
// logits, each row once (on the thread that computed them, or as a loop on
// the pool: threads.h).
void rmt_decoder_step(rmt_translation *tr, rmt_range_fn then);

// The most source tokens (language token included, </s> not) a sentence may have (translation.c).
int rmt_translation_max_source(const rmt_config *c, const rmt_search_params *p);
// carry.c: keeps the texts of rmt_translation_begin_text in tr (text_lens
// their bytes, total in all) with what they have no piece for; spans: each
// source id's bytes of its text (rmt_spm_encode_spans), packed like the ids
// given to rmt_translation_begin, each text's after `prefix` language tokens.
int rmt_carry_keep(rmt_translation *tr, const rmt_spm *spm, const char *texts, const int32_t *text_lens, size_t total,
                   const int32_t *spans, int prefix);
// carry.c: n output ids of sentence s (align: their alignment, as
// rmt_translation_hyp_alignment's) decoded to text with what the source has
// no piece for carried into it (snprintf convention). whole: a whole
// hypothesis, else a stable prefix (the text stops where a span is still to
// be placed); spans, if not NULL: each id's bytes of the text.
int rmt_carry_decode(const rmt_translation *tr, const rmt_spm *spm, int s, const int32_t *ids, const int32_t *align,
                     int n, int whole, char *out, size_t cap, int32_t *spans);

// verbatim.c: finds each sentence's verbatim spans in the texts rmt_carry_keep kept.
int rmt_verbatim_keep(rmt_translation *tr);
// verbatim.c: as rmt_carry_decode, then with the sentence's verbatim spans
// given back (kept, replaced or inserted); res, if not NULL: room for one
// rmt_verbatim_result a span, what became of each.
int rmt_verbatim_decode(const rmt_translation *tr, const rmt_spm *spm, int s, const int32_t *ids, const int32_t *align, int n,
                        int whole, char *out, size_t cap, int32_t *spans, rmt_verbatim_result *res);

// search.c: the alignment (as rmt_translation_hyp_alignment) of what
// rmt_translation_partial and rmt_translation_stable read: the best finished
// hypothesis once sentence s is done, else its first live row. Returns its length.
int rmt_translation_live_alignment(const rmt_translation *tr, int s, int32_t *src_pos, int cap);

// Sentences tokenized once (sources.c): rmt_sources_add tokenizes one (as
// rmt_text_encode) and keeps it, returning its number of ids; a translation
// then begins from any of them, `which` their numbers (in the order added,
// from 0), as rmt_translation_begin_text from their texts.
typedef struct rmt_sources rmt_sources;
#endif
