// Model loading: config + safetensors -> weights in one arena. Every tensor is
// checked against the config (name, shape); unknown tensors are an error (a
// misnamed tensor usually means a wrong conversion; better to fail loudly).
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ops.h"
#include "safetensors.h"
#include "size.h"

// The loader runs twice over the same code: first counting the bytes the arena
// needs (and checking every tensor), then filling the arena.
typedef struct {
  rmt_safetensors *st;
  rmt_arena *arena;  // NULL while counting
  size_t bytes;      // counted size (saturating: RMT_SIZE_OVERFLOW when it does not fit)
  int ssru;          // the decoder layers have SSRU cells (config ssru)
  int relu;          // the FFN activation is ReLU (fc2's input is >= 0)
  int quantize;      // float matrices become int8 as they load (rmt_model_load_quantized)
  int int8_max_in;   // the widest int8 Linear seen while counting (rmt_model.int8_max_in)
  size_t scratch_floats;  // the most the load's scratch holds at once (counted, saturating)
} loader;

// Whether matrix `info` passes through the scratch as its int8 bytes (an I8
// matrix, read as it is) rather than widened to float32 (every other dtype,
// quantized or packed from there). need_scratch and read_int8 both ask this,
// so that the scratch counted is the scratch written.
static int read_as_bytes(const loader *ld, const rmt_tensor_info *info) {
  return rmt_safetensors_i8_matrix(ld->st, info);
}

// While counting: a matrix of rows x cols passes through the scratch.
static void need_scratch(loader *ld, const rmt_tensor_info *info, size_t rows, size_t cols) {
  size_t n = rmt_size_mul(rows, cols);
  if (read_as_bytes(ld, info) && n != RMT_SIZE_OVERFLOW) n = n / sizeof(float) + 1;
  if (n > ld->scratch_floats) ld->scratch_floats = n;
}

static float *take_floats(loader *ld, size_t count) {
  if (!ld->arena) {
    ld->bytes = rmt_size_add(ld->bytes, rmt_arena_bytes(count, sizeof(float)));
    return NULL;
  }
  return rmt_arena_alloc(ld->arena, rmt_size_mul(count, sizeof(float)));
}

static int32_t *take_ints(loader *ld, size_t count) {
  if (!ld->arena) {
    ld->bytes = rmt_size_add(ld->bytes, rmt_arena_bytes(count, sizeof(int32_t)));
    return NULL;
  }
  return rmt_arena_alloc(ld->arena, rmt_size_mul(count, sizeof(int32_t)));
}

static int8_t *take_bytes(loader *ld, size_t count) {
  if (!ld->arena) {
    ld->bytes = rmt_size_add(ld->bytes, rmt_arena_bytes(count, 1));
    return NULL;
  }
  return rmt_arena_alloc(ld->arena, count);
}

static int arena_exhausted(void) { return rmt_error(RMT_E_STATE, "model arena exhausted (sizing bug)"); }

static rmt_tensor_info *find_checked(loader *ld, const char *name, int rows, int cols, int *err) {
  rmt_tensor_info *info = rmt_safetensors_find(ld->st, name);
  if (!info) {
    *err = rmt_error(RMT_E_FORMAT, "model.safetensors: missing tensor %s", name);
    return NULL;
  }
  int ok = cols ? info->n_dims == 2 && info->shape[0] == rows && info->shape[1] == cols
                : info->n_dims == 1 && info->shape[0] == rows;
  if (!ok) {
    char got[64] = "";
    for (int d = 0; d < info->n_dims; d++) {
      size_t n = strlen(got);
      snprintf(got + n, sizeof got - n, "%s%lld", d ? ", " : "", (long long)info->shape[d]);
    }
    if (cols) *err = rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s has shape [%s], expected [%d, %d]", name, got, rows, cols);
    else *err = rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s has shape [%s], expected [%d]", name, got, rows);
    return NULL;
  }
  info->used = 1;
  return info;
}

