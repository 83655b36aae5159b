// Shared helpers for the native C tests: checks that count failures, file
// reading, and fixture JSON access. Each test binary exits non-zero on failure.
#ifndef RMT_TESTUTIL_H
#define RMT_TESTUTIL_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int test_failures = 0, test_checks = 0;

#define CHECK(cond, ...)                                           \
  do {                                                             \
    test_checks++;                                                 \
    if (!(cond)) {                                                 \
      test_failures++;                                             \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);         \
      fprintf(stderr, __VA_ARGS__);                                \
      fprintf(stderr, "\n");                                       \
    }                                                              \
  } while (0)

static inline int test_report(const char *name) {
  printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
  return test_failures ? 1 : 0;
}

// Reads a whole file (NUL-terminated copy); NULL if unreadable.
static inline char *read_file(const char *path, size_t *size) {
  if (size) *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  if (size) *size = (size_t)n;
  return buf;
}

// Reads the numbers of the JSON array at token i into out (up to cap); returns the count.
static inline int json_numbers(const rmt_json *json, int i, double *out, int cap) {
  int n = json->tokens[i].size;
  for (int k = 0; k < n && k < cap; k++) rmt_json_number(json, i + 1 + k, &out[k]);
  return n;
}

// Token index of element k of the array at token i.
static inline int json_at(const rmt_json *json, int i, int k) {
  int j = i + 1;
  while (k-- > 0) j = rmt_json_skip(json, j);
  return j;
}
#endif
