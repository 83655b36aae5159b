"""Text in many languages from Debian packages, for the language identifier.

Sources (each under its package's licence; see models/langid/README.md):
  gettext       every language's catalogs (*/LC_MESSAGES/*.mo) in the .debs of
                models/data/gettext-packages.txt (the translation corpus's
                packages, downloaded with `apt-get download` as
                models/residual_mt/data/gettext_catalogs.py does); the translations
                (msgstr) for each language, the msgids for English.
  descriptions  Debian's package description translations (DDTP's
                Translation-xx indexes, `apt-get -o Acquire::Languages=...
                update` into a private list folder).
  fortunes      the fortune-cookie packages (fortunes, fortunes-min and
                fortunes-xx in 12 languages: quotations, proverbs, jokes,
                poems), `apt-get download` + `dpkg -x` into SCRATCH/fortunes;
                literary and everyday text, which the other two lack.
  zu, mi        the Zulu and Maori catalogs of every package in
                zu-mi-packages.txt (read with the gettext ones, as gettext).
  romanized     el-Latn, hi-Latn, ja-Latn: the Greek, Hindi and Japanese
                text above in Latin letters as people type it (romanize.py;
                Debian's kakasi for Japanese, unpacked into SCRATCH/kakasi),
                each string in the split of the string it is made from.

Held out by package: a package whose name hashes into [0, 10) of 100 is
test text, every other package training text (zu and mi: by string, see
resplit_by_string).  A fortune package is one
language's whole collection, so its unit is the fortune file instead (in a
package of fewer than 5 files: blocks of 50 consecutive fortunes).  Deterministic: no randomness
but hashes of the text; fixed orders.  The .mo files are read straight from
the .deb's data (dpkg-deb --fsys-tarfile, streamed): nothing is installed or
unpacked to disk; each package's strings are cached in SCRATCH/mo/.

Usage: python3 models/langid_build_data.py [SCRATCH]   (default /work/scratch/langid)
Writes SCRATCH/{train,test}/LANG.txt (one string a line) and SCRATCH/stats.json.
"""
import gzip
import json
import multiprocessing
import os
import re
import struct
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
from ..data import fortunes, gettext_catalogs as gc  # noqa: E402
from ..stable import stable_hash  # noqa: E402
from . import romanize  # noqa: E402

TRAIN_CAP = 40000      # strings per language and source in training
TEST_CAP = 1500        # per language and source held out
MAX_DEB_BYTES = 40 << 20  # bigger .debs are art and game data: slow to read, few strings
# Share of the packages read (chosen by hash, in percent): reading every
# catalog of every package takes an hour on two cores, for little more text.
PACKAGE_SHARE = 40
# Languages too rare in that share, read from every package that ships them
EXTRA_LANGS = {"zu", "mi"}
EXTRA_LIST = os.path.join(HERE, "zu-mi-packages.txt")
EXTRA_TEST_SHARE = 12  # percent of their sentences held out (resplit_by_string)
# The romanized languages and the text each is made from
ROMANIZED = {"el-Latn": "el", "hi-Latn": "hi", "ja-Latn": "ja"}
KAKASI_PACKAGES = ("kakasi", "libkakasi2", "kakasi-dic")
DDTP_LANGS = ("ca cs da de el eo es eu fi fr gl hr hu id it ja km ko nb nl pl pt pt_BR ro ru sk sl "
              "sr sv tr uk vi zh_CN zh_TW").split()


def split_of(package):
    return "test" if stable_hash("pkg:" + package) % 100 < 10 else "train"


# ---------------------------------------------------------------- tags

# gettext folder names that are not their BCP 47 tag's language subtag
ALIASES = {"iw": "he", "in": "id", "ji": "yi", "no": "nb", "tl": "fil", "zh_CN": "zh-Hans",
           "zh_SG": "zh-Hans", "zh_TW": "zh-Hant", "zh_HK": "zh-Hant", "sr@latin": "sr-Latn",
           "sr@Latn": "sr-Latn", "sr_RS@latin": "sr-Latn", "pt_BR": "pt", "nb_NO": "nb", "nn_NO": "nn"}


