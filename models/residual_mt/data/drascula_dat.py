"""Comic dialogue from Drascula: The Vampire Strikes Back (scummvm-data's
drascula.dat, GPL-2+ as the package's copyright file gives it): the lines
the characters say, the object names and the verbs, English and Spanish
(the game's original language) side by side.

drascula.dat is written by ScummVM's create_drascula tool (version byte 6):
"DRASCULA", the version, thirteen tables of numbers (each a big-endian
uint16 count of fixed-size records), a uint16 language count, then text
tables to the end of the file.  A text table is a uint16 string count and,
for each language in turn (English first, Spanish second), a uint16 byte
total, two bytes of padding and the strings, each a uint16 entry size (its
own two bytes included) then the NUL-terminated CP850 text, zero-padded to
4 bytes.  The string at index i of one table is the same line in every
language.

The text is mostly in capitals ("IT'S TOO TOUGH FOR ME") and the Spanish
mostly without accents ("¿Que hago? ¿La arranco?").  Capitals are re-cased
with the forms the file itself writes in its mixed-case lines (the names
"Igor", "Drascula"), lower case otherwise; and, as for Asterisk's prompts,
the pairs are used es -> en only ("drascula:es-en" in train.src): the
unaccented Spanish is never a target.
"""
import os
import re

from . import binary, clean, debs, gettext_catalogs

LICENCE = "GPL-2+ (scummvm-data's copyright, its Files: * stanza, which drascula.dat falls under)"
PACKAGE = "scummvm-data"
DAT = "usr/share/scummvm/drascula.dat"
VERSION = 6
# record sizes of the number tables before the text (char map, item
# locations, polygons, verb bar, menu, frames, candles, pianist, drunk,
# pre-updates, updates, room actions, talk sequences)
NUMBER_TABLES = (4, 4, 4, 2, 4, 2, 4, 2, 2, 20, 20, 10, 8)
ENGLISH, SPANISH = 0, 1
_WORD = re.compile(r"\w+")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)[¿¡\"'(]*$")  # "IGOR, ¿DONDE" -> "Igor, ¿donde"
# The game writes the pronouns "you" (English) and "yo" (Spanish) with three
# and two bytes of its own ("\xfd\xd5\xd9" read as CP850: "ýÕÙ", "ýÕ"),
# and a space in some lines as "º" (the char map gives it the space's glyph).
_PRONOUN = re.compile("\u00fd\u00d5\u00d9?")
_OTHER = re.compile(r"[^\x20-\x7eáéíóúñüÁÉÍÓÚÑÜ¿¡]")


def text_tables(data):
    """[[strings of language 0], [of language 1], ...] per text table."""
    if data[:8] != b"DRASCULA" or len(data) < 9 or data[8] != VERSION:
        raise ValueError("drascula.dat: not a version-%d file" % VERSION)
    r = binary.Bytes(data, "drascula.dat").at(9)
    for size in NUMBER_TABLES:
        r.take(r.u16() * size)
    languages = r.u16()
    tables = []
    while r.pos < len(data):
        count = r.u16()
        table = []
        for _ in range(languages):
            total, start = r.u16(), r.pos
            r.take(2)
            strings = [r.take(max(0, r.u16() - 2)).split(b"\0")[0].decode("cp850") for _ in range(count)]
            if r.pos - start != total:
                raise ValueError("drascula.dat: a text table's size is %d, not %d" % (r.pos - start, total))
            table.append(strings)
        tables.append(table)
    return tables


def is_capitals(text):
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) >= 0.9 * len(letters)


def recase(text, table):
    """A line in capitals in the forms of table (clean.casing_table of the
    file's mixed-case lines), a capital at each sentence start; "I" stays."""
    def form(m):
        w = m.group(0)
        out = w if w == "I" else table.get(clean.strip_accents(w).upper(), w.lower())
        if _SENTENCE_START.search(text[:m.start()]):
            out = out[0].upper() + out[1:]
        return out
    return _WORD.sub(form, text) if is_capitals(text) else text


def plain_text(text):
    """The game's own letters written as text; None if others are left."""
    text = " ".join(text.replace("\u00ba", " ").split())
    caps = is_capitals(_PRONOUN.sub("", text))
    def pronoun(m):
        word = "you" if len(m.group(0)) == 3 else "yo"
        return word.upper() if caps else word
    text = _PRONOUN.sub(pronoun, text)
    return None if _OTHER.search(text) else text


def dialogue_pairs(data):
    """(en, es) of every line both languages hold, re-cased and cleaned, once, sorted."""
    tables = [[[plain_text(s) or "" for s in side] for side in table] for table in text_tables(data)]
    mixed = [s for table in tables for side in table for s in side if s.strip() and not is_capitals(s)]
    casing = clean.casing_table(mixed)
    pairs = set()
    for table in tables:
        for en, es in zip(table[ENGLISH], table[SPANISH]):
            if not en or not es:
                continue
            pair, _ = gettext_catalogs.clean_pair(recase(en, casing), recase(es, casing))
            if pair:
                pairs.add(pair)
    return sorted(pairs)


def download(scratch):
    return debs.unpack(scratch, [PACKAGE], ["./" + DAT])


def drascula_pairs(root):
    with open(os.path.join(root, DAT), "rb") as f:
        return dialogue_pairs(f.read())