// A plain float array (embedding, LN parameter, bias).
static int load_array(loader *ld, float **dst, const char *name, int rows, int cols) {
  int err = RMT_OK;
  rmt_tensor_info *info = find_checked(ld, name, rows, cols, &err);
  if (!info) return err;
  *dst = take_floats(ld, rmt_size_mul((size_t)rows, (size_t)(cols ? cols : 1)));
  if (!ld->arena) return RMT_OK;
  return *dst ? rmt_safetensors_read_f32(ld->st, info, *dst) : arena_exhausted();
}

// Quantizes a float matrix (rows x cols) in place, as models/quantize.py
// (reference.py's quantize_weight) does: per row, scale = max|row| / 127 (1
// for a row of zeros), q = round-half-even(w / scale). The int8 values take the
// first rows * cols bytes of the buffer: byte i overwrites part of float i / 4,
// which is read already (each row's maximum is found before it is written).
static void quantize_matrix(int8_t *q, float *scales, float *w, int rows, int cols) {
  for (int r = 0; r < rows; r++) {
    const float *row = w + (size_t)r * cols;
    float scale = rmt_weight_scale(row, cols, RMT_QMAX_I8);
    for (int c = 0; c < cols; c++) q[(size_t)r * cols + c] = (int8_t)rmt_quantize_weight(row[c], scale, RMT_QMAX_I8);
    scales[r] = scale;
  }
}

// Reads matrix `info` (rows x cols) as int8 with row scales into q / scales:
// an I8 matrix as it is, a float one quantized (ld->quantize).
static int read_int8(loader *ld, const rmt_tensor_info *info, int8_t *q, float *scales, float *scratch, int rows,
                     int cols) {
  if (read_as_bytes(ld, info)) return rmt_safetensors_read_i8(ld->st, info, q, scales);
  int err = rmt_safetensors_read_f32(ld->st, info, scratch);
  if (!err) quantize_matrix(q, scales, scratch, rows, cols);
  return err;
}

// Whether matrix `info` is kept as int8: an I8 matrix (one scale or one per
// row), or any float matrix when loading quantized.
static int is_int8(const loader *ld, const rmt_tensor_info *info) {
  return rmt_safetensors_i8_matrix(ld->st, info) || (ld->quantize && info->dtype != RMT_DTYPE_I8);
}

// An embedding table (V, D): int8 rows with their scales (is_int8), float32 otherwise.
static int load_embedding(loader *ld, rmt_embedding *emb, const char *name, int v, int d, float *scratch) {
  int err = RMT_OK;
  rmt_tensor_info *info = find_checked(ld, name, v, d, &err);
  if (!info) return err;
  if (!is_int8(ld, info) && info->dtype == RMT_DTYPE_F16) {
    emb->f16 = (uint16_t *)take_bytes(ld, rmt_size_mul(rmt_size_mul((size_t)v, (size_t)d), sizeof(uint16_t)));
    if (!ld->arena) return RMT_OK;
    return emb->f16 ? rmt_safetensors_read_f16(ld->st, info, emb->f16) : arena_exhausted();
  }
  if (!is_int8(ld, info)) return load_array(ld, &emb->f32, name, v, d);
  emb->i8 = take_bytes(ld, rmt_size_mul((size_t)v, (size_t)d));
  emb->scale = take_floats(ld, (size_t)v);
  if (!ld->arena) {
    need_scratch(ld, info, (size_t)v, (size_t)d);
    return RMT_OK;
  }
  if (!emb->i8 || !emb->scale) return arena_exhausted();
  err = read_int8(ld, info, (int8_t *)scratch, emb->scale, scratch, v, d);
  if (!err) memcpy(emb->i8, scratch, (size_t)v * d);
  return err;
}

