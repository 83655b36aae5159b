// int8 GEMM kernels (kernels.h): activations quantized per row on the fly,
// int8 weights packed at load, exact int32 sums, a float32 epilogue. Two
// inner products, one per build:
//   __wasmsimd    i32x4.dot_i16x8_s over pairs of k: activations stored as
//                 int16, int8 weights widened to int16 as they are loaded
//                 (16-bit weights, an "int16" output layer's, as stored);
//   __wasmrelaxed i32x4.relaxed_dot_i8x16_i7x16_add_s (rmt_i32x4_dot_i8x16_u8x16_add,
//                 simd.h): weights int8, activations as bytes, groups of 4 k:
//                 q (0..127) for inputs >= 0, q + 128 for any input where the
//                 runtime multiplies such bytes exactly (the sums then less
//                 128 times each feature's weight sum).
// Each mirrors rmt_gemm_i8__ref / rmt_quantize_row__ref (kernels_ref.c), bit for bit.
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "simd.h"
#include "size.h"

// Two iterations of a loop written as one by clang (the wasm builds); other
// compilers (gcc for the native tests) unroll as they see fit.
#ifdef __clang__
#define UNROLL_2 _Pragma("clang loop unroll_count(2)")
#else
#define UNROLL_2
#endif

// ---------------------------------------------------------------- packing

int rmt_relaxed_dot_exact(void) {
  // Inputs the compiler cannot fold: weights -127..127, activations 0..127.
  volatile int8_t seed = 1;
  int8_t a[16], b[16];
  for (int i = 0; i < 16; i++) a[i] = (int8_t)(seed * (i * 17 % 255 - 127)), b[i] = (int8_t)(seed * (i * 9 % 128));
  int32_t got[4];
  wasm_v128_store(got, rmt_i32x4_dot_i8x16_u8x16_add(wasm_v128_load(a), wasm_v128_load(b), wasm_i32x4_splat(seed * 7)));
  for (int lane = 0; lane < 4; lane++) {
    int32_t want = 7;
    for (int j = 0; j < 4; j++) want += a[4 * lane + j] * b[4 * lane + j];
    if (got[lane] != want) return 0;
  }
  return 1;
}

// The extremes where a lowering without VNNI (pmaddubsw's int16 pair sums:
// 2 * 255 * 127 saturates) or one reading bytes as signed (Arm's sdot) goes
// wrong, and a spread of values, each against its exact sum.
int rmt_relaxed_dot_u8_exact(void) {
  if (!RMT_HAVE_RELAXED_DOT) return 0;
  volatile int seed = 1;
  for (int round = 0; round < 4; round++) {
    int8_t a[16];
    uint8_t b[16];
    for (int i = 0; i < 16; i++) {
      int spread = round == 3;
      a[i] = (int8_t)(seed * (spread ? i * 37 % 255 - 127 : round == 1 ? -127 : 127));
      b[i] = (uint8_t)(seed * (spread ? 128 + i * 29 % 128 : round == 2 ? 128 : 255));
    }
    int32_t got[4];
    wasm_v128_store(got, rmt_i32x4_dot_i8x16_u8x16_add(wasm_v128_load(a), wasm_v128_load(b), wasm_i32x4_splat(seed * -5)));
    for (int lane = 0; lane < 4; lane++) {
      int32_t want = -5;
      for (int j = 0; j < 4; j++) want += a[4 * lane + j] * b[4 * lane + j];
      if (got[lane] != want) return 0;
    }
  }
  return 1;
}

int rmt_gemm_i8_kr(int input_nonnegative) {
  int relaxed = RMT_HAVE_RELAXED_DOT &&
                ((input_nonnegative && rmt_relaxed_dot_exact()) || rmt_relaxed_dot_u8_exact());
  return relaxed ? RMT_GEMM_I8_KR_RELAXED : RMT_GEMM_I8_KR_DOT16;
}

int rmt_gemm_i8_offset(int input_nonnegative) {
  return rmt_gemm_i8_kr(input_nonnegative) == RMT_GEMM_I8_KR_RELAXED && !input_nonnegative ? RMT_RELAXED_ACT_OFFSET : 0;
}

