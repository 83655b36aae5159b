"""Cleaning rules of the everyday sources (models/residual_mt/data): WordNet examples,
fortunes, Apertium back-translation, GNOME help, the Debian manuals, Tux Paint's stamps, GCompris's Qt files,
Minetest's .tr texts, CLDR's names, Austen's speech from R's data files; stdlib only (Apertium
itself is not run here: its output is given as text)."""
import os
import subprocess
import sys
import tempfile
import struct
import unittest
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt.data import (apertium_bt, asterisk_prompts, austen, build_corpus, cldr_annotations, debs, fortunes, gnome_help, manuals,  # noqa: E402
                              drascula_dat, gtypist_drills, kvtml, minetest_tr, openttd_lng, qt_resources, r_data,
                              tuxpaint_stamps)
from residual_mt.data import wordnet_examples as wn  # noqa: E402


class WordnetTest(unittest.TestCase):
    LINE = ('00001740 29 v 04 breathe 0 take_a_breath 0 02 + 02 00 | draw air into, and expel out '
            'of, the lungs; "I can breathe better when the air is clean"; "The patient is respiring"  \n')

    def test_only_the_quoted_examples(self):
        self.assertEqual(wn.gloss_examples(self.LINE),
                         ["I can breathe better when the air is clean", "The patient is respiring"])
        self.assertEqual(wn.gloss_examples("  1 This software and database is being provided"), [])
        self.assertEqual(wn.gloss_examples('00002325 29 v 01 respire 1 | undergo respiration  \n'), [])

    def test_sentence_case_and_full_stop(self):
        self.assertEqual(wn.clean_example("the dog barked all night"), "The dog barked all night.")
        self.assertEqual(wn.clean_example("how big is that part?"), "How big is that part?")
        # short phrases stay phrases: capitalised, no full stop
        self.assertEqual(wn.clean_example("an overt lie"), "An overt lie")

    def test_fragments_and_odd_text_dropped(self):
        for text in ("two words", "the sky was blue... and then", "a \u201cdream\u201d of it in [brackets] here",
                     "he said (well it was late", "to be or not to be - Shakespeare",
                     " ".join(["word"] * 26)):
            self.assertIsNone(wn.clean_example(text), text)


