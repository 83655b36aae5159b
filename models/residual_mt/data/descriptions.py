"""Spanish and English Debian package descriptions, aligned by sentence.

`apt-get -o Acquire::Languages=es,en update` brings the Translation-es and
Translation-en indexes of the archive (DDTP, the Debian Description
Translation Project; licence: the descriptions come from the packages'
control files, under each package's licence).  build_corpus.py runs it with
a private Dir::State::Lists so that the machine's own lists are untouched.
Entries are paired by Description-md5 (the md5 of the English original),
then aligned:

  * the short descriptions (first lines) form one pair;
  * the long descriptions are split into paragraphs (" ." lines); when both
    sides have the same number of paragraphs, each paragraph pair is split
    into items (bullet lines; a list's lead line is a segment of its own)
    or sentences, and paired one to one when the counts agree (identical
    segments, such as names, are skipped); otherwise a paragraph of at most MAX_WORDS words on both
    sides is kept whole; anything else is dropped.
"""
import re
import subprocess

LICENCE = "each description under its package's licence (DDTP translations: same terms)"
MAX_WORDS = 60
BULLET_RE = re.compile(r"^\s*(?:[*+o\u2022-]|\d+[.)])\s+")
# A sentence ends at . ! ? followed by a space and an upper-case letter (or an
# opening sign), except after common abbreviations and single initials.
SENT_END_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(¿¡«\u201c]?[A-ZÁÉÍÓÚÑÜ])")
ABBREV_RE = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|Dr|Mr|Mrs|Sr|Sra|p\.ej|ej|aprox|approx|no|núm|"
                       r"Inc|Ltd|a\.C|d\.C|A\.C|D\.C|U\.S)\.|\b[A-Z]\.)$")


def read_index(path):
    """Text of an apt list file, whatever its compression."""
    return subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], capture_output=True,
                          check=True).stdout.decode("utf-8", errors="replace")


def parse_translations(text, lang):
    """{md5: (package, short, [paragraph lines...])}, first entry per md5."""
    out = {}
    key = "Description-%s:" % lang
    for block in text.split("\n\n"):
        pkg = md5 = None
        desc_lines = None
        for line in block.split("\n"):
            if line.startswith("Package:"):
                pkg = line.split(":", 1)[1].strip()
            elif line.startswith("Description-md5:"):
                md5 = line.split(":", 1)[1].strip()
            elif line.startswith(key):
                desc_lines = [line[len(key):].strip()]
            elif desc_lines is not None and line.startswith(" "):
                desc_lines.append(line[1:])
        if pkg and md5 and desc_lines and md5 not in out:
            out[md5] = (pkg, desc_lines[0], paragraphs(desc_lines[1:]))
    return out


def paragraphs(lines):
    """Long-description lines -> paragraphs, each a list of its lines."""
    paras, cur = [], []
    for line in lines:
        if line.strip() == ".":
            if cur:
                paras.append(cur)
            cur = []
        else:
            cur.append(line)
    if cur:
        paras.append(cur)
    return paras


def segments(para_lines):
    """A paragraph's items (when it is a list) or sentences."""
    if any(BULLET_RE.match(l) for l in para_lines):
        items, cur = [], []
        for line in para_lines:
            if BULLET_RE.match(line):
                if cur:
                    items.append(" ".join(cur))
                cur = [BULLET_RE.sub("", line, count=1)]
            else:
                cur.append(line.strip())
        if cur:
            items.append(" ".join(cur))
        return [" ".join(i.split()) for i in items if i.strip()]
    return split_sentences(" ".join(" ".join(para_lines).split()))


def split_sentences(text):
    parts, start = [], 0
    for m in SENT_END_RE.finditer(text):
        if ABBREV_RE.search(text[start:m.start()]):
            continue
        parts.append(text[start:m.start()].strip())
        start = m.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def fits(en, es):
    a, b = len(en), len(es)
    if not a or not b or en.casefold() == es.casefold():
        return False
    return 0.5 <= b / a <= 2.2 and len(en.split()) <= MAX_WORDS and len(es.split()) <= MAX_WORDS


def align_description(en, es):
    """[(en, es)] for one description (en and es as parse_translations gives)."""
    pairs = []
    if fits(en[1], es[1]):
        pairs.append((en[1], es[1]))
    if len(en[2]) != len(es[2]):
        return pairs
    for pe, ps in zip(en[2], es[2]):
        se, ss = segments(pe), segments(ps)
        if len(se) == len(ss):
            pairs.extend((a, b) for a, b in zip(se, ss) if fits(a, b))
        else:
            a, b = " ".join(se), " ".join(ss)
            if fits(a, b):
                pairs.append((a, b))
    return pairs


def description_pairs(en_text, es_text):
    """{package: [(en, es)]} over all Spanish descriptions with an English
    original, in index order."""
    en = parse_translations(en_text, "en")
    es = parse_translations(es_text, "es")
    out = {}
    for md5, es_desc in es.items():
        if md5 in en:
            pairs = align_description(en[md5], es_desc)
            if pairs:
                out.setdefault(es_desc[0], []).extend(pairs)
    return out
