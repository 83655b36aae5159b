"""Everyday names from Unicode's CLDR (unicode-cldr-core; Unicode licence):
the text-to-speech name of every emoji and symbol, in English
(common/annotations/en.xml) and Spanish (es.xml), paired by the character
they name: "woman walking" / "mujer caminando", "red apple" / "manzana
roja".  Written by CLDR's translators, not machines.

Each file holds, per character, `<annotation cp="X" type="tts">name
</annotation>` (the name) beside `<annotation cp="X">a | b | c</annotation>`
(search keywords, not used: they are not translations of one another).
A name CLDR marks as a draft not yet agreed (draft="unconfirmed" or
"provisional") is left out; "contributed" and unmarked ones are used.
"""
import xml.etree.ElementTree as ET

from . import debs

LICENCE = "Unicode-DFS-2016 (unicode-cldr-core)"
PACKAGE = "unicode-cldr-core"
ANNOTATIONS = "usr/share/unicode/cldr/common/annotations/%s.xml"
UNAGREED = ("unconfirmed", "provisional")


def tts_names(xml_text):
    """{character: name} of one annotations file."""
    names = {}
    for node in ET.fromstring(xml_text).iter("annotation"):
        if node.get("draft") in UNAGREED or node.text is None or node.text.strip() == "↑↑↑":
            continue  # ↑↑↑: inherited from the parent locale, no text of its own
        if node.get("type") == "tts" and node.get("cp"):
            names[node.get("cp")] = " ".join(node.text.split())
    return names


def name_pairs(en_xml, es_xml):
    """(en, es) of the characters both files name, each pair once, sorted."""
    en, es = tts_names(en_xml), tts_names(es_xml)
    return sorted({(en[c], es[c]) for c in en if c in es and en[c].casefold() != es[c].casefold()})


def download(scratch):
    root, versions = debs.unpack(scratch, [PACKAGE], ["./" + ANNOTATIONS % lang for lang in ("en", "es")])
    return root, versions[PACKAGE]


def cldr_pairs(root):
    sides = []
    for lang in ("en", "es"):
        with open("%s/%s" % (root, ANNOTATIONS % lang), encoding="utf-8") as f:
            sides.append(f.read())
    return name_pairs(*sides)
