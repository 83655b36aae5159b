"""The language identifier's fortune source (models/langid_build_data.py):
how a fortune file becomes texts, which language each file is, and the
units held out; on small files written here (stdlib only)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt.langid import build_data  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class FortuneTextsTest(unittest.TestCase):
    def texts(self, content):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "f"), content)
            return build_data.fortune_texts(os.path.join(d, "f"))

    def test_attribution_and_colour_codes_out(self):
        got = self.texts("Cada loco con su tema.\n\t\t-- Refrán\n%\n\x1b[32m《静夜思》\x1b[m\n床前明月光\n%\n")
        self.assertEqual(got, [["Cada loco con su tema."], ["《静夜思》 床前明月光"]])

    def test_verse_is_kept_as_one_text(self):
        self.assertEqual(self.texts("Roses are red,\n    violets are blue.\n%\n"),
                         [["Roses are red, violets are blue."]])

    def test_a_long_text_is_cut_into_its_sentences(self):
        long = " ".join(["Una frase corta."] * 30)  # 539 characters
        got = self.texts(long + "\n%\n")
        self.assertEqual(got, [["Una frase corta."] * 30])
        one_word = "a" * 401
        self.assertEqual(self.texts(one_word + "\n%\n"), [[]])  # no sentence of at most 400


class FilterTest(unittest.TestCase):
    def test_mostly_letters(self):
        self.assertTrue(build_data.mostly_letters("Quien mucho abarca, poco aprieta."))
        self.assertFalse(build_data.mostly_letters("(o_o) /|\\ _/ \\_ ==>"))
        self.assertFalse(build_data.mostly_letters("   "))


class LanguagesAndUnitsTest(unittest.TestCase):
    def test_the_folder_that_links_to_a_file_names_its_language(self):
        with tempfile.TemporaryDirectory() as base:
            write(os.path.join(base, "cs", "klasik-cz"), "x")
            write(os.path.join(base, "cs", "klasik-sk"), "x")
            for folder, name in (("cz", "klasik-cz"), ("cz", "klasik-sk"), ("sk", "klasik-sk")):
                os.makedirs(os.path.join(base, folder), exist_ok=True)
                os.symlink(os.path.join("..", "cs", name), os.path.join(base, folder, name))
            langs = build_data.fortune_languages(base)
            self.assertEqual(langs["cs/klasik-cz"], "cs")  # cz/ is cs
            self.assertEqual(langs["cs/klasik-sk"], "sk")

    def fortunes_tree(self, root, n_files, n_fortunes):
        base = os.path.join(root, "usr", "share", "games", "fortunes")
        for i in range(n_files):
            write(os.path.join(base, "file%d" % i),
                  "".join("Texto número %d de este archivo.\n%%\n" % k for k in range(n_fortunes)))
        write(os.path.join(base, "file0.dat"), "index")
        os.symlink("file0", os.path.join(base, "file0.u8"))

    def test_units_are_files_or_blocks_of_fortunes(self):
        with tempfile.TemporaryDirectory() as root:
            self.fortunes_tree(root, 5, 3)
            units = build_data.fortune_units("fortunes-es", root)
            self.assertEqual(sorted(units), ["fortunes:fortunes-es/file%d" % i for i in range(5)])  # no .dat, no link
            self.assertEqual(len(units["fortunes:fortunes-es/file0"]["es"]), 3)
        with tempfile.TemporaryDirectory() as root:
            self.fortunes_tree(root, 1, 120)  # one file: blocks of FORTUNE_BLOCK
            units = build_data.fortune_units("fortunes-es", root)
            self.assertEqual(sorted(units), ["fortunes:fortunes-es/file0#%d" % k for k in range(3)])
            self.assertEqual([len(units["fortunes:fortunes-es/file0#%d" % k]["es"]) for k in range(3)], [50, 50, 20])


if __name__ == "__main__":
    unittest.main()
