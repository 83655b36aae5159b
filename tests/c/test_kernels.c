// SIMD kernels against their plain C twins on odd sizes.
#include <float.h>

#include "kernels.h"
#include "testutil.h"

static unsigned rng_state = 12345;
static float randf(void) {  // uniform in [-1, 1)
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / (float)(1 << 23) - 1.0f;
}
static void fill(float *x, size_t n) { for (size_t i = 0; i < n; i++) x[i] = randf(); }

static float max_abs_diff(const float *a, const float *b, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; i++) m = fmaxf(m, fabsf(a[i] - b[i]));
  return m;
}

static void test_gemm(void) {
  static const int sizes[] = {1, 3, 17, 64, 129};
  float worst = 0;
  for (int mi = 0; mi < 5; mi++) for (int ni = 0; ni < 5; ni++) for (int ki = 0; ki < 5; ki++) {
    int M = sizes[mi], N = sizes[ni], K = sizes[ki];
    float *A = malloc(sizeof(float) * M * K), *W = malloc(sizeof(float) * N * K), *bias = malloc(sizeof(float) * N);
    float *packed = malloc(sizeof(float) * rmt_packed_weight_floats(N, K));
    // One guard element past C catches writes beyond the N columns of the last row.
    float *C = malloc(sizeof(float) * (M * N + 1)), *C_ref = malloc(sizeof(float) * M * N);
    fill(A, (size_t)M * K), fill(W, (size_t)N * K), fill(bias, N);
    C[M * N] = 42.0f;
    rmt_pack_weight(packed, W, N, K);
    for (int with_bias = 0; with_bias < 2; with_bias++) {
      rmt_gemm_f32_4x8__wasmsimd(C, A, packed, with_bias ? bias : NULL, M, N, K);
      rmt_gemm_f32__ref(C_ref, A, W, with_bias ? bias : NULL, M, N, K);
      float diff = max_abs_diff(C, C_ref, (size_t)M * N);
      worst = fmaxf(worst, diff);
      CHECK(diff <= 1e-5f * K, "gemm M=%d N=%d K=%d bias=%d: max diff %g", M, N, K, with_bias, diff);
      CHECK(C[M * N] == 42.0f, "gemm M=%d N=%d K=%d wrote past C", M, N, K);
    }
    free(A), free(W), free(bias), free(packed), free(C), free(C_ref);
  }
  printf("gemm: 125 shapes, max |simd - ref| = %g\n", worst);

  // A row's result must not depend on the batch around it (4-row tiles vs the
  // 2- and 3-row tiles of M % 4 rows and the 1-row kernel): bitwise, so that a
  // sentence translates the same in any batch, and a decoding step's rows
  // the same in any thread's block of them.
  int M = 7, N = 45, K = 33;
  float *A = malloc(sizeof(float) * M * K), *W = malloc(sizeof(float) * N * K), *bias = malloc(sizeof(float) * N);
  float *packed = malloc(sizeof(float) * rmt_packed_weight_floats(N, K));
  float *C = malloc(sizeof(float) * M * N), row[45];
  fill(A, (size_t)M * K), fill(W, (size_t)N * K), fill(bias, N);
  rmt_pack_weight(packed, W, N, K);
  for (int rows_of_a = 6; rows_of_a <= M; rows_of_a++) {
    rmt_gemm_f32_4x8__wasmsimd(C, A, packed, bias, rows_of_a, N, K);
    for (int m = 0; m < rows_of_a; m++) {
      rmt_gemm_f32_4x8__wasmsimd(row, A + (size_t)m * K, packed, bias, 1, N, K);
      CHECK(memcmp(row, C + (size_t)m * N, sizeof row) == 0, "gemm row %d differs between M=%d and M=1", m, rows_of_a);
    }
  }
  // Gathered rows (a lexical shortlist's output layer), in any order, the
  // last row of W among them: the GEMM over them gives bitwise the full
  // GEMM's values of those columns; 4-row tiles and the 1-row tail both.
  static const int rows[] = {44, 0, 9, 10, 17, 3, 40, 41, 42, 5};
  enum { GATHERED = sizeof rows / sizeof rows[0] };
  float *gathered = malloc(sizeof(float) * rmt_packed_weight_floats(GATHERED, K)), gathered_bias[GATHERED];
  float *P = malloc(sizeof(float) * M * N);
  rmt_gather_packed_weight(gathered, packed, rows, GATHERED, K);
  for (int i = 0; i < GATHERED; i++) gathered_bias[i] = bias[rows[i]];
  rmt_gemm_f32_4x8__wasmsimd(P, A, gathered, gathered_bias, M, GATHERED, K);
  for (int m = 0; m < M; m++) {
    for (int i = 0; i < GATHERED; i++) {
      CHECK(memcmp(&P[(size_t)m * GATHERED + i], &C[(size_t)m * N + rows[i]], sizeof(float)) == 0,
            "gemm of gathered rows: C[%d][%d] = %g, expected %g", m, rows[i], P[(size_t)m * GATHERED + i],
            C[(size_t)m * N + rows[i]]);
    }
  }
  free(gathered);
  // Column ranges (a thread's share: src/threads.c), the last one partial: the
  // full GEMM's values bitwise in the range, nothing written outside it.
  static const int ranges[][2] = {{0, 8}, {8, 40}, {40, 45}, {16, 24}};
  for (int r = 0; r < 4; r++) {
    for (size_t i = 0; i < (size_t)M * N; i++) P[i] = 42.0f;
    rmt_gemm_f32_4x8_cols__wasmsimd(P, A, packed, bias, M, N, K, ranges[r][0], ranges[r][1]);
    for (int m = 0; m < M; m++) {
      for (int n = 0; n < N; n++) {
        float want = n >= ranges[r][0] && n < ranges[r][1] ? C[(size_t)m * N + n] : 42.0f;
        CHECK(memcmp(&P[(size_t)m * N + n], &want, sizeof want) == 0, "gemm cols %d..%d: C[%d][%d] = %g, expected %g",
              ranges[r][0], ranges[r][1], m, n, P[(size_t)m * N + n], want);
      }
    }
  }
  free(P);
  free(A), free(W), free(bias), free(packed), free(C);
}

