"""Human parallel prose from GNOME's desktop help (Debian package
gnome-user-docs; CC-BY-SA 3.0): the English Mallard pages
(/usr/share/help/C/<guide>/*.page) and their Spanish translations
(/usr/share/help/es/<guide>/*.page), aligned by structure.

The translations are made with itstool, which keeps each page's XML
structure and translates it unit by unit, so the n-th title, desc, p or
item of the English page is the n-th of the Spanish one.  A page whose
Spanish copy has a different number of units is skipped.  Units inside
<info> (credits, links) other than <desc>, code, screens and
comments are not text; inline markup (<gui>, <key>, <link>, ...) is
flattened to its text.  A paragraph is split into sentences when both
sides have the same number of them, and kept whole otherwise; pairs pass
descriptions.fits() (length ratio, at most 60 words, not identical).

Read from the .deb, unpacked into a scratch directory (nothing installed).
"""
import os
import xml.etree.ElementTree as ET

from . import debs, descriptions

LICENCE = "CC-BY-SA-3.0 (gnome-user-docs)"
PACKAGE = "gnome-user-docs"
GUIDES = ("gnome-help", "system-admin-guide")
MAL = "{http://projectmallard.org/1.0/}"
UNITS = {"title", "desc", "p"}
SKIP = {"code", "screen", "info", "media", "comment", "credit", "link", "revision",
        "{http://www.w3.org/2001/XInclude}include"}


def _local(tag):
    return tag.split("}", 1)[1] if tag.startswith(MAL) else tag


def page_units(xml_text):
    """The text of each translation unit of a page, in document order."""
    root = ET.fromstring(xml_text)
    out = []

    def walk(el, in_info):
        for child in el:
            if not isinstance(child.tag, str):
                continue
            name = _local(child.tag)
            if name == "info":
                walk(child, True)
                continue
            if name in UNITS and (not in_info or name == "desc"):
                # a <p> holding block children (lists) is not a unit itself
                if any(isinstance(c.tag, str) and _local(c.tag) in ("list", "steps", "terms", "table")
                       for c in child):
                    walk(child, in_info)
                    continue
                out.append(" ".join("".join(child.itertext()).split()))
            elif name not in SKIP and not in_info:
                walk(child, in_info)
    walk(root, False)
    return out


def align_units(en_units, es_units):
    """[(en, es)] from two pages' units (none when the counts differ)."""
    if len(en_units) != len(es_units):
        return []
    pairs = []
    for a, b in zip(en_units, es_units):
        sa, sb = descriptions.split_sentences(a), descriptions.split_sentences(b)
        if len(sa) == len(sb) and len(sa) > 1:
            pairs.extend((x, y) for x, y in zip(sa, sb) if descriptions.fits(x, y))
        elif descriptions.fits(a, b):
            pairs.append((a, b))
    return pairs


def download(scratch):
    """Unpacks gnome-user-docs's .deb into scratch; returns (root, version)."""
    root, versions = debs.unpack(scratch, [PACKAGE])
    return root, versions[PACKAGE]


def help_pairs(root):
    """{guide/page: [(en, es)]} over the pages present in both languages."""
    out = {}
    for guide in GUIDES:
        c_dir = os.path.join(root, "usr/share/help/C", guide)
        es_dir = os.path.join(root, "usr/share/help/es", guide)
        if not (os.path.isdir(c_dir) and os.path.isdir(es_dir)):
            continue
        for name in sorted(os.listdir(c_dir)):
            if not name.endswith(".page") or not os.path.exists(os.path.join(es_dir, name)):
                continue
            with open(os.path.join(c_dir, name), encoding="utf-8") as f:
                en = f.read()
            with open(os.path.join(es_dir, name), encoding="utf-8") as f:
                es = f.read()
            try:
                pairs = align_units(page_units(en), page_units(es))
            except ET.ParseError:
                continue
            if pairs:
                out["%s/%s" % (guide, name[:-5])] = pairs
    return out
