"""The verse-aligned Spanish-English Bible from the Debian SWORD packages
(sword-text-sparv: Reina-Valera 1909, public domain; sword-text-web: World
English Bible, public domain), read with diatheke.

 1. diatheke dumps both modules as OSIS, one verse per line (kept in memory
    only: the dump holds the reserved books, which no file may contain).
 2. clean.py strips markup and footnotes, keeps psalm titles once, cuts the
    epistle subscriptions and re-cases all-caps words (reserved books are
    dropped first, so they play no part, not even in the casing table).
 3. align.py aligns each book by content (lengths + shared names), merging
    verses where the two versifications split them differently.
 4. Pairs are split by whole books (books.py).
"""
import subprocess

from . import align, books, clean

MODULES = {"es": "spaRV1909eb", "en": "engWEB2015eb"}
PACKAGES = ("sword-text-sparv", "sword-text-web")
LICENCE = "public domain (Reina-Valera 1909; World English Bible)"
RANGE = "Gen 1:1-Rev 22:21"


def dump_module(module):
    """The whole module as OSIS text (in memory only)."""
    out = subprocess.run(["diatheke", "-b", module, "-f", "OSIS", "-o", "f",
                          "-k", RANGE], check=True, capture_output=True).stdout
    return out.decode("utf-8")


def by_book(verses):
    out = {}
    for book, ch, vs, text in verses:
        if text:
            out.setdefault(book, []).append(("%d:%d" % (ch, vs), text))
    return out


def aligned_pairs(es_dump, en_dump):
    """[(book, es_ref, en_ref, es_text, en_text)] for all canonical books that
    are not reserved, in canonical order."""
    keep = lambda book: books.split_of(book) is not None  # noqa: E731
    es = by_book(clean.clean_verses(es_dump, keep_book=keep))
    en = by_book(clean.clean_verses(en_dump, keep_book=keep))
    es_chars = sum(len(t) for v in es.values() for _, t in v)
    en_chars = sum(len(t) for v in en.values() for _, t in v)
    ratio = en_chars / es_chars
    pairs = []
    for book in books.CANON:
        if books.split_of(book) is None:
            continue
        a, b = es.get(book, []), en.get(book, [])
        beads = align.align([t for _, t in a], [t for _, t in b], ratio=ratio)
        for ia, ib in beads:
            if not ia or not ib:
                continue
            pairs.append((book,
                          "+".join(a[i][0] for i in ia),
                          "+".join(b[j][0] for j in ib),
                          " ".join(a[i][1] for i in ia),
                          " ".join(b[j][1] for j in ib)))
    return pairs


def bible_splits():
    """{'train'|'valid'|'test': [(book, es_ref, en_ref, es, en)]}."""
    pairs = aligned_pairs(dump_module(MODULES["es"]), dump_module(MODULES["en"]))
    splits = {"train": [], "valid": [], "test": []}
    for p in pairs:
        splits[books.split_of(p[0])].append(p)
    return splits


def package_versions():
    return {p: subprocess.run(["dpkg-query", "-W", "-f=${Version}", p], capture_output=True,
                              text=True).stdout for p in PACKAGES}
