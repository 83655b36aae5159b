// A Marian model converted by models/convert_marian.py (SSRU decoder, swish,
// output matrix with bias, lexical shortlist; tests/fixtures/make_marian_fixture.mjs)
// against Bergamot's own translations of it, in the native builds: the same
// texts, greedy and beam 4, one sentence at a time and all in one batch (the
// shortlist is each sentence's own, so batching changes nothing).
#include <stdint.h>

#include "model.h"
#include "spm.h"
#include "testutil.h"
#include "translation.h"

#define DIR "tests/fixtures/models/marian-ssru/"
#define MAX_TEXTS 16

// Splits a file's lines in place; returns how many (at most cap).
static int split_lines(char *text, char **lines, int cap) {
  int n = 0;
  for (char *p = text; p && *p && n < cap;) {
    lines[n++] = p;
    p = strchr(p, '\n');
    if (p) *p++ = 0;
  }
  return n;
}

// Translates texts[first..first+count) as one batch and compares each best hypothesis with expected.
static void check_batch(const rmt_model *model, const rmt_spm *spm, char **texts, char **expected, int first,
                        int count, int beam) {
  char joined[4096] = "";
  int32_t lens[MAX_TEXTS];
  for (int i = 0; i < count; i++) {
    lens[i] = (int32_t)strlen(texts[first + i]);
    strcat(joined, texts[first + i]);
  }
  rmt_search_params p;
  rmt_search_params_default(&p);
  // Bergamot's settings in the fixture: max-length-factor 2, normalize 1, no minimum length.
  p.beam = beam, p.max_len_a = 2, p.max_len_b = 0, p.min_len = 0, p.lenpen = 1;
  rmt_translation *tr = rmt_translation_begin_text(model, spm, joined, lens, count, NULL, &p);
  CHECK(tr, "begin: %s", rmt_last_error());
  if (!tr) return;
  CHECK(rmt_translation_run(tr) == 0, "run: %s", rmt_last_error());
  for (int i = 0; i < count; i++) {
    // The ids as Bergamot decodes them: rmt_translation_hyp_text would also
    // carry the source's unknown characters into the text (src/carry.c).
    char out[4096];
    int32_t ids[1024];
    int n_ids = rmt_translation_hyp(tr, i, 0, ids, 1024, NULL, NULL);
    int n = n_ids >= 0 && n_ids <= 1024 ? rmt_spm_decode(spm, ids, n_ids, out, sizeof out) : -1;
    CHECK(n >= 0 && n < (int)sizeof out && !strcmp(out, expected[first + i]),
          "beam %d, batch of %d, text %d: got \"%s\", Bergamot \"%s\"", beam, count, first + i, n >= 0 ? out : "",
          expected[first + i]);
  }
  rmt_translation_free(tr);
}

int main(void) {
  size_t config_len, weights_len, spm_len;
  char *config = read_file(DIR "config.json", &config_len), *weights = read_file(DIR "model.safetensors", &weights_len);
  char *spm_bytes = read_file(DIR "spm.model", &spm_len), *texts_file = read_file(DIR "texts.txt", NULL);
  char *beam_files[2] = {read_file(DIR "bergamot-beam1.txt", NULL), read_file(DIR "bergamot-beam4.txt", NULL)};
  CHECK(config && weights && spm_bytes && texts_file && beam_files[0] && beam_files[1], "fixture files in " DIR);
  rmt_model *model = config && weights ? rmt_model_load(config, config_len, (const uint8_t *)weights, weights_len) : NULL;
  rmt_spm *spm = spm_bytes ? rmt_spm_load((const uint8_t *)spm_bytes, spm_len) : NULL;
  CHECK(model && spm, "cannot load the fixture: %s", rmt_last_error());
  if (model && spm && texts_file && beam_files[0] && beam_files[1]) {
    CHECK(model->config.ssru && model->config.search == RMT_SEARCH_MARIAN && model->config.shortlist_first >= 0 &&
          model->config.activation == RMT_ACT_SWISH && model->config.output_bias && !model->config.share_embeddings,
          "the fixture has every Marian feature it is meant to");
    char *texts[MAX_TEXTS], *expected[MAX_TEXTS];
    int n = split_lines(texts_file, texts, MAX_TEXTS);
    int beams[2] = {1, 4};
    for (int b = 0; b < 2; b++) {
      CHECK(split_lines(beam_files[b], expected, MAX_TEXTS) == n, "one Bergamot translation per text");
      for (int i = 0; i < n; i++) check_batch(model, spm, texts, expected, i, 1, beams[b]);
      check_batch(model, spm, texts, expected, 0, n, beams[b]);
    }
  }
  rmt_spm_free(spm);
  rmt_model_free(model);
  free(config), free(weights), free(spm_bytes), free(texts_file), free(beam_files[0]), free(beam_files[1]);
  return test_report("test_marian");
}