def bcp47(folder):
    """The tag of a gettext locale folder name (pt_BR -> pt, sr@latin ->
    sr-Latn, zh_TW -> zh-Hant), or None for a variant we do not keep (en_GB:
    English is the msgids; be@latin, ...)."""
    if folder in ALIASES:
        return ALIASES[folder]
    m = re.fullmatch(r"([a-z]{2,3})(?:_[A-Z]{2})?(?:\.[\w-]+)?(@\w+)?", folder)
    if not m or m.group(1) == "en" or (m.group(2) and m.group(2) not in ("@valencia",)):
        return None
    if m.group(1) == "zh":
        return None  # zh without a region names no script
    return ALIASES.get(m.group(1), m.group(1))


# Languages written in a script other than Latin: a string of theirs that is
# mostly Latin letters is an untranslated (English) string.
NON_LATIN = set("am ar as be bg bn bo dz el fa gu he hi hy ja ka kk km kn ko ky lo mk ml mn mr my ne "
                "or pa ps ru si sr ta te tg th ti ug uk ur yi zh-Hans zh-Hant".split())
LATIN_LETTER_RE = re.compile(r"[A-Za-z\u00c0-\u024f]")


# ---------------------------------------------------------------- cleaning

def clean(s):
    """One catalog string as text: placeholders, accelerators and markup out;
    None when it is not language (an identifier, a path, usage text, ...)."""
    if "\ufffd" in s or s.strip().lower() in gc.CREDITS or gc.URL_RE.search(s):
        return None
    s = gc.strip_markup(gc.FORMAT_RE.sub(" ", s))
    if s is None:
        return None
    s = gc.normalise_space(gc.strip_accelerators(s))
    letters = len(gc.LETTER_RE.findall(s))
    if letters < 2 or gc.OPTION_RE.search(s) or gc.looks_like_identifier(s) or len(s) > 400:
        return None
    return s


def script_fits(lang, s):
    if lang not in NON_LATIN:
        return True
    letters = len(gc.LETTER_RE.findall(s))
    return len(LATIN_LETTER_RE.findall(s)) * 2 < letters


# ---------------------------------------------------------------- gettext

def mo_entries(data):
    """(msgid, msgstr) of a binary catalog (GNU .mo: magic, counts, offset
    tables), the header and plural forms beyond the first dropped."""
    if len(data) < 28:
        return []
    for order in ("<", ">"):
        magic, _, n, orig, trans = struct.unpack(order + "5I", data[:20])
        if magic == 0x950412de:
            break
    else:
        return []
    raw = []
    for k in range(n):
        ol, oo = struct.unpack(order + "2I", data[orig + 8 * k: orig + 8 * k + 8])
        tl, to = struct.unpack(order + "2I", data[trans + 8 * k: trans + 8 * k + 8])
        raw.append((data[oo:oo + ol], data[to:to + tl]))
    charset = "utf-8"
    for mid, mstr in raw:
        if mid == b"":
            charset = gc.po_charset(mstr)
    out = []
    for mid, mstr in raw:
        if not mid or not mstr:
            continue
        mid = mid.split(b"\x00")[0].split(b"\x04")[-1]  # context (\x04) and plurals (\x00) off
        out.append((mid.decode(charset, "replace"), mstr.split(b"\x00")[0].decode(charset, "replace")))
    return out


def package_strings(deb):
    """{lang: [strings]} of one .deb's catalogs ('en': the msgids)."""
    out, english = {}, {}
    unpack = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    with tarfile.open(fileobj=unpack.stdout, mode="r|") as tar:
        for member in tar:
            parts = member.name.split("/")
            if not member.isfile() or len(parts) < 3 or parts[-2] != "LC_MESSAGES" or not parts[-1].endswith(".mo"):
                continue
            lang = bcp47(parts[-3])
            if lang is None:
                continue
            for mid, mstr in mo_entries(tar.extractfile(member).read()):
                if mstr.strip() == mid.strip():
                    continue  # untranslated
                text = clean(mstr)
                if text and script_fits(lang, text):
                    out.setdefault(lang, []).append(text)
                if mid not in english:  # every language's catalog repeats the msgids
                    english[mid] = clean(mid)
    english = [s for s in english.values() if s]
    if english:
        out["en"] = english
    unpack.stdout.close()
    unpack.wait()
    return {lang: sorted(set(v)) for lang, v in out.items()}


def cached_package(args):
    deb, cache = args
    path = os.path.join(cache, os.path.basename(deb) + ".json.gz")
    if not os.path.exists(path):
        try:
            strings = package_strings(deb)
        except (tarfile.TarError, OSError) as e:
            strings = {"_error": [str(e)]}
        with gzip.open(path + ".tmp", "wt", encoding="utf-8") as f:
            json.dump(strings, f, ensure_ascii=False)
        os.replace(path + ".tmp", path)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return os.path.basename(deb).split("_")[0], json.load(f)