// An int8 Linear weight (is_int8), kept in 8 bits and packed for the int8
// GEMM kernel that its input calls for (kernels.h): 16-bit activations
// (lin->act_qmax set above RMT_QMAX_I8 by the caller: an int8 output
// projection) dot_i16x8's, 8-bit ones the fastest this runtime computes
// exactly. Unpacked in scratch on the way.
static int pack_tensor_i8(loader *ld, rmt_linear *lin, const rmt_tensor_info *info, int n_out, int n_in,
                          float *scratch) {
  if (n_in > RMT_GEMM_I8_MAX_K) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: int8 weights take at most %d inputs, not %d",
                     info->name, RMT_GEMM_I8_MAX_K, n_in);
  }
  if (lin->act_qmax > RMT_QMAX_I8) {
    lin->kr = RMT_GEMM_I8_KR_DOT16, lin->act_offset = 0;
  } else {
    lin->act_qmax = RMT_QMAX_I8;
    lin->kr = rmt_gemm_i8_kr(lin->relu_input);
    lin->act_offset = rmt_gemm_i8_offset(lin->relu_input);
  }
  lin->weight_i8 = take_bytes(ld, rmt_packed_weight_i8_bytes(n_out, n_in, lin->kr));
  lin->weight_scale = take_floats(ld, (size_t)n_out);
  if (lin->act_offset) lin->weight_offset_sum = take_ints(ld, (size_t)n_out);
  if (!ld->arena) {
    if (n_in > ld->int8_max_in) ld->int8_max_in = n_in;
    need_scratch(ld, info, (size_t)n_out, (size_t)n_in);
    return RMT_OK;
  }
  if (!lin->weight_i8 || !lin->weight_scale || (lin->act_offset && !lin->weight_offset_sum)) {
    return arena_exhausted();
  }
  int8_t *unpacked = (int8_t *)scratch;
  int err = read_int8(ld, info, unpacked, lin->weight_scale, scratch, n_out, n_in);
  if (err) return err;
  if (lin->act_offset) rmt_weight_offset_sums(lin->weight_offset_sum, unpacked, n_out, n_in);
  rmt_pack_weight_i8(lin->weight_i8, unpacked, n_out, n_in, lin->kr);
  return RMT_OK;
}

// A Linear weight (n_out, n_in), packed for the GEMM kernel (int8 or float32,
// as stored); the unpacked copy is read into scratch and dropped.
static int pack_tensor(loader *ld, rmt_linear *lin, const rmt_tensor_info *info, int n_out, int n_in, float *scratch) {
  lin->n_out = n_out, lin->n_in = n_in;
  if (is_int8(ld, info)) return pack_tensor_i8(ld, lin, info, n_out, n_in, scratch);
  lin->weight = take_floats(ld, rmt_packed_weight_floats(n_out, n_in));
  if (!ld->arena) {
    need_scratch(ld, info, (size_t)n_out, (size_t)n_in);
    return RMT_OK;
  }
  if (!lin->weight) return arena_exhausted();
  int err = rmt_safetensors_read_f32(ld->st, info, scratch);
  if (!err) rmt_pack_weight(lin->weight, scratch, n_out, n_in);
  return err;
}

static int load_packed(loader *ld, rmt_linear *lin, const char *name, int n_out, int n_in, float *scratch) {
  int err = RMT_OK;
  rmt_tensor_info *info = find_checked(ld, name, n_out, n_in, &err);
  return info ? pack_tensor(ld, lin, info, n_out, n_in, scratch) : err;
}

static int load_linear(loader *ld, rmt_linear *lin, const char *prefix, int n_out, int n_in, float *scratch) {
  char name[RMT_TENSOR_NAME_MAX];
  snprintf(name, sizeof name, "%s.weight", prefix);
  int err = load_packed(ld, lin, name, n_out, n_in, scratch);
  snprintf(name, sizeof name, "%s.bias", prefix);
  return err ? err : load_array(ld, &lin->bias, name, n_out, 0);
}

