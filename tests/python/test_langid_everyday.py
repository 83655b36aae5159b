"""The language identifier's everyday sources (models/langid_everyday_sources.py):
which tag a package's locale name becomes, and what each reader takes from
files in its package's layout, written here (stdlib only)."""
import os
import pathlib
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

    def test_cleaning_drops_the_wrong_script_and_markup(self):
        self.assertEqual(ev.cleaned("ru", {"Открыть файл", "Open file", "<b>Сохранить</b>"}), {"Открыть файл", "Сохранить"})


if __name__ == "__main__":
    unittest.main()
