// Encoder and decoder forward passes. Reads like models/residual_mt/reference.py: the
// three residual styles differ only in sublayer_input / sublayer_output and
// stack_finish below.
#include <math.h>
#include <string.h>

#include "blocks.h"
#include "ops.h"
#include "profile.h"
#include "shortlist.h"
#include "threads.h"
#include "translation.h"

// Linear `lin`'s product into out (M rows of lin->n_out), as a part of
// rmt_gemm_parts (threads.h): float32, int8 or 16-bit, as its weights were
// packed; an integer one quantizes its input per row first, for the kernel
// its weights were packed for (rmt_linear.kr) and to its range (act_qmax).
static rmt_gemm_part product(float *out, const rmt_linear *lin) {
  return (rmt_gemm_part){.C = out, .packed_weight = lin->weight, .packed_weight_i8 = lin->weight_i8,
                         .packed_weight_i16 = lin->weight_i16, .w_scale = lin->weight_scale,
                         .w_offset_sum = lin->weight_offset_sum, .bias = lin->bias, .N = lin->n_out, .kr = lin->kr,
                         .qmax = lin->act_qmax, .act_offset = lin->act_offset, .scale = 1.0f};
}

// A block of rows of the activations: rows first..first+n-1. A batch of
// enough sentences (or rows) runs a block on each thread, every loop inside
// it on that thread (rmt_encode, rmt_decoder_step); a smaller one runs all
// its rows as one block, its loops split over the pool's threads.
typedef struct {
  int first, n;
} row_block;

// The multiply-adds of products of M rows, K wide (profile.h: an operation's work).
static long long products_macs(const rmt_gemm_part *parts, int n, int M, int K) {
  long long macs = 0;
  for (int i = 0; i < n; i++) macs += (long long)M * parts[i].N * K;
  return macs;
}

// The products of one input `in` (the block's rows, K wide), operation `op`
// of the profile (profile.h): one loop on the pool for them all. An integer
// product quantizes the block's rows into its own part of tr->act_q (a stride
// as wide as the widest input: blocks on other threads may be at other layers).
static void products(rmt_translation *tr, row_block b, int op, const rmt_gemm_part *parts, int n, const float *in,
                     int K) {
  int16_t *aq = tr->act_q ? tr->act_q + (size_t)b.first * tr->act_row_len : NULL;
  float *a_scale = tr->act_scale ? tr->act_scale + b.first : NULL;
  rmt_profile_begin(op, products_macs(parts, n, b.n, K));
  rmt_gemm_parts(parts, n, in, aq, a_scale, b.n, K);
  rmt_profile_end();
}

// out = in W^T + bias for the block's rows (out and in point at its first row).
static void linear(rmt_translation *tr, row_block b, int op, float *out, const float *in, const rmt_linear *lin) {
  rmt_gemm_part part = product(out, lin);
  products(tr, b, op, &part, 1, in, lin->n_in);
}

// ---------------------------------------------------------------- residual styles

// What a sub-layer f reads: LN(x) for Pre-LN, x itself otherwise.
static const float *sublayer_input(const rmt_config *c, const rmt_norm *norm, const float *x, float *normed, int M) {
  if (c->style != RMT_STYLE_PRE) return x;
  rmt_profile_begin(RMT_OP_NORM, (long long)M * c->d_model);
  rmt_layer_norm_f32(normed, x, norm->gamma, norm->beta, M, c->d_model, c->ln_eps);
  rmt_profile_end();
  return normed;
}

// Folds the sub-layer's output `out` into the streams:
//   post      x = LN(x + out)
//   pre       x = x + out
//   residual  dual = dual + out * s;  x = LN(out + x)
// Rows are independent: ranges of them run on the pool's threads when there
// are enough (a batch's encoder; a decoding step's few rows stay on one).
typedef struct {
  const rmt_config *c;
  const rmt_norm *norm;
  float *x, *dual;
  const float *out;
} sublayer_fold;