static int load_norm(loader *ld, rmt_norm *norm, const char *prefix, int d) {
  char name[RMT_TENSOR_NAME_MAX];
  snprintf(name, sizeof name, "%s.weight", prefix);
  int err = load_array(ld, &norm->gamma, name, d, 0);
  snprintf(name, sizeof name, "%s.bias", prefix);
  return err ? err : load_array(ld, &norm->beta, name, d, 0);
}

static int load_attention(loader *ld, rmt_attention *attn, const char *prefix, int d, float *scratch) {
  static const char *parts[] = {"q_proj", "k_proj", "v_proj", "out_proj"};
  rmt_linear *lins[] = {&attn->q_proj, &attn->k_proj, &attn->v_proj, &attn->out_proj};
  char name[RMT_TENSOR_NAME_MAX];
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "%s.%s", prefix, parts[i]);
    int err = load_linear(ld, lins[i], name, d, d, scratch);
    if (err) return err;
  }
  return RMT_OK;
}

static int load_layer(loader *ld, rmt_layer *layer, const char *stack, int index, int is_decoder, float *scratch) {
  char prefix[64], name[RMT_TENSOR_NAME_MAX];
  snprintf(prefix, sizeof prefix, "%s.layers.%d", stack, index);
  int d = layer->fc1.n_in, f = layer->fc1.n_out;  // set by the caller
  int err;
#define TRY(call) \
  if ((err = (call))) return err
  if (is_decoder && ld->ssru) {
    snprintf(name, sizeof name, "%s.ssru.in_proj.weight", prefix);
    TRY(load_packed(ld, &layer->ssru_in, name, d, d, scratch));
    snprintf(name, sizeof name, "%s.ssru.forget_proj", prefix);
    TRY(load_linear(ld, &layer->ssru_forget, name, d, d, scratch));
    snprintf(name, sizeof name, "%s.ssru_layer_norm", prefix);
    TRY(load_norm(ld, &layer->self_attn_norm, name, d));
  } else {
    snprintf(name, sizeof name, "%s.self_attn", prefix);
    TRY(load_attention(ld, &layer->self_attn, name, d, scratch));
    snprintf(name, sizeof name, "%s.self_attn_layer_norm", prefix);
    TRY(load_norm(ld, &layer->self_attn_norm, name, d));
  }
  if (is_decoder) {
    snprintf(name, sizeof name, "%s.encoder_attn", prefix);
    TRY(load_attention(ld, &layer->encoder_attn, name, d, scratch));
    snprintf(name, sizeof name, "%s.encoder_attn_layer_norm", prefix);
    TRY(load_norm(ld, &layer->encoder_attn_norm, name, d));
  }
  snprintf(name, sizeof name, "%s.fc1", prefix);
  TRY(load_linear(ld, &layer->fc1, name, f, d, scratch));
  snprintf(name, sizeof name, "%s.fc2", prefix);
  layer->fc2.relu_input = ld->relu;
  TRY(load_linear(ld, &layer->fc2, name, d, f, scratch));
  snprintf(name, sizeof name, "%s.final_layer_norm", prefix);
  TRY(load_norm(ld, &layer->final_norm, name, d));
#undef TRY
  return RMT_OK;
}

// The sinusoidal table, computed in float32 as torch does: row p is position
// p, [sin(p f_i), cos(p f_i)] with f_i = 10000^(-i / (d/2 - 1)) (fairseq and
// Marian agree on it; fairseq's row pad_id, never used, is zeros; -1: none).
static void fill_positions(float *table, int rows, int d, int pad_id) {
  int half = d / 2;
  float step = (float)(log(10000.0) / (half - 1));
  for (int pos = 0; pos < rows; pos++) {
    float *row = table + (size_t)pos * d;
    for (int i = 0; i < half; i++) {
      float freq = expf((float)i * -step);
      float angle = (float)pos * freq;
      row[i] = pos == pad_id ? 0.0f : sinf(angle);
      row[half + i] = pos == pad_id ? 0.0f : cosf(angle);
    }
    if (d % 2) row[d - 1] = 0.0f;
  }
}

