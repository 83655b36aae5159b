"""Checks that an evaluation set is not training text: every sentence of the
everyday set (tests/fixtures/langid/everyday.tsv, written for the check) is
looked for in every training string the model could have seen (build_data.py's
SCRATCH/train and everyday_sources.py's SCRATCH/everyday/train, all of them,
not only the ones train.py samples).

  /usr/bin/python3 models/langid_check_overlap.py FIXTURE TRAIN_DIR [TRAIN_DIR ...]

Compared case-folded, with runs of spaces and punctuation as one space:
  whole     the sentence inside a training string;
  piece     the sentence's first three words as a whole training string
            (the bench's short piece, seen as such in training).
Prints each hit and the counts; exits 1 when a whole sentence is found.
"""
import os
import re
import sys

_NOT_WORD = re.compile(r"[\W_]+")


def normal(text):
    return " " + " ".join(_NOT_WORD.sub(" ", text.casefold()).split()) + " "


def training_strings(folders):
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".txt"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    for line in f:
                        yield name[:-4], line.rstrip("\n").split("\t", 1)[-1]


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1], encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if "\t" in line]
    strings = {}
    for lang, text in training_strings(sys.argv[2:]):
        strings.setdefault(normal(text), lang)
    haystack = "\n".join(strings)
    whole = pieces = 0
    for lang, sentence in rows:
        s = normal(sentence)
        if s in haystack:
            whole += 1
            print("whole\t%s\t%s" % (lang, sentence))
        piece = normal(" ".join(sentence.split()[:3]))
        if piece in strings:
            pieces += 1
            print("piece\t%s\t%s\t(a %s training string)" % (lang, piece.strip(), strings[piece]))
    print("%d sentences: %d found whole in %d training strings, %d three-word pieces are training strings"
          % (len(rows), whole, len(strings), pieces))
    sys.exit(1 if whole else 0)


if __name__ == "__main__":
    main()
