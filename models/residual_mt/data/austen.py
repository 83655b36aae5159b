"""English conversation from Jane Austen's six novels (r-cran-janeaustenr,
MIT; the novels public domain, as Project Gutenberg published them): the
sentences of their quoted speech ("I cannot agree with you, papa."), the
nearest thing to everyday dialogue in Debian's English text.  Monolingual:
back-translated by Apertium into a synthetic Spanish source, the human
English only ever a target (apertium_bt.py).

The package keeps each novel as a character vector of its printed lines in
an R lazy-load database (data/Rdata.rdx and .rdb), read by r_data.py.
Lines are joined into paragraphs (blank lines end them); each quoted span
("...") is split into sentences (fortunes.sentences: abbreviations such as
"Mr." kept whole) and a sentence is kept under fortunes.plain_sentence's
rules (3 to 25 words, ends in . ! ?, no capitals-only words, plain
characters), without Austen's "--" dashes (they join clauses a sentence
splitter cannot part), each sentence once.
"""
import os
import re

from . import debs, fortunes, r_data

LICENCE = "MIT (r-cran-janeaustenr; the novels public domain)"
PACKAGE = "r-cran-janeaustenr"
DATA = "usr/lib/R/site-library/janeaustenr/data"
NOVELS = ("emma", "mansfieldpark", "northangerabbey", "persuasion", "prideprejudice", "sensesensibility")
_QUOTED = re.compile(r'"([^"]+)"')


def paragraphs(lines):
    """The novel's lines joined into paragraphs (NA lines end one too)."""
    out, current = [], []
    for line in lines:
        if line is None or not line.strip():
            if current:
                out.append(" ".join(current))
            current = []
        else:
            current.append(line.strip())
    if current:
        out.append(" ".join(current))
    return out


def speech_sentences(paragraph):
    """The kept sentences of a paragraph's quoted speech, in order."""
    out = []
    for span in _QUOTED.findall(paragraph):
        for s in fortunes.sentences(" ".join(span.split())):
            if "--" not in s and fortunes.plain_sentence(s):
                out.append(s)
    return out


def novel_sentences(novels):
    """[sentence] over the novels ({name: [line]}), in NOVELS order, each once."""
    return fortunes.once(s for name in NOVELS for paragraph in paragraphs(novels[name])
                         for s in speech_sentences(paragraph))


def read_novels(root):
    """{name: [line]} from the package's lazy-load database."""
    folder = os.path.join(root, DATA)
    with open(os.path.join(folder, "Rdata.rdx"), "rb") as f:
        index = r_data.lazy_load_index(f.read())
    with open(os.path.join(folder, "Rdata.rdb"), "rb") as f:
        rdb = f.read()
    missing = [n for n in NOVELS if n not in index]
    if missing:
        raise ValueError("janeaustenr: no %s in its data" % ", ".join(missing))
    return {name: r_data.plain(r_data.lazy_load_value(rdb, index[name], name)) for name in NOVELS}


def download(scratch):
    root, versions = debs.unpack(scratch, [PACKAGE], ["./%s/Rdata.*" % DATA])
    return root, versions[PACKAGE]
