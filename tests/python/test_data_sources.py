"""Cleaning rules of each training source (models/residual_mt/data), stdlib only."""
import os
import subprocess
import tempfile
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt.data import build_corpus, clean, descriptions, freedict  # noqa: E402
from residual_mt.data import gettext_catalogs as gt  # noqa: E402


class BibleFixesTest(unittest.TestCase):
    TABLE = clean.casing_table(["y habló Jehová á Moisés", "vino Jesús", "los judíos", "tú ten piedad",
                                "los bienaventurados"])

    def test_single_caps_word_takes_its_usual_form(self):
        self.assertEqual(clean.recase_caps("Y HABLÓ Jehová á Moisés", self.TABLE), "Y habló Jehová á Moisés")
        self.assertEqual(clean.recase_caps("Yo soy JEHOVÁ; y os sacaré", self.TABLE), "Yo soy Jehová; y os sacaré")
        self.assertEqual(clean.recase_caps("EN el principio", self.TABLE), "En el principio")
        self.assertEqual(clean.recase_caps("Y TEN piedad", self.TABLE), "Y ten piedad")

    def test_accents_restored_from_the_table(self):
        self.assertEqual(clean.recase_caps("Amén. Y JESUS dijo", self.TABLE), "Amén. Y Jesús dijo")

    def test_sentence_start_gets_a_capital(self):
        self.assertEqual(clean.recase_caps("PABLO, siervo de Dios", self.TABLE), "Pablo, siervo de Dios")
        self.assertEqual(clean.recase_caps("dijo: HABLÓ", self.TABLE), "dijo: Habló")

    def test_inscriptions_and_acrostic_letters_kept(self):
        for text in ("MENE, MENE, TEKEL, UPHARSIN", "JESUS NAZARENO, REY DE LOS JUDIOS",
                     "SANTIDAD Á JEHOVÁ", "HOLY TO YAHWEH"):
            self.assertEqual(clean.recase_caps(text, self.TABLE), text)
        self.assertEqual(clean.recase_caps("ALEPH. BIENAVENTURADOS los", self.TABLE),
                         "ALEPH. Bienaventurados los")

    def test_casing_table_ignores_sentence_starts_and_caps(self):
        t = clean.casing_table(["Habló él. Habló ella.", "y habló", "HABLÓ"])
        self.assertEqual(t["HABLO"], "habló")

    def test_epistle_subscription_cut(self):
        v = ("La gracia sea con todos vosotros. Amén. A Tito, el cual fué el primer obispo ordenado "
             "á la iglesia de los Cretenses, escrita de Nicópolis de Macedonia.")
        self.assertEqual(clean.strip_subscription("Titus", v, True), "La gracia sea con todos vosotros. Amén.")
        v = "Sea con vuestro espíritu. Amén. A Filemón fué enviada de Roma por Onésimo, siervo."
        self.assertEqual(clean.strip_subscription("Philemon", v, True), "Sea con vuestro espíritu. Amén.")

    def test_subscription_rule_only_on_an_epistles_last_verse(self):
        v = "Amén. Enviada de Roma á los Gálatas."
        self.assertEqual(clean.strip_subscription("Galatians", v, False), v)
        self.assertEqual(clean.strip_subscription("Revelation of John", v, True), v)
        v = "Y los cuatro animales decían: Amén. Y los veinticuatro ancianos cayeron"
        self.assertEqual(clean.strip_subscription("Hebrews", v, True), v)


PO = r'''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"

msgid "_Open File"
msgstr "_Abrir archivo"

#, fuzzy
msgid "Close"
msgstr "Cerrar"

msgid "Untranslated"
msgstr ""

msgid "One file"
msgid_plural "Many files"
msgstr[0] "Un archivo"
msgstr[1] "Muchos archivos"

msgctxt "menu"
msgid "A \"quoted\" "
"line"
msgstr "Una línea "
"«citada»"

#~ msgid "Obsolete"
#~ msgstr "Obsoleto"
'''


