// The model: configuration and weights, read-only once loaded. Translation
// state (caches, scratch) lives apart (translation.h), so several translations
// can share one model.
#ifndef RMT_MODEL_H
#define RMT_MODEL_H
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "rmt.h"

typedef enum { RMT_STYLE_POST = 0, RMT_STYLE_PRE = 1, RMT_STYLE_RESIDUAL = 2 } rmt_style;
typedef enum { RMT_ACT_RELU = 0, RMT_ACT_SWISH = 1 } rmt_activation;
typedef enum { RMT_SEARCH_FAIRSEQ = 0, RMT_SEARCH_MARIAN = 1 } rmt_search_kind;

#define RMT_MAX_LANGS 8

typedef struct {
  rmt_style style;
  int d_model, ffn_dim, n_heads, head_dim;
  int encoder_layers, decoder_layers;
  int vocab_size, max_positions;
  int bos_id, pad_id, eos_id, unk_id;  // bos_id and pad_id are -1 when the model has none (Marian)
  float ln_eps;        // every sub-layer LN, and Pre-LN's final LN
  float final_ln_eps;  // ResiDual's LN_final over the dual stream
  float res_scale;     // ResiDual's s (res_input_norm_scale)
  float enc_alpha, dec_alpha;
  int share_embeddings;
  // How models converted from Marian (models/convert_marian.py) compute; the
  // defaults are fairseq's, and each is one key of config.json.
  rmt_activation activation;  // "activation": FFN activation, "relu" or "swish" (x * sigmoid(x))
  int position_offset;        // "positions": the first token's sinusoidal position, pad_id + 1
                              //   ("fairseq") or 0 ("marian")
  int decoder_start_zero;     // "decoder_start": "zeros": the first decoder input embeds no token
                              //   (Marian); "eos": </s> (fairseq)
  int output_bias;            // "output_bias": decoder.output_projection.bias exists
  int output_int16;           // "output_layer": "int16": the output projection, stored in float, is
                              //   quantized to 16 bits at load (kernels.h rmt_qmax_w16); "float": as stored
  int ssru;                   // "decoder_self": "ssru": Marian's SSRU cell instead of self-attention
  rmt_search_kind search;     // "search": fairseq's SequenceGenerator or Marian's beam search
  int shortlist_first;        // "shortlist_first": with a lexical shortlist, the target ids below
                              //   this are always candidates; -1 (null, absent): no shortlist
  // Target-language tokens ("languages": {"target_lang_tokens": {"en": 4}}):
  // when present the source is [token] + text ids + [eos].
  int n_target_langs;
  char target_lang_codes[RMT_MAX_LANGS][16];
  int target_lang_ids[RMT_MAX_LANGS];
} rmt_config;

// Parses and validates config.json. 0 or RMT_E_FORMAT with a message.
int rmt_config_parse(rmt_config *config, const char *json, size_t len);

// A Linear layer, float32 or int8: int8 when its weight is safetensors I8
// with one scale per row (models/quantize.py), float32 otherwise.
typedef struct {
  float *weight;         // (N, K) torch layout, packed for rmt_gemm_f32 (see kernels.h); NULL when int8
  int8_t *weight_i8;     // (N, K) int8, packed with k groups of kr for rmt_linear_i8 (kernels.h); NULL otherwise
  int16_t *weight_i16;   // (N, K) int16, packed for rmt_gemm_i16_cols: the output projection of a model with
                         //   "output_layer": "int16" (weight_scale as for int8); NULL otherwise
  float *weight_scale;   // (N) int8: each output feature's scale (weight = q * scale)
  int32_t *weight_offset_sum;  // (N) with act_offset: kernels.h rmt_weight_offset_sums; NULL otherwise
  float *bias;           // (N)
  int n_out, n_in;
  int relu_input;        // its input is a ReLU's output (>= 0): fc2 of a ReLU model
  int kr;                // int8: RMT_GEMM_I8_KR_RELAXED for the relaxed-dot kernel, RMT_GEMM_I8_KR_DOT16 for
                         //   dot_i16x8's: rmt_gemm_i8_kr's choice at load, DOT16 for 16-bit input (kernels.h)
  int act_offset;        // int8: its input stored with this offset (kernels.h rmt_gemm_i8_offset)
  int act_qmax;          // int8: its input quantized to [-act_qmax, act_qmax]: RMT_QMAX_I8, the output
                         //   projection rmt_qmax_i16(n_in) (kernels.h); 16-bit: rmt_qmax_w16(n_in)
} rmt_linear;

