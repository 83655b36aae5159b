"""Everyday words and short sentences in many languages from Debian packages,
for the language identifier: the register software messages lack (the
things of a day, children's instructions, game chat), which short inputs
such as "Mia sorella ha" or "Har du lyst" need.

Sources (each under its package's licence; models/langid/README.md), read
with the translation corpus's readers (models/residual_mt/data/), every
language a file has instead of Spanish alone:
  cldr      unicode-cldr-core: the text-to-speech name of every emoji and
            symbol ("red apple", "woman walking"), common/annotations/LANG.xml;
  tuxpaint  tuxpaint-stamps-default: each stamp's description ("A camel."),
            its LOCALE.utf8= lines;
  kvtml     kdeedu-kvtml-data: themed vocabulary (animals, clothing, fruits...)
            and its hints, usr/share/apps/kvtml/LANG/*.kvtml;
  minetest  minetest-data: the game's item names and messages, */locale/MOD.LANG.tr;
  gcompris  gcompris-qt-data: the activities' instructions and questions
            (translations/gcompris_LANG.qm) and the vocabulary activity's
            words (rcc/lang.rcc: content-LANG.json);
  dialogue  what the characters of two story games say to each other (The
            Battle for Wesnoth's campaigns, FreedroidRPG's conversations):
            every language's catalog of them (DIALOGUE_CATALOGS).
Each source gives a language at most SOURCE_CAP strings (by hash), so that
no one source's register (GCompris's "click on the..." or a campaign's
story) is most of a language's everyday text: with Norwegian Nynorsk's 4,026
GCompris strings against none for Bokmal, everyday Bokmal, Danish and
Swedish sentences went to Nynorsk.
English: each source's English side.  el-Latn, hi-Latn, ja-Latn: the Greek,
Hindi and Japanese strings in Latin letters (build_data.py's add_romanized).

Held out by string: a string whose hash falls into [0, 10) of 100 is test
text (these sources are one package each, so there is no package to hold
out).  Cleaning: build_data.py's (placeholders, markup, accelerators; strings
in the wrong script dropped).

Usage: python3 models/langid_everyday_sources.py SCRATCH
The .debs are downloaded into SCRATCH/debs (`apt-get download`) and only the
files read are unpacked into SCRATCH/debs/root (kakasi into SCRATCH/kakasi).  Writes
SCRATCH/everyday/{train,test}/LANG.txt ("source<TAB>text" lines), which
train.py adds to the language's training strings (--everyday).
"""
import fnmatch
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
from ..data import cldr_annotations, debs, kvtml, minetest_tr, qt_resources, tuxpaint_stamps  # noqa: E402
from ..stable import stable_hash  # noqa: E402
from . import build_data  # noqa: E402

TEST_SHARE = 10  # of 100, by the string's hash
SOURCE_CAP = 2000  # strings of one source in one language, before the held-out split
GCOMPRIS_QM = "usr/share/gcompris-qt/translations/gcompris_%s.qm"
ANNOTATIONS_DIR = "usr/share/unicode/cldr/common/annotations"
DIALOGUE_PACKAGES = ["freedroidrpg-data"] + ["wesnoth-1.16-" + c for c in
                                             "did dm dw ei httt l low nr sof sota sotbe thot trow tsg ttb utbs".split()]
DIALOGUE_CATALOGS = ["*/LC_MESSAGES/freedroidrpg-dialogs.mo", "*/LC_MESSAGES/wesnoth-*.mo"]
# CLDR's and GCompris's locale names that are not plain language codes
LOCALES = {"zh": "zh-Hans", "zh_Hant": "zh-Hant", "zh_TW": "zh-Hant", "zh_CN": "zh-Hans", "sr_Latn": "sr-Latn",
           "sr@latin": "sr-Latn", "pt_BR": "pt", "pt_PT": "pt", "en": "en"}


def tag_of(locale):
    """Our tag of a locale name, or None for a variant not kept (en_GB, sr@ijekavian, ...)."""
    if locale in LOCALES:
        return LOCALES[locale]
    if not re.fullmatch(r"[a-z]{2,3}", locale):
        return None
    return build_data.bcp47(locale)


def cldr_texts(root):
    out = {}
    folder = os.path.join(root, ANNOTATIONS_DIR)
    for name in sorted(os.listdir(folder)):
        tag = tag_of(name[:-4]) if name.endswith(".xml") else None
        if tag:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                out.setdefault(tag, set()).update(cldr_annotations.tts_names(f.read()).values())
    return out


