// jsmn's implementation lives in this file only; json.h includes its declarations.
#define JSMN_STRICT
#define JSMN_PARENT_LINKS  // as in json.h
#include <jsmn.h>

#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

// ---------------------------------------------------------------- grammar

static int is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Each scan_* reads one token starting at s[*pos] and returns 0, or -1.
static int scan_string(const char *s, size_t n, size_t *pos) {
  size_t i = *pos + 1;  // after the opening quote
  while (i < n && s[i] != '"') {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20) return -1;
    if (c == '\\') {
      if (i + 1 >= n) return -1;
      char e = s[i + 1];
      if (e == 'u') {
        if (i + 6 > n || !is_hex(s[i + 2]) || !is_hex(s[i + 3]) || !is_hex(s[i + 4]) || !is_hex(s[i + 5])) return -1;
        i += 6;
        continue;
      }
      if (!strchr("\"\\/bfnrt", e) || e == 0) return -1;
      i += 2;
      continue;
    }
    i++;
  }
  if (i >= n) return -1;
  *pos = i + 1;
  return 0;
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
static int scan_number(const char *s, size_t n, size_t *pos) {
  size_t i = *pos;
  if (i < n && s[i] == '-') i++;
  if (i >= n || !is_digit(s[i])) return -1;
  if (s[i] == '0') i++;
  else while (i < n && is_digit(s[i])) i++;
  if (i < n && s[i] == '.') {
    if (++i >= n || !is_digit(s[i])) return -1;
    while (i < n && is_digit(s[i])) i++;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    if (++i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (i >= n || !is_digit(s[i])) return -1;
    while (i < n && is_digit(s[i])) i++;
  }
  *pos = i;
  return 0;
}

static int scan_literal(const char *s, size_t n, size_t *pos) {
  static const char *const literals[] = {"true", "false", "null"};
  for (int k = 0; k < 3; k++) {
    size_t len = strlen(literals[k]);
    if (n - *pos >= len && memcmp(s + *pos, literals[k], len) == 0) {
      *pos += len;
      return 0;
    }
  }
  return -1;
}

// Checks that s is one JSON object, then only whitespace (or NULs, padding).
// Returns 0, or -1 with *where at the offending byte.
static int check_grammar(const char *s, size_t n, size_t *where) {
  char open[RMT_JSON_MAX_DEPTH];  // '{' or '[' of each enclosing container
  int depth = 0;
  size_t i = 0;
  enum { VALUE, KEY, AFTER_VALUE } state = VALUE;
#define SKIP_SPACE() while (i < n && is_space(s[i])) i++
#define FAIL() do { *where = i; return -1; } while (0)
  SKIP_SPACE();
  if (i >= n || s[i] != '{') FAIL();
  for (;;) {
    SKIP_SPACE();
    if (i >= n) FAIL();
    if (state == KEY) {
      if (s[i] != '"' || scan_string(s, n, &i)) FAIL();
      SKIP_SPACE();
      if (i >= n || s[i] != ':') FAIL();
      i++;
      state = VALUE;
    } else if (state == VALUE) {
      char c = s[i];
      if (c == '{' || c == '[') {
        if (depth == RMT_JSON_MAX_DEPTH) FAIL();
        open[depth++] = c;
        i++;
        SKIP_SPACE();
        if (i < n && s[i] == (c == '{' ? '}' : ']')) {  // empty
          i++;
          if (--depth == 0) break;
          state = AFTER_VALUE;
        } else {
          state = c == '{' ? KEY : VALUE;
        }
      } else {
        int bad = c == '"' ? scan_string(s, n, &i) : c == '-' || is_digit(c) ? scan_number(s, n, &i) : scan_literal(s, n, &i);
        if (bad) FAIL();
        state = AFTER_VALUE;
      }
    } else {  // AFTER_VALUE: a comma, or the end of the enclosing container
      char c = s[i];
      if (c == ',') {
        i++;
        state = open[depth - 1] == '{' ? KEY : VALUE;
      } else if (c == (open[depth - 1] == '{' ? '}' : ']')) {
        i++;
        if (--depth == 0) break;
      } else {
        FAIL();
      }
    }
  }
  for (; i < n; i++) {
    if (!is_space(s[i]) && s[i] != 0) FAIL();
  }
#undef SKIP_SPACE
#undef FAIL
  return 0;
}

// ---------------------------------------------------------------- keys

typedef struct {
  const char *text;
  int len;
} key_text;

static int compare_keys(const void *a, const void *b) {
  const key_text *x = a, *y = b;
  int common = x->len < y->len ? x->len : y->len, c = memcmp(x->text, y->text, (size_t)common);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

// Every object's keys: no escapes (so raw bytes compare as the decoded keys
// would) and no duplicates (sorted, then neighbours compared: n log n).
static int check_keys(const rmt_json *json, const char *what) {
  key_text *keys = calloc((size_t)json->n_tokens, sizeof(key_text));
  if (!keys) return rmt_error(RMT_E_NOMEM, "%s: out of memory parsing JSON", what);
  int err = RMT_OK;
  for (int object = 0; object < json->n_tokens && !err; object++) {
    const jsmntok_t *tok = &json->tokens[object];
    if (tok->type != JSMN_OBJECT) continue;
    int n = 0;
    for (int k = 0, i = object + 1; k < tok->size; k++, i = rmt_json_skip(json, i + 1)) {
      const jsmntok_t *key = &json->tokens[i];
      keys[n++] = (key_text){json->text + key->start, key->end - key->start};
      if (memchr(keys[n - 1].text, '\\', (size_t)keys[n - 1].len)) {
        err = rmt_error(RMT_E_FORMAT, "%s: key \"%.*s\" has an escape sequence (not supported in keys)", what,
                        keys[n - 1].len > 60 ? 60 : keys[n - 1].len, keys[n - 1].text);
        break;
      }
    }
    if (err) break;
    qsort(keys, (size_t)n, sizeof *keys, compare_keys);
    for (int k = 1; k < n; k++) {
      if (compare_keys(&keys[k - 1], &keys[k]) == 0) {
        err = rmt_error(RMT_E_FORMAT, "%s: duplicate key \"%.*s\"", what, keys[k].len > 60 ? 60 : keys[k].len,
                        keys[k].text);
        break;
      }
    }
  }
  free(keys);
  return err;
}

// ---------------------------------------------------------------- API

int rmt_json_parse(rmt_json *json, const char *text, size_t len, const char *what) {
  memset(json, 0, sizeof *json);
  json->text = text;
  size_t where = 0;
  if (check_grammar(text, len, &where)) {
    return rmt_error(RMT_E_FORMAT, "%s: malformed JSON at byte %zu%s", what, where, where >= len ? " (truncated)" : "");
  }
  jsmn_parser parser;
  jsmn_init(&parser);
  int count = jsmn_parse(&parser, text, len, NULL, 0);
  if (count < 1) return rmt_error(RMT_E_FORMAT, "%s: malformed JSON", what);
  json->tokens = calloc((size_t)count, sizeof(jsmntok_t));  // calloc: the product is checked
  if (!json->tokens) return rmt_error(RMT_E_NOMEM, "%s: out of memory parsing JSON", what);
  jsmn_init(&parser);
  json->n_tokens = jsmn_parse(&parser, text, len, json->tokens, (unsigned)count);
  // The grammar check passed, so jsmn's tokens describe exactly one object.
  if (json->n_tokens < 1 || json->tokens[0].type != JSMN_OBJECT || rmt_json_skip(json, 0) != json->n_tokens) {
    rmt_json_free(json);
    return rmt_error(RMT_E_FORMAT, "%s: malformed JSON (expected one object)", what);
  }
  int err = check_keys(json, what);
  if (err) rmt_json_free(json);
  return err;
}

void rmt_json_free(rmt_json *json) {
  free(json->tokens);
  json->tokens = NULL;
  json->n_tokens = 0;
}

int rmt_json_skip(const rmt_json *json, int i) {
  int pending = 1;  // tokens still to pass, counting children as they appear
  while (pending > 0 && i < json->n_tokens) {
    const jsmntok_t *tok = &json->tokens[i++];
    pending--;
    if (tok->type == JSMN_OBJECT) pending += 2 * tok->size;
    else if (tok->type == JSMN_ARRAY) pending += tok->size;
  }
  return i;
}

int rmt_json_find(const rmt_json *json, int object, const char *key) {
  if (object < 0 || object >= json->n_tokens || json->tokens[object].type != JSMN_OBJECT) return -1;
  int i = object + 1;
  for (int k = 0; k < json->tokens[object].size; k++) {
    if (i + 1 >= json->n_tokens) return -1;
    if (json->tokens[i].type == JSMN_STRING && rmt_json_equals(json, i, key)) return i + 1;
    i = rmt_json_skip(json, i + 1);
  }
  return -1;
}

int rmt_json_equals(const rmt_json *json, int i, const char *s) {
  const jsmntok_t *tok = &json->tokens[i];
  size_t n = (size_t)(tok->end - tok->start);
  return (tok->type == JSMN_STRING || tok->type == JSMN_PRIMITIVE) && strlen(s) == n &&
         memcmp(json->text + tok->start, s, n) == 0;
}

int rmt_json_number(const rmt_json *json, int i, double *out) {
  const jsmntok_t *tok = &json->tokens[i];
  const char *s = json->text + tok->start;
  if (tok->type != JSMN_PRIMITIVE || (s[0] != '-' && !is_digit(s[0]))) return -1;  // not true/false/null
  char buf[64];
  size_t n = (size_t)(tok->end - tok->start);
  if (n >= sizeof buf) return -1;
  memcpy(buf, s, n);
  buf[n] = 0;
  double v = strtod(buf, NULL);  // the grammar check made it a valid number
  if (!isfinite(v)) return -1;   // 1e400
  *out = v;
  return 0;
}

int rmt_json_uint(const rmt_json *json, int i, uint64_t max, uint64_t *out) {
  const jsmntok_t *tok = &json->tokens[i];
  if (tok->type != JSMN_PRIMITIVE || tok->end == tok->start) return -1;
  uint64_t v = 0;
  for (int k = tok->start; k < tok->end; k++) {
    char c = json->text[k];
    if (!is_digit(c)) return -1;
    unsigned digit = (unsigned)(c - '0');
    if (digit > max || v > (max - digit) / 10) return -1;  // v * 10 + digit > max
    v = v * 10 + digit;
  }
  *out = v;
  return 0;
}

int rmt_json_string(const rmt_json *json, int i, char *buf, size_t cap) {
  const jsmntok_t *tok = &json->tokens[i];
  size_t n = (size_t)(tok->end - tok->start);
  if (tok->type != JSMN_STRING || n + 1 > cap) return -1;
  memcpy(buf, json->text + tok->start, n);
  buf[n] = 0;
  return 0;
}
