"""The language identifier's everyday sources (models/langid_everyday_sources.py):
which tag a package's locale name becomes, and what each reader takes from
files in its package's layout, written here (stdlib only)."""
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt.langid import everyday_sources as ev  # noqa: E402


def write(path, text):
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text(text, encoding="utf-8")


class TagTest(unittest.TestCase):
    def test_locale_names(self):
        cases = {"de": "de", "zh": "zh-Hans", "zh_Hant": "zh-Hant", "zh_TW": "zh-Hant", "sr_Latn": "sr-Latn",
                 "sr@latin": "sr-Latn", "pt_BR": "pt", "nb": "nb", "en": "en", "ast": "ast",
                 "en_GB": None, "de_CH": None, "ca@valencia": None, "root": None}
        for locale, tag in cases.items():
            self.assertEqual(ev.tag_of(locale), tag, locale)


class ReaderTest(unittest.TestCase):
    def test_stamps_english_first_line_and_locale_lines(self):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, ev.tuxpaint_stamps.STAMPS, "animals", "camel.txt"),
                  "A camel.\nes.utf8=Un camello.\npt_BR.utf8=Um camelo.\nzh_TW.utf8=駱駝。\nca@valencia.utf8=Un camell.\n")
            got = ev.stamp_texts(d)
        self.assertEqual(got, {"en": {"A camel."}, "es": {"Un camello."}, "pt": {"Um camelo."}, "zh-Hant": {"駱駝。"}})

    def test_minetest_translation_and_its_english(self):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "games", "mtg", "mods", "default", "locale", "default.nb.tr"),
                  "# textdomain: default\nLocked Chest=Låst kiste\nYou own @1=Du eier @1\nUntranslated=\n")
            got = ev.minetest_texts(d)
        self.assertEqual(got, {"nb": {"Låst kiste"}, "en": {"Locked Chest"}})

    def test_cldr_names_by_file(self):
        with tempfile.TemporaryDirectory() as d:
            xml = ('<ldml><annotations><annotation cp="🍎">apple | fruit</annotation>'
                   '<annotation cp="🍎" type="tts">%s</annotation></annotations></ldml>')
            write(os.path.join(d, ev.ANNOTATIONS_DIR, "it.xml"), xml % "mela rossa")
            write(os.path.join(d, ev.ANNOTATIONS_DIR, "sr_Latn.xml"), xml % "crvena jabuka")
            write(os.path.join(d, ev.ANNOTATIONS_DIR, "de_CH.xml"), xml % "Apfel")
            got = ev.cldr_texts(d)
        self.assertEqual(got, {"it": {"mela rossa"}, "sr-Latn": {"crvena jabuka"}})

    def test_dialogue_catalogs_as_msgfmt_writes_them(self):
        po = ('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
              'msgid "Father, the orcs are here!"\nmsgstr "%s"\n\n'
              'msgctxt "speaker"\nmsgid "Who goes there?"\nmsgstr "%s"\n\n'
              'msgid "Untranslated line."\nmsgstr ""\n\n'
              'msgid "Same text."\nmsgstr "Same text."\n')
        lines = {"wesnoth/1.16/locale/nb_NO/LC_MESSAGES/wesnoth-httt.mo": ("Far, orkene er her!", "Hvem der?"),
                 "locale/pt_BR/LC_MESSAGES/freedroidrpg-dialogs.mo": ("Pai, os orcs chegaram!", "Quem vem lá?"),
                 "locale/de/LC_MESSAGES/freedroidrpg-data.mo": ("Vater, die Orks sind da!", "Wer da?"),
                 "locale/en_GB/LC_MESSAGES/wesnoth-httt.mo": ("Father, the orcs are 'ere!", "Who's there?")}
        with tempfile.TemporaryDirectory() as d:
            for path, (first, second) in lines.items():
                write(os.path.join(d, "in.po"), po % (first, second))
                os.makedirs(os.path.dirname(os.path.join(d, "usr/share", path)), exist_ok=True)
                subprocess.run(["msgfmt", "-o", os.path.join(d, "usr/share", path), os.path.join(d, "in.po")], check=True)
            got = ev.dialogue_texts(d)
        # the game's items (freedroidrpg-data.mo) are not dialogue; en_GB is English, whose text is the msgids
        self.assertEqual(got, {"nb": {"Far, orkene er her!", "Hvem der?"}, "pt": {"Pai, os orcs chegaram!", "Quem vem lá?"},
                               "en": {"Father, the orcs are here!", "Who goes there?"}})

    def test_a_source_gives_a_language_at_most_its_cap(self):
        texts = {"Klikk på biletet nummer %d." % i for i in range(ev.SOURCE_CAP + 500)} | {"<b>Ferdig</b>"}
        got = ev.kept("nn", texts)
        self.assertEqual(len(got), ev.SOURCE_CAP)
        self.assertEqual(got, ev.kept("nn", set(sorted(texts, reverse=True))))  # by hash, not by order
        self.assertTrue(set(got) <= ev.cleaned("nn", texts))

    def test_cleaning_drops_the_wrong_script_and_markup(self):
        self.assertEqual(ev.cleaned("ru", {"Открыть файл", "Open file", "<b>Сохранить</b>"}), {"Открыть файл", "Сохранить"})


if __name__ == "__main__":
    unittest.main()
