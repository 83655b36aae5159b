// The language identifier (src/langid.h): its features, a hand-made model
// whose answer is known, every kind of bad model file (each an error, never a
// crash), and the shipped model on sentences in known languages and against
// the probabilities its trainer computed (tests/fixtures/langid/golden.json).
#include <stdint.h>

#include "langid.h"
#include "testutil.h"

static int features(const char *text, const int32_t *orders, const int32_t *buckets, int groups, int32_t *rows,
                    int cap) {
  int32_t g[256];
  return rmt_langid_features(text, strlen(text), orders, buckets, groups, rows, g, cap);
}

static void test_features(void) {
  int32_t orders[3] = {0, 1, 2}, buckets[3] = {1000, 1000, 1000}, a[256], b[256];
  // 2 words + 10 letters + (6 + 6) bigrams of " hello " and " world "
  CHECK(features("Hello, World!", orders, buckets, 3, a, 256) == 24, "features of Hello, World!");
  CHECK(features("Hello, World!", orders, buckets, 3, a, 4) == 24, "a short cap still counts every feature");
  int n = features("HELLO", orders, buckets, 3, a, 256);
  CHECK(n == features("hello", orders, buckets, 3, b, 256) && !memcmp(a, b, sizeof *a * (size_t)n), "ASCII folds");
  n = features("ÀÉÎ ŁÓDŹ ПРИВЕТ ΑΒΓ", orders, buckets, 3, a, 256);
  CHECK(n == features("àéî łódź привет αβγ", orders, buckets, 3, b, 256) && !memcmp(a, b, sizeof *a * (size_t)n),
        "Latin-1, Latin Extended-A, Cyrillic and Greek fold");
  CHECK(features("123 !! -- 4.5", orders, buckets, 3, a, 256) == 0, "digits and punctuation are no features");
  CHECK(features("\xff\xfe\xc3", orders, buckets, 3, a, 256) == 0, "invalid UTF-8 is no features");
  CHECK(features("ab\xc3", orders, buckets, 3, a, 256) == features("ab", orders, buckets, 3, b, 256),
        "a cut sequence at the end separates");
  CHECK(features("日本語", orders, buckets, 3, a, 256) == 1 + 3 + 4, "CJK characters are letters");
  char long_word[200];
  memset(long_word, 'a', 130);
  long_word[130] = 0;
  CHECK(features(long_word, orders + 1, buckets + 1, 1, a, 256) == 130, "a long word's letters all count");
  int32_t bad_order[1] = {9}, bad_buckets[1] = {0};
  CHECK(features("abc", bad_order, buckets, 1, a, 256) == RMT_E_INVALID, "order 9 is refused");
  CHECK(features("abc", orders, bad_buckets, 1, a, 256) == RMT_E_INVALID, "0 rows are refused");
  CHECK(rmt_langid_features(NULL, 0, orders, buckets, 3, a, b, 256) == 0, "no text: no features");
}

// ---------------------------------------------------------------- a model in memory

typedef struct {
  const char *name, *dtype;
  int64_t rows, cols;  // cols 0: a vector
  const void *data;
  size_t bytes;
} tensor_spec;

// A safetensors file of the tensors and metadata (a JSON object's body); its size in *size.
static uint8_t *build_file(const tensor_spec *t, int n, const char *metadata, size_t *size) {
  char header[4096];
  int len = snprintf(header, sizeof header, "{\"__metadata__\":{%s}", metadata);
  size_t offset = 0;
  for (int i = 0; i < n; i++) {
    char shape[64];
    if (t[i].cols) snprintf(shape, sizeof shape, "[%lld,%lld]", (long long)t[i].rows, (long long)t[i].cols);
    else snprintf(shape, sizeof shape, "[%lld]", (long long)t[i].rows);
    len += snprintf(header + len, sizeof header - (size_t)len, ",\"%s\":{\"dtype\":\"%s\",\"shape\":%s,"
                    "\"data_offsets\":[%zu,%zu]}", t[i].name, t[i].dtype, shape, offset, offset + t[i].bytes);
    offset += t[i].bytes;
  }
  len += snprintf(header + len, sizeof header - (size_t)len, "}");
  *size = 8 + (size_t)len + offset;
  uint8_t *file = malloc(*size);
  for (int i = 0; i < 8; i++) file[i] = (uint8_t)((uint64_t)len >> (8 * i));
  memcpy(file + 8, header, (size_t)len);
  offset = 8 + (size_t)len;
  for (int i = 0; i < n; i++, offset += t[i - 1].bytes) memcpy(file + offset, t[i].data, t[i].bytes);
  return file;
}

#define META "\"format\":\"rmt-langid\",\"version\":\"1\",\"languages\":\"xa,xb\",\"orders\":\"1\""
enum { ROWS = 64 };
static int8_t table[ROWS * 2];
static const float one_scale = 0.5f, out_w[4] = {4, 0, 0, 4}, out_b[2] = {0, 0};

