// libFuzzer target: a model directory in one input, config.json, a NUL byte,
// then model.safetensors. Loading must fail with an error or give a model
// that translates a short input (greedy, beam 2 with an n-best list, forced
// steps, alignments) within bounds. Built for i386 by build.sh, so a size that wraps in
// WASM's 32 bits wraps here too. Run: npm run fuzz -- SECONDS (fuzz/README.md).
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "translation.h"

static void translate(const rmt_model *model, int beam) {
  const rmt_config *c = &model->config;
  int32_t ids[3], lens[2] = {2, 1}, out[16];
  for (int i = 0, id = 0; i < 3; id = (id + 1) % c->vocab_size) {
    if (id != c->pad_id) ids[i++] = id;
  }
  rmt_search_params p;
  rmt_search_params_default(&p);
  p.beam = beam, p.nbest = beam, p.max_len_a = 0, p.max_len_b = 3;
  rmt_translation *tr = rmt_translation_begin(model, ids, lens, 2, &p);
  if (!tr) {
    if (!rmt_last_error()[0]) abort();  // a failure always says why
    return;
  }
  while (rmt_translation_step(tr) > 0) {
    if (rmt_translation_steps(tr) > 8) abort();  // max_len_b 3 bounds the search
    for (int s = 0; s < 2; s++) {
      int n = rmt_translation_partial(tr, s, out, 16);
      if (n < 0 || n > 4) abort();
    }
  }
  for (int s = 0; s < 2; s++) {
    int n = rmt_translation_n_hyps(tr, s);
    if (n < 0 || n > beam) abort();
    for (int k = 0; k < n; k++) {
      int len = rmt_translation_hyp(tr, s, k, out, 16, NULL, NULL);
      if (len < 0 || len > 4) abort();
      for (int i = 0; i < len; i++)
        if (out[i] < 0 || out[i] >= c->vocab_size) abort();
      // Aligned to one of the sentence's tokens (not its </s>), or to none.
      if (rmt_translation_hyp_alignment(tr, s, k, out, 16) != len) abort();
      for (int i = 0; i < len; i++)
        if (out[i] < -1 || out[i] >= lens[s]) abort();
    }
  }
  rmt_translation_free(tr);
}

static void force(const rmt_model *model) {
  const rmt_config *c = &model->config;
  int32_t ids[1] = {c->pad_id == 0 ? 1 : 0}, lens[1] = {1}, prev[1] = {c->eos_id};
  rmt_search_params p;
  rmt_search_params_default(&p);
  p.beam = 1;
  rmt_translation *tr = rmt_translation_begin(model, ids, lens, 1, &p);
  if (!tr) return;
  for (int t = 0; t < 2 && rmt_translation_force_step(tr, prev) == 0; t++) prev[0] = c->vocab_size - 1;
  rmt_translation_free(tr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t config_len = nul ? (size_t)(nul - data) : size;
  const uint8_t *weights = nul ? nul + 1 : data + size;
  size_t weights_len = size - config_len - (nul ? 1 : 0);
  rmt_model *model = rmt_model_load((const char *)data, config_len, weights, weights_len);
  if (!model) {
    if (!rmt_last_error()[0]) abort();
    return 0;
  }
  translate(model, 1);
  translate(model, 2);
  force(model);
  rmt_model_free(model);
  return 0;
}
