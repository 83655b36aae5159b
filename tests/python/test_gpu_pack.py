"""The GPU run's pack (models/residual_mt/gpu.py): what travels is chosen
by weight and fits, and unpacked there it tokenizes to the corpus' own ids."""
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # test_data_cleaning, run alone too
from residual_mt import gpu, manifest  # noqa: E402
from test_data_cleaning import REQUIRE, TRAIN_SOURCES, WORK  # noqa: E402


class SharesTest(unittest.TestCase):
    def test_everything_kept_when_it_fits(self):
        self.assertEqual(gpu.shares({"a": 100, "b": 1000}, {"a": 2, "b": 0.1}, 1100), {"a": 1.0, "b": 1.0})

    def test_the_least_weighted_source_is_cut_first(self):
        got = gpu.shares({"a": 100, "b": 1000}, {"a": 2, "b": 0.1}, 300)
        self.assertEqual(got["a"], 1.0)
        self.assertAlmostEqual(got["b"], 0.2, places=6)

    def test_shares_follow_the_weights_once_all_are_cut(self):
        got = gpu.shares({"a": 1000, "b": 1000}, {"a": 2, "b": 1}, 300)
        self.assertAlmostEqual(got["a"], 0.2, places=6)
        self.assertAlmostEqual(got["b"], 0.1, places=6)

    def test_pairs_kept_by_hash_in_proportion(self):
        pairs = [("uno %d" % i, "one %d" % i) for i in range(4000)]
        kept = [p for p in pairs if gpu.keep_pair(*p, 0.25)]
        self.assertTrue(900 <= len(kept) <= 1100, len(kept))
        self.assertEqual(kept, [p for p in pairs if gpu.keep_pair(*p, 0.25)])
        self.assertEqual(sum(gpu.keep_pair(*p, 0.0) for p in pairs), 0)
        self.assertEqual(sum(gpu.keep_pair(*p, 1.0) for p in pairs), 4000)

    def test_the_tree_leaves_room_for_the_corpus(self):
        # A device call carries the tree and the pack, 64 MiB in all: the corpus
        # needs room beside the tree (9.8 MB of xz in December 2026, with
        # half of gettext's pairs).
        self.assertLess(gpu.tree_bytes(), gpu.TREE_LIMIT - (8 << 20))

    def test_the_recipe_names_sources_of_the_corpus(self):
        # (a source it does not name weighs 1, as in train.py)
        self.assertLessEqual(set(gpu.RECIPE["weights"]), set(TRAIN_SOURCES))