// One table of letters: the row of 'a' points at language xa, every other row at xb.
static uint8_t *toy_model(size_t *size, const char *metadata, int drop, const tensor_spec *extra) {
  int32_t order = 1, buckets = ROWS, row, group;
  rmt_langid_features("a", 1, &order, &buckets, 1, &row, &group, 1);
  for (int r = 0; r < ROWS; r++) table[2 * r] = r == row ? 2 : 0, table[2 * r + 1] = r == row ? 0 : 2;
  tensor_spec t[6] = {
      {"output.bias", "F32", 2, 0, out_b, sizeof out_b},
      {"output.weight", "F32", 2, 2, out_w, sizeof out_w},
      {"table.0", "I8", ROWS, 2, table, sizeof table},
      {"table.0.qscale", "F32", 1, 0, &one_scale, 4},
  };
  int n = 4;
  if (drop >= 0) t[drop] = t[--n];
  if (extra) t[n++] = *extra;
  return build_file(t, n, metadata ? metadata : META, size);
}

// (size by pointer: the file's builder sets it, and C leaves the order of arguments open)
static void expect_refused(uint8_t *file, const size_t *size, const char *what, const char *needle) {
  rmt_langid *m = rmt_langid_load(file, *size);
  CHECK(!m && rmt_last_error_code() == RMT_E_FORMAT && strstr(rmt_last_error(), needle), "%s refused (%s)", what,
        rmt_last_error());
  rmt_langid_free(m);
  free(file);
}

static void test_toy_model(void) {
  size_t size;
  uint8_t *file = toy_model(&size, NULL, -1, NULL);
  rmt_langid *m = rmt_langid_load(file, size);
  CHECK(m != NULL, "the toy model loads: %s", rmt_last_error());
  if (!m) return;
  CHECK(rmt_langid_n_languages(m) == 2 && !strcmp(rmt_langid_language(m, 1), "xb") && !rmt_langid_language(m, 2),
        "its languages");
  rmt_langid_state *s = rmt_langid_state_new(m);
  CHECK(rmt_langid_detect(s, "aaa a", 5) == 4, "4 letters");
  const float *p = rmt_langid_probs(s);
  // x = 0.5 * 2 = 1 on xa's side: logits (4, 0)
  CHECK(fabsf(p[0] - 1 / (1 + expf(-4))) < 1e-6f && fabsf(p[0] + p[1] - 1) < 1e-6f, "aaa is xa: %g", p[0]);
  rmt_langid_detect(s, "AAA", 3);
  CHECK(p[0] > 0.9f, "AAA is xa too");
  CHECK(rmt_langid_detect(s, "bcd", 3) == 3 && p[1] > 0.9f, "bcd is xb: %g", p[1]);
  CHECK(rmt_langid_detect(s, "12 ?", 4) == 0 && p[0] == 0 && p[1] == 0, "no letters: no probabilities");
  rmt_langid_state_free(s);
  rmt_langid_free(m);
  // every cut of the file is refused, never read past
  for (size_t cut = 0; cut < size; cut++) {
    uint8_t *part = malloc(cut ? cut : 1);
    memcpy(part, file, cut);
    rmt_langid *bad = rmt_langid_load(part, cut);
    CHECK(!bad, "the file cut at %zu bytes is refused", cut);
    rmt_langid_free(bad);
    free(part);
  }
  free(file);
}