class FortunesTest(unittest.TestCase):
    def test_attribution_cut_and_lines_joined(self):
        lines = ["Los hijos son las anclas que atan a la vida", "a las madres.",
                 "\t\t-- Sófocles. (497-406 a.C.) Filósofo griego. "]
        self.assertEqual(fortunes.fortune_text(lines), "Los hijos son las anclas que atan a la vida a las madres.")
        self.assertEqual(fortunes.fortune_text(["Never trust a cat.", "  -- Anonymous"]), "Never trust a cat.")

    def test_dialogue_and_verse_dropped(self):
        self.assertIsNone(fortunes.fortune_text(["Q: What is purple?", "A: A grape."]))
        self.assertIsNone(fortunes.fortune_text(["Bob: Hello there.", "Alice: Hi."]))
        self.assertIsNone(fortunes.fortune_text(["Roses are red,", "    violets are blue."]))
        self.assertIsNone(fortunes.fortune_text(["line %d" % i for i in range(7)]))

    def test_sentence_split_respects_abbreviations(self):
        self.assertEqual(fortunes.sentences("Dr. Smith came home. He was tired! Was he?"),
                         ["Dr. Smith came home.", "He was tired!", "Was he?"])
        self.assertEqual(fortunes.sentences("¿Vienes? ¡Claro que sí!"), ["¿Vienes?", "¡Claro que sí!"])

    def test_plain_sentences_only(self):
        self.assertTrue(fortunes.plain_sentence("A bird in the hand is worth two in the bush."))
        self.assertTrue(fortunes.plain_sentence("¿Dónde está la felicidad?"))
        for s in ("Go to http://example.com now.", "This is VERY important.", "Too short.",
                  "no capital at the start here.", "No final punctuation here",
                  'He said "hello and left.', "Use $HOME and ~/bin please."):
            self.assertFalse(fortunes.plain_sentence(s), s)

    def test_read_fortunes_file(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
            f.write("Never trust a cat.\n%\nDo not run. Walk very slowly.\n\t-- Mom\n%\n")
        try:
            self.assertEqual(fortunes.fortune_sentences([f.name]),
                             ["Never trust a cat.", "Do not run.", "Walk very slowly."])
        finally:
            os.unlink(f.name)

    def test_offensive_and_proverb_files_skipped(self):
        for path in fortunes.spanish_files():
            self.assertNotIn("/off/", path)
            self.assertNotEqual(os.path.basename(path), "refranes.fortunes")


class ApertiumTest(unittest.TestCase):
    def test_marks_removed_and_final_mark_restored(self):
        self.assertEqual(apertium_bt.clean_translation("I am a lucky guy, and I am happy.",
                                                       "Soy un tipo afortunado , y  soy feliz"),
                         "Soy un tipo afortunado, y soy feliz.")
        self.assertEqual(apertium_bt.clean_translation("Where is my red bike?", "Dónde es mi *bike rojo"),
                         "Dónde es mi bike rojo?")

    def test_errors_unknowns_and_copies_dropped(self):
        self.assertIsNone(apertium_bt.clean_translation("Where is the station?", "Dónde es la #canal?"))
        self.assertIsNone(apertium_bt.clean_translation("Blorf the snarks.", "*Blorf el *snarks."))
        self.assertIsNone(apertium_bt.clean_translation("Hola amigo.", "Hola amigo."))
        self.assertIsNone(apertium_bt.clean_translation("A long sentence with many words in it.", "Sí."))

    def test_human_side_stays_on_its_side(self):
        orig = apertium_bt.run_apertium
        try:
            apertium_bt.run_apertium = lambda lines, mode: ["El perro duerme" if mode == "eng-spa" else "The dog sleeps"
                                                            for _ in lines]
            self.assertEqual(apertium_bt.back_translate(["The dog sleeps."], "en"),
                             ([("The dog sleeps.", "El perro duerme.")], 0))
            self.assertEqual(apertium_bt.back_translate(["El perro duerme."], "es"),
                             ([("The dog sleeps.", "El perro duerme.")], 0))
        finally:
            apertium_bt.run_apertium = orig


class GnomeHelpTest(unittest.TestCase):
    PAGE = '''<?xml version="1.0" encoding="utf-8"?>
<page xmlns="http://projectmallard.org/1.0/" id="x">
  <info><credit><name>Someone</name></credit><desc>%s</desc></info>
  <title>%s</title>
  <p>%s</p>
  <steps><item><p>%s</p></item></steps>
  <code>ls -l</code>
</page>'''

    def test_units_in_order_with_inline_markup_flattened(self):
        en = self.PAGE % ("Learn how to log out.", "Log out", "Click <gui>Power Off</gui> now. Then wait.",
                          "Press <key>Enter</key>.")
        self.assertEqual(gnome_help.page_units(en),
                         ["Learn how to log out.", "Log out", "Click Power Off now. Then wait.", "Press Enter."])

    def test_alignment_by_unit_and_sentence(self):
        en = ["Network problems", "Click Power Off now. Then wait."]
        es = ["Problemas de red", "Pulse Apagar ahora. Después espere."]
        self.assertEqual(gnome_help.align_units(en, es),
                         [("Network problems", "Problemas de red"), ("Click Power Off now.", "Pulse Apagar ahora."),
                          ("Then wait.", "Después espere.")])
        self.assertEqual(gnome_help.align_units(en, es[:1]), [])  # a page whose structure differs

    def test_sentence_counts_differ_keeps_the_paragraph(self):
        self.assertEqual(gnome_help.align_units(["Click it. Then wait."], ["Púlselo y espere."]),
                         [("Click it. Then wait.", "Púlselo y espere.")])


class ManualsTest(unittest.TestCase):
    # The markup Publican writes for debian-handbook (div.para, a sidebar's
    # title in a p, empty index-term anchors, screens in pre) and DocBook's
    # XSL for the installation guide (a note: a table whose cells hold p).
    HANDBOOK = """<html><head><title>%s</title></head><body>
<div xmlns:d="http://docbook.org/ns/docbook" class="navheader"><p>Prev</p></div>
<div class="para">
\t\t<acronym class="acronym">APT</acronym> %s
\t</div><div class="sidebar"><div class="titlepage"><div><div><p class="title"><strong><span class="emphasis"><em>%s</em></span></strong></p></div></div></div><a id="id-1" class="indexterm"></a><div class="para">
\t\t%s <code class="command">apt update</code>.
\t</div><pre class="screen"><code class="computeroutput">$ </code><strong class="userinput"><code>apt update</code></strong></pre>
<span class="indexterm"><a id="x"></a>sources.list</span>
</div></body></html>"""
    GUIDE = """<div class="note"><table border="0" summary="Note">
<tr><td rowspan="2"><img alt="[Note]" src="images/note.png"></td><th align="left">%s</th></tr>
<tr><td align="left" valign="top"><p>

%s <span class="emphasis"><em>%s</em></span>.

</p></td></tr></table></div>"""

    def test_handbook_units_skip_screens_index_terms_and_navigation(self):
        en = self.HANDBOOK % ("Chapter 6", "is a package tool.", "VOCABULARY", "Run")
        self.assertEqual(manuals.page_units(en),
                         ["APT is a package tool.", "VOCABULARY", "Run apt update."])

    def test_guide_cells_and_their_paragraphs_count_alike(self):
        en = manuals.page_units(self.GUIDE % ("Note", "Shut it down", "first"))
        es = manuals.page_units(self.GUIDE % ("Nota", "Apáguelo", "antes"))
        self.assertEqual(en, ["", "Note", "", "Shut it down first."])
        self.assertEqual(len(en), len(es))

    def test_pages_align_by_structure(self):
        with tempfile.TemporaryDirectory() as root:
            en_dir, es_dir = (os.path.join(root, "usr/share/doc/installation-guide-amd64", lang) for lang in ("en", "es"))
            os.makedirs(en_dir)
            os.makedirs(es_dir)
            pages = {"ch01.html": (("Note", "Shut the other system down", "before you start"),
                                   ("Nota", "Apague el otro sistema", "antes de empezar")),
                     # a page whose Spanish copy lacks a unit is skipped
                     "ch02.html": (("Note", "Keep it", "safe"), None)}
            for name, (en, es) in pages.items():
                with open(os.path.join(en_dir, name), "w", encoding="utf-8") as f:
                    f.write(self.GUIDE % en)
                with open(os.path.join(es_dir, name), "w", encoding="utf-8") as f:
                    f.write(self.GUIDE % es if es else "<p>Solo esto.</p>")
            self.assertEqual(manuals.manual_pairs(root, "installation-guide-amd64"),
                             {"installation-guide-amd64/ch01": [
                                 ("Note", "Nota"),
                                 ("Shut the other system down before you start.",
                                  "Apague el otro sistema antes de empezar.")]})

    def test_reference_pages_pair_by_language_suffix(self):
        _, _, es_name = manuals.MANUALS["debian-reference"]
        self.assertEqual(es_name("ch01.en.html"), "ch01.es.html")
        self.assertIsNone(es_name("ch01.es.html"))


class TuxPaintStampsTest(unittest.TestCase):
    # A stamp's description file as Tux Paint ships it: the English line, then LOCALE.utf8= lines.
    FILE = "A bunny with an Easter egg.\nast.utf8=Un conexu con un güevu.\nen_GB.utf8=A bunny with an Easter egg.\n" \
           "es.utf8=Un conejo con  un huevo de pascua.\nes@valencia.utf8=No.\neu.utf8=Untxi bat.\n"

    def test_the_english_line_and_the_spanish_one(self):
        self.assertEqual(tuxpaint_stamps.description_pair(self.FILE),
                         ("A bunny with an Easter egg.", "Un conejo con un huevo de pascua."))

    def test_no_spanish_line_or_an_untranslated_one_gives_nothing(self):
        self.assertIsNone(tuxpaint_stamps.description_pair("A rocket.\nca.utf8=Un coet.\n"))
        self.assertIsNone(tuxpaint_stamps.description_pair("A rocket.\nes.utf8=A rocket.\n"))

    def test_pairs_of_a_stamps_tree_sorted_once(self):
        with tempfile.TemporaryDirectory() as root:
            folder = os.path.join(root, tuxpaint_stamps.STAMPS, "animals")
            os.makedirs(folder)
            for name, text in (("camel.txt", "A camel.\nes.utf8=Un camello.\n"),
                               ("camel2.txt", "A camel.\nes.utf8=Un camello.\n"),
                               ("camel.dat", "scale 50%\n"),
                               ("bunny.txt", self.FILE)):
                with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                    f.write(text)
            self.assertEqual(tuxpaint_stamps.stamp_pairs(root),
                             [("A bunny with an Easter egg.", "Un conejo con un huevo de pascua."),
                              ("A camel.", "Un camello.")])


class DebsTest(unittest.TestCase):
    def test_unpacks_the_files_asked_for_and_more_when_asked_again(self):
        # a .deb as dpkg-deb builds it, already in the scratch folder (so nothing is downloaded)
        with tempfile.TemporaryDirectory() as tmp:
            tree = os.path.join(tmp, "tree")
            os.makedirs(os.path.join(tree, "DEBIAN"))
            os.makedirs(os.path.join(tree, "usr/share/doc/demo"))
            with open(os.path.join(tree, "DEBIAN/control"), "w") as f:
                f.write("Package: demo\nVersion: 1:2.0-1\nArchitecture: all\nMaintainer: T <t@example.org>\n"
                        "Description: test\n")
            for name in ("a.html", "b.txt"):
                with open(os.path.join(tree, "usr/share/doc/demo", name), "w") as f:
                    f.write(name)
            scratch = os.path.join(tmp, "scratch")
            os.makedirs(scratch)
            deb = os.path.join(scratch, "demo_1%3a2.0-1_all.deb")
            subprocess.run(["dpkg-deb", "--root-owner-group", "-b", tree, deb], check=True, capture_output=True)
            doc = os.path.join(scratch, "root/usr/share/doc/demo")
            root, versions = debs.unpack(scratch, ["demo"], ["*.html"])
            self.assertEqual(versions, {"demo": "1:2.0-1"})
            self.assertEqual(sorted(os.listdir(doc)), ["a.html"])
            debs.unpack(scratch, ["demo"], ["*.txt"])  # other patterns: unpacked again
            self.assertEqual(sorted(os.listdir(doc)), ["a.html", "b.txt"])


class EverydayAssemblyTest(unittest.TestCase):
    def test_back_translation_direction_names(self):
        self.assertEqual(build_corpus.bt_direction("wordnet-bt:es-en"), "es-en")
        self.assertEqual(build_corpus.bt_direction("fortunes-es-bt:en-es"), "en-es")
        self.assertIsNone(build_corpus.bt_direction("gnome-help"))

    def test_everyday_sets_never_trained_on(self):
        bible = {"train": [], "valid": [], "test": []}
        extra = [("Good morning, how are you?", "Buenos días, ¿cómo está?", "wordnet-bt:es-en"),
                 ("The dog sleeps.", "El perro duerme.", "fortunes-bt:es-en"),
                 ("Click here.", "Pulse aquí.", "gnome-help")]
        s = build_corpus.assemble(bible, {}, [], extra,
                                  {"everyday-dev": [("Good morning, how are you?", "Buenos días, ¿cómo estás?")]})
        self.assertEqual(s["everyday-dev"], [("Good morning, how are you?", "Buenos días, ¿cómo estás?",
                                              "everyday", "")])
        self.assertEqual(sorted(r[2] for r in s["train"]), ["fortunes-bt:es-en", "gnome-help"])

    def test_spm_sample_takes_only_the_human_side(self):
        rows = [("The dog sleeps.", "El perro duerme.", "fortunes-bt:es-en", ""),
                ("The cat sleeps.", "El gato duerme.", "fortunes-es-bt:en-es", "")]
        self.assertEqual(build_corpus.spm_sample(rows), ["The dog sleeps.", "El gato duerme."])

    def test_our_sets_line_up(self):
        sets = build_corpus.read_everyday()
        self.assertEqual(set(sets), {"everyday-dev", "everyday-test"})
        for pairs in sets.values():
            self.assertGreaterEqual(len(pairs), 300)
        dev = {p for p in sets["everyday-dev"]}
        self.assertFalse(dev & set(sets["everyday-test"]))


if __name__ == "__main__":
    unittest.main()


QT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "qt")


