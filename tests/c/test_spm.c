// SentencePiece tokenizer, native build: exact parity with spm_encode /
// spm_decode (sentencepiece 0.1.97) on every model in tests/fixtures/spm/
// (made by tests/fixtures/make_spm_fixtures.py), bad models, and a bounded
// random-bytes fuzz of the model parser, encoder and decoder.
// Run from the repository root. Exits non-zero on any failure.
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spm.h"
#include "spm_types.h"  // has_denorm, for the span checks
#include "testutil.h"

#define DIR_SPM "tests/fixtures/spm"

// Splits a buffer into lines (in place: '\n' -> NUL); returns the count.
static int split_lines(uint8_t *data, size_t size, char ***lines, size_t **lens) {
  int n = 0;
  for (size_t i = 0; i < size; i++) n += data[i] == '\n';
  *lines = malloc((size_t)n * sizeof **lines);
  *lens = malloc((size_t)n * sizeof **lens);
  size_t start = 0;
  int k = 0;
  for (size_t i = 0; i < size && k < n; i++) {
    if (data[i] != '\n') continue;
    (*lines)[k] = (char *)data + start;
    (*lens)[k] = i - start;
    data[i] = 0;
    k++;
    start = i + 1;
  }
  return n;
}

static void print_ids(const char *label, const int32_t *ids, int n) {
  fprintf(stderr, "  %s (%d):", label, n);
  for (int i = 0; i < n && i < 60; i++) fprintf(stderr, " %d", ids[i]);
  fprintf(stderr, n > 60 ? " ...\n" : "\n");
}

static int32_t *ids_buf;
static int ids_cap;

// Encodes, growing the id buffer as the API asks.
static int encode(const rmt_spm *spm, const char *text, size_t len) {
  int n = rmt_spm_encode(spm, text, len, ids_buf, ids_cap);
  if (n > ids_cap) {
    ids_cap = n * 2;
    ids_buf = realloc(ids_buf, (size_t)ids_cap * sizeof *ids_buf);
    n = rmt_spm_encode(spm, text, len, ids_buf, ids_cap);
  }
  return n;
}

static char *text_buf;
static size_t text_cap = 1;

static int decode(const rmt_spm *spm, const int32_t *ids, int n_ids) {
  if (!text_buf) text_buf = malloc(text_cap);
  int n = rmt_spm_decode(spm, ids, n_ids, text_buf, text_cap);
  if (n >= 0 && (size_t)n >= text_cap) {
    text_cap = (size_t)n * 2 + 1;
    text_buf = realloc(text_buf, text_cap);
    n = rmt_spm_decode(spm, ids, n_ids, text_buf, text_cap);
  }
  return n;
}

