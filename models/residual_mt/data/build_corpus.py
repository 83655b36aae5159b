#!/usr/bin/env python3
"""Rebuilds the es-en training corpus and the joint SentencePiece model from
Debian packages only.

    python3 models/data/build_corpus.py            # -> models/data/work/
    python3 models/data/build_corpus.py --sources bible --packages 0   # Bible only

Sources (one module each; licences in the model card):
  bible         Reina-Valera 1909 <-> World English Bible (bible.py), split by
                whole books (books.py); the reserved books are never written.
  gettext       Spanish catalogs of the packages in gettext-packages.txt
                (gettext_catalogs.py).
  descriptions  Debian's Translation-es / Translation-en package descriptions
                aligned by sentence (descriptions.py).
  freedict      FreeDict spa-eng and eng-spa word pairs (freedict.py).
  gnome-help    GNOME's desktop help pages (gnome-user-docs), English and
                Spanish, aligned by structure (gnome_help.py).
  manuals       Debian's manuals in English and Spanish (debian-handbook,
                installation-guide-amd64, debian-reference-en/-es), aligned
                by structure (manuals.py).
  tuxpaint      Tux Paint's stamp descriptions (tuxpaint-stamps-default):
                short everyday phrases, English and their Spanish lines
                (tuxpaint_stamps.py).
  gcompris      GCompris's Spanish Qt catalog and its vocabulary activity's
                word lists (gcompris-qt-data; qt_resources.py).
  minetest      Minetest's game texts, its mods' .es.tr files (minetest-data;
                minetest_tr.py).
  cldr          Unicode CLDR's emoji and symbol names, English and Spanish
                (unicode-cldr-core; cldr_annotations.py).
  kvtml         KDE's themed vocabulary files, words and hints
                (kdeedu-kvtml-data; kvtml.py).
  openttd       OpenTTD's compiled English and Spanish strings (openttd-data;
                openttd_lng.py).
  asterisk      Asterisk's telephone prompts (asterisk-core-sounds-en/-es;
                asterisk_prompts.py), es -> en only: the Spanish is unaccented.
  drascula      Drascula's comic dialogue (scummvm-data's drascula.dat;
                drascula_dat.py), es -> en only, unaccented the same way.
  wordnet       WordNet's English example sentences (wordnet_examples.py),
                back-translated by Apertium: synthetic es -> human en.
  fortunes      English fortune cookies (fortunes.py), the same way.
  fortunes-es   Spanish fortune cookies, back-translated by Apertium:
                synthetic en -> human es.
  austen        The quoted speech of Jane Austen's novels (r-cran-janeaustenr;
                austen.py, r_data.py), the same way: synthetic es -> human en.
  gtypist       GNU Typist's English practice sentences (gtypist_drills.py),
                the same way.

Back-translated pairs (apertium_bt.py) are named "<source>-bt:es-en" or
"<source>-bt:en-es" in train.src: train.py uses them only in that direction,
so that Apertium's output is only ever a source, never a target, unless a
run asks for the forward use by name ("<source>-ft:en-es", corpus.py).

Splits: the Bible by books (valid Ruth; test Joel, Jonah, Titus, Philemon).
For gettext and descriptions whole packages are held out, chosen by a hash
of the package name (held_out()), as the modern valid and modern test sets
(at most EVAL_CAP pairs per source, sampled by hash).  Every training pair
whose English or Spanish side equals (case-folded) a side of a valid or test
pair is removed from training, and exact duplicate pairs are kept once.

Written to --out: train.{es,en,src} (src: the source of each line),
valid.* and test.* (Bible), modern-valid.* and modern-test.* (+ .src),
*.ids (spm_encode ids), spm.model/spm.vocab, stats.json (sizes per source
and split, drop reasons, held-out packages, package versions).

The SentencePiece model (unigram, --vocab-size pieces, <2en> <2es> as user
symbols, ids in fairseq order <s>=0 <pad>=1 </s>=2 <unk>=3) is trained on a
balanced sample of the training side: all Bible, description and dictionary
text, and gettext pairs sampled (by hash) to about as many characters as the
Bible, so that neither domain dominates the vocabulary.

Deterministic: no randomness but hashes of the text, fixed orders,
single-threaded spm_train; the same package versions give byte-identical
files.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess

from .. import paths
from ..stable import stable_hash
from . import (apertium_bt, asterisk_prompts, austen, bible, cldr_annotations, descriptions, drascula_dat, fortunes,
               freedict, gettext_catalogs, gnome_help, gtypist_drills, kvtml, manuals, minetest_tr, openttd_lng,
               qt_resources, tuxpaint_stamps, wordnet_examples)

SOURCES = ("bible", "gettext", "descriptions", "freedict", "gnome-help", "manuals", "tuxpaint", "gcompris",
           "minetest", "cldr", "kvtml", "openttd", "asterisk", "drascula", "wordnet", "fortunes", "fortunes-es",
           "austen", "gtypist")
# human phrase pairs read from one package each: {name: (module, its pairs(root), train.src
# name)}; a name ending in ":es-en" is used in that direction only (as back-translations are)
PHRASE_SOURCES = {"tuxpaint": (tuxpaint_stamps, tuxpaint_stamps.stamp_pairs, "tuxpaint"),
                  "gcompris": (qt_resources, qt_resources.gcompris_pairs, "gcompris"),
                  "minetest": (minetest_tr, minetest_tr.tr_pairs, "minetest"),
                  "cldr": (cldr_annotations, cldr_annotations.cldr_pairs, "cldr"),
                  "kvtml": (kvtml, kvtml.kvtml_pairs, "kvtml"),
                  "openttd": (openttd_lng, openttd_lng.openttd_pairs, "openttd"),
                  "asterisk": (asterisk_prompts, asterisk_prompts.asterisk_pairs, "asterisk:es-en"),
                  "drascula": (drascula_dat, drascula_dat.drascula_pairs, "drascula:es-en")}
# back-translated sources: (train.src name, language of the human side)
BT_SOURCES = {"wordnet": ("wordnet-bt:es-en", "en"), "fortunes": ("fortunes-bt:es-en", "en"),
              "fortunes-es": ("fortunes-es-bt:en-es", "es"), "austen": ("austen-bt:es-en", "en"),
              "gtypist": ("gtypist-bt:es-en", "en")}
# our own everyday dev and test sets (models/everyday/{dev,test}.{es,en}):
# written to the corpus as everyday-dev / everyday-test, never trained on
EVERYDAY_DIR = paths.EVERYDAY
EVERYDAY_SPLITS = {"everyday-dev": "dev", "everyday-test": "test"}
# what the build runs: diatheke + the two SWORD modules, spm_train/spm_encode,
# msgunfmt, the dictionaries (apt-get and dpkg-deb are on every Debian)
DEBIAN_PACKAGES = ("diatheke", "sword-text-sparv", "sword-text-web", "sentencepiece", "gettext",
                   "dict-freedict-spa-eng", "dict-freedict-eng-spa",
                   "apertium", "apertium-eng-spa", "wordnet-base", "fortunes", "fortunes-es")
EVAL_CAP = {"modern-valid": 400, "modern-test": 600}  # pairs per source
# held-out share of packages, by hash: [0, 3) test, [3, 5) valid (of 100)
HELD_OUT = {"modern-test": range(0, 3), "modern-valid": range(3, 5)}


def held_out(package):
    """'modern-test' | 'modern-valid' | 'train' for a package name."""
    h = stable_hash("pkg:" + package) % 100
    for split, r in HELD_OUT.items():
        if h in r:
            return split
    return "train"


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line.replace("\n", " ") + "\n")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def fold(text):
    return " ".join(text.casefold().split())


# ---------------------------------------------------------------- sources

def gettext_source(scratch, packages, log):
    """{package: [(en, es)]}, drop reasons, versions."""
    debs, missing = gettext_catalogs.download(packages, os.path.join(scratch, "debs"))
    if missing:
        log("gettext: %d packages not downloadable: %s" % (len(missing), " ".join(missing[:20])))
    out, reasons, versions = {}, {}, {}
    for k, pkg in enumerate(sorted(debs)):
        deb = debs[pkg]
        versions[pkg] = os.path.basename(deb).split("_")[1].replace("%3a", ":")
        mos = gettext_catalogs.extract_catalogs(deb, os.path.join(scratch, "catalogs", pkg))
        pairs, why = gettext_catalogs.catalog_pairs(mos)
        for r, n in why.items():
            reasons[r] = reasons.get(r, 0) + n
        if pairs:
            out[pkg] = pairs
        if k % 200 == 0:
            log("gettext: %d/%d packages" % (k, len(debs)))
    return out, reasons, versions


def descriptions_source(scratch, log):
    """{package: [(en, es)]} from a private copy of the archive's indexes."""
    lists = os.path.join(scratch, "apt-lists")
    os.makedirs(os.path.join(lists, "partial"), exist_ok=True)
    subprocess.run(["apt-get", "-q", "-o", "Dir::State::Lists=" + lists,
                    "-o", "Acquire::Languages=es,en",
                    "-o", "Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false",
                    "update"], check=True, capture_output=True)
    found = {}
    for name in sorted(os.listdir(lists)):
        # the release's own indexes (-updates and -security hold a handful)
        for lang in ("es", "en"):
            if "_main_i18n_Translation-%s" % lang in name and "-updates_" not in name \
                    and "-security_" not in name:
                found.setdefault(lang, os.path.join(lists, name))
    if set(found) != {"es", "en"}:
        raise SystemExit("descriptions: Translation-es/-en not found in " + lists)
    log("descriptions: %s" % ", ".join(os.path.basename(p) for p in found.values()))
    return descriptions.description_pairs(descriptions.read_index(found["en"]),
                                          descriptions.read_index(found["es"]))


