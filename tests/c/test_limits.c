// Size arithmetic (src/size.h) and the translation's size limits. Built three
// ways by build.sh; in build/native32 size_t has WASM's 32 bits, so the
// products below wrap there unless the checks catch them (ASan would then see
// the writes past a too-small arena).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmt.h"
#include "size.h"
#include "spm.h"
#include "testutil.h"
#include "translation.h"

static void test_size_helpers(void) {
  const int wide = sizeof(size_t) == 8;
  CHECK(rmt_size_mul(65536, 65536) == (wide ? (size_t)1 << 32 : RMT_SIZE_OVERFLOW), "65536 * 65536");
  CHECK(rmt_size_mul(SIZE_MAX / 2, 2) == SIZE_MAX - 1, "largest product that fits");
  CHECK(rmt_size_mul(SIZE_MAX / 2 + 1, 2) == RMT_SIZE_OVERFLOW, "smallest product that does not");
  CHECK(rmt_size_mul(RMT_SIZE_OVERFLOW, 3) == RMT_SIZE_OVERFLOW, "overflow propagates through *");
  CHECK(rmt_size_mul(RMT_SIZE_OVERFLOW, 0) == 0, "zero elements take no bytes");
  CHECK(rmt_size_add(SIZE_MAX - 1, 1) == RMT_SIZE_OVERFLOW, "SIZE_MAX itself is the overflow marker");
  CHECK(rmt_size_add(RMT_SIZE_OVERFLOW, 0) == RMT_SIZE_OVERFLOW, "overflow propagates through +");
  CHECK(rmt_size_array(3, 4, 64) == 64 && rmt_size_array(16, 4, 64) == 64 && rmt_size_array(17, 4, 64) == 128,
        "arrays round up to the alignment");
  CHECK(rmt_size_array(SIZE_MAX / 4, 4, 64) == RMT_SIZE_OVERFLOW, "rounding up cannot wrap to 0");
  CHECK(rmt_arena_bytes(1, SIZE_MAX - 10) == RMT_SIZE_OVERFLOW, "arena bytes saturate");
  rmt_arena arena;
  CHECK(rmt_arena_init(&arena, RMT_SIZE_OVERFLOW) == RMT_E_SIZE && !arena.base, "arena of an overflowed size");
  CHECK(rmt_arena_init(&arena, SIZE_MAX - 8) == RMT_E_SIZE, "arena whose padding would wrap");
  CHECK(rmt_arena_init(&arena, 100) == RMT_OK, "small arena: %s", rmt_last_error());
  CHECK(rmt_arena_alloc(&arena, 64) && rmt_arena_alloc(&arena, 64) && !rmt_arena_alloc(&arena, 1), "exhausted");
  CHECK(!rmt_arena_alloc(&arena, RMT_SIZE_OVERFLOW), "an overflowed request is refused");
  rmt_arena_free(&arena);
}

// A model with a config and no weights: rmt_translation_begin sizes the
// translation before it reads any weight, so over-limit calls fail here first.
static rmt_model shaped_model(int d_model, int ffn_dim, int decoder_layers, int vocab_size, int max_positions) {
  rmt_model model;
  memset(&model, 0, sizeof model);
  rmt_config *c = &model.config;
  c->style = RMT_STYLE_RESIDUAL;
  c->d_model = d_model, c->ffn_dim = ffn_dim, c->n_heads = 4, c->head_dim = d_model / 4;
  c->encoder_layers = 6, c->decoder_layers = decoder_layers;
  c->vocab_size = vocab_size, c->max_positions = max_positions;
  c->bos_id = 0, c->pad_id = 1, c->eos_id = 2, c->unk_id = 3;
  c->shortlist_first = -1;  // no lexical shortlist (config.c's default)
  return model;
}

