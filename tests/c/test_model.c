// The native engine against the PyTorch reference fixtures
// (tests/fixtures/models/*/reference.json, made by tests/fixtures/make_fixtures.py),
// and the loader's and translator's answers to bad input.
#include "model.h"
#include "rmt.h"
#include "safetensors.h"
#include "sha256.h"
#include "spm.h"
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

// fixture_open, failing the test when the fixture cannot be read.
static int fixture_open_checked(fixture *f, const char *name) {
  int err = fixture_open(f, name);
  CHECK(!err, "cannot read fixture %s", name);
  return err;
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
  double encoder, logits, score, attention;
  int sequences, sequences_equal;
  int aligned, aligned_equal, aligned_ties;  // tokens; equal to the reference's; other only at a near-tie
} errors;

// The reference's margins over the runner-up below this are float-rounding
// near-ties, where the engine may pick the other position.
#define ALIGN_TIE 1e-4

// Compares the engine's alignment of hypothesis (s, h) with the reference's.
static void check_alignment(const fixture *f, int hyp, const rmt_translation *tr, int s, int h, errors *err,
                            const char *what) {
  double want[256];
  int32_t got[256];
  int n = json_numbers(&f->ref, rmt_json_find(&f->ref, hyp, "alignment"), want, 256);
  int margins = rmt_json_find(&f->ref, hyp, "margins");
  int len = rmt_translation_hyp_alignment(tr, s, h, got, 256);
  CHECK(len == n, "%s: alignment of %d tokens, expected %d", what, len, n);
  for (int i = 0; i < n && i < len; i++) {
    double margin;
    err->aligned++;
    if (got[i] == (int32_t)want[i]) {
      err->aligned_equal++;
    } else if (rmt_json_number(&f->ref, json_at(&f->ref, margins, i), &margin) == 0 && margin < ALIGN_TIE) {
      err->aligned_ties++;
    } else {
      CHECK(0, "%s token %d: aligned to source position %d, the reference %d", what, i, got[i], (int)want[i]);
    }
  }
}

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
  int cross = rmt_json_find(&f.ref, forced, "cross_attention");
  CHECK(!rmt_translation_cross_attention(tr, 0), "%s: encoder-attention weights before forced decoding", name);
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
      // The last layer's encoder attention: [T, len + 1] per sentence.
      int S = lens[s] + 1;
      CHECK(json_numbers(&f.ref, json_at(&f.ref, cross, s), expect, MAX_FLOATS) == T * S, "%s: cross_attention size", name);
      const float *w = rmt_translation_cross_attention(tr, s);
      CHECK(w, "%s: no encoder-attention weights: %s", name, rmt_last_error());
      for (int j = 0; w && j < S; j++) err->attention = fmax(err->attention, fabs(w[j] - expect[(size_t)t * S + j]));
    }
  }
  rmt_translation_free(tr);

  // Searches: greedy and beams, the whole batch at once.
  int searches = rmt_json_find(&f.ref, 0, "searches");
  for (int k = 0; k < f.ref.tokens[searches].size; k++) {
    int search = json_at(&f.ref, searches, k);
    double beam, lenpen, nbest, min_len, max_len_a, max_len_b;
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "beam"), &beam);
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "lenpen"), &lenpen);
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "nbest"), &nbest);
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "min_len"), &min_len);
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "max_len_a"), &max_len_a);
    rmt_json_number(&f.ref, rmt_json_find(&f.ref, search, "max_len_b"), &max_len_b);
    p.beam = (int)beam, p.lenpen = lenpen, p.nbest = (int)nbest;
    p.min_len = (int)min_len, p.max_len_a = max_len_a, p.max_len_b = (int)max_len_b;
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
        char what[96];
        snprintf(what, sizeof what, "%s beam %d sentence %d hyp %d", name, p.beam, s, h);
        if (same) check_alignment(&f, hyp, tr, s, h, err, what);
      }
    }
    rmt_translation_free(tr);
  }

  // A long input, near max_positions.
  int longest = rmt_json_find(&f.ref, 0, "long");
  int32_t long_ids[1024], long_len = json_numbers(&f.ref, rmt_json_find(&f.ref, longest, "sentence"), expect, 1024);
  for (int i = 0; i < long_len; i++) long_ids[i] = (int32_t)expect[i];
  rmt_search_params_default(&p);
  p.beam = 1;
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
  uint64_t header_len = 0, new_header;
  for (int i = 7; i >= 0; i--) header_len = header_len << 8 | (unsigned char)file[i];
  char *header = malloc(header_len + 1);
  memcpy(header, file + 8, header_len);
  header[header_len] = 0;
  char *at = strstr(header, from);
  new_header = at ? header_len + strlen(to) - strlen(from) : header_len;
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
  if (fixture_open_checked(&f, "residual-2x2")) return;
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
  n = edit_header(f.weights, f.weights_len, "{", "{\"extra.weight\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},", &bad);
  expect_load_error(&f, NULL, bad, n, "unknown tensor extra.weight", "extra unknown tensor");
  free(bad);
  n = edit_header(f.weights, f.weights_len, "\"decoder.layers.0.fc1.bias\":{\"dtype\":\"F32\",\"shape\":[76]",
                  "\"decoder.layers.0.fc1.bias\":{\"dtype\":\"F32\",\"shape\":[38,2]", &bad);
  expect_load_error(&f, NULL, bad, n, "decoder.layers.0.fc1.bias has shape [38, 2], expected [76]", "wrong shape");
  free(bad);
  n = edit_header(f.weights, f.weights_len, "\"dtype\":\"F32\"", "\"dtype\":\"I64\"", &bad);
  expect_load_error(&f, NULL, bad, n, "unsupported dtype I64", "unsupported dtype");
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


