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
import json
import os
import time

import torch

from . import checkpoint, everyday, paths, spm
from . import reference as R
from .corpus import has_split
from .evaluate import evaluate_bleu

# the shipped model (0.3.0 weights, float16, reference without shortlist),
# beam 5 / greedy, from the model card's "Quality" table
SHIPPED = {"test": {"beam5": {"es-en": 26.96, "en-es": 23.55}, "greedy": {"es-en": 25.57, "en-es": 21.75}},
           "modern-test": {"beam5": {"es-en": 32.44, "en-es": 33.23}, "greedy": {"es-en": 31.80, "en-es": 31.82}},
           "valid": {"beam5": {"es-en": 26.47, "en-es": 23.90}, "greedy": {"es-en": 24.25, "en-es": 21.63}},
           "modern-valid": {"beam5": {"es-en": 31.54, "en-es": 33.10}, "greedy": {"es-en": 30.91, "en-es": 32.03}}}


def load_run(run, average=1, weights=None):
    """(model, [snapshot paths], state of checkpoint_last.pt)."""
    cfg, state = checkpoint.config_and_state(run)
    snaps = [weights] if weights else checkpoint.snapshots(run, average)
    if not snaps:  # a run saved before its first snapshot: its full checkpoint
        snaps = [os.path.join(run, checkpoint.LAST)]
    model = R.Transformer(cfg)
    model.load_state_dict(checkpoint.average(snaps))
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
    ap.add_argument("--beam", type=int, default=R.SEARCH["beam"])
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
        step = max(checkpoint.snapshot_step(p) for p in snaps)
    if state:
        print("snapshots %s (checkpoint_last: %d updates, %.0f train minutes, %.1f M target tokens)" % (
            ", ".join(os.path.basename(p) for p in snaps), state["step"], state["train_seconds"] / 60,
            state["tokens"] / 1e6), flush=True)
    results = {"snapshots": [os.path.basename(p) for p in snaps], "step": step, "beam": args.beam,
               "checkpoint_state": state, "bleu": {}, "everyday": {}}
    search = "greedy" if args.beam == 1 else "beam%d" % args.beam
    pieces = spm.Decoder(args.spm)
    lines = ["| set | es→en BLEU | shipped | en→es BLEU | shipped |", "|---|---|---|---|---|"]
    for split in [s for s in args.splits.split(",") if s]:
        if not has_split(args.data, split):
            print("no split %s in %s: skipped" % (split, args.data))
            continue
        t0 = time.time()
        scores, _ = evaluate_bleu(model, args.data, split, pieces, beam=args.beam, limit=args.limit,
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
