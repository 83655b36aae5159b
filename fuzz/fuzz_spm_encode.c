// libFuzzer target: arbitrary bytes as text for every fixture model (loaded
// once). Checks that ids are in range, that their spans lie in the text in
// order, and that decoding them succeeds with spans in the output.
// Build and run: see fuzz/README.md (run from the repository root).
#include <stdio.h>
#include <stdlib.h>

#include "spm.h"

static const char *const kModels[] = {"uni_nfkc", "bpe_nfkc", "uni_bytes", "uni_identity",
                                      "bpe_bytes_cf", "uni_rules"};
#define N_MODELS (sizeof kModels / sizeof kModels[0])
static rmt_spm *models[N_MODELS];

static rmt_spm *load(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "tests/fixtures/spm/%s.model", name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s (run from the repository root)\n", path);
    abort();
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = malloc((size_t)n);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) abort();
  fclose(f);
  rmt_spm *spm = rmt_spm_load(data, (size_t)n);
  free(data);
  if (!spm) {
    fprintf(stderr, "%s: %s\n", path, rmt_last_error());
    abort();
  }
  return spm;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!models[0])
    for (size_t i = 0; i < N_MODELS; i++) models[i] = load(kModels[i]);
  static int32_t ids[1 << 16], spans[2 << 16];
  static char out[1 << 20];
  for (size_t m = 0; m < N_MODELS; m++) {
    int n = rmt_spm_encode_spans(models[m], (const char *)data, size, ids, spans, 1 << 16, NULL, 0);
    if (n < 0 || n > (1 << 16)) abort();
    int vocab = rmt_spm_vocab_size(models[m]);
    for (int i = 0; i < n; i++) {
      if (ids[i] < 0 || ids[i] >= vocab) abort();
      if (spans[2 * i] < 0 || spans[2 * i] > spans[2 * i + 1] || (size_t)spans[2 * i + 1] > size) abort();
      if (i && (spans[2 * i] < spans[2 * i - 2] || spans[2 * i + 1] < spans[2 * i - 1])) abort();
    }
    int len = rmt_spm_decode_spans(models[m], ids, n, out, sizeof out, spans);
    if (len < 0) abort();
    for (int i = 0; i < n; i++)
      if (spans[2 * i] < 0 || spans[2 * i] > spans[2 * i + 1] || spans[2 * i + 1] > len) abort();
    // The ids as arbitrary input to the decoder too.
    int k = (int)(size / 4);
    for (int i = 0; i < k; i++) {
      uint32_t v = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8;
      ids[i] = (int32_t)(v % (uint32_t)vocab);
    }
    if (rmt_spm_decode(models[m], ids, k, out, sizeof out) < 0) abort();
  }
  return 0;
}