// An embedding table, float32, float16 or int8 like rmt_linear; float16 and
// int8 rows are widened (int8: q * scale) to float32 as they are looked up.
// Exactly one of f32, f16, i8 is set.
typedef struct {
  float *f32;     // (V, D)
  uint16_t *f16;  // (V, D) float16 as stored: a model's F16 table, which need not take twice its size
  int8_t *i8;     // (V, D) int8
  float *scale;   // (V) int8: each row's scale
} rmt_embedding;

typedef struct {
  float *gamma;  // (D) LayerNorm weight
  float *beta;   // (D) LayerNorm bias
} rmt_norm;

typedef struct {
  rmt_linear q_proj, k_proj, v_proj, out_proj;  // *.{q,k,v,out}_proj, each (D, D)
} rmt_attention;

typedef struct {
  rmt_attention self_attn;     // {encoder,decoder}.layers.N.self_attn
  rmt_norm self_attn_norm;     // ....self_attn_layer_norm
  rmt_attention encoder_attn;  // decoder.layers.N.encoder_attn (decoder only)
  rmt_norm encoder_attn_norm;  // decoder.layers.N.encoder_attn_layer_norm (decoder only)
  rmt_linear fc1;              // ....fc1 (F, D)
  rmt_linear fc2;              // ....fc2 (D, F)
  rmt_norm final_norm;         // ....final_layer_norm
  // SSRU decoder (config ssru) instead of self_attn; self_attn_norm is then
  // decoder.layers.N.ssru_layer_norm (Marian's rnn_ffn_ln_*):
  //   c = f * c_prev + (1 - f) * (x W),  f = sigmoid(x Wf + bf),  out = relu(c)
  rmt_linear ssru_in;          // decoder.layers.N.ssru.in_proj (D, D), no bias (Marian's rnn_W)
  rmt_linear ssru_forget;      // decoder.layers.N.ssru.forget_proj (D, D) (Marian's rnn_Wf, rnn_bf)
} rmt_layer;

struct rmt_model {
  rmt_config config;
  rmt_arena arena;                // owns every array below
  rmt_embedding embed_tokens;          // (V, D) encoder.embed_tokens.weight
  rmt_embedding decoder_embed_tokens;  // (V, D) decoder.embed_tokens.weight (== embed_tokens when shared)
  rmt_linear output_projection;   // (V, D) decoder.output_projection.weight (the embedding when shared),
                                  //   bias decoder.output_projection.bias (V) with config output_bias, else NULL
  float *positions;               // (max_positions + position_offset, D) sinusoidal table
  rmt_layer *encoder_layers;      // [encoder_layers]
  rmt_layer *decoder_layers;      // [decoder_layers]
  // Lexical shortlist (config shortlist_first >= 0; Bergamot's binary format,
  // converted): the target ids a source id brings in as output candidates are
  // shortlist_targets[shortlist_offsets[id] .. shortlist_offsets[id + 1]).
  int32_t *shortlist_offsets;     // (V + 1) shortlist.offsets, I32 or I16 in the file
  int32_t *shortlist_targets;     // (n) shortlist.targets, I32 or I16 in the file
  rmt_norm encoder_norm;          // encoder.layer_norm (Pre-LN final LN / ResiDual LN_final)
  rmt_norm decoder_norm;          // decoder.layer_norm
  int int8_max_in;                // the widest input (K) of an int8 Linear: translations size their
                                  //   quantized-activation scratch by it; 0 when every Linear is float
};
typedef struct rmt_model rmt_model;

#endif
