"""Back-translation with Apertium (Debian packages apertium, apertium-eng-spa;
GPL-2+): human monolingual sentences become the TARGET of synthetic pairs
whose source is Apertium's translation.  English sentences -> `apertium
eng-spa` -> synthetic Spanish source of es->en pairs; Spanish sentences ->
`apertium spa-eng` -> synthetic English source of en->es pairs.  Apertium's
output is never a target: build_corpus.py names these sources
"<name>:es-en" / "<name>:en-es" and train.py uses such a pair only in that
direction.

`apertium -f line` translates one sentence per line, so each line is
translated on its own.  It runs without -u, so that the words Apertium does
not know are marked (*word) and can be counted; the marks are then removed,
which is what -u prints.  Dropped: translations with more than
MAX_UNKNOWN_SHARE of their words unknown (mostly untranslated), with
Apertium's generation or transfer error marks (#word, @word), identical to
the input, or with an implausible length ratio.  Spaces Apertium leaves
before punctuation (" , ") are removed, and the source's final . ! or ?,
which `-f line` drops, is put back.
"""
import re
import subprocess

LICENCE = "GPL-2.0-or-later (apertium, apertium-eng-spa); the target side keeps its own source's licence"
PACKAGES = ("apertium", "apertium-eng-spa")
DIRECTION = {"en": "eng-spa", "es": "spa-eng"}  # the human side's language -> apertium mode
MAX_UNKNOWN_SHARE = 0.34
MARK_RE = re.compile(r"(?<!\S)[*#@](?=\w)")
SPACE_BEFORE_PUNCT_RE = re.compile(r"\s+([,;:!?.])(?=\s|$)")


def run_apertium(lines, mode):
    """Apertium's raw output for each line (unknown words marked)."""
    if not lines:
        return []
    text = "\n".join(" ".join(l.split()) for l in lines) + "\n"
    out = subprocess.run(["apertium", "-f", "line", mode], input=text, capture_output=True,
                         text=True, check=True).stdout
    got = out.split("\n")
    if got and got[-1] == "":
        got = got[:-1]
    if len(got) != len(lines):
        raise RuntimeError("apertium %s: %d lines in, %d out" % (mode, len(lines), len(got)))
    return [g.strip() for g in got]


def clean_translation(source, raw):
    """raw Apertium output -> the synthetic sentence, or None when dropped."""
    words = raw.split()
    if not words:
        return None
    if re.search(r"(?<!\S)[#@]\w", raw):
        return None
    unknown = sum(1 for w in words if w.startswith("*") and len(w) > 1)
    if unknown > MAX_UNKNOWN_SHARE * len(words):
        return None
    text = MARK_RE.sub("", raw)
    text = SPACE_BEFORE_PUNCT_RE.sub(r"\1", " ".join(text.split()))
    # `-f line` drops a sentence's final mark: the source's is put back
    end = source.rstrip()[-1:]
    if end in ".!?" and text[-1:] not in ".!?":
        text += end
    if text.casefold() == " ".join(source.split()).casefold():
        return None
    ratio = len(text) / max(1, len(source))
    if not 0.5 <= ratio <= 2.0:
        return None
    return text


def back_translate(sentences, lang):
    """[(en, es)] for human sentences in lang ('en' or 'es'): the human
    sentence on its own side, Apertium's translation on the other; and the
    number dropped."""
    raw = run_apertium(sentences, DIRECTION[lang])
    pairs, dropped = [], 0
    for s, r in zip(sentences, raw):
        t = clean_translation(s, r)
        if t is None:
            dropped += 1
            continue
        pairs.append((s, t) if lang == "en" else (t, s))
    return pairs, dropped
