"""English sentences from GNU Typist's lessons (gtypist, GPL-3+): the
practice lines of its English series ("Sunday is too soon.  It is not easy
to stay and study this..."), plain everyday sentences written to be typed.
Monolingual: back-translated by Apertium into a synthetic Spanish source,
the human English only ever a target (apertium_bt.py), as Austen's.

A lesson file (.typ) is a list of commands, one a line, "X:text", a line
" :text" continuing the one before.  The drills ("D:", "d:") and speed tests
("S:", "s:") are what the learner types; the tutorial text ("T:"), the
instructions ("I:") and the menus are not read.  A drill's lines are joined
into paragraphs (two spaces part its sentences), split into sentences
(fortunes.sentences) and kept under fortunes.plain_sentence's rules (3 to
25 words, ends in . ! ?, ...) and without a word broken across lines
("pur-" / "chased"), each once.  The letter drills ("asdf ;lkj") end in no
full stop and fall out by those rules.
"""
import os

from . import debs, fortunes

LICENCE = "GPL-3+ (gtypist)"
PACKAGE = "gtypist"
FOLDER = "usr/share/gtypist"
# the English series (gtypist.typ combines them; the others are other
# languages and keyboards)
SERIES = ("q", "r", "s", "t", "u", "v", "m", "n", "d", "c", "demo")
TYPED = ("D", "d", "S", "s")


def typed_texts(text):
    """The drills and speed tests of a lesson file, each one string."""
    out, current = [], None
    for line in text.splitlines():
        command, colon, body = line.partition(":")
        if colon and command == " " and current is not None:
            current.append(body)
            continue
        if current is not None:
            out.append(current)
        current = [body] if colon and command in TYPED else None
    if current is not None:
        out.append(current)
    return out


def paragraphs(lines):
    """A drill's lines joined into paragraphs (an empty line ends one:
    "Dear Sirs:" stands alone)."""
    out, current = [], []
    for line in lines + [""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            out.append(current)
            current = []
    return out


def drill_sentences(lines):
    """The kept sentences of one drill (its lines in order)."""
    out = []
    for paragraph in paragraphs(lines):
        broken = {line.split()[-1] for line in paragraph if line.endswith("-")}
        for s in fortunes.sentences(" ".join(" ".join(paragraph).split())):
            if fortunes.plain_sentence(s) and not any(w in s.split() for w in broken):
                out.append(s)
    return out


def lesson_sentences(texts):
    """[sentence] over the lesson files' texts, in order, each once."""
    return fortunes.once(s for text in texts for lines in typed_texts(text) for s in drill_sentences(lines))


def download(scratch):
    return debs.unpack(scratch, [PACKAGE], ["./%s/%s.typ" % (FOLDER, name) for name in SERIES])


def read_lessons(root):
    texts = []
    for name in SERIES:
        with open(os.path.join(root, FOLDER, name + ".typ"), encoding="utf-8") as f:
            texts.append(f.read())
    return lesson_sentences(texts)
