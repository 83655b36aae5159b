"""Cleaning, parsing, splitting and alignment rules of models/residual_mt/data (stdlib only)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt.data import align, books, clean  # noqa: E402


class MarkupTest(unittest.TestCase):
    def test_note_between_words_does_not_glue(self):
        raw = ('<w>God</w><note placement="foot">1:1 The Hebrew word rendered “God” is '
               '“אֱלֹהִ֑ים” (Elohim).</note><w>created</w> <w>the</w> <w>heavens</w>.')
        self.assertEqual(clean.strip_markup(raw), "God created the heavens.")

    def test_note_before_punctuation_leaves_no_space(self):
        raw = 'fasting.”<note placement="foot">17:21 NU omits verse 21.</note> <milestone type="line"/>'
        self.assertEqual(clean.strip_markup(raw), "fasting.”")
        raw = 'the land<note placement="foot">x</note>, and'
        self.assertEqual(clean.strip_markup(raw), "the land, and")

    def test_strongs_numbers_do_not_leak(self):
        raw = '<w>no</w> <w>sale</w> <w lemma="G3361">sino</w> <w savlm="strong:H3117">día</w>.'
        self.assertEqual(clean.strip_markup(raw), "no sale sino día.")

    def test_titles_and_milestones_dropped(self):
        raw = ('<title canonical="true" type="psalm">A praise psalm.<note placement="foot" '
               'swordFootnote="1"></note></title> <lg sID="g1"/> <l level="1" sID="g2"/>Amen.'
               '<milestone type="line"/>')
        self.assertEqual(clean.strip_markup(raw), "Amen.")

    def test_spaces_normalised(self):
        self.assertEqual(clean.strip_markup("  a \u00a0 b\t c  "), "a b c")


class ParseTest(unittest.TestCase):
    DUMP = "\n".join([
        "Psalms 2:12: <w>Blessed</w> are all those who take refuge in him. <milestone type=\"line\"/>",
        "A Psalm by David.  Psalms 3:1: Yahweh, how my adversaries have increased!",
        "A Psalm by David.  Psalms 3:2: Many there are who say of my soul. Selah.",
        "ALEPH  Psalms 119:1: Blessed are those whose ways are blameless.",
        "ALEPH  Psalms 119:2: Blessed are those who keep his statutes.",
        "BETH  Psalms 119:9: How can a young man keep his way pure?",
        "BETH  Proverbs 1:1: The proverbs of Solomon.",
        "I John 1:1: That which was from the beginning.",
        "John 1:1: In the beginning was the Word.",
        "Revelation of John 22:21: Amen. The following words used in the World English Bible (WEB) are not common.",
        "(engWEB2015eb)",
    ])

    def test_references_and_book_names(self):
        refs = [(b, c, v) for b, c, v, _, _ in clean.parse_osis(self.DUMP)]
        self.assertEqual(refs[0], ("Psalms", 2, 12))
        self.assertIn(("I John", 1, 1), refs)
        self.assertIn(("John", 1, 1), refs)
        self.assertEqual(refs[-1], ("Revelation of John", 22, 21))
        self.assertEqual(len(refs), 10)  # the module-name line is not a verse

    def test_psalm_titles_kept_once(self):
        v = {(b, c, s): t for b, c, s, t in clean.clean_verses(self.DUMP)}
        self.assertEqual(v[("Psalms", 3, 1)], "A Psalm by David. Yahweh, how my adversaries have increased!")
        self.assertEqual(v[("Psalms", 3, 2)], "Many there are who say of my soul. Selah.")
        self.assertEqual(v[("Psalms", 119, 1)], "ALEPH Blessed are those whose ways are blameless.")
        self.assertEqual(v[("Psalms", 119, 2)], "Blessed are those who keep his statutes.")
        self.assertEqual(v[("Psalms", 119, 9)], "BETH How can a young man keep his way pure?")
        # a title repeated into a later book is dropped
        self.assertEqual(v[("Proverbs", 1, 1)], "The proverbs of Solomon.")

    def test_glossary_cut(self):
        v = {(b, c, s): t for b, c, s, t in clean.clean_verses(self.DUMP)}
        self.assertEqual(v[("Revelation of John", 22, 21)], "Amen.")


class SplitTest(unittest.TestCase):
    def test_splits(self):
        self.assertEqual(books.split_of("Ruth"), "valid")
        for b in ("Joel", "Jonah", "Titus", "Philemon"):
            self.assertEqual(books.split_of(b), "test")
        self.assertEqual(books.split_of("Genesis"), "train")
        self.assertEqual(len(books.CANON), 66)

    def test_reserved_never_used(self):
        for b in ("Lamentations", "Obadiah", "Nahum", "Habakkuk", "Zephaniah", "Haggai",
                  "II John", "III John", "Jude"):
            self.assertIn(b, books.CANON)
            self.assertIsNone(books.split_of(b))
        self.assertIsNone(books.split_of("Tobit"))  # apocrypha are not canonical here


class AlignTest(unittest.TestCase):
    def test_identity(self):
        a = ["x" * n for n in (40, 90, 60, 120, 30)]
        b = ["y" * n for n in (42, 95, 58, 125, 33)]
        self.assertEqual(align.align(a, b), [((i,), (i,)) for i in range(5)])

    def test_shift_across_chapter_boundary(self):
        # b numbers verse 2 of a as its own verse 1 of the next chapter
        # (like Jonah 1:17 = 2:1): content, not reference, decides.
        a = ["Jonah went down to Joppa " + "a" * 40, "Yahweh prepared a huge fish " + "b" * 120,
             "Then Jonah prayed " + "c" * 30, "He said " + "d" * 200]
        b = ["Jonás descendió á Joppe " + "a" * 42, "Jehová había prevenido un gran pez " + "b" * 118,
             "Y oró Jonás " + "c" * 33, "Y dijo " + "d" * 205]
        a_refs = ["1:3", "1:17", "2:1", "2:2"]
        b_refs = ["1:3", "2:1", "2:2", "2:3"]
        beads = align.align(a, b, a_refs=a_refs, b_refs=b_refs)
        self.assertEqual(beads, [((0,), (0,)), ((1,), (1,)), ((2,), (2,)), ((3,), (3,))])

    def test_merge_two_into_one(self):
        a = ["a" * 60, "b" * 50, "c" * 55, "d" * 70]
        b = ["a" * 62, "b" * 52 + " " + "c" * 56, "d" * 69]
        beads = align.align(a, b)
        self.assertEqual(beads, [((0,), (0,)), ((1, 2), (1,)), ((3,), (2,))])

    def test_missing_verse_dropped(self):
        # a verse one text has and the other lacks (like Acts 8:37)
        a = ["a" * 60, "b" * 200, "c" * 55, "d" * 70]
        b = ["a" * 61, "c" * 57, "d" * 68]
        beads = align.align(a, b, ratio=1.0)  # the build passes the corpus-wide ratio
        self.assertIn(((1,), ()), beads)
        self.assertIn(((2,), (1,)), beads)

    def test_name_keys(self):
        self.assertEqual(align.name_keys("Y dijo Jehová á Absalom en 1909"), {"absa", "1909"})




# The corpus checked by BuiltCorpusTest: RMT_CORPUS (tests/python.test.js
# builds a small one there), else the full build in models/data/work.
WORK = os.environ.get("RMT_CORPUS") or os.path.join(os.path.dirname(__file__), "..", "..", "models", "data", "work")
REQUIRE = os.environ.get("RMT_REQUIRE_CORPUS") == "1"


# the train.src names of every source (back-translated ones by direction)
TRAIN_SOURCES = ("bible", "gettext", "descriptions", "freedict", "gnome-help", "manuals", "tuxpaint", "gcompris",
                 "minetest", "cldr", "kvtml", "openttd", "asterisk:es-en", "drascula:es-en", "gtypist-bt:es-en",
                 "wordnet-bt:es-en", "fortunes-bt:es-en", "fortunes-es-bt:en-es", "austen-bt:es-en")

class BuiltCorpusTest(unittest.TestCase):
    """Checks on the built corpus; skipped when none is built, unless
    RMT_REQUIRE_CORPUS=1 (as under npm test), where a missing corpus fails."""

    def setUp(self):
        if not os.path.exists(os.path.join(WORK, "train.refs.tsv")):
            if REQUIRE:
                self.fail("no corpus in %s (python3 models/data/build_corpus.py)" % WORK)
            self.skipTest("corpus not built (python3 models/data/build_corpus.py)")

    def books_in(self, split):
        with open(os.path.join(WORK, split + ".refs.tsv"), encoding="utf-8") as f:
            return {line.split("\t")[0] for line in f}

    def lines(self, name):
        with open(os.path.join(WORK, name), encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f]

    def test_splits_hold_the_right_books(self):
        self.assertEqual(self.books_in("valid"), set(books.VALID))
        self.assertEqual(self.books_in("test"), set(books.TEST))
        train = self.books_in("train")
        self.assertFalse(train & (set(books.VALID) | set(books.TEST) | set(books.RESERVED)))
        self.assertEqual(len(train), 66 - 1 - 4 - 9)

    def test_reserved_books_absent_from_every_file(self):
        for name in sorted(os.listdir(WORK)):
            if name.endswith(".refs.tsv"):
                self.assertFalse(self.books_in(name[:-len(".refs.tsv")]) & set(books.RESERVED), name)
            self.assertFalse(name.endswith(".osis"), "raw dumps hold the reserved books: " + name)

    def test_parallel_files_line_up(self):
        for split in ("train", "valid", "test", "modern-valid", "modern-test", "everyday-dev", "everyday-test"):
            counts = {}
            for suffix in (".es", ".en", ".src", ".es.ids", ".en.ids"):
                path = os.path.join(WORK, split + suffix)
                self.assertTrue(os.path.exists(path), path)
                counts[suffix] = len(self.lines(split + suffix))
            self.assertEqual(len(set(counts.values())), 1, (split, counts))
        self.assertEqual(len(self.lines("train.refs.tsv")),
                         sum(1 for s in self.lines("train.src") if s == "bible"))

    def test_every_source_is_in_training(self):
        self.assertEqual(set(self.lines("train.src")),
                         set(TRAIN_SOURCES))

    def test_held_out_text_never_trained_on(self):
        fold = lambda t: " ".join(t.casefold().split())  # noqa: E731
        held = set()
        for split in ("valid", "test", "modern-valid", "modern-test", "everyday-dev", "everyday-test"):
            for lang in ("es", "en"):
                held.update(fold(t) for t in self.lines("%s.%s" % (split, lang)))
        for lang in ("es", "en"):
            leaked = [t for t in self.lines("train." + lang) if fold(t) in held]
            self.assertEqual(leaked, [], lang)

    def test_no_duplicate_training_pairs(self):
        pairs = list(zip(self.lines("train.en"), self.lines("train.es")))
        self.assertEqual(len(pairs), len(set(pairs)))

    def test_stats_name_the_held_out_packages(self):
        import json
        with open(os.path.join(WORK, "stats.json"), encoding="utf-8") as f:
            stats = json.load(f)
        self.assertEqual(set(stats["held_out_packages"]), {"modern-valid", "modern-test"})
        for source in TRAIN_SOURCES:
            self.assertIn("licence", stats["sources"][source])

    def test_the_tokenizer_it_encoded_with_is_in_the_corpus(self):
        # export.py copies the corpus' spm.model into the model it writes
        import hashlib
        import json
        with open(os.path.join(WORK, "spm.model"), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(WORK, "stats.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["spm_sha256"], digest)
        self.assertTrue(os.path.getsize(os.path.join(WORK, "spm.vocab")) > 0)

    def test_everyday_sets_written_whole(self):
        for split, name in (("everyday-dev", "dev"), ("everyday-test", "test")):
            for lang in ("es", "en"):
                with open(os.path.join(os.path.dirname(__file__), "..", "..", "models", "everyday",
                                       "%s.%s" % (name, lang)), encoding="utf-8") as f:
                    ours = [l.strip() for l in f if l.strip()]
                self.assertEqual(self.lines("%s.%s" % (split, lang)), ours)
                self.assertGreaterEqual(len(ours), 300)

    def test_back_translations_keep_the_human_side(self):
        """The human side of each back-translated pair is a sentence of its
        monolingual source (Apertium's side is only ever a source)."""
        from residual_mt.data import fortunes
        human_es = set(fortunes.fortune_sentences(fortunes.spanish_files()))
        for en, es, src in zip(self.lines("train.en"), self.lines("train.es"), self.lines("train.src")):
            if src == "fortunes-es-bt:en-es":
                self.assertIn(es, human_es)


if __name__ == "__main__":
    unittest.main()
