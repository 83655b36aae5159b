"""Word pairs from the FreeDict Spanish-English and English-Spanish
dictionaries (Debian packages dict-freedict-spa-eng, dict-freedict-eng-spa;
GPL-2+).  Short pairs that widen the vocabulary.

A dictd database is an index (headword TAB base64 offset TAB base64 length)
and a dictzip'ed text (gzip-compatible).  An entry is the headword line
("casa /kˈasa/", the pronunciation dropped), then one sense per line,
numbered ("1. río Amazonas") when there are several, alternatives separated
by commas.  Each headword gives one pair per sense (its first alternative),
at most MAX_SENSES.  Dropped: the 00database* entries, translations whose
spaces were lost in the source ("LittleSnowWhite", "FeastofTabernacles"),
notes in parentheses, and pairs without letters.
"""
import gzip
import re

LICENCE = "GPL-2.0-or-later (FreeDict)"
DICT_DIR = "/usr/share/dictd"
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
MAX_SENSES = 3
GLUED_RE = re.compile(r"[a-záéíóúñ][A-ZÁÉÍÓÚÑ]")
SENSE_NUM_RE = re.compile(r"^\s*\d+\.\s*")
PRON_RE = re.compile(r"\s*/[^/]*/\s*$")
PAREN_RE = re.compile(r"\s*\([^)]*\)")


def b64_number(s):
    n = 0
    for c in s:
        n = n * 64 + B64.index(c)
    return n


def read_entries(index_path, dict_path):
    """[(headword, entry text)] in index order."""
    with gzip.open(dict_path, "rb") as f:
        data = f.read()
    out = []
    with open(index_path, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or parts[0].startswith("00database") or parts[0].startswith("00-database"):
                continue
            off, size = b64_number(parts[1]), b64_number(parts[2])
            out.append((parts[0], data[off:off + size].decode("utf-8", errors="replace")))
    return out


def entry_senses(text):
    """(headword as printed, [first alternative of each sense])."""
    lines = [l for l in text.split("\n") if l.strip()]
    if not lines:
        return None, []
    head = PRON_RE.sub("", lines[0]).strip()
    senses = []
    for line in lines[1:]:
        line = SENSE_NUM_RE.sub("", line)
        line = PAREN_RE.sub("", line).strip()
        first = line.split(",")[0].split(";")[0].strip()
        if first:
            senses.append(first)
    return head, senses


def usable(word):
    return bool(re.search(r"[^\W\d_]", word)) and not GLUED_RE.search(word) and len(word.split()) <= 6


def dictionary_pairs(from_lang, to_lang, dict_dir=DICT_DIR):
    """[(en, es)] from the from_lang->to_lang dictionary."""
    code = {"es": "spa", "en": "eng"}
    name = "%s/freedict-%s-%s" % (dict_dir, code[from_lang], code[to_lang])
    pairs = []
    for _, text in read_entries(name + ".index", name + ".dict.dz"):
        head, senses = entry_senses(text)
        if not head or not usable(head):
            continue
        seen = set()
        for s in senses[:MAX_SENSES]:
            if not usable(s) or s.lower() in seen or s.lower() == head.lower():
                continue
            seen.add(s.lower())
            pairs.append((head, s) if from_lang == "en" else (s, head))
    return pairs
