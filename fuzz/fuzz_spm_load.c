// libFuzzer target: arbitrary bytes as a .model file. Loading must fail
// cleanly or give a tokenizer that encodes and decodes without crashing.
// Build and run: see fuzz/README.md.
#include <string.h>

#include "spm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rmt_spm *spm = rmt_spm_load(data, size);
  if (!spm) return 0;
  static const char text[] = "  Hola, ¿qué tal?\tfine\xef\xbc\xa1 \xff\xc0\xaf <s> ▁x  ";
  int32_t ids[256];
  int n = rmt_spm_encode(spm, text, sizeof text - 1, ids, 256);
  if (n > 0 && n <= 256) {
    char out[4096];
    rmt_spm_decode(spm, ids, n, out, sizeof out);
  }
  rmt_spm_free(spm);
  return 0;
}