static void test_layer_norm(void) {
  static const int dims[] = {1, 3, 17, 64, 129};
  for (int i = 0; i < 5; i++) {
    int M = 3, D = dims[i];
    float *x = malloc(sizeof(float) * M * D), *g = malloc(sizeof(float) * D), *b = malloc(sizeof(float) * D);
    float *out = malloc(sizeof(float) * M * D), *ref = malloc(sizeof(float) * M * D);
    fill(x, (size_t)M * D), fill(g, D), fill(b, D);
    for (int j = 0; j < M * D; j++) x[j] = x[j] * 10 + 3;  // offset mean, larger variance
    rmt_layer_norm_f32__wasmsimd(out, x, g, b, M, D, 1e-5f);
    rmt_layer_norm_f32__ref(ref, x, g, b, M, D, 1e-5f);
    float diff = max_abs_diff(out, ref, (size_t)M * D);
    CHECK(diff < 1e-5f, "layer_norm D=%d: max diff %g", D, diff);
    // In place gives the same result.
    rmt_layer_norm_f32__wasmsimd(x, x, g, b, M, D, 1e-5f);
    CHECK(max_abs_diff(x, out, (size_t)M * D) == 0, "layer_norm in place D=%d differs", D);
    free(x), free(g), free(b), free(out), free(ref);
  }
  // A constant row normalises to beta (variance 0, eps keeps it finite).
  float row[8] = {2, 2, 2, 2, 2, 2, 2, 2}, g[8], b[8], out[8];
  for (int i = 0; i < 8; i++) g[i] = 1, b[i] = (float)i;
  rmt_layer_norm_f32__wasmsimd(out, row, g, b, 1, 8, 1e-5f);
  CHECK(max_abs_diff(out, b, 8) < 1e-6f, "layer_norm of a constant row is not beta");
}

static void test_elementwise(void) {
  for (size_t n = 1; n < 20; n += 3) {
    float a[20], b[20], out[20], ref[20];
    fill(a, n), fill(b, n);
    rmt_add_scaled_f32__wasmsimd(out, a, b, 0.7f, n);
    rmt_add_scaled_f32__ref(ref, a, b, 0.7f, n);
    CHECK(max_abs_diff(out, ref, n) == 0, "add_scaled n=%zu", n);
    memcpy(ref, a, sizeof a);
    rmt_relu_f32__wasmsimd(a, n);
    rmt_relu_f32__ref(ref, n);
    CHECK(max_abs_diff(a, ref, n) == 0, "relu n=%zu", n);
  }
}

// The first Inf or NaN, at every position of arrays of every length up to
// 40 (tails and whole steps of 16), against the plain twin; none in finite data.
static void test_first_nonfinite(void) {
  float x[40];
  const float bad[3] = {INFINITY, -INFINITY, NAN};
  for (size_t n = 0; n <= 40; n++) {
    for (size_t i = 0; i < n; i++) x[i] = (float)i * 0.5f - 3.0f;
    CHECK(rmt_first_nonfinite_f32__wasmsimd(x, n) == n && rmt_first_nonfinite_f32__ref(x, n) == n, "finite n=%zu", n);
    for (size_t at = 0; at < n; at++) {
      for (int b = 0; b < 3; b++) {
        x[at] = bad[b];
        if (at + 3 < n) x[at + 3] = bad[(b + 1) % 3];  // a second one later: the first is found
        size_t simd = rmt_first_nonfinite_f32__wasmsimd(x, n), ref = rmt_first_nonfinite_f32__ref(x, n);
        CHECK(simd == at && ref == at, "n=%zu, %g at %zu: simd %zu, reference %zu", n, bad[b], at, simd, ref);
        x[at] = 1.0f;
        if (at + 3 < n) x[at + 3] = 1.0f;
      }
    }
  }
  x[0] = FLT_MAX, x[1] = -FLT_MAX, x[2] = FLT_MIN, x[3] = 0x1p-149f;
  CHECK(rmt_first_nonfinite_f32__wasmsimd(x, 4) == 4, "the largest and smallest floats are finite");
}

// The same for halves, from an odd address (the source may be unaligned):
// every position of lengths up to 70 (tails and whole steps of 32), and
// every one of the 65,536 values, whose exponent alone decides.
static void test_first_nonfinite_f16(void) {
  enum { ALL = 1 << 16 };
  static unsigned char bytes[2 * ALL + 1];
  const uint16_t bad[3] = {0x7c00, 0xfc00, 0x7e01};  // +Inf, -Inf, NaN
  for (size_t n = 0; n <= 70; n++) {
    for (size_t i = 0; i < n; i++) bytes[1 + 2 * i] = (unsigned char)i, bytes[2 + 2 * i] = (unsigned char)(0x3c + i % 32);
    CHECK(rmt_first_nonfinite_f16__wasmsimd(bytes + 1, n) == n && rmt_first_nonfinite_f16__ref(bytes + 1, n) == n, "finite halves n=%zu", n);
    for (size_t at = 0; at < n; at++) {
      for (int b = 0; b < 3; b++) {
        unsigned char lo = bytes[1 + 2 * at], hi = bytes[2 + 2 * at];
        bytes[1 + 2 * at] = (unsigned char)bad[b], bytes[2 + 2 * at] = (unsigned char)(bad[b] >> 8);
        size_t simd = rmt_first_nonfinite_f16__wasmsimd(bytes + 1, n), ref = rmt_first_nonfinite_f16__ref(bytes + 1, n);
        CHECK(simd == at && ref == at, "halves n=%zu, 0x%04x at %zu: simd %zu, reference %zu", n, bad[b], at, simd, ref);
        bytes[1 + 2 * at] = lo, bytes[2 + 2 * at] = hi;
      }
    }
  }
  for (size_t i = 0; i < 32; i++) bytes[1 + 2 * i] = 0, bytes[2 + 2 * i] = 0x3c;  // 1.0
  for (uint32_t h = 0; h < ALL; h++) {  // value h in a whole step of 32, at lane h % 32
    size_t at = h % 32;
    bytes[1 + 2 * at] = (unsigned char)h, bytes[2 + 2 * at] = (unsigned char)(h >> 8);
    float widened;
    rmt_f16_to_f32__ref(&widened, bytes + 1 + 2 * at, 1);
    size_t want = isfinite(widened) ? 32 : at;
    size_t simd = rmt_first_nonfinite_f16__wasmsimd(bytes + 1, 32), ref = rmt_first_nonfinite_f16__ref(bytes + 1, 32);
    bytes[1 + 2 * at] = 0, bytes[2 + 2 * at] = 0x3c;
    if (simd != want || ref != want) {
      CHECK(0, "half 0x%04x: simd %zu, reference %zu, expected %zu", h, simd, ref, want);
      break;
    }
  }
}

