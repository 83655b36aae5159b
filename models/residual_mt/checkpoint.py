"""A training run's folder: checkpoint_last.pt (model, optimiser, config
and the state a resumed run goes on from) and the weights_STEP.pt snapshots
that export averages.  The format is the one runs have always written, so
any run can be resumed or exported by later code."""
import glob
import os
import re

import torch

from . import reference as R

LAST = "checkpoint_last.pt"


def save(run, model, opt, state):
    """checkpoint_last.pt, replaced atomically (a kill mid-write loses nothing)."""
    path = os.path.join(run, LAST)
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state,
                "cfg": model.cfg.to_dict()}, tmp)
    os.replace(tmp, path)


def save_snapshot(run, model, step):
    torch.save(model.state_dict(), os.path.join(run, "weights_%06d.pt" % step))


def load_last(run):
    """checkpoint_last.pt's dict, or None for a new run."""
    path = os.path.join(run, LAST)
    return torch.load(path, map_location="cpu") if os.path.exists(path) else None


def config_and_state(run):
    ck = load_last(run)
    if ck is None:
        raise SystemExit("no %s in %s" % (LAST, run))
    return R.ModelConfig.from_dict(ck["cfg"]), ck["state"]


def snapshot_step(path):
    m = re.search(r"weights_(\d+)\.pt$", path)
    return int(m.group(1)) if m else -1


def snapshots(run, newest):
    """The newest `newest` weight snapshots, oldest first."""
    return sorted(glob.glob(os.path.join(run, "weights_*.pt")), key=snapshot_step)[-newest:]


def average(paths):
    """The plain mean of state dicts (fairseq's average_checkpoints.py),
    summed in float64; a full checkpoint counts by its "model"."""
    avg = None
    for p in paths:
        sd = torch.load(p, map_location="cpu")
        if "model" in sd:  # a full checkpoint rather than a weights-only snapshot
            sd = sd["model"]
        if avg is None:
            avg = {k: v.double().clone() for k, v in sd.items()}
        else:
            for k in avg:
                avg[k] += sd[k].double()
    return {k: (v / len(paths)).float() for k, v in avg.items()}


def mix(state, other, weight):
    """(1 - weight) * other + weight * state, tensor by tensor in float64: a
    fine-tuned run's weights mixed back with those it started from. Both
    must hold the same tensors of the same shapes."""
    if set(state) != set(other):
        raise SystemExit("cannot mix: the two models hold different tensors (%s)" % sorted(set(state) ^ set(other))[:5])
    out = {}
    for k, v in state.items():
        if v.shape != other[k].shape:
            raise SystemExit("cannot mix %s: shapes %s and %s" % (k, tuple(v.shape), tuple(other[k].shape)))
        out[k] = ((1 - weight) * other[k].double() + weight * v.double()).to(v.dtype)
    return out