// 128 * sum_k w[n][k] by rows, 16 weights a step (pairwise widening adds: exact).
void rmt_weight_offset_sums(int32_t *sums, const int8_t *weight, int N, int K) {
  int K16 = K & ~15;
  for (int n = 0; n < N; n++) {
    const int8_t *row = weight + (size_t)n * K;
    v128_t acc = wasm_i32x4_splat(0);
    for (int k = 0; k < K16; k += 16) {
      acc = wasm_i32x4_add(acc, wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_extadd_pairwise_i8x16(wasm_v128_load(row + k))));
    }
    int32_t sum = wasm_i32x4_extract_lane(acc, 0) + wasm_i32x4_extract_lane(acc, 1) + wasm_i32x4_extract_lane(acc, 2) +
                  wasm_i32x4_extract_lane(acc, 3);
    for (int k = K16; k < K; k++) sum += row[k];
    sums[n] = RMT_RELAXED_ACT_OFFSET * sum;
  }
}

int rmt_qmax_i16(int K) {
  int64_t fits = INT32_MAX / ((int64_t)RMT_QMAX_I8 * (K > 0 ? K : 1));
  return fits < RMT_QMAX_I16 ? (int)fits : RMT_QMAX_I16;
}

int rmt_qmax_w16(int K) {
  int64_t limit = INT32_MAX / (K > 0 ? K : 1), q = (int64_t)sqrt((double)limit);
  while (q * q > limit) q--;  // exact whatever sqrt rounds to
  while ((q + 1) * (q + 1) <= limit) q++;
  return q < RMT_QMAX_I16 ? (int)q : RMT_QMAX_I16;
}

int rmt_quantized_row_len(int K, int kr) { return (K + kr - 1) / kr * kr; }

int16_t *rmt_quantized_row(int16_t *Aq, int m, int K, int kr) {
  size_t offset = (size_t)m * rmt_quantized_row_len(K, kr);
  return kr == RMT_GEMM_I8_KR_RELAXED ? (int16_t *)((uint8_t *)Aq + offset) : Aq + offset;
}

size_t rmt_packed_weight_i8_bytes(int N, int K, int kr) {
  return rmt_size_mul((size_t)rmt_gemm_panels(N) * RMT_GEMM_NR, (size_t)rmt_quantized_row_len(K, kr));  // saturates (size.h)
}

// Panel p's k groups k0 in [k_from, k_to), byte by byte: rows past N and
// columns past K are zeros.
static void pack_groups_bytes(int8_t *panel, const int8_t *weight, int p, int k_from, int k_to, int N, int K, int kr) {
  for (int k0 = k_from; k0 < k_to; k0 += kr) {
    for (int j = 0; j < RMT_GEMM_NR; j++) {
      for (int i = 0; i < kr; i++) {
        int n = p * RMT_GEMM_NR + j, k = k0 + i;
        panel[(size_t)k0 * RMT_GEMM_NR + j * kr + i] = n < N && k < K ? weight[(size_t)n * K + k] : 0;
      }
    }
  }
}

