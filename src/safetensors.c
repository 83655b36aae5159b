#include "safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ops.h"
#include "json.h"
#include "size.h"

static size_t dtype_size(rmt_dtype dtype) {
  return dtype == RMT_DTYPE_F32 || dtype == RMT_DTYPE_I32 ? 4 : dtype == RMT_DTYPE_I8 ? 1 : 2;
}

static int parse_tensor(const rmt_json *json, int key, rmt_tensor_info *info, size_t data_size) {
  if (rmt_json_string(json, key, info->name, sizeof info->name)) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor name too long or malformed");
  }
  int obj = key + 1;
  int dtype = rmt_json_find(json, obj, "dtype");
  int shape = rmt_json_find(json, obj, "shape");
  int offsets = rmt_json_find(json, obj, "data_offsets");
  if (dtype < 0 || shape < 0 || offsets < 0 || json->tokens[shape].type != JSMN_ARRAY ||
      json->tokens[offsets].type != JSMN_ARRAY || json->tokens[offsets].size != 2) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: header entry needs dtype, shape and data_offsets",
                     info->name);
  }
  if (rmt_json_equals(json, dtype, "F32")) info->dtype = RMT_DTYPE_F32;
  else if (rmt_json_equals(json, dtype, "F16")) info->dtype = RMT_DTYPE_F16;
  else if (rmt_json_equals(json, dtype, "BF16")) info->dtype = RMT_DTYPE_BF16;
  else if (rmt_json_equals(json, dtype, "I32")) info->dtype = RMT_DTYPE_I32;
  else if (rmt_json_equals(json, dtype, "I16")) info->dtype = RMT_DTYPE_I16;
  else if (rmt_json_equals(json, dtype, "I8")) info->dtype = RMT_DTYPE_I8;
  else {
    char name[16] = "?";
    rmt_json_string(json, dtype, name, sizeof name);
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: unsupported dtype %s (F32, F16, BF16, I8 with a scale, or I32 / I16 for index tables)",
                     info->name, name);
  }
  info->n_dims = json->tokens[shape].size;
  if (info->n_dims > RMT_TENSOR_DIMS_MAX) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: too many dimensions", info->name);
  }
  size_t numel = 1;
  for (int d = 0; d < info->n_dims; d++) {
    uint64_t dim;
    if (rmt_json_uint(json, shape + 1 + d, (uint64_t)1 << 30, &dim)) {
      return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: bad shape (dimensions are integers up to 2^30)",
                       info->name);
    }
    info->shape[d] = (int64_t)dim;
    numel = rmt_size_mul(numel, (size_t)dim);
  }
  uint64_t begin, end;
  if (rmt_json_uint(json, offsets + 1, UINT64_MAX, &begin) || rmt_json_uint(json, offsets + 2, UINT64_MAX, &end) ||
      end < begin) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: bad data_offsets (two integers, begin <= end)",
                     info->name);
  }
  if (end > (uint64_t)data_size) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: data ends at byte %llu, beyond the data (%zu bytes; "
                     "is the file truncated?)", info->name, (unsigned long long)end, data_size);
  }
  info->offset = (size_t)begin;
  info->bytes = (size_t)(end - begin);
  // A saturated size (size.h) never equals a real byte count.
  if (info->bytes != rmt_size_mul(numel, dtype_size(info->dtype))) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: %zu data bytes do not match its shape and dtype",
                     info->name, info->bytes);
  }
  if (info->offset % dtype_size(info->dtype)) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: data offset %zu is not a multiple of its element size",
                     info->name, info->offset);
  }
  return RMT_OK;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const rmt_tensor_info *)a)->name, ((const rmt_tensor_info *)b)->name);
}

