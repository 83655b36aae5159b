"""Spanish software translations from Debian's gettext catalogs.

The package list is gettext-packages.txt (one name per line): every package
of Debian 12 main that ships a Spanish catalog (*/es/LC_MESSAGES/*.mo,
found in the Contents index with `apt-file search`), except those whose
.deb is over 60 MB (big game/art data with few strings), plus
wesnoth-1.16-data for its story dialogue, freedroidrpg-data for its game
conversation (freedroidrpg-dialogs.mo) and cataclysm-dda-data, whose
catalogs are es_ES and es_AR (read: es_ES, where a package has no es), and
games that ship only source catalogs (es.po, NAME.es.po: pingus-data,
supertux-data, supertuxkart-data, flare-game), read where a package has no
compiled one.  Each package is fetched with
`apt-get download` into a scratch folder, its Spanish catalogs are unpacked
(`dpkg-deb --fsys-tarfile | tar`, the catalogs only: nothing is installed)
and read with `msgunfmt` (package gettext).

Cleaning (clean_pair; each rule has a test in tests/python/test_data_sources.py):
  * the header, untranslated and fuzzy entries are dropped; a plural entry
    keeps its singular (msgid, msgstr[0]) only;
  * entries holding a format directive (%s, %1$d, %(name)s, {0}, %1, $VAR)
    are dropped: the placeholders are not language;
  * keyboard accelerators are removed (_File, &File, ~File -> File);
  * markup tags are removed and entities decoded; strings made mostly of
    markup are dropped;
  * identifiers, paths, URLs, command-line usage text, strings with fewer
    than two letters, translator credits,
    strings identical on both sides, very long strings and pairs whose
    lengths do not fit are dropped;
  * exact duplicate pairs are kept once (build_corpus.py).
"""
import html
import os
import re
import subprocess

from .. import paths
from . import debs

PACKAGE_LIST = paths.GETTEXT_PACKAGES
LOCALES = ("es", "es_ES")
# a game's Spanish source catalogs: es.po (pingus, supertux, supertuxkart) or NAME.es.po (flare)
SOURCE_CATALOGS = ("es.po", ".es.po")
LICENCE = ("each catalog under its package's licence (GPL, LGPL, MPL, BSD, ...; "
           "/usr/share/doc/PKG/copyright in the package)")


def read_package_list(path=PACKAGE_LIST):
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


# ---------------------------------------------------------------- fetch

def download(packages, debs_dir, batch=50):
    """apt-get download every package not already in debs_dir; returns
    {package: deb path}.  A package apt no longer knows is skipped (listed
    in the returned 'missing')."""
    os.makedirs(debs_dir, exist_ok=True)

    def have():
        out = {}
        for name in os.listdir(debs_dir):
            if name.endswith(".deb"):
                out[name.split("_")[0]] = os.path.join(debs_dir, name)
        return out

    present = have()
    todo = [p for p in packages if p not in present]
    for k in range(0, len(todo), batch):
        chunk = todo[k:k + batch]
        r = subprocess.run(["apt-get", "download", "-q"] + chunk, cwd=debs_dir,
                           capture_output=True, text=True)
        if r.returncode != 0:  # one unknown package fails the batch: go one by one
            for p in chunk:
                subprocess.run(["apt-get", "download", "-q", p], cwd=debs_dir,
                               capture_output=True, text=True)
    present = have()
    missing = [p for p in packages if p not in present]
    return {p: present[p] for p in packages if p in present}, missing


def extract_catalogs(deb, out_dir):
    """Unpacks the Spanish .mo files of one .deb into out_dir (once: a marker
    file remembers it); returns their paths, sorted."""
    done = os.path.join(out_dir, ".unpacked-es-es_ES-" + os.path.basename(deb))
    if not os.path.exists(done):
        unpack_catalogs(deb, out_dir)
        open(done, "w").close()
    found = {locale: [] for locale in LOCALES + ("po",)}
    for root, _, files in os.walk(out_dir):
        for name in files:
            for locale in LOCALES:
                if name.endswith(".mo") and root.endswith(os.path.join(locale, "LC_MESSAGES")):
                    found[locale].append(os.path.join(root, name))
            if name in SOURCE_CATALOGS or name.endswith(SOURCE_CATALOGS[1]):
                found["po"].append(os.path.join(root, name))
    # Spain's catalogs only where a package has no plain Spanish one
    # (cataclysm-dda-data ships es_ES and es_AR): never both, never es_AR;
    # source catalogs only where it has no compiled one (games ship theirs as .po)
    return sorted(found["es"] or found["es_ES"] or found["po"])