static void sublayer_output_rows(void *ctx, int begin, int end, int thread) {
  const sublayer_fold *f = ctx;
  const rmt_config *c = f->c;
  (void)thread;
  int M = end - begin;
  size_t at = (size_t)begin * c->d_model, n = (size_t)M * c->d_model;
  float *x = f->x + at, *dual = f->dual + at;
  const float *out = f->out + at;
  if (c->style == RMT_STYLE_RESIDUAL) rmt_add_scaled_f32(dual, dual, out, c->res_scale, n);
  rmt_add_scaled_f32(x, x, out, 1.0f, n);
  if (c->style != RMT_STYLE_PRE) rmt_layer_norm_f32(x, x, f->norm->gamma, f->norm->beta, M, c->d_model, c->ln_eps);
}

static void sublayer_output(const rmt_config *c, const rmt_norm *norm, float *x, float *dual, const float *out, int M) {
  sublayer_fold fold = {c, norm, x, dual, out};
  long long work = 8LL * M * c->d_model;  // two adds and a LayerNorm: about 8 operations a value
  rmt_profile_begin(RMT_OP_NORM, (long long)M * c->d_model);
  rmt_parallel_for(M, sublayer_output_rows, &fold, work, RMT_THREADS_ALL);
  rmt_profile_end();
}

// The stack's output: x (post), LN_final(x) (pre), x * alpha + LN_final(dual) (residual).
static void stack_finish(const rmt_config *c, const rmt_norm *final_norm, float alpha, float *x, float *dual, int M) {
  size_t n = (size_t)M * c->d_model;
  rmt_profile_begin(RMT_OP_NORM, (long long)n);
  if (c->style == RMT_STYLE_PRE) {
    rmt_layer_norm_f32(x, x, final_norm->gamma, final_norm->beta, M, c->d_model, c->ln_eps);
  } else if (c->style == RMT_STYLE_RESIDUAL) {
    rmt_layer_norm_f32(dual, dual, final_norm->gamma, final_norm->beta, M, c->d_model, c->final_ln_eps);
    rmt_scale_f32(x, alpha, n);
    rmt_add_scaled_f32(x, x, dual, 1.0f, n);
  }
  rmt_profile_end();
}

// x = sqrt(D) * embedding[token] + positions[position]; dual = x * s (ResiDual).
// token -1 embeds nothing (Marian's first decoder input): x = positions[position].
// An int8 row is dequantized first: embedding[token][i] = q * row scale (float32);
// a float16 row widened.
static void embed_row(const rmt_model *m, const rmt_embedding *table, int token, int position, float *x, float *dual) {
  const rmt_config *c = &m->config;
  const float *pos = m->positions + (size_t)(c->position_offset + position) * c->d_model;
  float scale = sqrtf((float)c->d_model);
  if (token < 0) {
    memcpy(x, pos, sizeof(float) * (size_t)c->d_model);
  } else if (table->i8) {
    const int8_t *q = table->i8 + (size_t)token * c->d_model;
    float row_scale = table->scale[token];
    for (int i = 0; i < c->d_model; i++) x[i] = (float)q[i] * row_scale * scale + pos[i];
  } else if (table->f16) {
    rmt_f16_to_f32(x, (const unsigned char *)(table->f16 + (size_t)token * c->d_model), (size_t)c->d_model);
    for (int i = 0; i < c->d_model; i++) x[i] = x[i] * scale + pos[i];
  } else {
    const float *emb = table->f32 + (size_t)token * c->d_model;
    for (int i = 0; i < c->d_model; i++) x[i] = emb[i] * scale + pos[i];
  }
  if (c->style == RMT_STYLE_RESIDUAL) {
    for (int i = 0; i < c->d_model; i++) dual[i] = x[i] * c->res_scale;
  }
}