// The same for a panel of RMT_GEMM_NR whole rows and groups that lie inside
// them (k_to <= K): each row's group of kr bytes moves as one 2- or 4-byte
// unit (the two k groups there are), which the model's load does for every
// int8 weight.
static void pack_groups_whole(int8_t *panel, const int8_t *rows, int k_to, int K, int kr) {
  int k0 = 0;
  // 16 bytes of each row at a time, an 8 x 8 (kr 2) or two 4 x 4 (kr 4)
  // transposes of the units: the load runs this over every int8 weight in
  // baseline code, where one unit at a time is slow.
  for (; k0 + 16 <= k_to; k0 += 16) {
    v128_t r[RMT_GEMM_NR], out[RMT_GEMM_NR];  // out: the 16 / kr groups, 8 rows of kr bytes each
    for (int j = 0; j < RMT_GEMM_NR; j++) r[j] = wasm_v128_load(rows + (size_t)j * K + k0);
    if (kr == 2) {
      v128_t a[8], b[8];
      for (int j = 0; j < 8; j += 2) {  // rows j, j + 1 by 16-bit unit: groups 0-3, 4-7
        a[j] = wasm_i16x8_shuffle(r[j], r[j + 1], 0, 8, 1, 9, 2, 10, 3, 11);
        a[j + 1] = wasm_i16x8_shuffle(r[j], r[j + 1], 4, 12, 5, 13, 6, 14, 7, 15);
      }
      for (int h = 0; h < 8; h += 4) {  // row pairs (h, h + 2) by 32 bits: groups 0-1, 2-3, 4-5, 6-7
        b[h] = wasm_i32x4_shuffle(a[h], a[h + 2], 0, 4, 1, 5);
        b[h + 1] = wasm_i32x4_shuffle(a[h], a[h + 2], 2, 6, 3, 7);
        b[h + 2] = wasm_i32x4_shuffle(a[h + 1], a[h + 3], 0, 4, 1, 5);
        b[h + 3] = wasm_i32x4_shuffle(a[h + 1], a[h + 3], 2, 6, 3, 7);
      }
      for (int g = 0; g < 8; g += 2) {  // rows 0-3 and 4-7 of groups g, g + 1
        out[g] = wasm_i64x2_shuffle(b[g / 2], b[4 + g / 2], 0, 2);
        out[g + 1] = wasm_i64x2_shuffle(b[g / 2], b[4 + g / 2], 1, 3);
      }
    } else {
      for (int h = 0; h < 8; h += 4) {  // rows h..h+3 of groups 0-3, halves h / 4 of out
        v128_t t0 = wasm_i32x4_shuffle(r[h], r[h + 1], 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(r[h], r[h + 1], 2, 6, 3, 7);
        v128_t t2 = wasm_i32x4_shuffle(r[h + 2], r[h + 3], 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(r[h + 2], r[h + 3], 2, 6, 3, 7);
        out[0 + h / 4] = wasm_i64x2_shuffle(t0, t2, 0, 2);
        out[2 + h / 4] = wasm_i64x2_shuffle(t0, t2, 1, 3);
        out[4 + h / 4] = wasm_i64x2_shuffle(t1, t3, 0, 2);
        out[6 + h / 4] = wasm_i64x2_shuffle(t1, t3, 1, 3);
      }
    }
    for (int i = 0; i < 8; i++) wasm_v128_store(panel + (size_t)k0 * RMT_GEMM_NR + 16 * i, out[i]);
  }
  for (; k0 < k_to; k0 += kr) {
    int8_t *dst = panel + (size_t)k0 * RMT_GEMM_NR;
    const int8_t *src = rows + k0;
    for (int j = 0; j < RMT_GEMM_NR; j++, dst += kr, src += K) {
      if (kr == 2) {
        uint16_t unit;
        memcpy(&unit, src, sizeof unit);
        memcpy(dst, &unit, sizeof unit);
      } else {
        uint32_t unit;
        memcpy(&unit, src, sizeof unit);
        memcpy(dst, &unit, sizeof unit);
      }
    }
  }
}

void rmt_pack_weight_i8(int8_t *packed, const int8_t *weight, int N, int K, int kr) {
  int panels = rmt_gemm_panels(N), Kp = rmt_quantized_row_len(K, kr);
  int k_whole = (kr == 2 || kr == 4) ? K / kr * kr : 0;  // groups inside the row
  for (int p = 0; p < panels; p++) {
    int8_t *panel = packed + (size_t)p * RMT_GEMM_NR * Kp;
    int k_from = 0;
    if ((p + 1) * RMT_GEMM_NR <= N) {
      pack_groups_whole(panel, weight + (size_t)p * RMT_GEMM_NR * K, k_whole, K, kr);
      k_from = k_whole;
    }
    pack_groups_bytes(panel, weight, p, k_from, Kp, N, K, kr);
  }
}

// Lane j of each k group of a panel (kr bytes, RMT_GEMM_NR * kr apart) from
// src's lane; a group's bytes copied as one value where kr is 2 or 4 (the
// kernels' groups), not a byte at a time: a shortlist gathers every call.
static void copy_lane(int8_t *dst, const int8_t *src, int groups, int kr) {
  size_t step = (size_t)RMT_GEMM_NR * kr;
  if (kr == 2) {
    for (int g = 0; g < groups; g++) memcpy(dst + g * step, src + g * step, 2);
  } else if (kr == 4) {
    for (int g = 0; g < groups; g++) memcpy(dst + g * step, src + g * step, 4);
  } else {
    for (int g = 0; g < groups; g++) memcpy(dst + g * step, src + g * step, (size_t)kr);
  }
}

void rmt_gather_packed_weight_i8(int8_t *dst, const int8_t *packed, const int *rows, int n, int K, int kr) {
  int panels = rmt_gemm_panels(n), Kp = rmt_quantized_row_len(K, kr);
  size_t panel_bytes = (size_t)RMT_GEMM_NR * Kp;
  for (int p = 0; p < panels; p++) {
    int8_t *panel = dst + (size_t)p * panel_bytes;
    for (int j = 0; j < RMT_GEMM_NR; j++) {
      int r = p * RMT_GEMM_NR + j;
      if (r < n) {  // row rows[r] is lane rows[r] % 8 of its panel
        const int8_t *src = packed + (size_t)(rows[r] / RMT_GEMM_NR) * panel_bytes + (size_t)(rows[r] % RMT_GEMM_NR) * kr;
        copy_lane(panel + j * kr, src, Kp / kr, kr);
      } else {
        for (int k0 = 0; k0 < Kp; k0 += kr) memset(panel + (size_t)k0 * RMT_GEMM_NR + j * kr, 0, (size_t)kr);
      }
    }
  }
}

// int16 weights in pairs of k are, byte for byte, int8 weights of 2K bytes a
// row in groups of 4 bytes: the same panel layout, so the same movers.
size_t rmt_packed_weight_i16_bytes(int N, int K) {
  return rmt_size_mul(rmt_packed_weight_i8_bytes(N, K, RMT_GEMM_I8_KR_DOT16), sizeof(int16_t));
}

// The lanes' maximum is taken on their bits as int32: for values >= 0 (|x|)
// that order is the float order, a NaN (bits above infinity's) still wins
// its lane, and i32x4.max_s is one instruction where f32x4.max's NaN and
// signed-zero rules cost several.
static float absmax_f32(const float *x, int K) {
  int K4 = K & ~3;
  v128_t m = wasm_f32x4_splat(0);
  for (int k = 0; k < K4; k += 4) m = wasm_i32x4_max(m, wasm_f32x4_abs(wasm_v128_load(x + k)));
  float out = fmaxf(fmaxf(wasm_f32x4_extract_lane(m, 0), wasm_f32x4_extract_lane(m, 1)),
                    fmaxf(wasm_f32x4_extract_lane(m, 2), wasm_f32x4_extract_lane(m, 3)));
  for (int k = K4; k < K; k++) out = fmaxf(out, fabsf(x[k]));
  return out;
}

// The model's load runs this once over the output layer (V x K) in the
// engine's baseline code (nothing is optimized yet), hence SIMD: 8 weights
// a step, each pair of k stored as one 32-bit lane where the panel wants it.
// The quotient, rounding and clamp are rmt_quantize_weight's.
void rmt_quantize_pack_weight_i16(int16_t *packed, float *w_scale, const float *weight, int N, int K, int qmax) {
  int Kp = rmt_quantized_row_len(K, RMT_GEMM_I8_KR_DOT16), K8 = K & ~7;
  int rows = rmt_gemm_panels(N) * RMT_GEMM_NR;
  v128_t hi4 = wasm_i32x4_splat(qmax), lo4 = wasm_i32x4_splat(-qmax);
  for (int n = 0; n < rows; n++) {
    // Feature n is lane n % 8 of panel n / 8: k pair g at [g][lane][2].
    int16_t *dst = packed + (size_t)(n / RMT_GEMM_NR) * RMT_GEMM_NR * Kp + (size_t)(n % RMT_GEMM_NR) * 2;
    if (n >= N) {  // the last panel's lanes past N
      for (int k = 0; k < Kp; k++) dst[(size_t)(k / 2) * RMT_GEMM_NR * 2 + k % 2] = 0;
      continue;
    }
    const float *row = weight + (size_t)n * K;
    float scale = w_scale[n] = rmt_weight_scale_of(absmax_f32(row, K), qmax);
    v128_t scale4 = wasm_f32x4_splat(scale);
    int k = 0;
    for (; k < K8; k += 8) {
      v128_t a = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_div(wasm_v128_load(row + k), scale4)));
      v128_t b = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_div(wasm_v128_load(row + k + 4), scale4)));
      v128_t q = wasm_i16x8_narrow_i32x4(wasm_i32x4_max(wasm_i32x4_min(a, hi4), lo4), wasm_i32x4_max(wasm_i32x4_min(b, hi4), lo4));
      int16_t *pairs = dst + (size_t)(k / 2) * RMT_GEMM_NR * 2;  // pairs k/2 .. k/2 + 3, a panel row apart
      wasm_v128_store32_lane(pairs, q, 0);
      wasm_v128_store32_lane(pairs + RMT_GEMM_NR * 2, q, 1);
      wasm_v128_store32_lane(pairs + RMT_GEMM_NR * 4, q, 2);
      wasm_v128_store32_lane(pairs + RMT_GEMM_NR * 6, q, 3);
    }
    for (; k < Kp; k++) dst[(size_t)(k / 2) * RMT_GEMM_NR * 2 + k % 2] = (int16_t)(k < K ? rmt_quantize_weight(row[k], scale, qmax) : 0);
  }
}