# ---------------------------------------------------------------- assembly

def dedupe(rows):
    seen, out = set(), []
    for r in rows:
        key = (r[0], r[1])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def cap_by_hash(rows, n):
    if len(rows) <= n:
        return rows
    keep = set(sorted(range(len(rows)), key=lambda i: stable_hash("eval:%s\t%s" % rows[i][:2]))[:n])
    return [r for i, r in enumerate(rows) if i in keep]


def bt_direction(source):
    """'es-en' / 'en-es' for a back-translated source name, else None."""
    return source.rsplit(":", 1)[1] if ":" in source else None


def read_everyday(everyday_dir=EVERYDAY_DIR):
    """{split: [(en, es)]} of our everyday sets present in everyday_dir."""
    out = {}
    for split, name in EVERYDAY_SPLITS.items():
        paths = [os.path.join(everyday_dir, "%s.%s" % (name, lang)) for lang in ("en", "es")]
        if all(os.path.exists(p) for p in paths):
            sides = []
            for p in paths:
                with open(p, encoding="utf-8") as f:
                    sides.append([l.strip() for l in f if l.strip()])
            if len(sides[0]) != len(sides[1]):
                raise SystemExit("everyday %s: %d English lines, %d Spanish" % (name, len(sides[0]), len(sides[1])))
            out[split] = list(zip(sides[0], sides[1]))
    return out


