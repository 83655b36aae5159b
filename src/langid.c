// The language identifier's model: loading it from a safetensors file
// (checked: metadata, every tensor's dtype and shape, nothing left over) and
// scoring a text (langid.h has the maths and the file layout).
#include "langid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "error.h"
#include "json.h"
#include "langid_internal.h"
#include "safetensors.h"

// Size letters: L languages, G groups (tables), D embedding width, H hidden
// width (0: none), B_k rows of table k, X = G*D inputs of the dense layers.
struct rmt_langid {
  rmt_arena arena;
  int n_langs, dim, hidden;    // L, D, H
  rmt_langid_groups groups;    // G orders and their B_k
  const int8_t *tables[RMT_LANGID_MAX_GROUPS];  // (B_k, D)
  const float *scales[RMT_LANGID_MAX_GROUPS];   // (B_k): row r is tables[k][r] * scales[k][r]
  const float *hidden_w, *hidden_b;             // (H, X), (H)
  const float *out_w, *out_b;                   // (L, H or X), (L)
  char (*tags)[RMT_LANGID_TAG_MAX];             // (L)
};

struct rmt_langid_state {
  const rmt_langid *model;
  float *x;           // (X): the sums of each group's rows, then their means
  int64_t counts[RMT_LANGID_MAX_GROUPS];  // features seen per group
  float *h;           // (H)
  float *probs;       // (L)
};

// ---------------------------------------------------------------- metadata

// Copies the string value of metadata `key` into buf; RMT_E_FORMAT when absent.
static int metadata_string(const rmt_json *json, int meta, const char *key, char *buf, size_t cap) {
  int v = meta < 0 ? -1 : rmt_json_find(json, meta, key);
  if (v < 0 || rmt_json_string(json, v, buf, cap) != 0) {
    return rmt_error(RMT_E_FORMAT, "langid model: __metadata__ needs a string \"%s\" (of at most %zu bytes)", key,
                     cap - 1);
  }
  return RMT_OK;
}

static int is_tag_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'; }

// "af,am,..." into model->tags (allocated from the arena by the caller's count).
static int parse_languages(const char *list, char (*tags)[RMT_LANGID_TAG_MAX], int n_langs) {
  int n = 0;
  for (const char *p = list;; p++) {
    const char *start = p;
    while (is_tag_char(*p)) p++;
    size_t len = (size_t)(p - start);
    if (len == 0 || len >= RMT_LANGID_TAG_MAX || (*p != ',' && *p != 0) || n >= n_langs) {
      return rmt_error(RMT_E_FORMAT, "langid model: \"languages\" must be %d comma-separated tags of letters, digits "
                       "and hyphens, each under %d bytes", n_langs, RMT_LANGID_TAG_MAX);
    }
    memcpy(tags[n], start, len);
    tags[n++][len] = 0;
    if (*p == 0) break;
  }
  if (n != n_langs) return rmt_error(RMT_E_FORMAT, "langid model: %d languages named, output.bias has %d", n, n_langs);
  return RMT_OK;
}

// "0,1,2,3" into groups->orders and groups->n.
static int parse_orders(const char *list, rmt_langid_groups *groups) {
  groups->n = 0;
  for (const char *p = list;; p++) {
    if (*p < '0' || *p > '9' || groups->n == RMT_LANGID_MAX_GROUPS) {
      return rmt_error(RMT_E_FORMAT, "langid model: \"orders\" must be 1 to %d comma-separated digits",
                       RMT_LANGID_MAX_GROUPS);
    }
    groups->orders[groups->n++] = *p++ - '0';
    if (*p == 0) return RMT_OK;
    if (*p != ',') return rmt_error(RMT_E_FORMAT, "langid model: \"orders\" must be comma-separated digits");
  }
}

// Reads format, version, languages (kept in `languages`) and orders.
static int read_metadata(const uint8_t *bytes, size_t size, rmt_langid_groups *groups, char *languages, size_t cap) {
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; i--) header_len = header_len << 8 | bytes[i];  // checked by rmt_safetensors_open
  rmt_json json;
  int err = rmt_json_parse(&json, (const char *)bytes + 8, (size_t)header_len, "langid model header");
  if (err) return err;
  int meta = rmt_json_find(&json, 0, "__metadata__");
  if (meta >= 0 && json.tokens[meta].type != JSMN_OBJECT) meta = -1;
  char format[32], version[8], orders[64];
  err = metadata_string(&json, meta, "format", format, sizeof format);
  if (!err && strcmp(format, "rmt-langid") != 0) {
    err = rmt_error(RMT_E_FORMAT, "langid model: format \"%s\", expected \"rmt-langid\"", format);
  }
  if (!err) err = metadata_string(&json, meta, "version", version, sizeof version);
  if (!err && strcmp(version, "1") != 0) err = rmt_error(RMT_E_FORMAT, "langid model: version %s, this engine reads 1", version);
  if (!err) err = metadata_string(&json, meta, "languages", languages, cap);
  if (!err) err = metadata_string(&json, meta, "orders", orders, sizeof orders);
  if (!err) err = parse_orders(orders, groups);
  rmt_json_free(&json);
  return err;
}

