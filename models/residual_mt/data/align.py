"""Verse alignment by content, not by reference (stdlib only).

Reina-Valera 1909 numbers verses differently from the WEB in about 18
chapters (Hebrew versification: Num 13, 1 Sam 24, Job 39-40, Hos 12,
Jonah 2, ...), and a shift can cross a chapter boundary.  Each book is
aligned as one sequence with a Gale-Church style dynamic program over
character lengths, helped by shared proper names and numbers:

    moves: 1-1, 1-2, 2-1 (merged verses), 1-0, 0-1 (dropped)
    cost:  -log P(length ratio) - log P(move) - bonus * shared names

The program runs in a band around the diagonal, so it is linear in the
book's length.
"""
import math
import re
import unicodedata

# log-priors of the moves (Gale & Church 1993, roughly)
_PRIOR = {(1, 1): 0.89, (1, 0): 0.01, (0, 1): 0.01, (2, 1): 0.045, (1, 2): 0.045}
_NAME_RE = re.compile(r"\b([A-ZÁÉÍÓÚÑ][\w'’]{3,}|\d+)\b")
_COMMON_CAPS = {"yahweh", "jehová", "jehova", "dios", "god", "señor", "lord"}


def _fold(word):
    w = unicodedata.normalize("NFD", word.lower())
    return "".join(c for c in w if unicodedata.category(c) != "Mn")


def name_keys(text):
    """Capitalised words (4+ letters) and numbers, folded to 4-char keys.

    Sentence-initial capitals add noise, but both languages share most
    proper names (David, Absalom, Jerusalem), which is what matters.
    """
    keys = set()
    for w in _NAME_RE.findall(text):
        f = _fold(w)
        if f in _COMMON_CAPS:
            continue
        keys.add(f[:4])
    return keys


def _norm_sf(x):
    """2 * (1 - Phi(|x|)): two-sided tail of the standard normal."""
    return math.erfc(abs(x) / math.sqrt(2.0))


def length_cost(la, lb, ratio, var=6.8):
    if la == 0 and lb == 0:
        return 0.0
    mean = (la + lb / ratio) / 2.0
    delta = (lb - la * ratio) / math.sqrt(max(mean, 1.0) * var)
    p = max(_norm_sf(delta), 1e-12)
    return -math.log(p)


def align(a_texts, b_texts, ratio=None, band=40, name_bonus=1.5,
          a_refs=None, b_refs=None, ref_bonus=0.0):
    """Aligns two verse lists.  Returns a list of (a_indices, b_indices)
    beads (tuples of 0, 1 or 2 indices each), in order.

    a_refs/b_refs (optional, e.g. (chapter, verse)) give a small bonus to a
    1-1 pair with the same reference: it settles ties, while a clear content
    shift (renumbered chapters) still wins over it."""
    na, nb = len(a_texts), len(b_texts)
    la = [len(t) for t in a_texts]
    lb = [len(t) for t in b_texts]
    if ratio is None:
        ratio = (sum(lb) / sum(la)) if sum(la) and sum(lb) else 1.0
    ka = [name_keys(t) for t in a_texts]
    kb = [name_keys(t) for t in b_texts]
    slope = nb / na if na else 1.0
    inf = float("inf")
    cost = {}
    back = {}
    cost[(0, 0)] = 0.0

    def in_band(i, j):
        return abs(i * slope - j) <= band + 2

    for i in range(na + 1):
        jc = int(round(i * slope))
        for j in range(max(0, jc - band), min(nb, jc + band) + 1):
            if i == 0 and j == 0:
                continue
            best = inf
            arg = None
            for (di, dj), prior in _PRIOR.items():
                pi, pj = i - di, j - dj
                if pi < 0 or pj < 0:
                    continue
                c0 = cost.get((pi, pj))
                if c0 is None:
                    continue
                sa = sum(la[pi:i])
                sb = sum(lb[pj:j])
                c = c0 - math.log(prior)
                if di and dj:
                    c += length_cost(sa, sb, ratio)
                    keys_a = set().union(*ka[pi:i])
                    keys_b = set().union(*kb[pj:j])
                    c -= name_bonus * min(len(keys_a & keys_b), 4)
                    if (a_refs is not None and di == 1 and dj == 1
                            and a_refs[pi] == b_refs[pj]):
                        c -= ref_bonus
                else:
                    # an unmatched verse: cost grows with its length
                    c += 1.0 + (sa + sb) / 80.0
                if c < best:
                    best = c
                    arg = (pi, pj)
            if arg is not None:
                cost[(i, j)] = best
                back[(i, j)] = arg
    if (na, nb) not in back and (na or nb):
        raise ValueError("alignment band too narrow (%d vs %d verses)" % (na, nb))
    beads = []
    i, j = na, nb
    while (i, j) != (0, 0):
        pi, pj = back[(i, j)]
        beads.append((tuple(range(pi, i)), tuple(range(pj, j))))
        i, j = pi, pj
    beads.reverse()
    return beads