// Every half, from an odd address (the source may be unaligned), bit for bit
// against the plain C twin; and the twin against values known by hand.
static void test_f16_to_f32(void) {
  enum { ALL = 1 << 16 };
  static unsigned char bytes[2 * ALL + 1];
  static float simd[ALL], ref[ALL];
  for (uint32_t h = 0; h < ALL; h++) bytes[1 + 2 * h] = (unsigned char)h, bytes[2 + 2 * h] = (unsigned char)(h >> 8);
  for (size_t n = 0; n <= 17; n++) {  // tails of every length
    rmt_f16_to_f32__wasmsimd(simd, bytes + 1 + 2 * 1000, n);
    rmt_f16_to_f32__ref(ref, bytes + 1 + 2 * 1000, n);
    CHECK(memcmp(simd, ref, n * sizeof(float)) == 0, "f16_to_f32 n=%zu differs from the reference", n);
  }
  rmt_f16_to_f32__wasmsimd(simd, bytes + 1, ALL);
  rmt_f16_to_f32__ref(ref, bytes + 1, ALL);
  int differ = -1;
  for (int h = 0; h < ALL && differ < 0; h++) if (memcmp(&simd[h], &ref[h], sizeof(float))) differ = h;
  CHECK(differ < 0, "f16_to_f32 of 0x%04x: %a, reference %a", differ, simd[differ < 0 ? 0 : differ], ref[differ < 0 ? 0 : differ]);
  CHECK(ref[0x3c00] == 1.0f && ref[0xc000] == -2.0f && ref[0x7bff] == 65504.0f && ref[0x3555] == 0x1.554p-2f,
        "f16 normals: %a %a %a %a", ref[0x3c00], ref[0xc000], ref[0x7bff], ref[0x3555]);
  CHECK(ref[0x0001] == 0x1p-24f && ref[0x03ff] == 0x1.ff8p-15f && ref[0x8001] == -0x1p-24f, "f16 subnormals");
  CHECK(ref[0x0000] == 0 && !signbit(ref[0x0000]) && ref[0x8000] == 0 && signbit(ref[0x8000]), "f16 zeros");
  CHECK(isinf(ref[0x7c00]) && ref[0x7c00] > 0 && isinf(ref[0xfc00]) && ref[0xfc00] < 0, "f16 infinities");
  uint32_t nan;
  memcpy(&nan, &ref[0x7e01], 4);
  CHECK(isnan(ref[0x7e01]) && nan == (0x7f800000u | 0x201u << 13), "f16 NaN payload: 0x%08x", nan);
}

static void test_softmax(void) {
  float x[5] = {1, 2, 3, -INFINITY, 0.5f}, lx[5];
  rmt_log_softmax_f32__ref(lx, x, 5);
  rmt_softmax_f32__ref(x, 5);
  double sum = 0;
  for (int i = 0; i < 5; i++) sum += x[i];
  CHECK(fabs(sum - 1) < 1e-6, "softmax sums to %f", sum);
  CHECK(x[3] == 0 && isinf(lx[3]) && lx[3] < 0, "masked entry is not zero / -inf");
  for (int i = 0; i < 5; i++) {
    if (i != 3) CHECK(fabsf(expf(lx[i]) - x[i]) < 1e-6f, "log_softmax and softmax disagree at %d", i);
  }
  // A weight below FLT_MIN is 0 (e^-87.5 ~ 9.9e-39 is subnormal), one above it stays (e^-80 ~ 1.8e-35),
  // and the SIMD softmax gives the same floats, through expf or past it (x - max <= -88).
  float tiny[9] = {0, -87.5f, -80, -88, -100, -INFINITY, -87.5f, 0, -150}, tiny_simd[9];
  memcpy(tiny_simd, tiny, sizeof tiny);
  rmt_softmax_f32__ref(tiny, 9);
  rmt_softmax_f32__wasmsimd(tiny_simd, 9);
  CHECK(tiny[0] == 0.5f && tiny[7] == 0.5f && tiny[2] > 0.0f, "softmax's normal weights: %g %g %g", tiny[0], tiny[7], tiny[2]);
  for (int i = 0; i < 9; i++) {
    if (i != 0 && i != 2 && i != 7) CHECK(tiny[i] == 0.0f && !signbit(tiny[i]), "softmax weight %d: %g, not 0", i, tiny[i]);
    CHECK(memcmp(&tiny[i], &tiny_simd[i], sizeof(float)) == 0, "SIMD softmax weight %d: %g, not %g", i, tiny_simd[i], tiny[i]);
  }
  float nan_row[5] = {0, NAN, -90, 1, -1};
  rmt_softmax_f32__wasmsimd(nan_row, 5);
  for (int i = 0; i < 5; i++) CHECK(isnan(nan_row[i]), "softmax of a row with NaN, weight %d: %g", i, nan_row[i]);
  // Large values do not overflow.
  float big[3] = {1000, 1001, 1002};
  rmt_softmax_f32__ref(big, 3);
  CHECK(isfinite(big[0]) && big[2] > big[1], "softmax overflowed");
}

// How many float steps apart a and b are (0 for two NaNs; same-signed values as here).
static int ulps_apart(float a, float b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT32_MAX;
  int32_t x, y;
  memcpy(&x, &a, 4), memcpy(&y, &b, 4);
  return abs(x - y);
}

// Checks got[0..n) within 2 ulps of want (a row of `what` n wide), *max_ulps the most seen.
static void check_ulps(const char *what, const float *want, const float *got, int n, int *max_ulps) {
  for (int i = 0; i < n; i++) {
    int ulps = ulps_apart(want[i], got[i]);
    *max_ulps = ulps > *max_ulps ? ulps : *max_ulps;
    CHECK(ulps <= 2, "%s n %d, %d: %.9g vs %.9g", what, n, i, got[i], want[i]);
  }
}