// The lexical shortlist's two index tables: offsets (V + 1), non-decreasing
// from 0 to the length of targets, and targets, each an id below V.
static int load_shortlist(loader *ld, rmt_model *model) {
  int v = model->config.vocab_size, err = RMT_OK;
  rmt_tensor_info *targets = rmt_safetensors_find(ld->st, "shortlist.targets");
  if (!targets || targets->n_dims != 1 || targets->shape[0] > INT32_MAX) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: a model with shortlist_first needs the 1-D I32 or I16 "
                     "tensor shortlist.targets");
  }
  int n = (int)targets->shape[0];
  rmt_tensor_info *offsets = find_checked(ld, "shortlist.offsets", v + 1, 0, &err);
  if (!offsets || !find_checked(ld, "shortlist.targets", n, 0, &err)) return err;
  model->shortlist_offsets = take_ints(ld, (size_t)v + 1);
  model->shortlist_targets = take_ints(ld, (size_t)n);
  if (!ld->arena) return RMT_OK;
  if (!model->shortlist_offsets || !model->shortlist_targets) return arena_exhausted();
  if ((err = rmt_safetensors_read_ints(ld->st, offsets, model->shortlist_offsets, n)) ||
      (err = rmt_safetensors_read_ints(ld->st, targets, model->shortlist_targets, v - 1))) {
    return err;
  }
  const int32_t *o = model->shortlist_offsets;
  for (int i = 0; i < v; i++) {
    if (o[i] > o[i + 1]) {
      return rmt_error(RMT_E_FORMAT, "model.safetensors: shortlist.offsets decreases at element %d", i + 1);
    }
  }
  if (o[0] != 0 || o[v] != n) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: shortlist.offsets must run from 0 to the length of "
                     "shortlist.targets (%d)", n);
  }
  return RMT_OK;
}

// The output projection of a model with "output_layer": "int16": float
// tensor `info` quantized per row to 16 bits and packed (kernels.h
// rmt_quantize_pack_weight_i16), one panel of rows at a time through the
// scratch, so that it is never widened whole. An int8 tensor has lost the
// precision this is for, and is refused.
static int pack_output_i16(loader *ld, rmt_linear *lin, const rmt_tensor_info *info, int v, int d, float *scratch) {
  if (info->dtype == RMT_DTYPE_I8) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s is int8, but config.json's \"output_layer\": "
                     "\"int16\" quantizes a float output projection at load", info->name);
  }
  lin->n_out = v, lin->n_in = d;
  lin->kr = RMT_GEMM_I8_KR_DOT16;
  lin->act_qmax = rmt_qmax_w16(d);
  lin->weight_i16 = (int16_t *)take_bytes(ld, rmt_packed_weight_i16_bytes(v, d));
  lin->weight_scale = take_floats(ld, (size_t)v);
  if (!ld->arena) {
    if (d > ld->int8_max_in) ld->int8_max_in = d;  // its input is quantized in the same scratch
    need_scratch(ld, info, RMT_GEMM_NR, (size_t)d);
    return RMT_OK;
  }
  if (!lin->weight_i16 || !lin->weight_scale) return arena_exhausted();
  size_t panel = (size_t)RMT_GEMM_NR * (size_t)rmt_quantized_row_len(d, RMT_GEMM_I8_KR_DOT16);
  for (int first = 0; first < v; first += RMT_GEMM_NR) {
    int rows = v - first < RMT_GEMM_NR ? v - first : RMT_GEMM_NR;
    int err = rmt_safetensors_read_f32_rows(ld->st, info, (size_t)first, (size_t)rows, scratch);
    if (err) return err;
    rmt_quantize_pack_weight_i16(lin->weight_i16 + (size_t)(first / RMT_GEMM_NR) * panel, lin->weight_scale + first,
                                 scratch, rows, d, lin->act_qmax);
  }
  return RMT_OK;
}

