#!/usr/bin/env python3
"""Rebuilds the es-en Bible corpus and the joint SentencePiece model from
the Debian packages (diatheke, sword-text-sparv, sword-text-web).

    python3 models/data/build_corpus.py            # -> models/data/work/

Steps (deterministic: no sampling, fixed order, single-threaded spm_train):
 1. diatheke dumps both modules as OSIS, one verse per line.
 2. clean.py strips markup and footnotes, keeps psalm titles once.
 3. align.py aligns each book by content (lengths + shared names), merging
    verses where the two versifications split them differently.
 4. Pairs are split by whole books (books.py); reserved books are dropped
    before anything is written.
 5. spm_train builds a joint unigram model (8k) on the training pairs, ids
    in fairseq order (<s>=0 <pad>=1 </s>=2 <unk>=3) plus <2en>=4 <2es>=5.
 6. spm_encode writes id files for train/valid/test.
"""
import argparse
import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import align  # noqa: E402
import books  # noqa: E402
import clean  # noqa: E402

MODULES = {"es": "spaRV1909eb", "en": "engWEB2015eb"}
RANGE = "Gen 1:1-Rev 22:21"


def dump_module(module):
    """The whole module as OSIS text.  Kept in memory only: the raw dump
    holds the reserved books, which must not appear in any written file."""
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
    """Returns [(book, es_ref, en_ref, es_text, en_text)] for all canonical
    books that are not reserved, in canonical order."""
    es = by_book(clean.clean_verses(es_dump))
    en = by_book(clean.clean_verses(en_dump))
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


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line.replace("\n", " ") + "\n")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "work"))
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--no-spm", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    es_dump = dump_module(MODULES["es"])
    en_dump = dump_module(MODULES["en"])
    pairs = aligned_pairs(es_dump, en_dump)
    splits = {"train": [], "valid": [], "test": []}
    for p in pairs:
        splits[books.split_of(p[0])].append(p)
    for name, rows in splits.items():
        write_lines(os.path.join(args.out, name + ".es"), [r[3] for r in rows])
        write_lines(os.path.join(args.out, name + ".en"), [r[4] for r in rows])
        write_lines(os.path.join(args.out, name + ".refs.tsv"),
                    ["%s\t%s\t%s" % r[:3] for r in rows])
        words = sum(len(r[3].split()) + len(r[4].split()) for r in rows)
        print("%-5s %6d pairs %8d words" % (name, len(rows), words))
    if args.no_spm:
        return
    # joint SentencePiece model on the training side only
    # spm_train stores its input and prefix paths in the model: relative names,
    # run inside the output directory, keep spm.model byte-identical across rebuilds
    spm_input = os.path.join(args.out, "spm_input.txt")
    write_lines(spm_input, [r[3] for r in splits["train"]] + [r[4] for r in splits["train"]])
    prefix = os.path.join(args.out, "spm")
    subprocess.run([
        "spm_train", "--input=spm_input.txt", "--model_prefix=spm",
        "--model_type=unigram", "--vocab_size=%d" % args.vocab_size,
        "--character_coverage=1.0", "--bos_id=0", "--pad_id=1", "--eos_id=2",
        "--unk_id=3", "--user_defined_symbols=<2en>,<2es>",
        "--input_sentence_size=0", "--shuffle_input_sentence=false",
        "--num_threads=1", "--minloglevel=1",
    ], check=True, cwd=args.out)
    for name in splits:
        for lang in ("es", "en"):
            src = os.path.join(args.out, "%s.%s" % (name, lang))
            with open(src, "rb") as fin, open(src + ".ids", "wb") as fout:
                subprocess.run(["spm_encode", "--model=" + prefix + ".model",
                                "--output_format=id"], stdin=fin, stdout=fout,
                               check=True)
    print("spm.model sha256", sha256(prefix + ".model"))


if __name__ == "__main__":
    main()