// Parity on the corpus and the random id lines of one model.
static void test_model(const char *name, char **corpus, size_t *corpus_len, int n_corpus) {
  char path[512];
  size_t size, ids_size, dec_size;
  snprintf(path, sizeof path, DIR_SPM "/%.63s.model", name);
  uint8_t *model = (uint8_t *)read_file(path, &size);
  CHECK(model, "cannot read %s", path);
  if (!model) return;
  rmt_spm *spm = rmt_spm_load(model, size);
  free(model);
  CHECK(spm, "%s: load failed: %s", name, rmt_last_error());
  if (!spm) return;

  snprintf(path, sizeof path, DIR_SPM "/%.63s.ids16", name);
  uint8_t *ids16 = (uint8_t *)read_file(path, &ids_size);
  snprintf(path, sizeof path, DIR_SPM "/%.63s.decoded", name);
  uint8_t *dec = (uint8_t *)read_file(path, &dec_size);
  CHECK(ids16 && dec, "%s: missing fixtures", name);
  if (!ids16 || !dec) return;
  char **dec_lines;
  size_t *dec_lens;
  int n_dec = split_lines(dec, dec_size, &dec_lines, &dec_lens);
  CHECK(n_dec == n_corpus, "%s: %d decoded lines for %d corpus lines", name, n_dec, n_corpus);

  int enc_ok = 0, dec_ok = 0, shown = 0;
  size_t pos = 0;
  int32_t *expected = malloc(sizeof(int32_t) * (ids_size / 2 + 1));
  for (int line = 0; line < n_corpus && line < n_dec; line++) {
    int n_exp = 0;
    while (pos + 1 < ids_size) {
      int v = ids16[pos] | ids16[pos + 1] << 8;
      pos += 2;
      if (v == 0xFFFF) break;
      expected[n_exp++] = v;
    }
    int n = encode(spm, corpus[line], corpus_len[line]);
    if (n == n_exp && !memcmp(ids_buf, expected, (size_t)n * sizeof(int32_t))) {
      enc_ok++;
    } else if (shown++ < 5) {
      fprintf(stderr, "%s: line %d differs (%s)\n  text: %.200s\n", name, line + 1,
                       n < 0 ? rmt_last_error() : "", corpus[line]);
      print_ids("spm_encode", expected, n_exp);
      print_ids("rmt_spm_encode", ids_buf, n);
    }
    // Decode the reference ids.
    int m = decode(spm, expected, n_exp);
    const char *want = dec_lines[line][0] == '=' ? corpus[line] : dec_lines[line] + 1;
    size_t want_len = dec_lines[line][0] == '=' ? corpus_len[line] : dec_lens[line] - 1;
    if (m >= 0 && (size_t)m == want_len && !memcmp(text_buf, want, want_len)) {
      dec_ok++;
    } else if (shown++ < 5) {
      fprintf(stderr, "%s: decode of line %d differs (%s)\n  spm_decode: %.200s\n  rmt:        %.200s\n",
              name, line + 1, m < 0 ? rmt_last_error() : "", want, m >= 0 ? text_buf : "");
    }
  }
  CHECK(enc_ok == n_corpus, "%s: encode parity %d/%d lines", name, enc_ok, n_corpus);
  CHECK(dec_ok == n_corpus, "%s: decode parity %d/%d lines", name, dec_ok, n_corpus);
  printf("%-14s encode %d/%d  decode %d/%d", name, enc_ok, n_corpus, dec_ok, n_corpus);
  free(expected);
  free(ids16);
  free(dec);
  free(dec_lines);
  free(dec_lens);

  // Random id sequences.
  snprintf(path, sizeof path, DIR_SPM "/%.63s.rand.ids", name);
  uint8_t *rids = (uint8_t *)read_file(path, &ids_size);
  snprintf(path, sizeof path, DIR_SPM "/%.63s.rand.decoded", name);
  uint8_t *rdec = (uint8_t *)read_file(path, &dec_size);
  CHECK(rids && rdec, "%s: missing random-id fixtures", name);
  if (rids && rdec) {
    char **id_lines, **want_lines;
    size_t *id_lens, *want_lens;
    int n_ids = split_lines(rids, ids_size, &id_lines, &id_lens);
    int n_want = split_lines(rdec, dec_size, &want_lines, &want_lens);
    CHECK(n_ids == n_want, "%s: %d random id lines, %d decoded", name, n_ids, n_want);
    int ok = 0;
    for (int i = 0; i < n_ids && i < n_want; i++) {
      int n = 0;
      for (char *p = id_lines[i], *end; *p; p = end) {
        long v = strtol(p, &end, 10);
        if (end == p) break;
        ids_buf[n++] = (int32_t)v;
      }
      int m = decode(spm, ids_buf, n);
      if (m >= 0 && (size_t)m == want_lens[i] && !memcmp(text_buf, want_lines[i], want_lens[i]))
        ok++;
      else if (shown++ < 8)
        fprintf(stderr, "%s: random ids line %d: %s\n  spm_decode: %s\n  rmt:        %s\n", name,
                i + 1, id_lines[i], want_lines[i], m >= 0 ? text_buf : rmt_last_error());
    }
    CHECK(ok == n_ids, "%s: random-id decode parity %d/%d", name, ok, n_ids);
    printf("  random-id decode %d/%d\n", ok, n_ids);
    free(id_lines);
    free(id_lens);
    free(want_lines);
    free(want_lens);
  }
  free(rids);
  free(rdec);

  // API details.
  int vocab = rmt_spm_vocab_size(spm);
  CHECK(vocab > 0, "%s: vocab size %d", name, vocab);
  for (int id = 0; id < vocab; id++) {
    const char *piece = rmt_spm_id_to_piece(spm, id);
    int back = rmt_spm_piece_to_id(spm, piece);
    if (back != id) {
      // Only a piece spelled like a reserved one may map elsewhere.
      CHECK(back >= 0 && !strcmp(rmt_spm_id_to_piece(spm, back), piece),
            "%s: piece_to_id(id_to_piece(%d)) = %d", name, id, back);
    }
  }
  CHECK(rmt_spm_piece_to_id(spm, "no such piece, surely") == -1, "%s: absent piece", name);
  CHECK(rmt_spm_id_to_piece(spm, vocab) == NULL, "%s: id_to_piece out of range", name);
  int32_t bad_ids[2] = {1, vocab};
  CHECK(rmt_spm_decode(spm, bad_ids, 2, text_buf, text_cap) == RMT_E_INVALID,
        "%s: decoding an id out of range must fail", name);
  bad_ids[1] = -1;
  CHECK(rmt_spm_decode(spm, bad_ids, 2, text_buf, text_cap) == RMT_E_INVALID,
        "%s: decoding a negative id must fail", name);
  CHECK(encode(spm, "", 0) == 0, "%s: empty text", name);
  // Short buffers: the count is still returned, nothing written past max_ids.
  int full = encode(spm, "Hola mundo, hello world", 23);
  int32_t two[3] = {-7, -7, -7};
  CHECK(rmt_spm_encode(spm, "Hola mundo, hello world", 23, two, 2) == full && two[2] == -7,
        "%s: short id buffer", name);
  char small[4] = "zzz";
  int need = rmt_spm_decode(spm, ids_buf, full, small, 2);
  CHECK(need > 2 && small[0] == 'z', "%s: short text buffer (%d)", name, need);
  rmt_spm_free(spm);
}