// fc2(act(fc1(in))) into the block's rows of tr->sub_out; ReLU is applied by fc1's product (to
// the columns each thread has just computed).
static void feed_forward(rmt_translation *tr, row_block b, const rmt_layer *layer, const float *in) {
  size_t n = (size_t)b.n * layer->fc1.n_out;
  float *hidden = tr->hidden + (size_t)b.first * layer->fc1.n_out;
  int swish = tr->model->config.activation == RMT_ACT_SWISH;
  rmt_gemm_part fc1 = product(hidden, &layer->fc1);
  fc1.relu = !swish;
  products(tr, b, RMT_OP_GEMM_FFN_UP, &fc1, 1, in, layer->fc1.n_in);
  if (swish) {
    rmt_profile_begin(RMT_OP_ACTIVATION, (long long)n);
    rmt_swish_f32(hidden, n);
    rmt_profile_end();
  }
  linear(tr, b, RMT_OP_GEMM_FFN_DOWN, tr->sub_out + (size_t)b.first * tr->model->config.d_model, hidden, &layer->fc2);
}

// Each thread attends with its own copy of the scratch (key and value row
// lists, scores): thread `thread`'s.
typedef struct {
  const float **key_rows, **value_rows;
  float *scores;
} attention_scratch;

static attention_scratch scratch_of(const rmt_translation *tr, int thread) {
  size_t at = (size_t)thread * tr->keys_max;
  return (attention_scratch){tr->key_rows + at, tr->value_rows + at, tr->scores + 2 * at};
}

// q (already projected and scaled) attends over the key/value rows listed in
// the scratch; writes one row of tr->attn, and the weights averaged over the
// heads into probs unless it is NULL.
static void attend(rmt_translation *tr, const attention_scratch *scratch, int row, int n_keys, float *probs) {
  const rmt_config *c = &tr->model->config;
  rmt_attention_row_f32(tr->attn + (size_t)row * c->d_model, probs, tr->q + (size_t)row * c->d_model,
                        scratch->key_rows, scratch->value_rows, n_keys, c->n_heads, c->head_dim, scratch->scores);
}

// Rows of attention run on the pool's threads when there is enough of it:
// each row reads shared keys and values and writes only its own outputs.
static void attend_rows(rmt_translation *tr, int n, rmt_range_fn fn, void *ctx, long long keys_per_row) {
  long long work = 2 * keys_per_row * n * tr->model->config.d_model;  // q.k and p * v per key
  rmt_profile_begin(RMT_OP_ATTENTION, work);
  rmt_parallel_for(n, fn, ctx, work, tr->scratch_threads);
  rmt_profile_end();
}

// The source position of sentence s that `probs` weights most (the first of
// equals), leaving out </s> and target-language tokens: they stand for no
// word of the text, yet attention often rests on </s>. -1 when nothing is left.
static int most_attended(const rmt_translation *tr, int s, const float *probs) {
  const rmt_config *c = &tr->model->config;
  const int *src = tr->src_ids + tr->src_offset[s];
  int best = -1;
  for (int j = 0; j < tr->src_len[s] - 1; j++) {
    int lang = 0;
    for (int i = 0; i < c->n_target_langs; i++) lang |= src[j] == c->target_lang_ids[i];
    if (!lang && (best < 0 || probs[j] > probs[best])) best = j;
  }
  return best;
}

// Lists rows first..first+n-1 of the key and value matrices (width D) as the
// keys to attend over: a sentence's own rows, which is all the masking needed.
static void list_sentence_rows(const rmt_translation *tr, const attention_scratch *scratch, const float *keys,
                               const float *values, int first, int n) {
  int D = tr->model->config.d_model;
  for (int t = 0; t < n; t++) {
    scratch->key_rows[t] = keys + (size_t)(first + t) * D;
    scratch->value_rows[t] = values + (size_t)(first + t) * D;
  }
}