def assemble(bible_splits, per_package, dict_pairs, extra_train=(), everyday=None):
    """Rows (en, es, source, Bible reference or "") per split: train, valid, test (Bible),
    modern-valid, modern-test, and the everyday sets.  per_package: {source: {package: pairs}};
    extra_train: (en, es, source) rows for training only (GNOME help, back-translations);
    everyday: {split: [(en, es)]}."""
    splits = {"train": [], "valid": [], "test": [], "modern-valid": [], "modern-test": []}
    for split, pairs in sorted((everyday or {}).items()):
        splits[split] = [(en, es, "everyday", "") for en, es in pairs]
    for split in ("train", "valid", "test"):
        splits[split] += [(p[4], p[3], "bible", "%s\t%s\t%s" % p[:3]) for p in bible_splits[split]]
    for source in ("gettext", "descriptions"):
        held = {"modern-valid": [], "modern-test": []}
        for pkg in sorted(per_package.get(source, {})):
            where = held_out(pkg)
            rows = [(en, es, source, "") for en, es in per_package[source][pkg]]
            (splits["train"] if where == "train" else held[where]).extend(rows)
        for split, rows in held.items():
            splits[split] += cap_by_hash(dedupe(rows), EVAL_CAP[split])
    splits["train"] += [(en, es, "freedict", "") for en, es in dict_pairs]
    splits["train"] += [(en, es, src, "") for en, es, src in extra_train]
    # nothing seen in evaluation is trained on
    eval_sides = set()
    for split in [s for s in splits if s != "train"]:
        for en, es, _, _ in splits[split]:
            eval_sides.add(fold(en))
            eval_sides.add(fold(es))
    train = [r for r in dedupe(splits["train"])
             if fold(r[0]) not in eval_sides and fold(r[1]) not in eval_sides]
    splits["train"] = train
    # a pair in both held-out sets (two packages share a string): test keeps it
    test_pairs = {(r[0], r[1]) for r in splits["modern-test"]}
    splits["modern-valid"] = [r for r in splits["modern-valid"] if (r[0], r[1]) not in test_pairs]
    # sources interleaved, so that the first N lines (valid BLEU during
    # training) are a sample of all of them
    for split in ("modern-valid", "modern-test"):
        splits[split].sort(key=lambda r: stable_hash("order:%s\t%s" % r[:2]))
    return splits