def qt_fixture(name):
    with open(os.path.join(QT, name), "rb") as f:
        return f.read()


class QtResourcesTest(unittest.TestCase):
    """GCompris's files, read from what Qt's own lrelease and rcc write
    (tests/fixtures/make_qt_fixtures.sh)."""

    def test_catalog_messages_by_context_with_plural_forms(self):
        messages = qt_resources.read_qm(qt_fixture("catalog.qm"))
        self.assertIn(("ActivityInfo", "How many seasons has Earth?", ["¿Cuántas estaciones tiene la Tierra?"]), messages)
        self.assertIn(("Score", "%n apples", ["%n manzana", "%n manzanas"]), messages)
        self.assertNotIn("Not translated yet", [m[1] for m in messages])  # unfinished: lrelease leaves it out

    def test_catalog_pairs_cleaned_as_gettext_ones(self):
        # placeholders dropped (%n, %1), markup stripped, comments not text
        self.assertEqual(sorted(qt_resources.catalog_pairs(qt_fixture("catalog.qm"))), [
            ("Drag and Drop each item above its name", "Arrastra y suelta cada objeto sobre su nombre"),
            ("Great, you won the game!", "¡Genial, has ganado la partida!"),
            ("How many seasons has Earth?", "¿Cuántas estaciones tiene la Tierra?")])

    def test_bundles_compressed_plain_and_format_1_read_alike(self):
        paths = ["/gcompris/src/activities/lang/resource/content-%s.json" % lang for lang in ("en", "es")]
        for name in ("words.rcc", "words-plain.rcc", "words-v1.rcc"):
            bundle = qt_resources.read_rcc(qt_fixture(name))
            self.assertEqual(sorted(bundle), paths, name)
            # words paired by their picture's key; a key on one side only gives nothing
            self.assertEqual(qt_resources.word_pairs(bundle),
                             [("bread", "pan"), ("tablecloth", "mantel"), ("zero", "cero")], name)

    def test_damaged_files_are_clear_errors(self):
        qm, rcc = qt_fixture("catalog.qm"), qt_fixture("words.rcc")
        for reader, data, what in ((qt_resources.read_qm, qm[:-3], "truncated"),
                                   (qt_resources.read_qm, b"\0" * 16 + qm[16:], "bad magic"),
                                   (qt_resources.read_rcc, rcc[:40], "truncated|outside"),
                                   (qt_resources.read_rcc, b"qrez" + rcc[4:], "bad magic")):
            with self.assertRaisesRegex(ValueError, what):
                reader(data)


