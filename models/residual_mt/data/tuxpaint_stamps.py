"""Human parallel phrases from Tux Paint's stamps (Debian package
tuxpaint-stamps-default; GPL-2): each stamp has a description file, its
first line the English description ("A camel.", "A bunny with an Easter
egg."), then one line per translation, "LOCALE.utf8=TEXT" (Tux Paint's
format: the program shows the line of the user's locale).  Everyday words
in short sentences, translated by people, in both directions.

A pair is the English line and the "es.utf8=" line; pairs pass
descriptions.fits() and are kept once.  Read from the .deb, unpacked into a
scratch directory (nothing installed).
"""
import os
import re

from . import debs, descriptions

LICENCE = "GPL-2.0 (tuxpaint-stamps-default)"
PACKAGE = "tuxpaint-stamps-default"
STAMPS = "usr/share/tuxpaint/stamps"
_LOCALE_LINE = re.compile(r"^([A-Za-z]{2,3}(?:_[A-Za-z]{2})?(?:@[A-Za-z]+)?)\.utf8=(.*)$")


def description_pair(text):
    """(en, es) from a stamp's description file, or None without a Spanish line."""
    english, spanish = None, None
    for line in text.splitlines():
        m = _LOCALE_LINE.match(line)
        if m:
            if m.group(1) == "es":
                spanish = " ".join(m.group(2).split())
        elif english is None and line.strip():
            english = " ".join(line.split())
    if english and spanish and descriptions.fits(english, spanish):
        return english, spanish
    return None


def stamp_pairs(root):
    """[(en, es)] over every description file, sorted, each pair once."""
    pairs = set()
    for folder, _, files in os.walk(os.path.join(root, STAMPS)):
        for name in files:
            if name.endswith(".txt"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    pair = description_pair(f.read())
                if pair:
                    pairs.add(pair)
    return sorted(pairs)


def download(scratch):
    """Unpacks the stamps' .deb into scratch; returns (root, version)."""
    root, versions = debs.unpack(scratch, [PACKAGE], ["./%s/*.txt" % STAMPS])
    return root, versions[PACKAGE]