static void test_bad_models(void) {
  size_t size;
  expect_refused(toy_model(&size, "\"format\":\"other\",\"version\":\"1\",\"languages\":\"xa,xb\",\"orders\":\"1\"", -1,
                           NULL), &size, "another format", "format");
  expect_refused(toy_model(&size, "\"format\":\"rmt-langid\",\"version\":\"2\",\"languages\":\"xa,xb\",\"orders\":\"1\"",
                           -1, NULL), &size, "version 2", "version");
  expect_refused(toy_model(&size, "\"format\":\"rmt-langid\",\"version\":\"1\",\"orders\":\"1\"", -1, NULL), &size,
                 "no languages", "languages");
  expect_refused(toy_model(&size, "\"format\":\"rmt-langid\",\"version\":\"1\",\"languages\":\"xa\",\"orders\":\"1\"",
                           -1, NULL), &size, "one language for two outputs", "languages");
  expect_refused(toy_model(&size, "\"format\":\"rmt-langid\",\"version\":\"1\",\"languages\":\"x a,xb\",\"orders\":\"1\"",
                           -1, NULL), &size, "a tag with a space", "languages");
  expect_refused(toy_model(&size, "\"format\":\"rmt-langid\",\"version\":\"1\",\"languages\":\"xa,xb\",\"orders\":\"12\"",
                           -1, NULL), &size, "order 12", "orders");
  expect_refused(toy_model(&size, "\"format\":\"rmt-langid\",\"version\":\"1\",\"languages\":\"xa,xb\",\"orders\":\"1,2\"",
                           -1, NULL), &size, "two orders, one table", "table.1");
  expect_refused(toy_model(&size, NULL, 2, NULL), &size, "no table", "table.0");
  expect_refused(toy_model(&size, NULL, 1, NULL), &size, "no output.weight", "output.weight");
  expect_refused(toy_model(&size, NULL, 0, NULL), &size, "no output.bias", "output.bias");
  static const float three[3] = {0, 0, 0};
  tensor_spec extra = {"unused", "F32", 3, 0, three, sizeof three};
  expect_refused(toy_model(&size, NULL, -1, &extra), &size, "an unknown tensor", "unknown tensor unused");
  tensor_spec wrong_bias = {"hidden.bias", "F32", 3, 0, three, sizeof three};
  expect_refused(toy_model(&size, NULL, -1, &wrong_bias), &size, "a hidden layer without weights", "hidden.weight");
  static const float nan_w[4] = {NAN, 0, 0, 1};
  tensor_spec t[4] = {{"output.bias", "F32", 2, 0, out_b, sizeof out_b}, {"output.weight", "F32", 2, 2, nan_w, sizeof nan_w},
                      {"table.0", "I8", ROWS, 2, table, sizeof table}, {"table.0.qscale", "F32", 1, 0, &one_scale, 4}};
  expect_refused(build_file(t, 4, META, &size), &size, "a NaN weight", "non-finite");
  static const float bad_scale = -1;
  t[1].data = out_w;
  t[3].data = &bad_scale;
  expect_refused(build_file(t, 4, META, &size), &size, "a negative scale", "qscale");
  t[3].data = &one_scale;
  t[1].rows = 1;
  t[1].bytes = 8;
  expect_refused(build_file(t, 4, META, &size), &size, "output.weight of the wrong shape", "wrong shape");
  CHECK(rmt_langid_load(NULL, 0) == NULL, "no bytes");
}

// ---------------------------------------------------------------- the shipped model

static int top_language(const rmt_langid *m, rmt_langid_state *s, const char *text) {
  rmt_langid_detect(s, text, strlen(text));
  const float *p = rmt_langid_probs(s);
  int best = 0;
  for (int i = 1; i < rmt_langid_n_languages(m); i++) best = p[i] > p[best] ? i : best;
  return best;
}

static void test_shipped_model(void) {
  size_t size;
  char *bytes = read_file("models/langid/model.safetensors", &size);
  if (!bytes) {
    printf("(no models/langid/model.safetensors: shipped-model checks skipped)\n");
    return;
  }
  rmt_langid *m = rmt_langid_load((const uint8_t *)bytes, size);
  CHECK(m != NULL, "the shipped model loads: %s", rmt_last_error());
  free(bytes);
  if (!m) return;
  rmt_langid_state *s = rmt_langid_state_new(m);
  char *golden = read_file("tests/fixtures/langid/golden.json", &size);
  rmt_json json;
  if (golden && rmt_json_parse(&json, golden, size, "golden.json") == 0) {
    int cases = rmt_json_find(&json, 0, "cases");
    for (int k = 0; cases >= 0 && k < json.tokens[cases].size; k++) {
      int c = json_at(&json, cases, k);
      char text[1024], lang[RMT_LANGID_TAG_MAX];
      double probs[RMT_LANGID_MAX_LANGS];
      rmt_json_string(&json, rmt_json_find(&json, c, "text"), text, sizeof text);
      rmt_json_string(&json, rmt_json_find(&json, c, "language"), lang, sizeof lang);
      int n = json_numbers(&json, rmt_json_find(&json, c, "probs"), probs, RMT_LANGID_MAX_LANGS);
      int best = top_language(m, s, text);
      CHECK(!strcmp(rmt_langid_language(m, best), lang), "%s: %s, expected %s", text, rmt_langid_language(m, best), lang);
      double worst = 0;
      for (int i = 0; i < n && i < rmt_langid_n_languages(m); i++) {
        double d = fabs(probs[i] - rmt_langid_probs(s)[i]);
        worst = d > worst ? d : worst;
      }
      CHECK(n == rmt_langid_n_languages(m) && worst < 1e-4, "%s: probabilities off the trainer's by %g", text, worst);
    }
    rmt_json_free(&json);
  } else {
    CHECK(0, "tests/fixtures/langid/golden.json is missing or not JSON");
  }
  free(golden);
  rmt_langid_state_free(s);
  rmt_langid_free(m);
}

int main(void) {
  test_features();
  test_toy_model();
  test_bad_models();
  test_shipped_model();
  return test_report("test_langid");
}
