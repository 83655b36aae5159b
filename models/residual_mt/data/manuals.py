"""Human parallel prose from Debian's manuals shipped in English and Spanish
as HTML built from one DocBook source: the Debian Administrator's Handbook
(debian-handbook), the installation guide (installation-guide-amd64) and
Debian Reference (debian-reference-en, debian-reference-es).

Each translation is made from PO files generated from the English source
(po4a, Publican), which keep the document's structure: the n-th paragraph,
title, list item or table cell of an English page is the n-th of its
Spanish page.  A page whose Spanish copy has a different number of units is
skipped (gnome_help.align_units, which also splits a paragraph into
sentences when both sides have as many).  Preformatted blocks (<pre>:
programs, screens), index terms and the navigation are not text; inline
markup (<code>, <span class="command">, links) is kept as its text, as the
translators kept it.

Read from the .debs, unpacked into a scratch directory (nothing installed).
"""
import html.parser
import os

from . import debs, gnome_help

# package: (English directory, Spanish directory, Spanish name of an English page)
MANUALS = {
    "debian-handbook": ("usr/share/doc/debian-handbook/html/en-US", "usr/share/doc/debian-handbook/html/es-ES",
                        lambda name: name),
    "installation-guide-amd64": ("usr/share/doc/installation-guide-amd64/en",
                                 "usr/share/doc/installation-guide-amd64/es", lambda name: name),
    "debian-reference": ("usr/share/debian-reference", "usr/share/debian-reference",
                         lambda name: name.replace(".en.html", ".es.html") if name.endswith(".en.html") else None),
}
# the .debs each manual is read from
PACKAGES = {"debian-handbook": ["debian-handbook"], "installation-guide-amd64": ["installation-guide-amd64"],
            "debian-reference": ["debian-reference-en", "debian-reference-es"]}
LICENCE = ("GPL-2.0-or-later or CC-BY-SA-3.0 (debian-handbook); GPL-2.0 (installation-guide-amd64); "
           "GPL-2.0-or-later (debian-reference)")

UNIT_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "li", "td", "th", "caption"}
SKIP_TAGS = {"pre", "script", "style", "head"}
SKIP_CLASSES = {"indexterm", "programlisting", "screen", "literallayout", "synopsis", "cmdsynopsis",
                "navheader", "navfooter", "docnav", "toc", "legalnotice"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class _Units(html.parser.HTMLParser):
    """Collects the units' text; a unit nested in another (a list inside a
    paragraph) is a unit of its own, numbered where it starts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []       # (tag, kind): kind "skip", a unit's index, or None
        self.units = []
        self.open_units = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in VOID_TAGS:
            return
        classes = set((dict(attrs).get("class") or "").split())
        kind = None
        if tag in SKIP_TAGS or classes & SKIP_CLASSES:
            kind = "skip"
            self.skipping += 1
        elif not self.skipping and (tag in UNIT_TAGS or (tag == "div" and "para" in classes)):
            kind = len(self.units)
            self.units.append([])
            self.open_units.append(kind)
        self.stack.append((tag, kind))

    def handle_endtag(self, tag):
        # HTML may leave an end tag out: close everything opened since the matching start
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                break
        else:
            return
        while len(self.stack) > i:
            _, kind = self.stack.pop()
            if kind == "skip":
                self.skipping -= 1
            elif kind is not None:
                self.open_units.remove(kind)

    def handle_data(self, data):
        if self.open_units and not self.skipping:
            self.units[self.open_units[-1]].append(data)


def page_units(html_text):
    """The text of each unit of a page, in document order (whitespace folded;
    a unit with no text is kept, so that both sides count alike)."""
    parser = _Units()
    parser.feed(html_text)
    parser.close()
    return [" ".join("".join(parts).split()) for parts in parser.units]


def manual_pairs(root, manual):
    """{page: [(en, es)]} for one manual unpacked under root."""
    en_rel, es_rel, es_name = MANUALS[manual]
    en_dir, es_dir = os.path.join(root, en_rel), os.path.join(root, es_rel)
    out = {}
    if not (os.path.isdir(en_dir) and os.path.isdir(es_dir)):
        return out
    for name in sorted(os.listdir(en_dir)):
        other = es_name(name) if name.endswith(".html") else None
        if not other or not os.path.exists(os.path.join(es_dir, other)):
            continue
        with open(os.path.join(en_dir, name), encoding="utf-8") as f:
            en = page_units(f.read())
        with open(os.path.join(es_dir, other), encoding="utf-8") as f:
            es = page_units(f.read())
        pairs = gnome_help.align_units(en, es)  # empty units fail its length rules
        if pairs:
            out["%s/%s" % (manual, name[:-5])] = pairs
    return out


def download(scratch):
    """Unpacks every manual's .debs into scratch/root; returns (root, {package: version})."""
    pages = sorted({"./%s/*.html" % folder for en, es, _ in MANUALS.values() for folder in (en, es)})
    return debs.unpack(scratch, [p for packages in PACKAGES.values() for p in packages], pages)


def all_pairs(root):
    """{page: [(en, es)]} over every manual."""
    out = {}
    for manual in MANUALS:
        out.update(manual_pairs(root, manual))
    return out