void rmt_gather_packed_weight_i16(int16_t *dst, const int16_t *packed, const int *rows, int n, int K) {
  rmt_gather_packed_weight_i8((int8_t *)dst, (const int8_t *)packed, rows, n, 2 * K, 2 * RMT_GEMM_I8_KR_DOT16);
}

// ---------------------------------------------------------------- activations

// Row x quantized to [qmin, qmax] (qmin -qmax, or 0 for a row known to be
// >= 0), 8 values at a time as int32 lanes through store8; returns the row's
// scale. The scalar tail is rmt_quantize_row__ref's.
// y rounded half to even, as int32 lanes, for y = x * inv with |x| <= amax:
// |y| <= qmax (plus a rounding) unless inv overflowed to infinity. Adding
// 1.5 * 2^23 leaves round(y) in the low mantissa bits (exact for |y| < 2^22),
// read by subtracting the constant's bits; +-inf become large +-values (the
// caller clamps them to +-qmax), NaN becomes 0: what f32x4.nearest then
// i32x4.trunc_sat_f32x4 give, in 4 instructions instead of about 10.
static ALWAYS_INLINE v128_t round_to_i32(v128_t y) {
#if FLT_EVAL_METHOD != 0
  // Excess precision (x87: natively on i386, through SIMDe) may skip the
  // roundings the constant relies on: the two instructions it stands for.
  return wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(y));
