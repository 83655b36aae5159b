// The verbatim-span finder (src/verbatim_find.c): which parts of a sentence
// a translation must give back byte for byte, of what kind, and what only
// looks like one (a date's words, an ordinal's suffix, "etc.").
#include "testutil.h"
#include "verbatim.h"

// Checks that `text` has exactly the spans `want` ("kind=text" joined by " | ", "" for none).
static void expect(const char *text, const char *want) {
  rmt_verbatim v[64];
  int n = rmt_verbatim_find(text, strlen(text), v, 64);
  char got[1024] = "";
  for (int i = 0; i < n && i < 64; i++) {
    size_t at = strlen(got);
    snprintf(got + at, sizeof got - at, "%s%s=%.*s", i ? " | " : "", rmt_verbatim_kind_name(v[i].kind), v[i].end - v[i].begin,
             text + v[i].begin);
  }
  CHECK(n >= 0 && strcmp(got, want) == 0, "%s\n  got:  %s\n  want: %s", text, got, want);
}

static void test_kinds(void) {
  expect("Visita https://example.org/es/ayuda?id=42 para más información.", "url=https://example.org/es/ayuda?id=42");
  expect("Go to www.example.es/contacto, or example.org.", "url=www.example.es/contacto | url=example.org");
  expect("Escríbeme a ana.garcia@example.com mañana.", "email=ana.garcia@example.com");
  expect("(j.smith+news@example.org)", "email=j.smith+news@example.org");
  expect("Cuesta 1.234,56 € con IVA incluido.", "number=1.234,56 €");
  expect("It costs $19.99 plus tax, -3 °C, 5 kg and 20 %.", "number=$19.99 | number=-3 °C | number=5 kg | number=20 %");
  expect("Llámame al +34 612 345 678 hoy.", "number=+34 612 345 678");
  expect("Sale a las 10:30 del 2026-12-06 o el 06/12/2026 o el 6.12.2026.",
         "time=10:30 | date=2026-12-06 | date=06/12/2026 | date=6.12.2026");
  expect("La versión v2.3.1 corrige el error 0x80070005 del vuelo IB3456.", "code=v2.3.1 | code=0x80070005 | code=IB3456");
  expect("Sígueme en @ana_garcia y usa #RebajasDeInvierno.", "tag=@ana_garcia | tag=#RebajasDeInvierno");
  expect("Usa ~/Documentos/informe_final.pdf o /etc/hosts o C:\\Users\\Ana o notas.txt.",
         "path=~/Documentos/informe_final.pdf | path=/etc/hosts | path=C:\\Users\\Ana | path=notas.txt");
  expect("Ejecuta `git pull --rebase` antes.", "inline-code=`git pull --rebase`");
  expect("Pulse ★ o ⌘+C. ¡Genial!🎉 👩\u200d💻 👍🏽 🇪🇸 ❤️", "symbol=★ | symbol=⌘+C | symbol=🎉 | symbol=👩\u200d💻 | symbol=👍🏽 | symbol=🇪🇸 | symbol=❤️");
  expect("2 + 2 = 4", "number=2 | symbol=+ | number=2 | symbol== | number=4");
}

// What only looks like a span: words are language, a number's words too.
static void test_look_alikes(void) {
  expect("Compra pan, leche, huevos, etc.", "");
  expect("El IVA y la ONU, a.m. y p. ej. y/o km/h.", "");
  expect("Llega el 3 de mayo.", "number=3");
  expect("The 1st, the 2nd and 10am; el 2.º piso; a 5-year-old.", "number=1 | number=2 | number=10 | number=2 | number=5");
  expect("A 4K screen and 3D glasses weigh 5kg.", "code=4K | code=3D | number=5kg");
  expect("", "");
  expect("   ", "");
}

static void test_bytes(void) {
  // Invalid UTF-8, a lone backtick, a NUL: no crash, spans still found around them.
  const char bad[] = "a \xff\xfe 42 ` b\0c 7";
  rmt_verbatim v[8];
  int n = rmt_verbatim_find(bad, sizeof bad - 1, v, 8);
  CHECK(n == 3 && v[0].begin == 5 && v[0].end == 7 && v[1].kind == RMT_SPAN_SYMBOL && v[2].begin == 14, "invalid bytes: %d spans", n);
  // Too small a buffer: the count, and only cap spans written.
  v[1].begin = -7;
  CHECK(rmt_verbatim_find("1 2 3", 5, v, 1) == 3 && v[1].begin == -7, "cap 1 wrote past it");
  CHECK(rmt_verbatim_find("1 2 3", 5, NULL, 0) == 3, "count only");
  CHECK(rmt_verbatim_find(NULL, 3, v, 8) == RMT_E_INVALID, "NULL text accepted");
  CHECK(rmt_verbatim_find("x", 1, NULL, 2) == RMT_E_INVALID, "NULL out accepted");
  CHECK(rmt_verbatim_kind_name(RMT_SPAN_KINDS) == NULL && rmt_verbatim_kind_name(-1) == NULL, "kind names past the end");
  CHECK(strcmp(rmt_verbatim_how_name(RMT_SPAN_INSERTED), "inserted") == 0 && !rmt_verbatim_how_name(RMT_SPAN_HOWS), "how names");
}

// symbols.c against code points whose categories Unicode fixes.
static void test_symbol_table(void) {
  const int32_t yes[] = {0x20AC, 0x2605, 0x2318, 0x00A9, 0x00B0, 0x1F389, 0x200D, 0xFE0F, 0x1F3FD, 0x1F1EA, 0x20E3, 0x221E};
  const int32_t no[] = {0x00E9, 0x00F1, 0x00BF, 0x00A0, 0x2014, 0x0416, 0x4E2D, 0x00BA, 0x10FFFF};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) CHECK(rmt_is_symbol(yes[i]), "U+%04X is a symbol", (unsigned)yes[i]);
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) CHECK(!rmt_is_symbol(no[i]), "U+%04X is no symbol", (unsigned)no[i]);
}

int main(void) {
  test_kinds();
  test_look_alikes();
  test_bytes();
  test_symbol_table();
  return test_report("test_verbatim");
}
