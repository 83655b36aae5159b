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

// Limits of one translation, enforced by rmt_translation_begin; JS reads them
// with rmt_limit(). The bytes limit keeps a batch (sentences x beam x output
// length) well inside WASM's 4 GB memory, next to the model.
#define RMT_MAX_BEAM 256
#define RMT_MAX_LEN (1 << 20)  // min_len and max_len_b
#define RMT_MAX_TRANSLATION_BYTES ((size_t)1 << 30)
enum {
  RMT_LIMIT_BEAM = 0, RMT_LIMIT_TRANSLATION_BYTES = 1, RMT_LIMIT_LEN = 2, RMT_LIMIT_JSON_BYTES = 3,
  RMT_LIMIT_THREADS = 4,  // RMT_THREADS_MAX (threads.h)
  RMT_LIMIT_COUNT
};
// The value of limit `which` (RMT_LIMIT_*), or RMT_E_INVALID; its name
// ("beam", "translation_bytes", ...: JS's engine.limits), NULL past the last.
RMT_API int rmt_limit(int which);
RMT_API const char *rmt_limit_name(int which);

typedef struct {
  int beam;          // hypotheses kept per sentence; 1 = greedy
  int nbest;         // finished hypotheses returned per sentence (<= beam)
  int min_len;       // eos is forbidden before this many target tokens (at most each sentence's max target tokens)
  int max_len_b;     // max target tokens = min(max_len_a * src_len + max_len_b, max_positions - 1),
  double max_len_a;  //   src_len counting the source's </s>
  double lenpen;     // finished score = sum of log-probs / length^lenpen (length counts </s>)
  int shortlist;     // 1: a model's lexical shortlist limits each sentence's output words; 0: all words
} rmt_search_params;

// The fields of rmt_search_params by number, so that callers (JS) set them
// without knowing the struct's layout; defaults and ranges live in search_params.c.
enum {
  RMT_PARAM_BEAM, RMT_PARAM_NBEST, RMT_PARAM_MIN_LEN, RMT_PARAM_MAX_LEN_A, RMT_PARAM_MAX_LEN_B, RMT_PARAM_LENPEN, RMT_PARAM_SHORTLIST,
  RMT_PARAM_COUNT
};
RMT_API int rmt_search_params_size(void);
RMT_API void rmt_search_params_default(rmt_search_params *params);
// RMT_OK when every field is in its range and nbest <= beam (search_params.c), else RMT_E_LIMIT.
int rmt_search_params_check(const rmt_search_params *params);
// The field's name ("beam", "max_len_a", ...), NULL past the last.
RMT_API const char *rmt_search_param_name(int field);
RMT_API double rmt_search_param_get(const rmt_search_params *params, int field);
// 1 when the field holds an integer (beam, ...), 0 for a real number (lenpen, ...), RMT_E_INVALID past the last.
RMT_API int rmt_search_param_integer(int field);
// Sets a field: RMT_E_LIMIT (and nothing set) when the value is out of its range.
RMT_API int rmt_search_param_set(rmt_search_params *params, int field, double value);

// One hypothesis as rmt_translation_read gives it, all in one call; its
// pointers point into the translation (valid until the next read or its free).
typedef struct {
  int32_t n_ids;         // its tokens, without </s>
  float score;
  int32_t hit_max_len;   // decoding was cut at the length limit
  int32_t text_len;      // bytes of text (-1: not asked for)
  const int32_t *ids;    // [n_ids]
  const char *text;      // [text_len] and a NUL: rmt_translation_hyp_text's
  const int32_t *spans;  // [4 n_ids] as rmt_translation_hyp_alignment_text's (NULL: not asked for)
} rmt_hyp_view;
// Its fields by number (JS reads them without knowing the layout): the
// field's name ("n_ids", ...) and its byte offset; NULL and -1 past the last.
RMT_API const char *rmt_hyp_view_field(int field);
RMT_API int rmt_hyp_view_offset(int field);

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

RMT_API rmt_translation *rmt_translation_begin(const rmt_model *model, const int32_t *ids, const int32_t *lens,
                                               int n_sent, const rmt_search_params *params);
RMT_API void rmt_translation_free(rmt_translation *tr);
// One beam search step for every unfinished sentence; returns how many remain (0 = done).
RMT_API int rmt_translation_step(rmt_translation *tr);
RMT_API int rmt_translation_run(rmt_translation *tr);

// Results, once a sentence is finished: up to nbest hypotheses, best first.
RMT_API int rmt_translation_n_hyps(const rmt_translation *tr, int s);
// Copies hypothesis k of sentence s into ids (at most cap) and returns its
// length; score and hit_max_len may be NULL.
RMT_API int rmt_translation_hyp(const rmt_translation *tr, int s, int k, int32_t *ids, int cap, float *score,
                                int32_t *hit_max_len);
// The best hypothesis so far; returns its length.
RMT_API int rmt_translation_partial(const rmt_translation *tr, int s, int32_t *ids, int cap);
// The prefix the final best hypothesis is sure to start with (streaming); returns its length.
RMT_API int rmt_translation_stable(const rmt_translation *tr, int s, int32_t *ids, int cap);
RMT_API int rmt_translation_src_len(const rmt_translation *tr, int s);
RMT_API int rmt_translation_steps(const rmt_translation *tr);