#else
  v128_t magic = wasm_f32x4_splat(12582912.0f);
  v128_t r = wasm_i32x4_sub(wasm_f32x4_add(y, magic), magic);
  return wasm_v128_and(r, wasm_f32x4_eq(y, y));
#endif
}

static ALWAYS_INLINE float quantize_row(const float *x, int K, int qmin, int qmax,
                                        void (*store8)(void *, int, v128_t, v128_t), void (*store1)(void *, int, int),
                                        void *dst) {
  float amax = absmax_f32(x, K);
  float inv = amax > 0.0f ? (float)qmax / amax : 0.0f;
  v128_t inv4 = wasm_f32x4_splat(inv), hi4 = wasm_i32x4_splat(qmax), lo4 = wasm_i32x4_splat(qmin);
  int K8 = K & ~7, k = 0;
  for (; k < K8; k += 8) {
    v128_t a = round_to_i32(wasm_f32x4_mul(wasm_v128_load(x + k), inv4));
    v128_t b = round_to_i32(wasm_f32x4_mul(wasm_v128_load(x + k + 4), inv4));
    store8(dst, k, wasm_i32x4_max(wasm_i32x4_min(a, hi4), lo4), wasm_i32x4_max(wasm_i32x4_min(b, hi4), lo4));
  }
  for (; k < K; k++) store1(dst, k, rmt_round_clamp(x[k] * inv, qmin, qmax));
  return amax / (float)qmax;
}

static ALWAYS_INLINE void store8_i16(void *dst, int k, v128_t a, v128_t b) {
  wasm_v128_store((int16_t *)dst + k, wasm_i16x8_narrow_i32x4(a, b));
}
static ALWAYS_INLINE void store1_i16(void *dst, int k, int q) { ((int16_t *)dst)[k] = (int16_t)q; }

static ALWAYS_INLINE void store8_u8(void *dst, int k, v128_t a, v128_t b) {
  v128_t q16 = wasm_i16x8_narrow_i32x4(a, b);
  wasm_v128_store64_lane((uint8_t *)dst + k, wasm_u8x16_narrow_i16x8(q16, q16), 0);
}
static ALWAYS_INLINE void store1_u8(void *dst, int k, int q) { ((uint8_t *)dst)[k] = (uint8_t)q; }

// q + 128 (-127..127 to 1..255) as bytes.
static ALWAYS_INLINE void store8_u8_offset(void *dst, int k, v128_t a, v128_t b) {
  v128_t q16 = wasm_i16x8_add(wasm_i16x8_narrow_i32x4(a, b), wasm_i16x8_splat(RMT_RELAXED_ACT_OFFSET));
  wasm_v128_store64_lane((uint8_t *)dst + k, wasm_u8x16_narrow_i16x8(q16, q16), 0);
}
static ALWAYS_INLINE void store1_u8_offset(void *dst, int k, int q) {
  ((uint8_t *)dst)[k] = (uint8_t)(q + RMT_RELAXED_ACT_OFFSET);
}

void rmt_quantize_rows_i16__wasmsimd(int16_t *Aq, float *a_scale, const float *A, int M, int K, int qmax) {
  int Kp = rmt_quantized_row_len(K, RMT_GEMM_I8_KR_DOT16);
  for (int m = 0; m < M; m++) {
    int16_t *row = Aq + (size_t)m * Kp;
    a_scale[m] = quantize_row(A + (size_t)m * K, K, -qmax, qmax, store8_i16, store1_i16, row);
    for (int k = K; k < Kp; k++) row[k] = 0;
  }
}