class GettextTest(unittest.TestCase):
    def test_po_entries(self):
        pairs = list(gt.entry_pairs(gt.parse_po(PO)))
        self.assertEqual(pairs, [("_Open File", "_Abrir archivo"), ("One file", "Un archivo"),
                                 ('A "quoted" line', "Una línea «citada»")])

    def test_format_directives_dropped(self):
        for en, es in (("Open %s", "Abrir %s"), ("%1$d of %2$d", "%1$d de %2$d"),
                       ("Hello %(name)s", "Hola %(name)s"), ("Copy {0}", "Copiar {0}"),
                       ("Found %1 items", "%1 elementos"), ("Set $HOME now", "Defina $HOME"),
                       ("%-20s name", "%-20s nombre"), ("Page {page}", "Página {page}")):
            self.assertEqual(gt.clean_pair(en, es), (None, "format"), en)

    def test_accelerators_removed(self):
        self.assertEqual(gt.clean_pair("_Open File", "_Abrir archivo")[0], ("Open File", "Abrir archivo"))
        self.assertEqual(gt.clean_pair("&Save As...", "&Guardar como...")[0], ("Save As...", "Guardar como..."))
        self.assertEqual(gt.clean_pair("~Edit Mode", "Modo de ~edición")[0], ("Edit Mode", "Modo de edición"))
        self.assertEqual(gt.clean_pair("Tileable Blur", "Desenfoque en_losable")[0],
                         ("Tileable Blur", "Desenfoque enlosable"))
        self.assertEqual(gt.clean_pair("Fi&le manager", "Gestor de arc&hivos")[0],
                         ("File manager", "Gestor de archivos"))
        self.assertEqual(gt.clean_pair("Salt && Pepper", "Sal && pimienta")[0], ("Salt & Pepper", "Sal & pimienta"))

    def test_markup_stripped_or_dropped(self):
        self.assertEqual(gt.clean_pair("<b>Warning:</b> disk full", "<b>Aviso:</b> disco lleno")[0],
                         ("Warning: disk full", "Aviso: disco lleno"))
        self.assertEqual(gt.clean_pair("Tom &amp; Jerry show", "El show de Tom &amp; Jerry")[0],
                         ("Tom & Jerry show", "El show de Tom & Jerry"))
        many = "<p><b>a</b><i>b</i><u>c</u><s>d</s></p>"
        self.assertEqual(gt.clean_pair(many, many + "x"), (None, "markup"))

    def test_code_like_and_empty_strings_dropped(self):
        self.assertEqual(gt.clean_pair("org.gnome.Files", "org.gnome.Archivos")[1], "identifier")
        self.assertEqual(gt.clean_pair("snake_case", "caso_serpiente")[1], "identifier")
        self.assertEqual(gt.clean_pair("application/x-foo", "aplicación/x-foo")[1], "identifier")
        self.assertEqual(gt.clean_pair("terahertz;terahertzs", "terahercio;terahercios")[1], "identifier")
        self.assertEqual(gt.clean_pair("See https://example.org now", "Vea https://example.org")[1], "url")
        self.assertEqual(gt.clean_pair("-c, --count  prefix lines", "-c, --count  precede")[1], "command line")
        self.assertEqual(gt.clean_pair("...", "...")[1], "no letters")
        self.assertEqual(gt.clean_pair("Y", "S")[1], "no letters")
        self.assertEqual(gt.clean_pair("translator-credits", "Juan Pérez")[1], "credits")
        self.assertEqual(gt.clean_pair("Linux", "linux")[1], "identical")
        self.assertEqual(gt.clean_pair("bad \ufffd text", "texto")[1], "encoding")

    def test_length_ratio(self):
        self.assertEqual(gt.clean_pair("Open", "Abrir el archivo seleccionado en una ventana nueva")[1],
                         "length ratio")
        self.assertEqual(gt.clean_pair("Open the file", "Abrir el archivo")[0], ("Open the file", "Abrir el archivo"))

    def test_whitespace_normalised(self):
        self.assertEqual(gt.clean_pair("Line one\nline two", "Línea uno\n  línea dos")[0],
                         ("Line one line two", "Línea uno línea dos"))

    def test_charset_from_header(self):
        self.assertEqual(gt.po_charset(b'"Content-Type: text/plain; charset=ISO-8859-1\\n"'), "iso-8859-1")
        self.assertEqual(gt.po_charset(b"no header"), "utf-8")


