"""Human phrases from Minetest's game (minetest-data; its mods' texts:
LGPL-2.1+, media CC BY-SA 3.0): each mod's locale/<mod>.es.tr, Minetest's
own translation format: "# textdomain: NAME", then one "English=Spanish"
line per string.  Item names and short game messages ("Locked Chest" /
"Cofre cerrado", "You do not own this chest.").

Escapes: "@=" is a literal "=", "@@" a literal "@", "@n" a line break, and
"@1" ... "@9" the string's parameters.  The split is at the first "=" that
is not escaped; strings with parameters (placeholders are not language),
untranslated lines and pairs clean_pair drops are left out.
"""
import os
import re

from . import debs, gettext_catalogs

LICENCE = "LGPL-2.1-or-later, media CC-BY-SA-3.0 (minetest-data)"
PACKAGE = "minetest-data"
PATTERN = "*/locale/*.es.tr"
_ESCAPE = re.compile(r"@(.)")


def _unescape(text):
    """The text of one side, or None where it holds a parameter."""
    if re.search(r"@[1-9]", text):
        return None
    return _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def _split(line):
    """(source, translation) at the first unescaped '=', or None."""
    i = 0
    while i < len(line):
        if line[i] == "@":
            i += 2
        elif line[i] == "=":
            return line[:i], line[i + 1:]
        else:
            i += 1
    return None


def parse_tr(text):
    """[(en, es)] of one .tr file, raw (escapes resolved), in file order."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = _split(line)
        if parts is None:
            continue
        en, es = (_unescape(side) for side in parts)
        if en and es and es.strip():
            out.append((en, es))
    return out


def tr_pairs(root):
    """Clean pairs of every .es.tr below root, sorted, each once."""
    pairs = set()
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".es.tr"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    for en, es in parse_tr(f.read()):
                        pair, _ = gettext_catalogs.clean_pair(en, es)
                        if pair:
                            pairs.add(pair)
    return sorted(pairs)


def download(scratch):
    root, versions = debs.unpack(scratch, [PACKAGE], [PATTERN])
    return root, versions[PACKAGE]
