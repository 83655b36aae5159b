// SentencePiece normalization, as sentencepiece 0.1.97's Normalizer: the
// longest match in the precompiled charsmap (a darts-clone double array)
// replaces a prefix of the input; user-defined pieces pass unchanged; invalid
// UTF-8 becomes U+FFFD one byte at a time; then the whitespace rules (strip
// leading/trailing/repeated spaces, the dummy prefix, ' ' -> ▁).
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "size.h"
#include "spm_types.h"

int spm_buf_reserve(spm_buf *buf, size_t extra) {
  size_t need = rmt_size_add(buf->len, extra);
  if (need <= buf->cap) return RMT_OK;
  if (need == RMT_SIZE_OVERFLOW) return rmt_error(RMT_E_SIZE, "spm: text too large");
  size_t cap = buf->cap ? buf->cap : 256;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
  char *data = realloc(buf->data, cap);
  if (!data) return rmt_error(RMT_E_NOMEM, "spm: out of memory (%zu bytes)", cap);
  buf->data = data;
  buf->cap = cap;
  return RMT_OK;
}

int spm_buf_append(spm_buf *buf, const char *bytes, size_t n) {
  if (n == 0) return RMT_OK;  // an empty buffer has no data pointer to add 0 to (a model's empty unk surface)
  int rc = spm_buf_reserve(buf, n);
  if (rc) return rc;
  memcpy(buf->data + buf->len, bytes, n);
  buf->len += n;
  return RMT_OK;
}