class MinetestTrTest(unittest.TestCase):
    # A mod's locale/<mod>.es.tr as Minetest's translators write it.
    FILE = ("# textdomain: default\nLocked Chest=Cofre cerrado\nLocked Chest (owned by @1)=Cofre cerrado (propiedad de @1)\n"
            "Write=\n\nKey @= value=Clave @= valor\nTwo@nlines=Dos@nlíneas\nMail me @@ home=Escríbeme @@ casa\n")

    def test_escapes_parameters_and_untranslated_lines(self):
        self.assertEqual(minetest_tr.parse_tr(self.FILE), [
            ("Locked Chest", "Cofre cerrado"), ("Key = value", "Clave = valor"), ("Two\nlines", "Dos\nlíneas"),
            ("Mail me @ home", "Escríbeme @ casa")])

    def test_pairs_of_a_tree_cleaned_sorted_once(self):
        with tempfile.TemporaryDirectory() as root:
            for mod in ("default", "chests"):
                folder = os.path.join(root, "mods", mod, "locale")
                os.makedirs(folder)
                with open(os.path.join(folder, mod + ".es.tr"), "w", encoding="utf-8") as f:
                    f.write(self.FILE)
                with open(os.path.join(folder, mod + ".de.tr"), "w", encoding="utf-8") as f:
                    f.write("Locked Chest=Verschlossene Truhe\n")
            # other languages' files not read; line breaks made spaces by the cleaning
            self.assertEqual(minetest_tr.tr_pairs(root), [("Key = value", "Clave = valor"), ("Locked Chest", "Cofre cerrado"),
                                                          ("Mail me @ home", "Escríbeme @ casa"), ("Two lines", "Dos líneas")])