// Attention's projections of one input `in` (the block's rows), as one
// product: the block's rows of tr->q (scaled by head_dim^-0.5, as fairseq
// scales it) if with_q, and k and v (at the block's first row) unless k is NULL.
static void project(rmt_translation *tr, row_block b, const rmt_attention *attn, int with_q, const float *in, float *k,
                    float *v) {
  const rmt_config *c = &tr->model->config;
  rmt_gemm_part parts[3];
  int n = 0;
  if (with_q) {
    parts[n] = product(tr->q + (size_t)b.first * c->d_model, &attn->q_proj);
    parts[n++].scale = 1.0f / sqrtf((float)c->head_dim);
  }
  if (k) {
    parts[n++] = product(k, &attn->k_proj);
    parts[n++] = product(v, &attn->v_proj);
  }
  products(tr, b, with_q ? RMT_OP_GEMM_QKV : RMT_OP_GEMM_CROSS_KV, parts, n, in, c->d_model);
}

// ---------------------------------------------------------------- blocks on threads
// blocks.c cuts a batch by any cost; what a sentence or a row costs
// (sentence_cost, row_cost) is this file's: it counts the products and
// attention of the passes below, and changes with them.

// A batch cut into blocks, one a thread (blocks.h), and what each block's
// thread runs after its network (decoding: the work on the rows' logits).
// (A row's values do not depend on the rows computed with it, kernels.h:
// the results are those of one block.)
typedef struct {
  rmt_translation *tr;
  rmt_blocks b;
  rmt_range_fn then;
} thread_blocks;

// The threads a batch's blocks may use: the pool's, at most the translation's scratch copies.
static int block_threads(const rmt_translation *tr) {
  int threads = rmt_threads_available();
  return threads < tr->scratch_threads ? threads : tr->scratch_threads;
}

// Attention is counted ATTENTION_COST times its multiply-adds in a block's
// cost (an estimate: scores, softmax and sums over heads of 32 values run
// slower than a GEMM's multiply-adds).
#define ATTENTION_COST 4

// ---------------------------------------------------------------- encoder

// The fewest sentences a thread's block of the encoder may have: fewer give
// blocks of unequal cost (the loops inside then split instead).
#define ENCODER_BLOCK_MIN_SENTENCES 4

// Encoder self-attention of sentences first + begin..first + end-1: each row
// over its sentence's rows, all of a sentence's rows in one call (two at a
// time over the same keys).
typedef struct {
  rmt_translation *tr;
  int first;
} encoder_sentences;

static void encoder_attention(void *ctx, int begin, int end, int thread) {
  const encoder_sentences *e = ctx;
  rmt_translation *tr = e->tr;
  const rmt_config *c = &tr->model->config;
  attention_scratch scratch = scratch_of(tr, thread);
  for (int s = e->first + begin; s < e->first + end; s++) {
    int first = tr->src_offset[s], n = tr->src_len[s];
    size_t at = (size_t)first * c->d_model;
    list_sentence_rows(tr, &scratch, tr->k, tr->v, first, n);
    rmt_attention_rows_f32(tr->attn + at, tr->q + at, n, c->d_model, scratch.key_rows, scratch.value_rows, n,
                           c->n_heads, c->head_dim, scratch.scores);
  }
}