def read_debs(packages, scratch, log, label):
    """{package: {lang: [strings]}} of the packages' catalogs (their .debs
    downloaded when missing, as build_corpus.py does; those over MAX_DEB_BYTES skipped)."""
    debs_dir = os.environ.get("RMT_DEBS") or "/work/scratch/build/debs"
    debs, missing = gc.download(packages, debs_dir)
    if missing:
        log("%s: %d packages not downloadable" % (label, len(missing)))
    paths = [d for p, d in sorted(debs.items()) if os.path.getsize(d) <= MAX_DEB_BYTES]
    cache = os.path.join(scratch, "mo")
    os.makedirs(cache, exist_ok=True)
    out = {}
    with multiprocessing.Pool(2) as pool:
        for k, (pkg, strings) in enumerate(pool.imap(cached_package, [(p, cache) for p in paths], chunksize=4)):
            strings.pop("_error", None)
            out[pkg] = strings
            if k % 200 == 0:
                log("%s: %d/%d packages" % (label, k, len(paths)))
    return out


def gettext_source(scratch, log):
    """{package: {lang: [strings]}}: the share of the corpus's packages read
    (only those are downloaded: 0.9 GB of the list's 2.6 GB), and the zu and
    mi catalogs of the packages that ship them."""
    shared = [p for p in gc.read_package_list() if stable_hash("share:" + p) % 100 < PACKAGE_SHARE]
    out = read_debs(shared, scratch, log, "gettext")
    for pkg, langs in read_debs(gc.read_package_list(EXTRA_LIST), scratch, log, "zu, mi").items():
        for lang in EXTRA_LANGS & set(langs):
            out.setdefault(pkg, {})[lang] = sorted(set(out.get(pkg, {}).get(lang, [])) | set(langs[lang]))
    return out


# ---------------------------------------------------------------- descriptions

def descriptions_source(scratch, log):
    """{package: {lang: [strings]}} from DDTP's Translation-xx indexes."""
    lists = os.path.join(scratch, "apt-lists")
    os.makedirs(os.path.join(lists, "partial"), exist_ok=True)
    subprocess.run(["apt-get", "-q", "-o", "Dir::State::Lists=" + lists,
                    "-o", "Acquire::Languages=" + ",".join(DDTP_LANGS + ["en"]),
                    "-o", "Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false",
                    "update"], check=True, capture_output=True)
    out = {}
    for name in sorted(os.listdir(lists)):
        # apt writes the name's "_" as %5f: Translation-pt%5fBR.lz4
        m = re.search(r"_bookworm_main_i18n_Translation-([A-Za-z_]+)", name.replace("%5f", "_"))
        if not m or name.endswith(".diff"):
            continue
        code = m.group(1)
        lang = "en" if code == "en" else bcp47(code)
        if lang is None:
            continue
        text = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", os.path.join(lists, name)],
                              capture_output=True, check=True).stdout.decode("utf-8", "replace")
        for pkg, lines in description_blocks(text, code):
            out.setdefault(pkg, {}).setdefault(lang, []).extend(lines)
        log("descriptions: %s" % code)
    return out


def description_blocks(text, code):
    key = "Description-%s:" % code
    for block in text.split("\n\n"):
        pkg, lines = None, []
        for line in block.split("\n"):
            if line.startswith("Package:"):
                pkg = line.split(":", 1)[1].strip()
            elif line.startswith(key):
                lines.append(line[len(key):].strip())
            elif lines and line.startswith(" ") and line.strip() != ".":
                lines.append(line.strip())
        # a long description's lines are wrapped sentences: one line per sentence
        body = " ".join(lines[1:])
        segments = lines[:1] + [s for s in re.split(r"(?<=[.!?。])\s+", body) if s]
        segments = [" ".join(s.split()) for s in segments if len(gc.LETTER_RE.findall(s)) >= 2 and len(s) <= 400]
        if pkg and segments:
            yield pkg, segments


# ---------------------------------------------------------------- fortunes

