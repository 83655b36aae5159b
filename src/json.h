// Small helpers over jsmn (Debian's libjsmn-dev, strict mode) for the two JSON
// documents we read: config.json and the safetensors header.
#ifndef RMT_JSON_H
#define RMT_JSON_H
#include <stddef.h>

#define JSMN_HEADER
#define JSMN_STRICT
#include <jsmn.h>

typedef struct {
  const char *text;
  jsmntok_t *tokens;  // malloc'd, owned
  int n_tokens;
} rmt_json;

// Parses `len` bytes; the top level must be one object. `what` names the
// document in error messages. 0 or RMT_E_FORMAT / RMT_E_NOMEM.
int rmt_json_parse(rmt_json *json, const char *text, size_t len, const char *what);
void rmt_json_free(rmt_json *json);
// Index of the token after token i and everything nested in it.
int rmt_json_skip(const rmt_json *json, int i);
// Index of the value of `key` in the object at token `object`, or -1.
int rmt_json_find(const rmt_json *json, int object, const char *key);
// 1 if token i is a string (or primitive) equal to s.
int rmt_json_equals(const rmt_json *json, int i, const char *s);
// Token i as a number; 0, or -1 if it is not a number.
int rmt_json_number(const rmt_json *json, int i, double *out);
// Copies string token i into buf (NUL-terminated); -1 if not a string or too long.
int rmt_json_string(const rmt_json *json, int i, char *buf, size_t cap);
#endif
