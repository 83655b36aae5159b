"""Trains the language identifier (src/langid.h) on build_data.py's text and
writes the int8 model, its evaluation and the C test's golden probabilities.

  /usr/bin/python3 models/langid_train.py [--scratch DIR] [--hidden H] [--per-lang N] [--epochs E] [--out DIR]

Languages: every language with at least MIN_TRAIN training strings and
MIN_TEST held-out ones.  Each language's training strings are sampled (by
hash) to at most --per-lang, and every string of four words or more adds a
1-3-word piece of itself (chosen by hash) so that short inputs are seen in
training.  Deterministic: torch's seed is fixed, batches run on one thread.

Held-out evaluation (the test packages of build_data.py):
  sentences  held-out strings of at least 4 words (12 characters in scripts
             written without spaces), at most EVAL_CAP per language;
  short      the first 1-3 words of each (2-6 characters without spaces).
Accuracy is measured on the int8 model as the engine computes it, with
the prior the LanguageDetector adds (below).

The prior: each language's log share of speakers (speakers.json, floored at
PRIOR_FLOOR_MILLIONS, 0 for the most spoken), written into the model's
metadata ("prior", one value per language, "prior_weight" W and "prior_fade"
F); the LanguageDetector adds W / n * max(0, 1 - n / F) times it to the
logits (n: the text's feature count), so it decides between neighbours on a
few words, fades on longer text and is gone from F features on.
--from MODEL skips training: the given int8 model is evaluated (and written
with --out) under this run's prior weight.
"""
import argparse
import json
import os
import struct
import sys
import unicodedata

import numpy as np
import torch
from torch import nn

from .. import paths
from ..stable import stable_hash
from .features import Featurizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = paths.ROOT

ORDERS = [0, 1, 2, 3, 4]                       # whole words, then 1- to 4-grams
BUCKETS = [12000, 3000, 12000, 16000, 16000]  # rows per table: ~0.94 MB of int8 at D = 16
DIM = 16
MIN_TRAIN, MIN_TEST, EVAL_CAP = 1300, 40, 400  # 1,300: Maori has 1,356 (the next language below 1,500 has 1,231)
PRIOR_FLOOR_MILLIONS = 1.0  # below a million speakers, one prior: their text decides
PRIOR_WEIGHT = 3.0  # the largest that keeps the Debian held-out text at model 0.1.0's (models/langid/README.md, the prior)
PRIOR_FADE = 300.0  # features at which the prior is gone (likewise chosen; 0: it never ends)
# The held-out text that chooses the languages and gives the headline figures
# (fortunes, where a language has them, are scored apart: literary text).
SOFTWARE_SOURCES = {"gettext", "descriptions"}
# gettext folders that repeat another language's tag: cmn (zh), hye (hy)
EXCLUDED = {"cmn", "hye"}
# Languages whose text is often typed without its diacritics: Maori's macrons
UNMARKED = {"mi"}
NO_SPACES = {"ja", "zh-Hans", "zh-Hant", "th", "km", "lo", "my", "bo", "dz"}
CLOSE_GROUPS = [["es", "ca", "gl", "pt", "it"], ["ru", "uk", "bg", "be", "mk"], ["da", "nb", "nn", "sv"],
                ["cs", "sk"], ["hr", "sr-Latn", "bs", "sl"], ["id", "ms"], ["xh", "zu"]]


def read_split(scratch, split, lang, sources=None):
    """The strings of one language's split, of the given sources only (None: all)."""
    path = os.path.join(scratch, split, lang + ".txt")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t", 1) for line in f if "\t" in line]
    return [text for source, text in rows if sources is None or source in sources]


def bare(text):
    """The text without combining marks (macrons, accents)."""
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text)
                                                if not unicodedata.combining(c)))


def short_piece(text, lang, seed):
    """The 1-3 words (2-6 characters in scripts without spaces) of `text` that `seed` picks."""
    k = 1 + seed % 3
    if lang in NO_SPACES:
        return text[:2 * k]
    return " ".join(text.split()[:k])


def is_sentence(text, lang):
    return len(text) >= 12 if lang in NO_SPACES else len(text.split()) >= 4


def read_everyday(folder, split, lang):
    """everyday_sources.py's strings of one language's split (none without --everyday)."""
    path = os.path.join(folder, split, lang + ".txt") if folder else None
    if not path or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t", 1)[1] for line in f if "\t" in line]