class CldrAnnotationsTest(unittest.TestCase):
    # The shape of CLDR's common/annotations/{en,es}.xml: keywords and a tts name per character.
    EN = """<?xml version="1.0" encoding="UTF-8" ?>
<!DOCTYPE ldml SYSTEM "../../common/dtd/ldml.dtd">
<ldml><identity><version number="$Revision$"/><language type="en"/></identity><annotations>
<annotation cp="🍎">apple | fruit | red</annotation>
<annotation cp="🍎" type="tts">red apple</annotation>
<annotation cp="🚶‍♀" type="tts">woman walking</annotation>
<annotation cp="{" type="tts">left curly bracket</annotation>
<annotation cp="‾" type="tts">overline</annotation>
<annotation cp="🎄" type="tts">Christmas tree</annotation>
</annotations></ldml>"""
    ES = EN.replace('"en"', '"es"').replace("apple | fruit | red", "fruta | manzana").replace(
        "red apple", "manzana roja").replace("woman walking", "mujer  caminando").replace(
        "left curly bracket", "llave de apertura").replace(
        '<annotation cp="‾" type="tts">overline', '<annotation cp="‾" type="tts" draft="provisional">línea').replace(
        "Christmas tree", "↑↑↑")

    def test_names_paired_by_character_drafts_and_inherited_left_out(self):
        self.assertEqual(cldr_annotations.name_pairs(self.EN, self.ES), [
            ("left curly bracket", "llave de apertura"), ("red apple", "manzana roja"),
            ("woman walking", "mujer caminando")])