// The SIMD softmax against the plain one: the same floats where libm is the
// wasm build's (musl's expf, which its e^x copies); another libm's expf may
// round an exp, so the sum, differently: 2 ulps allowed. Rows of attention
// scores, every tail length, and lanes on expf's special path (-inf, exp
// under e^-88 and under e^-104).
static void test_softmax_simd(void) {
  static float x[300], want[300], got[300];
  uint32_t seed = 11;
  int max_ulps = 0;
  for (int n = 1; n <= 300; n += n < 40 ? 1 : 37) {
    for (int i = 0; i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      x[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 30.0f;
      if (n > 8 && i % 11 == 5) x[i] = i % 3 ? -INFINITY : -100.0f - (float)(i % 7);
    }
    memcpy(want, x, sizeof(float) * n);
    memcpy(got, x, sizeof(float) * n);
    rmt_softmax_f32__ref(want, n);
    rmt_softmax_f32__wasmsimd(got, n);
    check_ulps("softmax", want, got, n, &max_ulps);
  }
  printf("softmax: SIMD within %d ulp of the plain one\n", max_ulps);
}

// The SIMD swish against the plain one: the same floats in the wasm build
// (tests/kernels.test.js checks it there); natively 2 ulps allowed (another
// libm's expf). Every tail length, and lanes on expf's special path
// (|x| >= 88: e^-x overflowing or vanishing), infinities and NaN.
static void test_swish_simd(void) {
  static const float special[] = {0.0f, -0.0f, 88.0f, -88.0f, 88.8f, -88.8f, 104.0f, -104.0f, 1e30f, -1e30f,
                                  INFINITY, -INFINITY, NAN};
  static float want[200], got[200];
  uint32_t seed = 17;
  int max_ulps = 0;
  for (int n = 1; n <= 200; n += n < 20 ? 1 : 29) {
    for (int i = 0; i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      want[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 40.0f;
      if (i % 7 == 3) want[i] = special[(i / 7) % (sizeof special / sizeof special[0])];
    }
    memcpy(got, want, sizeof(float) * n);
    rmt_swish_f32__ref(want, (size_t)n);
    rmt_swish_f32__wasmsimd(got, (size_t)n);
    check_ulps("swish", want, got, n, &max_ulps);
  }
  printf("swish: SIMD within %d ulp of the plain one\n", max_ulps);
}

// The SIMD SSRU cell against the plain one, as swish (2 ulps natively), with
// and without a previous cell; its ReLU gives 0 for NaN and -0 as the plain one.
static void test_ssru_cell_simd(void) {
  static float gate[100], xw[100], prev[100], cell[2][100], out[2][100];
  uint32_t seed = 23;
  int max_ulps = 0;
  for (int n = 1; n <= 100; n += n < 12 ? 1 : 22) {
    for (int i = 0; i < n; i++) {
      float *v[3] = {gate, xw, prev};
      for (int j = 0; j < 3; j++) {
        seed = seed * 1664525u + 1013904223u;
        v[j][i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 20.0f;
      }
      if (i % 9 == 4) gate[i] = i % 2 ? 95.0f : -95.0f;  // expf's special path
      if (i % 13 == 6) xw[i] = i % 2 ? NAN : -0.0f;
    }
    for (int with_prev = 0; with_prev < 2; with_prev++) {
      const float *p = with_prev ? prev : NULL;
      rmt_ssru_cell_f32__ref(cell[0], out[0], p, xw, gate, n);
      rmt_ssru_cell_f32__wasmsimd(cell[1], out[1], p, xw, gate, n);
      check_ulps(with_prev ? "ssru cell" : "ssru first cell", cell[0], cell[1], n, &max_ulps);
      check_ulps(with_prev ? "ssru out" : "ssru first out", out[0], out[1], n, &max_ulps);
      for (int i = 0; i < n; i++) CHECK(out[1][i] >= 0.0f && !signbit(out[1][i]), "ssru out %d: %.9g", i, out[1][i]);
    }
  }
  printf("ssru cell: SIMD within %d ulp of the plain one\n", max_ulps);
}

// The SIMD log-softmax against the plain one: rows of logits of a model's
// spread (and some masked with -inf, as a shortlist does), every tail length.
static void test_log_softmax_simd(void) {
  static float x[8003], want[8003], got[8003];
  uint32_t seed = 7;
  for (int n = 1; n <= 8003; n += n < 40 ? 1 : 997) {
    for (int i = 0; i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      x[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 40.0f;  // -20 .. 20
      if (n > 8 && i % 7 == 3) x[i] = -INFINITY;
    }
    rmt_log_softmax_f32__ref(want, x, n);
    rmt_log_softmax_f32__wasmsimd(got, x, n);
    for (int i = 0; i < n; i++) {
      if (isinf(want[i])) {
        CHECK(isinf(got[i]) && got[i] < 0, "n %d: masked %d is %g", n, i, got[i]);
      } else {
        CHECK(fabsf(got[i] - want[i]) <= 2e-6f * (1.0f + fabsf(want[i])), "n %d, %d: %.9g vs %.9g", n, i, got[i],
              want[i]);
      }
    }
  }
  // exp of very negative values underflows to nothing, not to garbage
  float far[6] = {0, -200, -1e30f, -90, -87.5f, -1000}, lfar[6];
  rmt_log_softmax_f32__wasmsimd(lfar, far, 6);
  float log_sum = -lfar[0];  // e^0 plus terms below e^-87: log(1 + ~1e-38) = 0
  CHECK(log_sum >= 0 && log_sum < 1e-6f && lfar[1] == -200.0f - log_sum && lfar[2] == -1e30f - log_sum,
        "far: %g %g %g", lfar[0], lfar[1], lfar[2]);
}

// Several query rows over the same keys (the encoder's self-attention): the
// SIMD kernel (rows in pairs) against the plain one, and bit-identical to
// the SIMD row kernel called row by row (where floats have no excess
// precision, as in WebAssembly). Odd and even row counts, widths
// with and without tails.
static void test_attention_rows(void) {
  static const int configs[][4] = {{1, 1, 1, 1}, {5, 3, 4, 16}, {6, 17, 2, 3}, {41, 41, 4, 64}, {7, 9, 2, 19}};
  for (int c = 0; c < 5; c++) {
    int n = configs[c][0], T = configs[c][1], H = configs[c][2], E = configs[c][3], D = H * E;
    float *keys = malloc(sizeof(float) * T * D), *values = malloc(sizeof(float) * T * D);
    float *q = malloc(sizeof(float) * n * D), *out = malloc(sizeof(float) * n * D);
    float *ref = malloc(sizeof(float) * n * D), *rows = malloc(sizeof(float) * n * D);
    float *scores = malloc(sizeof(float) * 2 * T);
    const float **k_rows = malloc(sizeof(float *) * T), **v_rows = malloc(sizeof(float *) * T);
    fill(keys, (size_t)T * D), fill(values, (size_t)T * D), fill(q, (size_t)n * D);
    for (int t = 0; t < T; t++) k_rows[t] = keys + (size_t)t * D, v_rows[t] = values + (size_t)t * D;
    rmt_attention_rows_f32__wasmsimd(out, q, n, D, k_rows, v_rows, T, H, E, scores);
    rmt_attention_rows_f32__ref(ref, q, n, D, k_rows, v_rows, T, H, E, scores);
    for (int r = 0; r < n; r++) {
      rmt_attention_row_f32__wasmsimd(rows + (size_t)r * D, NULL, q + (size_t)r * D, k_rows, v_rows, T, H, E, scores);
    }
    float diff = max_abs_diff(out, ref, (size_t)n * D);
    CHECK(diff < 1e-5f, "attention rows n=%d T=%d H=%d E=%d: max diff %g", n, T, H, E, diff);
    CHECK(memcmp(out, rows, sizeof(float) * n * D) == 0,
          "attention rows n=%d T=%d: differ from the row kernel's", n, T);
    free(keys), free(values), free(q), free(out), free(ref), free(rows), free(scores), free(k_rows), free(v_rows);
  }
}

static void test_attention(void) {
  // Heads of width 1..17, keys from a longer strided matrix (with a masked
  // subset), against the reference; and one long sequence.
  static const int configs[][3] = {{1, 1, 1}, {3, 4, 16}, {17, 2, 3}, {64, 4, 16}, {129, 3, 5}, {600, 8, 8}};
  for (int c = 0; c < 6; c++) {
    int T = configs[c][0], H = configs[c][1], E = configs[c][2], D = H * E;
    float *keys = malloc(sizeof(float) * 2 * T * D), *values = malloc(sizeof(float) * 2 * T * D);
    float q[512], out[512], ref[512], *scores = malloc(sizeof(float) * T);
    float *probs = malloc(sizeof(float) * T), *ref_probs = malloc(sizeof(float) * T);
    const float **k_rows = malloc(sizeof(float *) * T), **v_rows = malloc(sizeof(float *) * T);
    fill(keys, (size_t)2 * T * D), fill(values, (size_t)2 * T * D), fill(q, D);
    for (int t = 0; t < T; t++) {  // every other row: the listed keys are the unmasked ones
      k_rows[t] = keys + (size_t)(2 * t) * D;
      v_rows[t] = values + (size_t)(2 * t) * D;
    }
    rmt_attention_row_f32__wasmsimd(out, probs, q, k_rows, v_rows, T, H, E, scores);
    rmt_attention_row_f32__ref(ref, ref_probs, q, k_rows, v_rows, T, H, E, scores);
    float diff = max_abs_diff(out, ref, D), probs_diff = max_abs_diff(probs, ref_probs, T);
    CHECK(diff < 1e-5f, "attention T=%d H=%d E=%d: max diff %g", T, H, E, diff);
    CHECK(probs_diff < 1e-6f, "attention weights T=%d H=%d E=%d: max diff %g", T, H, E, probs_diff);
    double sum = 0;
    for (int t = 0; t < T; t++) sum += probs[t];
    CHECK(fabs(sum - 1) < 1e-5, "attention weights T=%d H=%d sum to %f", T, H, sum);
    // Without probs the output is the same.
    rmt_attention_row_f32__wasmsimd(ref, NULL, q, k_rows, v_rows, T, H, E, scores);
    CHECK(max_abs_diff(out, ref, D) == 0, "attention T=%d: probs changed the output", T);
    free(keys), free(values), free(scores), free(k_rows), free(v_rows), free(probs), free(ref_probs);
  }
  // Masking by omission equals -inf masking: listing keys {0, 2} equals
  // attending over {0, 1, 2} with key 1's score at -inf.
  float k3[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}, v3[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 1, 2, 3}};
  float q[4] = {0.3f, 5.0f, -0.2f, 0}, out[4], scores[3], probs[2];
  const float *kr[2] = {k3[0], k3[2]}, *vr[2] = {v3[0], v3[2]};
  rmt_attention_row_f32__wasmsimd(out, probs, q, kr, vr, 2, 1, 4, scores);
  float s0 = 0.3f, s2 = -0.2f, p0 = expf(s0) / (expf(s0) + expf(s2)), p2 = 1 - p0;
  for (int e = 0; e < 4; e++) CHECK(fabsf(out[e] - (p0 * v3[0][e] + p2 * v3[2][e])) < 1e-5f, "masked attention lane %d", e);
  CHECK(fabsf(probs[0] - p0) < 1e-6f && fabsf(probs[1] - p2) < 1e-6f, "attention weights %g %g, want %g %g", probs[0],
        probs[1], p0, p2);
  // Two heads of width 2: the weights are the mean of the heads' softmaxes.
  rmt_attention_row_f32__wasmsimd(out, probs, q, kr, vr, 2, 2, 2, scores);
  float h0 = expf(0.3f) / (expf(0.3f) + 1);   // head 0 (dims 0, 1): key 0 scores 0.3, key 2 scores 0
  float h1 = 1 / (1 + expf(-0.2f));           // head 1 (dims 2, 3): key 0 scores 0, key 2 scores -0.2
  CHECK(fabsf(probs[0] - (h0 + h1) / 2) < 1e-6f && fabsf(probs[1] - (2 - h0 - h1) / 2) < 1e-6f,
        "two-head weights %g %g", probs[0], probs[1]);
}

// ---- int8 GEMM: both kernels (plain dot_i16x8 with 8- and 16-bit
// activations, and the relaxed dot on activations >= 0, emulated exactly in
// SIMD128 natively) against
// rmt_quantize_row__ref and rmt_gemm_i8__ref, bit for bit: the quantized
// activations, their scales, the integer sums and the scaled outputs.

static int8_t rand_i8(void) { return (int8_t)(randf() * 127.5f); }  // -127..127

// The int8 product as the model runs it on int8 weights (packed8): relaxed
// (offset_sum with activations stored with an offset), or int16 activations.
static void gemm_q(int relaxed, float *C, const uint8_t *aq8, const int16_t *aq16, const float *a_scale,
                   const int8_t *packed8, const int32_t *offset_sum, const float *w_scale, const float *bias, int M,
                   int N, int K) {
  if (relaxed) rmt_gemm_i8_4x8__wasmrelaxed(C, aq8, a_scale, packed8, w_scale, offset_sum, bias, M, N, K);
  else rmt_gemm_w8a16_4x8__wasmsimd(C, aq16, a_scale, packed8, w_scale, bias, M, N, K);
}

// One kernel (relaxed or not: qmax 127, and A >= 0 unless offset, the
// activations' offset for any A) on one shape: 1 when everything matched.
static int check_gemm_i8(int relaxed, int offset, int qmax, int M, int N, int K, const float *A, const int8_t *W,
                         const float *w_scale, const float *bias, const int *rows, int n_rows) {
  int kr = relaxed ? RMT_GEMM_I8_KR_RELAXED : RMT_GEMM_I8_KR_DOT16;
  int Kp = rmt_quantized_row_len(K, kr), ok = 1;
  int32_t *q = malloc(sizeof(int32_t) * M * K);
  float *a_scale = malloc(sizeof(float) * M), *a_scale_simd = malloc(sizeof(float) * M);
  int16_t *aq16 = malloc(sizeof(int16_t) * M * Kp);
  uint8_t *aq8 = malloc((size_t)M * Kp);
  size_t n_packed = rmt_packed_weight_i8_bytes(N, K, kr);
  int8_t *packed = malloc(n_packed);
  float *C = malloc(sizeof(float) * (M * N + 1)), *C_ref = malloc(sizeof(float) * M * N);
  float *ones = malloc(sizeof(float) * (M > N ? M : N));
  for (int i = 0; i < (M > N ? M : N); i++) ones[i] = 1.0f;
  for (int m = 0; m < M; m++) rmt_quantize_row__ref(q + (size_t)m * K, &a_scale[m], A + (size_t)m * K, K, qmax);
  if (relaxed) rmt_quantize_rows_u8__wasmsimd(aq8, a_scale_simd, A, M, K, offset);
  else rmt_quantize_rows_i16__wasmsimd(aq16, a_scale_simd, A, M, K, qmax);
  for (int m = 0; m < M; m++) {
    ok &= memcmp(&a_scale[m], &a_scale_simd[m], sizeof(float)) == 0;
    for (int k = 0; k < Kp; k++) {
      int got = relaxed ? aq8[(size_t)m * Kp + k] : aq16[(size_t)m * Kp + k];
      int want = k < K ? q[(size_t)m * K + k] + offset : 0;
      if (got != want) ok = 0;
    }
  }
  CHECK(ok, "quantize rows (%s, qmax %d, offset %d) M=%d K=%d: differs from the reference", relaxed ? "u8" : "i16",
        qmax, offset, M, K);
  memset(packed, 0x5a, n_packed);  // a byte the pack leaves unwritten would show in the sums below
  rmt_pack_weight_i8(packed, W, N, K, kr);
  int32_t *offset_sum = NULL;
  if (offset) {  // offset * each row's sum
    offset_sum = malloc(sizeof(int32_t) * N);
    rmt_weight_offset_sums(offset_sum, W, N, K);
    int sums_ok = 1;
    for (int n = 0; n < N; n++) {
      int32_t sum = 0;
      for (int k = 0; k < K; k++) sum += W[(size_t)n * K + k];
      sums_ok &= offset_sum[n] == offset * sum;
    }
    CHECK(sums_ok, "weight_offset_sums N=%d K=%d: wrong", N, K);
    ok &= sums_ok;
  }
  // Integer part: unit scales, no bias; the exact sum converted to float as the kernel converts its int32.
  C[M * N] = 42.0f;
  gemm_q(relaxed, C, aq8, aq16, ones, packed, offset_sum, ones, NULL, M, N, K);
  int sums_ok = 1;
  for (int m = 0; m < M && sums_ok; m++) {
    for (int n = 0; n < N && sums_ok; n++) {
      int64_t sum = 0;
      for (int k = 0; k < K; k++) sum += (int64_t)q[(size_t)m * K + k] * W[(size_t)n * K + k];
      float want = (float)sum;
      sums_ok = C[(size_t)m * N + n] == want;
      CHECK(sums_ok, "gemm_i8 (%s) M=%d N=%d K=%d: sum[%d][%d] = %.0f, expected %lld", relaxed ? "relaxed" : "dot16",
            M, N, K, m, n, C[(size_t)m * N + n], (long long)sum);
    }
  }
  ok &= sums_ok;
  // Scaled, with bias: bitwise the reference (same float32 operations in the
  // same order).
  gemm_q(relaxed, C, aq8, aq16, a_scale_simd, packed, offset_sum, w_scale, bias, M, N, K);
  rmt_gemm_i8__ref(C_ref, q, a_scale, W, w_scale, bias, M, N, K);
  int same = memcmp(C, C_ref, sizeof(float) * M * N) == 0;
  CHECK(same, "gemm_i8 (%s) M=%d N=%d K=%d bias=%d: differs from the reference", relaxed ? "relaxed" : "dot16", M, N, K,
        bias != NULL);
  CHECK(C[M * N] == 42.0f, "gemm_i8 M=%d N=%d K=%d wrote past C", M, N, K);
  ok &= same;
  if (rows) {  // gathered rows (a lexical shortlist's output layer): the full GEMM's values of those columns
    int8_t *gathered = malloc(rmt_packed_weight_i8_bytes(n_rows, K, kr));
    float *P = malloc(sizeof(float) * M * n_rows), *scale = malloc(sizeof(float) * n_rows), *b = NULL;
    int32_t *sums = malloc(sizeof(int32_t) * n_rows);
    for (int i = 0; i < n_rows; i++) sums[i] = offset_sum ? offset_sum[rows[i]] : 0;
    rmt_gather_packed_weight_i8(gathered, packed, rows, n_rows, K, kr);
    for (int i = 0; i < n_rows; i++) scale[i] = w_scale[rows[i]];
    if (bias) {
      b = malloc(sizeof(float) * n_rows);
      for (int i = 0; i < n_rows; i++) b[i] = bias[rows[i]];
    }
    gemm_q(relaxed, P, aq8, aq16, a_scale_simd, gathered, offset_sum ? sums : NULL, scale, b, M, n_rows, K);
    for (int m = 0; m < M; m++) {
      for (int i = 0; i < n_rows; i++) {
        float got = P[(size_t)m * n_rows + i], want = C[(size_t)m * N + rows[i]];
        CHECK(memcmp(&got, &want, sizeof got) == 0, "gemm_i8 of gathered rows: C[%d][%d] = %.9g, expected %.9g", m, rows[i], got, want);
      }
    }
    free(gathered), free(P), free(scale), free(b), free(sums);
  }
  free(q), free(a_scale), free(a_scale_simd), free(aq16), free(aq8), free(packed), free(C), free(C_ref);
  free(offset_sum);
  free(ones);
  return ok;
}

static void test_gemm_i8(void) {
  // M % 4: 0..3; N: one row takes 4, 2 or 1 panels at once (29: a last panel of 5 in a 4; 45: in a
  // 2; 69: 4 + 4 + 1); K = 2048: panels of 16 KB, so N >= 45 spans blocks of RMT_GEMM_BLOCK_BYTES
  static const int ms[] = {1, 3, 4, 6, 9}, ns[] = {1, 7, 8, 9, 29, 45, 69}, ks[] = {1, 2, 3, 5, 33, 40, 256, 2048};
  int shapes = 0, good = 0;
  for (int mi = 0; mi < 5; mi++) for (int ni = 0; ni < 7; ni++) for (int ki = 0; ki < 8; ki++) {
    int M = ms[mi], N = ns[ni], K = ks[ki];
    float *A = malloc(sizeof(float) * M * K), *w_scale = malloc(sizeof(float) * N), *bias = malloc(sizeof(float) * N);
    int8_t *W = malloc((size_t)N * K);
    fill(A, (size_t)M * K), fill(bias, N);
    for (int i = 0; i < M * K; i++) A[i] *= 1 + (i % 7);  // rows of different ranges
    if (M > 2) for (int k = 0; k < K; k++) A[K + k] = 0.0f;  // a row of zeros: scale 0, q 0
    for (int i = 0; i < N * K; i++) W[i] = rand_i8();
    W[0] = -127;
    if (N * K > 1) W[(size_t)N * K - 1] = 127;
    for (int n = 0; n < N; n++) w_scale[n] = (1.5f + randf()) / 127.0f;
    static const int rows[] = {44, 0, 9, 10, 17, 3, 40, 41, 42};
    // 8-bit, 16-bit (the output layer's), relaxed with an offset (any input), relaxed (a ReLU's output)
    for (int mode = 0; mode < 4; mode++) {
      int relaxed = mode >= 2, offset = mode == 2 ? RMT_RELAXED_ACT_OFFSET : 0;
      int qmax = mode == 1 ? rmt_qmax_i16(K) : RMT_QMAX_I8;
      if (mode == 3) for (int i = 0; i < M * K; i++) A[i] = A[i] > 0.0f ? A[i] : 0.0f;
      for (int with_bias = 0; with_bias < 2; with_bias++) {
        shapes++;
        good += check_gemm_i8(relaxed, offset, qmax, M, N, K, A, W, w_scale, with_bias ? bias : NULL,
                              N > 40 ? rows : NULL, 9);
      }
    }
    free(A), free(w_scale), free(bias), free(W);
  }
  printf("gemm_i8: %d kernel x shape runs, %d bit-identical to the reference\n", shapes, good);

  // Rounding: half to even, in the vector part (first 8) and the scalar tail.
  float x[10] = {127.0f, 2.5f, -2.5f, 3.5f, 0.5f, -126.5f, 1.5f, -0.5f, 2.5f, -3.5f};
  static const int want[10] = {127, 2, -2, 4, 0, -126, 2, 0, 2, -4};
  int32_t q[10];
  int16_t q16[10];
  float scale, scale16;
  rmt_quantize_row__ref(q, &scale, x, 10, RMT_QMAX_I8);
  rmt_quantize_rows_i16__wasmsimd(q16, &scale16, x, 1, 10, RMT_QMAX_I8);
  CHECK(scale == 1.0f && scale16 == 1.0f, "quantize: scales %g %g", scale, scale16);
  for (int k = 0; k < 10; k++) CHECK(q[k] == want[k] && q16[k] == want[k], "quantize %g: %d, simd %d, expected %d", x[k], q[k], q16[k], want[k]);
  // A row of the smallest denormals: qmax / max|x| overflows to infinity, so
  // x * inv is +-inf, which both clamp to +-qmax (the SIMD rounding's large-value path).
  float tiny[10];
  for (int k = 0; k < 10; k++) tiny[k] = (k % 3 ? -1.0f : 1.0f) * FLT_TRUE_MIN * (float)(1 + k % 2);
  rmt_quantize_row__ref(q, &scale, tiny, 10, RMT_QMAX_I8);
  rmt_quantize_rows_i16__wasmsimd(q16, &scale16, tiny, 1, 10, RMT_QMAX_I8);
  for (int k = 0; k < 10; k++) {
    int w = tiny[k] > 0 ? RMT_QMAX_I8 : -RMT_QMAX_I8;
    CHECK(q[k] == w && q16[k] == w, "quantize denormal %g: %d, simd %d, expected %d", tiny[k], q[k], q16[k], w);
  }
  // An activation overflowed to inf: the scale is inf, inv 0, and inf * 0 is
  // NaN, as is a NaN itself: 0 in the vector part and the scalar tail alike
  // (UBSan: no float-to-int conversion of NaN; WebAssembly would trap on it).
  float bad[10] = {INFINITY, 1.0f, NAN, -2.0f, 0.0f, 1.0f, 2.0f, 3.0f, -INFINITY, NAN};
  rmt_quantize_row__ref(q, &scale, bad, 10, RMT_QMAX_I8);
  rmt_quantize_rows_i16__wasmsimd(q16, &scale16, bad, 1, 10, RMT_QMAX_I8);
  for (int k = 0; k < 10; k++) CHECK(q[k] == 0 && q16[k] == 0, "quantize %g: %d, simd %d, expected 0", bad[k], q[k], q16[k]);

  // 16-bit activations: the largest qmax whose sums stay in int32, and the
  // extreme sum (every q at +qmax, every weight 127) exact at widths where it
  // is closest to 2^31.
  static const int widths[] = {1, 256, 516, 517, 1024, 4096, 65536};
  for (int i = 0; i < 7; i++) {
    int K = widths[i], qmax = rmt_qmax_i16(K);
    int64_t top = (int64_t)RMT_QMAX_I8 * qmax * K, next = (int64_t)RMT_QMAX_I8 * (qmax + 1) * K;
    CHECK(qmax <= RMT_QMAX_I16 && top <= INT32_MAX && (qmax == RMT_QMAX_I16 || next > INT32_MAX),
          "rmt_qmax_i16(%d) = %d", K, qmax);
  }
  for (int i = 3; i < 5; i++) {
    int K = widths[i], qmax = rmt_qmax_i16(K), Kp = rmt_quantized_row_len(K, RMT_GEMM_I8_KR_DOT16);
    float *row = malloc(sizeof(float) * K), one = 1.0f, out;
    int16_t *aq = malloc(sizeof(int16_t) * Kp);
    int8_t *w = malloc((size_t)K);
    int8_t *packed = malloc(rmt_packed_weight_i8_bytes(1, K, RMT_GEMM_I8_KR_DOT16));
    for (int k = 0; k < K; k++) row[k] = 0.25f, w[k] = RMT_QMAX_I8;
    rmt_quantize_rows_i16__wasmsimd(aq, &scale16, row, 1, K, qmax);
    rmt_pack_weight_i8(packed, w, 1, K, RMT_GEMM_I8_KR_DOT16);
    rmt_gemm_w8a16_4x8__wasmsimd(&out, aq, &one, packed, &one, NULL, 1, 1, K);
    float want = (float)((int64_t)RMT_QMAX_I8 * qmax * K);
    CHECK(aq[0] == qmax && out == want, "K=%d qmax=%d: extreme sum %.0f", K, qmax, out);
    free(row), free(aq), free(w), free(packed);
  }
  // Relaxed with an offset at the largest K: every byte 255 (q = 127) or 1
  // (q = -127) against weights of 127, the raw sums 255 * 127 * K closest to 2^31.
  for (int i = 4; i < 7; i += 2) {
    int K = widths[i], Kp = rmt_quantized_row_len(K, RMT_GEMM_I8_KR_RELAXED);
    float *rows2 = malloc(sizeof(float) * 2 * K), one = 1.0f, out[2], scales[2];
    uint8_t *aq = malloc((size_t)2 * Kp);
    int8_t *w = malloc((size_t)K), *packed = malloc(rmt_packed_weight_i8_bytes(1, K, RMT_GEMM_I8_KR_RELAXED));
    int32_t offset_sum;
    for (int k = 0; k < K; k++) rows2[k] = 0.5f, rows2[K + k] = -0.5f, w[k] = RMT_QMAX_I8;
    rmt_quantize_rows_u8__wasmsimd(aq, scales, rows2, 2, K, RMT_RELAXED_ACT_OFFSET);
    rmt_pack_weight_i8(packed, w, 1, K, RMT_GEMM_I8_KR_RELAXED);
    rmt_weight_offset_sums(&offset_sum, w, 1, K);
    float ones2[2] = {1.0f, 1.0f};
    rmt_gemm_i8_4x8__wasmrelaxed(out, aq, ones2, packed, &one, &offset_sum, NULL, 2, 1, K);
    float want = (float)((int64_t)RMT_QMAX_I8 * RMT_QMAX_I8 * K);
    CHECK(aq[0] == 255 && aq[Kp] == 1 && out[0] == want && out[1] == -want, "K=%d offset: extreme sums %.0f %.0f", K,
          out[0], out[1]);
    free(rows2), free(aq), free(w), free(packed);
  }
}

// ---- 16-bit GEMM (the "output_layer": "int16" output layer): weights
// quantized and packed at once, activations to the same qmax, against the
// same arithmetic in plain C (int64 sums): quantized values, sums, scaled
// outputs; gathered rows equal the full product's columns.
static void test_gemm_i16(void) {
  static const int ms[] = {1, 4, 6}, ns[] = {1, 8, 45}, ks[] = {1, 3, 256, 1024};
  int runs = 0, good = 0;
  for (int mi = 0; mi < 3; mi++) for (int ni = 0; ni < 3; ni++) for (int ki = 0; ki < 4; ki++) {
    int M = ms[mi], N = ns[ni], K = ks[ki], qmax = rmt_qmax_w16(K), Kp = rmt_quantized_row_len(K, RMT_GEMM_I8_KR_DOT16);
    float *A = malloc(sizeof(float) * M * K), *W = malloc(sizeof(float) * N * K), *bias = malloc(sizeof(float) * N);
    float *w_scale = malloc(sizeof(float) * N), *a_scale = malloc(sizeof(float) * M), *a_scale_ref = malloc(sizeof(float) * M);
    float *C = malloc(sizeof(float) * (M * N + 1));
    int16_t *packed = malloc(rmt_packed_weight_i16_bytes(N, K)), *aq = malloc(sizeof(int16_t) * M * Kp);
    int32_t *q = malloc(sizeof(int32_t) * M * K);
    fill(A, (size_t)M * K), fill(W, (size_t)N * K), fill(bias, N);
    for (int i = 0; i < M * K; i++) A[i] *= 1 + (i % 5);
    if (N > 1) for (int k = 0; k < K; k++) W[K + k] = 0.0f;  // a row of zeros: scale 1, q 0
    memset(packed, 0x5a, rmt_packed_weight_i16_bytes(N, K));  // what the pack leaves is read as zeros
    rmt_quantize_pack_weight_i16(packed, w_scale, W, N, K, qmax);
    rmt_quantize_rows_i16__wasmsimd(aq, a_scale, A, M, K, qmax);
    int ok = 1;
    for (int n = 0; n < (N + RMT_GEMM_NR - 1) / RMT_GEMM_NR * RMT_GEMM_NR; n++) {
      for (int k = 0; k < Kp; k++) {  // feature n, k: panel n / 8, pair k / 2, lane n % 8
        int16_t got = packed[(size_t)(n / RMT_GEMM_NR) * RMT_GEMM_NR * Kp + (size_t)(k / 2) * RMT_GEMM_NR * 2 + (n % RMT_GEMM_NR) * 2 + k % 2];
        int want = n < N && k < K ? rmt_quantize_weight(W[(size_t)n * K + k], rmt_weight_scale(W + (size_t)n * K, K, qmax), qmax) : 0;
        ok &= got == want;
      }
    }
    for (int m = 0; m < M; m++) {
      rmt_quantize_row__ref(q + (size_t)m * K, &a_scale_ref[m], A + (size_t)m * K, K, qmax);
      ok &= a_scale[m] == a_scale_ref[m];
      for (int k = 0; k < K; k++) ok &= aq[(size_t)m * Kp + k] == q[(size_t)m * K + k];
    }
    C[M * N] = 42.0f;
    rmt_gemm_i16_4x8__wasmsimd(C, aq, a_scale, packed, w_scale, bias, M, N, K);
    for (int m = 0; m < M; m++) {
      for (int n = 0; n < N; n++) {
        float scale = rmt_weight_scale(W + (size_t)n * K, K, qmax);
        int64_t sum = 0;
        for (int k = 0; k < K; k++) sum += (int64_t)q[(size_t)m * K + k] * rmt_quantize_weight(W[(size_t)n * K + k], scale, qmax);
        float want = (float)sum * a_scale_ref[m] * scale + bias[n], got = C[(size_t)m * N + n];
        ok &= scale == w_scale[n] && sum <= INT32_MAX && -sum <= INT32_MAX;
        ok &= got == want;
      }
    }
    ok &= C[M * N] == 42.0f;
    if (N == 45) {  // the shortlist's gathered rows
      static const int rows[] = {44, 0, 9, 10, 17, 3, 40, 41, 42};
      int16_t *gathered = malloc(rmt_packed_weight_i16_bytes(9, K));
      float *P = malloc(sizeof(float) * M * 9), s[9], b[9];
      for (int i = 0; i < 9; i++) s[i] = w_scale[rows[i]], b[i] = bias[rows[i]];
      rmt_gather_packed_weight_i16(gathered, packed, rows, 9, K);
      rmt_gemm_i16_4x8__wasmsimd(P, aq, a_scale, gathered, s, b, M, 9, K);
      for (int m = 0; m < M; m++) {
        for (int i = 0; i < 9; i++) {  // bitwise, as in test_gemm_i8
          float got = P[m * 9 + i], want = C[(size_t)m * N + rows[i]];
          ok &= memcmp(&got, &want, sizeof got) == 0;
        }
      }
      free(gathered), free(P);
    }
    CHECK(ok, "gemm_i16 M=%d N=%d K=%d qmax=%d: differs from the reference", M, N, K, qmax);
    runs++, good += ok;
    free(A), free(W), free(bias), free(w_scale), free(a_scale), free(a_scale_ref), free(C), free(packed), free(aq), free(q);
  }
  printf("gemm_i16: %d shapes, %d as the reference\n", runs, good);

  // The largest qmax whose sums stay in int32, and the extreme sum exact.
  static const int widths[] = {1, 256, 257, 1024, 65536};
  for (int i = 0; i < 5; i++) {
    int K = widths[i], qmax = rmt_qmax_w16(K);
    int64_t top = (int64_t)qmax * qmax * K, next = (int64_t)(qmax + 1) * (qmax + 1) * K;
    CHECK(qmax <= RMT_QMAX_I16 && top <= INT32_MAX && (qmax == RMT_QMAX_I16 || next > INT32_MAX), "rmt_qmax_w16(%d) = %d", K, qmax);
  }
  CHECK(rmt_qmax_w16(256) == 2896, "rmt_qmax_w16(256) = %d", rmt_qmax_w16(256));
  int K = 1024, qmax = rmt_qmax_w16(K);
  float *row = malloc(sizeof(float) * K), scale, one = 1.0f, out;
  int16_t *aq = malloc(sizeof(int16_t) * K), *packed = malloc(rmt_packed_weight_i16_bytes(1, K));
  for (int k = 0; k < K; k++) row[k] = -0.5f;
  rmt_quantize_pack_weight_i16(packed, &scale, row, 1, K, qmax);
  rmt_quantize_rows_i16__wasmsimd(aq, &scale, row, 1, K, qmax);
  rmt_gemm_i16_4x8__wasmsimd(&out, aq, &one, packed, &one, NULL, 1, 1, K);
  float want = (float)((int64_t)qmax * qmax * K);
  CHECK(out == want, "gemm_i16 K=%d: extreme sum %.0f", K, out);
  free(row), free(aq), free(packed);
}

int main(void) {
  // The kernels' checks are bitwise, as WebAssembly computes float32: every
  // build's float arithmetic must be float32 (the i386 one SSE2's, not x87's).
  CHECK(FLT_EVAL_METHOD == 0, "float arithmetic is not float32 here (FLT_EVAL_METHOD %d): build with SSE2 math",
        (int)FLT_EVAL_METHOD);
  test_gemm();
  test_gemm_i8();
  test_gemm_i16();
  test_layer_norm();
  test_elementwise();
  test_f16_to_f32();
  test_first_nonfinite();
  test_first_nonfinite_f16();
  test_softmax();
  test_softmax_simd();
  test_swish_simd();
  test_ssru_cell_simd();
  test_log_softmax_simd();
  test_attention_rows();
  test_attention();
  return test_report("test_kernels");
}