// ---------------------------------------------------------------- tensors

// The tensor `name` of shape [rows, cols] ([rows] when cols is 0), marked
// used; NULL with an error naming it.
static rmt_tensor_info *tensor(rmt_safetensors *st, const char *name, int64_t rows, int64_t cols, int *err) {
  rmt_tensor_info *info = rmt_safetensors_find(st, name);
  if (!info) {
    *err = rmt_error(RMT_E_FORMAT, "langid model: tensor %s is missing", name);
    return NULL;
  }
  int dims = cols ? 2 : 1;
  if (info->n_dims != dims || info->shape[0] != rows || (cols && info->shape[1] != cols)) {
    *err = rmt_error(RMT_E_FORMAT, "langid model: tensor %s has the wrong shape (expected [%lld%s%lld])", name,
                     (long long)rows, cols ? ", " : "", (long long)(cols ? cols : 0));
    return NULL;
  }
  info->used = 1;
  return info;
}

// Reads a float tensor (any dtype the reader widens) into the arena.
static const float *read_floats(rmt_safetensors *st, rmt_arena *arena, const char *name, int64_t rows, int64_t cols,
                                int *err) {
  rmt_tensor_info *info = tensor(st, name, rows, cols, err);
  if (!info) return NULL;
  float *dst = rmt_arena_alloc(arena, rmt_size_mul((size_t)rows, rmt_size_mul(cols ? (size_t)cols : 1, 4)));
  if (!dst) {
    *err = rmt_error(RMT_E_NOMEM, "langid model: arena exhausted at %s (a sizing bug)", name);
    return NULL;
  }
  *err = rmt_safetensors_read_f32(st, info, dst);
  return *err ? NULL : dst;
}

// The shapes every tensor must have, from table.0, output.bias and hidden.bias.
static int read_shapes(rmt_safetensors *st, rmt_langid *m) {
  char name[32];
  for (int k = 0; k < m->groups.n; k++) {
    snprintf(name, sizeof name, "table.%d", k);
    rmt_tensor_info *t = rmt_safetensors_find(st, name);
    if (!t || t->n_dims != 2 || t->dtype != RMT_DTYPE_I8) {
      return rmt_error(RMT_E_FORMAT, "langid model: tensor %s (I8, [rows, D]) is missing or not one", name);
    }
    if (t->shape[0] < 1 || t->shape[0] > RMT_LANGID_MAX_BUCKETS || t->shape[1] < 1 ||
        t->shape[1] > RMT_LANGID_MAX_DIM || (k > 0 && t->shape[1] != m->dim)) {
      return rmt_error(RMT_E_FORMAT, "langid model: tensor %s has %lld x %lld values: rows must be 1 to %d, and D "
                       "1 to %d and the same in every table", name, (long long)t->shape[0], (long long)t->shape[1],
                       RMT_LANGID_MAX_BUCKETS, RMT_LANGID_MAX_DIM);
    }
    m->groups.buckets[k] = (int32_t)t->shape[0];
    m->dim = (int)t->shape[1];
  }
  rmt_tensor_info *out_b = rmt_safetensors_find(st, "output.bias");
  rmt_tensor_info *hid_b = rmt_safetensors_find(st, "hidden.bias");
  if (!out_b || out_b->n_dims != 1 || out_b->shape[0] < 1 || out_b->shape[0] > RMT_LANGID_MAX_LANGS) {
    return rmt_error(RMT_E_FORMAT, "langid model: output.bias must be a vector of 1 to %d values", RMT_LANGID_MAX_LANGS);
  }
  if (hid_b && (hid_b->n_dims != 1 || hid_b->shape[0] < 1 || hid_b->shape[0] > RMT_LANGID_MAX_DIM)) {
    return rmt_error(RMT_E_FORMAT, "langid model: hidden.bias must be a vector of 1 to %d values", RMT_LANGID_MAX_DIM);
  }
  m->n_langs = (int)out_b->shape[0];
  m->hidden = hid_b ? (int)hid_b->shape[0] : 0;
  return RMT_OK;
}

