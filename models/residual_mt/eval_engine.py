#!/usr/bin/env python3
"""BLEU of an int8 model against its float original, translated by the engine.

Both directions, greedy and beam 5, on the test books (or other splits), the
way models/export.py computes eval.json (source = [<2xx>] + the split's ids
cut to max_positions - 3, max_len_a 1.2, max_len_b 10, corpus BLEU of the
detokenized output against the reference text, models/bleu.py), but with the
engine's node CLI (js/cli.js --ids) instead of the PyTorch reference, in the
plain SIMD128 build and in the relaxed-SIMD one (node
--experimental-wasm-relaxed-simd; the same integers: its relaxed dot is used
only where it is exact). Stdlib only; needs a built dist/ (bash build.sh wasm).

    python3 models/quantize.py --in models/es-en --out /tmp/es-en-int8
    python3 models/eval_quantized.py --f32 models/es-en --int8 /tmp/es-en-int8 \\
        --data models/data/work [--splits test] [--json out.json]
"""
import argparse
import json
import os
import subprocess
import sys
import time

from . import bleu, paths
from .corpus import read_lines
from . import reference as R

BUILDS = {"plain": [], "relaxed": ["--experimental-wasm-relaxed-simd"]}
DIRECTIONS = [("es", "en"), ("en", "es")]


def node(build, args, stdin):
    r = subprocess.run(["node", *BUILDS[build], paths.CLI, *args], input=stdin, capture_output=True, text=True, cwd=paths.ROOT)
    if r.returncode != 0:
        sys.exit(f"eval_quantized: js/cli.js {' '.join(args)} failed:\n{r.stderr}")
    return r.stdout


def translate(model_dir, build, ids_lines, beam, batch):
    """Source id lines -> detokenized translations, and the seconds the translation took."""
    start = time.time()
    out = node(build, ["--ids", "--model", model_dir, "--beam", str(beam), "--batch", str(batch)], ids_lines)
    seconds = time.time() - start
    text = node(build, ["detokenize", "--model", model_dir], out)
    return text.split("\n")[:ids_lines.count("\n")], seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--f32", required=True, help="the float model directory")
    ap.add_argument("--int8", required=True, help="its int8 copy (models/quantize.py)")
    ap.add_argument("--data", default=paths.CORPUS)
    ap.add_argument("--splits", nargs="+", default=["test"])
    ap.add_argument("--beams", nargs="+", type=int, default=[1, R.SEARCH["beam"]])
    ap.add_argument("--builds", nargs="+", default=["plain", "relaxed"], choices=list(BUILDS))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--json", help="also write the scores here")
    args = ap.parse_args()
    results = compare([("f32", args.f32), ("int8", args.int8)], args.data, args.splits, args.beams, args.builds,
                      args.batch)
    worst = min(r["delta"] for r in results.values())
    print(f"largest drop: {-worst:.2f} BLEU (target: at most 0.3)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")


def compare(models, data, splits, beams, builds, batch):
    """BLEU of two model directories [(label, dir), (label, dir)] on each split,
    direction, search and build; delta = second - first."""
    (base, base_dir), (other, _) = models
    with open(os.path.join(base_dir, "config.json")) as f:
        config = json.load(f)
    lang_tokens, max_positions = config["languages"]["target_lang_tokens"], config["max_positions"]
    results = {}
    print(f"{'split/direction/search':28} {'build':8} {base:>9} {other:>9} {'delta':>6}")
    for split in splits:
        for s, t in DIRECTIONS:
            ids = [line.split() for line in read_lines(os.path.join(data, f"{split}.{s}.ids"))]
            refs = read_lines(os.path.join(data, f"{split}.{t}"))[:len(ids)]
            src = "".join(" ".join([str(lang_tokens[t])] + line[:max_positions - 3]) + "\n" for line in ids)
            for beam in beams:
                for build in builds:
                    key = f"{split}/{s}-{t}/{'greedy' if beam == 1 else f'beam{beam}'}/{build}"
                    row = {}
                    for kind, model_dir in models:
                        hyps, seconds = translate(model_dir, build, src, beam, batch)
                        row[kind] = round(bleu.corpus_bleu(hyps, refs)["score"], 2)
                        row[f"{kind}_seconds"] = round(seconds, 2)
                        row[f"{kind}_hyps"] = hyps
                    row["delta"] = round(row[other] - row[base], 2)
                    row["identical"] = sum(a == b for a, b in zip(row.pop(f"{base}_hyps"), row.pop(f"{other}_hyps")))
                    row["sentences"] = len(ids)
                    results[key] = row
                    print(f"{key.rsplit('/', 1)[0]:28} {build:8} {row[base]:9.2f} {row[other]:9.2f} "
                          f"{row['delta']:+6.2f}  ({row['identical']}/{len(ids)} translations identical)", flush=True)
    return results


if __name__ == "__main__":
    main()
