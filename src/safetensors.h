// Reading the safetensors format: 8-byte little-endian header length, a JSON
// header {name: {dtype, shape, data_offsets}}, then the raw data.
#ifndef RMT_SAFETENSORS_H
#define RMT_SAFETENSORS_H
#include <stddef.h>
#include <stdint.h>

#define RMT_TENSOR_NAME_MAX 160
#define RMT_TENSOR_DIMS_MAX 4

// I32 (or I16, half the bytes): index tables. I8: int8 weights with float32 scales in the companion
// tensor "<name>.qscale": one (shape [1], Marian's intgemm8: value = q * scale),
// or for a matrix one per row (shape [rows]: value = q * scale[row];
// models/quantize.py's per-output-channel weights). The model keeps an I8
// matrix as int8 either way, one scale becoming every row's (rmt_safetensors_i8_matrix).
typedef enum { RMT_DTYPE_F32, RMT_DTYPE_F16, RMT_DTYPE_BF16, RMT_DTYPE_I32, RMT_DTYPE_I16, RMT_DTYPE_I8 } rmt_dtype;

typedef struct {
  char name[RMT_TENSOR_NAME_MAX];
  rmt_dtype dtype;
  int n_dims;
  int64_t shape[RMT_TENSOR_DIMS_MAX];
  size_t offset;  // into the data section
  size_t bytes;
  int used;       // set by the model loader, so leftovers can be reported
} rmt_tensor_info;

typedef struct {
  const uint8_t *data;  // start of the data section (borrowed)
  size_t data_size;
  rmt_tensor_info *tensors;  // malloc'd, sorted by name
  int n_tensors;
} rmt_safetensors;

// Parses and checks the header (every tensor's dtype, shape and byte range:
// inside the data, aligned to its element size, not overlapping another).
int rmt_safetensors_open(rmt_safetensors *st, const uint8_t *bytes, size_t size);
void rmt_safetensors_close(rmt_safetensors *st);
rmt_tensor_info *rmt_safetensors_find(const rmt_safetensors *st, const char *name);
// Copies a tensor into dst as float32 (widening F16 / BF16, scaling I8, whose
// .qscale tensor it marks used); RMT_E_FORMAT, naming the tensor, when a value
// is NaN or infinite, the tensor is I32, or an I8 tensor's scale is missing or
// not a positive number.
int rmt_safetensors_read_f32(const rmt_safetensors *st, const rmt_tensor_info *info, float *dst);
// The same for rows first .. first + count - 1 of a float (F32, F16, BF16)
// matrix, which the caller keeps within its shape.
int rmt_safetensors_read_f32_rows(const rmt_safetensors *st, const rmt_tensor_info *info, size_t first, size_t count,
                                  float *dst);
// Copies an F16 tensor into dst as it is (its 16-bit values); RMT_E_FORMAT, as
// above, when it is not F16 or a value is NaN or infinite.
int rmt_safetensors_read_f16(const rmt_safetensors *st, const rmt_tensor_info *info, uint16_t *dst);
// 1 when the tensor is an I8 matrix with one scale or one scale per row.
int rmt_safetensors_i8_matrix(const rmt_safetensors *st, const rmt_tensor_info *info);
// Copies such a tensor's int8 values into dst and its scale of each row into
// row_scales (one scale: every row's); RMT_E_FORMAT when it is not one or a
// scale is not a positive number.
int rmt_safetensors_read_i8(const rmt_safetensors *st, const rmt_tensor_info *info, int8_t *dst, float *row_scales);
// Copies an index tensor (I32 or I16) into dst as int32; RMT_E_FORMAT, naming
// the tensor, when it is neither or a value is outside [0, max].
int rmt_safetensors_read_ints(const rmt_safetensors *st, const rmt_tensor_info *info, int32_t *dst, int32_t max);
#endif
