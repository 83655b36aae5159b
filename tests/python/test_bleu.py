"""Hand-checked cases for models/residual_mt/bleu.py (sacreBLEU default algorithm)."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt import bleu  # noqa: E402


class Tokenize13aTest(unittest.TestCase):
    def test_punctuation_split(self):
        self.assertEqual(bleu.tokenize_13a("Hello, world."), "Hello , world .")
        self.assertEqual(bleu.tokenize_13a('He said: "go!"'), 'He said : " go ! "')
        self.assertEqual(bleu.tokenize_13a("a/b (c) [d]"), "a / b ( c ) [ d ]")

    def test_numbers_keep_separators(self):
        self.assertEqual(bleu.tokenize_13a("3.14 and 1,000"), "3.14 and 1,000")
        # comma followed by a space is split; "5-3" splits the dash after a digit
        self.assertEqual(bleu.tokenize_13a("5-3, 7."), "5 - 3 , 7 .")

    def test_apostrophe_and_hyphen_in_words(self):
        self.assertEqual(bleu.tokenize_13a("don't well-known"), "don't well-known")

    def test_entities_and_spaces(self):
        self.assertEqual(bleu.tokenize_13a("a &amp; b &quot;c&quot;"), 'a & b " c "')
        self.assertEqual(bleu.tokenize_13a("  many   spaces\there "), "many spaces here")

    def test_non_ascii_untouched(self):
        self.assertEqual(bleu.tokenize_13a("¿Qué dijo? ¡Señor!"), "¿Qué dijo ? ¡Señor !")


class CorpusBleuTest(unittest.TestCase):
    def test_identical_is_100(self):
        r = bleu.corpus_bleu(["the cat sat on the mat ."], ["the cat sat on the mat ."])
        self.assertAlmostEqual(r["score"], 100.0, places=9)

    def test_hand_computed_with_exp_smoothing(self):
        # unigrams 5/6, bigrams 3/5, trigrams 1/4, 4-grams 0/3
        # exp smoothing turns 0/3 into 1/(2*3); BP = 1
        r = bleu.corpus_bleu(["the cat sat on the mat"], ["the cat is on the mat"])
        self.assertEqual(r["correct"], [5, 3, 1, 0])
        self.assertEqual(r["total"], [6, 5, 4, 3])
        expected = 100 * (5 / 6 * 3 / 5 * 1 / 4 * 1 / 6) ** 0.25
        self.assertAlmostEqual(r["score"], expected, places=9)
        self.assertAlmostEqual(r["score"], 37.9918, places=3)
        # without smoothing a zero 4-gram count makes the corpus score 0
        r0 = bleu.corpus_bleu(["the cat sat on the mat"], ["the cat is on the mat"],
                              smooth="none")
        self.assertEqual(r0["score"], 0.0)

    def test_brevity_penalty(self):
        r = bleu.corpus_bleu(["a b c d e"], ["a b c d e f g"])
        self.assertEqual(r["precisions"], [100.0] * 4)
        self.assertAlmostEqual(r["bp"], math.exp(1 - 7 / 5), places=12)
        self.assertAlmostEqual(r["score"], 67.0320, places=3)

    def test_no_penalty_when_longer(self):
        r = bleu.corpus_bleu(["a b c d e f"], ["a b c d e"])
        self.assertEqual(r["bp"], 1.0)
        # 5/6, 4/5, 3/4, 2/3 -> (1/3)^(1/4)
        self.assertAlmostEqual(r["score"], 100 * (1 / 3) ** 0.25, places=9)

    def test_counts_are_summed_over_corpus(self):
        hyps = ["the cat sat on the mat", "a b c d e"]
        refs = ["the cat is on the mat", "a b c d e"]
        r = bleu.corpus_bleu(hyps, refs)
        self.assertEqual(r["correct"], [10, 7, 4, 2])
        self.assertEqual(r["total"], [11, 9, 7, 5])
        expected = 100 * (10 / 11 * 7 / 9 * 4 / 7 * 2 / 5) ** 0.25
        self.assertAlmostEqual(r["score"], expected, places=9)

    def test_clipping(self):
        r = bleu.corpus_bleu(["the the the the"], ["the cat"])
        self.assertEqual(r["correct"][0], 1)
        self.assertEqual(r["total"][0], 4)

    def test_tokenization_applies(self):
        # "mat." must match "mat ." after 13a tokenization
        r = bleu.corpus_bleu(["the cat sat on the mat."], ["the cat sat on the mat ."])
        self.assertAlmostEqual(r["score"], 100.0, places=9)

    def test_case_sensitive_by_default(self):
        r = bleu.corpus_bleu(["The cat sat on it"], ["the cat sat on it"])
        self.assertEqual(r["correct"][0], 4)

    def test_multi_reference_closest_length_tie_takes_shorter(self):
        # hyp length 5; refs of length 4 and 6 are equally close -> 4 -> BP 1
        r = bleu.corpus_bleu(["a b c d e"], [["a b c d"], ["a b c d e f"]])
        self.assertEqual(r["ref_len"], 4)
        self.assertEqual(r["bp"], 1.0)
        # n-grams may match either reference
        self.assertEqual(r["correct"], [5, 4, 3, 2])

    def test_empty_hypothesis_corpus(self):
        r = bleu.corpus_bleu([""], ["a b"])
        self.assertEqual(r["score"], 0.0)

    def test_format(self):
        r = bleu.corpus_bleu(["a b c d e"], ["a b c d e f g"])
        self.assertTrue(bleu.format_bleu(r).startswith("BLEU = 67.03 100.0/100.0/100.0/100.0"))


if __name__ == "__main__":
    unittest.main()
