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
(models/make_manifest.py's format).  training.json, eval.json (BLEU) and
corpus.json (the corpus build's stats.json) sit beside them.

Evaluation runs on the written directory (the float16 weights as shipped,
computed in float32): corpus BLEU (models/bleu.py, sacreBLEU defaults) on
the valid book (Ruth), the test books (Joel, Jonah, Titus, Philemon) and
the modern valid and test sets (held-out packages' catalogs and
descriptions), both directions, greedy and beam 5 (reference.beam_search, lenpen 1,
max_len_a 1.2, max_len_b 10).  Results go to DIR/eval.json and the
hypotheses to --hyp-dir.
"""
import argparse
import glob
import json
import os
import shutil
import time

import subprocess

import torch

from . import manifest as make_manifest
from . import paths
from . import reference as R
from . import train as T


def write_manifest(out_dir):
    """manifest.json in the loader's format (models/make_manifest.py)."""
    manifest = make_manifest.manifest_for(out_dir)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        f.write(json.dumps(manifest, indent=2) + "\n")


class SpmDecoder:
    """ids -> text with Debian's spm_decode (as the engine's tests do)."""

    def __init__(self, model_path):
        self.model_path = model_path

    def decode_many(self, id_lists):
        lines = [" ".join(str(i) for i in ids) for ids in id_lists]
        out = subprocess.run(["spm_decode", "--model=" + self.model_path, "--input_format=id"],
                             input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout
        return out.split("\n")[:len(lines)]


def export(run, out_dir, average, dtype, data_dir):
    ck = torch.load(os.path.join(run, "checkpoint_last.pt"), map_location="cpu")
    cfg = R.ModelConfig.from_dict(ck["cfg"])
    snaps = sorted(glob.glob(os.path.join(run, "weights_*.pt")))[-average:]
    if not snaps:
        raise SystemExit("no weight snapshots in " + run)
    avg = None
    for p in snaps:
        sd = torch.load(p, map_location="cpu")
        if avg is None:
            avg = {k: v.double().clone() for k, v in sd.items()}
        else:
            for k in avg:
                avg[k] += sd[k].double()
    avg = {k: (v / len(snaps)).float() for k, v in avg.items()}
    model = R.Transformer(cfg)
    model.load_state_dict(avg)
    os.makedirs(out_dir, exist_ok=True)
    R.save_model_dir(model, out_dir, dtype=dtype)
    shutil.copyfile(os.path.join(data_dir, "spm.model"), os.path.join(out_dir, "spm.model"))
    # what the model was trained on: sizes per source, held-out packages, versions
    if os.path.exists(os.path.join(data_dir, "stats.json")):
        shutil.copyfile(os.path.join(data_dir, "stats.json"), os.path.join(out_dir, "corpus.json"))
    info = {"run": os.path.basename(os.path.normpath(run)), "snapshots_averaged": [os.path.basename(p) for p in snaps],
            "updates": ck["state"]["step"], "train_minutes": ck["state"]["train_seconds"] / 60,
            "target_tokens_seen": ck["state"]["tokens"], "dtype": dtype}
    with open(os.path.join(out_dir, "training.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    write_manifest(out_dir)
    return info


def evaluate(out_dir, data_dir, hyp_dir, beams, splits, batch_size):
    model = R.load_model_dir(out_dir)
    pieces = SpmDecoder(os.path.join(out_dir, "spm.model"))
    results = {}
    os.makedirs(hyp_dir, exist_ok=True)
    for split in splits:
        if not os.path.exists(os.path.join(data_dir, split + ".es.ids")):
            print("no split %s in %s: skipped" % (split, data_dir))
            continue
        for beam in beams:
            t0 = time.time()
            scores, outputs = T.evaluate_bleu(model, data_dir, split, pieces, beam=beam, batch_size=batch_size)
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
    write_manifest(out_dir)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default=os.path.join(paths.RUNS, "main"))
    ap.add_argument("--out", default=paths.SHIPPED)
    ap.add_argument("--data", default=paths.CORPUS)
    ap.add_argument("--average", type=int, default=3)
    ap.add_argument("--dtype", default="float16", choices=["float32", "float16"])
    ap.add_argument("--eval-only", action="store_true")
    ap.add_argument("--no-eval", action="store_true")
    ap.add_argument("--beams", type=int, nargs="+", default=[1, 5])
    ap.add_argument("--splits", nargs="+", default=["valid", "test", "modern-valid", "modern-test"],
                    help="splits of --data to score (those missing are skipped)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--hyp-dir", default=os.path.join(paths.RUNS, "hyps"))
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if not args.eval_only:
        print(export(args.run, args.out, args.average, args.dtype, args.data))
    if not args.no_eval:
        evaluate(args.out, args.data, args.hyp_dir, args.beams, args.splits, args.batch_size)


if __name__ == "__main__":
    main()
