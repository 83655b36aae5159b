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
    python3 models/chrf.py REF_FILE HYP_A HYP_B [SAMPLES]

The second form compares two systems on the same sentences by paired
bootstrap resampling (Koehn 2004; sacreBLEU's --paired-bs uses the
method): SAMPLES (1,000) resamples of the sentences with replacement, each
scored for both; it prints B - A, the 95 % interval of the resampled
differences, and how often B came out ahead.
"""
import random
import sys
from collections import Counter

from .corpus import read_lines

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


def summed(stats, indices):
    """The statistics of the sentences indices (repeats counted), summed."""
    total = [0] * (3 * CHAR_ORDER)
    for i in indices:
        for j, v in enumerate(stats[i]):
            total[j] += v
    return total


def corpus_chrf(hyps, refs):
    """Corpus chrF of parallel lists of hypotheses and references."""
    if len(hyps) != len(refs):
        raise ValueError("%d hypotheses, %d references" % (len(hyps), len(refs)))
    stats = [sentence_stats(h, r) for h, r in zip(hyps, refs)]
    return f_score(summed(stats, range(len(stats))))


def paired_bootstrap(hyps_a, hyps_b, refs, samples=1000, seed=1):
    """(chrF of A, chrF of B, [B - A of each resample, sorted]): the same
    resampled sentences scored for both systems."""
    if not len(hyps_a) == len(hyps_b) == len(refs):
        raise ValueError("%d, %d and %d lines" % (len(hyps_a), len(hyps_b), len(refs)))
    a = [sentence_stats(h, r) for h, r in zip(hyps_a, refs)]
    b = [sentence_stats(h, r) for h, r in zip(hyps_b, refs)]
    rng, n = random.Random(seed), len(refs)
    deltas = []
    for _ in range(samples):
        idx = [rng.randrange(n) for _ in range(n)]
        deltas.append(f_score(summed(b, idx)) - f_score(summed(a, idx)))
    return f_score(summed(a, range(n))), f_score(summed(b, range(n))), sorted(deltas)


def main():
    args = sys.argv[1:]
    if len(args) == 1:
        print("chrF2 = %.2f" % corpus_chrf([l.rstrip("\n") for l in sys.stdin], read_lines(args[0])))
    elif len(args) in (3, 4):
        samples = int(args[3]) if len(args) == 4 else 1000
        score_a, score_b, deltas = paired_bootstrap(read_lines(args[1]), read_lines(args[2]), read_lines(args[0]),
                                                    samples)
        low, high = deltas[int(0.025 * samples)], deltas[int(0.975 * samples) - 1]
        ahead = sum(d > 0 for d in deltas) / samples
        print("chrF2 A = %.2f, B = %.2f, B - A = %+.2f, 95 %% of %d resamples in [%+.2f, %+.2f], B ahead in %.1f %%"
              % (score_a, score_b, score_b - score_a, samples, low, high, 100 * ahead))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