// ---------------------------------------------------------------- hardening

// A safetensors file with every tensor of `file` widened to float32, passed
// through edit(name, values, count) and stored as `dtype` ("F32" or "BF16";
// BF16 keeps the top 16 bits, so values should be bf16-exact). malloc'd.
typedef void (*tensor_edit)(const char *name, float *values, size_t count);
static char *rewrite_weights(const char *file, size_t size, const char *dtype, tensor_edit edit, size_t *out_size) {
  rmt_safetensors st;
  if (rmt_safetensors_open(&st, (const uint8_t *)file, size)) return NULL;
  int bf16 = strcmp(dtype, "BF16") == 0;
  size_t header_cap = 256 + (size_t)st.n_tensors * 320, data_size = 0, header_len = 0;
  for (int i = 0; i < st.n_tensors; i++) data_size += st.tensors[i].bytes / (st.tensors[i].dtype == RMT_DTYPE_F32 ? 1 : 2) * 4;
  char *header = malloc(header_cap), *data = malloc(data_size + 1);
  size_t offset = 0;
  header_len += (size_t)snprintf(header, header_cap, "{");
  for (int i = 0; i < st.n_tensors; i++) {
    const rmt_tensor_info *t = &st.tensors[i];
    size_t count = t->bytes / (t->dtype == RMT_DTYPE_F32 ? 4 : 2), bytes = count * (bf16 ? 2 : 4);
    float *values = malloc(sizeof(float) * (count + 1));
    rmt_safetensors_read_f32(&st, t, values);
    if (edit) edit(t->name, values, count);
    for (size_t k = 0; k < count; k++) {
      uint32_t bits;
      memcpy(&bits, &values[k], 4);
      if (bf16) memcpy(data + offset + 2 * k, (char *)&bits + 2, 2);  // little-endian: the top half
      else memcpy(data + offset + 4 * k, &bits, 4);
    }
    free(values);
    char shape[64] = "";
    for (int d = 0; d < t->n_dims; d++) snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? "," : "", (long long)t->shape[d]);
    header_len += (size_t)snprintf(header + header_len, header_cap - header_len, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[%s],\"data_offsets\":[%zu,%zu]}",
                                   i ? "," : "", t->name, dtype, shape, offset, offset + bytes);
    offset += bytes;
  }
  header_len += (size_t)snprintf(header + header_len, header_cap - header_len, "}");
  char *out = malloc(8 + header_len + offset);
  for (int i = 0; i < 8; i++) out[i] = (char)((uint64_t)header_len >> (8 * i));
  memcpy(out + 8, header, header_len);
  memcpy(out + 8 + header_len, data, offset);
  *out_size = 8 + header_len + offset;
  free(header);
  free(data);
  rmt_safetensors_close(&st);
  return out;
}

static void round_to_bf16(const char *name, float *values, size_t count) {
  for (size_t k = 0; k < count; k++) {
    uint32_t bits;
    memcpy(&bits, &values[k], 4);
    bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;  // round to nearest even
    memcpy(&values[k], &bits, 4);
  }
}

// Every row's output equals 1 (the last decoder LayerNorm: gain 0, bias 1) and
// the </s> row of the output projection is -3e38 (finite): its logit overflows
// to -inf, so no hypothesis can ever end.
static void never_end(const char *name, float *values, size_t count) {
  if (!strcmp(name, "decoder.layers.0.final_layer_norm.weight")) memset(values, 0, sizeof(float) * count);
  if (!strcmp(name, "decoder.layers.0.final_layer_norm.bias")) for (size_t k = 0; k < count; k++) values[k] = 1.0f;
  if (!strcmp(name, "decoder.output_projection.weight")) for (size_t k = 0; k < 48; k++) values[2 * 48 + k] = -3e38f;
}

static rmt_model *load_config_and(const fixture *f, const char *weights, size_t len) {
  rmt_model *model = rmt_model_load(f->config, f->config_len, (const uint8_t *)weights, len);
  CHECK(model, "load: %s", rmt_last_error());
  return model;
}

