// Finding a sentence's verbatim spans (verbatim.h). The text is cut at
// whitespace into chunks; a chunk less the punctuation around it (an opening
// "(¿¡«, a closing .,;:!?)»…) is one span when it is, in this order:
//   inline code   `...` (found first: it may hold spaces)
//   url           scheme://..., www...., or a domain with a known TLD (example.org/es)
//   email         name@domain.tld
//   tag           @handle, #tag
//   time, date    10:30, 9:05:30; 2026-12-06, 06/12/2026, 6.12.2026
//   number        [sign][currency]digits with their separators[%|currency], and a
//                 currency or unit that follows after one space (1.234,56 €, 5 kg)
//   path          /etc/hosts, ~/Documentos/a.pdf, C:\x, dir/file.ext, informe.pdf
//   symbol        a chunk of symbols (S*) and emoji with at most single letters
//                 (★, ⌘+C, 👩‍💻, 1️⃣); inside a word, only its runs of symbols
//   code          letters mixed with digits (v2.3.1, 0x80070005, IB3456, COVID-19)
// Text that only looks like a span stays language: words never are spans
// ("etc.", "a.m.", acronyms such as IVA, which translate to VAT); a number's
// words are language and its digits are not: "3 de mayo" keeps "3", "1st",
// "10am" and "2.º" keep their digits alone (the suffix is translated), while
// a unit (5kg) or a capital suffix (4K, 3D) is kept with them.
#include <string.h>

#include "error.h"
#include "verbatim.h"

typedef struct {
  const char *text;
  size_t len;
  rmt_verbatim *out;
  int cap, n;
  rmt_verbatim last;  // the span added last (merges look back at it)
} finder;

// The code point at text[i] and its bytes in *n; -1 for invalid UTF-8 (one byte).
static int32_t code_point(const char *text, size_t i, size_t len, int *n) {
  const unsigned char *t = (const unsigned char *)text + i;
  int want = t[0] < 0x80 ? 1 : t[0] >= 0xF0 && t[0] < 0xF5 ? 4 : t[0] >= 0xE0 && t[0] < 0xF0 ? 3 : t[0] >= 0xC2 && t[0] < 0xE0 ? 2 : 0;
  *n = 1;
  if (!want || (size_t)want > len - i) return -1;
  int32_t cp = want == 1 ? t[0] : want == 2 ? t[0] & 0x1F : want == 3 ? t[0] & 0x0F : t[0] & 0x07;
  for (int k = 1; k < want; k++) {
    if ((t[k] & 0xC0) != 0x80) return -1;
    cp = cp << 6 | (t[k] & 0x3F);
  }
  *n = want;
  return cp;
}

int rmt_is_symbol(int32_t cp) {
  int lo = 0, hi = rmt_symbol_range_count - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (cp < rmt_symbol_ranges[mid][0]) hi = mid - 1;
    else if (cp > rmt_symbol_ranges[mid][1]) lo = mid + 1;
    else return 1;
  }
  return 0;
}

static int is_space(int32_t cp) {
  return cp == ' ' || (cp >= '\t' && cp <= '\r') || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}