class PackTest(unittest.TestCase):
    """On the built corpus (tests/python.test.js builds a small one)."""

    def setUp(self):
        if not os.path.exists(os.path.join(WORK, "train.src")):
            if REQUIRE:
                self.fail("no corpus in %s" % WORK)
            self.skipTest("corpus not built (python3 models/data/build_corpus.py)")
        self.tmp = tempfile.mkdtemp(prefix="rmt-gpu-pack-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def lines(self, path):
        return gpu.text_lines(path)

    def test_a_pack_too_large_for_the_room_keeps_shares_and_tokenizes_as_the_corpus(self):
        pack_dir = os.path.join(self.tmp, "pack")
        room = 300_000  # well under the small corpus' compressed text
        info = gpu.pack(WORK, gpu.INIT, pack_dir, limit=gpu.tree_bytes() + (1 << 20) + room)
        self.assertLessEqual(os.path.getsize(os.path.join(pack_dir, "corpus.tar.xz")), room)
        self.assertEqual(info["tar_bytes"], os.path.getsize(os.path.join(pack_dir, "corpus.tar.xz")))
        cut = {name for name, (kept, total) in info["kept"].items() if kept < total}
        self.assertTrue(cut, info["kept"])
        for name, (kept, total) in info["kept"].items():
            fraction = info["fractions"][name]
            # an epoch holds as many of a source's examples as with the whole corpus
            if fraction > 0:
                self.assertAlmostEqual(fraction * info["weights"][name], gpu.RECIPE["weights"].get(name, 1.0), places=9)
            # the hash keeps about that fraction (4 binomial standard deviations)
            self.assertLessEqual(abs(kept - fraction * total), 4 * math.sqrt(total * fraction * (1 - fraction)) + 1, name)
        _, corpus, init = gpu.unpack(pack_dir, os.path.join(self.tmp, "work"))
        for lang in ("es", "en"):
            for split in gpu.SPLITS[1:]:
                self.assertEqual(self.lines(os.path.join(corpus, "%s.%s.ids" % (split, lang))),
                                 self.lines(os.path.join(WORK, "%s.%s.ids" % (split, lang))))
        # the kept training pairs, in order, with the corpus' own ids
        es, en = self.lines(os.path.join(WORK, "train.es")), self.lines(os.path.join(WORK, "train.en"))
        src = self.lines(os.path.join(WORK, "train.src"))
        fractions = info["fractions"]
        mask = [gpu.keep_pair(a, b, fractions.get(s, 0.0)) for a, b, s in zip(es, en, src)]
        want = [ids for ids, keep in zip(self.lines(os.path.join(WORK, "train.es.ids")), mask) if keep]
        self.assertEqual(self.lines(os.path.join(corpus, "train.es.ids")), want)
        self.assertEqual(sorted(os.listdir(init)), ["config.json", "model.safetensors", "spm.model", "spm.vocab"])

    def test_a_tree_that_leaves_no_room_is_refused_clearly(self):
        with self.assertRaises(SystemExit) as refused:
            gpu.pack(WORK, gpu.INIT, os.path.join(self.tmp, "pack"), limit=gpu.tree_bytes())
        self.assertIn("nothing is left", str(refused.exception))

    def test_a_corpus_of_another_tokenizer_is_refused(self):
        other = os.path.join(self.tmp, "other")
        os.makedirs(other)
        with open(os.path.join(other, "spm.model"), "wb") as f:
            f.write(b"not the init's tokenizer")
        with self.assertRaises(SystemExit):
            gpu.pack(other, gpu.INIT, os.path.join(self.tmp, "pack"))


class RunFilesTest(unittest.TestCase):
    """What comes back (send_back) joined here (join), and the estimate's counts."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rmt-gpu-files-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def write(self, path, data):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def test_weights_sent_back_in_parts_are_joined_and_checked(self):
        model, run, out, pack = (os.path.join(self.tmp, n) for n in ("model", "run", "out", "pack"))
        weights = bytes(range(256)) * 3
        with open(os.path.join(gpu.INIT, "spm.model"), "rb") as f:
            spm_model = f.read()  # join takes it from the init the pack names
        for name, data in (("config.json", b"{}"), ("model.safetensors", weights), ("spm.model", spm_model),
                           ("training.json", b"{}"), ("run/log.jsonl", b"{}\n")):
            self.write(os.path.join(model if not name.startswith("run/") else self.tmp, name), data)
        manifest.write(model)
        self.write(os.path.join(pack, "pack.json"), json.dumps({"init": os.path.relpath(gpu.INIT, gpu.paths.ROOT)}).encode())
        part_bytes, gpu.PART_BYTES = gpu.PART_BYTES, 300
        try:
            gpu.send_back(model, run, out)
        finally:
            gpu.PART_BYTES = part_bytes
        self.assertEqual(sorted(n for n in os.listdir(out) if n.startswith("model.")),
                         ["model.safetensors.0", "model.safetensors.1", "model.safetensors.2"])
        joined = gpu.join(out, os.path.join(self.tmp, "joined"), pack)
        with open(os.path.join(joined, "model.safetensors"), "rb") as f:
            self.assertEqual(f.read(), weights)
        # a part lost or altered on the way is an error, not a model
        self.write(os.path.join(out, "model.safetensors.1"), b"x" * 300)
        with self.assertRaises(SystemExit):
            gpu.join(out, os.path.join(self.tmp, "joined2"), pack)

    def test_estimate_counts_each_direction_a_pair_gives(self):
        corpus = os.path.join(self.tmp, "corpus")
        for name, text in (("train.es.ids", "7 8 9\n7 8\n"), ("train.en.ids", "7 8\n7 8 9 10\n"),
                           ("train.src", "bible\nwordnet-bt:es-en\n")):
            self.write(os.path.join(corpus, name), text.encode())
        got = gpu.estimate(corpus)
        # bible both ways: sources 5 + 4, targets 3 + 4; the back-translation es->en only: source 4, target 5
        self.assertAlmostEqual(got["source_per_target"], 13 / 12)
        self.assertAlmostEqual(got["weighted_epoch_target_tokens"], gpu.RECIPE["weights"]["bible"] * 7
                               + gpu.RECIPE["weights"]["wordnet-bt:es-en"] * 5)


if __name__ == "__main__":
    unittest.main()