// Bytes of the arena: tables, their scales, the dense layers, the tags.
static size_t arena_size(const rmt_langid *m) {
  size_t x = rmt_size_mul((size_t)m->groups.n, (size_t)m->dim), size = 0;
  for (int k = 0; k < m->groups.n; k++) {
    size = rmt_size_add(size, rmt_arena_bytes(rmt_size_mul((size_t)m->groups.buckets[k], (size_t)m->dim), 1));
    size = rmt_size_add(size, rmt_arena_bytes((size_t)m->groups.buckets[k], 4));
  }
  size_t out_in = m->hidden ? (size_t)m->hidden : x;
  if (m->hidden) {
    size = rmt_size_add(size, rmt_arena_bytes(rmt_size_mul((size_t)m->hidden, x), 4));
    size = rmt_size_add(size, rmt_arena_bytes((size_t)m->hidden, 4));
  }
  size = rmt_size_add(size, rmt_arena_bytes(rmt_size_mul((size_t)m->n_langs, out_in), 4));
  size = rmt_size_add(size, rmt_arena_bytes((size_t)m->n_langs, 4));
  return rmt_size_add(size, rmt_arena_bytes((size_t)m->n_langs, RMT_LANGID_TAG_MAX));
}

static int read_tables(rmt_safetensors *st, rmt_langid *m) {
  char name[32];
  for (int k = 0; k < m->groups.n; k++) {
    snprintf(name, sizeof name, "table.%d", k);
    rmt_tensor_info *info = rmt_safetensors_find(st, name);
    size_t rows = (size_t)m->groups.buckets[k];
    int8_t *table = rmt_arena_alloc(&m->arena, rows * (size_t)m->dim);  // sized by arena_size: no wrap
    float *scales = rmt_arena_alloc(&m->arena, rows * 4);
    if (!table || !scales) return rmt_error(RMT_E_NOMEM, "langid model: arena exhausted at %s (a sizing bug)", name);
    int err = rmt_safetensors_read_i8(st, info, table, scales);
    if (err) return err;
    info->used = 1;
    m->tables[k] = table;
    m->scales[k] = scales;
  }
  return RMT_OK;
}

static int read_dense(rmt_safetensors *st, rmt_langid *m) {
  int err = RMT_OK;
  int64_t x = (int64_t)m->groups.n * m->dim, out_in = m->hidden ? m->hidden : x;
  if (m->hidden) {
    m->hidden_w = read_floats(st, &m->arena, "hidden.weight", m->hidden, x, &err);
    if (!err) m->hidden_b = read_floats(st, &m->arena, "hidden.bias", m->hidden, 0, &err);
  }
  if (!err) m->out_w = read_floats(st, &m->arena, "output.weight", m->n_langs, out_in, &err);
  if (!err) m->out_b = read_floats(st, &m->arena, "output.bias", m->n_langs, 0, &err);
  for (int i = 0; !err && i < st->n_tensors; i++) {
    if (!st->tensors[i].used) err = rmt_error(RMT_E_FORMAT, "langid model: unknown tensor %s", st->tensors[i].name);
  }
  return err;
}

// ---------------------------------------------------------------- load

static int load_into(rmt_langid *m, const uint8_t *bytes, size_t size) {
  rmt_safetensors st;
  int err = rmt_safetensors_open(&st, bytes, size);
  if (err) return err;
  size_t list_cap = RMT_LANGID_MAX_LANGS * RMT_LANGID_TAG_MAX;  // "languages" as read
  char *list = malloc(list_cap);
  if (!list) err = rmt_error(RMT_E_NOMEM, "langid model: out of memory");
  if (!err) err = read_metadata(bytes, size, &m->groups, list, list_cap);
  if (!err) err = read_shapes(&st, m);
  if (!err) err = rmt_arena_init(&m->arena, arena_size(m));
  if (!err) {
    m->tags = rmt_arena_alloc(&m->arena, (size_t)m->n_langs * RMT_LANGID_TAG_MAX);
    err = parse_languages(list, m->tags, m->n_langs);
  }
  if (!err) err = read_tables(&st, m);
  if (!err) err = read_dense(&st, m);
  free(list);
  rmt_safetensors_close(&st);
  return err;
}

RMT_API rmt_langid *rmt_langid_load(const uint8_t *bytes, size_t size) {
  rmt_clear_error();
  if (!bytes && size) {
    rmt_error(RMT_E_INVALID, "langid model: no bytes");
    return NULL;
  }
  rmt_langid *m = calloc(1, sizeof *m);
  if (!m) {
    rmt_error(RMT_E_NOMEM, "langid model: out of memory");
    return NULL;
  }
  if (load_into(m, bytes, size) != RMT_OK) {
    rmt_langid_free(m);
    return NULL;
  }
  return m;
}