void rmt_quantize_rows_u8__wasmsimd(uint8_t *Aq, float *a_scale, const float *A, int M, int K, int offset) {
  int Kp = rmt_quantized_row_len(K, RMT_GEMM_I8_KR_RELAXED);
  for (int m = 0; m < M; m++) {
    uint8_t *row = Aq + (size_t)m * Kp;
    const float *x = A + (size_t)m * K;
    if (offset) a_scale[m] = quantize_row(x, K, -RMT_QMAX_I8, RMT_QMAX_I8, store8_u8_offset, store1_u8_offset, row);
    else a_scale[m] = quantize_row(x, K, 0, RMT_QMAX_I8, store8_u8, store1_u8, row);
    for (int k = K; k < Kp; k++) row[k] = 0;  // against zero weights
  }
}

// ---------------------------------------------------------------- GEMM

// One row of C's panel: the two accumulator vectors (features n..n+7), less
// offset_sum (activations stored with an offset; NULL: none), to float32,
// scaled as the reference does: ((float)sum * a_scale) * w_scale + bias; the
// first `cols` stored (a partial panel goes through small buffers).
static ALWAYS_INLINE void store_i8_row(float *dst, v128_t lo, v128_t hi, float a_scale, const float *w_scale,
                                       const int32_t *offset_sum, const float *bias, int cols) {
  static const float zeros[RMT_GEMM_NR] = {0};
  float scale[RMT_GEMM_NR] = {0}, add[RMT_GEMM_NR] = {0};
  int32_t offsets[RMT_GEMM_NR] = {0};
  const float *s = w_scale, *b = bias ? bias : zeros;
  const int32_t *o = offset_sum;
  if (cols < RMT_GEMM_NR) {
    memcpy(scale, w_scale, sizeof(float) * (size_t)cols);
    if (bias) memcpy(add, bias, sizeof(float) * (size_t)cols);
    if (offset_sum) memcpy(offsets, offset_sum, sizeof(int32_t) * (size_t)cols);
    s = scale, b = add, o = offsets;
  }
  if (offset_sum) {
    lo = wasm_i32x4_sub(lo, wasm_v128_load(o));
    hi = wasm_i32x4_sub(hi, wasm_v128_load(o + 4));
  }
  v128_t a = wasm_f32x4_splat(a_scale);
  lo = wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(lo), a), wasm_v128_load(s));
  hi = wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(hi), a), wasm_v128_load(s + 4));
  lo = wasm_f32x4_add(lo, wasm_v128_load(b));
  hi = wasm_f32x4_add(hi, wasm_v128_load(b + 4));
  rmt_store_f32x8_clipped(dst, lo, hi, cols);
}

// The three inner products: int8 weights with byte activations (the relaxed
// dot), int8 weights with int16 activations, int16 weights with int16 ones.
enum { W8_A8_RELAXED, W8_A16, W16_A16 };

// Rows m..m+R-1 against panels p..p+P-1 (R = 1..4 with P = 1, R = 2 with
// P = 2, or R = 1 with P = 2 or 4; constants after inlining), 8 accumulators
// at most. W8_A8_RELAXED: 4 k per step, activations bytes (offset_sum:
// stored with an offset); otherwise 2 k per step, activations int16, weights
// int16 (W16_A16) or int8 widened as they are loaded (v128.load8x8_s, one
// instruction as a plain load is): a quarter of float32's memory, where
// widening them at load took half.
static ALWAYS_INLINE int kr_of(int mode) { return mode == W8_A8_RELAXED ? RMT_GEMM_I8_KR_RELAXED : RMT_GEMM_I8_KR_DOT16; }
static ALWAYS_INLINE size_t weight_bytes_of(int mode) { return mode == W16_A16 ? sizeof(int16_t) : sizeof(int8_t); }
// A packed panel's bytes: RMT_GEMM_NR features of K weights in the mode's k groups.
static ALWAYS_INLINE size_t panel_bytes_of(int K, int mode) {
  return (size_t)RMT_GEMM_NR * rmt_quantized_row_len(K, kr_of(mode)) * weight_bytes_of(mode);
}