// With shared embeddings the output projection is the embedding itself
// (checked by load_embedding), packed for the GEMM: from the float32 table
// load_embedding has just read, when it has one, rather than read again.
static int pack_shared_output(loader *ld, rmt_model *model, int v, int d, float *scratch) {
  const rmt_tensor_info *info = rmt_safetensors_find(ld->st, "encoder.embed_tokens.weight");
  rmt_linear *lin = &model->output_projection;
  if (model->config.output_int16) return pack_output_i16(ld, lin, info, v, d, scratch);
  if (!ld->arena || !model->embed_tokens.f32) return pack_tensor(ld, lin, info, v, d, scratch);
  lin->n_out = v, lin->n_in = d;
  lin->weight = take_floats(ld, rmt_packed_weight_floats(v, d));
  if (!lin->weight) return arena_exhausted();
  rmt_pack_weight(lin->weight, model->embed_tokens.f32, v, d);
  return RMT_OK;
}

static int load_all(loader *ld, rmt_model *model, float *scratch) {
  const rmt_config *c = &model->config;
  int d = c->d_model, v = c->vocab_size, err;
  // An int8 output layer's input in 16 bits (kernels.h rmt_qmax_i16); "int16"'s: pack_output_i16.
  if (!c->output_int16) model->output_projection.act_qmax = rmt_qmax_i16(d);
  if ((err = load_embedding(ld, &model->embed_tokens, "encoder.embed_tokens.weight", v, d, scratch))) return err;
  if (c->share_embeddings) {
    model->decoder_embed_tokens = model->embed_tokens;
    if ((err = pack_shared_output(ld, model, v, d, scratch))) return err;
  } else {
    if ((err = load_embedding(ld, &model->decoder_embed_tokens, "decoder.embed_tokens.weight", v, d, scratch))) return err;
    const char *name = "decoder.output_projection.weight";
    rmt_tensor_info *info = find_checked(ld, name, v, d, &err);
    if (!info) return err;
    rmt_linear *lin = &model->output_projection;
    err = c->output_int16 ? pack_output_i16(ld, lin, info, v, d, scratch) : pack_tensor(ld, lin, info, v, d, scratch);
    if (err) return err;
  }
  if (c->output_bias && (err = load_array(ld, &model->output_projection.bias, "decoder.output_projection.bias", v, 0))) {
    return err;
  }
  int position_rows = c->max_positions + c->position_offset;  // config.c bounds both
  model->positions = take_floats(ld, rmt_size_mul((size_t)position_rows, (size_t)d));
  if (ld->arena) {
    if (!model->positions) return arena_exhausted();
    fill_positions(model->positions, position_rows, d, c->position_offset ? c->pad_id : -1);
  }

  rmt_layer *stacks[2] = {model->encoder_layers, model->decoder_layers};
  int counts[2] = {c->encoder_layers, c->decoder_layers};
  for (int s = 0; s < 2; s++) {
    for (int i = 0; i < counts[s]; i++) {
      rmt_layer *layer = &stacks[s][i];
      layer->fc1.n_in = d, layer->fc1.n_out = c->ffn_dim;
      if ((err = load_layer(ld, layer, s ? "decoder" : "encoder", i, s, scratch))) return err;
    }
  }
  if (c->shortlist_first >= 0 && (err = load_shortlist(ld, model))) return err;
  if (c->style != RMT_STYLE_POST) {
    if ((err = load_norm(ld, &model->encoder_norm, "encoder.layer_norm", d))) return err;
    if ((err = load_norm(ld, &model->decoder_norm, "decoder.layer_norm", d))) return err;
  }
  return RMT_OK;
}