# Each fortune package's language; fortunes-cs holds Czech and Slovak, each
# file in cs/ and the Slovak ones linked from sk/ (fortune_languages).
FORTUNE_PACKAGES = {"fortunes": "en", "fortunes-min": "en", "fortunes-bg": "bg", "fortunes-br": "pt",
                    "fortunes-cs": None, "fortunes-de": "de", "fortunes-eo": "eo", "fortunes-es": "es",
                    "fortunes-ga": "ga", "fortunes-it": "it", "fortunes-pl": "pl", "fortunes-ru": "ru",
                    "fortunes-zh": "zh-Hans"}  # fortunes-zh: simplified characters (checked: 这 8,578 times, 這 640)
FORTUNE_BLOCK = 50
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")  # fortunes-zh colours its titles


def fortune_texts(path):
    """One fortune file's texts (residual_mt.data.fortunes reads the file):
    colour codes and the attribution ("-- Author") out, lines joined; a text
    of more than 400 characters is cut into its sentences (those of at most
    400 kept). Verse and other layouts stay: any text tells its language."""
    out = []
    for lines in fortunes.read_fortunes(path):
        body = []
        for line in lines:
            if fortunes.ATTRIBUTION_RE.match(line):
                break
            body.append(ANSI_RE.sub("", line))
        text = " ".join(" ".join(body).split())
        pieces = [text] if len(text) <= 400 else re.split(r"(?<=[.!?。！？])\s+", text)
        out.append([p for p in pieces if p and len(p) <= 400])
    return out


def mostly_letters(s):
    """Prose, not ASCII art or code: letters are at least half its visible characters."""
    visible = len(s) - s.count(" ")
    return visible > 0 and len(gc.LETTER_RE.findall(s)) * 2 >= visible


def fortune_languages(base):
    """{file: language} of a two-language package: the folder that links to a
    file names its language (sk/klasik-sk -> cs/klasik-sk), else its own
    folder; cz/ (links to every Czech file) is cs."""
    tag = {"cz": "cs"}
    out = {}
    for folder, _, names in sorted(os.walk(base)):
        for name in names:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, base)
            if os.path.islink(path):
                folder_tag = rel.split(os.sep)[0]
                out[os.path.relpath(os.path.realpath(path), os.path.realpath(base))] = tag.get(folder_tag, folder_tag)
            else:
                out.setdefault(rel, rel.split(os.sep)[0])
    return out