static void check_bad_files(void) {
  fixture f;
  if (fixture_open_checked(&f, "residual-2x2")) return;
  char *bad;
  // A header whose keys have no values (jsmn's strict mode accepts it).
  const char crafted[] = "\x18\0\0\0\0\0\0\0{\"__metadata__\" \"x\" \"y\"}";
  expect_load_error(&f, NULL, crafted, sizeof crafted - 1, "malformed JSON", "keys without values");
  // Edits of the header (W) or of config.json (C), and the error each must give.
  static const char *const edits[][4] = {
      {"W", "\"data_offsets\":[0,", "\"data_offsets\":[1e400,", "bad data_offsets"},
      {"W", "\"shape\":[76]", "\"shape\":[-nan]", "malformed JSON"},
      {"W", "\"shape\":[76]", "\"shape\":[76.5]", "bad shape"},
      {"W", "\"shape\":[76]", "\"shape\":[-76]", "bad shape"},
      {"W", "{", "{\"extra.weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},", "overlap"},
      {"W", "{", "{\"extra.weight\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[2,2]},", "data offset 2 is not a multiple"},
      {"W", "{", "{\"extra.weight\":{\"dtype\":\"F32\",\"shape\":[32768,32768],\"data_offsets\":[0,0]},", "0 data bytes do not match"},
      {"W", "{", "{\"encoder.layer_norm.bias\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},", "duplicate key \"encoder.layer_norm.bias\""},
      {"C", "\"pad_id\": 1", "\"pad_id\": 2", "special token ids must differ"},
      {"C", "\"unk_id\": 3", "\"unk_id\": 0", "special token ids must differ"},
      {"C", "\"d_model\": 64", "\"d_model\": 64, \"d_model\": 32", "duplicate key \"d_model\""},
      {"C", "\"d_model\": 64", "\"d_model\": 64.0", "\"d_model\" must be an integer"},
      {"C", "\"d_model\": 64", "\"d_model\": 6.4e1", "\"d_model\" must be an integer"},
      {"C", "\"ln_eps\": 1e-05", "\"ln_eps\": 1e400", "\"ln_eps\" must be a finite number"},
      {"C", "\"languages\": {}", "\"languages\": {\"target_lang_tokens\": {\"en\": 1}}", "\"en\" uses special id 1"},
      {"C", "\"languages\": {}", "\"languages\": {\"target_lang_tokens\": {\"en\": 7, \"es\": 7}}", "\"en\" and \"es\" share id 7"},
      {"C", "\"languages\": {}", "\"languages\": {\"target_lang_tokens\": {\"en\": 7.5}}", "bad entry in languages"},
      // The keys of models converted from Marian: values checked, and the tensors they need required.
      {"C", "\"activation\": \"relu\"", "\"activation\": \"gelu\"", "unsupported \"activation\" (expected \"relu\" or \"swish\")"},
      {"C", "\"activation\": \"relu\"", "\"activation\": \"relu\", \"search\": \"beam\"", "unsupported \"search\" (expected \"fairseq\" or \"marian\")"},
      {"C", "\"activation\": \"relu\"", "\"activation\": \"relu\", \"output_bias\": 1", "\"output_bias\" must be true or false"},
      {"C", "\"pad_id\": 1", "\"pad_id\": null", "\"pad_id\" is required"},
      {"C", "\"activation\": \"relu\"", "\"activation\": \"relu\", \"output_bias\": true", "missing tensor decoder.output_projection.bias"},
      {"C", "\"activation\": \"relu\"", "\"activation\": \"relu\", \"decoder_self\": \"ssru\"", "missing tensor decoder.layers.0.ssru.in_proj.weight"},
      {"C", "\"activation\": \"relu\"", "\"activation\": \"relu\", \"shortlist_first\": 8", "needs the 1-D I32 or I16 tensor shortlist.targets"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    char *config = NULL, *weights = NULL;
    size_t n = f.weights_len;
    if (edits[i][0][0] == 'W') n = edit_header(f.weights, f.weights_len, edits[i][1], edits[i][2], &weights);
    else config = replace_in(f.config, edits[i][1], edits[i][2]);
    CHECK(config ? strcmp(config, f.config) != 0 : n != f.weights_len, "edit %s did not apply", edits[i][2]);
    expect_load_error(&f, config, weights ? weights : f.weights, n, edits[i][3], edits[i][2]);
    free(config);
    free(weights);
  }
  // Non-finite weights, named.
  rmt_safetensors st;
  rmt_safetensors_open(&st, (const uint8_t *)f.weights, f.weights_len);
  const rmt_tensor_info *info = rmt_safetensors_find(&st, "decoder.layers.1.fc2.bias");
  size_t at = (size_t)(st.data - (const uint8_t *)f.weights) + info->offset + 4 * 5;
  rmt_safetensors_close(&st);
  bad = malloc(f.weights_len);
  memcpy(bad, f.weights, f.weights_len);
  const uint32_t nan_bits = 0x7fc00000u, inf_bits = 0xff800000u;
  memcpy(bad + at, &nan_bits, 4);
  expect_load_error(&f, NULL, bad, f.weights_len, "tensor decoder.layers.1.fc2.bias has a non-finite value (NaN) at element 5", "NaN weight");
  memcpy(bad + at, &inf_bits, 4);
  expect_load_error(&f, NULL, bad, f.weights_len, "non-finite value (Inf)", "-Inf weight");
  free(bad);
  fixture_close(&f);
}

// int8 weights with their scale (I8 + "<name>.qscale", as convert_marian.py
// keeps intgemm8 weights): value = q * scale; the scale required and positive.
static size_t craft_safetensors(char *out, const char *header, const void *data, size_t data_len) {
  size_t n = strlen(header);
  for (int i = 0; i < 8; i++) out[i] = (char)(((uint64_t)n >> (8 * i)) & 0xff);  // u64: size_t may be 32 bits
  memcpy(out + 8, header, n);
  memcpy(out + 8 + n, data, data_len);
  return 8 + n + data_len;
}

static void check_int8_tensors(void) {
  char file[512];
  unsigned char data[8] = {0xfe, 0x00, 0x7f, 0, 0, 0, 0, 0};  // -2, 0, 127; the scale at 4
  float scale = 0.5f, out[3];
  memcpy(data + 4, &scale, 4);
  const char *good = "{\"a\":{\"dtype\":\"I8\",\"shape\":[3],\"data_offsets\":[0,3]},"
                     "\"a.qscale\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
  size_t n = craft_safetensors(file, good, data, 8);
  rmt_safetensors st;
  CHECK(rmt_safetensors_open(&st, (const uint8_t *)file, n) == 0, "I8 with a scale opens: %s", rmt_last_error());
  rmt_tensor_info *a = rmt_safetensors_find(&st, "a"), *s = rmt_safetensors_find(&st, "a.qscale");
  CHECK(a && s && s->used && !a->used, "the scale counts as used, the tensor not yet");
  CHECK(a && rmt_safetensors_read_f32(&st, a, out) == 0 && out[0] == -1.0f && out[1] == 0.0f && out[2] == 63.5f,
        "I8 values scaled: %g %g %g", out[0], out[1], out[2]);
  rmt_safetensors_close(&st);
  scale = 0.0f;
  memcpy(data + 4, &scale, 4);
  n = craft_safetensors(file, good, data, 8);
  CHECK(rmt_safetensors_open(&st, (const uint8_t *)file, n) == 0, "opens");
  a = rmt_safetensors_find(&st, "a");
  CHECK(a && rmt_safetensors_read_f32(&st, a, out) != 0 && strstr(rmt_last_error(), "a.qscale must be positive numbers"),
        "a zero scale: %s", rmt_last_error());
  rmt_safetensors_close(&st);
  n = craft_safetensors(file, "{\"a\":{\"dtype\":\"I8\",\"shape\":[3],\"data_offsets\":[0,3]}}", data, 8);
  CHECK(rmt_safetensors_open(&st, (const uint8_t *)file, n) != 0 &&
        strstr(rmt_last_error(), "tensor a is I8 and needs an F32 scale a.qscale"), "no scale: %s", rmt_last_error());

  // One scale per row (models/quantize.py): kept as int8 by the model, or widened row by row.
  unsigned char rows[16] = {0xfe, 0x00, 0x7f, 0x81, 0x01, 0x02, 0, 0};  // [[-2, 0, 127], [-127, 1, 2]]
  float scales[2] = {0.5f, 0.25f}, wide[6], got_scales[2];
  int8_t q[6];
  memcpy(rows + 8, scales, 8);
  const char *per_row = "{\"b\":{\"dtype\":\"I8\",\"shape\":[2,3],\"data_offsets\":[0,6]},"
                        "\"b.qscale\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}";
  n = craft_safetensors(file, per_row, rows, 16);
  CHECK(rmt_safetensors_open(&st, (const uint8_t *)file, n) == 0, "I8 with row scales opens: %s", rmt_last_error());
  rmt_tensor_info *b = rmt_safetensors_find(&st, "b");
  CHECK(b && rmt_safetensors_i8_matrix(&st, b), "one scale per row");
  CHECK(b && rmt_safetensors_read_f32(&st, b, wide) == 0 && wide[0] == -1.0f && wide[2] == 63.5f &&
        wide[3] == -31.75f && wide[5] == 0.5f, "I8 rows scaled: %g %g %g %g", wide[0], wide[2], wide[3], wide[5]);
  CHECK(b && rmt_safetensors_read_i8(&st, b, q, got_scales) == 0 && q[3] == -127 && q[5] == 2 &&
        got_scales[0] == 0.5f && got_scales[1] == 0.25f, "I8 rows kept: %d %d, scales %g %g", q[3], q[5],
        got_scales[0], got_scales[1]);
  rmt_safetensors_close(&st);
  const char *three = "{\"b\":{\"dtype\":\"I8\",\"shape\":[2,3],\"data_offsets\":[0,6]},"
                      "\"b.qscale\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[8,20]}}";
  unsigned char more[20] = {0};
  n = craft_safetensors(file, three, more, 20);
  CHECK(rmt_safetensors_open(&st, (const uint8_t *)file, n) != 0 && strstr(rmt_last_error(), "one per row"),
        "three scales for two rows: %s", rmt_last_error());
}

// bfloat16 weights widen exactly: a BF16 file and an F32 file of the same
// (bf16-exact) values translate identically, logits bit for bit.
static void check_bfloat16(void) {
  fixture f;
  if (fixture_open_checked(&f, "residual-2x2")) return;
  size_t len32, len16;
  char *w32 = rewrite_weights(f.weights, f.weights_len, "F32", round_to_bf16, &len32);
  char *w16 = rewrite_weights(f.weights, f.weights_len, "BF16", round_to_bf16, &len16);
  CHECK(len16 < len32 && strstr(w16 + 8, "\"BF16\""), "the BF16 file holds BF16 tensors");
  rmt_model *m32 = load_config_and(&f, w32, len32), *m16 = load_config_and(&f, w16, len16);
  int32_t ids[512], lens[16];
  int n = fixture_sentences(&f, ids, lens);
  rmt_search_params p;
  rmt_search_params_default(&p);
  p.beam = 1;
  rmt_translation *a = m32 && m16 ? rmt_translation_begin(m32, ids, lens, n, &p) : NULL;
  rmt_translation *b = m32 && m16 ? rmt_translation_begin(m16, ids, lens, n, &p) : NULL;
  int32_t prev[16];
  for (int s = 0; s < n; s++) prev[s] = m32 ? m32->config.eos_id : 2;
  for (int t = 0; a && b && t < 4; t++) {
    rmt_translation_force_step(a, prev);
    rmt_translation_force_step(b, prev);
    size_t count = (size_t)n * (size_t)m32->config.vocab_size;
    CHECK(!memcmp(rmt_translation_logits(a), rmt_translation_logits(b), sizeof(float) * count), "step %d: logits differ", t);
    for (int s = 0; s < n; s++) prev[s] = 4 + (s + t) % 50;
  }
  rmt_translation_free(a);
  rmt_translation_free(b);
  p.beam = 5, p.nbest = 5;
  a = m32 && m16 ? rmt_translation_begin(m32, ids, lens, n, &p) : NULL;
  b = m32 && m16 ? rmt_translation_begin(m16, ids, lens, n, &p) : NULL;
  CHECK(a && b && rmt_translation_run(a) == 0 && rmt_translation_run(b) == 0, "beam 5: %s", rmt_last_error());
  for (int s = 0; a && b && s < n; s++) {
    CHECK(rmt_translation_n_hyps(a, s) == rmt_translation_n_hyps(b, s), "sentence %d: n-best sizes differ", s);
    for (int k = 0; k < rmt_translation_n_hyps(a, s); k++) {
      int32_t x[256], y[256];
      float sx, sy;
      int lx = rmt_translation_hyp(a, s, k, x, 256, &sx, NULL), ly = rmt_translation_hyp(b, s, k, y, 256, &sy, NULL);
      CHECK(lx == ly && !memcmp(x, y, sizeof(int32_t) * (size_t)lx) && sx == sy, "sentence %d hypothesis %d differs", s, k);
    }
  }
  rmt_translation_free(a);
  rmt_translation_free(b);
  rmt_model_free(m32);
  rmt_model_free(m16);
  free(w32);
  free(w16);
  fixture_close(&f);
}

// ---------------------------------------------------------------- every stored dtype through the load

// float32 -> float16 bits, rounded to nearest even (a carry out of the
// mantissa moves into the exponent, as it should; overflow gives Inf).
static uint16_t f16_bits(float value) {
  uint32_t x;
  memcpy(&x, &value, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
  int exp = (int)((x >> 23) & 0xff) - 127 + 15;
  if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
  if (exp < -10) return (uint16_t)sign;
  uint32_t half, rem, mid;
  if (exp > 0) {
    half = (uint32_t)exp << 10 | mant >> 13, rem = mant & 0x1fffu, mid = 0x1000u;
  } else {  // subnormal: the value's 24 bits shifted down to units of 2^-24
    int shift = 14 - exp;
    uint32_t full = mant | 0x800000u;
    half = full >> shift, rem = full & ((1u << shift) - 1), mid = 1u << (shift - 1);
  }
  if (rem > mid || (rem == mid && (half & 1))) half++;
  return (uint16_t)(sign | half);
}

// How rewrite_stored stores each tensor: every one as F16 or BF16, or the
// matrices as I8 (one scale per row; the same one for every row: I8_EQUAL_ROWS;
// one for the tensor, Marian's intgemm8: I8_ONE), the rest as F32.
typedef enum { STORE_F16, STORE_BF16, STORE_I8_ROWS, STORE_I8_EQUAL_ROWS, STORE_I8_ONE } store_kind;
static const char *const STORE_NAMES[] = {"F16", "BF16", "I8 (a scale per row)", "I8 (equal row scales)",
                                          "I8 (one scale)"};

typedef struct {
  char *header, *data;
  size_t header_len, header_cap, offset;
} st_writer;

static void st_put(st_writer *w, const char *name, const char *dtype, const int64_t *shape, int n_dims,
                   const void *bytes, size_t n) {
  w->offset = (w->offset + 3) & ~(size_t)3;  // every tensor 4-byte aligned (F32 scales after I8 bytes)
  memcpy(w->data + w->offset, bytes, n);
  char dims[64] = "";
  for (int d = 0; d < n_dims; d++) snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", d ? "," : "", (long long)shape[d]);
  w->header_len += (size_t)snprintf(w->header + w->header_len, w->header_cap - w->header_len,
                                    "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[%s],\"data_offsets\":[%zu,%zu]}",
                                    w->header_len > 1 ? "," : "", name, dtype, dims, w->offset, w->offset + n);
  w->offset += n;
}

// The matrix (rows x cols) as I8 into w, with its scales (kind: per row, equal, one).
static void put_i8(st_writer *w, const rmt_tensor_info *t, const float *values, store_kind kind) {
  size_t rows = (size_t)t->shape[0], cols = (size_t)t->shape[1];
  float *scales = malloc(sizeof(float) * rows), all = 0.0f;
  int8_t *q = malloc(rows * cols + 1);
  for (size_t i = 0; i < rows * cols; i++) all = fabsf(values[i]) > all ? fabsf(values[i]) : all;
  for (size_t r = 0; r < rows; r++) {
    float max = 0.0f;
    for (size_t c = 0; c < cols; c++) max = fabsf(values[r * cols + c]) > max ? fabsf(values[r * cols + c]) : max;
    scales[r] = (kind == STORE_I8_ROWS ? max : all) / 127.0f;
    if (scales[r] == 0.0f) scales[r] = 1.0f;
    for (size_t c = 0; c < cols; c++) q[r * cols + c] = (int8_t)lrintf(values[r * cols + c] / scales[r]);
  }
  char scale_name[RMT_TENSOR_NAME_MAX + 8];
  snprintf(scale_name, sizeof scale_name, "%s.qscale", t->name);
  int64_t n_scales = kind == STORE_I8_ONE ? 1 : (int64_t)rows;
  st_put(w, t->name, "I8", t->shape, 2, q, rows * cols);
  st_put(w, scale_name, "F32", &n_scales, 1, scales, sizeof(float) * (size_t)n_scales);
  free(scales);
  free(q);
}

// A float32 safetensors file with its tensors stored as `kind` says. malloc'd.
static char *rewrite_stored(const char *file, size_t size, store_kind kind, size_t *out_size) {
  rmt_safetensors st;
  if (rmt_safetensors_open(&st, (const uint8_t *)file, size)) return NULL;
  st_writer w = {0};
  w.header_cap = 256 + (size_t)st.n_tensors * 2 * 320;
  w.header = malloc(w.header_cap);
  w.data = malloc(st.data_size * 2 + (size_t)st.n_tensors * 16);
  w.header_len = (size_t)snprintf(w.header, w.header_cap, "{");
  for (int i = 0; i < st.n_tensors; i++) {
    const rmt_tensor_info *t = &st.tensors[i];
    size_t count = t->bytes / 4;
    float *values = malloc(sizeof(float) * (count + 1));
    rmt_safetensors_read_f32(&st, t, values);
    if (kind >= STORE_I8_ROWS && t->n_dims == 2) {
      put_i8(&w, t, values, kind);
    } else if (kind >= STORE_I8_ROWS) {
      st_put(&w, t->name, "F32", t->shape, t->n_dims, values, t->bytes);
    } else {
      uint16_t *halves = malloc(2 * count + 2);
      for (size_t k = 0; k < count; k++) {
        uint32_t bits;
        memcpy(&bits, &values[k], 4);
        halves[k] = kind == STORE_F16 ? f16_bits(values[k]) : (uint16_t)(bits >> 16);  // BF16: the top half
      }
      st_put(&w, t->name, kind == STORE_F16 ? "F16" : "BF16", t->shape, t->n_dims, halves, 2 * count);
      free(halves);
    }
    free(values);
  }
  w.header_len += (size_t)snprintf(w.header + w.header_len, w.header_cap - w.header_len, "}");
  char *out = malloc(8 + w.header_len + w.offset);
  for (int i = 0; i < 8; i++) out[i] = (char)((uint64_t)w.header_len >> (8 * i));
  memcpy(out + 8, w.header, w.header_len);
  memcpy(out + 8 + w.header_len, w.data, w.offset);
  *out_size = 8 + w.header_len + w.offset;
  free(w.header);
  free(w.data);
  rmt_safetensors_close(&st);
  return out;
}

// A translation of n sentences at this beam (the other search defaults), run to its end.
static rmt_translation *run_beam(const rmt_model *model, const int32_t *ids, const int32_t *lens, int n, int beam) {
  rmt_search_params p;
  rmt_search_params_default(&p);
  p.beam = beam;
  rmt_translation *tr = rmt_translation_begin(model, ids, lens, n, &p);
  CHECK(tr && rmt_translation_run(tr) == 0, "beam %d: %s", beam, rmt_last_error());
  return tr;
}

// Greedy and beam 4 translations of the fixture's sentences: ids and scores into
// out (a sentence's hypotheses after each other), their count returned.
static int translate_all(rmt_model *model, const fixture *f, int32_t *out, float *scores, int cap) {
  int32_t ids[512], lens[16];
  int n = fixture_sentences(f, ids, lens), used = 0, k = 0;
  for (int beam = 1; beam <= 4; beam += 3) {
    rmt_translation *tr = run_beam(model, ids, lens, n, beam);
    for (int s = 0; tr && s < n; s++) {
      int len = rmt_translation_hyp(tr, s, 0, out + used, cap - used, &scores[k++], NULL);
      used += len > 0 ? len : 0;
    }
    rmt_translation_free(tr);
  }
  return used;
}

// Every dtype a matrix is widened or kept from goes through the load's scratch:
// F16, BF16 (widened; quantized from there when loading quantized), I8 with a
// scale per row or one scale (kept as int8). Under ASan a scratch counted for
// one form and written in another overflows here. A tensor's one scale is every
// row's: the same as a per-row file whose scales are equal, to the bit.
static void check_stored_dtypes(void) {
  fixture f;
  if (fixture_open_checked(&f, "residual-2x2")) return;
  static int32_t out[5][2048];
  static float scores[5][32];  // zeros past what translate_all writes
  int lens[5] = {0};
  for (store_kind kind = STORE_F16; kind <= STORE_I8_ONE; kind++) {
    size_t len;
    char *weights = rewrite_stored(f.weights, f.weights_len, kind, &len);
    CHECK(weights != NULL, "%s: cannot rewrite", STORE_NAMES[kind]);
    for (int quantized = 0; weights && quantized <= (kind <= STORE_BF16); quantized++) {
      rmt_model *m = (quantized ? rmt_model_load_quantized : rmt_model_load)(f.config, f.config_len,
                                                                           (const uint8_t *)weights, len);
      CHECK(m, "%s%s: %s", STORE_NAMES[kind], quantized ? " quantized" : "", rmt_last_error());
      if (m && !quantized) {
        CHECK(kind <= STORE_BF16 || m->int8_max_in == m->config.ffn_dim, "%s: kept as int8", STORE_NAMES[kind]);
        lens[kind] = translate_all(m, &f, out[kind], scores[kind], 2048);
        CHECK(lens[kind] > 0, "%s: no output", STORE_NAMES[kind]);
      }
      rmt_model_free(m);
    }
    free(weights);
  }
  CHECK(lens[STORE_I8_ONE] == lens[STORE_I8_EQUAL_ROWS] &&
            !memcmp(out[STORE_I8_ONE], out[STORE_I8_EQUAL_ROWS], sizeof(int32_t) * (size_t)lens[STORE_I8_ONE]) &&
            !memcmp(scores[STORE_I8_ONE], scores[STORE_I8_EQUAL_ROWS], sizeof scores[0]),
        "one scale and equal row scales translate differently");
  fixture_close(&f);
}

// Finite weights whose </s> logit overflows to -inf: every sentence ends at its
// length limit with no hypothesis; that is reported per sentence, not a crash.
static void check_no_hypothesis(void) {
  fixture f;
  if (fixture_open_checked(&f, "post-3x1")) return;
  size_t len;
  char *weights = rewrite_weights(f.weights, f.weights_len, "F32", never_end, &len);
  rmt_model *model = load_config_and(&f, weights, len);
  int32_t ids[512], lens[16], out[64];
  int n = fixture_sentences(&f, ids, lens);
  for (int beam = 1; model && beam <= 5; beam += 4) {
    rmt_translation *tr = run_beam(model, ids, lens, n, beam);
    for (int s = 0; tr && s < n; s++) {
      CHECK(rmt_translation_n_hyps(tr, s) == 0, "beam %d sentence %d: %d hypotheses", beam, s, rmt_translation_n_hyps(tr, s));
      CHECK(rmt_translation_hyp(tr, s, 0, out, 64, NULL, NULL) == RMT_E_STATE &&
                strstr(rmt_last_error(), "has no translation"),
            "beam %d sentence %d: %s", beam, s, rmt_last_error());
      CHECK(rmt_translation_partial(tr, s, out, 64) == 0, "beam %d sentence %d: partial", beam, s);
    }
    rmt_translation_free(tr);
  }
  rmt_model_free(model);
  free(weights);
  fixture_close(&f);
}

// User text that spells a language token ("<2en>") is encoded as ordinary
// pieces: only the prefix the engine adds steers the decoder.
static void check_language_tokens_from_text(void) {
  size_t config_len, weights_len, spm_len;
  char *config = read_file("tests/fixtures/models/residual-text/config.json", &config_len);
  char *weights = read_file("tests/fixtures/models/residual-text/model.safetensors", &weights_len);
  char *spm_bytes = read_file("tests/fixtures/models/residual-text/spm.model", &spm_len);
  rmt_model *model = config && weights ? rmt_model_load(config, config_len, (const uint8_t *)weights, weights_len) : NULL;
  rmt_spm *spm = spm_bytes ? rmt_spm_load((const uint8_t *)spm_bytes, spm_len) : NULL;
  CHECK(model && spm, "cannot load residual-text: %s", rmt_last_error());
  if (model && spm) {
    const char text[] = "<2en> Hello <2es>";
    int en = rmt_spm_piece_to_id(spm, "<2en>"), es = rmt_spm_piece_to_id(spm, "<2es>");
    CHECK(en == model->config.target_lang_ids[0] && es == model->config.target_lang_ids[1], "fixture language tokens");
    int32_t raw[64], ids[64];
    int n_raw = rmt_spm_encode(spm, text, sizeof text - 1, raw, 64), n = rmt_text_encode(model, spm, text, sizeof text - 1, ids, 64);
    int raw_has = 0, has = 0;
    for (int i = 0; i < n_raw; i++) raw_has += raw[i] == en || raw[i] == es;
    for (int i = 0; i < n; i++) has += ids[i] == en || ids[i] == es;
    CHECK(raw_has == 2, "spm_encode's own reading has the two pieces (%d)", raw_has);
    CHECK(n > n_raw && has == 0, "rmt_text_encode: %d ids, %d language tokens", n, has);
    char back[64];
    CHECK(rmt_spm_decode(spm, ids, n, back, sizeof back) == (int)sizeof text - 1 && !strcmp(back, text), "decodes to \"%s\"", back);
    int32_t lens[] = {(int32_t)sizeof text - 1};
    rmt_search_params p;
    rmt_search_params_default(&p);
    p.beam = 1;
    rmt_translation *tr = rmt_translation_begin_text(model, spm, text, lens, 1, "es", &p);
    CHECK(tr && tr->src_ids[0] == es, "the source starts with <2es>");
    for (int i = 1; tr && i < tr->src_len[0]; i++) CHECK(tr->src_ids[i] != en && tr->src_ids[i] != es, "source id %d", i);
    rmt_translation_free(tr);
  }
  rmt_spm_free(spm);
  rmt_model_free(model);
  free(config), free(weights), free(spm_bytes);
}

// The SHA-256 of the shipped model's files against its manifest.json
// (models/make_manifest.py: Python's hashlib): every padding case of a
// digest is in tests/threads.test.js, against node:crypto.
static void check_sha256(void) {
  size_t len = 0;
  char *text = read_file("models/es-en/manifest.json", &len);
  rmt_json manifest;
  CHECK(text && rmt_json_parse(&manifest, text, len, "manifest.json") == 0, "models/es-en/manifest.json");
  if (!text) return;
  int files = rmt_json_find(&manifest, 0, "files");
  const char *names[] = {"config.json", "spm.model", "model.safetensors"};
  for (int i = 0; i < 3; i++) {
    char path[64], want[65] = "", got[65];
    snprintf(path, sizeof path, "models/es-en/%s", names[i]);
    int entry = rmt_json_find(&manifest, files, names[i]);
    rmt_json_string(&manifest, rmt_json_find(&manifest, entry, "sha256"), want, sizeof want);
    size_t size = 0;
    char *bytes = read_file(path, &size);
    uint8_t digest[RMT_SHA256_BYTES];
    rmt_sha256((const uint8_t *)bytes, size, digest);
    for (int k = 0; k < RMT_SHA256_BYTES; k++) snprintf(got + 2 * k, 3, "%02x", digest[k]);
    CHECK(bytes && strcmp(got, want) == 0, "%s: SHA-256 %s, manifest.json says %s", path, got, want);
    // Posted (a build without threads runs it in rmt_sha256_wait), twice: a
    // second start waits for the first.
    uint8_t posted[2][RMT_SHA256_BYTES] = {{0}};
    rmt_sha256_start((const uint8_t *)bytes, size, posted[0]);
    rmt_sha256_start((const uint8_t *)bytes, size, posted[1]);
    CHECK(memcmp(posted[0], digest, RMT_SHA256_BYTES) == 0, "%s: the first digest was done by the second start", path);
    rmt_sha256_wait();
    rmt_sha256_wait();  // nothing under way: returns
    CHECK(memcmp(posted[1], digest, RMT_SHA256_BYTES) == 0, "%s: posted digest", path);
    free(bytes);
  }
  rmt_json_free(&manifest);
  free(text);
}

int main(void) {
  for (int i = 0; i < 6; i++) {
    errors err = {0};
    check_model(MODELS[i], &err);
    printf("native %-13s max|encoder diff| %.3g  max|logit diff| %.3g  max|score diff| %.3g  max|attention diff| %.3g  "
           "sequences %d/%d equal  alignment %d/%d equal (%d near-ties)\n",
           MODELS[i], err.encoder, err.logits, err.score, err.attention, err.sequences_equal, err.sequences,
           err.aligned_equal, err.aligned, err.aligned_ties);
    CHECK(err.encoder <= 1e-4 && err.logits <= 1e-4 && err.score <= 1e-4 && err.attention <= 1e-5,
          "%s: difference above 1e-4 (attention 1e-5)", MODELS[i]);
    CHECK(err.aligned > 0, "%s: no alignment compared", MODELS[i]);
    CHECK(err.sequences > 0 && err.sequences == err.sequences_equal, "%s: sequences differ", MODELS[i]);
  }
  check_bad_input();
  check_bad_files();
  check_bfloat16();
  check_int8_tensors();
  check_stored_dtypes();
  check_no_hypothesis();
  check_language_tokens_from_text();
  check_sha256();
  return test_report("test_model");
}
