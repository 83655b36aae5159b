"""models/residual_mt/chrf.py against examples checked by hand (stdlib only)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt import chrf  # noqa: E402


class ChrfTest(unittest.TestCase):
    def test_identical_is_100(self):
        self.assertAlmostEqual(chrf.sentence_chrf("the cat", "the cat"), 100.0)
        self.assertAlmostEqual(chrf.corpus_chrf(["a b", "xyz"], ["ab", "xyz"]), 100.0)  # spaces ignored

    def test_hand_checked_two_characters(self):
        # orders 1 and 2 only have n-grams: order 1 p = r = 1/2, order 2 p = r = 0;
        # averages p = r = 1/4, F2 = 1/4
        self.assertAlmostEqual(chrf.sentence_chrf("ab", "ac"), 25.0)

    def test_recall_weighs_more(self):
        # "a" vs "ab": order 1 p = 1, r = 1/2 (order 2: no hypothesis n-gram, not counted)
        # F2 = 5 * 1 * 0.5 / (4 * 1 + 0.5) = 2.5 / 4.5
        self.assertAlmostEqual(chrf.sentence_chrf("a", "ab"), 100 * 2.5 / 4.5)
        # the other way round: p = 1/2, r = 1: F2 = 5 * 0.5 / (2 + 1)
        self.assertAlmostEqual(chrf.sentence_chrf("ab", "a"), 100 * 2.5 / 3.0)

    def test_counts_clipped_and_summed_over_the_corpus(self):
        self.assertEqual(chrf.sentence_stats("aaa", "a")[:3], [3, 1, 1])
        # corpus: order 1 hyp 1 + 2, ref 2 + 1, match 1 + 1; order 2: hyp 0 + 1, ref 1 + 0
        # -> order 2 has n-grams on both sides summed (1 and 1) but no match
        stats = [0] * 18
        for h, r in (("a", "ab"), ("ab", "a")):
            stats = [x + y for x, y in zip(stats, chrf.sentence_stats(h, r))]
        self.assertEqual(stats[:6], [3, 3, 2, 1, 1, 0])
        p = r = (2 / 3 + 0) / 2
        self.assertAlmostEqual(chrf.corpus_chrf(["a", "ab"], ["ab", "a"]), 100 * 5 * p * r / (4 * p + r))

    def test_nothing_in_common(self):
        self.assertEqual(chrf.sentence_chrf("xyz", "abc"), 0.0)
        self.assertEqual(chrf.sentence_chrf("", "abc"), 0.0)


class PairedBootstrapTest(unittest.TestCase):
    REFS = ["the cat sat", "on the mat", "a dog barked", "it rained"]

    def test_a_system_against_itself_never_differs(self):
        a, b, deltas = chrf.paired_bootstrap(self.REFS, list(self.REFS), self.REFS, samples=50)
        self.assertEqual((a, b), (100.0, 100.0))
        self.assertEqual(deltas, [0.0] * 50)

    def test_one_sentence_resamples_to_itself(self):
        # every resample of a one-sentence corpus is that sentence: each B - A is the sentences' own difference
        a, b, deltas = chrf.paired_bootstrap(["the cat"], ["the cap sat"], ["the cat sat"], samples=20)
        expected = chrf.sentence_chrf("the cap sat", "the cat sat") - chrf.sentence_chrf("the cat", "the cat sat")
        self.assertEqual((a, b), (chrf.sentence_chrf("the cat", "the cat sat"),
                                  chrf.sentence_chrf("the cap sat", "the cat sat")))
        for d in deltas:
            self.assertAlmostEqual(d, expected)

    def test_better_on_every_sentence_is_ahead_in_every_resample(self):
        worse = ["xx", "yy", "zz", "ww"]
        a, b, deltas = chrf.paired_bootstrap(worse, self.REFS, self.REFS, samples=200, seed=3)
        self.assertEqual(b, 100.0)
        self.assertEqual(a, chrf.corpus_chrf(worse, self.REFS))
        self.assertTrue(all(d > 0 for d in deltas))
        self.assertEqual(deltas, sorted(deltas))
        self.assertEqual(chrf.paired_bootstrap(worse, self.REFS, self.REFS, samples=200, seed=3)[2], deltas)

    def test_lines_must_pair_up(self):
        with self.assertRaises(ValueError):
            chrf.paired_bootstrap(["a"], ["a", "b"], ["a", "b"])


if __name__ == "__main__":
    unittest.main()