def spm_sample(train_rows):
    """Training text for spm_train: the sides of all Bible, description and
    dictionary pairs, and gettext pairs (lowest hash first) up to the Bible's
    character count."""
    bible_chars = sum(len(en) + len(es) for en, es, s, _ in train_rows if s == "bible")
    lines = []
    for en, es, s, _ in train_rows:
        d = bt_direction(s)
        if d:  # only the human side of a back-translated pair
            lines.append(en if d == "es-en" else es)
        elif s != "gettext":
            lines += [es, en]
    gt = sorted((r for r in train_rows if r[2] == "gettext"),
                key=lambda r: stable_hash("spm:%s\t%s" % r[:2]))
    chars = 0
    for en, es, _, _ in gt:
        if chars >= bible_chars:
            break
        lines += [es, en]
        chars += len(en) + len(es)
    return lines


def install_deps():
    """Installs the missing DEBIAN_PACKAGES (as root), or says which line to run."""
    missing = [p for p in DEBIAN_PACKAGES
               if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if not missing:
        return
    if os.geteuid() != 0:
        raise SystemExit("build_corpus: missing packages; run: sudo apt-get install -y " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-qq"] + missing
    if subprocess.run(cmd, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=True, capture_output=True)
        subprocess.run(cmd, env=env, check=True, capture_output=True)


def package_version(package):
    return subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True).stdout


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=paths.CORPUS)
    ap.add_argument("--scratch", default=None, help="downloads and unpacked catalogs (default OUT/scratch)")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--sources", default=",".join(SOURCES))
    ap.add_argument("--packages", type=int, default=None,
                    help="use only the first N packages of gettext-packages.txt (a quick build)")
    ap.add_argument("--no-spm", action="store_true")
    ap.add_argument("--spm-model", default=None,
                    help="encode with this existing spm.model instead of training one")
    ap.add_argument("--install-deps", action="store_true",
                    help="first install the Debian packages the build needs (root), or name them")
    return ap.parse_args()