static ALWAYS_INLINE void tile_i8(float *C, const void *Aq, const float *a_scale, const void *packed_weight,
                                  const float *w_scale, const int32_t *offset_sum, const float *bias, int m, int p,
                                  int N, int K, int R, int P, int mode) {
  int Kp = rmt_quantized_row_len(K, kr_of(mode));
  size_t weight_bytes = weight_bytes_of(mode), panel_bytes = panel_bytes_of(K, mode);
  const int8_t *w = (const int8_t *)packed_weight + (size_t)p * panel_bytes;
  v128_t c[4][8];
  for (int r = 0; r < R; r++) for (int j = 0; j < 2 * P; j++) c[r][j] = wasm_i32x4_splat(0);
  // In both loops a pointer a row, stepped, and two k groups an iteration:
  // fewer address sums beside the products than a + r * Kp + k each time
  if (mode == W8_A8_RELAXED) {
    const uint8_t *a[4], *a_end = (const uint8_t *)Aq + (size_t)m * Kp + Kp;
    for (int r = 0; r < R; r++) a[r] = (const uint8_t *)Aq + (size_t)(m + r) * Kp;
#if RMT_HAVE_RELAXED_DOT  // elsewhere the kernel runs only in the tests: no code doubled for it
    UNROLL_2
#endif
    for (; a[0] < a_end; w += RMT_GEMM_NR * RMT_GEMM_I8_KR_RELAXED) {
      v128_t wv[8];
      for (int q = 0; q < P; q++) wv[2 * q] = wasm_v128_load(w + q * panel_bytes), wv[2 * q + 1] = wasm_v128_load(w + q * panel_bytes + 16);
      for (int r = 0; r < R; r++) {
        v128_t x = wasm_v128_load32_splat(a[r]);
        a[r] += RMT_GEMM_I8_KR_RELAXED;
        for (int j = 0; j < 2 * P; j++) c[r][j] = rmt_i32x4_dot_i8x16_u8x16_add(wv[j], x, c[r][j]);
      }
    }
  } else {
    const int16_t *a[4], *a_end = (const int16_t *)Aq + (size_t)m * Kp + Kp;
    for (int r = 0; r < R; r++) a[r] = (const int16_t *)Aq + (size_t)(m + r) * Kp;
    UNROLL_2
    for (; a[0] < a_end; w += RMT_GEMM_NR * RMT_GEMM_I8_KR_DOT16 * weight_bytes) {
      v128_t wv[8];
      for (int q = 0; q < P; q++) {
        const int8_t *wq = w + q * panel_bytes;
        if (mode == W16_A16) {
          wv[2 * q] = wasm_v128_load(wq), wv[2 * q + 1] = wasm_v128_load(wq + 16);
        } else {  // features 0-3's pairs in the first 8 bytes, 4-7's in the next: loads that widen
          wv[2 * q] = wasm_i16x8_load8x8(wq), wv[2 * q + 1] = wasm_i16x8_load8x8(wq + 8);
        }
      }
      for (int r = 0; r < R; r++) {
        v128_t x = wasm_v128_load32_splat(a[r]);
        a[r] += RMT_GEMM_I8_KR_DOT16;
        for (int j = 0; j < 2 * P; j++) c[r][j] = wasm_i32x4_add(c[r][j], wasm_i32x4_dot_i16x8(x, wv[j]));
      }
    }
  }
  for (int q = 0; q < P; q++) {
    int n = (p + q) * RMT_GEMM_NR, cols = N - n < RMT_GEMM_NR ? N - n : RMT_GEMM_NR;
    for (int r = 0; r < R; r++) {
      store_i8_row(C + (size_t)(m + r) * N + n, c[r][2 * q], c[r][2 * q + 1], a_scale[m + r], w_scale + n,
                   offset_sum ? offset_sum + n : NULL, bias ? bias + n : NULL, cols);
    }
  }
}