ES_INDEX = """Package: foo
Description-md5: 0123
Description-es: visor de imágenes sencillo
 Foo es un visor de imágenes. Muestra fotos rápidamente.
 .
 Funciones:
  * zoom
  * giro de imágenes
 .
 Este párrafo no tiene pareja en número de frases. Tiene dos.

Package: bar
Description-md5: 4567
Description-es: algo sin original
"""
EN_INDEX = """Package: foo
Description-md5: 0123
Description-en: simple image viewer
 Foo is an image viewer. It shows photos fast.
 .
 Features:
  * zoom
  * image rotation
 .
 This paragraph has one sentence only, e.g. this one.
"""


class DescriptionsTest(unittest.TestCase):
    def test_pairs_by_md5_and_sentence(self):
        out = descriptions.description_pairs(EN_INDEX, ES_INDEX)
        self.assertEqual(sorted(out), ["foo"])
        self.assertEqual(out["foo"], [
            ("simple image viewer", "visor de imágenes sencillo"),
            ("Foo is an image viewer.", "Foo es un visor de imágenes."),
            ("It shows photos fast.", "Muestra fotos rápidamente."),
            # a list: the lead line and each item are segments ("zoom" = "zoom" dropped)
            ("Features:", "Funciones:"),
            ("image rotation", "giro de imágenes"),
            # sentence counts differ (1 vs 2): the short paragraph is kept whole
            ("This paragraph has one sentence only, e.g. this one.",
             "Este párrafo no tiene pareja en número de frases. Tiene dos."),
        ])

    def test_bullets_are_segments(self):
        self.assertEqual(descriptions.segments(["  * zoom", "  * giro de", "    imágenes"]),
                         ["zoom", "giro de imágenes"])

    def test_sentence_split_respects_abbreviations(self):
        self.assertEqual(descriptions.split_sentences("Uses e.g. Foo. Then Bar. Dr. Who came."),
                         ["Uses e.g. Foo.", "Then Bar.", "Dr. Who came."])

    def test_paragraph_count_mismatch_keeps_short_description_only(self):
        en = ("p", "viewer", [["One."], ["Two."]])
        es = ("p", "visor", [["Uno. Dos."]])
        self.assertEqual(descriptions.align_description(en, es), [("viewer", "visor")])


class FreedictTest(unittest.TestCase):
    def test_base64_numbers(self):
        self.assertEqual(freedict.b64_number("B"), 1)
        self.assertEqual(freedict.b64_number("BA"), 64)

    def test_entry_senses(self):
        head, senses = freedict.entry_senses("Amazon /æməzən/\n1. río Amazonas\n2. amazona, guerrera\n")
        self.assertEqual(head, "Amazon")
        self.assertEqual(senses, ["río Amazonas", "amazona"])
        self.assertEqual(freedict.entry_senses("casa /kˈasa/\nhouse (building), home\n"), ("casa", ["house"]))

    def test_glued_translations_dropped(self):
        self.assertFalse(freedict.usable("LittleSnowWhite"))
        self.assertTrue(freedict.usable("Snow White"))
        self.assertFalse(freedict.usable("1999"))