def read_sources(sources, scratch, n_packages, stats, log):
    """Every source's pairs: (Bible splits, {source: {package: pairs}},
    dictionary pairs, [(en, es, tag)] of the everyday sources); their
    licences and package versions go to stats."""
    b = bible.bible_splits() if "bible" in sources else {"train": [], "valid": [], "test": []}
    if "bible" in sources:
        stats["versions"].update(bible.package_versions())
        stats["sources"]["bible"] = {"licence": bible.LICENCE}
    per_package = {}
    if "gettext" in sources:
        packages = gettext_catalogs.read_package_list()
        if n_packages is not None:
            packages = packages[:n_packages]
        per_package["gettext"], reasons, versions = gettext_source(scratch, packages, log)
        stats["sources"]["gettext"] = {"licence": gettext_catalogs.LICENCE, "packages_listed": len(packages),
                                       "packages_with_pairs": len(per_package["gettext"]),
                                       "raw_pairs_kept": sum(len(v) for v in per_package["gettext"].values()),
                                       "dropped": dict(sorted(reasons.items()))}
        stats["versions"].update(versions)
    if "descriptions" in sources:
        per_package["descriptions"] = descriptions_source(scratch, log)
        stats["sources"]["descriptions"] = {"licence": descriptions.LICENCE,
                                            "packages": len(per_package["descriptions"])}
    dict_pairs = []
    if "freedict" in sources:
        dict_pairs = freedict.dictionary_pairs("es", "en") + freedict.dictionary_pairs("en", "es")
        stats["sources"]["freedict"] = {"licence": freedict.LICENCE}
        for p in ("dict-freedict-spa-eng", "dict-freedict-eng-spa"):
            stats["versions"][p] = package_version(p)
    extra = []
    if "gnome-help" in sources:
        root, version = gnome_help.download(os.path.join(scratch, "gnome-help"))
        pages = gnome_help.help_pairs(root)
        extra += [(en, es, "gnome-help") for page in sorted(pages) for en, es in pages[page]]
        stats["versions"][gnome_help.PACKAGE] = version
        stats["sources"]["gnome-help"] = {"licence": gnome_help.LICENCE, "pages": len(pages)}
    if "manuals" in sources:
        root, versions = manuals.download(os.path.join(scratch, "manuals"))
        pages = manuals.all_pairs(root)
        extra += [(en, es, "manuals") for page in sorted(pages) for en, es in pages[page]]
        stats["versions"].update(versions)
        stats["sources"]["manuals"] = {"licence": manuals.LICENCE, "pages": len(pages)}
    for name, (module, read_pairs, tag) in PHRASE_SOURCES.items():
        if name in sources:
            root, version = module.download(os.path.join(scratch, name))
            pairs = read_pairs(root)
            extra += [(en, es, tag) for en, es in pairs]
            stats["versions"].update(version if isinstance(version, dict) else {module.PACKAGE: version})
            stats["sources"][tag] = {"licence": module.LICENCE, "pairs_read": len(pairs)}
    for name, (tag, lang) in BT_SOURCES.items():
        if name not in sources:
            continue
        mono, licence, versions = monolingual(name, scratch)
        pairs, dropped = apertium_bt.back_translate(mono, lang)
        extra += [(en, es, tag) for en, es in pairs]
        stats["sources"][tag] = {"licence": licence + "; synthetic side: " + apertium_bt.LICENCE,
                                 "monolingual_sentences": len(mono), "dropped_by_apertium_checks": dropped}
        stats["versions"].update(versions)
        stats["versions"].update({p: package_version(p) for p in apertium_bt.PACKAGES})
        log("%s: %d sentences, %d pairs" % (tag, len(mono), len(pairs)))
    return b, per_package, dict_pairs, extra


def monolingual(name, scratch):
    """(sentences, licence, {package: version}) of a back-translated source."""
    if name == "wordnet":
        return wordnet_examples.examples(), wordnet_examples.LICENCE, {"wordnet-base": package_version("wordnet-base")}
    if name == "fortunes":
        return fortunes.fortune_sentences(fortunes.english_files()), fortunes.LICENCE_EN, \
            {"fortunes": package_version("fortunes")}
    if name == "fortunes-es":
        return fortunes.fortune_sentences(fortunes.spanish_files()), fortunes.LICENCE_ES, \
            {"fortunes-es": package_version("fortunes-es")}
    if name == "gtypist":
        root, versions = gtypist_drills.download(os.path.join(scratch, "gtypist"))
        return gtypist_drills.read_lessons(root), gtypist_drills.LICENCE, versions
    root, version = austen.download(os.path.join(scratch, "austen"))
    return austen.novel_sentences(austen.read_novels(root)), austen.LICENCE, {austen.PACKAGE: version}


