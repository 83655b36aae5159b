// The JSON reader (src/json.c) that config.json and safetensors headers go
// through: strict RFC 8259 grammar, unique unescaped keys, bounded nesting,
// numbers that are finite, integers without fractions or exponents.
#include "rmt.h"
#include "testutil.h"

static int parses(const char *text) {
  rmt_json json;
  int err = rmt_json_parse(&json, text, strlen(text), "test");
  rmt_json_free(&json);
  return err == RMT_OK;
}

static void expect_rejected(const char *text, const char *needle) {
  rmt_json json;
  int err = rmt_json_parse(&json, text, strlen(text), "test");
  CHECK(err == RMT_E_FORMAT, "%s: accepted", text);
  CHECK(strstr(rmt_last_error(), needle), "%s: error \"%s\" lacks \"%s\"", text, rmt_last_error(), needle);
  CHECK(json.tokens == NULL, "%s: tokens left allocated", text);
}

static void test_grammar(void) {
  const char *good[] = {
      "{}",
      " {\"a\": 1} \n",
      "{\"a\":\"\\u00e9\\n\\\"\",\"b\":[1.5e3,-0,0.25,1E-2,true,false,null,{},[]],\"c\":{\"d\":{}}}",
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) CHECK(parses(good[i]), "rejected: %s (%s)", good[i], rmt_last_error());
  rmt_json json;
  CHECK(rmt_json_parse(&json, "{\"a\":1} \0\0", 10, "padded") == RMT_OK, "NUL padding: %s", rmt_last_error());
  rmt_json_free(&json);
  // What jsmn's strict mode lets through, and what it does not.
  const char *malformed[] = {
      "{\"__metadata__\" \"x\" \"y\"}",  // keys without values (read one token past the end before)
      "{\"a\":1,,\"b\":2}",  "{\"a\":1,}",          "{\"a\":1 \"b\":2}",   "{\"a\":[1:2]}",
      "{\"a\":[1,]}",        "{\"a\":\"x\":\"y\"}", "{\"a\":{\"b\"}}",    "{\"a\":-nan}",
      "{\"a\":nan}",         "{\"a\":-inf}",       "{\"a\":01}",         "{\"a\":1.}",
      "{\"a\":.5}",          "{\"a\":1e}",         "{\"a\":+1}",         "{\"a\":truex}",
      "{\"a\":\"\\q\"}",     "{\"a\":\"\\u12\"}",  "{\"a\":\"tab\there\"}", "{\"a\":1}{\"b\":2}",
      "[1]",                 "{\"a\":1",           "{:1}",               "",
      "{\"a\":1} x",
  };
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) expect_rejected(malformed[i], "malformed JSON");
  // Nesting: 32 levels pass, 33 do not (no deep recursion anywhere).
  char deep[128];
  for (int depth = 32; depth <= 33; depth++) {
    int n = 0;
    deep[n++] = '{';
    deep[n++] = '"', deep[n++] = 'a', deep[n++] = '"', deep[n++] = ':';
    for (int i = 1; i < depth; i++) deep[n++] = '[';
    for (int i = 1; i < depth; i++) deep[n++] = ']';
    deep[n++] = '}';
    deep[n] = 0;
    CHECK(parses(deep) == (depth == 32), "nesting depth %d", depth);
  }
}

static void test_keys(void) {
  expect_rejected("{\"a\":1,\"b\":2,\"a\":3}", "duplicate key \"a\"");
  expect_rejected("{\"x\":{\"b\":1,\"b\":1}}", "duplicate key \"b\"");
  expect_rejected("{\"a\":[{\"k\":1,\"k\":2}]}", "duplicate key \"k\"");
  // An escaped key could spell an existing one ("d\u005fmodel" is "d_model").
  expect_rejected("{\"d_model\":64,\"d\\u005fmodel\":32}", "escape sequence");
  CHECK(parses("{\"a\":1,\"ab\":2,\"b\":{\"a\":3}}"), "equal keys in different objects: %s", rmt_last_error());
  // Many keys: sorted once per object, not compared pairwise.
  size_t n = 200000, cap = n * 16 + 8, len = 0;
  char *big = malloc(cap);
  big[len++] = '{';
  for (size_t i = 0; i < n; i++) len += (size_t)snprintf(big + len, cap - len, "%s\"k%zu\":0", i ? "," : "", i);
  big[len++] = '}';
  rmt_json json;
  CHECK(rmt_json_parse(&json, big, len, "big") == RMT_OK, "200000 keys: %s", rmt_last_error());
  rmt_json_free(&json);
  snprintf(big + len - 1, cap - len + 1, ",\"k7\":1}");
  CHECK(rmt_json_parse(&json, big, strlen(big), "big") == RMT_E_FORMAT && strstr(rmt_last_error(), "duplicate key \"k7\""),
        "duplicate among 200000 keys: %s", rmt_last_error());
  free(big);
}

static void test_numbers(void) {
  const char *text = "{\"a\":1e400,\"b\":-2.5,\"c\":18446744073709551615,\"d\":18446744073709551616,\"e\":64.0,"
                     "\"f\":6e1,\"g\":-1,\"h\":\"7\",\"i\":255,\"j\":256}";
  rmt_json json;
  CHECK(rmt_json_parse(&json, text, strlen(text), "numbers") == RMT_OK, "numbers: %s", rmt_last_error());
  double v;
  uint64_t u;
  CHECK(rmt_json_number(&json, rmt_json_find(&json, 0, "a"), &v) == -1, "1e400 is not finite");
  CHECK(rmt_json_number(&json, rmt_json_find(&json, 0, "b"), &v) == 0 && v == -2.5, "-2.5");
  CHECK(rmt_json_number(&json, rmt_json_find(&json, 0, "h"), &v) == -1, "a string is not a number");
  CHECK(rmt_json_uint(&json, rmt_json_find(&json, 0, "c"), UINT64_MAX, &u) == 0 && u == UINT64_MAX, "2^64 - 1");
  CHECK(rmt_json_uint(&json, rmt_json_find(&json, 0, "d"), UINT64_MAX, &u) == -1, "2^64 overflows");
  CHECK(rmt_json_uint(&json, rmt_json_find(&json, 0, "e"), 100, &u) == -1, "64.0 is not an integer token");
  CHECK(rmt_json_uint(&json, rmt_json_find(&json, 0, "f"), 100, &u) == -1, "6e1 is not an integer token");
  CHECK(rmt_json_uint(&json, rmt_json_find(&json, 0, "g"), 100, &u) == -1, "-1 is not unsigned");
  CHECK(rmt_json_uint(&json, rmt_json_find(&json, 0, "i"), 255, &u) == 0 && u == 255, "255 <= 255");
  CHECK(rmt_json_uint(&json, rmt_json_find(&json, 0, "j"), 255, &u) == -1, "256 > 255");
  CHECK(rmt_json_uint(&json, rmt_json_find(&json, 0, "i"), 0, &u) == -1, "255 > 0");
  rmt_json_free(&json);
}

int main(void) {
  test_grammar();
  test_keys();
  test_numbers();
  return test_report("test_json");
}
