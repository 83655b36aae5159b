#!/usr/bin/env python3
"""Exports a training run as a shipped model directory and evaluates it.

    /usr/bin/python3 models/export.py --run models/runs/main --out models/es-en \
        --average 3 --dtype float16
    /usr/bin/python3 models/export.py --out models/es-en --eval-only

Export: the last --average weight snapshots of the run are averaged (plain
mean, as fairseq's average_checkpoints.py), written with
reference.save_model_dir (config.json + model.safetensors, fairseq names),
the joint SentencePiece model is copied in as spm.model, and manifest.json
lists the files the loader fetches with their SHA-256 and size
(manifest.py's format).  training.json, eval.json (BLEU) and
corpus.json (the corpus build's stats.json) sit beside them.  With
--mix-with DIR W the average is mixed with DIR's weights, (1 - W) x DIR +
W x the run (checkpoint.mix): a fine-tuning run mixed back with its start.

Evaluation runs on the written directory (the float16 weights as shipped,
computed in float32): corpus BLEU (models/bleu.py, sacreBLEU defaults) on
the valid book (Ruth), the test books (Joel, Jonah, Titus, Philemon) and
the modern valid and test sets (held-out packages' catalogs and
descriptions), both directions, greedy and beam 5 (reference.beam_search, lenpen 1,
max_len_a 1.2, max_len_b 10).  Results go to DIR/eval.json and the
hypotheses to --hyp-dir.
"""
import argparse
import json
import os
import shutil
import time

import torch

from . import checkpoint, paths, spm
from . import manifest as make_manifest
from . import reference as R
from .corpus import has_split
from .evaluate import evaluate_bleu


def export(run, out_dir, average, dtype, data_dir, mix_with=None):
    cfg, state = checkpoint.config_and_state(run)
    snaps = checkpoint.snapshots(run, average)
    if not snaps:
        raise SystemExit("no weight snapshots in " + run)
    avg = checkpoint.average(snaps)
    model = R.Transformer(cfg)
    model.load_state_dict(avg)
    if mix_with:  # (model dir, the run's weight)
        other = R.load_model_dir(mix_with[0], int8=False).state_dict()
        model.load_state_dict(checkpoint.mix(model.state_dict(), other, mix_with[1]))
    os.makedirs(out_dir, exist_ok=True)
    R.save_model_dir(model, out_dir, dtype=dtype)
    shutil.copyfile(os.path.join(data_dir, "spm.model"), os.path.join(out_dir, "spm.model"))
    # what the model was trained on: sizes per source, held-out packages, versions
    if os.path.exists(os.path.join(data_dir, "stats.json")):
        shutil.copyfile(os.path.join(data_dir, "stats.json"), os.path.join(out_dir, "corpus.json"))
    info = {"run": os.path.basename(os.path.normpath(run)), "snapshots_averaged": [os.path.basename(p) for p in snaps],
            "updates": state["step"], "train_minutes": state["train_seconds"] / 60,
            "target_tokens_seen": state["tokens"], "dtype": dtype}
    if mix_with:
        info["mixed_with"] = {"model": os.path.normpath(mix_with[0]), "run_weight": mix_with[1]}
    with open(os.path.join(out_dir, "training.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    make_manifest.write(out_dir)
    return info


def evaluate(out_dir, data_dir, hyp_dir, beams, splits, batch_size):
    model = R.load_model_dir(out_dir)
    pieces = spm.Decoder(os.path.join(out_dir, "spm.model"))
    results = {}
    os.makedirs(hyp_dir, exist_ok=True)
    for split in splits:
        if not has_split(data_dir, split):
            print("no split %s in %s: skipped" % (split, data_dir))
            continue
        for beam in beams:
            t0 = time.time()
            scores, outputs = evaluate_bleu(model, data_dir, split, pieces, beam=beam, batch_size=batch_size)
            for direction, score in scores.items():
                results["%s/%s/%s" % (split, direction, "greedy" if beam == 1 else "beam%d" % beam)] = round(score, 2)
                with open(os.path.join(hyp_dir, "%s.%s.beam%d.txt" % (split, direction, beam)), "w") as f:
                    f.write("\n".join(outputs[direction]) + "\n")
            print(split, "beam", beam, {k: round(v, 2) for k, v in scores.items()},
                  "%.0f s" % (time.time() - t0), flush=True)
    path = os.path.join(out_dir, "eval.json")
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    old.update(results)
    with open(path, "w") as f:
        json.dump(old, f, indent=2, sort_keys=True)
        f.write("\n")
    make_manifest.write(out_dir)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default=os.path.join(paths.RUNS, "main"))
    ap.add_argument("--out", default=paths.SHIPPED)
    ap.add_argument("--data", default=paths.CORPUS)
    ap.add_argument("--average", type=int, default=3)
    ap.add_argument("--dtype", default="float16", choices=["float32", "float16"])
    ap.add_argument("--mix-with", nargs=2, metavar=("DIR", "WEIGHT"), default=None,
                    help="export (1 - WEIGHT) x DIR's weights + WEIGHT x the run's average (DIR: an exported model "
                         "of the same shape, e.g. the one a fine-tuning run started from)")
    ap.add_argument("--eval-only", action="store_true")
    ap.add_argument("--no-eval", action="store_true")
    ap.add_argument("--beams", type=int, nargs="+", default=[1, R.SEARCH["beam"]])
    ap.add_argument("--splits", nargs="+", default=["valid", "test", "modern-valid", "modern-test"],
                    help="splits of --data to score (those missing are skipped)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--hyp-dir", default=os.path.join(paths.RUNS, "hyps"))
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if not args.eval_only:
        mix_with = (args.mix_with[0], float(args.mix_with[1])) if args.mix_with else None
        print(export(args.run, args.out, args.average, args.dtype, args.data, mix_with))
    if not args.no_eval:
        evaluate(args.out, args.data, args.hyp_dir, args.beams, args.splits, args.batch_size)


if __name__ == "__main__":
    main()