def load_data(scratch, per_lang, everyday=None):
    """The languages, their training strings, their held-out software and
    description text (test), their held-out fortunes (literary) and their
    held-out everyday words and phrases (everyday_sources.py)."""
    langs = []
    train, test, literary, daily = {}, {}, {}, {}
    held_out = lambda lang, sources: sorted((s for s in read_split(scratch, "test", lang, sources)  # noqa: E731
                                             if is_sentence(s, lang)), key=stable_hash)[:EVAL_CAP]
    for name in sorted(os.listdir(os.path.join(scratch, "train"))):
        lang = name[:-4]
        if lang in EXCLUDED:
            continue
        tr = read_split(scratch, "train", lang)
        te = held_out(lang, SOFTWARE_SOURCES)
        if len(tr) < MIN_TRAIN or len(te) < MIN_TEST:
            continue
        langs.append(lang)
        tr = sorted(tr, key=stable_hash)[:per_lang]
        tr += sorted(set(read_everyday(everyday, "train", lang)) - set(tr), key=stable_hash)  # all of them: few
        if lang in UNMARKED:  # also as typed without its diacritics (kōrero as korero)
            tr += sorted(set(bare(s) for s in tr) - set(tr))
        pieces = [short_piece(s, lang, stable_hash("piece:" + s)) for s in tr if is_sentence(s, lang)]
        train[lang] = tr + pieces
        test[lang] = te
        literary[lang] = held_out(lang, {"fortunes"})
        daily[lang] = sorted(read_everyday(everyday, "test", lang), key=stable_hash)[:EVAL_CAP]
    return langs, train, test, literary, daily


class Bags:
    """Each sample's features per group, as flat index arrays (for EmbeddingBag)."""

    def __init__(self, featurize, texts, n_groups):
        per_group = [[] for _ in range(n_groups)]
        for text in texts:
            rows, groups = featurize(text)
            for g in range(n_groups):
                per_group[g].append(rows[groups == g])
        self.lengths = [np.array([len(r) for r in rows], dtype=np.int64) for rows in per_group]
        self.flat = [np.concatenate(rows) if rows else np.zeros(0, np.int64) for rows in per_group]
        self.starts = [np.concatenate([[0], np.cumsum(n)[:-1]]) for n in self.lengths]
        self.n = len(texts)

    def batch(self, order):
        """EmbeddingBag inputs (indices, offsets) per group for samples `order`."""
        out = []
        for flat, lengths, starts in zip(self.flat, self.lengths, self.starts):
            n = lengths[order]
            offsets = np.concatenate([[0], np.cumsum(n)[:-1]])
            idx = np.repeat(starts[order] - offsets, n) + np.arange(n.sum())
            out.append((torch.from_numpy(flat[idx].astype(np.int64)), torch.from_numpy(offsets)))
        return out


class LangId(nn.Module):
    def __init__(self, buckets, dim, hidden, n_langs):
        super().__init__()
        self.tables = nn.ModuleList(nn.EmbeddingBag(b, dim, mode="mean", sparse=True) for b in buckets)
        for t in self.tables:
            nn.init.normal_(t.weight, std=0.05)
        width = len(buckets) * dim
        self.hidden = nn.Linear(width, hidden) if hidden else None
        self.output = nn.Linear(hidden or width, n_langs)

    def forward(self, bags):
        x = torch.cat([t(i, o) for t, (i, o) in zip(self.tables, bags)], 1)
        if self.hidden is not None:
            x = torch.relu(self.hidden(x))
        return self.output(x)