// The encoder for sentences first..first+n-1 (n >= 1: a batch has a
// sentence; their rows are contiguous), and the decoder's cross-attention
// keys and values of them.
static void encode_sentences(rmt_translation *tr, int first, int n) {
  const rmt_model *m = tr->model;
  const rmt_config *c = &m->config;
  int D = c->d_model, last = first + n - 1;
  row_block b = {tr->src_offset[first], tr->src_offset[last] + tr->src_len[last] - tr->src_offset[first]};
  size_t at = (size_t)b.first * D;
  float *x = tr->enc_out + at, *dual = tr->dual + at, *normed = tr->normed + at, *sub_out = tr->sub_out + at;
  const int *src = tr->src_ids;
  rmt_profile_begin(RMT_OP_EMBED, (long long)b.n * D);
  for (int s = first; s <= last; s++) {
    for (int t = 0; t < tr->src_len[s]; t++) {
      int row = tr->src_offset[s] + t;
      // No padding inside a sentence (rows are packed): position t is the t-th token.
      embed_row(m, &m->embed_tokens, src[row], t, tr->enc_out + (size_t)row * D, tr->dual + (size_t)row * D);
    }
  }
  rmt_profile_end();
  encoder_sentences sentences = {tr, first};
  long long keys = 0;  // for the attention's threshold: every row's keys, summed
  for (int s = first; s <= last; s++) keys += (long long)tr->src_len[s] * tr->src_len[s];
  for (int l = 0; l < c->encoder_layers; l++) {
    const rmt_layer *layer = &m->encoder_layers[l];
    const float *in = sublayer_input(c, &layer->self_attn_norm, x, normed, b.n);
    project(tr, b, &layer->self_attn, 1, in, tr->k + at, tr->v + at);
    attend_rows(tr, n, encoder_attention, &sentences, keys / n);  // an item is a sentence: its rows' keys
    linear(tr, b, RMT_OP_GEMM_OUT, sub_out, tr->attn + at, &layer->self_attn.out_proj);
    sublayer_output(c, &layer->self_attn_norm, x, dual, sub_out, b.n);

    in = sublayer_input(c, &layer->final_norm, x, normed, b.n);
    feed_forward(tr, b, layer, in);
    sublayer_output(c, &layer->final_norm, x, dual, sub_out, b.n);
  }
  stack_finish(c, &m->encoder_norm, c->enc_alpha, x, dual, b.n);

  // Cross-attention keys and values depend only on the encoder output: once per sentence.
  size_t layer_size = (size_t)tr->src_rows * D;
  for (int l = 0; l < c->decoder_layers; l++) {
    float *k = tr->cross_k + l * layer_size + at, *v = tr->cross_v + l * layer_size + at;
    project(tr, b, &m->decoder_layers[l].encoder_attn, 0, x, k, v);
  }
}

// A sentence's cost in the encoder: its rows' products (4 d^2 + 2 d ffn a
// layer: q, k, v, out and the feed-forward; then 2 d^2 a decoder layer for
// the cross-attention's keys and values: `arg`), and its attention over itself.
static long long sentence_cost(const void *ctx, int s, long long products) {
  const rmt_translation *tr = ctx;
  const rmt_config *c = &tr->model->config;
  long long len = tr->src_len[s];
  return len * products + (long long)ATTENTION_COST * c->encoder_layers * 2 * c->d_model * len * len;
}

static void encoder_block_range(void *ctx, int begin, int end, int thread) {
  const thread_blocks *d = ctx;
  (void)thread;  // the loops inside run on this thread (threads.h)
  for (int i = begin; i < end; i++) {
    if (d->b.start[i + 1] > d->b.start[i]) encode_sentences(d->tr, d->b.start[i], d->b.start[i + 1] - d->b.start[i]);
  }
}

void rmt_encode(rmt_translation *tr) {
  const rmt_config *c = &tr->model->config;
  thread_blocks d = {.tr = tr, .b.blocks = rmt_blocks_count(block_threads(tr), tr->n_sent, ENCODER_BLOCK_MIN_SENTENCES)};
  if (d.b.blocks == 1) {
    rmt_profile_begin(RMT_OP_OTHER, 0);  // the profiling build has one thread: always here
    encode_sentences(tr, 0, tr->n_sent);
    rmt_profile_end();
    return;
  }
  long long products = (long long)c->d_model *
                       ((long long)c->encoder_layers * (4LL * c->d_model + 2LL * c->ffn_dim) + 2LL * c->decoder_layers * c->d_model);
  rmt_blocks_split(&d.b, tr->n_sent, sentence_cost, tr, products);
  rmt_parallel_for(d.b.blocks, encoder_block_range, &d, products * tr->src_rows, tr->scratch_threads);
}