def unpack_catalogs(deb, out_dir):
    debs.extract(deb, out_dir, ["*/%s/LC_MESSAGES/*.mo" % locale for locale in LOCALES]
                 + ["*/" + SOURCE_CATALOGS[0], "*" + SOURCE_CATALOGS[1]])


# ---------------------------------------------------------------- parse

_PO_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b",
               "f": "\f", "v": "\v"}


def _po_string(s):
    """The value of one quoted PO string literal."""
    s = s.strip()
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        raise ValueError("not a PO string: %r" % s)
    out, i, body = [], 0, s[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_PO_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_po(text):
    """Entries of a PO file as dicts: msgctxt, msgid, msgid_plural, msgstr
    (list: [msgstr] or the msgstr[n] forms), fuzzy (bool), obsolete entries
    (#~) skipped."""
    entries, cur, field, idx = [], None, None, None

    def flush():
        if cur is not None and "msgid" in cur:
            entries.append(cur)

    for line in text.split("\n"):
        if line.startswith("#~"):
            continue
        if not line.strip():
            flush()
            cur, field = None, None
            continue
        if cur is None:
            cur = {"msgctxt": None, "msgid_plural": None, "msgstr": [], "fuzzy": False}
        if line.startswith("#,"):
            cur["fuzzy"] = cur["fuzzy"] or "fuzzy" in line[2:].split(",") or " fuzzy" in line
            continue
        if line.startswith("#"):
            continue
        m = re.match(r'(msgctxt|msgid_plural|msgid|msgstr)(?:\[(\d+)\])?\s+(".*")\s*$', line)
        if m:
            if m.group(1) == "msgid" and "msgid" in cur:  # a new entry without a blank line
                flush()
                cur = {"msgctxt": None, "msgid_plural": None, "msgstr": [], "fuzzy": False}
            field, idx = m.group(1), m.group(2)
            value = _po_string(m.group(3))
            if field == "msgstr":
                cur["msgstr"].append(value)
            else:
                cur[field] = value
        elif line.startswith('"') and field:
            value = _po_string(line)
            if field == "msgstr":
                cur["msgstr"][-1] += value
            else:
                cur[field] += value
    flush()
    return entries


def read_mo(path):
    """The entries of one catalog: a binary one through msgunfmt, a source one (.po) as it is."""
    if path.endswith(".po"):
        with open(path, "rb") as f:
            out = f.read()
    else:
        out = subprocess.run(["msgunfmt", "--no-wrap", path], capture_output=True, check=True).stdout
    return parse_po(out.decode(po_charset(out), errors="replace"))


def po_charset(raw):
    """The charset a catalog declares in its header (old ones are Latin-1)."""
    m = re.search(rb"charset=([A-Za-z0-9_.:-]+)", raw[:4096])
    if m:
        name = m.group(1).decode("ascii").lower()
        try:
            "".encode(name)
            return name
        except LookupError:
            pass
    return "utf-8"


def entry_pairs(entries):
    """(msgid, msgstr) per usable entry: not the header, not fuzzy, translated;
    a plural entry gives its singular only (msgstr[0])."""
    for e in entries:
        if not e["msgid"] or e["fuzzy"]:
            continue
        if not e["msgstr"] or not e["msgstr"][0].strip():
            continue
        yield e["msgid"], e["msgstr"][0]


# ---------------------------------------------------------------- clean

FORMAT_RE = re.compile(
    r"%(?:\d+\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGaAcsSpn@]"
    r"|%\([^)\s]+\)[-+ #0]*\d*(?:\.\d+)?[sdifrxXeEgGc]"  # python %(name)s
    r"|%\{[^}]*\}|%[1-9]\d*"  # KDE %{x}, Qt %1
    r"|\{[0-9]*(?::[^{}]*)?\}|\{[A-Za-z_][\w.]*(?::[^{}]*)?\}"  # {0} {name} {0:d}
    r"|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"  # $VAR ${VAR}
    r"|<[A-Za-z_]+>(?=\s|$)"  # <name> as a placeholder
)
TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
LINE_BREAK_TAG_RE = re.compile(r"<br\s*/?>|</p>\s*<p[^>]*>", re.I)
# _File / &File / ~File: a marker right before a letter, at the start of a word
ACCEL_RE = re.compile(r"(?:^|(?<=[\s(\"'«/\-]))[_&~](?=\w)|(?<=\w)[&~](?=\w)")
ACCEL_CJK_RE = re.compile(r"\s*\(\s*[_&][A-Za-z0-9]\s*\)")  # "Archivo (_F)"
ENTITY_RE = re.compile(r"&(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);")
URL_RE = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+|\S+@\S+\.\w+", re.I)
IDENT_CHARS_RE = re.compile(r"[_/\\:@=<>\[\]{}|#$^*]")
OPTION_RE = re.compile(r"(?:^|\s)--?[A-Za-z]")  # "-c, --count  prefix lines": usage text
LETTER_RE = re.compile(r"[^\W\d_]")
CREDITS = {"translator-credits", "translator_credits", "translators", "your names",
           "your emails", "name of translators", "email of translators", "credits"}
MAX_WORDS = 60


def strip_accelerators(s):
    s = ACCEL_CJK_RE.sub("", s)
    # && is a literal & in Qt/KDE strings; protect it, drop single markers
    s = s.replace("&&", "\x00")
    if not ENTITY_RE.search(s):
        s = ACCEL_RE.sub("", s)
    else:  # keep entities intact: strip markers only where no entity starts
        s = re.sub(r"(?:^|(?<=[\s(\"'«/\-]))_(?=\w)|~(?=\w)", "", s)
    # GTK mnemonics may sit inside a word ("en_losable"): one underscore in
    # a string of several words is a mnemonic, not snake_case
    if s.count("_") == 1 and " " in s.strip():
        s = re.sub(r"_(?=\w)", "", s)
    return s.replace("\x00", "&")


def strip_markup(s):
    """Tags removed (line breaks become spaces), entities decoded; None when
    markup is most of the string (documentation fragments)."""
    tags = TAG_RE.findall(s)
    if tags:
        text_len = len(TAG_RE.sub("", s))
        if len(tags) > 6 or text_len < sum(len(t) for t in tags):
            return None
        s = LINE_BREAK_TAG_RE.sub(" ", s)
        s = TAG_RE.sub("", s)
    if ENTITY_RE.search(s):
        s = html.unescape(s)
    return s


def looks_like_identifier(s):
    """A single token with code-like characters: a path, a key, a MIME type,
    an icon name, a command line option."""
    words = s.split()
    if len(words) == 1:
        w = words[0]
        if IDENT_CHARS_RE.search(w) or w.startswith("-") or ";" in w.rstrip(";") or re.search(r"[a-z][A-Z]", w):
            return True
        if "." in w.strip(".") or re.search(r"\d", w) and re.search(r"[A-Za-z]", w):
            return True
    return False


def normalise_space(s):
    return " ".join(s.split())


def clean_pair(en, es):
    """(en, es) cleaned, or (None, reason)."""
    if "\ufffd" in en or "\ufffd" in es:
        return None, "encoding"
    if en.strip().lower() in CREDITS or es.strip().lower() in CREDITS:
        return None, "credits"
    if FORMAT_RE.search(en) or FORMAT_RE.search(es):
        return None, "format"
    en, es = strip_markup(en), strip_markup(es)
    if en is None or es is None:
        return None, "markup"
    en, es = strip_accelerators(en), strip_accelerators(es)
    if URL_RE.search(en) or URL_RE.search(es):
        return None, "url"
    en, es = normalise_space(en), normalise_space(es)
    if len(LETTER_RE.findall(en)) < 2 or len(LETTER_RE.findall(es)) < 2:
        return None, "no letters"
    if OPTION_RE.search(en) or OPTION_RE.search(es):
        return None, "command line"
    if en.lower() == es.lower():
        return None, "identical"
    if looks_like_identifier(en) or looks_like_identifier(es):
        return None, "identifier"
    if len(en.split()) > MAX_WORDS or len(es.split()) > MAX_WORDS:
        return None, "long"
    if not lengths_fit(en, es):
        return None, "length ratio"
    return (en, es), None


def lengths_fit(en, es):
    """Spanish runs about 1.2x the characters of English; a pair far off that
    is usually a note, a partial translation or a misfiled string."""
    a, b = len(en), len(es)
    if max(a, b) <= 12:
        return max(a, b) <= 3 * min(a, b) + 6
    return 0.5 <= b / a <= 2.5


def catalog_pairs(mo_paths):
    """Clean pairs of a package's catalogs, in catalog order, and the counts
    of each drop reason."""
    pairs, reasons = [], {}
    for path in mo_paths:
        for en, es in entry_pairs(read_mo(path)):
            pair, why = clean_pair(en, es)
            if pair is None:
                reasons[why] = reasons.get(why, 0) + 1
            else:
                pairs.append(pair)
    return pairs, reasons
