"""Word and hint pairs from KDE's vocabulary files (kdeedu-kvtml-data;
GPL-2+): themed lists (animals, clothing, fruits ...) in KVTML 2 (XML), one
file per language, whose entries share their ids across the English file
and its Spanish translation: "bear" / "oso", and the hint "Large heavy
animal with thick fur" / "Un animal grande y pesado, con una piel muy
gruesa".

Only the pairs of files known to be translations of each other, entry for
entry (THEMES, English name -> Spanish name), are read, and only when both
files hold the same entry ids: where the counts differ the ids drift
("hairdresser" / "mecánico" in professions).  Left out: the hangman lists
(easy, medium, hard: the Spanish ones are lists of their own, "innuendo" /
"compromiso"), and people and worldcapitals (names written in lower case).
"""
import os
import xml.etree.ElementTree as ET

from . import debs, gettext_catalogs

LICENCE = "GPL-2.0-or-later (kdeedu-kvtml-data)"
PACKAGE = "kdeedu-kvtml-data"
FOLDER = "usr/share/apps/kvtml"
THEMES = {"animals": "animals", "clothing": "prendas", "computers": "computadoras", "currencies": "monedas",
          "fruits": "frutas", "inventions": "inventos", "numbers": "numeros", "objects": "objetos",
          "professions": "professiones", "space": "espacio", "sports": "deportes",
          "transportation": "transportes", "vegetables": "vegetales"}


def entries(xml_text):
    """{entry id: (text, comment)} of a KVTML 2 file's first translation."""
    out = {}
    for entry in ET.fromstring(xml_text).iter("entry"):
        translation = entry.find("translation")
        if translation is not None:
            out[entry.get("id")] = tuple(" ".join((translation.findtext(tag) or "").split())
                                         for tag in ("text", "comment"))
    return out


def file_pairs(en_xml, es_xml):
    """(en, es) words and hints of two files whose entries match id for id;
    nothing where their ids differ."""
    en, es = entries(en_xml), entries(es_xml)
    if set(en) != set(es):
        return []
    pairs = []
    for key in en:
        for a, b in zip(en[key], es[key]):
            if a and b and a.casefold() != b.casefold():
                pair, _ = gettext_catalogs.clean_pair(a, b)
                if pair:
                    pairs.append(pair)
    return pairs


def kvtml_pairs(root):
    """The THEMES' pairs, sorted, each once."""
    pairs = set()
    for en, es in THEMES.items():
        sides = []
        for lang, name in (("en", en), ("es", es)):
            with open(os.path.join(root, FOLDER, lang, name + ".kvtml"), encoding="utf-8") as f:
                sides.append(f.read())
        pairs.update(file_pairs(*sides))
    return sorted(pairs)


def download(scratch):
    root, versions = debs.unpack(scratch, [PACKAGE], ["./%s/en/*.kvtml" % FOLDER, "./%s/es/*.kvtml" % FOLDER])
    return root, versions[PACKAGE]