// Alignment of hypothesis k of sentence s: for each of its tokens, the
// position in the sentence's source (its ids as given to
// rmt_translation_begin, 0-based) that the last decoder layer's encoder
// attention, averaged over the heads, weighted most when the token was
// chosen; never the source's </s> or a target-language token (-1 when the
// source has nothing else). models/residual_mt/reference.py's `alignment` defines it.
// Copies up to cap positions into src_pos; returns the hypothesis's length.
RMT_API int rmt_translation_hyp_alignment(const rmt_translation *tr, int s, int k, int32_t *src_pos, int cap);

// Teacher forcing and internals, for scoring and tests.
RMT_API const float *rmt_translation_encoder_out(const rmt_translation *tr, int s);
RMT_API int rmt_translation_force_step(rmt_translation *tr, const int32_t *tokens);
RMT_API const float *rmt_translation_logits(const rmt_translation *tr);
// After a forced step: sentence s's encoder-attention weights in the last
// decoder layer, averaged over the heads ([src_len(s)]: its tokens and </s>).
RMT_API const float *rmt_translation_cross_attention(const rmt_translation *tr, int s);

// Text in and out (text.c): SentencePiece encoding, the target-language token
// when the model has them, decoding. `texts` holds n_texts texts back to back,
// text_lens their byte lengths. Text results follow snprintf's convention.
// Encodes user text for this model: spm's ids, never a language token (text
// that spells one is encoded as ordinary pieces). rmt_spm_encode's convention.
RMT_API int rmt_text_encode(const rmt_model *model, const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                            int max_ids);
RMT_API rmt_translation *rmt_translation_begin_text(const rmt_model *model, const rmt_spm *spm, const char *texts,
                                                    const int32_t *text_lens, int n_texts, const char *target_lang,
                                                    const rmt_search_params *params);
// Sentences tokenized once (sources.c): rmt_sources_add tokenizes one (as
// rmt_text_encode) and keeps it, returning its number of ids; a translation
// then begins from any of them, `which` their numbers (in the order added,
// from 0), as rmt_translation_begin_text from their texts.
typedef struct rmt_sources rmt_sources;
RMT_API rmt_sources *rmt_sources_new(const rmt_model *model, const rmt_spm *spm);
RMT_API int rmt_sources_add(rmt_sources *src, const char *text, size_t len);
RMT_API void rmt_sources_free(rmt_sources *src);
RMT_API rmt_translation *rmt_translation_begin_sources(const rmt_sources *src, const int32_t *which, int n,
                                                       const char *target_lang, const rmt_search_params *params);
// The number of ids (as rmt_text_encode's) of each of n_texts texts (back to
// back, text_lens their bytes) into counts: one call for many (js/segment.js
// splitLong's words). 0 or an error code.
RMT_API int rmt_text_count(const rmt_model *model, const rmt_spm *spm, const char *texts, const int32_t *text_lens,
                           int n_texts, int32_t *counts);
// Hypothesis k of sentence s: its ids, score and hit_max_len, and with
// with_text its text, with with_spans its alignment in text (a translation
// begun from text): one call for all of them. NULL on error.
RMT_API const rmt_hyp_view *rmt_translation_read(rmt_translation *tr, const rmt_spm *spm, int s, int k, int with_text,
                                                 int with_spans);
RMT_API int rmt_translation_hyp_text(const rmt_translation *tr, const rmt_spm *spm, int s, int k, char *out,
                                     size_t cap);
RMT_API int rmt_translation_partial_text(const rmt_translation *tr, const rmt_spm *spm, int s, char *out, size_t cap);
RMT_API int rmt_translation_stable_text(const rmt_translation *tr, const rmt_spm *spm, int s, char *out, size_t cap);
// rmt_translation_hyp_alignment in text: `text` is sentence s's text as given
// to rmt_translation_begin_text (RMT_E_INVALID if it is not). For each token
// i of hypothesis k, spans[4i..4i+3] = the bytes of `text` its source token
// came from (begin, end; -1, -1 when unaligned) and its own bytes of the
// hypothesis's text (rmt_translation_hyp_text; see rmt_spm_decode_spans), up
// to cap tokens. Returns the hypothesis's length.
RMT_API int rmt_translation_hyp_alignment_text(const rmt_translation *tr, const rmt_spm *spm, int s, int k,
                                               const char *text, size_t len, int32_t *spans, int cap);
// The verbatim spans of sentence s (verbatim.h) and what became of them in
// hypothesis k's text (a translation begun from text): for span i, out[6i..6i+5]
// = its bytes of the sentence's text (begin, end), its kind (RMT_SPAN_URL...),
// its bytes of the hypothesis's text (from, to) and how (RMT_SPAN_KEPT,
// _REPLACED, _INSERTED), up to cap spans. Returns how many spans there are.
RMT_API int rmt_translation_verbatim(const rmt_translation *tr, const rmt_spm *spm, int s, int k, int32_t *out, int cap);
// The most ids of user text one sentence may have with these parameters (see
// rmt_translation_max_source; the language token is not counted): longer
// text is to be split before rmt_translation_begin_text.
RMT_API int rmt_text_max_ids(const rmt_model *model, const rmt_search_params *params);
#endif
