// Small helpers over jsmn (Debian's libjsmn-dev, strict mode) for the two JSON
// documents we read: config.json and the safetensors header.
#ifndef RMT_JSON_H
#define RMT_JSON_H
#include <stddef.h>
#include <stdint.h>

#define JSMN_HEADER
#define JSMN_STRICT
// Each token records its parent: without, jsmn looks for the enclosing object
// by scanning back over every token at each comma (quadratic: a header with
// 200000 keys took minutes).
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#define RMT_JSON_MAX_DEPTH 32  // nesting; our documents use 3
// The most bytes of a JSON file read whole (config.json here; in JS also
// manifest.json, checked before reading: rmt_limit(RMT_LIMIT_JSON_BYTES)).
// Ours have under 1 KB; a larger one is not a model's.
#define RMT_MAX_JSON_BYTES (1 << 20)

typedef struct {
  const char *text;
  jsmntok_t *tokens;  // malloc'd, owned
  int n_tokens;
} rmt_json;

// Parses `len` bytes. The text must be strict JSON (RFC 8259: jsmn alone
// accepts doubled or missing commas and bad literals) whose top level is one
// object; keys must be unique within their object and unescaped, so that every
// reader (this one takes the first of two equal keys, JSON.parse the last)
// sees the same document. `what` names the document in error messages.
// 0 or RMT_E_FORMAT / RMT_E_NOMEM.
int rmt_json_parse(rmt_json *json, const char *text, size_t len, const char *what);
void rmt_json_free(rmt_json *json);
// Index of the token after token i and everything nested in it.
int rmt_json_skip(const rmt_json *json, int i);
// Index of the value of `key` in the object at token `object`, or -1.
int rmt_json_find(const rmt_json *json, int object, const char *key);
// 1 if token i is a string (or primitive) equal to s.
int rmt_json_equals(const rmt_json *json, int i, const char *s);
// Token i as a finite number; 0, or -1 if it is not one.
int rmt_json_number(const rmt_json *json, int i, double *out);
// Token i as a non-negative integer written with digits only (no fraction,
// no exponent), at most `max`; 0, or -1 if it is not one.
int rmt_json_uint(const rmt_json *json, int i, uint64_t max, uint64_t *out);
// Copies string token i into buf (NUL-terminated); -1 if not a string or too long.
int rmt_json_string(const rmt_json *json, int i, char *buf, size_t cap);
#endif