class AssemblyTest(unittest.TestCase):
    def test_held_out_packages_and_no_leak(self):
        pkgs = ["pkg%d" % i for i in range(400)]
        test_pkg = next(p for p in pkgs if build_corpus.held_out(p) == "modern-test")
        valid_pkg = next(p for p in pkgs if build_corpus.held_out(p) == "modern-valid")
        train_pkg = next(p for p in pkgs if build_corpus.held_out(p) == "train")
        per_package = {"gettext": {
            test_pkg: [("Open file", "Abrir archivo")],
            valid_pkg: [("Save file", "Guardar archivo")],
            train_pkg: [("Open file", "Abrir el archivo"), ("Quit", "Salir"), ("Quit", "Salir"),
                        ("save file", "Guardar fichero")],
        }}
        bible = {"train": [("Genesis", "1:1", "1:1", "En el principio", "In the beginning")],
                 "valid": [], "test": []}
        s = build_corpus.assemble(bible, per_package, [("house", "casa")])
        self.assertEqual(s["modern-test"], [("Open file", "Abrir archivo", "gettext", "")])
        self.assertEqual(s["modern-valid"], [("Save file", "Guardar archivo", "gettext", "")])
        # "Open file" and "save file" (case-folded) are evaluation sides; "Quit" once
        self.assertEqual(sorted(s["train"]), [("In the beginning", "En el principio", "bible", "Genesis\t1:1\t1:1"),
                                              ("Quit", "Salir", "gettext", ""), ("house", "casa", "freedict", "")])

    def test_held_out_share(self):
        pkgs = ["package-%d" % i for i in range(5000)]
        share = sum(build_corpus.held_out(p) != "train" for p in pkgs) / len(pkgs)
        self.assertTrue(0.03 < share < 0.07, share)

    def test_spm_sample_balances_gettext_with_the_bible(self):
        rows = [("a" * 50, "b" * 50, "bible", "")] * 2 + [("c" * 10, "d" * 10, "gettext", "")] * 100
        lines = build_corpus.spm_sample(rows)
        gettext_chars = sum(len(l) for l in lines if l[0] in "cd")
        self.assertEqual(gettext_chars, 200)  # as many characters as the Bible's 200


if __name__ == "__main__":
    unittest.main()


