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
  principio", "Y HABLÓ Jehová") and some words for emphasis ("Yo soy
  JEHOVÁ"); a single all-caps word takes its usual written form (a casing
  table of the corpus itself), inscriptions in capitals in both texts stay.
* Reina-Valera appends the old subscriptions to the last verse of Paul's
  letters and Hebrews ("Amén. A Filemón fué enviada de Roma por
  Onésimo, siervo."); they are cut.
"""
import re
import unicodedata

from .books import CANON

# Longest names first, so "I John" is preferred to "John" at one position.
_BOOK_ALT = "|".join(re.escape(b) for b in sorted(CANON, key=len, reverse=True))
REF_RE = re.compile(r"(?:^|(?<=\s))(" + _BOOK_ALT + r") (\d+):(\d+): ")
NOTE_RE = re.compile(r"<note\b[^>]*>.*?</note>|<note\b[^>]*/>", re.S)
TITLE_RE = re.compile(r"<title\b[^>]*>.*?</title>", re.S)
TAG_RE = re.compile(r"<[^>]*>")
# WEB appends its glossary to the last verse of Revelation.
GLOSSARY_MARK = " The following words used in the World English Bible"
SPACE_BEFORE_CLOSE_RE = re.compile(r"\s+([,.;:!?\u201d\u2019)\]])")
CAPS_WORD_RE = re.compile(r"(?<!\w)[A-ZÁÉÍÓÚÑÜ]{2,}(?!\w)")
# Psalm 119's acrostic letters, capitals in both translations: kept
HEBREW_LETTERS = {
    "ALEPH", "BETH", "GIMEL", "DALETH", "HE", "VAU", "VAV", "ZAIN", "ZAYIN", "CHETH", "HETH",
    "TETH", "JOD", "YODH", "CAPH", "KAPH", "KAPF", "LAMED", "LAMEDH", "MEM", "NUN", "SAMECH",
    "SAMEKH", "AIN", "AYIN", "PE", "TZADDI", "TZADHE", "COPH", "QOPH", "RESH", "SCHIN", "SIN",
    "SHIN", "TAU", "TAV"}
SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;]\s+|[¿¡«\u201c\u2018(]\s*)$")
# The subscriptions Reina-Valera appends to Paul's letters and Hebrews
# ("Amén. Escrita de Roma á los Efesios por Tichîco."): not in the English
EPISTLES = {"Romans", "I Corinthians", "II Corinthians", "Galatians", "Ephesians",
            "Philippians", "Colossians", "I Thessalonians", "II Thessalonians",
            "I Timothy", "II Timothy", "Titus", "Philemon", "Hebrews"}
SUBSCRIPTION_RE = re.compile(r"(?<=Amén\.)\s+[^.]*\b(?:[Ee]scrita|[Ee]nviada)\b.*$")


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


def strip_accents(word):
    w = unicodedata.normalize("NFD", word)
    return "".join(c for c in w if unicodedata.category(c) != "Mn")


def casing_table(texts):
    """word (upper case, accents stripped) -> its most frequent written form
    outside capitals runs and sentence starts: the evidence for re-casing
    an all-caps word ("JEHOVÁ" -> "Jehová", "JESUS" -> "Jesús", "HABLÓ" ->
    "habló")."""
    counts = {}
    for text in texts:
        for m in re.finditer(r"\w+", text):
            w = m.group(0)
            if len(w) < 2 or w.isupper() or SENTENCE_START_RE.search(text[:m.start()]):
                continue
            key = strip_accents(w).upper()
            forms = counts.setdefault(key, {})
            forms[w] = forms.get(w, 0) + 1
    return {k: max(sorted(v), key=v.get) for k, v in counts.items()}


def recase_caps(text, table):
    """Single all-caps words (Reina-Valera's chapter openings "Y HABLÓ
    Jehová", emphatic "Yo soy JEHOVÁ") take their usual written form, with a
    capital at a sentence start.  Runs of two or more capitals words are
    inscriptions, in capitals in both translations ("MENE, MENE, TEKEL",
    "SANTIDAD Á JEHOVÁ" / "HOLY TO YAHWEH"), and are kept, as are Psalm 119's
    acrostic letters."""
    words = list(CAPS_WORD_RE.finditer(text))
    out, last = [], 0
    for k, m in enumerate(words):
        w = m.group(0)
        neighbours = [words[j] for j in (k - 1, k + 1)
                      if 0 <= j < len(words) and words[j].group(0) not in HEBREW_LETTERS]
        in_run = any(re.fullmatch(r"[\s,;:.!?¿¡]*(?:[A-ZÁÉÍÓÚÑÜ][\s,;:.!?¿¡]+)?",
                                  text[min(n.end(), m.end()):max(n.start(), m.start())])
                     for n in neighbours)
        if in_run or w in HEBREW_LETTERS:
            continue
        form = table.get(strip_accents(w), w.lower())
        if SENTENCE_START_RE.search(text[:m.start()]):
            form = form[0].upper() + form[1:]
        out.append(text[last:m.start()])
        out.append(form)
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def strip_subscription(book, text, is_last_verse):
    """Reina-Valera's subscription after the closing 'Amén.' of an epistle."""
    if book in EPISTLES and is_last_verse:
        return SUBSCRIPTION_RE.sub("", text)
    return text


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


def clean_verses(dump, recase=True, keep_book=None):
    """Returns a list of (book, chapter, verse, text) for the 66 canonical
    books (or those keep_book accepts), in order, psalm titles kept once (on
    the verse they belong to), epistle subscriptions cut, all-caps words
    re-cased with a casing table of the kept books."""
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
        if keep_book is None or keep_book(book):
            out.append((book, ch, vs, text))
    last = {}
    for i, (book, _, _, _) in enumerate(out):
        last[book] = i
    out = [(b, c, v, strip_subscription(b, t, last[b] == i)) for i, (b, c, v, t) in enumerate(out)]
    if recase:
        table = casing_table(t for _, _, _, t in out)
        out = [(b, c, v, recase_caps(t, table)) for b, c, v, t in out]
    return out
