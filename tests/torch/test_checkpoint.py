"""models/residual_mt/checkpoint.py: which snapshots export averages, their
mean, and the mix of a fine-tuned run with its start (export.py --average,
--mix-with).  Needs torch; tests/checkpoint.test.js runs it.  Expected values
are computed here from the tensors' numbers in plain Python floats."""
import os
import sys
import tempfile
import unittest

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt import checkpoint  # noqa: E402


def state(seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return {"a.weight": torch.randn(3, 4, generator=g).to(dtype), "b.bias": torch.randn(5, generator=g).to(dtype)}


def flat(sd):
    return {k: [float(x) for x in v.flatten().tolist()] for k, v in sd.items()}


class Snapshots(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.run = self.dir.name
        # past step 999,999 the name grows a digit: name order and step order differ
        for step, seed in [(9, 1), (10, 2), (999999, 3), (1000000, 4)]:
            torch.save(state(seed), os.path.join(self.run, "weights_%06d.pt" % step))

    def tearDown(self):
        self.dir.cleanup()

    def test_the_newest_by_step_oldest_first(self):
        names = [os.path.basename(p) for p in checkpoint.snapshots(self.run, 3)]
        self.assertEqual(names, ["weights_000010.pt", "weights_999999.pt", "weights_1000000.pt"])
        self.assertEqual(len(checkpoint.snapshots(self.run, 10)), 4)

    def test_average_is_the_mean_of_each_number(self):
        avg = checkpoint.average(checkpoint.snapshots(self.run, 3))
        parts = [flat(state(seed)) for seed in (2, 3, 4)]
        for k, values in flat(avg).items():
            self.assertEqual(avg[k].dtype, torch.float32)
            for i, v in enumerate(values):
                self.assertAlmostEqual(v, sum(p[k][i] for p in parts) / 3, places=6)

    def test_a_full_checkpoint_counts_by_its_model(self):
        full = os.path.join(self.run, "checkpoint_last.pt")
        torch.save({"model": state(7), "opt": {}, "state": {}, "cfg": {}}, full)
        avg = checkpoint.average([full, os.path.join(self.run, "weights_000009.pt")])
        a, b = flat(state(7)), flat(state(1))
        for k, values in flat(avg).items():
            for i, v in enumerate(values):
                self.assertAlmostEqual(v, (a[k][i] + b[k][i]) / 2, places=6)


class Mix(unittest.TestCase):
    def test_the_runs_weight_of_the_run_the_rest_of_its_start(self):
        run, start = state(11), state(12)
        mixed = checkpoint.mix(run, start, 0.25)
        r, s = flat(run), flat(start)
        for k, values in flat(mixed).items():
            for i, v in enumerate(values):
                self.assertAlmostEqual(v, 0.75 * s[k][i] + 0.25 * r[k][i], places=6)
        self.assertEqual(flat(checkpoint.mix(run, start, 1.0)), r)
        self.assertEqual(flat(checkpoint.mix(run, start, 0.0)), s)

    def test_keeps_the_runs_dtype(self):
        mixed = checkpoint.mix(state(11, torch.float16), state(12), 0.5)
        self.assertEqual({v.dtype for v in mixed.values()}, {torch.float16})

    def test_refuses_other_tensors_or_shapes(self):
        other = state(12)
        other["c.extra"] = torch.zeros(2)
        with self.assertRaisesRegex(SystemExit, "different tensors.*c.extra"):
            checkpoint.mix(state(11), other, 0.5)
        other = state(12)
        other["b.bias"] = torch.zeros(6)
        with self.assertRaisesRegex(SystemExit, r"cannot mix b.bias: shapes \(5,\) and \(6,\)"):
            checkpoint.mix(state(11), other, 0.5)


if __name__ == "__main__":
    unittest.main()