RDATA = os.path.join(os.path.dirname(__file__), "..", "fixtures", "rdata")


class RDataTest(unittest.TestCase):
    """A package's lazy-load database as R writes it (tests/fixtures/make_r_fixtures.sh)."""

    def setUp(self):
        with open(os.path.join(RDATA, "Rdata.rdx"), "rb") as f:
            self.index = r_data.lazy_load_index(f.read())
        with open(os.path.join(RDATA, "Rdata.rdb"), "rb") as f:
            self.rdb = f.read()

    def value(self, name):
        return r_data.lazy_load_value(self.rdb, self.index[name], name)

    def test_vectors_with_na_utf8_names_and_compact_sequences(self):
        self.assertEqual(sorted(self.index), ["counts", "emma", "others", "persuasion"])
        self.assertEqual(self.value("counts"), [1, None, 3])
        emma = self.value("emma")
        self.assertEqual((len(emma), emma[0], emma[11]), (13, "EMMA", None))
        self.assertIn("Café, s'il vous plaît", emma[12])
        others = self.value("others")  # list(a = 1:3, b = "x"): 1:3 in R's compact form
        self.assertEqual((others.value, others.attributes), ([[1, 2, 3], ["x"]], {"names": ["a", "b"]}))

    def test_damaged_data_is_a_clear_error(self):
        spot = self.index["emma"]
        with self.assertRaisesRegex(ValueError, "outside the file"):
            r_data.lazy_load_value(self.rdb[:spot[0] + 10], spot, "emma")
        with self.assertRaisesRegex(ValueError, "truncated|does not fit"):
            r_data.unserialize(zlib.decompress(self.rdb[spot[0] + 4:spot[0] + spot[1]])[:-20], "emma")
        with self.assertRaisesRegex(ValueError, "not R's XDR"):
            r_data.unserialize(b"A\n" + bytes(30))

    def test_austen_keeps_the_sentences_of_quoted_speech(self):
        novels = {name: [] for name in austen.NOVELS}
        novels["emma"], novels["persuasion"] = self.value("emma"), self.value("persuasion")
        # "--" sentences, fragments ending in a comma, narrative and headings left out; Mr. kept whole
        self.assertEqual(austen.novel_sentences(novels), [
            "What a pity it is that Mr. Weston ever thought of her!", "I cannot agree with you, papa; you know I cannot.",
            "Mr. Weston is such a good-humoured, pleasant, excellent man.", "We shall walk to the village tomorrow.",
            "I am sure I shan't get a wink of sleep all night."])

    def test_a_package_without_the_novels_is_refused_by_name(self):
        with tempfile.TemporaryDirectory() as root:
            folder = os.path.join(root, austen.DATA)
            os.makedirs(folder)
            for name in ("Rdata.rdx", "Rdata.rdb"):
                with open(os.path.join(RDATA, name), "rb") as f, open(os.path.join(folder, name), "wb") as g:
                    g.write(f.read())
            with self.assertRaisesRegex(ValueError, "no mansfieldpark, northangerabbey, prideprejudice"):
                austen.read_novels(root)