def train(model, bags, labels, epochs, batch=256, log=print):
    sparse = torch.optim.SparseAdam(list(model.tables.parameters()), lr=0.01)
    dense_params = [p for n, p in model.named_parameters() if not n.startswith("tables.")]
    dense = torch.optim.Adam(dense_params, lr=0.003)
    steps = epochs * ((bags.n + batch - 1) // batch)
    rng = np.random.default_rng(0)
    step = 0
    for epoch in range(epochs):
        perm = rng.permutation(bags.n)
        total = 0.0
        for start in range(0, bags.n, batch):
            order = perm[start:start + batch]
            frac = 1.0 - step / steps
            for opt, lr in ((sparse, 0.01), (dense, 0.003)):
                for group in opt.param_groups:
                    group["lr"] = lr * max(frac, 0.02)
            loss = nn.functional.cross_entropy(model(bags.batch(order)), torch.from_numpy(labels[order]))
            sparse.zero_grad()
            dense.zero_grad()
            loss.backward()
            sparse.step()
            dense.step()
            total += loss.item() * len(order)
            step += 1
            if step % 2000 == 0:
                log("step %d of %d" % (step, steps))
        log("epoch %d: loss %.4f" % (epoch + 1, total / bags.n))


# ---------------------------------------------------------------- int8

def quantize_table(w):
    """One scale per table, the largest values clipped (a few rare rows
    would otherwise coarsen every other row's steps)."""
    scale = max(float(np.quantile(np.abs(w), 0.9999)), 1e-8) / 127.0
    return np.clip(np.round(w / scale), -127, 127).astype(np.int8), np.array([scale], dtype=np.float32)


def quantize_rows(w):
    scale = np.maximum(np.abs(w).max(axis=1), 1e-8) / 127.0
    return np.clip(np.round(w / scale[:, None]), -127, 127).astype(np.int8), scale.astype(np.float32)


def quantized_tensors(model):
    tensors = {}
    for k, t in enumerate(model.tables):
        q, s = quantize_table(t.weight.detach().numpy())
        tensors["table.%d" % k], tensors["table.%d.qscale" % k] = q, s
    layers = [("output", model.output)] + ([("hidden", model.hidden)] if model.hidden is not None else [])
    for name, layer in layers:
        q, s = quantize_rows(layer.weight.detach().numpy())
        tensors[name + ".weight"], tensors[name + ".weight.qscale"] = q, s
        tensors[name + ".bias"] = layer.bias.detach().numpy().astype(np.float32)
    return tensors


def dequantized_model(model, tensors):
    """The model with the file's values in place of its own: the int8 ones
    times their scales, and the float32 biases."""
    with torch.no_grad():
        for k, t in enumerate(model.tables):
            t.weight.copy_(torch.from_numpy(tensors["table.%d" % k].astype(np.float32) * tensors["table.%d.qscale" % k][0]))
        layers = [("output", model.output)] + ([("hidden", model.hidden)] if model.hidden is not None else [])
        for name, layer in layers:
            w = tensors[name + ".weight"].astype(np.float32) * tensors[name + ".weight.qscale"][:, None]
            layer.weight.copy_(torch.from_numpy(w))
            layer.bias.copy_(torch.from_numpy(tensors[name + ".bias"]))  # a model read --from has no other
    return model


def write_safetensors(path, tensors, metadata):
    """safetensors with the float tensors first (4-byte aligned), then the int8 ones."""
    dtypes = {np.dtype(np.float32): "F32", np.dtype(np.int8): "I8"}
    names = sorted(tensors, key=lambda n: (tensors[n].dtype == np.int8, n))
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name in names:
        a = np.ascontiguousarray(tensors[name])
        raw = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dtypes[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-(len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# ---------------------------------------------------------------- evaluation

def log_prior(langs):
    """Each language's log share of speakers (speakers.json), the largest 0."""
    with open(os.path.join(HERE, "speakers.json"), encoding="utf-8") as f:
        speakers = json.load(f)["speakers_millions"]
    logs = np.log(np.array([max(speakers[lang], PRIOR_FLOOR_MILLIONS) for lang in langs]))
    return np.round(logs - logs.max(), 4)


def prior_scale(n_features, weight, fade):
    """W / features, times 1 - features / fade (none from `fade` features on), as detector.js weighs the prior."""
    scale = weight / np.maximum(n_features, 1)
    return scale * np.clip(1 - n_features / fade, 0, 1) if fade else scale


def with_prior(logits, n_features, prior, weight, fade=PRIOR_FADE):
    """The logits plus the prior, weighted by prior_scale (as detector.js adds it)."""
    if not weight:
        return logits
    return logits + prior_scale(n_features, weight, fade)[:, None] * prior[None, :]


def predict(model, featurize, texts, n_groups, prior=None, weight=0.0):
    with torch.no_grad():
        out = []
        for start in range(0, len(texts), 2048):
            bags = Bags(featurize, texts[start:start + 2048], n_groups)
            logits = model(bags.batch(np.arange(bags.n))).numpy()
            n_features = sum(bags.lengths).astype(np.float64)
            out.append(with_prior(logits, n_features, prior, weight).argmax(1))
        return np.concatenate(out) if out else np.zeros(0, np.int64)


def evaluate(model, featurize, langs, test, prior=None, weight=0.0):
    """Accuracy over the languages that have held-out texts in `test` (indices: the model's, langs')."""
    result = {}
    present = [i for i, lang in enumerate(langs) if test.get(lang)]
    for kind in ("sentences", "short"):
        texts, gold = [], []
        for i in present:
            lang = langs[i]
            for s in test[lang]:
                texts.append(s if kind == "sentences" else short_piece(s, lang, stable_hash("eval:" + s)))
                gold.append(i)
        pred = predict(model, featurize, texts, len(ORDERS), prior, weight)
        gold = np.array(gold)
        result[kind] = {"accuracy": float((pred == gold).mean()),
                        "per_language": {langs[i]: float((pred[gold == i] == i).mean()) for i in present},
                        "confusions": confusions(langs, gold, pred)}
    return result


def confusions(langs, gold, pred):
    """Within each close group present: {lang: {other: share of lang's texts called other}}."""
    out = {}
    index = {lang: i for i, lang in enumerate(langs)}
    for group in CLOSE_GROUPS:
        members = [l for l in group if l in index]
        for a in members:
            mask = gold == index[a]
            if not mask.any():
                continue
            out[a] = {b: round(float((pred[mask] == index[b]).mean()), 4) for b in members if b != a}
    return out


def golden_cases(model_tensors, featurize, langs, test):
    """A few held-out texts with the int8 model's probabilities, computed in
    float64 from the file's own values (the C test compares the engine's)."""
    cases = []
    for lang in langs[::max(1, len(langs) // 12)]:
        for text in test[lang][:1]:
            rows, groups = featurize(text)
            xs = []
            for k in range(len(ORDERS)):
                table = model_tensors["table.%d" % k].astype(np.float64) * float(model_tensors["table.%d.qscale" % k][0])
                r = rows[groups == k]
                xs.append(table[r].mean(0) if len(r) else np.zeros(table.shape[1]))
            x = np.concatenate(xs)
            for name in (["hidden"] if "hidden.bias" in model_tensors else []) + ["output"]:
                w = model_tensors[name + ".weight"].astype(np.float64) * model_tensors[name + ".weight.qscale"][:, None]
                x = w @ x + model_tensors[name + ".bias"]
                if name == "hidden":
                    x = np.maximum(x, 0)
            p = np.exp(x - x.max())
            p /= p.sum()
            cases.append({"text": text, "language": langs[int(p.argmax())], "probs": [round(float(v), 7) for v in p]})
    return cases


def read_safetensors(path):
    """(metadata, {name: array}) of a model file write_safetensors wrote."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    dtypes = {"F32": np.float32, "I8": np.int8}
    tensors = {}
    for name, info in header.items():
        if name != "__metadata__":
            a, b = info["data_offsets"]
            raw = np.frombuffer(data[8 + n + a:8 + n + b], dtype=dtypes[info["dtype"]])
            tensors[name] = raw.reshape(info["shape"]).copy()
    return header["__metadata__"], tensors


def trained(args, featurize, langs, train_text, log):
    """(int8 tensors, int8 model, float accuracy, run facts): trained here, or read from --from."""
    if args.source:
        metadata, tensors = read_safetensors(args.source)
        if metadata["languages"].split(",") != langs:
            raise SystemExit("--from: the model's languages are not this scratch folder's")
        with open(os.path.join(os.path.dirname(args.source), "eval.json"), encoding="utf-8") as f:
            before = json.load(f)
        facts = {k: before[k] for k in ("hidden", "per_lang", "epochs", "training_strings", "float")}
        model = LangId(BUCKETS, DIM, facts["hidden"], len(langs))
        return tensors, dequantized_model(model.eval(), tensors), facts
    texts = [s for lang in langs for s in train_text[lang]]
    labels = np.array([i for i, lang in enumerate(langs) for _ in train_text[lang]], dtype=np.int64)
    bags = Bags(featurize, texts, len(ORDERS))
    log("%d training strings" % bags.n)
    model = LangId(BUCKETS, DIM, args.hidden, len(langs))
    train(model, bags, labels, args.epochs, log=log)
    model.eval()
    float_eval = evaluate(model, featurize, langs, args.test)
    tensors = quantized_tensors(model)
    facts = {"hidden": args.hidden, "per_lang": args.per_lang, "epochs": args.epochs, "training_strings": int(bags.n),
             "float": {k: v["accuracy"] for k, v in float_eval.items()}}
    return tensors, dequantized_model(model, tensors), facts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", default="/work/scratch/langid")
    ap.add_argument("--hidden", type=int, default=0)
    ap.add_argument("--per-lang", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--everyday", default=None, help="everyday_sources.py's folder (SCRATCH/everyday): its strings added")
    ap.add_argument("--prior-weight", type=float, default=PRIOR_WEIGHT, help="W: the prior weighs W / features")
    ap.add_argument("--from", dest="source", default=None, help="an int8 model to evaluate instead of training one")
    ap.add_argument("--out", default=None, help="where the model goes (default: only evaluate)")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    featurize = Featurizer(args.scratch, ORDERS, BUCKETS)
    langs, train_text, test, literary, daily = load_data(args.scratch, args.per_lang, args.everyday)
    args.test = test
    log("%d languages: %s" % (len(langs), " ".join(langs)))
    tensors, int8_model, facts = trained(args, featurize, langs, train_text, log)
    prior = log_prior(langs)
    int8_eval = evaluate(int8_model, featurize, langs, test, prior, args.prior_weight)
    plain_eval = evaluate(int8_model, featurize, langs, test)
    literary_eval = evaluate(int8_model, featurize, langs, literary, prior, args.prior_weight)
    daily_eval = evaluate(int8_model, featurize, langs, daily, prior, args.prior_weight) if any(daily.values()) else None
    log("int8 sentences %.4f short %.4f; without the prior %.4f / %.4f" % (
        int8_eval["sentences"]["accuracy"], int8_eval["short"]["accuracy"],
        plain_eval["sentences"]["accuracy"], plain_eval["short"]["accuracy"]))
    if args.out:
        write_outputs(args, langs, tensors, facts, prior, featurize, (test, literary, daily),
                      (int8_eval, plain_eval, literary_eval, daily_eval))


def write_outputs(args, langs, tensors, facts, prior, featurize, texts, evals):
    """The model, eval.json, the C test's golden cases and the scratch eval TSVs."""
    (test, literary, daily), (int8_eval, plain_eval, literary_eval, daily_eval) = texts, evals
    os.makedirs(args.out, exist_ok=True)
    metadata = {"format": "rmt-langid", "version": "1", "languages": ",".join(langs),
                "orders": ",".join(map(str, ORDERS)), "prior": ",".join("%g" % v for v in prior),
                "prior_weight": "%g" % args.prior_weight, "prior_fade": "%g" % PRIOR_FADE}
    write_safetensors(os.path.join(args.out, "model.safetensors"), tensors, metadata)
    report = {"languages": langs, "orders": ORDERS, "buckets": BUCKETS, "dim": DIM, **facts,
              "prior_weight": args.prior_weight, "prior_fade": PRIOR_FADE, "test_sentences": {lang: len(test[lang]) for lang in langs},
              "int8": int8_eval, "int8_without_prior": {k: v["accuracy"] for k, v in plain_eval.items()},
              "literary_sentences": {lang: len(literary[lang]) for lang in langs if literary[lang]},
              "int8_literary": literary_eval}
    if args.everyday:
        report["everyday_training"] = {lang: len(read_everyday(args.everyday, "train", lang)) for lang in langs}
    if daily_eval:
        report["everyday_sentences"] = {lang: len(daily[lang]) for lang in langs if daily[lang]}
        report["int8_everyday"] = {k: {"accuracy": v["accuracy"], "per_language": v["per_language"]}
                                   for k, v in daily_eval.items()}
    with open(os.path.join(args.out, "eval.json"), "w") as f:
        json.dump(report, f, indent=1, ensure_ascii=False)
    golden = os.path.join(ROOT, "tests", "fixtures", "langid")
    os.makedirs(golden, exist_ok=True)
    with open(os.path.join(golden, "golden.json"), "w") as f:
        json.dump({"cases": golden_cases(tensors, featurize, langs, test)}, f, ensure_ascii=False, indent=1)
    for name, rows in (("eval.tsv", test), ("eval-fortunes.tsv", literary)):
        with open(os.path.join(args.scratch, name), "w", encoding="utf-8") as f:
            for lang in langs:
                for s in rows[lang]:
                    f.write("%s\t%s\t%s\n" % (lang, s, short_piece(s, lang, stable_hash("eval:" + s))))


if __name__ == "__main__":
    main()