size_t spm_valid_utf8_len(const char *text, size_t len) {
  const uint8_t *s = (const uint8_t *)text;
  uint32_t cp;
  if (s[0] < 0x80) return 1;
  // Lead byte, then continuation bytes, no overlongs, no surrogates, <= U+10FFFF.
  if (len >= 2 && (s[0] & 0xE0) == 0xC0) {
    cp = (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
    if ((s[1] & 0xC0) == 0x80 && cp >= 0x80) return 2;
  } else if (len >= 3 && (s[0] & 0xF0) == 0xE0) {
    cp = (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
    if ((s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && cp >= 0x800 &&
        (cp < 0xD800 || cp >= 0xE000))
      return 3;
  } else if (len >= 4 && (s[0] & 0xF8) == 0xF0) {
    cp = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
         (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
    if ((s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 &&
        cp >= 0x10000 && cp <= 0x10FFFF)
      return 4;
  }
  return 0;
}

// darts-clone unit fields.
static inline uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
static inline bool unit_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static inline uint32_t unit_value(uint32_t u) { return u & 0x7FFFFFFFu; }
static inline uint32_t unit_label(uint32_t u) { return u & 0x800000FFu; }

// Longest key of the charsmap that prefixes `text`: its length (0 if none),
// and the offset of its replacement in *value. Every index is checked, so a
// corrupt array cannot read out of bounds.
static size_t charsmap_longest(const spm_normalizer *norm, const char *text, size_t len,
                               uint32_t *value) {
  const uint32_t *units = norm->units;
  size_t n = norm->n_units, best = 0;
  uint32_t id = unit_offset(units[0]);
  for (size_t i = 0; i < len; i++) {
    uint8_t c = (uint8_t)text[i];
    id ^= c;
    if (id >= n) break;
    uint32_t u = units[id];
    if (unit_label(u) != c) break;
    id ^= unit_offset(u);
    if (unit_has_leaf(u)) {
      if (id >= n) break;
      *value = unit_value(units[id]);
      best = i + 1;
    }
  }
  return best;
}

// One step of normalization: replaces a prefix of `text` (at least one byte,
// *consumed bytes) by the returned string of *out_len bytes.
static const char *normalize_prefix(const spm_normalizer *norm, const rmt_spm *spm,
                                    const spm_excluded *ex, const char *text, size_t len,
                                    size_t *out_len, size_t *consumed) {
  if (spm && spm->has_user_defined && spm->user_first[(uint8_t)text[0]]) {
    size_t n = spm_match_user_defined(spm, ex, text, len);
    if (n) {
      *out_len = *consumed = n;
      return text;
    }
  }
  if (norm->units) {
    uint32_t value = 0;
    size_t n = charsmap_longest(norm, text, len, &value);
    if (n) {
      *consumed = n;
      if (value >= norm->repl_size) {  // checked at load; kept for safety
        *out_len = 0;
        return "";
      }
      const char *s = norm->repl + value;
      *out_len = strlen(s);  // repl ends with a NUL (checked at load)
      return s;
    }
  }
  size_t n = spm_valid_utf8_len(text, len);
  if (!n) {
    *consumed = 1;
    *out_len = 3;
    return "\xEF\xBF\xBD";
  }
  *out_len = *consumed = n;
  return text;
}

// Appends `count` copies of the span [begin, end) to `map` (nothing when NULL).
static int map_push(spm_buf *map, size_t begin, size_t end, size_t count) {
  if (!map || !count) return RMT_OK;
  int rc = spm_buf_reserve(map, rmt_size_mul(count, sizeof(spm_span)));
  if (rc) return rc;
  spm_span *spans = (spm_span *)(map->data + map->len);  // len is a multiple of the span size
  for (size_t i = 0; i < count; i++) spans[i] = (spm_span){(int32_t)begin, (int32_t)end};
  map->len += count * sizeof(spm_span);
  return RMT_OK;
}

int spm_normalize(const spm_normalizer *norm, const rmt_spm *spm, const spm_excluded *ex,
                  const char *text, size_t len, spm_buf *out, spm_buf *map) {
  out->len = 0;
  if (map) {
    map->len = 0;
    if (len > (size_t)INT32_MAX) return rmt_error(RMT_E_LIMIT, "spm: text too long (%zu bytes)", len);
  }
  const char *const input = text;  // offsets in `map` are from here
  size_t out_len, consumed;
  const char *s;
  int rc;
  if (norm->remove_extra_whitespaces) {  // drop leading spaces
    while (len > 0) {
      s = normalize_prefix(norm, spm, ex, text, len, &out_len, &consumed);
      if (!(out_len == 1 && s[0] == ' ')) break;
      text += consumed;
      len -= consumed;
    }
  }
  if (len == 0) return RMT_OK;
  // Typical growth is small; a rule that expands more grows the buffer below.
  if ((rc = spm_buf_reserve(out, rmt_size_add(rmt_size_mul(len, 3), 16)))) return rc;
  const char *space = norm->escape_whitespaces ? SPM_SPACE : " ";
  size_t space_len = norm->escape_whitespaces ? SPM_SPACE_LEN : 1;
  if (!norm->treat_whitespace_as_suffix && norm->add_dummy_prefix) {
    memcpy(out->data + out->len, space, space_len);
    out->len += space_len;
    // Added, not read: an empty span where the text starts.
    if ((rc = map_push(map, (size_t)(text - input), (size_t)(text - input), space_len))) return rc;
  }
  bool prev_space = norm->remove_extra_whitespaces;
  while (len > 0) {
    s = normalize_prefix(norm, spm, ex, text, len, &out_len, &consumed);
    if (prev_space)
      while (out_len > 0 && s[0] == ' ') s++, out_len--;
    if (out_len > 0) {
      if ((rc = spm_buf_reserve(out, rmt_size_mul(out_len, 3)))) return rc;
      size_t before = out->len;
      char *o = out->data + out->len;
      for (size_t i = 0; i < out_len; i++) {
        if (s[i] == ' ' && norm->escape_whitespaces) {
          memcpy(o, SPM_SPACE, SPM_SPACE_LEN);
          o += SPM_SPACE_LEN;
        } else {
          *o++ = s[i];
        }
      }
      out->len = (size_t)(o - out->data);
      prev_space = s[out_len - 1] == ' ';
      size_t at = (size_t)(text - input);
      if ((rc = map_push(map, at, at + consumed, out->len - before))) return rc;
    }
    text += consumed;
    len -= consumed;
    if (!norm->remove_extra_whitespaces) prev_space = false;
  }
  if (norm->remove_extra_whitespaces) {  // drop trailing spaces
    while (out->len >= space_len && !memcmp(out->data + out->len - space_len, space, space_len)) {
      out->len -= space_len;
      if (map) map->len -= space_len * sizeof(spm_span);
    }
  }
  if (norm->treat_whitespace_as_suffix && norm->add_dummy_prefix) {
    if ((rc = spm_buf_append(out, space, space_len))) return rc;
    // Added, not read: an empty span where the last kept byte's input ends.
    size_t end = map && map->len ? (size_t)((spm_span *)(map->data + map->len))[-1].end : 0;
    if ((rc = map_push(map, end, end, space_len))) return rc;
  }
  return RMT_OK;
}

int spm_normalizer_set_charsmap(spm_normalizer *norm, const uint8_t *blob, size_t size,
                                const char *what) {
  // <uint32 LE: trie size in bytes><double array><replacement strings>
  if (size <= 4) return rmt_error(RMT_E_FORMAT, "spm: %s charsmap is broken (%zu bytes)", what, size);
  uint32_t trie_size = (uint32_t)blob[0] | (uint32_t)blob[1] << 8 | (uint32_t)blob[2] << 16 |
                       (uint32_t)blob[3] << 24;
  if (trie_size >= size - 4 || trie_size < 4 || trie_size % 4)
    return rmt_error(RMT_E_FORMAT, "spm: %s charsmap is broken (trie of %u bytes in %zu)", what,
                     trie_size, size);
  size_t n_units = trie_size / 4, repl_size = size - 4 - trie_size;
  const uint8_t *repl = blob + 4 + trie_size;
  if (repl[repl_size - 1] != 0)
    return rmt_error(RMT_E_FORMAT, "spm: %s charsmap strings do not end with a NUL", what);
  norm->units = malloc(trie_size);
  norm->repl = malloc(repl_size);
  if (!norm->units || !norm->repl) return rmt_error(RMT_E_NOMEM, "spm: out of memory");
  for (size_t i = 0; i < n_units; i++) {
    const uint8_t *p = blob + 4 + 4 * i;
    norm->units[i] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24;
  }
  memcpy(norm->repl, repl, repl_size);
  norm->n_units = n_units;
  norm->repl_size = repl_size;
  return RMT_OK;
}
