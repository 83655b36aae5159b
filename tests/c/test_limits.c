// Size arithmetic (src/size.h) and the translation's size limits. Built three
// ways by build.sh; in build/native32 size_t has WASM's 32 bits, so the
// products below wrap there unless the checks catch them (ASan would then see
// the writes past a too-small arena).
#include "rmt.h"
#include "size.h"
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

// The largest beam on a real model, run to the end (fixed-size arrays in the
// search are sized by RMT_MAX_BEAM).
static void test_largest_beam(void) {
  size_t config_len, weights_len;
  char *config = read_file("tests/fixtures/models/residual-2x2/config.json", &config_len);
  char *weights = read_file("tests/fixtures/models/residual-2x2/model.safetensors", &weights_len);
  rmt_model *model = config && weights ? rmt_model_load(config, config_len, (const uint8_t *)weights, weights_len) : NULL;
  CHECK(model, "cannot load residual-2x2: %s", rmt_last_error());
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
              strstr(rmt_last_error(), "beam must be in [1, 256]"),
          "beam 257: %s", rmt_last_error());
  }
  rmt_model_free(model);
  free(config);
  free(weights);
}

int main(void) {
  test_size_helpers();
  test_translation_limits();
  test_largest_beam();
  return test_report("test_limits");
}
