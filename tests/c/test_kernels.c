// SIMD kernels against their plain C twins on odd sizes.
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
  // 1-row tail): bitwise, so that a sentence translates the same in any batch.
  int M = 7, N = 45, K = 33;
  float *A = malloc(sizeof(float) * M * K), *W = malloc(sizeof(float) * N * K), *bias = malloc(sizeof(float) * N);
  float *packed = malloc(sizeof(float) * rmt_packed_weight_floats(N, K));
  float *C = malloc(sizeof(float) * M * N), row[45];
  fill(A, (size_t)M * K), fill(W, (size_t)N * K), fill(bias, N);
  rmt_pack_weight(packed, W, N, K);
  rmt_gemm_f32_4x8__wasmsimd(C, A, packed, bias, M, N, K);
  for (int m = 0; m < M; m++) {
    rmt_gemm_f32_4x8__wasmsimd(row, A + (size_t)m * K, packed, bias, 1, N, K);
    CHECK(memcmp(row, C + (size_t)m * N, sizeof row) == 0, "gemm row %d differs between M=%d and M=1", m, M);
  }
  // Listed panels only (the last one partial): bitwise the full GEMM's values
  // there, nothing written elsewhere; 4-row tiles and the 1-row tail both.
  static const int panels[] = {0, 2, 5};
  float *P = malloc(sizeof(float) * M * N);
  for (size_t i = 0; i < (size_t)M * N; i++) P[i] = 42.0f;
  rmt_gemm_f32_4x8_panels__wasmsimd(P, A, packed, bias, M, N, K, panels, 3);
  for (int m = 0; m < M; m++) {
    for (int n = 0; n < N; n++) {
      int listed = n / RMT_GEMM_NR == 0 || n / RMT_GEMM_NR == 2 || n / RMT_GEMM_NR == 5;
      float want = listed ? C[(size_t)m * N + n] : 42.0f;
      CHECK(memcmp(&P[(size_t)m * N + n], &want, sizeof want) == 0, "gemm panels: C[%d][%d] = %g, expected %g", m, n,
            P[(size_t)m * N + n], want);
    }
  }
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

static void test_softmax(void) {
  float x[5] = {1, 2, 3, -INFINITY, 0.5f}, lx[5];
  rmt_log_softmax_f32(lx, x, 5);
  rmt_softmax_f32(x, 5);
  double sum = 0;
  for (int i = 0; i < 5; i++) sum += x[i];
  CHECK(fabs(sum - 1) < 1e-6, "softmax sums to %f", sum);
  CHECK(x[3] == 0 && isinf(lx[3]) && lx[3] < 0, "masked entry is not zero / -inf");
  for (int i = 0; i < 5; i++) {
    if (i != 3) CHECK(fabsf(expf(lx[i]) - x[i]) < 1e-6f, "log_softmax and softmax disagree at %d", i);
  }
  // Large values do not overflow.
  float big[3] = {1000, 1001, 1002};
  rmt_softmax_f32(big, 3);
  CHECK(isfinite(big[0]) && big[2] > big[1], "softmax overflowed");
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

int main(void) {
  test_gemm();
  test_layer_norm();
  test_elementwise();
  test_softmax();
  test_attention();
  return test_report("test_kernels");
}