static int by_offset(const void *a, const void *b) {
  const rmt_tensor_info *x = *(const rmt_tensor_info *const *)a, *y = *(const rmt_tensor_info *const *)b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

// Two tensors must not share bytes (one write would change both).
static int check_overlaps(const rmt_safetensors *st) {
  const rmt_tensor_info **order = calloc((size_t)st->n_tensors + 1, sizeof *order);
  if (!order) return rmt_error(RMT_E_NOMEM, "model.safetensors: out of memory");
  int n = 0;
  for (int i = 0; i < st->n_tensors; i++) {
    if (st->tensors[i].bytes) order[n++] = &st->tensors[i];
  }
  qsort(order, (size_t)n, sizeof *order, by_offset);
  int err = RMT_OK;
  for (int i = 1; i < n && !err; i++) {
    if (order[i]->offset < order[i - 1]->offset + order[i - 1]->bytes) {
      err = rmt_error(RMT_E_FORMAT, "model.safetensors: tensors %s and %s overlap in the data", order[i - 1]->name,
                      order[i]->name);
    }
  }
  free(order);
  return err;
}

// The scale tensor "<name>.qscale" of an I8 tensor, or NULL.
static rmt_tensor_info *find_scale(const rmt_safetensors *st, const rmt_tensor_info *info) {
  char name[RMT_TENSOR_NAME_MAX + 8];
  snprintf(name, sizeof name, "%s.qscale", info->name);
  return strlen(name) < RMT_TENSOR_NAME_MAX ? rmt_safetensors_find(st, name) : NULL;
}

int rmt_safetensors_open(rmt_safetensors *st, const uint8_t *bytes, size_t size) {
  memset(st, 0, sizeof *st);
  if (size < 8) return rmt_error(RMT_E_FORMAT, "model.safetensors: file too short (%zu bytes)", size);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; i--) header_len = header_len << 8 | bytes[i];
  if (header_len > size - 8) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: header length %llu is beyond the file size %zu (truncated?)",
                     (unsigned long long)header_len, size);
  }
  rmt_json json;
  int err = rmt_json_parse(&json, (const char *)bytes + 8, (size_t)header_len, "model.safetensors header");
  if (err) return err;
  st->data = bytes + 8 + header_len;
  st->data_size = size - 8 - (size_t)header_len;
  st->tensors = calloc((size_t)json.tokens[0].size + 1, sizeof(rmt_tensor_info));
  if (!st->tensors) {
    rmt_json_free(&json);
    return rmt_error(RMT_E_NOMEM, "model.safetensors: out of memory");
  }
  // rmt_json_parse checked the structure (every key has a value) and that keys are unique.
  int key = 1;
  for (int k = 0; k < json.tokens[0].size && !err; k++, key = rmt_json_skip(&json, key + 1)) {
    if (rmt_json_equals(&json, key, "__metadata__")) continue;
    if (json.tokens[key + 1].type != JSMN_OBJECT) {
      err = rmt_error(RMT_E_FORMAT, "model.safetensors: header entries must be objects");
      break;
    }
    err = parse_tensor(&json, key, &st->tensors[st->n_tensors], st->data_size);
    if (!err) st->n_tensors++;
  }
  rmt_json_free(&json);
  // Sorted by name for rmt_safetensors_find; names are unique (unique keys).
  if (!err) qsort(st->tensors, (size_t)st->n_tensors, sizeof *st->tensors, by_name);
  if (!err) err = check_overlaps(st);
  // An I8 tensor's scale belongs to it: counted as used (the I8 tensor itself is
  // still reported if the model has no place for it); its values are checked when read.
  for (int i = 0; !err && i < st->n_tensors; i++) {
    const rmt_tensor_info *info = &st->tensors[i];
    if (info->dtype != RMT_DTYPE_I8) continue;
    rmt_tensor_info *scale = find_scale(st, info);
    size_t rows = info->n_dims == 2 ? (size_t)info->shape[0] : 1;
    if (!scale || scale->dtype != RMT_DTYPE_F32 || (scale->bytes != 4 && scale->bytes != 4 * rows)) {
      err = rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s is I8 and needs an F32 scale %s.qscale of one value "
                      "(or, for a matrix, one per row)", info->name, info->name);
    } else {
      scale->used = 1;
    }
  }
  if (err) rmt_safetensors_close(st);
  return err;
}

