"""Telephone prompts from Asterisk's core sounds (asterisk-core-sounds-en,
-es; CC-BY-SA-3.0): the transcript of each recorded prompt, English and
Spanish, paired by the recording's name ("agent-pass: Please enter your
password followed by the pound key." / "... Por favor ingrese su contrasena
seguida por la tecla de numero").

The Spanish transcripts are written without accents or ñ ("contrasena",
"numero"), as many people type.  So the pairs are used in one direction
only, es -> en (named "asterisk:es-en" in train.src, as back-translations
are): the unaccented Spanish is only ever a source, never a target the
model would learn to write.  Bracketed sound descriptions ("[ascending
tones]") and pairs clean_pair drops are left out.
"""
import gzip
import os
import re

from . import debs, gettext_catalogs

LICENCE = "CC-BY-SA-3.0 (asterisk-core-sounds-en, asterisk-core-sounds-es)"
PACKAGES = {"en": "asterisk-core-sounds-en", "es": "asterisk-core-sounds-es"}
TRANSCRIPT = "usr/share/doc/asterisk-core-sounds-%s/core-sounds-%s.txt.gz"
_LINE = re.compile(r"^([\w/.-]+):\s*(.*)$")


def transcripts(text):
    """{recording name: text} of one transcript file."""
    out = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m and not line.startswith(";") and m.group(2).strip() and "[" not in m.group(2):
            out[m.group(1)] = " ".join(m.group(2).split())
    return out


def prompt_pairs(en_text, es_text):
    """(en, es) of the recordings both transcripts hold, cleaned, sorted, once."""
    en, es = transcripts(en_text), transcripts(es_text)
    pairs = set()
    for name in en.keys() & es.keys():
        pair, _ = gettext_catalogs.clean_pair(en[name], es[name])
        if pair:
            pairs.add(pair)
    return sorted(pairs)


def download(scratch):
    root, versions = debs.unpack(scratch, list(PACKAGES.values()),
                                 ["./" + TRANSCRIPT % (lang, lang) for lang in PACKAGES])
    return root, versions  # {package: version}: two packages


def asterisk_pairs(root):
    sides = []
    for lang in ("en", "es"):
        with gzip.open(os.path.join(root, TRANSCRIPT % (lang, lang)), "rt", encoding="utf-8") as f:
            sides.append(f.read())
    return prompt_pairs(*sides)