def write_splits(out, splits, stats, log):
    """Each split's .es, .en and .src files, the Bible lines' .refs.tsv,
    and its sizes per source in stats."""
    stats["splits"] = {}
    for name, rows in splits.items():
        write_lines(os.path.join(out, name + ".es"), [r[1] for r in rows])
        write_lines(os.path.join(out, name + ".en"), [r[0] for r in rows])
        write_lines(os.path.join(out, name + ".src"), [r[2] for r in rows])
        per_src = {}
        for en, es, s, _ in rows:
            d = per_src.setdefault(s, {"pairs": 0, "words_en": 0, "words_es": 0})
            d["pairs"] += 1
            d["words_en"] += len(en.split())
            d["words_es"] += len(es.split())
        stats["splits"][name] = per_src
        log("%-12s %7d pairs  %s" % (name, len(rows), ", ".join(
            "%s %d" % (s, d["pairs"]) for s, d in sorted(per_src.items()))))
    for name in ("train", "valid", "test"):  # the Bible lines' references, in order
        write_lines(os.path.join(out, name + ".refs.tsv"),
                    [r[3] for r in splits[name] if r[2] == "bible"])


def tokenize(out, splits, spm_model, vocab_size, stats):
    """Each split's .ids files, by spm_model or by a model trained here."""
    if spm_model is None:
        # spm_train stores its input and prefix paths in the model: relative
        # names, run inside the output directory, keep spm.model byte-identical
        write_lines(os.path.join(out, "spm_input.txt"), spm_sample(splits["train"]))
        subprocess.run([
            "spm_train", "--input=spm_input.txt", "--model_prefix=spm",
            "--model_type=unigram", "--vocab_size=%d" % vocab_size,
            "--character_coverage=1.0", "--bos_id=0", "--pad_id=1", "--eos_id=2",
            "--unk_id=3", "--user_defined_symbols=<2en>,<2es>",
            "--input_sentence_size=0", "--shuffle_input_sentence=false",
            "--num_threads=1", "--minloglevel=1",
        ], check=True, cwd=out)
    else:
        # the corpus names its tokenizer as a trained one does (export.py copies
        # OUT/spm.model into the model; train.py reads the pieces from spm.vocab)
        if os.path.abspath(spm_model) != os.path.abspath(os.path.join(out, "spm.model")):
            shutil.copyfile(spm_model, os.path.join(out, "spm.model"))
        vocab = subprocess.run(["spm_export_vocab", "--model=" + spm_model], capture_output=True,
                               text=True, check=True).stdout
        with open(os.path.join(out, "spm.vocab"), "w", encoding="utf-8") as f:
            f.write(vocab)
    model = os.path.join(out, "spm.model")
    stats["spm_sha256"] = sha256(model)
    for name in splits:
        for lang in ("es", "en"):
            src = os.path.join(out, "%s.%s" % (name, lang))
            with open(src, "rb") as fin, open(src + ".ids", "wb") as fout:
                subprocess.run(["spm_encode", "--model=" + model, "--output_format=id"],
                               stdin=fin, stdout=fout, check=True)


def main():
    args = parse_args()
    if args.install_deps:
        install_deps()
    sources = [s for s in args.sources.split(",") if s]
    for s in sources:
        if s not in SOURCES:
            raise SystemExit("unknown source %r (known: %s)" % (s, ", ".join(SOURCES)))
    os.makedirs(args.out, exist_ok=True)
    scratch = args.scratch or os.path.join(args.out, "scratch")

    def log(msg):
        print(msg, flush=True)

    stats = {"sources": {}, "versions": {}}
    b, per_package, dict_pairs, extra = read_sources(sources, scratch, args.packages, stats, log)
    everyday = read_everyday()
    splits = assemble(b, per_package, dict_pairs, extra, everyday)
    stats["held_out_packages"] = {
        split: {src: sorted(p for p in per_package.get(src, {}) if held_out(p) == split)
                for src in ("gettext", "descriptions")} for split in HELD_OUT}
    write_splits(args.out, splits, stats, log)
    if not args.no_spm:
        tokenize(args.out, splits, args.spm_model, args.vocab_size, stats)
    with open(os.path.join(args.out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    if "spm_sha256" in stats:
        log("spm.model sha256 " + stats["spm_sha256"])


if __name__ == "__main__":
    main()