// ---------------------------------------------------------------- decoder

// The fewest rows a thread's block of a decoding step may have: one GEMM tile.
#define ROW_BLOCKS_MIN_ROWS RMT_GEMM_MR

// Marian's SSRU cell in place of decoder self-attention (Kim et al. 2019, as
// marian-dev's rnn/cells.h computes it): c = f * c_prev + (1 - f) * (x W),
// f = sigmoid(x Wf + bf), out = relu(c), then the sub-layer's residual and LN.
// The cell state of each step is kept where self-attention keeps its keys, so
// a row finds its c_prev through `path` like any cache entry.
static void ssru_step(rmt_translation *tr, row_block b, const rmt_layer *layer, float *cells, size_t cache_step) {
  const rmt_config *c = &tr->model->config;
  int D = c->d_model, t = tr->step;
  size_t at = (size_t)b.first * D;
  const float *in = sublayer_input(c, &layer->self_attn_norm, tr->x + at, tr->normed + at, b.n);
  rmt_gemm_part parts[2] = {product(tr->k + at, &layer->ssru_in), product(tr->v + at, &layer->ssru_forget)};
  products(tr, b, RMT_OP_GEMM_SSRU, parts, 2, in, D);
  rmt_profile_begin(RMT_OP_SSRU_CELL, (long long)b.n * D);
  float *cell = cells + t * cache_step;
  for (int r = b.first; r < b.first + b.n; r++) {
    const float *prev = t > 0 ? cells + (t - 1) * cache_step + (size_t)tr->path[(size_t)r * tr->steps_max + t - 1] * D : NULL;
    rmt_ssru_cell_f32(cell + (size_t)r * D, tr->sub_out + (size_t)r * D, prev, tr->k + (size_t)r * D,
                      tr->v + (size_t)r * D, D);
  }
  rmt_profile_end();
  sublayer_output(c, &layer->self_attn_norm, tr->x + at, tr->dual + at, tr->sub_out + at, b.n);
}

// The decoder's attention of one layer at step t, rows first + begin..first + end-1.
typedef struct {
  rmt_translation *tr;
  int first;                       // the block's first row
  const float *k_cache, *v_cache;  // self-attention: this layer's cache
  size_t cache_step;
  const float *cross_k, *cross_v;  // encoder attention: this layer's keys and values
  int last;                        // the last layer (its weights are the alignment)
} decoder_attention;

// Self-attention over each row's history (through path) and the new token.
static void decoder_self_attention(void *ctx, int begin, int end, int thread) {
  const decoder_attention *a = ctx;
  rmt_translation *tr = a->tr;
  attention_scratch scratch = scratch_of(tr, thread);
  int D = tr->model->config.d_model, t = tr->step;
  for (int r = a->first + begin; r < a->first + end; r++) {
    const int *path = tr->path + (size_t)r * tr->steps_max;
    for (int j = 0; j <= t; j++) {
      scratch.key_rows[j] = a->k_cache + j * a->cache_step + (size_t)path[j] * D;
      scratch.value_rows[j] = a->v_cache + j * a->cache_step + (size_t)path[j] * D;
    }
    attend(tr, &scratch, r, t + 1, NULL);
  }
}

// Encoder attention over each row's sentence; in the last layer its weights
// give the alignment of the token this step chooses.
static void decoder_cross_attention(void *ctx, int begin, int end, int thread) {
  const decoder_attention *a = ctx;
  rmt_translation *tr = a->tr;
  attention_scratch scratch = scratch_of(tr, thread);
  for (int r = a->first + begin; r < a->first + end; r++) {
    int s = tr->row_sent[r];
    float *probs = a->last ? tr->cross_probs + (size_t)r * tr->src_max : NULL;
    list_sentence_rows(tr, &scratch, a->cross_k, a->cross_v, tr->src_offset[s], tr->src_len[s]);
    attend(tr, &scratch, r, tr->src_len[s], probs);
    if (a->last) tr->align[(size_t)tr->step * tr->rows_max + r] = most_attended(tr, s, probs);
  }
}

