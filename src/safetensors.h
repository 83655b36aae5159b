// Reading the safetensors format: 8-byte little-endian header length, a JSON
// header {name: {dtype, shape, data_offsets}}, then the raw data.
#ifndef RMT_SAFETENSORS_H
#define RMT_SAFETENSORS_H
#include <stddef.h>
#include <stdint.h>

#define RMT_TENSOR_NAME_MAX 160
#define RMT_TENSOR_DIMS_MAX 4

// I32: index tables. I8: int8 weights with a float32 scale in the companion
// tensor "<name>.qscale" (shape [1]): value = q * scale, widened at load.
typedef enum { RMT_DTYPE_F32, RMT_DTYPE_F16, RMT_DTYPE_BF16, RMT_DTYPE_I32, RMT_DTYPE_I8 } rmt_dtype;

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
// Copies an I32 tensor into dst; RMT_E_FORMAT, naming the tensor, when it is
// not I32 or a value is outside [0, max].
int rmt_safetensors_read_i32(const rmt_safetensors *st, const rmt_tensor_info *info, int32_t *dst, int32_t max);
#endif
