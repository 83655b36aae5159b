"""Qt's compiled files, read without Qt: a translation catalog (.qm, written
by `lrelease`) and a binary resource bundle (.rcc, written by `rcc
-binary`).  GCompris (gcompris-qt-data; GPL-3+) ships both: its Spanish
catalog (translations/gcompris_es.qm: children's activity instructions and
questions) and, inside rcc/lang.rcc, the word lists of its vocabulary
activity (content-en.json, content-es.json: one everyday word or phrase per
picture, keyed by the picture's sound file).

Layouts (big-endian throughout):
  .qm   16-byte magic, then sections: tag (1 byte), length (u32), bytes.
        Section 0x69 holds the messages, each a run of fields ended by tag
        1: tag 3 a translation (u32 byte length, UTF-16BE; 0xFFFFFFFF for
        none; one per plural form), 6 the source text, 7 the context, 8 the
        comment (u32 length, UTF-8); tags 2, 4 (16-bit texts) and 5, 9
        (obsolete) are read past.
  .rcc  "qres", format version, then the offsets of the tree, the data and
        the names (version 3 adds flags).  Tree nodes are 14 bytes (22 from
        version 2: a modification time): name offset (u32), flags (u16:
        1 zlib, 2 directory, 4 zstd), then a directory's child count and
        first child (u32, u32) or a file's country, language (u16, u16) and
        data offset (u32).  A name is u16 length, u32 hash, UTF-16BE; data
        is u32 length, bytes (zlib: u32 unpacked length, then the stream).
"""
import json
import struct
import zlib

from . import debs, gettext_catalogs
from .binary import Bytes

LICENCE = "GPL-3.0-or-later (gcompris-qt-data)"
PACKAGE = "gcompris-qt-data"
CATALOG = "usr/share/gcompris-qt/translations/gcompris_es.qm"
LANG_RCC = "usr/share/gcompris-qt/rcc/lang.rcc"
WORDS = "/gcompris/src/activities/lang/resource/content-%s.json"

QM_MAGIC = bytes.fromhex("3cb86418caef9c95cd211cbf60a1bddd")
RCC_MAGIC = b"qres"
_QM_MESSAGES = 0x69
_TAG_END, _TAG_TRANSLATION, _TAG_SOURCE, _TAG_CONTEXT, _TAG_COMMENT = 1, 3, 6, 7, 8
_TAG_OBSOLETE1 = 5
_DIRECTORY, _ZLIB, _ZSTD = 2, 1, 4


def read_qm(data):
    """[(context, source, [translations])] of a .qm file's messages."""
    r = Bytes(data, ".qm")
    if r.take(16) != QM_MAGIC:
        raise ValueError(".qm: not a Qt translation file (bad magic)")
    messages = []
    while r.pos < len(data):
        tag, length = r.u8(), r.u32()
        body = r.take(length)
        if tag == _QM_MESSAGES:
            messages += _qm_messages(Bytes(body, ".qm messages"))
    return messages


def _qm_messages(r):
    out, context, source, translations = [], "", "", []
    while r.pos < len(r.data):
        tag = r.u8()
        if tag == _TAG_END:
            out.append((context, source, translations))
            context, source, translations = "", "", []
        elif tag == _TAG_OBSOLETE1:
            r.take(4)
        elif tag == _TAG_TRANSLATION:
            n = r.u32()
            if n != 0xFFFFFFFF:
                translations.append(r.take(n).decode("utf-16-be", errors="replace"))
        elif tag in (_TAG_SOURCE, _TAG_CONTEXT, _TAG_COMMENT) or tag in (2, 4, 9):
            text = r.take(r.u32())
            value = text.decode("utf-8", errors="replace") if tag not in (2, 4) else text.decode("utf-16-be", errors="replace")
            if tag == _TAG_SOURCE or tag == 2:
                source = value
            elif tag == _TAG_CONTEXT or tag == 4:
                context = value
        else:
            raise ValueError(".qm: unknown message field tag %d at byte %d" % (tag, r.pos - 1))
    return out


def read_rcc(data):
    """{path: bytes} of every file in an .rcc bundle (zlib entries unpacked;
    zstd ones are refused by name)."""
    r = Bytes(data, ".rcc")
    if r.take(4) != RCC_MAGIC:
        raise ValueError(".rcc: not a Qt resource bundle (bad magic)")
    version, tree, data_at, names = r.u32(), r.u32(), r.u32(), r.u32()
    if version not in (1, 2, 3):
        raise ValueError(".rcc: format version %d unknown" % version)
    node_size = 14 if version == 1 else 22
    files, todo, seen = {}, [(0, "")], set()
    while todo:
        index, parent = todo.pop()
        if index in seen:
            raise ValueError(".rcc: the tree loops at node %d" % index)
        seen.add(index)
        r.at(tree + index * node_size)
        name_at, flags = r.u32(), r.u16()
        path = parent + ("/" + _rcc_name(r, names + name_at) if index else "")
        r.at(tree + index * node_size + 6)
        if flags & _DIRECTORY:
            count, first = r.u32(), r.u32()
            todo += [(first + k, path) for k in range(count)]
        else:
            r.take(4)  # country, language
            files[path] = _rcc_data(r.at(data_at + r.u32()), flags, path)
    return files


def _rcc_name(r, at):
    r.at(at)
    n = r.u16()
    r.take(4)  # the name's hash
    return r.take(2 * n).decode("utf-16-be")


def _rcc_data(r, flags, path):
    body = r.take(r.u32())
    if flags & _ZSTD:
        raise ValueError(".rcc: %s is zstd-compressed (not read here)" % path)
    if flags & _ZLIB:
        if len(body) < 4:
            raise ValueError(".rcc: %s: truncated" % path)
        out = zlib.decompress(body[4:])
        if len(out) != struct.unpack(">I", body[:4])[0]:
            raise ValueError(".rcc: %s: unpacked size differs from the recorded one" % path)
        return out
    return body


# ---------------------------------------------------------------- GCompris

def catalog_pairs(data):
    """Clean (en, es) pairs of a .qm catalog (gettext_catalogs.clean_pair's
    rules), each once, in file order; plural messages give their first form."""
    pairs, seen = [], set()
    for _, source, translations in read_qm(data):
        if not source or not translations or not translations[0].strip():
            continue
        pair, _ = gettext_catalogs.clean_pair(source, translations[0])
        if pair and pair not in seen:
            seen.add(pair)
            pairs.append(pair)
    return pairs


def word_pairs(bundle):
    """(en, es) of the vocabulary activity: the words of content-en.json and
    content-es.json that share a key, each pair once, sorted."""
    words = {lang: json.loads(bundle[WORDS % lang].decode("utf-8")) for lang in ("en", "es")}
    pairs = set()
    for key, en in words["en"].items():
        es = words["es"].get(key)
        if isinstance(en, str) and isinstance(es, str):
            en, es = " ".join(en.split()), " ".join(es.split())
            if en and es and en.casefold() != es.casefold():
                pairs.add((en, es))
    return sorted(pairs)


def download(scratch):
    """Unpacks the catalog and the bundle from the .deb; returns (root, version)."""
    root, versions = debs.unpack(scratch, [PACKAGE], ["./" + CATALOG, "./" + LANG_RCC])
    return root, versions[PACKAGE]


def gcompris_pairs(root):
    """The catalog's pairs, then the word lists' (both human translations)."""
    with open("%s/%s" % (root, CATALOG), "rb") as f:
        pairs = catalog_pairs(f.read())
    with open("%s/%s" % (root, LANG_RCC), "rb") as f:
        return pairs + word_pairs(read_rcc(f.read()))
