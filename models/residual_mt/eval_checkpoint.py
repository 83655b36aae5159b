#!/usr/bin/env python3
"""Scores a training checkpoint as the model card's tables do, to follow a
run's progress: the everyday dev set (chrF2, BLEU, sentences at chrF >= 70;
the model beside Apertium, models/everyday.py), the Bible test books (Joel,
Jonah, Titus, Philemon) and the modern test set (held-out packages), corpus
BLEU by models/bleu.py, both directions, with the shipped model's figures
(float16 reference, the model card's "Quality" table) beside them.

    /usr/bin/python3 models/eval_checkpoint.py --run models/runs/everyday \
        --data /work/scratch/corpus [--average 1] [--beam 5] [--splits test,modern-test] \
        [--everyday dev] [--threads 1] [--json OUT]

The newest weights_*.pt snapshot of the run is scored (--average N: the mean
of the newest N, as export.py averages), in float32 on the reference, with
the run's configuration (checkpoint_last.pt); --weights scores one file,
--model-dir a model directory (the shipped one, for the baseline).
--limit N scores the first N sentences per direction only (with --beam 1
--limit 60 --splits valid,modern-valid,everyday-dev: train.py's valid curve).
Everything runs at the priority and threads given, so it can share the
machine with the training it measures.
"""
import argparse
import glob
import json
import os
import re
import time

import torch

from . import everyday, paths
from . import reference as R
from . import train as T
from .export import SpmDecoder

# the shipped model (0.3.0 weights, float16, reference without shortlist),
# beam 5 / greedy, from the model card's "Quality" table
SHIPPED = {"test": {"beam5": {"es-en": 26.96, "en-es": 23.55}, "greedy": {"es-en": 25.57, "en-es": 21.75}},
           "modern-test": {"beam5": {"es-en": 32.44, "en-es": 33.23}, "greedy": {"es-en": 31.80, "en-es": 31.82}},
           "valid": {"beam5": {"es-en": 26.47, "en-es": 23.90}, "greedy": {"es-en": 24.25, "en-es": 21.63}},
           "modern-valid": {"beam5": {"es-en": 31.54, "en-es": 33.10}, "greedy": {"es-en": 30.91, "en-es": 32.03}}}


def snapshot_step(path):
    m = re.search(r"weights_(\d+)\.pt$", path)
    return int(m.group(1)) if m else -1


def load_run(run, average=1, weights=None):
    """(model, [snapshot paths], state of checkpoint_last.pt)."""
    ck = torch.load(os.path.join(run, "checkpoint_last.pt"), map_location="cpu")
    cfg = R.ModelConfig.from_dict(ck["cfg"])
    state = ck["state"]
    if weights:
        snaps = [weights]
    else:
        snaps = sorted(glob.glob(os.path.join(run, "weights_*.pt")), key=snapshot_step)[-average:]
    if not snaps:
        snaps = [os.path.join(run, "checkpoint_last.pt")]
    avg = None
    for p in snaps:
        sd = torch.load(p, map_location="cpu")
        if "model" in sd:  # a full checkpoint rather than a weights-only snapshot
            sd = sd["model"]
        if avg is None:
            avg = {k: v.double().clone() for k, v in sd.items()}
        else:
            for k in avg:
                avg[k] += sd[k].double()
    del ck
    model = R.Transformer(cfg)
    model.load_state_dict({k: (v / len(snaps)).float() for k, v in avg.items()})
    model.eval()
    return model, snaps, state


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default=os.path.join(paths.RUNS, "everyday"))
    ap.add_argument("--weights", default=None, help="one snapshot to score instead of the newest")
    ap.add_argument("--model-dir", default=None, help="score this model directory instead of a run")
    ap.add_argument("--limit", type=int, default=None, help="first N sentences per direction of each split")
    ap.add_argument("--data", default=paths.CORPUS, help="the corpus build (test splits)")
    ap.add_argument("--spm", default=os.path.join(paths.SHIPPED, "spm.model"))
    ap.add_argument("--average", type=int, default=1)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--splits", default="test,modern-test")
    ap.add_argument("--everyday", default="dev", help="everyday sets (models/everyday), '' for none")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=48)
    ap.add_argument("--json", default=None, help="default: RUN/eval_STEP.json")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.model_dir:
        model, snaps, state = R.load_model_dir(args.model_dir), [args.model_dir], None
        model.eval()
        step = 0
        print("model directory", args.model_dir, flush=True)
    else:
        model, snaps, state = load_run(args.run, args.average, args.weights)
        step = max(snapshot_step(p) for p in snaps)
    if state:
        print("snapshots %s (checkpoint_last: %d updates, %.0f train minutes, %.1f M target tokens)" % (
            ", ".join(os.path.basename(p) for p in snaps), state["step"], state["train_seconds"] / 60,
            state["tokens"] / 1e6), flush=True)
    results = {"snapshots": [os.path.basename(p) for p in snaps], "step": step, "beam": args.beam,
               "checkpoint_state": state, "bleu": {}, "everyday": {}}
    search = "greedy" if args.beam == 1 else "beam%d" % args.beam
    pieces = SpmDecoder(args.spm)
    lines = ["| set | es→en BLEU | shipped | en→es BLEU | shipped |", "|---|---|---|---|---|"]
    for split in [s for s in args.splits.split(",") if s]:
        if not os.path.exists(os.path.join(args.data, split + ".es.ids")):
            print("no split %s in %s: skipped" % (split, args.data))
            continue
        t0 = time.time()
        scores, _ = T.evaluate_bleu(model, args.data, split, pieces, beam=args.beam, limit=args.limit,
                                    batch_size=args.batch_size)
        results["bleu"][split] = {d: round(v, 2) for d, v in scores.items()}
        ref = SHIPPED.get(split, {}).get(search, {})
        lines.append("| %s, %s | %.2f | %s | %.2f | %s |" % (
            split, search, scores["es-en"], ref.get("es-en", "–"), scores["en-es"], ref.get("en-es", "–")))
        print(split, results["bleu"][split], "%.0f s" % (time.time() - t0), flush=True)
    sets = [s for s in args.everyday.split(",") if s]
    if sets:
        results["everyday"] = everyday.evaluate(model, args.spm, sets, beam=args.beam,
                                                log=lambda m: print(m, flush=True))
    print()
    print("\n".join(lines))
    if sets:
        print()
        print(everyday.markdown_table(results["everyday"]))
    path = args.json or (os.path.join(args.run, "eval_%06d.json" % step) if not args.model_dir else None)
    if path is None:
        return
    with open(path, "w") as f:
        json.dump(results, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("\nwritten", path)


if __name__ == "__main__":
    main()
