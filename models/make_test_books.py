#!/usr/bin/env python3
"""The test books of the Bible split (models/data/books.py: Joel, Jonah, Titus,
Philemon; Reina-Valera 1909 and the World English Bible, both public domain),
verse-aligned, as a fixture: tests/bench/bench.js translates them from a fresh
clone, where models/data/work/ (made by models/data/build_corpus.py) is absent.

    python3 models/make_test_books.py [--work models/data/work] [--out tests/fixtures/test-books]

Writes test.es and test.en (one aligned verse, or merged verses, per line) and
refs.tsv (book, Spanish and English verse references of each line). Rerun
whenever the corpus is rebuilt.
"""
import argparse
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default=os.path.join(ROOT, "models", "data", "work"))
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "test-books"))
    args = parser.parse_args()

    def lines(name):
        with open(os.path.join(args.work, name), encoding="utf-8") as f:
            return f.read().split("\n")[:-1]

    sources, es, en, refs = lines("test.src"), lines("test.es"), lines("test.en"), lines("test.refs.tsv")
    bible = [i for i, s in enumerate(sources) if s == "bible"]
    if not (len(sources) == len(es) == len(en)) or len(refs) != len(bible):
        raise SystemExit("test split files disagree in length: rebuild the corpus")
    os.makedirs(args.out, exist_ok=True)
    for name, rows in (("test.es", [es[i] for i in bible]), ("test.en", [en[i] for i in bible]), ("refs.tsv", refs)):
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write("".join(row + "\n" for row in rows))
    print(f"wrote {len(bible)} lines to {args.out}")


if __name__ == "__main__":
    main()
