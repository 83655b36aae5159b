#!/usr/bin/env python3
"""Corpus BLEU computed the way sacreBLEU (2.x) computes it by default.

Defaults reproduced: tokenizer "13a" (mteval-v13a), case-sensitive, max n-gram
order 4, brevity penalty against the closest reference length (ties go to the
shorter reference), clipped n-gram counts summed over the corpus, smoothing
"exp" (which only changes the score when some n-gram order has zero matches
in the whole corpus; with smooth="none" such a corpus scores 0, as in the
original BLEU definition).  Stdlib only, so tests can run without sacreBLEU.

    python3 models/bleu.py REF_FILE [REF_FILE ...] < HYP_FILE
"""
import math
import re
import sys
from collections import Counter

_13A_RULES = [
    # punctuation and symbols except apostrophe, hyphen, comma and period
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    # period and comma unless preceded by a digit
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    # period and comma unless followed by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    # dash when preceded by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tokenize_13a(line):
    """mteval-v13a tokenization, as sacreBLEU's Tokenizer13a applies it."""
    line = line.replace("<skipped>", "")
    line = line.replace("-\n", "")
    line = line.replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"')
        line = line.replace("&amp;", "&")
        line = line.replace("&lt;", "<")
        line = line.replace("&gt;", ">")
    line = " " + line + " "
    for pattern, repl in _13A_RULES:
        line = pattern.sub(repl, line)
    return " ".join(line.split())


def ngram_counts(tokens, max_order=4):
    counts = Counter()
    for n in range(1, max_order + 1):
        for i in range(len(tokens) - n + 1):
            counts[tuple(tokens[i:i + n])] += 1
    return counts


def corpus_stats(hyps, refs_list, max_order=4, tokenize=tokenize_13a,
                 lowercase=False):
    """Sufficient statistics: (correct[n], total[n], sys_len, ref_len).

    hyps: list of strings; refs_list: list of reference streams, each a list
    of strings parallel to hyps (sacreBLEU's calling convention).
    """
    for refs in refs_list:
        if len(refs) != len(hyps):
            raise ValueError("reference stream length %d != hypotheses %d"
                             % (len(refs), len(hyps)))
    correct = [0] * max_order
    total = [0] * max_order
    sys_len = 0
    ref_len = 0

    def prep(s):
        if lowercase:
            s = s.lower()
        return tokenize(s.rstrip()).split()

    for i, hyp in enumerate(hyps):
        h = prep(hyp)
        rs = [prep(refs[i]) for refs in refs_list]
        hlen = len(h)
        # closest reference length; on a tie the shorter one
        best = None
        for r in rs:
            diff = abs(hlen - len(r))
            if best is None or diff < best[0] or (diff == best[0] and len(r) < best[1]):
                best = (diff, len(r))
        sys_len += hlen
        ref_len += best[1]
        max_ref = Counter()
        for r in rs:
            for g, c in ngram_counts(r, max_order).items():
                if c > max_ref[g]:
                    max_ref[g] = c
        for g, c in ngram_counts(h, max_order).items():
            n = len(g)
            total[n - 1] += c
            correct[n - 1] += min(c, max_ref.get(g, 0))
    return correct, total, sys_len, ref_len


def _log(x):
    return math.log(x) if x > 0 else -9999999999


def score_from_stats(correct, total, sys_len, ref_len, smooth="exp",
                     smooth_value=None):
    """BLEU (0..100) from sufficient statistics, sacreBLEU's compute_bleu."""
    max_order = len(correct)
    correct = list(correct)
    total = list(total)
    if sys_len == 0:
        return 0.0, [0.0] * max_order, 0.0
    precisions = [0.0] * max_order
    smooth_mteval = 1.0
    for n in range(1, max_order + 1):
        if smooth == "add-k" and n > 1:
            correct[n - 1] += smooth_value
            total[n - 1] += smooth_value
        if total[n - 1] == 0:
            break
        if correct[n - 1] == 0:
            if smooth == "exp":
                smooth_mteval *= 2
                precisions[n - 1] = 100.0 / (smooth_mteval * total[n - 1])
            elif smooth == "floor":
                precisions[n - 1] = 100.0 * smooth_value / total[n - 1]
        else:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]
    bp = 1.0 if sys_len >= ref_len else math.exp(1 - ref_len / sys_len)
    score = bp * math.exp(sum(_log(p) for p in precisions) / max_order)
    return score, precisions, bp


def corpus_bleu(hyps, refs_list, smooth="exp", lowercase=False):
    """Returns a dict: score, precisions, bp, sys_len, ref_len.

    refs_list may also be a plain list of strings (one reference stream).
    """
    if refs_list and isinstance(refs_list[0], str):
        refs_list = [refs_list]
    correct, total, sys_len, ref_len = corpus_stats(hyps, refs_list,
                                                    lowercase=lowercase)
    score, precisions, bp = score_from_stats(correct, total, sys_len, ref_len,
                                             smooth=smooth)
    return {"score": score, "precisions": precisions, "bp": bp,
            "sys_len": sys_len, "ref_len": ref_len,
            "correct": correct, "total": total}


def format_bleu(r):
    p = "/".join("%.1f" % x for x in r["precisions"])
    ratio = r["sys_len"] / r["ref_len"] if r["ref_len"] else 0.0
    return ("BLEU = %.2f %s (BP = %.3f ratio = %.3f hyp_len = %d ref_len = %d)"
            % (r["score"], p, r["bp"], ratio, r["sys_len"], r["ref_len"]))


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    hyps = sys.stdin.read().split("\n")
    if hyps and hyps[-1] == "":
        hyps.pop()
    refs_list = []
    for path in argv[1:]:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        refs_list.append(lines)
    print(format_bleu(corpus_bleu(hyps, refs_list)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
