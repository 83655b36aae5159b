// The native engine against the PyTorch reference fixtures
// (tests/fixtures/models/*/reference.json, made by models/make_fixtures.py),
// and the loader's and translator's answers to bad input.
#include "model.h"
#include "rmt.h"
#include "testutil.h"
#include "translation.h"

static const char *MODELS[] = {"post-2x2", "post-3x1", "pre-2x2", "pre-3x1", "residual-2x2", "residual-3x1"};
#define MAX_FLOATS 200000

typedef struct {
  char *config, *weights, *ref_text;
  size_t config_len, weights_len;
  rmt_json ref;
} fixture;

static int fixture_open(fixture *f, const char *name) {
  char path[256];
  size_t ref_len;
  snprintf(path, sizeof path, "tests/fixtures/models/%s/config.json", name);
  f->config = read_file(path, &f->config_len);
  snprintf(path, sizeof path, "tests/fixtures/models/%s/model.safetensors", name);
  f->weights = read_file(path, &f->weights_len);
  snprintf(path, sizeof path, "tests/fixtures/models/%s/reference.json", name);
  f->ref_text = read_file(path, &ref_len);
  if (!f->config || !f->weights || !f->ref_text) return -1;
  return rmt_json_parse(&f->ref, f->ref_text, ref_len, "reference.json");
}

static void fixture_close(fixture *f) {
  rmt_json_free(&f->ref);
  free(f->config), free(f->weights), free(f->ref_text);
}

// The fixture's sentences as packed ids + lengths.
static int fixture_sentences(const fixture *f, int32_t *ids, int32_t *lens) {
  int arr = rmt_json_find(&f->ref, 0, "sentences"), n = f->ref.tokens[arr].size, used = 0;
  double buf[256];
  for (int s = 0; s < n; s++) {
    lens[s] = json_numbers(&f->ref, json_at(&f->ref, arr, s), buf, 256);
    for (int t = 0; t < lens[s]; t++) ids[used++] = (int32_t)buf[t];
  }
  return n;
}

typedef struct {
  double encoder, logits, score;
  int sequences, sequences_equal;
} errors;

static void check_model(const char *name, errors *err) {
  fixture f;
  if (fixture_open(&f, name)) {
    CHECK(0, "%s: cannot read fixture", name);
    return;
  }
  rmt_model *model = rmt_model_load(f.config, f.config_len, (const uint8_t *)f.weights, f.weights_len);
  CHECK(model, "%s: load failed: %s", name, rmt_last_error());
  if (!model) return fixture_close(&f);
  const rmt_config *c = &model->config;
  int32_t ids[512], lens[16];
  int n = fixture_sentences(&f, ids, lens);
  double *expect = malloc(sizeof(double) * MAX_FLOATS);

  // Encoder output and teacher-forced logits, beam 1.
  rmt_search_params p;
  rmt_search_params_default(&p);
  p.beam = 1;
  rmt_translation *tr = rmt_translation_begin(model, ids, lens, n, &p);
  CHECK(tr, "%s: begin failed: %s", name, rmt_last_error());
  int enc = rmt_json_find(&f.ref, 0, "encoder_out");
  for (int s = 0; s < n; s++) {
    int count = json_numbers(&f.ref, json_at(&f.ref, enc, s), expect, MAX_FLOATS);
    CHECK(count == (lens[s] + 1) * c->d_model, "%s: encoder_out size", name);
    const float *got = rmt_translation_encoder_out(tr, s);
    for (int i = 0; i < count; i++) err->encoder = fmax(err->encoder, fabs(got[i] - expect[i]));
  }
  int forced = rmt_json_find(&f.ref, 0, "forced");
  int prev = rmt_json_find(&f.ref, forced, "prev_tokens"), logits = rmt_json_find(&f.ref, forced, "logits");
  double prev_ids[16][64];
  int T = 0;
  for (int s = 0; s < n; s++) T = json_numbers(&f.ref, json_at(&f.ref, prev, s), prev_ids[s], 64);
  for (int t = 0; t < T; t++) {
    int32_t step_tokens[16];
    for (int s = 0; s < n; s++) step_tokens[s] = (int32_t)prev_ids[s][t];
    CHECK(rmt_translation_force_step(tr, step_tokens) == 0, "%s: force_step: %s", name, rmt_last_error());
    const float *got = rmt_translation_logits(tr);
    for (int s = 0; s < n; s++) {
      json_numbers(&f.ref, json_at(&f.ref, logits, s), expect, MAX_FLOATS);
      for (int v = 0; v < c->vocab_size; v++) {
        err->logits = fmax(err->logits, fabs(got[(size_t)s * c->vocab_size + v] - expect[(size_t)t * c->vocab_size + v]));
      }
    }
  }
  rmt_translation_free(tr);

  // Searches: greedy and beams, the whole batch at once.
  int searches = rmt_json_find(&f.ref, 0, "searches");
  for (int k = 0; k < f.ref.tokens[searches].size; k++) {
    int search = json_at(&f.ref, searches, k);
    double beam, lenpen, nbest;
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "beam"), &beam);
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "lenpen"), &lenpen);
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "nbest"), &nbest);
    p.beam = (int)beam, p.lenpen = lenpen, p.nbest = (int)nbest;
    tr = rmt_translation_begin(model, ids, lens, n, &p);
    CHECK(tr && rmt_translation_run(tr) == 0, "%s: beam %d failed: %s", name, p.beam, rmt_last_error());
    int hyps = rmt_json_find(&f.ref, search, "hyps");
    for (int s = 0; s < n && tr; s++) {
      int sent = json_at(&f.ref, hyps, s);
      CHECK(rmt_translation_n_hyps(tr, s) == f.ref.tokens[sent].size, "%s beam %d sentence %d: %d hypotheses, expected %d",
            name, p.beam, s, rmt_translation_n_hyps(tr, s), f.ref.tokens[sent].size);
      for (int h = 0; h < f.ref.tokens[sent].size; h++) {
        int hyp = json_at(&f.ref, sent, h);
        int want_len = json_numbers(&f.ref, rmt_json_find(&f.ref, hyp, "tokens"), expect, 256);
        double want_score;
        rmt_json_number(&f.ref, rmt_json_find(&f.ref, hyp, "score"), &want_score);
        int32_t got[256];
        float score;
        int len = rmt_translation_hyp(tr, s, h, got, 256, &score, NULL);
        int same = len == want_len;
        for (int i = 0; same && i < len; i++) same = got[i] == (int32_t)expect[i];
        err->sequences++;
        err->sequences_equal += same;
        CHECK(same, "%s beam %d sentence %d hyp %d: tokens differ (len %d vs %d)", name, p.beam, s, h, len, want_len);
        if (same) err->score = fmax(err->score, fabs(score - want_score));
      }
    }
    rmt_translation_free(tr);
  }

  // A long input, near max_positions.
  int longest = rmt_json_find(&f.ref, 0, "long");
  int32_t long_ids[1024], long_len = json_numbers(&f.ref, rmt_json_find(&f.ref, longest, "sentence"), expect, 1024);
  for (int i = 0; i < long_len; i++) long_ids[i] = (int32_t)expect[i];
  p.beam = 1, p.nbest = 1, p.lenpen = 1.0;
  tr = rmt_translation_begin(model, long_ids, &long_len, 1, &p);
  CHECK(tr && rmt_translation_run(tr) == 0, "%s: long input failed: %s", name, rmt_last_error());
  int want_len = json_numbers(&f.ref, rmt_json_find(&f.ref, longest, "greedy"), expect, 1024);
  int32_t got[1024];
  int len = tr ? rmt_translation_hyp(tr, 0, 0, got, 1024, NULL, NULL) : -1;
  int same = len == want_len;
  for (int i = 0; same && i < len; i++) same = got[i] == (int32_t)expect[i];
  CHECK(same, "%s: long input greedy output differs", name);
  rmt_translation_free(tr);

  free(expect);
  rmt_model_free(model);
  fixture_close(&f);
}

