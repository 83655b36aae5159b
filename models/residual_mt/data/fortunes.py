"""Short sentences from the fortune cookie files of Debian's `fortunes`
(English; BSD licence of the University of California, the quotations
presumed public domain) and `fortunes-es` (Spanish; GPL-2+, the quotations
presumed public domain).  Monolingual: the human side of back-translated
pairs (apertium_bt.py): English fortunes are the targets of es->en pairs,
Spanish fortunes the targets of en->es pairs.

A fortune file is a list of texts separated by lines holding only "%".
Each text: lines joined, the attribution cut ("-- Mark Twain", which
fortunes-es writes as "\t\t-- Aristóteles. (384-322 A.C.) Filósofo
griego."), then split into sentences.  Kept: sentences of MIN_WORDS to
MAX_WORDS words in plain prose, ending in . ! or ?, from texts of at most
MAX_SENTENCES sentences.  Dropped: dialogue and scripts ("Q:", "Bob:"),
verse and art (lines indented or more than MAX_LINES of them), shouting
(words in capitals), URLs, code, e-mail addresses, quotation marks left
open, and the files named in SKIP (computers, Linux, Star Trek, ...: not
everyday language; fortunes-es's off/ directory and refranes, old rhyming
proverbs).  Duplicates are kept once, in file order.
"""
import os
import re

LICENCE_EN = "BSD-4-Clause-UC (fortunes; quotations presumed public domain)"
LICENCE_ES = "GPL-2.0-or-later (fortunes-es; quotations presumed public domain)"
FORTUNE_DIR = "/usr/share/games/fortunes"
EN_FILES = ("cookie", "education", "food", "fortunes", "humorists", "kids", "law", "literature",
            "love", "magic", "medicine", "miscellaneous", "people", "pets", "platitudes",
            "science", "sports", "wisdom", "work")
ES_SKIP = ("informatica.fortunes", "refranes.fortunes", "varios.fortunes-pre")
MIN_WORDS = 3
MAX_WORDS = 25
MAX_SENTENCES = 4
MAX_LINES = 6
ATTRIBUTION_RE = re.compile(r"^\s*(--|―|—)\s*\S")
SPEAKER_RE = re.compile(r"^\s*[A-Z][\w.' ]{0,20}:\s")
SENT_END_RE = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[¿¡\"'(]?[A-ZÁÉÍÓÚÑ])")
ABBREV_RE = re.compile(r"\b(Mr|Mrs|Ms|Dr|St|Jr|Sr|Sra|Srta|Dra|etc|vs|Prof|No|Vd|Ud|Uds|p\.ej)\.$")
CAPS_RE = re.compile(r"\b[A-ZÁÉÍÓÚÑ]{3,}\b")
BAD_RE = re.compile(r"https?:|www\.|@|[{}<>|\\_#*=~^`$]|\.\.|\s'\S+'\s*$|[0-9]{5,}")
LETTERS_RE = re.compile(r"^[A-Za-zÀ-ÿ0-9 ,;:.!?¿¡'\"()\-]+$")


def read_fortunes(path):
    """The texts of one fortune file (each a list of its lines)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        data = f.read()
    out, cur = [], []
    for line in data.split("\n"):
        if line.strip() == "%":
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(line.rstrip())
    if any(l.strip() for l in cur):
        out.append(cur)
    return [[l for l in t if l.strip()] for t in out if any(l.strip() for l in t)]


def fortune_text(lines):
    """The text without its attribution, lines joined; None for verse,
    dialogue, art and other layouts that are not prose."""
    body = []
    for line in lines:
        if ATTRIBUTION_RE.match(line):
            break
        body.append(line)
    if not body or len(body) > MAX_LINES:
        return None
    if any(SPEAKER_RE.match(l) for l in body):
        return None
    # indented continuation lines are verse or art (the first may be indented)
    if any(l.startswith(("\t", "  ")) for l in body[1:]):
        return None
    return " ".join(" ".join(body).split())


def sentences(text):
    """text split into sentences (abbreviations respected)."""
    parts = SENT_END_RE.split(text)
    out = []
    for p in parts:
        if out and ABBREV_RE.search(out[-1]):
            out[-1] = out[-1] + " " + p
        else:
            out.append(p)
    return [s.strip() for s in out if s.strip()]


def plain_sentence(s):
    words = s.split()
    if not (MIN_WORDS <= len(words) <= MAX_WORDS) or s[-1] not in ".!?":
        return False
    if BAD_RE.search(s) or not LETTERS_RE.match(s) or CAPS_RE.search(s):
        return False
    if s.count('"') % 2 or s.count("(") != s.count(")"):
        return False
    return bool(re.match(r"^[¿¡\"'(]?[A-ZÁÉÍÓÚÑ]", s))


def once(sentences):
    """The sentences in order, each once (the first of those equal but for case)."""
    out, seen = [], set()
    for s in sentences:
        if s.casefold() not in seen:
            seen.add(s.casefold())
            out.append(s)
    return out


def fortune_sentences(paths):
    """[sentence] kept from the fortune files, in order, each once."""
    def kept():
        for path in paths:
            for lines in read_fortunes(path):
                text = fortune_text(lines)
                sents = [] if text is None else sentences(text)
                if len(sents) <= MAX_SENTENCES:
                    yield from filter(plain_sentence, sents)
    return once(kept())


def english_files(fortune_dir=FORTUNE_DIR):
    return [os.path.join(fortune_dir, n) for n in EN_FILES if os.path.exists(os.path.join(fortune_dir, n))]


def spanish_files(fortune_dir=FORTUNE_DIR):
    d = os.path.join(fortune_dir, "es")
    return [os.path.join(d, n) for n in sorted(os.listdir(d))
            if os.path.isfile(os.path.join(d, n)) and not n.endswith((".dat", ".u8"))
            and n not in ES_SKIP] if os.path.isdir(d) else []
