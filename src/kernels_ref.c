// Plain C reference kernels: the math, written as directly as possible. The
// SIMD kernels in kernels_wasmsimd.c are tested against these.
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

void rmt_gemm_f32__ref(float *C, const float *A, const float *weight, const float *bias, int M, int N, int K) {
  for (int m = 0; m < M; m++) {
    for (int n = 0; n < N; n++) {
      float sum = 0.0f;
      for (int k = 0; k < K; k++) sum += A[(size_t)m * K + k] * weight[(size_t)n * K + k];
      C[(size_t)m * N + n] = sum + (bias ? bias[n] : 0.0f);
    }
  }
}

void rmt_layer_norm_f32__ref(float *out, const float *x, const float *gamma, const float *beta,
                             int M, int D, float eps) {
  for (int m = 0; m < M; m++) {
    const float *row = x + (size_t)m * D;
    float *dst = out + (size_t)m * D;
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < D; i++) mean += row[i];
    mean /= D;
    for (int i = 0; i < D; i++) var += (row[i] - mean) * (row[i] - mean);
    var /= D;
    float inv_std = (float)(1.0 / sqrt(var + eps));
    for (int i = 0; i < D; i++) dst[i] = (float)(row[i] - mean) * inv_std * gamma[i] + beta[i];
  }
}

void rmt_relu_f32__ref(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void rmt_swish_f32__ref(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] *= 1.0f / (1.0f + expf(-x[i]));
}

void rmt_ssru_cell_f32__ref(float *cell, float *out, const float *prev, const float *xw, const float *gate, int n) {
  for (int i = 0; i < n; i++) {
    float f = 1.0f / (1.0f + expf(-gate[i]));
    cell[i] = (prev ? f * prev[i] : 0.0f) + (1.0f - f) * xw[i];
    out[i] = cell[i] > 0.0f ? cell[i] : 0.0f;
  }
}

size_t rmt_first_nonfinite_f32__ref(const float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) return i;
  }
  return n;
}

size_t rmt_first_nonfinite_f16__ref(const unsigned char *src, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if ((src[2 * i + 1] & 0x7c) == 0x7c) return i;  // exponent all ones: Inf or NaN
  }
  return n;
}

void rmt_f16_to_f32__ref(float *out, const unsigned char *src, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t h = (uint32_t)src[2 * i] | (uint32_t)src[2 * i + 1] << 8;
    uint32_t sign = (h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
    if (exponent == 0x1f) {
      bits = sign | 0x7f800000u | mantissa << 13;  // inf / nan
    } else if (exponent) {
      bits = sign | (exponent + 112) << 23 | mantissa << 13;
    } else if (mantissa) {  // subnormal: normalise
      exponent = 113;
      while (!(mantissa & 0x400)) mantissa <<= 1, exponent--;
      bits = sign | exponent << 23 | (mantissa & 0x3ff) << 13;
    } else {
      bits = sign;
    }
    memcpy(&out[i], &bits, 4);
  }
}

void rmt_add_scaled_f32__ref(float *out, const float *a, const float *b, float scale, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i] * scale;
}

void rmt_softmax_f32__ref(float *x, int n) {
  float max = -INFINITY;
  for (int i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
  float sum = 0.0f;
  for (int i = 0; i < n; i++) {
    x[i] = expf(x[i] - max);
    sum += x[i];
  }
  float inv = 1.0f / sum;
  for (int i = 0; i < n; i++) {
    x[i] *= inv;
    if (x[i] < FLT_MIN) x[i] = 0.0f;  // kernels.h: a subnormal weight is 0
  }
}

void rmt_log_softmax_f32__ref(float *out, const float *x, int n) {
  float max = -INFINITY;
  for (int i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
  double sum = 0.0;
  for (int i = 0; i < n; i++) sum += expf(x[i] - max);
  float log_sum = (float)log(sum);
  for (int i = 0; i < n; i++) out[i] = x[i] - max - log_sum;
}

// probs (T, heads averaged) += this head's weights / H; the first head sets it.
static void add_head_probs(float *probs, const float *scores, int h, int T, int H) {
  if (!probs) return;
  float w = 1.0f / (float)H;
  for (int t = 0; t < T; t++) probs[t] = (h ? probs[t] : 0.0f) + scores[t] * w;
}

void rmt_attention_row_f32__ref(float *out, float *probs, const float *q, const float *const *keys,
                                const float *const *values, int T, int H, int E, float *scores) {
  for (int h = 0; h < H; h++) {
    const float *q_h = q + h * E;
    for (int t = 0; t < T; t++) {
      float dot = 0.0f;
      for (int e = 0; e < E; e++) dot += q_h[e] * keys[t][h * E + e];
      scores[t] = dot;
    }
    rmt_softmax_f32__ref(scores, T);
    add_head_probs(probs, scores, h, T, H);
    for (int e = 0; e < E; e++) {
      float sum = 0.0f;
      for (int t = 0; t < T; t++) sum += scores[t] * values[t][h * E + e];
      out[h * E + e] = sum;
    }
  }
}

void rmt_quantize_row__ref(int32_t *q, float *a_scale, const float *x, int K, int qmax) {
  float amax = 0.0f;
  for (int k = 0; k < K; k++) amax = fabsf(x[k]) > amax ? fabsf(x[k]) : amax;
  float inv = amax > 0.0f ? (float)qmax / amax : 0.0f;
  for (int k = 0; k < K; k++) q[k] = rmt_round_clamp(x[k] * inv, -qmax, qmax);
  *a_scale = amax / (float)qmax;
}

void rmt_gemm_i8__ref(float *C, const int32_t *Aq, const float *a_scale, const int8_t *weight, const float *w_scale,
                      const float *bias, int M, int N, int K) {
  for (int m = 0; m < M; m++) {
    for (int n = 0; n < N; n++) {
      int32_t sum = 0;
      for (int k = 0; k < K; k++) sum += Aq[(size_t)m * K + k] * weight[(size_t)n * K + k];
      C[(size_t)m * N + n] = (float)sum * a_scale[m] * w_scale[n] + (bias ? bias[n] : 0.0f);
    }
  }
}

void rmt_attention_rows_f32__ref(float *out, const float *q, int n, int D, const float *const *keys,
                                 const float *const *values, int T, int H, int E, float *scores) {
  for (int r = 0; r < n; r++) {
    rmt_attention_row_f32__ref(out + (size_t)r * D, NULL, q + (size_t)r * D, keys, values, T, H, E, scores);
  }
}
