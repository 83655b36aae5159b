"""A training run for the GPU machine (one GPU, no network), prepared here
and run there in one command: what travels is the repository's working
tree (at most 64 MiB in all) and what comes back is at most 8 files of at
most 16 MiB each.

    # here: the corpus' text, xz-compressed, into models/gpu-pack/ (git-ignored)
    /usr/bin/python3 models/gpu.py pack --corpus CORPUS
    # there (the device call carries models/gpu-pack): unpack, tokenize,
    # train from the latest weights, export, in MINUTES of wall-clock time
    python3 models/gpu.py run --minutes 9 --out $OUT
    # here: the files that came back as a model directory
    /usr/bin/python3 models/gpu.py join --files FILES_AT --out models/runs/gpu1
    # the figures behind the model card's estimate of such a run
    /usr/bin/python3 models/gpu.py estimate --corpus CORPUS

The latest weights are a model directory of the working tree (--init,
models/es-en-f16 by default: they travel anyway, so they cost nothing of
the 64 MiB); the corpus must have been encoded with its spm.model. The
corpus' text is tokenized there (the sentencepiece module, or Debian's
spm_encode where that is what there is): text compresses better than ids.
Where the text does not fit beside the tree, the pack keeps a hash-chosen
share of the sources weighted least in RECIPE (gettext first) and raises
their weights so that an epoch still holds as many of their examples.
"""
import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time

from . import paths, spm

PACK = os.path.join(paths.MODELS, "gpu-pack")
INIT = os.path.join(paths.MODELS, "es-en-f16")
TREE_LIMIT = 64 << 20  # the working tree a device call carries
BACK_FILES, BACK_BYTES = 8, 16 << 20  # what comes back from it
PART_BYTES = 15 << 20  # a weights file larger than this comes back in parts
SPLITS = ("train", "valid", "modern-valid", "everyday-dev")
MODEL_FILES = ("config.json", "manifest.json", "training.json")

# The run there: the source weights of runs 6 and 7 (the issue-38 sources
# among them; models/es-en/CARD.md) and run 3b's warm-up, batches 4 times as
# large (on a GPU, 16,000 tokens should take little more time than 4,000: not
# measured yet) and so run 3b's peak rate, 1.2e-4, times 2 (the square root
# of 4); no cooldown (the number of updates is not known in advance: the
# export averages the last snapshots instead).
RECIPE = {
    "lr": 2.4e-4, "warmup": 100, "max_tokens": 16000, "snapshots": 3,
    "weights": {"bible": 3, "gettext": 0.12, "descriptions": 2, "freedict": 1, "gnome-help": 4, "manuals": 1,
                "tuxpaint": 8, "gcompris": 4, "minetest": 2, "cldr": 2, "kvtml": 4, "openttd": 1,
                "asterisk:es-en": 2, "drascula:es-en": 2, "austen-bt:es-en": 4, "gtypist-bt:es-en": 2,
                "wordnet-bt:es-en": 3, "fortunes-bt:es-en": 6, "fortunes-es-bt:en-es": 12},
}


def text_lines(path):
    """A text file's lines (corpus.py's reader imports torch, which pack and join do without)."""
    with open(path, encoding="utf-8", newline="\n") as f:
        return f.read().split("\n")[:-1]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree_bytes(root=paths.ROOT, leave_out=PACK):
    """Bytes of what a device call carries besides the pack: tracked files
    and untracked ones git does not ignore."""
    out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, check=True).stdout
    total = 0
    for name in set(filter(None, out.decode().split("\0"))):
        path = os.path.join(root, name)
        if os.path.isfile(path) and not os.path.abspath(path).startswith(os.path.abspath(leave_out) + os.sep):
            total += os.path.getsize(path)
    return total


def keep_pair(es, en, fraction):
    """A pair's place in the pack, chosen by its text's hash (the same pairs on every machine)."""
    if fraction >= 1.0:
        return True
    digest = hashlib.sha256((es + "\t" + en).encode()).digest()
    return int.from_bytes(digest[:8], "big") < fraction * 2.0 ** 64


def shares(sizes, weights, room):
    """Each source's kept fraction: min(1, c * weight), c the largest that
    keeps the text under `room` bytes (by bisection; sources not named
    weigh 1)."""
    def kept(c):
        return sum(size * min(1.0, c * weights.get(name, 1.0)) for name, size in sizes.items())
    if kept(1e9) <= room:
        return {name: 1.0 for name in sizes}
    lo, hi = 0.0, 1e9
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if kept(mid) <= room else (lo, mid)
    return {name: min(1.0, lo * weights.get(name, 1.0)) for name in sizes}