void rmt_safetensors_close(rmt_safetensors *st) {
  free(st->tensors);
  st->tensors = NULL;
  st->n_tensors = 0;
}

rmt_tensor_info *rmt_safetensors_find(const rmt_safetensors *st, const char *name) {
  rmt_tensor_info key;
  snprintf(key.name, sizeof key.name, "%s", name);
  return st->n_tensors ? bsearch(&key, st->tensors, (size_t)st->n_tensors, sizeof key, by_name) : NULL;
}

// The number of scales of I8 tensor `info` (one, or one per row of its
// `rows`), 0 when its .qscale is neither; scale_at reads scale i, checked.
static size_t scale_count(const rmt_safetensors *st, const rmt_tensor_info *info, size_t rows) {
  const rmt_tensor_info *scale_info = find_scale(st, info);
  size_t count = scale_info && scale_info->dtype == RMT_DTYPE_F32 ? scale_info->bytes / 4 : 0;
  return count == 1 || count == rows ? count : 0;
}

int rmt_safetensors_i8_matrix(const rmt_safetensors *st, const rmt_tensor_info *info) {
  if (info->dtype != RMT_DTYPE_I8 || info->n_dims != 2) return 0;
  return scale_count(st, info, (size_t)info->shape[0]) != 0;
}

// scale_info: find_scale's answer, looked up once for all of a tensor's rows.
static int scale_at(const rmt_safetensors *st, const rmt_tensor_info *info, const rmt_tensor_info *scale_info, size_t i,
                    float *scale) {
  *scale = 0.0f;
  if (scale_info) memcpy(scale, st->data + scale_info->offset + 4 * i, 4);  // the data may be unaligned
  if (*scale > 0.0f && isfinite(*scale)) return RMT_OK;
  return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: its scale %s.qscale must be positive numbers, one or "
                   "one per row", info->name, info->name);
}

int rmt_safetensors_read_i8(const rmt_safetensors *st, const rmt_tensor_info *info, int8_t *dst, float *row_scales) {
  if (!rmt_safetensors_i8_matrix(st, info)) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s must be an I8 matrix with one scale or one per row",
                     info->name);
  }
  const rmt_tensor_info *scale_info = find_scale(st, info);
  size_t rows = (size_t)info->shape[0], count = scale_count(st, info, rows);
  for (size_t r = 0; r < rows; r++) {  // one scale (Marian's intgemm8): every row's
    int err = scale_at(st, info, scale_info, count == 1 ? 0 : r, &row_scales[r]);
    if (err) return err;
  }
  memcpy(dst, st->data + info->offset, info->bytes);
  return RMT_OK;
}

// A NaN or Inf weight makes every translation through it NaN: refused at
// load, where the message can name the tensor (a scan of a few ms).
static int nonfinite_error(const rmt_tensor_info *info, size_t element, int nan) {
  return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s has a non-finite value (%s) at element %zu", info->name,
                   nan ? "NaN" : "Inf", element);
}

// A float tensor's values first .. first + n - 1 (element indices) widened
// into dst, and refused, naming the element, when one is not finite.
static int widen_floats(const rmt_tensor_info *info, const uint8_t *src, size_t first, size_t n, float *dst) {
  src += first * dtype_size(info->dtype);
  if (info->dtype == RMT_DTYPE_F32) {
    memcpy(dst, src, n * 4);  // the data may be unaligned; memcpy is safe
  } else if (info->dtype == RMT_DTYPE_F16) {
    rmt_f16_to_f32(dst, src, n);
  } else {  // bfloat16: the top half of a float
    for (size_t i = 0; i < n; i++) {
      uint32_t bits = (uint32_t)(src[2 * i] | src[2 * i + 1] << 8) << 16;
      memcpy(&dst[i], &bits, 4);
    }
  }
  size_t bad = rmt_first_nonfinite_f32(dst, n);
  return bad < n ? nonfinite_error(info, first + bad, isnan(dst[bad])) : RMT_OK;
}

