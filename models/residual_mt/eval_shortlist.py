#!/usr/bin/env python3
"""BLEU of a model with its lexical shortlist against the same model without
one, both translated by the engine (models/eval_quantized.py's comparison:
both directions, greedy and beam 5, source cut as models/export.py does,
corpus BLEU by models/bleu.py). Stdlib only; needs a built dist/.

    /usr/bin/python3 models/shortlist.py --in models/es-en --out /tmp/es-en-sl
    python3 models/eval_shortlist.py --full models/es-en --shortlist /tmp/es-en-sl \\
        [--splits valid modern-valid] [--json out.json]
"""
import argparse
import json

from . import paths
from . import reference as R
from .eval_engine import BUILDS, compare


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", required=True, help="the model directory without a shortlist")
    ap.add_argument("--shortlist", required=True, help="its copy with one (models/shortlist.py)")
    ap.add_argument("--data", default=paths.CORPUS)
    ap.add_argument("--splits", nargs="+", default=["valid", "modern-valid"])
    ap.add_argument("--beams", nargs="+", type=int, default=[1, R.SEARCH["beam"]])
    ap.add_argument("--builds", nargs="+", default=["plain"], choices=list(BUILDS))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--json", help="also write the scores here")
    args = ap.parse_args()
    results = compare([("full", args.full), ("shortlist", args.shortlist)], args.data, args.splits, args.beams,
                      args.builds, args.batch)
    worst = min(r["delta"] for r in results.values())
    seconds = {k: sum(r[f"{k}_seconds"] for r in results.values()) for k in ("full", "shortlist")}
    print(f"largest drop: {-worst:.2f} BLEU; engine time (CLI, incl. start-up) full {seconds['full']:.1f} s, "
          f"shortlist {seconds['shortlist']:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