// The decoder at position tr->step for the block's rows, to their logits.
static void decoder_rows(rmt_translation *tr, row_block b) {
  const rmt_model *m = tr->model;
  const rmt_config *c = &m->config;
  int D = c->d_model, t = tr->step, stride = tr->steps_max + 1;
  size_t at = (size_t)b.first * D;
  float *x = tr->x + at, *dual = tr->dual + at, *normed = tr->normed + at, *sub_out = tr->sub_out + at;
  float *attn = tr->attn + at;
  rmt_profile_begin(RMT_OP_EMBED, (long long)b.n * D);
  for (int r = b.first; r < b.first + b.n; r++) {
    int token = t == 0 && c->decoder_start_zero ? -1 : tr->tokens[(size_t)r * stride + t];
    embed_row(m, &m->decoder_embed_tokens, token, t, tr->x + (size_t)r * D, tr->dual + (size_t)r * D);
    tr->path[(size_t)r * tr->steps_max + t] = r;
  }
  rmt_profile_end();
  size_t cache_layer = (size_t)tr->steps_max * tr->rows_max * D, cache_step = (size_t)tr->rows_max * D;
  for (int l = 0; l < c->decoder_layers; l++) {
    const rmt_layer *layer = &m->decoder_layers[l];
    float *k_cache = tr->self_k + l * cache_layer, *v_cache = tr->self_v + l * cache_layer;

    const float *in;
    if (c->ssru) {
      ssru_step(tr, b, layer, k_cache, cache_step);
    } else {
      // Self-attention over this row's history (through path) and the new token.
      in = sublayer_input(c, &layer->self_attn_norm, x, normed, b.n);
      project(tr, b, &layer->self_attn, 1, in, k_cache + t * cache_step + at, v_cache + t * cache_step + at);
      decoder_attention self = {.tr = tr, .first = b.first, .k_cache = k_cache, .v_cache = v_cache,
                                .cache_step = cache_step};
      attend_rows(tr, b.n, decoder_self_attention, &self, t + 1);
      linear(tr, b, RMT_OP_GEMM_OUT, sub_out, attn, &layer->self_attn.out_proj);
      sublayer_output(c, &layer->self_attn_norm, x, dual, sub_out, b.n);
    }

    // Encoder attention over the row's sentence; the last layer's weights
    // are the alignment of the token this step chooses.
    in = sublayer_input(c, &layer->encoder_attn_norm, x, normed, b.n);
    project(tr, b, &layer->encoder_attn, 1, in, NULL, NULL);
    decoder_attention cross = {.tr = tr, .first = b.first, .cross_k = tr->cross_k + (size_t)l * tr->src_rows * D,
                               .cross_v = tr->cross_v + (size_t)l * tr->src_rows * D,
                               .last = l == c->decoder_layers - 1};
    attend_rows(tr, b.n, decoder_cross_attention, &cross, tr->src_max);
    linear(tr, b, RMT_OP_GEMM_OUT, sub_out, attn, &layer->encoder_attn.out_proj);
    sublayer_output(c, &layer->encoder_attn_norm, x, dual, sub_out, b.n);

    in = sublayer_input(c, &layer->final_norm, x, normed, b.n);
    feed_forward(tr, b, layer, in);
    sublayer_output(c, &layer->final_norm, x, dual, sub_out, b.n);
  }
  stack_finish(c, &m->decoder_norm, c->dec_alpha, x, dual, b.n);
  int V = c->vocab_size;
  if (!tr->cand_ids) {
    linear(tr, b, RMT_OP_GEMM_VOCAB, tr->logits + (size_t)b.first * V, x, &m->output_projection);
    return;
  }
  // Under a lexical shortlist the output layer computes the batch's
  // candidates for all rows, or (out_by_sentence) each sentence's for its
  // rows (they are consecutive), gathered by shortlist.c, into their places
  // of the logits; every other word stays -inf there (shortlist.c fills the
  // logits so, and search.c clears what a row's earlier sentence left).
  size_t width = (size_t)(tr->out_by_sentence ? tr->cand_most : tr->n_out);
  for (int r = b.first, n; r < b.first + b.n; r += n) {
    int s = tr->row_sent[r];
    for (n = 1; r + n < b.first + b.n && (!tr->out_by_sentence || tr->row_sent[r + n] == s);) n++;
    const int *cand;
    rmt_linear lin = rmt_shortlist_layer(tr, s, &cand);
    float *computed = tr->out_logits + (size_t)r * width;  // n rows of lin.n_out <= width
    linear(tr, (row_block){r, n}, RMT_OP_GEMM_VOCAB, computed, x + (size_t)(r - b.first) * D, &lin);
    rmt_profile_begin(RMT_OP_GEMM_VOCAB, 0);
    for (int i = 0; i < n; i++) {
      float *row = tr->logits + (size_t)(r + i) * V;
      for (int j = 0; j < lin.n_out; j++) row[cand[j]] = computed[(size_t)i * lin.n_out + j];
    }
    rmt_profile_end();
  }
}