int rmt_safetensors_read_f32(const rmt_safetensors *st, const rmt_tensor_info *info, float *dst) {
  if (info->dtype == RMT_DTYPE_I32 || info->dtype == RMT_DTYPE_I16) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s is %s, expected a float dtype", info->name,
                     info->dtype == RMT_DTYPE_I32 ? "I32" : "I16");
  }
  const uint8_t *src = st->data + info->offset;
  size_t n = info->bytes / dtype_size(info->dtype);
  if (info->dtype != RMT_DTYPE_I8) return widen_floats(info, src, 0, n, dst);
  size_t rows = info->n_dims == 2 ? (size_t)info->shape[0] : 1, cols = rows ? n / rows : 0;
  size_t count = scale_count(st, info, rows);
  if (!count) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: %s.qscale must hold one scale or one per row",
                     info->name, info->name);
  }
  // q * scale in float32: a Marian intgemm8 weight exactly as Marian dequantises it.
  const rmt_tensor_info *scale_info = find_scale(st, info);
  for (size_t r = 0; r < rows; r++) {
    float scale;
    int err = scale_at(st, info, scale_info, count == 1 ? 0 : r, &scale);
    if (err) return err;
    for (size_t c = 0; c < cols; c++) dst[r * cols + c] = (float)(int8_t)src[r * cols + c] * scale;
  }
  size_t bad = rmt_first_nonfinite_f32(dst, n);
  return bad < n ? nonfinite_error(info, bad, isnan(dst[bad])) : RMT_OK;
}

int rmt_safetensors_read_f32_rows(const rmt_safetensors *st, const rmt_tensor_info *info, size_t first, size_t count,
                                  float *dst) {
  if (info->dtype != RMT_DTYPE_F32 && info->dtype != RMT_DTYPE_F16 && info->dtype != RMT_DTYPE_BF16) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: expected F32, F16 or BF16", info->name);
  }
  size_t cols = info->n_dims == 2 ? (size_t)info->shape[1] : 1;  // rows within shape[0]: the caller's
  return widen_floats(info, st->data + info->offset, first * cols, count * cols, dst);
}

int rmt_safetensors_read_f16(const rmt_safetensors *st, const rmt_tensor_info *info, uint16_t *dst) {
  if (info->dtype != RMT_DTYPE_F16) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: expected F16", info->name);
  }
  const uint8_t *src = st->data + info->offset;
  size_t n = info->bytes / 2, bad = rmt_first_nonfinite_f16(src, n);
  if (bad < n) return nonfinite_error(info, bad, (src[2 * bad] | (src[2 * bad + 1] & 0x03)) != 0);
  memcpy(dst, src, info->bytes);
  return RMT_OK;
}

int rmt_safetensors_read_ints(const rmt_safetensors *st, const rmt_tensor_info *info, int32_t *dst, int32_t max) {
  int wide = info->dtype == RMT_DTYPE_I32;
  if (!wide && info->dtype != RMT_DTYPE_I16) {
    return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s must be I32 or I16", info->name);
  }
  const uint8_t *src = st->data + info->offset;
  size_t width = wide ? 4 : 2, n = info->bytes / width;
  for (size_t i = 0; i < n; i++, src += width) {
    uint32_t u = (uint32_t)src[0] | (uint32_t)src[1] << 8;
    if (wide) u |= (uint32_t)src[2] << 16 | (uint32_t)src[3] << 24;
    int32_t value = wide ? (int32_t)u : (int16_t)u;  // little-endian, two's complement
    if (value < 0 || value > max) {
      return rmt_error(RMT_E_FORMAT, "model.safetensors: tensor %s: element %zu is %ld, outside [0, %d]", info->name,
                       i, (long)value, (int)max);
    }
    dst[i] = value;
  }
  return RMT_OK;
}