class CatalogLocalesTest(unittest.TestCase):
    """Which Spanish catalogs of a .deb are read: es, else es_ES (never es_AR), from a
    .deb dpkg-deb builds holding catalogs msgfmt writes."""

    @staticmethod
    def po(text):
        return ('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                'msgid "Open the door"\nmsgstr "%s"\n' % text)

    def deb(self, tmp, locales, sources=()):
        """locales: {locale: translation} compiled by msgfmt; sources: [(path, translation)] as .po."""
        tree = os.path.join(tmp, "tree")
        os.makedirs(os.path.join(tree, "DEBIAN"))
        with open(os.path.join(tree, "DEBIAN/control"), "w") as f:
            f.write("Package: game\nVersion: 1.0-1\nArchitecture: all\nMaintainer: T <t@example.org>\nDescription: test\n")
        for locale, text in locales.items():
            folder = os.path.join(tree, "usr/share/locale", locale, "LC_MESSAGES")
            os.makedirs(folder)
            po = os.path.join(tmp, locale + ".po")
            with open(po, "w", encoding="utf-8") as f:
                f.write(self.po(text))
            subprocess.run(["msgfmt", "-o", os.path.join(folder, "game.mo"), po], check=True)
        for path, text in sources:
            os.makedirs(os.path.dirname(os.path.join(tree, path)), exist_ok=True)
            with open(os.path.join(tree, path), "w", encoding="utf-8") as f:
                f.write(self.po(text))
        path = os.path.join(tmp, "game_1.0-1_all.deb")
        subprocess.run(["dpkg-deb", "--root-owner-group", "-b", tree, path], check=True, capture_output=True)
        return path

    def read(self, locales, sources=()):
        with tempfile.TemporaryDirectory() as tmp:
            mos = gt.extract_catalogs(self.deb(tmp, locales, sources), os.path.join(tmp, "out"))
            return [os.path.relpath(p, os.path.join(tmp, "out")) for p in mos], gt.catalog_pairs(mos)[0]

    def test_spain_when_there_is_no_plain_spanish(self):
        self.assertEqual(self.read({"es_AR": "Abrí la puerta", "es_ES": "Abre la puerta"}),
                         (["usr/share/locale/es_ES/LC_MESSAGES/game.mo"], [("Open the door", "Abre la puerta")]))

    def test_plain_spanish_first(self):
        self.assertEqual(self.read({"es": "Abrir la puerta", "es_ES": "Abre la puerta"})[0],
                         ["usr/share/locale/es/LC_MESSAGES/game.mo"])

    def test_source_catalogs_where_there_is_no_compiled_one(self):
        games = [("usr/share/games/g/data/po/es.po", "Abre la puerta"), ("usr/share/games/g/mods/m/data.es.po", "Abrid la puerta"),
                 ("usr/share/games/g/data/po/pt_BR.po", "Abra a porta"), ("usr/share/doc/g/es.pot", "x")]
        self.assertEqual(self.read({}, games), (
            ["usr/share/games/g/data/po/es.po", "usr/share/games/g/mods/m/data.es.po"],
            [("Open the door", "Abre la puerta"), ("Open the door", "Abrid la puerta")]))
        self.assertEqual(self.read({"es": "Abrir la puerta"}, games)[0], ["usr/share/locale/es/LC_MESSAGES/game.mo"])


class DirectionsTest(unittest.TestCase):
    """Which way train.py uses each source's pairs (corpus.make_examples)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        lines = {"es": ["1 2", "3 4", "5 6"], "en": ["7", "8", "9"],
                 "src": ["bible", "austen-bt:es-en", "asterisk:es-en"]}
        for ext, rows in lines.items():
            name = "train.src" if ext == "src" else "train.%s.ids" % ext
            with open(os.path.join(self.dir, name), "w") as f:
                f.write("\n".join(rows) + "\n")

    def uses(self, forward=()):
        from residual_mt import corpus
        return sorted((ex[2], ex[3], tuple(ex[1])) for ex in corpus.make_examples(self.dir, "train", 10, forward))

    def test_synthetic_side_is_never_a_target_unless_asked(self):
        self.assertEqual(self.uses(), [("en-es", "bible", (1, 2)), ("es-en", "asterisk:es-en", (9,)),
                                       ("es-en", "austen-bt:es-en", (8,)), ("es-en", "bible", (7,))])

    def test_forward_translation_is_the_same_pair_the_other_way(self):
        # human English source, Apertium's Spanish as the target, under its own name and weight
        used = self.uses(forward={"austen-ft:en-es", "asterisk-ft:en-es"})
        self.assertIn(("en-es", "austen-ft:en-es", (3, 4)), used)
        self.assertEqual(len(used), 5)  # asterisk is human on both sides, not back-translated: no -ft use

    def test_tagged_back_translation_marks_only_apertiums_sources(self):
        from residual_mt import corpus
        tagged = corpus.make_examples(self.dir, "train", 10, forward={"austen-ft:en-es"}, bt_tag=corpus.BT_TAG)
        srcs = {(ex[2], ex[3]): ex[0] for ex in tagged}
        en, es = corpus.LANG_TOKENS["en"], corpus.LANG_TOKENS["es"]
        self.assertEqual(srcs[("es-en", "austen-bt:es-en")], [en, corpus.BT_TAG, 3, 4])
        self.assertEqual(srcs[("en-es", "austen-ft:en-es")], [es, 8])  # the human side as the source: no mark
        self.assertEqual(srcs[("es-en", "asterisk:es-en")], [en, 5, 6])  # human on both sides
        self.assertEqual(srcs[("es-en", "bible")], [en, 1, 2])
        untagged = corpus.make_examples(self.dir, "train", 10, forward={"austen-ft:en-es"})
        self.assertEqual([ex for ex in untagged if ex[3] != "austen-bt:es-en"],
                         [ex for ex in tagged if ex[3] != "austen-bt:es-en"])
        self.assertEqual(corpus.BT_TAG, 0)  # <s>, which no source the engine reads holds

    def test_forward_name(self):
        from residual_mt import corpus
        self.assertEqual(corpus.forward_name("fortunes-es-bt:en-es"), "fortunes-es-ft:es-en")
        self.assertIsNone(corpus.forward_name("asterisk:es-en"))
        self.assertIsNone(corpus.forward_name("bible"))