static int is_digit(int32_t cp) { return cp >= '0' && cp <= '9'; }
static int is_ascii_letter(int32_t cp) { return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z'; }
static int is_currency(int32_t cp) { return cp == '$' || (cp >= 0xA2 && cp <= 0xA5) || (cp >= 0x20A0 && cp <= 0x20C0); }
static int is_symbol(int32_t cp) { return cp >= 0x80 ? rmt_is_symbol(cp) : cp > 0 && strchr("$+<=>^`|~", (int)cp) != NULL; }
// A letter for these rules: ASCII letters and any other character that is neither a symbol nor punctuation here.
static int is_letter(int32_t cp) {
  return is_ascii_letter(cp) || (cp >= 0xC0 && !rmt_is_symbol(cp) && !is_currency(cp) && !(cp >= 0x2010 && cp <= 0x205E));
}
static int is_opener(int32_t cp) { return (cp > 0 && cp < 0x80 && strchr("([{\"'", (int)cp)) || cp == 0xBF || cp == 0xA1 || cp == 0xAB || cp == 0x201C || cp == 0x2018 || cp == 0x201E; }
static int is_closer(int32_t cp) { return (cp > 0 && cp < 0x80 && strchr(".,;:!?)]}\"'", (int)cp)) || cp == 0xBB || cp == 0x201D || cp == 0x2019 || cp == 0x2026; }

// Units kept with the number before them (5 kg, 5kg).
static const char *const UNITS[] = {
    "%", "\xE2\x80\xB0", "\xC2\xB0", "\xC2\xB0" "C", "\xC2\xB0" "F", "\xC2\xBA" "C", "kg", "g", "mg", "t", "km", "m", "cm",
    "mm", "l", "L", "ml", "mL", "cl", "h", "min", "s", "ms", "Hz", "kHz", "MHz", "GHz", "W", "kW", "kWh", "V", "mAh",
    "B", "KB", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "px", "pt", "dpi", "fps", "kbps", "Mbps", "Gbps", "km/h",
    "m/s", "mph", "lb", "lbs", "oz", "m\xC2\xB2", "m\xC2\xB3", "km\xC2\xB2", "cm\xC2\xB2"};
// File name extensions that make name.ext a path.
static const char *const EXTENSIONS[] = {
    "pdf", "txt", "doc", "docx", "odt", "ods", "odp", "xls", "xlsx", "ppt", "pptx", "csv", "json", "xml", "yml", "yaml",
    "md", "html", "htm", "css", "js", "mjs", "ts", "py", "c", "h", "cpp", "rs", "go", "java", "sh", "conf", "ini", "cfg",
    "log", "png", "jpg", "jpeg", "gif", "svg", "webp", "mp3", "mp4", "wav", "ogg", "zip", "gz", "tar", "tgz", "xz",
    "deb", "rpm", "iso", "exe", "dmg", "apk", "epub", "rtf", "db", "sql", "bak", "tmp"};
// Top-level domains that make name.tld an address.
static const char *const TLDS[] = {"com", "org", "net", "edu", "gov", "io", "dev", "app", "info", "es", "mx", "ar", "co",
                                   "cl", "pe", "uk", "us", "de", "fr", "it", "pt", "eu", "ca", "au"};

static int in_list(const char *s, size_t n, const char *const *list, size_t count, int fold) {
  for (size_t i = 0; i < count; i++) {
    if (strlen(list[i]) != n) continue;
    size_t k = 0;
    while (k < n && (fold ? (s[k] | 0x20) == list[i][k] : s[k] == list[i][k])) k++;
    if (k == n) return 1;
  }
  return 0;
}
#define IN(s, n, list, fold) in_list(s, n, list, sizeof list / sizeof list[0], fold)

static void add(finder *f, size_t begin, size_t end, int kind) {
  rmt_verbatim v = {(int32_t)begin, (int32_t)end, kind, 0, -1};
  if (f->n < f->cap) f->out[f->n] = v;
  f->n++;
  f->last = v;
}

// Widens the span added last to end at `end` (a number's unit or group).
static void widen(finder *f, size_t end) {
  f->last.end = (int32_t)end;
  if (f->n <= f->cap) f->out[f->n - 1].end = (int32_t)end;
}

// Digits from *i (moved past them): how many.
static int digits(const char *t, size_t *i, size_t e) {
  int k = 0;
  while (*i < e && is_digit((unsigned char)t[*i])) (*i)++, k++;
  return k;
}

static int is_time(const char *t, size_t b, size_t e) {
  size_t i = b;
  int h = digits(t, &i, e);
  if (h < 1 || h > 2 || i >= e || t[i++] != ':' || digits(t, &i, e) != 2) return 0;
  if (i < e && t[i] == ':' && (i++, digits(t, &i, e) != 2)) return 0;
  return i == e;
}

// 2026-12-06, 06/12/2026, 6.12.2026 (with dots only day.month.year or year.month.day: 1.234.567 is a number).
static int is_date(const char *t, size_t b, size_t e) {
  size_t i = b;
  int a = digits(t, &i, e);
  if (!a || a > 4 || i >= e) return 0;
  char sep = t[i++];
  if (sep != '-' && sep != '/' && sep != '.') return 0;
  int m = digits(t, &i, e);
  if (m < 1 || m > 2 || i >= e || t[i++] != sep) return 0;
  int y = digits(t, &i, e);
  if (i != e || !y || y == 3 || y > 4) return 0;
  return sep != '.' || (a <= 2 && y == 4) || (a == 4 && y <= 2);
}

// The end of the number that starts t[b..e) ([sign][currency]digits with
// separators, then percent or currency signs), or b when none starts there.
static size_t number_end(const char *t, size_t b, size_t e) {
  size_t i = b;
  int n;
  int32_t cp = code_point(t, i, e, &n);
  if (cp == '+' || cp == '-' || cp == 0x2212 || cp == 0xB1) i += (size_t)n;
  while (i < e && is_currency(code_point(t, i, e, &n))) i += (size_t)n;
  if (i >= e || !is_digit((unsigned char)t[i])) return b;
  while (i < e) {
    cp = code_point(t, i, e, &n);
    if (is_digit(cp)) i++;
    else if ((cp == '.' || cp == ',' || cp == '\'' || cp == 0x2019) && i + (size_t)n < e && is_digit((unsigned char)t[i + (size_t)n])) i += (size_t)n;
    else break;
  }
  while (i < e && ((cp = code_point(t, i, e, &n)) == '%' || cp == 0x2030 || is_currency(cp))) i += (size_t)n;
  return i;
}

// A domain name: labels of ASCII letters, digits and '-' joined by dots (two
// or more), up to the first '/', ':', '?' or '#'; the last label a known TLD
// (known) or two or more letters.
static int is_domain(const char *t, size_t b, size_t e, int known) {
  size_t end = b, start = b, last = b;
  while (end < e && !strchr("/:?#", t[end])) end++;
  int labels = 0;
  for (size_t i = b; i <= end; i++) {
    if (i == end || t[i] == '.') {
      if (i == start) return 0;
      labels++, last = start, start = i + 1;
    } else if (!is_ascii_letter((unsigned char)t[i]) && !is_digit((unsigned char)t[i]) && t[i] != '-') {
      return 0;
    }
  }
  if (labels < 2) return 0;
  if (known) return IN(t + last, end - last, TLDS, 1);
  for (size_t i = last; i < end; i++)
    if (!is_ascii_letter((unsigned char)t[i])) return 0;
  return end - last >= 2;
}

static int is_url(const char *t, size_t b, size_t e) {
  size_t i = b;
  while (i < e && (is_ascii_letter((unsigned char)t[i]) || t[i] == '+' || t[i] == '-' || t[i] == '.')) i++;
  if (i > b && e - i > 3 && memcmp(t + i, "://", 3) == 0) return 1;
  if (e - b > 4 && (memcmp(t + b, "www.", 4) == 0 || memcmp(t + b, "WWW.", 4) == 0)) return 1;
  return is_domain(t, b, e, 1);
}

static int is_email(const char *t, size_t b, size_t e) {
  const char *at = memchr(t + b, '@', e - b);
  return at && at > t + b && is_domain(t, (size_t)(at - t) + 1, e, 0);
}

static int is_tag(const char *t, size_t b, size_t e) {
  int n;
  if (e - b < 2 || (t[b] != '@' && t[b] != '#')) return 0;
  int32_t cp = code_point(t, b + 1, e, &n);
  return is_letter(cp) || is_digit(cp) || cp == '_';
}

static int is_path(const char *t, size_t b, size_t e) {
  size_t n = e - b;
  if ((t[b] == '/' && n > 1) || (n > 2 && (memcmp(t + b, "~/", 2) == 0 || memcmp(t + b, "./", 2) == 0))) return 1;
  if ((n > 3 && memcmp(t + b, "../", 3) == 0) || memchr(t + b, '\\', n)) return 1;
  int slashes = 0;
  size_t dot = 0;
  for (size_t i = b; i < e; i++) {
    slashes += t[i] == '/';
    if (t[i] == '.') dot = i;
  }
  return slashes >= 2 || (dot > b && IN(t + dot + 1, e - dot - 1, EXTENSIONS, 1));
}

// What a chunk's core holds: digits, its longest run of letters, a symbol
// (non-ASCII, no currency sign), a character that is no ASCII punctuation or symbol.
typedef struct {
  int digit, letter_run, symbol, other;
} traits;

static traits read_traits(const char *t, size_t b, size_t e) {
  traits r = {0, 0, 0, 0};
  int run = 0, n;
  for (size_t i = b; i < e; i += (size_t)n) {
    int32_t cp = code_point(t, i, e, &n);
    r.digit |= is_digit(cp);
    r.symbol |= cp >= 0x80 && rmt_is_symbol(cp) && !is_currency(cp);
    r.other |= cp < 0 || cp >= 0x80 || is_digit(cp) || is_ascii_letter(cp);
    run = is_letter(cp) ? run + 1 : 0;
    if (run > r.letter_run) r.letter_run = run;
  }
  return r;
}

// Each run of non-ASCII symbols in t[b..e) as a span (an emoji inside a word).
static void symbol_runs(finder *f, size_t b, size_t e) {
  size_t start = b;
  int in = 0, n = 1;
  for (size_t i = b; i <= e; i += (size_t)n) {
    n = 1;
    int32_t cp = i < e ? code_point(f->text, i, e, &n) : 0;
    int sym = cp >= 0x80 && rmt_is_symbol(cp);
    if (sym && !in) start = i, in = 1;
    if (!sym && in) add(f, start, i, RMT_SPAN_SYMBOL), in = 0;
  }
}

// A number t[b..num) with a suffix up to e: digits and a word of language
// (1st, 10am, 2.º, 5-year) keep the digits alone; any other suffix (0x80,
// 4K, 3D) makes the whole a code.
static void number_with_suffix(finder *f, size_t b, size_t num, size_t e) {
  const char *t = f->text;
  int upper = 1, digit = 0, n;
  for (size_t i = num; i < e; i++) {
    digit |= is_digit((unsigned char)t[i]);
    upper &= t[i] >= 'A' && t[i] <= 'Z';
  }
  size_t s = num + (t[num] == '-' || t[num] == '.');
  int32_t cp = s < e ? code_point(t, s, e, &n) : 0;
  int word = (cp >= 'a' && cp <= 'z') || cp == 0xAA || cp == 0xBA || (cp >= 0xC0 && is_letter(cp));
  if (!digit && !upper && word) add(f, b, num, RMT_SPAN_NUMBER);
  else add(f, b, e, RMT_SPAN_CODE);
}

// A unit, a currency sign or a group of three digits one space after a
// number (5 kg, 1.234,56 €, +34 612 345 678) widens it: returns 1.
static int joins_number(finder *f, size_t b, size_t e) {
  const char *t = f->text;
  int n;
  size_t end = (size_t)f->last.end;
  if (!f->n || f->last.kind != RMT_SPAN_NUMBER || end >= b || !is_space(code_point(t, end, b, &n)) || end + (size_t)n != b) return 0;
  int group = number_end(t, b, e) == e && e - b >= 3 && is_digit((unsigned char)t[b]) && is_digit((unsigned char)t[b + 1]) &&
              is_digit((unsigned char)t[b + 2]) && (e - b == 3 || !is_digit((unsigned char)t[b + 3]));
  int32_t cp = code_point(t, b, e, &n);
  if (!group && !IN(t + b, e - b, UNITS, 0) && !(is_currency(cp) && b + (size_t)n == e)) return 0;
  widen(f, e);
  return 1;
}

static int ascii_symbols(const char *t, size_t b, size_t e, traits r) {
  if (r.other || e - b > 4) return 0;
  for (size_t i = b; i < e; i++)
    if (is_symbol((unsigned char)t[i])) return 1;
  return 0;
}

// The chunk t[b..e) (no whitespace) less the punctuation around it: its span(s), if any.
static void classify(finder *f, size_t b, size_t e) {
  const char *t = f->text;
  int n;
  while (b < e && is_opener(code_point(t, b, e, &n))) b += (size_t)n;
  while (e > b) {
    size_t k = e - 1;
    while (k > b && ((unsigned char)t[k] & 0xC0) == 0x80) k--;
    if (!is_closer(code_point(t, k, e, &n))) break;
    e = k;
  }
  if (b >= e || joins_number(f, b, e)) return;
  traits r = read_traits(t, b, e);
  size_t num = number_end(t, b, e);
  int kind = is_url(t, b, e) ? RMT_SPAN_URL : is_email(t, b, e) ? RMT_SPAN_EMAIL : is_tag(t, b, e) ? RMT_SPAN_TAG : -1;
  if (kind < 0 && r.digit) kind = is_time(t, b, e) ? RMT_SPAN_TIME : is_date(t, b, e) ? RMT_SPAN_DATE : -1;
  if (kind < 0 && num > b && (num == e || IN(t + num, e - num, UNITS, 0))) kind = RMT_SPAN_NUMBER;
  if (kind < 0 && is_path(t, b, e)) kind = RMT_SPAN_PATH;
  if (kind >= 0) add(f, b, e, kind);
  else if (r.symbol && r.letter_run <= 1) add(f, b, e, RMT_SPAN_SYMBOL);
  else if (r.symbol) symbol_runs(f, b, e);
  else if (num > b) number_with_suffix(f, b, num, e);
  else if (r.digit) add(f, b, e, RMT_SPAN_CODE);
  else if (ascii_symbols(t, b, e, r)) add(f, b, e, RMT_SPAN_SYMBOL);
}

// Where the inline code that opens with the backtick at text[i] closes (one
// past its closing backtick), or 0: none on the same line, or nothing inside.
static size_t inline_code_end(const char *text, size_t i, size_t len) {
  for (size_t k = i + 1; k < len && text[k] != '\n'; k++)
    if (text[k] == '`') return k > i + 1 ? k + 1 : 0;
  return 0;
}

RMT_API int rmt_verbatim_find(const char *text, size_t len, rmt_verbatim *out, int cap) {
  if ((!text && len) || cap < 0 || (!out && cap > 0)) return rmt_error(RMT_E_INVALID, "rmt_verbatim_find: bad arguments");
  if (len > INT32_MAX) return rmt_error(RMT_E_SIZE, "too large: %zu bytes of text", len);
  finder f = {text, len, out, cap, 0, {0, 0, -1, 0, -1}};
  size_t i = 0;
  while (i < len) {
    int n;
    int32_t cp = code_point(text, i, len, &n);
    size_t end = i + (size_t)n;
    if (is_space(cp)) {
      i = end;
      continue;
    }
    if (cp == '`' && (end = inline_code_end(text, i, len)) != 0) {
      add(&f, i, end, RMT_SPAN_INLINE_CODE);
      i = end;
      continue;
    }
    if (cp == '`') end = i + 1;  // a lone backtick: a chunk of its own
    else
      while (end < len && !is_space(cp = code_point(text, end, len, &n)) && cp != '`') end += (size_t)n;
    classify(&f, i, end);
    i = end;
  }
  return f.n;
}

RMT_API const char *rmt_verbatim_kind_name(int kind) {
  static const char *const NAMES[] = {"url", "email", "number", "time", "date", "code", "tag", "path", "inline-code", "symbol"};
  return kind >= 0 && kind < RMT_SPAN_KINDS ? NAMES[kind] : NULL;
}

RMT_API const char *rmt_verbatim_how_name(int how) {
  static const char *const NAMES[] = {"kept", "replaced", "inserted"};
  return how >= 0 && how < RMT_SPAN_HOWS ? NAMES[how] : NULL;
}