// A row's cost in a decoding step: its products (the same for every row:
// `arg`), then its attention over its sentence and its history.
static long long row_cost(const void *ctx, int r, long long products) {
  const rmt_translation *tr = ctx;
  const rmt_config *c = &tr->model->config;
  int keys = tr->src_len[tr->row_sent[r]] + tr->step + 1;
  return products + (long long)ATTENTION_COST * c->decoder_layers * 2 * c->d_model * keys;
}

static void decoder_block_range(void *ctx, int begin, int end, int thread) {
  const thread_blocks *d = ctx;
  for (int i = begin; i < end; i++) {
    int first = d->b.start[i], n = d->b.start[i + 1] - first;
    if (n == 0) continue;
    decoder_rows(d->tr, (row_block){first, n});  // its loops run on this thread (threads.h)
    if (d->then) d->then(d->tr, first, first + n, thread);
  }
}

void rmt_decoder_step(rmt_translation *tr, rmt_range_fn then) {
  const rmt_config *c = &tr->model->config;
  int R = tr->n_rows;
  // A step's rows are independent: a block of them on each thread (their
  // keys and values stay in its cache too, while the rows keep their
  // places). Too few rows for a tile each (batch-1 decoding) are one block,
  // whose large products are split by columns instead.
  thread_blocks d = {.tr = tr, .b.blocks = rmt_blocks_count(block_threads(tr), R, ROW_BLOCKS_MIN_ROWS), .then = then};
  if (d.b.blocks == 1) {
    rmt_profile_begin(RMT_OP_OTHER, 0);  // the profiling build has one thread: always here
    decoder_rows(tr, (row_block){0, R});
    rmt_profile_end();
    // `then` costs about an exp and a few adds a logit: counted as 8 multiply-adds (rmt_parallel_for's threshold).
    if (then) rmt_parallel_for(R, then, tr, 8LL * R * c->vocab_size, RMT_THREADS_ALL);
    return;
  }
  // A row's products: 6 d^2 + 2 d ffn multiply-adds a layer, then d a word of the output layer.
  long long products = (long long)c->d_model * ((long long)c->decoder_layers * (6LL * c->d_model + 2LL * c->ffn_dim) +
                                                (!tr->cand_ids ? c->vocab_size : tr->out_by_sentence ? tr->cand_most : tr->n_out));
  rmt_blocks_split(&d.b, R, row_cost, tr, products);
  rmt_parallel_for(d.b.blocks, decoder_block_range, &d, products * R, tr->scratch_threads);
}