static void expect_too_large(const rmt_model *model, int n_sent, int src_len, int beam, double max_len_a,
                             int max_len_b, const char *what) {
  int32_t *ids = malloc(sizeof(int32_t) * (size_t)n_sent * (size_t)src_len), *lens = malloc(sizeof(int32_t) * (size_t)n_sent);
  for (size_t i = 0; i < (size_t)n_sent * (size_t)src_len; i++) ids[i] = 4 + (int32_t)(i % 50);
  for (int s = 0; s < n_sent; s++) lens[s] = src_len;
  rmt_search_params p;
  rmt_search_params_default(&p);
  p.beam = beam, p.max_len_a = max_len_a, p.max_len_b = max_len_b;
  rmt_translation *tr = rmt_translation_begin(model, ids, lens, n_sent, &p);
  CHECK(!tr && rmt_last_error_code() == RMT_E_SIZE && strstr(rmt_last_error(), "too large") &&
            strstr(rmt_last_error(), "the limit is 1024 MB"),
        "%s: expected RMT_E_SIZE, got %d \"%s\"", what, rmt_last_error_code(), rmt_last_error());
  rmt_translation_free(tr);
  free(ids);
  free(lens);
}

static void test_translation_limits(void) {
  // The shipped model's shape (d 256, 2 decoder layers, 8000 pieces, 256 positions).
  rmt_model shipped = shaped_model(256, 1024, 2, 8000, 256);
  // 32 x beam 256 x 129 steps: the self-attention caches total 4.3 GB, which
  // wrapped to a small arena in 32 bits; at 256 steps they total exactly 2^32.
  expect_too_large(&shipped, 32, 3, 256, 0, 128, "32 sentences, beam 256, maxLength 128");
  expect_too_large(&shipped, 32, 3, 256, 0, 255, "32 sentences, beam 256, maxLength 255 (2^32 bytes of cache)");
  // A WMT-sized model (d 512, 6 decoder layers): long sentences at beam 11.
  rmt_model wide = shaped_model(512, 2048, 6, 32000, 1024);
  expect_too_large(&wide, 32, 200, 11, 1.2, 10, "d 512, 6 layers, 32 x 200 tokens, beam 11");
  // More rows than an int holds: 2^22 sentences x beam 256.
  expect_too_large(&shipped, 1 << 22, 1, 256, 0, 1, "2^22 sentences at beam 256");

  // The limits JS reads.
  CHECK(rmt_limit(RMT_LIMIT_BEAM) == RMT_MAX_BEAM, "beam limit");
  CHECK(rmt_limit(RMT_LIMIT_TRANSLATION_BYTES) == 1 << 30, "bytes limit");
  CHECK(rmt_limit(99) == RMT_E_INVALID, "unknown limit");
}

// A fixture model loaded from tests/fixtures/models/NAME (NULL, reported, on failure).
static rmt_model *load_fixture(const char *name) {
  char path[256];
  size_t config_len, weights_len;
  snprintf(path, sizeof path, "tests/fixtures/models/%s/config.json", name);
  char *config = read_file(path, &config_len);
  snprintf(path, sizeof path, "tests/fixtures/models/%s/model.safetensors", name);
  char *weights = read_file(path, &weights_len);
  rmt_model *model = config && weights ? rmt_model_load(config, config_len, (const uint8_t *)weights, weights_len) : NULL;
  CHECK(model, "cannot load %s: %s", name, rmt_last_error());
  free(config);
  free(weights);
  return model;
}