class KvtmlTest(unittest.TestCase):
    # KVTML 2 as KDE's files write it: entries by id, a translation's text and comment.
    FILE = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE kvtml PUBLIC "kvtml2.dtd" "http://edu.kde.org/kvtml/kvtml2.dtd">
<kvtml version="2.0" ><information><title>T</title></information>
  <identifiers><identifier id="0" ><locale>%s</locale></identifier></identifiers>
  <entries>%s</entries></kvtml>"""
    ENTRY = '<entry id="%s" ><inactive>false</inactive><translation id="0" ><text>%s</text><comment>%s</comment></translation></entry>'

    def kvtml(self, lang, rows):
        return self.FILE % (lang, "".join(self.ENTRY % row for row in rows))

    def test_words_and_hints_paired_by_entry_id(self):
        en = self.kvtml("en", [("0", "bear", "Large heavy animal with thick fur"), ("1", "monitor", "A screen")])
        es = self.kvtml("es", [("1", "monitor", "Una pantalla"), ("0", "oso", "Un animal grande y pesado")])
        self.assertEqual(kvtml.file_pairs(en, es), [("bear", "oso"), ("Large heavy animal with thick fur", "Un animal grande y pesado"),
                                                    ("A screen", "Una pantalla")])

    def test_files_whose_ids_differ_give_nothing(self):
        en = self.kvtml("en", [("0", "hairdresser", ""), ("1", "lawyer", "")])
        es = self.kvtml("es", [("0", "mecánico", ""), ("1", "peluquero", ""), ("2", "abogado", "")])
        self.assertEqual(kvtml.file_pairs(en, es), [])


class AsteriskPromptsTest(unittest.TestCase):
    # core-sounds-{en,es}.txt as the packages ship them (gzipped in /usr/share/doc).
    EN = ("; Core Asterisk Sounds in English\n\nagent-pass: Please enter your password followed by the pound key.\n"
          "ascending-2tone: [ascending tones]\nauth-thankyou: Thank you.\nonly-en: Goodbye.\n")
    ES = ("; Core Asterisk Sounds in Spanish\n\nagent-pass: Por favor ingrese su contrasena seguida por la tecla de numero\n"
          "ascending-2tone: [tonos ascendentes]\nauth-thankyou: Gracias\n")

    def test_paired_by_recording_sound_descriptions_left_out(self):
        self.assertEqual(asterisk_prompts.prompt_pairs(self.EN, self.ES), [
            ("Please enter your password followed by the pound key.", "Por favor ingrese su contrasena seguida por la tecla de numero"),
            ("Thank you.", "Gracias")])

    def test_used_es_to_en_only(self):
        # the train.src name carries the one direction (corpus.source_has_direction reads it)
        self.assertEqual(build_corpus.bt_direction(build_corpus.PHRASE_SOURCES["asterisk"][2]), "es-en")


class OpenttdLngTest(unittest.TestCase):
    """The layout strgen writes (the real files are read whole by the corpus build under npm test)."""

    @staticmethod
    def lng(version, strings):
        header = bytearray(openttd_lng.HEADER)
        header[0:8] = b"LANG" + version
        counts = [len(strings)] + [0] * (openttd_lng.TABS - 1)
        header[88:152] = struct.pack("<32H", *counts)
        body = b""
        for s in strings:
            b = s.encode("utf-8")
            body += (bytes([len(b)]) if len(b) < 0xC0 else bytes([0xC0 | len(b) >> 8, len(b) & 0xFF])) + b
        return bytes(header) + body + b"\0"

    def test_strings_paired_by_index_colours_removed_parameters_dropped(self):
        # a string of 200 bytes or more has a two-byte length
        long_en, long_es = "Build " + "a long railway line " * 12, "Construir " + "una larga vía férrea " * 12
        long_en, long_es = long_en.strip(), long_es.strip()
        en = self.lng(b"\x35\x9f\xf0\x02", ["\ue002Build railway track", "Cost: \ue08a", "", long_en])
        es = self.lng(b"\x35\x9f\xf0\x02", ["\ue002Construir vías de ferrocarril", "Coste: \ue08a", "", long_es])
        self.assertEqual(openttd_lng.read_lng(en)[1], ["\ue002Build railway track", "Cost: \ue08a", "", long_en])
        self.assertEqual(openttd_lng.lng_pairs(en, es),
                         [(long_en, long_es), ("Build railway track", "Construir vías de ferrocarril")])

    def test_files_of_other_versions_or_damaged_refused(self):
        en = self.lng(b"\x35\x9f\xf0\x02", ["Yes"])
        with self.assertRaisesRegex(ValueError, "different string lists"):
            openttd_lng.lng_pairs(en, self.lng(b"\x00\x00\x00\x01", ["Sí"]))
        with self.assertRaisesRegex(ValueError, "truncated"):
            openttd_lng.read_lng(en[:-3])
        with self.assertRaisesRegex(ValueError, "not an OpenTTD"):
            openttd_lng.read_lng(b"GNAL" + en[4:])


class DrasculaDatTest(unittest.TestCase):
    """drascula.dat laid out as ScummVM's create_drascula writes it (version 6;
    the real file is read whole by the corpus build under npm test)."""

    @staticmethod
    def dat(tables, languages=2, numbers=(1,) * 13):
        out = bytearray(b"DRASCULA" + bytes([6]))
        for count, size in zip(numbers, drascula_dat.NUMBER_TABLES):
            out += struct.pack(">H", count) + bytes(count * size)
        out += struct.pack(">H", languages)
        for table in tables:
            out += struct.pack(">H", len(table[0]))
            for strings in table:
                body = bytearray()
                for text in strings:
                    raw = text.encode("cp850") + b"\0"
                    pad = 4 - (len(raw) + 2) % 4  # create_drascula pads 1 to 4 bytes
                    body += struct.pack(">H", len(raw) + pad + 2) + raw + bytes(pad)
                out += struct.pack(">H", len(body) + 2) + bytes(2) + body
        return bytes(out)

    TABLES = [[["IGOR, WHERE ARE \xfd\xd5\xd9 GOING?", "Hello Igor", "LOOK"],
               ["IGOR, ¿DONDE VAS?", "Hola Igor", "MIRAR"]],
              [["I'M\xbaHUNGRY."], ["\xfd\xd5\xbaTENGO\xbaHAMBRE."]]]

    def test_tables_read_in_language_order(self):
        tables = drascula_dat.text_tables(self.dat(self.TABLES))
        self.assertEqual([len(t) for t in tables], [2, 2])
        self.assertEqual(tables[0][1][0], "IGOR, ¿DONDE VAS?")

    def test_capitals_recased_names_kept_pronoun_bytes_and_spaces_read(self):
        self.assertEqual(drascula_dat.dialogue_pairs(self.dat(self.TABLES)), [
            ("Hello Igor", "Hola Igor"), ("I'm hungry.", "Yo tengo hambre."),
            ("Igor, where are you going?", "Igor, ¿donde vas?"), ("Look", "Mirar")])

    def test_malformed_files_are_refused(self):
        good = self.dat(self.TABLES)
        for bad in (good[:-3], b"DRASCULA\x05" + good[9:], good[:40]):
            with self.assertRaises(ValueError):
                drascula_dat.text_tables(bad)

    def test_used_es_to_en_only(self):
        self.assertEqual(build_corpus.bt_direction(build_corpus.PHRASE_SOURCES["drascula"][2]), "es-en")


class GtypistTest(unittest.TestCase):
    # a lesson file as gtypist's series are written (q.typ's commands)
    TYP = ("# comment\nG:_Q_MENU\n*:_Q_R_L1\nT:Type what you see.\n :It helps.\n"
           "D:asdf ;lkj asdf ;lkj\nI:(2)\n"
           "D:Sunday is too soon.  It is not easy to stay and study this\n :week.  Ed had a shed.\n"
           "S:Dear Sirs:\n :\n :Thank you for sending the diskettes so promptly.  How-\n :ever, they were late.\n"
           "d:Sunday is too soon.\n")

    def test_drills_and_speed_tests_only_split_into_plain_sentences(self):
        self.assertEqual(gtypist_drills.lesson_sentences([self.TYP]), [
            "Sunday is too soon.", "It is not easy to stay and study this week.", "Ed had a shed.",
            "Thank you for sending the diskettes so promptly."])

    def test_back_translated_towards_english(self):
        self.assertEqual(build_corpus.BT_SOURCES["gtypist"], ("gtypist-bt:es-en", "en"))
