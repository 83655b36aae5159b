#!/usr/bin/env python3
"""chrF computed the way sacreBLEU (2.x) computes it by default (chrF2).

Defaults reproduced: character n-grams of orders 1 to 6, no word n-grams,
beta 2, whitespace removed before the n-grams are taken, case-sensitive.
For each order the hypothesis n-gram count, the reference n-gram count and
the matches (counts clipped per sentence) are summed over the corpus; the
precision and recall of each order with n-grams on both sides are averaged
(the "effective order"), and the score is their F-beta, times 100 (sacreBLEU's
default, eps_smoothing=False).  A sentence's chrF is the same on its own
statistics.  Stdlib only.

    python3 models/chrf.py REF_FILE < HYP_FILE
"""
import sys
from collections import Counter

CHAR_ORDER = 6
BETA = 2


def char_ngrams(text, n):
    s = "".join(text.split())
    return Counter(s[i:i + n] for i in range(len(s) - n + 1))


def sentence_stats(hyp, ref, order=CHAR_ORDER):
    """[n_hyp, n_ref, n_match] for each order 1..order, flattened."""
    out = []
    for n in range(1, order + 1):
        h, r = char_ngrams(hyp, n), char_ngrams(ref, n)
        out += [sum(h.values()), sum(r.values()), sum((h & r).values())]
    return out


def f_score(stats, order=CHAR_ORDER, beta=BETA):
    factor = beta ** 2
    avg_p = avg_r = 0.0
    effective = 0
    for i in range(order):
        n_hyp, n_ref, n_match = stats[3 * i: 3 * i + 3]
        if n_hyp > 0 and n_ref > 0:
            avg_p += n_match / n_hyp
            avg_r += n_match / n_ref
            effective += 1
    if effective == 0:
        return 0.0
    avg_p /= effective
    avg_r /= effective
    if avg_p + avg_r == 0:
        return 0.0
    return 100.0 * (1 + factor) * avg_p * avg_r / (factor * avg_p + avg_r)


def sentence_chrf(hyp, ref):
    return f_score(sentence_stats(hyp, ref))


def corpus_chrf(hyps, refs):
    """Corpus chrF of parallel lists of hypotheses and references."""
    if len(hyps) != len(refs):
        raise ValueError("%d hypotheses, %d references" % (len(hyps), len(refs)))
    total = [0] * (3 * CHAR_ORDER)
    for h, r in zip(hyps, refs):
        for i, v in enumerate(sentence_stats(h, r)):
            total[i] += v
    return f_score(total)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        refs = [l.rstrip("\n") for l in f]
    hyps = [l.rstrip("\n") for l in sys.stdin]
    print("chrF2 = %.2f" % corpus_chrf(hyps, refs))


if __name__ == "__main__":
    main()
