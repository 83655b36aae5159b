"""Parsing and cleaning of diatheke's OSIS verse dump (stdlib only).

diatheke -b MOD -f OSIS -o f -k "Gen 1:1-Rev 22:21" prints one verse per
line as "<Book> <chapter>:<verse>: <osis markup>".  Quirks handled here:

* WEB (engWEB2015eb) prints the current psalm title (or Psalm 119's
  acrostic letter) in front of the reference, and keeps repeating it on every
  later line, even in later books.  A prefix is kept (as the start of the
  verse, where Reina-Valera has the title too) only in Psalms and only on
  the line where it first changes; otherwise it is dropped.
* Footnotes (<note>...</note>) are removed with their text.  Dropping them
  naively glues words ("God<note>..</note><w>created</w>" -> "Godcreated"),
  so a note becomes a space, and the space is removed again before closing
  punctuation.
* Other tags (<w lemma=..>, <milestone/>, <title>, <lg>, <l>) are dropped,
  keeping their text; Strong's numbers live only in attributes, so none leak.
* WEB's glossary is glued to Rev 22:21; it is cut off.
* Reina-Valera prints a chapter's first word in capitals ("EN el
  principio"); an all-caps word followed by a lower-case word is
  re-cased ("En el principio").
"""
import re

from books import CANON

# Longest names first, so "I John" is preferred to "John" at one position.
_BOOK_ALT = "|".join(re.escape(b) for b in sorted(CANON, key=len, reverse=True))
REF_RE = re.compile(r"(?:^|(?<=\s))(" + _BOOK_ALT + r") (\d+):(\d+): ")
NOTE_RE = re.compile(r"<note\b[^>]*>.*?</note>|<note\b[^>]*/>", re.S)
TITLE_RE = re.compile(r"<title\b[^>]*>.*?</title>", re.S)
TAG_RE = re.compile(r"<[^>]*>")
# WEB appends its glossary to the last verse of Revelation.
GLOSSARY_MARK = " The following words used in the World English Bible"
SPACE_BEFORE_CLOSE_RE = re.compile(r"\s+([,.;:!?\u201d\u2019)\]])")
CAPS_WORD_RE = re.compile(r"(?<![\w])([A-ZÁÉÍÓÚÑÜ]{2,})(?=\s+[a-záéíóúñü])")


def strip_notes(text):
    """Removes footnotes without gluing the neighbouring words."""
    text = NOTE_RE.sub(" ", text)
    return text


def strip_markup(text):
    """Footnotes and titles removed, tags dropped, spaces normalised."""
    text = strip_notes(text)
    text = TITLE_RE.sub(" ", text)
    text = TAG_RE.sub("", text)
    text = text.replace("\u00a0", " ")
    text = " ".join(text.split())
    text = SPACE_BEFORE_CLOSE_RE.sub(r"\1", text)
    return text


def fix_drop_caps(text):
    """'EN el principio' -> 'En el principio'; 'ALEPH. BIENAVENTURADOS los' ->
    'ALEPH. Bienaventurados los' (only caps words followed by lower case)."""
    return CAPS_WORD_RE.sub(lambda m: m.group(1)[0] + m.group(1)[1:].lower(), text)


def parse_osis(dump):
    """Yields (book, chapter, verse, prefix, raw_body) for each verse line.

    prefix is whatever precedes the reference on its line (WEB's psalm
    titles), raw_body the markup after it.
    """
    for line in dump.split("\n"):
        m = REF_RE.search(line)
        if not m:
            continue
        # the body ends where another reference starts (never seen, but safe)
        rest = line[m.end():]
        m2 = REF_RE.search(rest)
        if m2:
            rest = rest[:m2.start()]
        yield m.group(1), int(m.group(2)), int(m.group(3)), line[:m.start()], rest


def clean_verses(dump, recase_caps=True):
    """Returns a list of (book, chapter, verse, text) for the 66 canonical
    books, in order, psalm titles kept once (on the verse they belong to)."""
    out = []
    prev_prefix = ""
    for book, ch, vs, prefix, body in parse_osis(dump):
        prefix_clean = strip_markup(prefix)
        text = strip_markup(body)
        if prefix_clean and prefix_clean != prev_prefix and book == "Psalms":
            text = (prefix_clean + " " + text).strip()
        prev_prefix = prefix_clean
        cut = text.find(GLOSSARY_MARK)
        if cut >= 0:
            text = text[:cut]
        if recase_caps:
            text = fix_drop_caps(text)
        out.append((book, ch, vs, text))
    return out
