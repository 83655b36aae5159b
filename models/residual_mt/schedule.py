"""The learning-rate schedule of models/train.py (stdlib only, so tests/python can
check it without torch)."""

import math


def inverse_sqrt_lr(step, peak, warmup, init=1e-7):
    if step < warmup:
        return init + (peak - init) * step / warmup
    return peak * math.sqrt(warmup / step)


def scheduled_lr(step, peak, warmup, decay_start=0, decay_end=0):
    """Inverse square root; with decay_end > decay_start, the rate then falls
    linearly from its value at decay_start to 0 at decay_end (a cooldown: the
    last updates of a run at a small rate leave better weights to average)."""
    lr = inverse_sqrt_lr(min(step, decay_start) if decay_end > decay_start else step, peak, warmup)
    if decay_end > decay_start and step > decay_start:
        lr *= max(0.0, (decay_end - step) / (decay_end - decay_start))
    return lr