// The largest beam on a real model, run to the end (fixed-size arrays in the
// search are sized by RMT_MAX_BEAM).
static void test_largest_beam(void) {
  rmt_model *model = load_fixture("residual-2x2");
  if (model) {
    int32_t ids[] = {5, 6, 7, 8, 9, 10}, lens[] = {4, 2};
    rmt_search_params p;
    rmt_search_params_default(&p);
    p.beam = RMT_MAX_BEAM, p.nbest = RMT_MAX_BEAM;
    rmt_translation *tr = rmt_translation_begin(model, ids, lens, 2, &p);
    CHECK(tr && rmt_translation_run(tr) == 0, "beam %d: %s", RMT_MAX_BEAM, rmt_last_error());
    for (int s = 0; tr && s < 2; s++) CHECK(rmt_translation_n_hyps(tr, s) > 0, "sentence %d: no hypothesis", s);
    rmt_translation_free(tr);
    p.beam = RMT_MAX_BEAM + 1;
    CHECK(!rmt_translation_begin(model, ids, lens, 2, &p) && rmt_last_error_code() == RMT_E_LIMIT &&
              strstr(rmt_last_error(), "beam must be an integer in [1, 256], got 257"),
          "beam 257: %s", rmt_last_error());
  }
  rmt_model_free(model);
}

// The search parameters by field number (what JS uses instead of the struct's
// layout): names, defaults, ranges, and nothing set by a refused value.
static void test_search_params(void) {
  rmt_search_params p;
  rmt_search_params_default(&p);
  const char *names[] = {"beam", "nbest", "min_len", "max_len_a", "max_len_b", "lenpen", "shortlist"};
  for (int f = 0; f < RMT_PARAM_COUNT; f++) CHECK(strcmp(rmt_search_param_name(f), names[f]) == 0, "field %d name", f);
  CHECK(!rmt_search_param_name(RMT_PARAM_COUNT) && !rmt_search_param_name(-1), "no name past the fields");
  CHECK(rmt_search_params_size() == (int)sizeof p, "size");
  CHECK(p.beam == 5 && p.nbest == 1 && p.min_len == 1 && p.max_len_a == 1.2 && p.max_len_b == 10 && p.lenpen == 1.0 &&
            p.shortlist == 1,
        "defaults");
  CHECK(rmt_search_param_get(&p, RMT_PARAM_MAX_LEN_A) == 1.2, "get");
  CHECK(rmt_search_param_set(&p, RMT_PARAM_BEAM, 256) == RMT_OK && p.beam == 256, "largest beam");
  CHECK(rmt_search_param_set(&p, RMT_PARAM_BEAM, 257) == RMT_E_LIMIT && p.beam == 256 &&
            strstr(rmt_last_error(), "beam must be an integer in [1, 256], got 257"), "%s", rmt_last_error());
  CHECK(rmt_search_param_set(&p, RMT_PARAM_BEAM, 2.5) == RMT_E_LIMIT, "a fractional beam");
  CHECK(rmt_search_param_set(&p, RMT_PARAM_MIN_LEN, -1) == RMT_E_LIMIT, "negative min_len");
  CHECK(rmt_search_param_set(&p, RMT_PARAM_MAX_LEN_B, RMT_MAX_LEN + 1) == RMT_E_LIMIT, "max_len_b over the limit");
  CHECK(rmt_search_param_set(&p, RMT_PARAM_MAX_LEN_A, NAN) == RMT_E_LIMIT, "NaN max_len_a");
  CHECK(rmt_search_param_set(&p, RMT_PARAM_LENPEN, 0.6) == RMT_OK && p.lenpen == 0.6, "lenpen");
  CHECK(rmt_search_param_set(&p, RMT_PARAM_COUNT, 1) == RMT_E_INVALID, "unknown field");
  CHECK(rmt_limit(RMT_LIMIT_LEN) == RMT_MAX_LEN, "length limit");
}

