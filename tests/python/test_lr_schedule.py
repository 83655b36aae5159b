"""models/residual_mt/schedule.py: warmup, inverse square root, and the linear cooldown."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from residual_mt.schedule import inverse_sqrt_lr, scheduled_lr  # noqa: E402


class ScheduleTest(unittest.TestCase):
    def test_warmup_then_inverse_sqrt(self):
        self.assertAlmostEqual(inverse_sqrt_lr(300, 8e-4, 600), 1e-7 + (8e-4 - 1e-7) / 2)
        self.assertAlmostEqual(inverse_sqrt_lr(600, 8e-4, 600), 8e-4)
        self.assertAlmostEqual(inverse_sqrt_lr(2400, 8e-4, 600), 4e-4)  # sqrt(600 / 2400) = 1/2

    def test_no_cooldown_is_inverse_sqrt(self):
        for step in (1, 599, 600, 15000, 40000):
            self.assertEqual(scheduled_lr(step, 8e-4, 600), inverse_sqrt_lr(step, 8e-4, 600))

    def test_cooldown_falls_linearly_to_zero(self):
        at_start = 8e-4 * math.sqrt(600 / 17500)
        self.assertAlmostEqual(scheduled_lr(17000, 8e-4, 600, 17500, 22500), inverse_sqrt_lr(17000, 8e-4, 600))
        self.assertAlmostEqual(scheduled_lr(17500, 8e-4, 600, 17500, 22500), at_start)
        self.assertAlmostEqual(scheduled_lr(20000, 8e-4, 600, 17500, 22500), at_start / 2)
        self.assertEqual(scheduled_lr(22500, 8e-4, 600, 17500, 22500), 0.0)
        self.assertEqual(scheduled_lr(23000, 8e-4, 600, 17500, 22500), 0.0)


if __name__ == "__main__":
    unittest.main()
