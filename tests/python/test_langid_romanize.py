"""Romanized Greek, Hindi and Japanese for the language identifier
(models/langid_romanize.py), checked on sentences written here by hand, each
with the spelling a person would type (Japanese through Debian's kakasi,
unpacked by build_data.kakasi_root into a temporary folder)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt.langid import build_data  # noqa: E402
from residual_mt.langid import romanize  # noqa: E402


class GreeklishTest(unittest.TestCase):
    CASES = [  # Greek, then ELOT 743, phonetic and visual spellings
        ("Καλημέρα, τι κάνεις σήμερα;", "Kalimera, ti kaneis simera?", "Kalimera, ti kanis simera?",
         "Kalhmera, ti kaneis shmera?"),
        ("Θα τα πούμε αύριο το βράδυ.", "Tha ta poume avrio to vrady.", "Tha ta poume avrio to vradi.",
         "8a ta poume avrio to vradu."),
        ("Ευχαριστώ πολύ για το δώρο!", "Efcharisto poly gia to doro!", "Efharisto poli gia to doro!",
         "Efxaristw polu gia to dwro!"),
        ("Μπορείς να έρθεις στις έξι;", "Boreis na ertheis stis exi?", "Mporis na erthis stis eksi?",
         "Mporeis na er8eis stis e3i?"),
    ]

    def test_each_scheme_on_hand_written_sentences(self):
        for greek, *want in self.CASES:
            self.assertEqual([romanize.greeklish(greek, k) for k in range(3)], want, greek)

    def test_the_scheme_is_chosen_by_the_text(self):
        text = "Πού είναι ο σταθμός;"
        self.assertEqual(romanize.greeklish(text), romanize.greeklish(text))
        self.assertIn(romanize.greeklish(text), [romanize.greeklish(text, k) for k in range(3)])

    def test_other_text_passes_through(self):
        self.assertEqual(romanize.greeklish("GNOME 3.4 (x86)", 0), "GNOME 3.4 (x86)")


class HinglishTest(unittest.TestCase):
    CASES = [  # Devanagari, then short vowels, doubled long vowels, chat
        ("आप कैसे हैं?", "ap kaise hain?", "aap kaise hain?", "aap kaise hain?"),
        ("मेरा नाम राहुल है।", "mera nam rahul hai.", "mera naam raahul hai.", "mera naam raahul hai."),
        ("क्या कर रहे हो?", "kya kar rahe ho?", "kya kar rahe ho?", "kya kr rhe ho?"),
        ("ठीक है, कल मिलते हैं।", "thik hai, kal milte hain.", "theek hai, kal milte hain.", "theek hai, kl milte hain."),
        ("मुझे समझ नहीं आया", "mujhe samajh nahin aya", "mujhe samajh nahin aaya", "mujhe smjh nhin aaya"),
        ("फ़ाइल नहीं मिली", "fail nahin mili", "faail nahin mili", "faail nhin mili"),
    ]

    def test_each_scheme_on_hand_written_sentences(self):
        for hindi, *want in self.CASES:
            self.assertEqual([romanize.hinglish(hindi, k) for k in range(3)], want, hindi)

    def test_the_word_final_and_medial_schwa(self):
        self.assertEqual(romanize.hinglish("कमरा समझना", 0), "kamra samajhna")
        self.assertEqual(romanize.hinglish("ज्ञान", 1), "gyaan")


class RomajiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.romaji = romanize.Romaji(build_data.kakasi_root(cls.tmp.name))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_hand_written_sentences(self):
        cases = {
            "これは例文です。": "kore wa reibun desu.",
            "すみません、駅はどこですか？": "sumimasen, eki wa doko desu ka?",
            "こんにちは、元気ですか？": "konnichiwa, genki desuka?",
            "私は学生です。": "watashi wa gakusei desu.",
        }
        self.assertEqual(self.romaji.romanize(list(cases)), list(cases.values()))

    def test_long_vowels_written_out_or_not(self):
        got = self.romaji.romanize(["東京に行きます"])[0]
        self.assertIn(got, ["toukyou ni ikimasu", "tokyo ni ikimasu"])

    def test_a_line_kakasi_garbles_comes_back_empty(self):
        # kakasi 2.3.6 writes NULs (then its buffers' bytes) for an em dash
        got = self.romaji.romanize(["猫です", "待って — 誰ですか？", "犬です"])
        self.assertEqual(got, ["neko desu", "", "inu desu"])

    def test_many_lines_in_one_call_keep_their_order(self):
        lines = ["猫です", "犬です", "鳥です"] * 50
        self.assertEqual(self.romaji.romanize(lines), ["neko desu", "inu desu", "tori desu"] * 50)


if __name__ == "__main__":
    unittest.main()
