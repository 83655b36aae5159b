"""Held-out accuracy at exactly three words: the first three words of each
held-out sentence of the given languages (SCRATCH/eval.tsv, which train.py
writes), the shipped model with its prior, as the LanguageDetector decides.

  python3 models/langid_three_words.py [--scratch DIR] [--model FILE] LANG...
"""
import argparse
import os

import numpy as np
import torch

from .. import paths
from .train import BUCKETS, DIM, ORDERS, Bags, LangId, dequantized_model, read_safetensors, with_prior
from .features import Featurizer

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", default="/work/scratch/langid")
    ap.add_argument("--model", default=os.path.join(paths.LANGID, "model.safetensors"))
    ap.add_argument("langs", nargs="+")
    args = ap.parse_args()
    metadata, tensors = read_safetensors(args.model)
    langs = metadata["languages"].split(",")
    prior = np.array([float(v) for v in metadata["prior"].split(",")])
    model = dequantized_model(LangId(BUCKETS, DIM, 0, len(langs)).eval(), tensors)
    featurize = Featurizer(args.scratch, ORDERS, BUCKETS)
    with open(os.path.join(args.scratch, "eval.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    for lang in args.langs:
        texts = [" ".join(text.split()[:3]) for tag, text, _ in rows if tag == lang]
        bags = Bags(featurize, texts, len(ORDERS))
        with torch.no_grad():
            logits = model(bags.batch(np.arange(bags.n))).numpy()
        pred = with_prior(logits, sum(bags.lengths).astype(np.float64), prior, float(metadata["prior_weight"]),
                          float(metadata.get("prior_fade", 0))).argmax(1)
        print("%s: %.1f %% of %d at three words" % (lang, 100 * np.mean(pred == langs.index(lang)), len(texts)))


if __name__ == "__main__":
    main()