def write_tar(path, corpus, fractions):
    """corpus.tar.xz: the splits' text (train kept by fractions) and spm.vocab; the kept counts."""
    kept = {}
    with tarfile.open(path, "w:xz", preset=9) as tar:
        for split in SPLITS:
            es, en = (text_lines(os.path.join(corpus, "%s.%s" % (split, lang))) for lang in ("es", "en"))
            src = text_lines(os.path.join(corpus, split + ".src"))
            rows = list(zip(es, en, src))
            if split == "train":
                rows = [r for r in rows if keep_pair(r[0], r[1], fractions.get(r[2], 1.0))]
                for r in rows:
                    kept[r[2]] = kept.get(r[2], 0) + 1
            for k, suffix in enumerate(("es", "en", "src")):
                add_text(tar, "%s.%s" % (split, suffix), "".join(r[k] + "\n" for r in rows))
        tar.add(os.path.join(corpus, "spm.vocab"), arcname="spm.vocab")
    return kept


def add_text(tar, name, text):
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def pack(corpus, init, out, limit=TREE_LIMIT):
    """Writes out/corpus.tar.xz and out/pack.json, within what the tree leaves of `limit`."""
    if sha256(os.path.join(corpus, "spm.model")) != sha256(os.path.join(init, "spm.model")):
        raise SystemExit("%s was not encoded with %s/spm.model: the weights would not match its pieces" % (corpus, init))
    if os.path.commonpath([os.path.abspath(init), paths.ROOT]) != paths.ROOT:
        raise SystemExit("--init must be a model directory inside the repository (it travels with the tree)")
    tree = tree_bytes()
    room = limit - tree - (1 << 20)  # a margin for pack.json and the tree's changes
    if room <= 0:
        raise SystemExit("the working tree is %.1f MiB: nothing is left of the %d MiB a device call carries for the corpus"
                         % (tree / 2**20, limit >> 20))
    sizes = {}
    train = zip(*(text_lines(os.path.join(corpus, "train." + s)) for s in ("es", "en", "src")))
    for es, en, src in train:
        sizes[src] = sizes.get(src, 0) + len(es.encode()) + len(en.encode()) + len(src) + 3
    os.makedirs(out, exist_ok=True)
    tar = os.path.join(out, "corpus.tar.xz")
    ratio = 0.22  # xz -9 on this text: compressed / raw, refined after each try
    for _ in range(8):
        fractions = shares(sizes, RECIPE["weights"], room / ratio * 0.97)
        kept = write_tar(tar, corpus, fractions)
        raw = sum(sizes[name] * fractions[name] for name in sizes)
        ratio = os.path.getsize(tar) / raw
        if os.path.getsize(tar) <= room:
            break
    else:
        raise SystemExit("the corpus does not fit in %d bytes" % room)
    weights = {name: RECIPE["weights"].get(name, 1.0) / fractions[name] for name in sizes if fractions[name] > 0}
    info = {"init": os.path.relpath(init, paths.ROOT), "spm_sha256": sha256(os.path.join(init, "spm.model")),
            "weights": weights, "fractions": fractions, "kept": {name: [kept.get(name, 0), n] for name, n in sorted(count_sources(corpus).items())},
            "tar_bytes": os.path.getsize(tar), "room": room, "corpus": os.path.abspath(corpus)}
    with open(os.path.join(out, "pack.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    return info


def count_sources(corpus):
    counts = {}
    for src in text_lines(os.path.join(corpus, "train.src")):
        counts[src] = counts.get(src, 0) + 1
    return counts


def tokenize(model, text_path, ids_path):
    """text_path's lines as ids, one line each: the sentencepiece module
    where there is one (the GPU machine), else Debian's spm_encode (here);
    the same library either way."""
    lines = text_lines(text_path)
    try:
        import sentencepiece
        ids = sentencepiece.SentencePieceProcessor(model_file=model).encode(lines)
    except ImportError:
        ids = spm.encode(model, lines)
    with open(ids_path, "w") as f:
        f.writelines(" ".join(map(str, row)) + "\n" for row in ids)


def unpack(pack_dir, work):
    """work/corpus (the splits, tokenized) and work/init (the weights and
    spm.vocab, so that train.py's --init needs no spm tool); pack.json."""
    with open(os.path.join(pack_dir, "pack.json")) as f:
        info = json.load(f)
    init = os.path.join(paths.ROOT, info["init"])
    if sha256(os.path.join(init, "spm.model")) != info["spm_sha256"]:
        raise SystemExit("%s/spm.model is not the one the pack was made for" % init)
    corpus, init_copy = os.path.join(work, "corpus"), os.path.join(work, "init")
    for d in (corpus, init_copy):
        os.makedirs(d)
    with tarfile.open(os.path.join(pack_dir, "corpus.tar.xz")) as tar:
        for member in tar.getmembers():
            if not member.isfile() or os.path.basename(member.name) != member.name:
                raise SystemExit("unexpected member in the pack: %r" % member.name)
            with open(os.path.join(corpus, member.name), "wb") as f:
                f.write(tar.extractfile(member).read())
    shutil.copyfile(os.path.join(init, "spm.model"), os.path.join(corpus, "spm.model"))
    for name in ("config.json", "model.safetensors", "spm.model"):
        shutil.copyfile(os.path.join(init, name), os.path.join(init_copy, name))
    shutil.copyfile(os.path.join(corpus, "spm.vocab"), os.path.join(init_copy, "spm.vocab"))
    for split in SPLITS:
        for lang in ("es", "en"):
            path = os.path.join(corpus, "%s.%s" % (split, lang))
            tokenize(os.path.join(corpus, "spm.model"), path, path + ".ids")
    return info, corpus, init_copy


def train_args(info, corpus, init, run, minutes, valid_limit):
    """train.py's command line for this run: the init's shape, RECIPE, the budget."""
    with open(os.path.join(init, "config.json")) as f:
        cfg = json.load(f)
    weights = ",".join("%s=%g" % kv for kv in sorted(info["weights"].items()))
    return ["--data", corpus, "--run", run, "--init", init, "--style", cfg["style"],
            "--enc", str(cfg["encoder_layers"]), "--dec", str(cfg["decoder_layers"]),
            "--d-model", str(cfg["d_model"]), "--ffn", str(cfg["ffn_dim"]), "--heads", str(cfg["n_heads"]),
            "--lr", str(RECIPE["lr"]), "--warmup", str(RECIPE["warmup"]), "--max-tokens", str(RECIPE["max_tokens"]),
            "--source-weights", weights, "--valid-splits", ",".join(SPLITS[1:]), "--valid-limit", str(valid_limit),
            "--valid-minutes", "100000", "--time-budget", "%.3f" % minutes,
            "--save-minutes", "%.3f" % (minutes / (RECIPE["snapshots"] + 0.5)), "--log-every", "50"]


def log_event(run, obj):
    obj["time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(json.dumps(obj), flush=True)
    with open(os.path.join(run, "log.jsonl"), "a") as f:
        f.write(json.dumps(obj) + "\n")


def send_back(model_dir, run, out):
    """out: the model's files (its weights in parts of at most PART_BYTES)
    and the log; at most BACK_FILES files of at most BACK_BYTES each."""
    os.makedirs(out, exist_ok=True)
    for name in MODEL_FILES:
        shutil.copyfile(os.path.join(model_dir, name), os.path.join(out, name))
    shutil.copyfile(os.path.join(run, "log.jsonl"), os.path.join(out, "log.jsonl"))
    with open(os.path.join(model_dir, "model.safetensors"), "rb") as f:
        for k, part in enumerate(iter(lambda: f.read(PART_BYTES), b"")):
            with open(os.path.join(out, "model.safetensors.%d" % k), "wb") as p:
                p.write(part)
    names = os.listdir(out)  # the device command's tee of the output counts too
    if len(names) > BACK_FILES or any(os.path.getsize(os.path.join(out, n)) > BACK_BYTES for n in names):
        raise SystemExit("more than %d files or one over %d bytes in %s" % (BACK_FILES, BACK_BYTES, out))


def run_there(pack_dir, out, minutes, work, valid_limit, reserve, train_minutes=None):
    """Unpacks, tokenizes, trains until `minutes` of wall-clock time less
    `reserve` (the last validation and the export) are spent, or for
    train_minutes if that is less, exports the mean of the last snapshots
    in float16, and writes the files to bring back."""
    import torch
    from . import export, train
    t0 = time.time()
    if os.path.exists(work):
        raise SystemExit("%s exists: a fresh folder for each run" % work)
    info, corpus, init = unpack(pack_dir, work)
    run = os.path.join(work, "run")
    os.makedirs(run)
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    log_event(run, {"event": "unpacked", "seconds": time.time() - t0, "device": device, "torch": torch.__version__,
                    "kept": info["kept"]})
    budget = min(minutes - (time.time() - t0) / 60 - reserve, train_minutes or minutes)
    if budget <= 0:
        raise SystemExit("no time left to train after %.1f s of unpacking" % (time.time() - t0))
    t1 = time.time()
    train.main(train_args(info, corpus, init, run, budget, valid_limit))
    t2 = time.time()
    model_dir = os.path.join(work, "model")
    exported = export.export(run, model_dir, RECIPE["snapshots"], "float16", corpus)
    log_event(run, {"event": "exported", **exported, "train_wall_seconds": t2 - t1, "export_seconds": time.time() - t2,
                    "total_seconds": time.time() - t0})
    send_back(model_dir, run, out)


def join(files, out, pack_dir=PACK):
    """The files a run sent back as a model directory: the weights' parts
    joined and checked against manifest.json, spm.model from the pack's init."""
    with open(os.path.join(files, "manifest.json")) as f:
        manifest = json.load(f)
    os.makedirs(out, exist_ok=True)
    parts = sorted((n for n in os.listdir(files) if n.startswith("model.safetensors.")), key=lambda n: int(n.rsplit(".", 1)[1]))
    with open(os.path.join(out, "model.safetensors"), "wb") as w:
        for name in parts:
            with open(os.path.join(files, name), "rb") as f:
                w.write(f.read())
    for name in (*MODEL_FILES, "log.jsonl"):
        shutil.copyfile(os.path.join(files, name), os.path.join(out, name))
    with open(os.path.join(pack_dir, "pack.json")) as f:
        shutil.copyfile(os.path.join(paths.ROOT, json.load(f)["init"], "spm.model"), os.path.join(out, "spm.model"))
    for name, entry in manifest["files"].items():
        path = os.path.join(out, name)
        if sha256(path) != entry["sha256"] or os.path.getsize(path) != entry["size"]:
            raise SystemExit("%s does not match manifest.json" % path)
    return out


def estimate(corpus, init=INIT):
    """The figures the model card's estimate of a GPU run rests on: matrix
    FLOPs a training update spends per target token (forward, backward twice
    the forward; attention scores left out), source tokens per target token,
    and the target tokens of one epoch weighted as RECIPE weighs it."""
    with open(os.path.join(init, "config.json")) as f:
        cfg = json.load(f)
    d, ffn, vocab = cfg["d_model"], cfg["ffn_dim"], cfg["vocab_size"]
    per_source = 2 * (cfg["encoder_layers"] * (4 * d * d + 2 * d * ffn) + cfg["decoder_layers"] * 2 * d * d)
    per_target = 2 * (cfg["decoder_layers"] * (6 * d * d + 2 * d * ffn) + d * vocab)
    lengths = {lang: [len(line.split()) for line in text_lines(os.path.join(corpus, "train.%s.ids" % lang))]
               for lang in ("es", "en")}
    sources = targets = epoch = 0.0
    for tag, es, en in zip(text_lines(os.path.join(corpus, "train.src")), lengths["es"], lengths["en"]):
        weight = RECIPE["weights"].get(tag, 1.0)
        # a pair gives an example a direction, a back-translation only its own (corpus.py);
        # the source adds <2xx> and </s>, the target </s>
        for direction, src, tgt in (("es-en", es, en), ("en-es", en, es)):
            if ":" not in tag or tag.endswith(":" + direction):
                sources += src + 2
                targets += tgt + 1
                epoch += weight * (tgt + 1)
    ratio = sources / targets
    return {"flop_per_target_token": 3 * (per_target + ratio * per_source), "source_per_target": ratio,
            "weighted_epoch_target_tokens": epoch}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--corpus", default=paths.CORPUS)
    p.add_argument("--init", default=INIT)
    p.add_argument("--pack", default=PACK)
    r = sub.add_parser("run")
    r.add_argument("--pack", default=PACK)
    r.add_argument("--out", required=True)
    r.add_argument("--minutes", type=float, default=9.0, help="wall-clock minutes, unpacking and export included")
    r.add_argument("--reserve", type=float, default=1.0, help="minutes kept for the last validation and the export")
    r.add_argument("--train-minutes", type=float, default=None, help="at most this many minutes of training")
    r.add_argument("--valid-limit", type=int, default=60)
    r.add_argument("--work", default="/tmp/rmt-gpu")
    j = sub.add_parser("join")
    j.add_argument("--files", required=True)
    j.add_argument("--out", required=True)
    j.add_argument("--pack", default=PACK)
    e = sub.add_parser("estimate")
    e.add_argument("--corpus", default=paths.CORPUS)
    e.add_argument("--init", default=INIT)
    args = ap.parse_args(argv)
    if args.command == "pack":
        print(json.dumps(pack(args.corpus, args.init, args.pack), indent=1))
    elif args.command == "run":
        run_there(args.pack, args.out, args.minutes, args.work, args.valid_limit, args.reserve, args.train_minutes)
    elif args.command == "estimate":
        print(json.dumps(estimate(args.corpus, args.init), indent=1))
    else:
        print(join(args.files, args.out, args.pack))
    sys.stdout.flush()
