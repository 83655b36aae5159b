// jsmn's implementation lives in this file only; json.h includes its declarations.
#define JSMN_STRICT
#include <jsmn.h>

#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

int rmt_json_parse(rmt_json *json, const char *text, size_t len, const char *what) {
  memset(json, 0, sizeof *json);
  json->text = text;
  jsmn_parser parser;
  jsmn_init(&parser);
  int count = jsmn_parse(&parser, text, len, NULL, 0);
  if (count < 1) return rmt_error(RMT_E_FORMAT, "%s: malformed JSON%s", what, count == JSMN_ERROR_PART ? " (truncated)" : "");
  json->tokens = malloc(sizeof(jsmntok_t) * (size_t)count);
  if (!json->tokens) return rmt_error(RMT_E_NOMEM, "%s: out of memory parsing JSON", what);
  jsmn_init(&parser);
  json->n_tokens = jsmn_parse(&parser, text, len, json->tokens, (unsigned)count);
  if (json->n_tokens < 1 || json->tokens[0].type != JSMN_OBJECT || rmt_json_skip(json, 0) != json->n_tokens) {
    rmt_json_free(json);
    return rmt_error(RMT_E_FORMAT, "%s: malformed JSON (expected one object)", what);
  }
  // Only whitespace (or NULs, as padding) may follow the object.
  for (size_t i = (size_t)json->tokens[0].end; i < len; i++) {
    char c = text[i];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != 0) {
      rmt_json_free(json);
      return rmt_error(RMT_E_FORMAT, "%s: malformed JSON (trailing data)", what);
    }
  }
  return RMT_OK;
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
  if (object < 0 || json->tokens[object].type != JSMN_OBJECT) return -1;
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
  if (tok->type != JSMN_PRIMITIVE) return -1;
  char buf[64];
  size_t n = (size_t)(tok->end - tok->start);
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, json->text + tok->start, n);
  buf[n] = 0;
  char *end;
  *out = strtod(buf, &end);
  return *end == 0 && (buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')) ? 0 : -1;
}

int rmt_json_string(const rmt_json *json, int i, char *buf, size_t cap) {
  const jsmntok_t *tok = &json->tokens[i];
  size_t n = (size_t)(tok->end - tok->start);
  if (tok->type != JSMN_STRING || n + 1 > cap) return -1;
  memcpy(buf, json->text + tok->start, n);
  buf[n] = 0;
  return 0;
}