// ---------------------------------------------------------------- bad input

// Copies the file with the first occurrence of `from` in the header replaced by
// `to` (the 8-byte length prefix updated); returns the new size.
static size_t edit_header(const char *file, size_t size, const char *from, const char *to, char **out) {
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; i--) header_len = header_len << 8 | (unsigned char)file[i];
  char *header = malloc(header_len + 1);
  memcpy(header, file + 8, header_len);
  header[header_len] = 0;
  char *at = strstr(header, from);
  size_t new_header = header_len + strlen(to) - strlen(from);
  *out = malloc(size + strlen(to) + 8);
  for (int i = 0; i < 8; i++) (*out)[i] = (char)(new_header >> (8 * i));
  size_t before = at ? (size_t)(at - header) : header_len;
  memcpy(*out + 8, header, before);
  size_t pos = 8 + before;
  if (at) {
    memcpy(*out + pos, to, strlen(to));
    pos += strlen(to);
    memcpy(*out + pos, at + strlen(from), header_len - before - strlen(from));
    pos += header_len - before - strlen(from);
  }
  memcpy(*out + pos, file + 8 + header_len, size - 8 - header_len);
  free(header);
  return pos + size - 8 - header_len;
}

static void expect_load_error(const fixture *f, const char *config, const char *weights, size_t weights_len,
                              const char *needle, const char *what) {
  rmt_model *model = rmt_model_load(config ? config : f->config, config ? strlen(config) : f->config_len,
                                    (const uint8_t *)weights, weights_len);
  CHECK(!model, "%s: load succeeded", what);
  CHECK(strstr(rmt_last_error(), needle), "%s: error \"%s\" lacks \"%s\"", what, rmt_last_error(), needle);
  rmt_model_free(model);
}

static char *replace_in(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  char *out = malloc(strlen(text) + strlen(to) + 1);
  size_t before = at ? (size_t)(at - text) : strlen(text);
  memcpy(out, text, before);
  strcpy(out + before, at ? to : "");
  if (at) strcat(out, at + strlen(from));
  return out;
}