// While a sentence is decoded, its stable prefix only grows and the final best
// hypothesis starts with it (streaming never takes a word back).
static void test_stable_prefix(void) {
  rmt_model *model = load_fixture("pre-2x2");
  for (int beam = 1; model && beam <= 8; beam += 7) {
    int32_t ids[] = {5, 6, 7, 8, 9, 10, 11, 12, 13}, lens[] = {6, 3};
    int32_t seen[2][256], n_seen[2] = {0, 0}, grew = 0;
    rmt_search_params p;
    rmt_search_params_default(&p);
    p.beam = beam;
    rmt_translation *tr = rmt_translation_begin(model, ids, lens, 2, &p);
    CHECK(tr, "beam %d: %s", beam, rmt_last_error());
    for (int left = 1; tr && left > 0;) {
      left = rmt_translation_step(tr);
      for (int s = 0; s < 2; s++) {
        int32_t now[256];
        int n = rmt_translation_stable(tr, s, now, 256);
        CHECK(n >= n_seen[s] && memcmp(now, seen[s], sizeof(int32_t) * (size_t)n_seen[s]) == 0,
              "beam %d sentence %d: the stable prefix changed", beam, s);
        grew += n > n_seen[s] && left > 0;
        memcpy(seen[s], now, sizeof(int32_t) * (size_t)n);
        n_seen[s] = n;
      }
    }
    for (int s = 0; tr && s < 2; s++) {
      int32_t best[256];
      int n = rmt_translation_hyp(tr, s, 0, best, 256, NULL, NULL);
      CHECK(n == n_seen[s] && memcmp(best, seen[s], sizeof(int32_t) * (size_t)n) == 0, "beam %d sentence %d: final", beam, s);
    }
    CHECK(grew > 0, "beam %d: the prefix grew before the end", beam);
    rmt_translation_free(tr);
  }
  rmt_model_free(model);
}

// Sentences kept by rmt_sources: a text length that would wrap a 32-bit size
// is refused before anything is read or allocated; bad numbers are errors.
static void test_sources(void) {
  rmt_model *model = load_fixture("residual-text");
  size_t size;
  uint8_t *bytes = (uint8_t *)read_file("tests/fixtures/models/residual-text/spm.model", &size);
  rmt_spm *spm = bytes ? rmt_spm_load(bytes, size) : NULL;
  CHECK(spm, "cannot load the fixture's spm.model: %s", rmt_last_error());
  rmt_sources *src = model && spm ? rmt_sources_new(model, spm) : NULL;
  if (src) {
    CHECK(rmt_sources_add(src, "x", SIZE_MAX) == RMT_E_SIZE, "a length past the limit: %s", rmt_last_error());
    CHECK(rmt_sources_add(src, "x", SIZE_MAX - 1) == RMT_E_SIZE, "another past it (it would wrap with the room for its ids)");
    CHECK(rmt_sources_add(src, NULL, 3) == RMT_E_INVALID, "no text");
    int n = rmt_sources_add(src, "hello world", 11);
    CHECK(n > 0, "a sentence: %d (%s)", n, rmt_last_error());
    CHECK(rmt_sources_add(src, "", 0) == 0, "an empty one has no ids");
    int32_t which[] = {0, 1, 2};
    rmt_search_params p;
    rmt_search_params_default(&p);
    CHECK(!rmt_translation_begin_sources(src, which + 2, 1, "en", &p) && strstr(rmt_last_error(), "no such source"),
          "a number past the last: %s", rmt_last_error());
    CHECK(!rmt_translation_begin_sources(src, which + 1, 1, "en", &p) && strstr(rmt_last_error(), "no tokens"),
          "a sentence without ids: %s", rmt_last_error());
    rmt_translation *tr = rmt_translation_begin_sources(src, which, 1, "en", &p);
    CHECK(tr && rmt_translation_run(tr) == 0, "a translation: %s", rmt_last_error());
    const rmt_hyp_view *view = tr ? rmt_translation_read(tr, spm, 0, 0, 1, 1) : NULL;
    CHECK(view && view->text_len >= 0 && view->text && view->spans && view->ids, "read: %s", rmt_last_error());
    rmt_translation_free(tr);
  }
  rmt_sources_free(src);
  rmt_spm_free(spm);
  free(bytes);
  rmt_model_free(model);
}

int main(void) {
  test_size_helpers();
  test_sources();
  test_translation_limits();
  test_largest_beam();
  test_search_params();
  test_stable_prefix();
  return test_report("test_limits");
}
