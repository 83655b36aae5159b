"""The one training loop: train.py's runs, compare_styles.py's equal-budget
runs and analysis.py's short ones all train through run().

Each update follows fairseq's transformer recipe: label-smoothed
cross-entropy summed over the target tokens and divided by their number,
the learning rate of schedule.scheduled_lr, gradients clipped to a norm,
one optimiser step."""
import math
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .corpus import collate
from .schedule import scheduled_lr


@dataclass
class Options:
    lr: float = 1e-3  # the peak, reached at the end of the warm-up
    warmup: int = 1000
    decay_start: int = 0  # with decay_end > decay_start: the linear cooldown
    decay_end: int = 0
    label_smoothing: float = 0.1
    clip_norm: float = 1.0  # 0: no clipping
    bf16: bool = False  # bf16 autocast of the forward pass
    skip_nonfinite: bool = False  # a non-finite loss is recorded but not applied (divergence runs)


@dataclass
class Update:
    step: int
    lr: float
    loss: float  # label-smoothed, summed over the batch's target tokens
    nll: float
    tokens: int
    seconds: float  # batching, forward, backward and the step


def label_smoothed_nll(logits, target, eps, pad_id):
    """fairseq's label_smoothed_nll_loss (sum over non-pad tokens)."""
    lprobs = F.log_softmax(logits.float(), dim=-1)
    nll = -lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    smooth = -lprobs.sum(-1)
    mask = target.ne(pad_id)
    nll = nll[mask].sum()
    smooth = smooth[mask].sum()
    eps_i = eps / (lprobs.size(-1) - 1)
    loss = (1.0 - eps - eps_i) * nll + eps_i * smooth
    return loss, nll, int(mask.sum())


def autocast(device, enabled):
    if not enabled:
        return torch.autocast(device_type="cpu", enabled=False)
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def run(model, opt, examples, batches, options, first_step=0, after_update=None):
    """Trains on batches (lists of indices into examples), one update each,
    numbered from first_step + 1; after_update(Update) is called after each
    and stops the loop by returning True.  Returns the last update's number."""
    device = next(model.parameters()).device
    step = first_step
    for idx in batches:
        t0 = time.time()
        step += 1
        src, prev, target = collate(examples, idx, model.cfg, device)
        model.train()
        lr = scheduled_lr(step, options.lr, options.warmup, options.decay_start, options.decay_end)
        for g in opt.param_groups:
            g["lr"] = lr
        with autocast(device, options.bf16):
            logits = model(src, prev)
        loss, nll, ntok = label_smoothed_nll(logits, target, options.label_smoothing, model.cfg.pad_id)
        if not options.skip_nonfinite or math.isfinite(float(loss)):
            opt.zero_grad(set_to_none=True)
            (loss / ntok).backward()
            if options.clip_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), options.clip_norm)
            opt.step()
        u = Update(step, lr, float(loss), float(nll), ntok, time.time() - t0)
        if after_update is not None and after_update(u):
            break
    return step