static void check_bad_input(void) {
  fixture f;
  if (fixture_open(&f, "residual-2x2")) {
    CHECK(0, "cannot read fixture");
    return;
  }
  char *bad;
  size_t n;
  expect_load_error(&f, NULL, f.weights, f.weights_len / 2, "beyond", "truncated file");
  expect_load_error(&f, NULL, f.weights, 5, "too short", "5-byte file");
  bad = malloc(f.weights_len);
  memcpy(bad, f.weights, f.weights_len);
  bad[6] = 0x7f;  // header length ~2^55
  expect_load_error(&f, NULL, bad, f.weights_len, "header length", "header length beyond the file");
  memcpy(bad, f.weights, f.weights_len);
  bad[8] = '[';  // the header's opening brace
  expect_load_error(&f, NULL, bad, f.weights_len, "malformed JSON", "malformed header JSON");
  free(bad);
  n = edit_header(f.weights, f.weights_len, "\"decoder.layers.0.fc1.bias\"", "\"decoder.layers.0.fc1.bia_\"", &bad);
  expect_load_error(&f, NULL, bad, n, "missing tensor decoder.layers.0.fc1.bias", "missing tensor");
  free(bad);
  n = edit_header(f.weights, f.weights_len, "{", "{\"extra.weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},", &bad);
  expect_load_error(&f, NULL, bad, n, "unknown tensor extra.weight", "extra unknown tensor");
  free(bad);
  n = edit_header(f.weights, f.weights_len, "\"decoder.layers.0.fc1.bias\":{\"dtype\":\"F32\",\"shape\":[76]",
                  "\"decoder.layers.0.fc1.bias\":{\"dtype\":\"F32\",\"shape\":[38,2]", &bad);
  expect_load_error(&f, NULL, bad, n, "decoder.layers.0.fc1.bias has shape [38, 2], expected [76]", "wrong shape");
  free(bad);
  n = edit_header(f.weights, f.weights_len, "\"dtype\":\"F32\"", "\"dtype\":\"I32\"", &bad);
  expect_load_error(&f, NULL, bad, n, "unsupported dtype I32", "unsupported dtype");
  free(bad);
  char *config = replace_in(f.config, "\"n_heads\": 4", "\"n_heads\": 5");
  expect_load_error(&f, config, f.weights, f.weights_len, "not divisible by n_heads", "d_model not divisible by n_heads");
  free(config);
  config = replace_in(f.config, "\"d_model\": 64", "\"d_model\": 32");
  expect_load_error(&f, config, f.weights, f.weights_len, "expected [101, 32]", "config d_model inconsistent with weights");
  free(config);
  expect_load_error(&f, "{\"style\": \"residual\"", f.weights, f.weights_len, "malformed JSON", "truncated config");

  // After failed loads, loading works and translation rejects bad ids.
  rmt_model *model = rmt_model_load(f.config, f.config_len, (const uint8_t *)f.weights, f.weights_len);
  CHECK(model, "load after failures: %s", rmt_last_error());
  rmt_search_params p;
  rmt_search_params_default(&p);
  int32_t ids[100] = {5, 6, 101}, lens[2] = {3, 0};
  CHECK(!rmt_translation_begin(model, ids, lens, 1, &p) && strstr(rmt_last_error(), "outside the vocabulary"),
        "token id out of vocabulary: %s", rmt_last_error());
  ids[2] = 7;
  CHECK(!rmt_translation_begin(model, ids, lens, 2, &p) && strstr(rmt_last_error(), "empty input"),
        "empty sentence: %s", rmt_last_error());
  CHECK(!rmt_translation_begin(model, ids, lens, 0, &p) && strstr(rmt_last_error(), "empty input"),
        "no sentences: %s", rmt_last_error());
  for (int i = 0; i < 100; i++) ids[i] = 4 + i % 90;
  lens[0] = 64;  // max_positions is 64, and </s> takes one
  CHECK(!rmt_translation_begin(model, ids, lens, 1, &p) && strstr(rmt_last_error(), "too long"),
        "input longer than max positions: %s", rmt_last_error());
  lens[0] = 63;
  rmt_translation *tr = rmt_translation_begin(model, ids, lens, 1, &p);
  CHECK(tr && rmt_translation_run(tr) == 0, "longest allowed input fails: %s", rmt_last_error());
  rmt_translation_free(tr);
  p.beam = 0;
  CHECK(!rmt_translation_begin(model, ids, lens, 1, &p) && strstr(rmt_last_error(), "beam"), "beam 0 accepted");
  rmt_model_free(model);
  fixture_close(&f);
}

int main(void) {
  for (int i = 0; i < 6; i++) {
    errors err = {0};
    check_model(MODELS[i], &err);
    printf("native %-13s max|encoder diff| %.3g  max|logit diff| %.3g  max|score diff| %.3g  sequences %d/%d equal\n",
           MODELS[i], err.encoder, err.logits, err.score, err.sequences_equal, err.sequences);
    CHECK(err.encoder <= 1e-4 && err.logits <= 1e-4 && err.score <= 1e-4, "%s: difference above 1e-4", MODELS[i]);
    CHECK(err.sequences > 0 && err.sequences == err.sequences_equal, "%s: sequences differ", MODELS[i]);
  }
  check_bad_input();
  return test_report("test_model");
}