RMT_API void rmt_langid_free(rmt_langid *model) {
  if (!model) return;
  rmt_arena_free(&model->arena);
  free(model);
}

RMT_API size_t rmt_langid_bytes(const rmt_langid *model) { return model ? model->arena.used + sizeof *model : 0; }
RMT_API int rmt_langid_n_languages(const rmt_langid *model) { return model ? model->n_langs : 0; }

RMT_API const char *rmt_langid_language(const rmt_langid *model, int i) {
  return model && i >= 0 && i < model->n_langs ? model->tags[i] : NULL;
}

// ---------------------------------------------------------------- detect

RMT_API rmt_langid_state *rmt_langid_state_new(const rmt_langid *model) {
  if (!model) {
    rmt_error(RMT_E_INVALID, "langid: no model");
    return NULL;
  }
  size_t x = (size_t)model->groups.n * (size_t)model->dim;  // each under limits that keep these small
  rmt_langid_state *s = calloc(1, sizeof *s);
  if (s) {
    s->model = model;
    s->x = calloc(x, sizeof *s->x);
    s->h = calloc(model->hidden ? (size_t)model->hidden : 1, sizeof *s->h);
    s->probs = calloc((size_t)model->n_langs, sizeof *s->probs);
  }
  if (!s || !s->x || !s->h || !s->probs) {
    rmt_langid_state_free(s);
    rmt_error(RMT_E_NOMEM, "langid: out of memory");
    return NULL;
  }
  return s;
}

RMT_API void rmt_langid_state_free(rmt_langid_state *state) {
  if (!state) return;
  free(state->x);
  free(state->h);
  free(state->probs);
  free(state);
}

// x[k*D .. k*D+D-1] += table k's row `row`, dequantised.
static void add_row(void *ctx, int k, uint32_t row) {
  rmt_langid_state *s = ctx;
  const rmt_langid *m = s->model;
  const int8_t *q = m->tables[k] + (size_t)row * (size_t)m->dim;
  float scale = m->scales[k][row], *x = s->x + (size_t)k * (size_t)m->dim;
  for (int d = 0; d < m->dim; d++) x[d] += scale * (float)q[d];
  s->counts[k]++;
}

// y (n) = W (n, k) x (k) + b, then relu when asked.
static void dense(float *y, const float *w, const float *b, const float *x, int n, int k, int relu) {
  for (int i = 0; i < n; i++) {
    const float *row = w + (size_t)i * (size_t)k;
    float sum = b[i];
    for (int j = 0; j < k; j++) sum += row[j] * x[j];
    y[i] = relu && sum < 0.0f ? 0.0f : sum;
  }
}

static void softmax(float *p, int n) {
  float top = p[0], total = 0.0f;
  for (int i = 1; i < n; i++) top = p[i] > top ? p[i] : top;
  for (int i = 0; i < n; i++) total += p[i] = expf(p[i] - top);
  for (int i = 0; i < n; i++) p[i] /= total;
}

RMT_API int rmt_langid_detect(rmt_langid_state *state, const char *text, size_t len) {
  if (!state || (!text && len)) return rmt_error(RMT_E_INVALID, "langid: no state or no text");
  const rmt_langid *m = state->model;
  int x_len = m->groups.n * m->dim;
  int64_t features = 0;
  memset(state->x, 0, sizeof *state->x * (size_t)x_len);
  memset(state->counts, 0, sizeof state->counts);
  memset(state->probs, 0, sizeof *state->probs * (size_t)m->n_langs);
  rmt_langid_each_feature(text ? text : "", len, &m->groups, add_row, state);
  for (int k = 0; k < m->groups.n; k++) {
    for (int d = 0; d < m->dim && state->counts[k]; d++) state->x[k * m->dim + d] /= (float)state->counts[k];
    features += state->counts[k];
  }
  if (!features) return 0;
  const float *in = state->x;
  if (m->hidden) {
    dense(state->h, m->hidden_w, m->hidden_b, state->x, m->hidden, x_len, 1);
    in = state->h;
  }
  dense(state->probs, m->out_w, m->out_b, in, m->n_langs, m->hidden ? m->hidden : x_len, 0);
  softmax(state->probs, m->n_langs);
  return features > INT32_MAX ? INT32_MAX : (int)features;
}

RMT_API const float *rmt_langid_probs(const rmt_langid_state *state) { return state ? state->probs : NULL; }
