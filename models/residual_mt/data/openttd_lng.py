"""Game texts from OpenTTD (openttd-data; GPL-2): its compiled language
files, lang/english.lng and lang/spanish.lng, string for string ("Build
railway track" / "Construir vías de ferrocarril", news, help texts).

The layout strgen writes (little-endian): a 572-byte header ("LANG", the
version: a hash of the English string list, so two files of one version
number their strings alike; the names, the ISO code, 32 counts of strings
per tab (u16), separators, plural form, genders, cases), then each string:
its length (one byte, or two where the first is 0xC0 or more: the low six
bits are the high byte) and its UTF-8 bytes.  OpenTTD's control codes
(colours, fonts, parameters such as {STRING} and {NUM}) are characters of
the private-use block U+E000-U+E0FF.

A pair is the two files' strings at the same tab and index, only when both
files have the same version; codes at a string's start (colours and fonts)
are removed; a string with a code anywhere else (a parameter), a control
byte, or that clean_pair drops is left out.
"""
import os
import re
import struct

from . import debs, gettext_catalogs
from .binary import Bytes

LICENCE = "GPL-2.0 (openttd-data)"
PACKAGE = "openttd-data"
LANG = "usr/share/games/openttd/lang/%s.lng"
HEADER = 572
TABS = 32
_CODE = "[\ue000-\ue0ff]"
_LEADING = re.compile("^(?:%s|\\s)+" % _CODE)
_BAD = re.compile("%s|[\\x00-\\x1f]" % _CODE)


def read_lng(data):
    """(version, [string]) of a compiled language file (raw, codes kept)."""
    r = Bytes(data, ".lng")
    if r.take(4) != b"LANG":
        raise ValueError(".lng: not an OpenTTD language file")
    version = r.take(4).hex()
    counts = struct.unpack("<%dH" % TABS, r.at(88).take(2 * TABS))
    r.at(HEADER)
    strings = []
    for _ in range(sum(counts)):
        n = r.u8()
        if n >= 0xC0:
            n = ((n & 0x3F) << 8) | r.u8()
        strings.append(r.take(n).decode("utf-8", errors="replace"))
    return version, strings


def plain(text):
    """The string without its leading codes, or None if it holds others."""
    text = _LEADING.sub("", text)
    return None if _BAD.search(text) or not text.strip() else text


def lng_pairs(en_data, es_data):
    """(en, es) of two files of one version, cleaned, sorted, each once."""
    (en_version, en), (es_version, es) = read_lng(en_data), read_lng(es_data)
    if en_version != es_version or len(en) != len(es):
        raise ValueError(".lng: the two files were compiled from different string lists")
    pairs = set()
    for a, b in zip(en, es):
        a, b = plain(a), plain(b)
        if a and b:
            pair, _ = gettext_catalogs.clean_pair(a, b)
            if pair:
                pairs.add(pair)
    return sorted(pairs)


def download(scratch):
    root, versions = debs.unpack(scratch, [PACKAGE], ["./" + LANG % lang for lang in ("english", "spanish")])
    return root, versions[PACKAGE]


def openttd_pairs(root):
    sides = []
    for lang in ("english", "spanish"):
        with open(os.path.join(root, LANG % lang), "rb") as f:
            sides.append(f.read())
    return lng_pairs(*sides)