// The fixture model `name`, or NULL when it does not load (test_model reports that).
static rmt_spm *load_fixture_model(const char *name) {
  char path[512];
  size_t size;
  snprintf(path, sizeof path, DIR_SPM "/%.63s.model", name);
  uint8_t *model = (uint8_t *)read_file(path, &size);
  rmt_spm *spm = model ? rmt_spm_load(model, size) : NULL;
  free(model);
  return spm;
}

// Whether bytes [from, to) of `text` normalize to nothing but spaces ("▁").
static int normalizes_to_space(const rmt_spm *spm, const char *text, size_t from, size_t to) {
  char out[256];
  int n = rmt_spm_normalize(spm, text + from, to - from, out, sizeof out);
  if (n < 0 || (size_t)n >= sizeof out) return 0;
  for (int i = 0; i < n; i += SPM_SPACE_LEN)
    if (i + SPM_SPACE_LEN > n || memcmp(out + i, SPM_SPACE, SPM_SPACE_LEN)) return 0;
  return 1;
}

// Spans on the corpus: rmt_spm_encode_spans gives the same ids as
// rmt_spm_encode, with spans in order and inside the text that leave out only
// what normalizes to spaces (or to nothing); where normalization changes
// nothing but the spaces, each piece's span holds exactly the piece's text.
// rmt_spm_decode_spans gives the text rmt_spm_decode gives, each id's bytes
// following the last id's (the byte pieces of one character sharing them).
static void test_spans(const char *name, char **corpus, size_t *corpus_len, int n_corpus) {
  rmt_spm *spm = load_fixture_model(name);
  if (!spm) return;
  int bad_encode = 0, bad_piece = 0, bad_decode = 0, checked_pieces = 0;
  for (int line = 0; line < n_corpus; line++) {
    const char *text = corpus[line];
    size_t len = corpus_len[line];
    int n = encode(spm, text, len);
    if (n < 0) continue;
    int32_t *ids = malloc(sizeof(int32_t) * ((size_t)n + 1)), *spans = malloc(sizeof(int32_t) * (2 * (size_t)n + 2));
    char *covered = calloc(len + 1, 1), *norm = malloc(4 * len + 16);
    int m = rmt_spm_encode_spans(spm, text, len, ids, spans, n, NULL, 0);
    int ok = m == n && !memcmp(ids, ids_buf, sizeof(int32_t) * (size_t)n);
    for (int i = 0; ok && i < n; i++) {
      int32_t b = spans[2 * i], e = spans[2 * i + 1];
      ok = b >= 0 && b <= e && (size_t)e <= len && (i == 0 || (b >= spans[2 * i - 2] && e >= spans[2 * i - 1]));
      if (ok) memset(covered + b, 1, (size_t)(e - b));
    }
    for (size_t from = 0; ok && from < len;) {
      if (covered[from]) { from++; continue; }
      size_t to = from;
      while (to < len && !covered[to]) to++;
      ok = normalizes_to_space(spm, text, from, to);
      if (!ok && bad_encode < 3) fprintf(stderr, "%s: line %d: bytes %zu..%zu in no span\n", name, line + 1, from, to);
      from = to;
    }
    if (!ok && bad_encode++ < 3) fprintf(stderr, "%s: line %d: bad encode spans\n", name, line + 1);
    // Lines that normalize to themselves (spaces as "▁", perhaps a dummy prefix).
    int nl = ok ? rmt_spm_normalize(spm, text, len, norm, 4 * len + 16) : -1, same = nl >= 0;
    size_t k = 0, t = 0;
    if (same && (size_t)nl >= SPM_SPACE_LEN && !memcmp(norm, SPM_SPACE, SPM_SPACE_LEN) && text[0] != ' ') k = SPM_SPACE_LEN;
    for (; same && k < (size_t)nl; t++) {
      int space = k + SPM_SPACE_LEN <= (size_t)nl && !memcmp(norm + k, SPM_SPACE, SPM_SPACE_LEN);
      same = t < len && (space ? text[t] == ' ' : norm[k] == text[t]);
      k += space ? SPM_SPACE_LEN : 1;
    }
    same = same && t == len;
    for (int i = 0; same && i < n; i++) {
      int type = rmt_spm_piece_type(spm, ids[i]);
      if (type != RMT_SPM_NORMAL && type != RMT_SPM_USER_DEFINED) continue;
      const char *piece = rmt_spm_id_to_piece(spm, ids[i]);
      char surface[256];
      size_t sl = 0;
      for (size_t p = 0; piece[p] && sl < sizeof surface;) {
        int space = !strncmp(piece + p, SPM_SPACE, SPM_SPACE_LEN);
        surface[sl++] = space ? ' ' : piece[p];
        p += space ? SPM_SPACE_LEN : 1;
      }
      const char *got = text + spans[2 * i];
      size_t gl = (size_t)(spans[2 * i + 1] - spans[2 * i]);
      // The dummy prefix is no input byte (and replaces the leading spaces).
      int match = (gl == sl && !memcmp(got, surface, sl)) || (i == 0 && surface[0] == ' ' && gl + 1 == sl &&
                                                             !memcmp(got, surface + 1, gl));
      checked_pieces++;
      if (!match && bad_piece++ < 3)
        fprintf(stderr, "%s: line %d: piece %d \"%s\" has span \"%.*s\"\n", name, line + 1, i, piece, (int)gl, got);
    }
    // Decoding.
    int d = decode(spm, ids, n);
    int dd = d < 0 ? -1 : rmt_spm_decode_spans(spm, ids, n, NULL, 0, spans);
    ok = d >= 0 && dd == d;
    for (int i = 0; ok && i < n; i++) {
      int32_t b = spans[2 * i], e = spans[2 * i + 1];
      int32_t pb = i ? spans[2 * i - 2] : 0, pe = i ? spans[2 * i - 1] : 0;
      ok = b >= 0 && b <= e && e <= d && b >= pb && e >= pe;
      // Without a denormalizer the ids tile the text.
      if (ok && !spm->has_denorm) ok = b == pe || (b == pb && e == pe);
    }
    if (ok && n && !spm->has_denorm) ok = spans[2 * n - 1] == d;
    if (!ok && bad_decode++ < 3) fprintf(stderr, "%s: line %d: bad decode spans\n", name, line + 1);
    free(ids), free(spans), free(covered), free(norm);
  }
  CHECK(!bad_encode, "%s: encode spans wrong on %d lines", name, bad_encode);
  CHECK(!bad_piece, "%s: %d of %d pieces have the wrong span", name, bad_piece, checked_pieces);
  CHECK(!bad_decode, "%s: decode spans wrong on %d lines", name, bad_decode);
  printf("%-14s spans: %d pieces checked against their text\n", name, checked_pieces);
  rmt_spm_free(spm);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

// Truncated, corrupted and random model files must fail cleanly (or load,
// when the damage happens to stay well formed) and never crash.
static void test_bad_models(void) {
  size_t size;
  uint8_t *model = (uint8_t *)read_file(DIR_SPM "/uni_bytes.model", &size);
  CHECK(model, "cannot read uni_bytes.model");
  if (!model) return;
  CHECK(!rmt_spm_load(model, 0), "an empty model must fail");
  CHECK(!rmt_spm_load((const uint8_t *)"hello world\n", 12), "a text file must fail");
  CHECK(strstr(rmt_last_error(), "spm:") != NULL, "error message: %s", rmt_last_error());
  int truncated_ok = 0;
  for (size_t cut = 1; cut < size; cut += 1 + cut / 8) {
    rmt_spm *spm = rmt_spm_load(model, cut);
    if (!spm) {
      truncated_ok += rmt_last_error()[0] != 0;
    } else {
      encode(spm, "trunc\xff", 6);
      rmt_spm_free(spm);
    }
  }
  CHECK(truncated_ok > 0, "truncated models must fail with a message");
  uint8_t *copy = malloc(size);
  for (int iter = 0; iter < 300; iter++) {
    memcpy(copy, model, size);
    int flips = 1 + (int)(rnd() % 8);
    for (int k = 0; k < flips; k++) copy[rnd() % size] ^= (uint8_t)(1u << (rnd() % 8));
    rmt_spm *spm = rmt_spm_load(copy, size);
    if (spm) {
      char text[64];
      for (int i = 0; i < 64; i++) text[i] = (char)rnd();
      int n = encode(spm, text, sizeof text);
      if (n > 0) decode(spm, ids_buf, n);
      rmt_spm_free(spm);
    }
  }
  for (int iter = 0; iter < 2000; iter++) {
    size_t n = 1 + rnd() % 512;
    for (size_t i = 0; i < n; i++) copy[i] = (uint8_t)rnd();
    if (iter % 2) copy[0] = 0x0A;  // looks like a pieces field
    rmt_spm *spm = rmt_spm_load(copy, n);
    rmt_spm_free(spm);
  }
  free(copy);
  free(model);
  // Found by fuzz_spm_load: a model whose unknown piece decodes to "" (an
  // empty unk_surface); decoding it first appended 0 bytes to a buffer with
  // no storage yet (undefined behaviour, reported by UBSan).
  model = (uint8_t *)read_file("fuzz/regressions/fuzz_spm_load/empty-unk-surface", &size);
  rmt_spm *spm = model ? rmt_spm_load(model, size) : NULL;
  CHECK(spm, "empty-unk-surface: %s", rmt_last_error());
  if (spm) {
    int32_t unk[] = {rmt_spm_special_id(spm, RMT_SPM_UNK_ID), rmt_spm_special_id(spm, RMT_SPM_UNK_ID)};
    char out[8] = "x";
    CHECK(unk[0] >= 0 && rmt_spm_decode(spm, unk, 2, out, sizeof out) == 0 && out[0] == 0, "unknown pieces decode to \"\"");
    rmt_spm_free(spm);
  }
  free(model);
  printf("bad models: ok\n");
}

// Random bytes through the encoder and decoder of every model: no crash,
// ids in range, and the decoder accepts what the encoder made.
static void fuzz_encoder(const char *name) {
  rmt_spm *spm = load_fixture_model(name);
  if (!spm) return;
  int vocab = rmt_spm_vocab_size(spm);
  char text[300];
  for (int iter = 0; iter < 1500; iter++) {
    size_t n = rnd() % sizeof text;
    int mode = (int)(rnd() % 3);
    for (size_t i = 0; i < n; i++) {
      uint32_t r = rnd();
      // Mixed: random bytes, mostly-ASCII, or bytes >= 0x80.
      text[i] = mode == 0 ? (char)r : mode == 1 ? (char)(r % 8 ? 0x20 + r % 95 : r) : (char)(0x80 | r);
    }
    int k = encode(spm, text, n);
    CHECK(k >= 0, "%s: fuzz encode failed: %s", name, rmt_last_error());
    for (int i = 0; i < k; i++)
      if (ids_buf[i] < 0 || ids_buf[i] >= vocab) {
        CHECK(0, "%s: fuzz id %d out of range", name, ids_buf[i]);
        break;
      }
    CHECK(k < 0 || decode(spm, ids_buf, k) >= 0, "%s: fuzz decode failed", name);
    for (int i = 0; i < 20; i++) ids_buf[i] = (int32_t)(rnd() % (uint32_t)vocab);
    CHECK(decode(spm, ids_buf, 20) >= 0, "%s: random ids decode failed", name);
  }
  rmt_spm_free(spm);
}

int main(void) {
  ids_cap = 1024;
  ids_buf = malloc((size_t)ids_cap * sizeof *ids_buf);
  size_t size;
  uint8_t *corpus = (uint8_t *)read_file(DIR_SPM "/corpus.txt", &size);
  if (!corpus) {
    fprintf(stderr, "FAIL: cannot read " DIR_SPM "/corpus.txt (run from the repo root)\n");
    return 1;
  }
  char **lines;
  size_t *lens;
  int n_lines = split_lines(corpus, size, &lines, &lens);

  DIR *dir = opendir(DIR_SPM);
  CHECK(dir, "cannot open " DIR_SPM);
  char names[32][64];
  int n_models = 0;
  for (struct dirent *e; dir && (e = readdir(dir)) && n_models < 32;) {
    size_t len = strlen(e->d_name);
    if (len > 6 && len < 64 && !strcmp(e->d_name + len - 6, ".model")) {
      memcpy(names[n_models], e->d_name, len - 6);
      names[n_models++][len - 6] = 0;
    }
  }
  if (dir) closedir(dir);
  qsort(names, (size_t)n_models, sizeof names[0], (int (*)(const void *, const void *))strcmp);
  CHECK(n_models >= 4, "expected at least 4 fixture models, found %d", n_models);
  for (int i = 0; i < n_models; i++) test_model(names[i], lines, lens, n_lines);
  for (int i = 0; i < n_models; i++) test_spans(names[i], lines, lens, n_lines);
  test_bad_models();
  for (int i = 0; i < n_models; i++) fuzz_encoder(names[i]);
  printf("fuzz: %d models x 1500 random inputs\n", n_models);

  free(lines);
  free(lens);
  free(corpus);
  free(ids_buf);
  free(text_buf);
  if (test_failures) {
    fprintf(stderr, "test_spm: %d failure(s)\n", test_failures);
    return 1;
  }
  printf("test_spm: all passed (%d models, %d corpus lines)\n", n_models, n_lines);
  return 0;
}