def stamp_texts(root):
    """Each stamp description's lines: the first (English), then LOCALE.utf8= ones."""
    out = {}
    for folder, _, files in os.walk(os.path.join(root, tuxpaint_stamps.STAMPS)):
        for name in sorted(files):
            if not name.endswith(".txt"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                lines = [line for line in f.read().splitlines() if line.strip()]
            if lines and not tuxpaint_stamps._LOCALE_LINE.match(lines[0]):
                out.setdefault("en", set()).add(lines[0])
            for line in lines:
                m = tuxpaint_stamps._LOCALE_LINE.match(line)
                tag = m and tag_of(m.group(1).split("_")[0] if m.group(1) not in LOCALES else m.group(1))
                if tag:
                    out.setdefault(tag, set()).add(m.group(2))
    return out


def kvtml_texts(root):
    out = {}
    base = os.path.join(root, kvtml.FOLDER)
    for locale in sorted(os.listdir(base)):
        tag = tag_of(locale)
        for name in sorted(os.listdir(os.path.join(base, locale))) if tag else []:
            if name.endswith(".kvtml"):
                with open(os.path.join(base, locale, name), "rb") as f:  # bytes: XML declares its encoding
                    try:
                        entries = kvtml.entries(f.read())
                    except ET.ParseError:  # a file or two the package ships broken: skipped
                        continue
                for word, hint in entries.values():
                    out.setdefault(tag, set()).update(t for t in (word, hint) if t)
    return out


def minetest_texts(root):
    out = {}
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            parts = name.split(".")
            tag = tag_of(parts[-2]) if len(parts) >= 3 and parts[-1] == "tr" else None
            if tag:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    for english, text in minetest_tr.parse_tr(f.read()):
                        out.setdefault(tag, set()).add(text)
                        out.setdefault("en", set()).add(english)
    return out


def gcompris_texts(root):
    out = {}
    folder = os.path.dirname(os.path.join(root, GCOMPRIS_QM))
    for name in sorted(os.listdir(folder)):
        tag = tag_of(name[len("gcompris_"):-3]) if name.endswith(".qm") else None
        if tag and tag != "en":
            with open(os.path.join(folder, name), "rb") as f:
                for _, source, translations in qt_resources.read_qm(f.read()):
                    if translations and translations[0].strip():
                        out.setdefault(tag, set()).add(translations[0])
                        out.setdefault("en", set()).add(source)
    with open(os.path.join(root, qt_resources.LANG_RCC), "rb") as f:
        bundle = qt_resources.read_rcc(f.read())
    for path, data in sorted(bundle.items()):
        m = re.fullmatch(re.escape(qt_resources.WORDS).replace("%s", "(.+)"), path)
        tag = m and tag_of(m.group(1))
        if tag:
            out.setdefault(tag, set()).update(w for w in json.loads(data.decode("utf-8")).values() if isinstance(w, str))
    return out


def dialogue_texts(root):
    """Each catalog's translations under its language's tag (gettext locale
    names, as build_data.bcp47 reads them); English from the msgids."""
    out = {}
    for folder, _, files in os.walk(root):
        tag = build_data.bcp47(os.path.basename(os.path.dirname(folder))) if folder.endswith("LC_MESSAGES") else None
        for name in sorted(files) if tag else []:
            if not any(fnmatch.fnmatch(os.path.join(folder, name), p) for p in DIALOGUE_CATALOGS):
                continue
            with open(os.path.join(folder, name), "rb") as f:
                for english, text in build_data.mo_entries(f.read()):
                    if text.strip() != english.strip():  # untranslated strings are English
                        out.setdefault(tag, set()).add(text)
                        out.setdefault("en", set()).add(english)
    return out


# source: ([its packages], [the tar wildcards of the files read], reader of the unpacked root)
SOURCES = {
    "cldr": ([cldr_annotations.PACKAGE], ["./%s/*.xml" % ANNOTATIONS_DIR], cldr_texts),
    "tuxpaint": ([tuxpaint_stamps.PACKAGE], ["./%s/*.txt" % tuxpaint_stamps.STAMPS], stamp_texts),
    "kvtml": ([kvtml.PACKAGE], ["./%s/*.kvtml" % kvtml.FOLDER], kvtml_texts),
    "minetest": ([minetest_tr.PACKAGE], ["*.tr"], minetest_texts),
    "gcompris": ([qt_resources.PACKAGE], ["./" + GCOMPRIS_QM % "*", "./" + qt_resources.LANG_RCC], gcompris_texts),
    "dialogue": (DIALOGUE_PACKAGES, DIALOGUE_CATALOGS, dialogue_texts),
}


def cleaned(tag, texts):
    out = set()
    for text in texts:
        s = build_data.clean(" ".join(text.split()))
        if s and build_data.script_fits(tag, s):
            out.add(s)
    return out


def kept(tag, texts):
    """A source's strings in one language as trained on: cleaned, at most
    SOURCE_CAP of them (the same ones on every run: by hash)."""
    return sorted(cleaned(tag, texts), key=stable_hash)[:SOURCE_CAP]


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        sys.exit(2)
    scratch = sys.argv[1]
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    by_lang = {}  # tag -> (source, split) -> strings, as build_data.py's
    for source, (packages, patterns, read) in SOURCES.items():
        root, _ = debs.unpack(os.path.join(scratch, "debs"), packages, patterns)
        for tag, texts in sorted(read(root).items()):
            for s in kept(tag, texts):
                split = "test" if stable_hash(s) % 100 < TEST_SHARE else "train"
                by_lang.setdefault(tag, {}).setdefault((source, split), set()).add(s)
        log("%s: %d languages" % (source, len(by_lang)))
    build_data.add_romanized(by_lang, scratch, log)  # el-Latn, hi-Latn, ja-Latn: each string's split
    for split in ("train", "test"):
        os.makedirs(os.path.join(scratch, "everyday", split), exist_ok=True)
    for tag, parts in sorted(by_lang.items()):
        for split in ("train", "test"):
            with open(os.path.join(scratch, "everyday", split, tag + ".txt"), "w", encoding="utf-8") as f:
                for (source, part), strings in sorted(parts.items()):
                    f.writelines("%s\t%s\n" % (source, s) for s in sorted(strings) if part == split)


if __name__ == "__main__":
    main()