def fortune_units(package, root):
    """{unit: {lang: [strings]}} of one unpacked fortune package: a unit per
    file, or per block of FORTUNE_BLOCK fortunes where it has few files."""
    base = os.path.join(root, "usr", "share", "games", "fortunes")
    files = []
    for folder, _, names in sorted(os.walk(base)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            if not name.endswith(".dat") and not os.path.islink(path):  # .u8 and cz/ are links
                files.append(os.path.relpath(path, base))
    languages = None if FORTUNE_PACKAGES[package] else fortune_languages(base)
    out = {}
    for rel in files:
        lang = FORTUNE_PACKAGES[package] or languages[rel]
        for k, pieces in enumerate(fortune_texts(os.path.join(base, rel))):
            unit = "fortunes:%s/%s" % (package, rel) if len(files) >= 5 else \
                "fortunes:%s/%s#%d" % (package, rel, k // FORTUNE_BLOCK)
            for p in pieces:
                text = clean(p)
                if text and mostly_letters(text) and script_fits(lang, text):
                    out.setdefault(unit, {}).setdefault(lang, []).append(text)
    return out


def fortunes_source(scratch, log):
    """{unit: {lang: [strings]}} of every fortune package (downloaded and
    unpacked into SCRATCH/fortunes when missing)."""
    debs, out = os.path.join(scratch, "fortunes", "debs"), {}
    os.makedirs(debs, exist_ok=True)
    for package in sorted(FORTUNE_PACKAGES):
        root = os.path.join(scratch, "fortunes", package)
        if not os.path.isdir(root):
            if not any(n.startswith(package + "_") for n in os.listdir(debs)):
                subprocess.run(["apt-get", "download", "-q", package], cwd=debs, check=True, capture_output=True)
            deb = next(n for n in sorted(os.listdir(debs)) if n.startswith(package + "_"))
            subprocess.run(["dpkg", "-x", os.path.join(debs, deb), root + ".tmp"], check=True)
            os.replace(root + ".tmp", root)
        out.update(fortune_units(package, root))
        log("fortunes: %s" % package)
    return out


def resplit_by_string(by_lang):
    """zu and mi held out by string, not by package: their text is mostly one
    package's (libreoffice-l10n-zu; mate's and GNOME's catalogs for mi), so
    the packages that hash into the test split hold too few sentences (16 and
    3 of four words or more). Of all their strings, a sentence (four words or
    more) whose hash falls into [0, EXTRA_TEST_SHARE) of 100 is test text."""
    for lang in sorted(EXTRA_LANGS & set(by_lang)):
        pool = set().union(*by_lang[lang].values())
        test = set(t for t in pool if len(t.split()) >= 4 and stable_hash("test:" + t) % 100 < EXTRA_TEST_SHARE)
        by_lang[lang] = {("gettext", "train"): pool - test, ("gettext", "test"): test}


# ---------------------------------------------------------------- romanized

def kakasi_root(scratch):
    """Debian's kakasi unpacked into SCRATCH/kakasi/root (downloaded when missing)."""
    base = os.path.join(scratch, "kakasi")
    root, debs = os.path.join(base, "root"), os.path.join(base, "debs")
    if not os.path.isdir(root):
        os.makedirs(debs, exist_ok=True)
        subprocess.run(["apt-get", "download", "-q"] + list(KAKASI_PACKAGES), cwd=debs, check=True, capture_output=True)
        for name in sorted(os.listdir(debs)):
            subprocess.run(["dpkg", "-x", os.path.join(debs, name), root + ".tmp"], check=True)
        os.replace(root + ".tmp", root)
    return root


def add_romanized(by_lang, scratch, log):
    """by_lang[el-Latn] etc.: each source and split's text of el, hi, ja
    (capped first, as it will be) in Latin letters."""
    romaji = romanize.Romaji(kakasi_root(scratch))
    for tag, lang in sorted(ROMANIZED.items()):
        for (source, split), lines in sorted(by_lang.get(lang, {}).items()):
            kept = capped(lines, TRAIN_CAP if split == "train" else TEST_CAP)
            if lang == "ja":
                roman = romaji.romanize(kept)
            else:
                roman = [(romanize.greeklish if lang == "el" else romanize.hinglish)(s) for s in kept]
            by_lang.setdefault(tag, {})[(source, split)] = set(r for r in roman if r.strip())
        log("romanized: %s" % tag)


# ---------------------------------------------------------------- output

def capped(lines, cap):
    """At most cap lines, chosen by hash (so the choice does not depend on order)."""
    lines = sorted(set(lines))
    if len(lines) > cap:
        lines = sorted(lines, key=lambda s: stable_hash(s))[:cap]
    return lines


def main():
    args = sys.argv[1:]
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        sys.exit(0 if args[0] in ("-h", "--help") else 2)
    scratch = args[0] if args else "/work/scratch/langid"
    os.makedirs(scratch, exist_ok=True)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    sources = {"gettext": gettext_source(scratch, log), "descriptions": descriptions_source(scratch, log),
               "fortunes": fortunes_source(scratch, log)}
    stats = {"held_out": "packages (fortunes: files, or blocks of fortunes) whose name hashes into [0, 10) of 100",
             "languages": {}}
    for split in ("train", "test"):
        os.makedirs(os.path.join(scratch, split), exist_ok=True)
    by_lang = {}
    for source, packages in sources.items():
        for pkg, langs in packages.items():
            split = split_of(pkg)
            for lang, lines in langs.items():
                by_lang.setdefault(lang, {}).setdefault((source, split), set()).update(lines)
    resplit_by_string(by_lang)
    add_romanized(by_lang, scratch, log)
    for lang in sorted(by_lang):
        written = {"train": [], "test": []}
        counts = {}
        for (source, split), lines in sorted(by_lang[lang].items()):
            kept = capped(lines, TRAIN_CAP if split == "train" else TEST_CAP)
            counts["%s-%s" % (source, split)] = len(kept)
            written[split].extend((source, s) for s in kept)
        train = set(s for _, s in written["train"])
        written["test"] = [(src, s) for src, s in written["test"] if s not in train]  # shared strings: train only
        for split, rows in written.items():
            with open(os.path.join(scratch, split, lang + ".txt"), "w", encoding="utf-8") as f:
                for src, s in rows:
                    f.write("%s\t%s\n" % (src, s))
        stats["languages"][lang] = counts
    with open(os.path.join(scratch, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)
    log("%d languages" % len(by_lang))


if __name__ == "__main__":
    main()