static rmt_model *load_model(const char *config_json, size_t config_len, const uint8_t *safetensors,
                             size_t safetensors_len, int quantize);

RMT_API rmt_model *rmt_model_load(const char *config_json, size_t config_len, const uint8_t *safetensors,
                                  size_t safetensors_len) {
  return load_model(config_json, config_len, safetensors, safetensors_len, 0);
}

RMT_API rmt_model *rmt_model_load_quantized(const char *config_json, size_t config_len, const uint8_t *safetensors,
                                            size_t safetensors_len) {
  return load_model(config_json, config_len, safetensors, safetensors_len, 1);
}

static rmt_model *load_model(const char *config_json, size_t config_len, const uint8_t *safetensors,
                             size_t safetensors_len, int quantize) {
  rmt_clear_error();
  if (!config_json || !safetensors) {
    rmt_error(RMT_E_INVALID, "rmt_model_load: missing config or weights");
    return NULL;
  }
  rmt_model *model = calloc(1, sizeof *model);
  rmt_safetensors st = {0};
  float *scratch = NULL;
  if (!model) {
    rmt_error(RMT_E_NOMEM, "out of memory");
    return NULL;
  }
  int err = rmt_config_parse(&model->config, config_json, config_len);
  if (!err) err = rmt_safetensors_open(&st, safetensors, safetensors_len);
  if (err) goto fail;
  const rmt_config *c = &model->config;
  model->encoder_layers = calloc((size_t)c->encoder_layers, sizeof(rmt_layer));
  model->decoder_layers = calloc((size_t)c->decoder_layers, sizeof(rmt_layer));
  if (!model->encoder_layers || !model->decoder_layers) {
    err = rmt_error(RMT_E_NOMEM, "out of memory");
    goto fail;
  }
  // Pass 1: check every tensor and count bytes; then reject leftovers.
  loader ld = {&st, NULL, 0, c->ssru, c->activation == RMT_ACT_RELU, quantize, 0, 1};
  if ((err = load_all(&ld, model, NULL))) goto fail;
  model->int8_max_in = ld.int8_max_in;
  for (int i = 0; i < st.n_tensors; i++) {
    if (!st.tensors[i].used) {
      err = rmt_error(RMT_E_FORMAT, "model.safetensors: unknown tensor %s (not part of a %s model with this config)",
                      st.tensors[i].name, c->style == RMT_STYLE_POST ? "post" : c->style == RMT_STYLE_PRE ? "pre" : "residual");
      goto fail;
    }
  }
  // Pass 2: fill the arena. scratch holds one unpacked matrix at a time.
  size_t scratch_bytes = rmt_size_mul(ld.scratch_floats, sizeof(float));
  if (ld.bytes == RMT_SIZE_OVERFLOW || scratch_bytes == RMT_SIZE_OVERFLOW) {
    err = rmt_error(RMT_E_SIZE, "too large: this model needs more memory than %zu-bit sizes can address",
                    8 * sizeof(size_t));
    goto fail;
  }
  scratch = malloc(scratch_bytes);
  if (!scratch) {
    err = rmt_error(RMT_E_NOMEM, "out of memory: cannot allocate %zu bytes of load scratch", scratch_bytes);
    goto fail;
  }
  if ((err = rmt_arena_init(&model->arena, ld.bytes))) goto fail;
  ld.arena = &model->arena;
  if ((err = load_all(&ld, model, scratch))) goto fail;
  free(scratch);
  rmt_safetensors_close(&st);
  return model;
fail:
  free(scratch);
  rmt_safetensors_close(&st);
  rmt_model_free(model);
  return NULL;
}

RMT_API size_t rmt_model_bytes(const rmt_model *model) { return model ? model->arena.used : 0; }

RMT_API void rmt_model_free(rmt_model *model) {
  if (!model) return;
  rmt_arena_free(&model->arena);
  free(model->encoder_layers);
  free(model->decoder_layers);
  free(model);
}