// Panels first_panel .. first_panel + n_panels - 1 in blocks of at most
// RMT_GEMM_BLOCK_BYTES of weights: every row tile runs over a block while it
// is in cache, so a batch reads each weight from memory once, not once per
// 4 rows (an output layer of 8,000 x 512 outlives L2); touched first where
// several tiles read it (RMT_GEMM_TOUCH_ROWS). In a block, row
// pairs or 4-row tiles, then the rows left as one tile of 3, 2 or 1 (a row's
// sums do not depend on its tile or its block: integers, added exactly).
static ALWAYS_INLINE void gemm_i8(float *C, const void *Aq, const float *a_scale, const void *packed_weight,
                                  const float *w_scale, const int32_t *offset_sum, const float *bias, int M, int N,
                                  int K, int first_panel, int n_panels, int mode) {
  size_t panel_bytes = panel_bytes_of(K, mode);
  int block = rmt_gemm_block_panels(panel_bytes);
  for (int begin = first_panel, end = first_panel + n_panels; begin < end; begin += block) {
    int block_end = end - begin < block ? end : begin + block, m = 0;
    if (M >= RMT_GEMM_TOUCH_ROWS) {
      rmt_touch_lines((const int8_t *)packed_weight + (size_t)begin * panel_bytes, (size_t)(block_end - begin) * panel_bytes);
    }
    // Fewer than 8 rows (a sentence's beam, a small batch): rows in pairs
    // against panels in pairs, 8 sums from 2 activation and 4 weight loads
    // (1.05-1.09x at beam 4, in Chromium and in Node); more: 4-row tiles,
    // which Chromium's V8 runs faster there (2 x 2 was 0.92x batched).
    for (int pairs_end = M < 8 ? M & ~1 : 0; m < pairs_end; m += 2) {
      int p = begin;
      for (; p + 2 <= block_end; p += 2) tile_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, m, p, N, K, 2, 2, mode);
      if (p < block_end) tile_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, m, p, N, K, 2, 1, mode);
    }
    for (; m + RMT_GEMM_MR <= M; m += RMT_GEMM_MR) {
      for (int p = begin; p < block_end; p++) {
        tile_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, m, p, N, K, 4, 1, mode);
      }
    }
    // The rows left (at most 3), each call with constant counts so that the tile's
    // loops unroll; one row (a sentence decoded alone) takes 4 panels at
    // once: independent sums, and its activations loaded once for all four.
    for (int p = begin, panels; p < block_end && m < M; p += panels) {
      int rows = M - m, left = block_end - p;
      panels = rows > 1 ? 1 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
      if (rows == 3) tile_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, m, p, N, K, 3, 1, mode);
      else if (rows == 2) tile_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, m, p, N, K, 2, 1, mode);
      else if (panels == 4) tile_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, m, p, N, K, 1, 4, mode);
      else if (panels == 2) tile_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, m, p, N, K, 1, 2, mode);
      else tile_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, m, p, N, K, 1, 1, mode);
    }
  }
}

void rmt_gemm_i8_4x8__wasmrelaxed(float *C, const uint8_t *Aq, const float *a_scale, const int8_t *packed_weight,
                                  const float *w_scale, const int32_t *offset_sum, const float *bias, int M, int N,
                                  int K) {
  gemm_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, M, N, K, 0, rmt_gemm_panels(N), W8_A8_RELAXED);
}

void rmt_gemm_w8a16_4x8__wasmsimd(float *C, const int16_t *Aq, const float *a_scale, const int8_t *packed_weight,
                                  const float *w_scale, const float *bias, int M, int N, int K) {
  gemm_i8(C, Aq, a_scale, packed_weight, w_scale, NULL, bias, M, N, K, 0, rmt_gemm_panels(N), W8_A16);
}

void rmt_gemm_i16_4x8__wasmsimd(float *C, const int16_t *Aq, const float *a_scale, const int16_t *packed_weight,
                                const float *w_scale, const float *bias, int M, int N, int K) {
  gemm_i8(C, Aq, a_scale, packed_weight, w_scale, NULL, bias, M, N, K, 0, rmt_gemm_panels(N), W16_A16);
}

void rmt_gemm_i16_cols(float *C, const int16_t *Aq, const float *a_scale, const int16_t *packed_weight,
                       const float *w_scale, const float *bias, int M, int N, int K, int first_panel, int n_panels) {
  gemm_i8(C, Aq, a_scale, packed_weight, w_scale, NULL, bias, M, N, K, first_panel, n_panels, W16_A16);
}

void rmt_quantize_rows_i8(int16_t *Aq, float *a_scale, const float *A, int M, int K, int kr, int qmax, int offset) {
  if (kr == RMT_GEMM_I8_KR_RELAXED) rmt_quantize_rows_u8__wasmsimd((uint8_t *)Aq, a_scale, A, M, K, offset);
  else rmt_quantize_rows_i16__wasmsimd(Aq, a_scale, A, M, K, qmax);
}

void rmt_gemm_i8_cols(float *C, const int16_t *Aq, const float *a_scale, const int8_t *packed_weight, int kr,
                      const float *w_scale, const int32_t *offset_sum, const float *bias, int M, int N, int K,
                      int first_panel, int n_panels) {
  gemm_i8(C, Aq, a_scale, packed_weight, w_scale, offset_sum, bias, M, N, K, first_panel, n_panels,
          kr == RMT_GEMM_I8_KR_RELAXED ? W8_A8_RELAXED : W8_A16);
}

void rmt_linear_i8(float *C, const float *A, int16_t *Aq, float *a_scale, const int8_t *packed_weight, int kr,
                   int qmax, int offset, const float *w_scale, const int32_t *offset_sum, const float *bias, int M,
                   int N, int K) {
  rmt_quantize_rows_i8(Aq, a_scale, A, M, K, kr, qmax, offset);
  rmt_gemm_i8_cols(C, Aq, a_scale, packed_weight, kr, w_scale, offset_sum, bias, M, N, K, 0, rmt_gemm_panels(N));
}
