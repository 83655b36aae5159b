#!/usr/bin/env python3
"""Builds a lexical shortlist for a model and writes a copy of the model with it.

The engine's output layer then scores, for each sentence, only the words the
shortlist allows (src/shortlist.c shortlist_candidates, the rule Marian
uses): the ids below config "shortlist_first" (the special tokens), every
source id, and the targets that each source id brings in
(shortlist.offsets, I32, and shortlist.targets, I16 for a vocabulary of at
most 32,768, in model.safetensors).

The table comes from the training split only (models/data/work/train.*.ids,
which holds none of the reserved books), in both directions of this
bilingual model, since the vocabulary is shared:

- each source id brings in its `--best` most likely translations under IBM
  Model 1 (a few EM iterations of p(target id | source id) over the sentence
  pairs, with an empty source word), those with p >= `--min-prob`;
- the target-language token (<2en>, <2es>) brings in the `--frequent` most
  frequent ids of that language's side of the data, so every sentence keeps
  the common words of the language it is translated into.

    /usr/bin/python3 models/shortlist.py --in models/es-en --out /tmp/es-en-sl \\
        [--best 50] [--frequent 200] [--min-prob 0.001] [--table /tmp/ibm1.pt]

--table caches the IBM Model 1 table (building it takes minutes on 2 cores),
so that several sizes can be tried from one build.
"""
import argparse
import json
import os
import shutil
import time

import numpy as np
import torch

from . import manifest as make_manifest
from . import paths
from . import reference as ref

MAX_LEN = 100          # longer pairs (0.3% of the data) teach IBM Model 1 little and cost len^2
CHUNK_PAIRS = 20_000_000  # (source, target) position pairs per E-step chunk: bounds memory


def read_ids(path):
    with open(path) as f:
        return [np.array(line.split(), dtype=np.int32) for line in f]


def position_pairs(src, tgt, null_id):
    """Chunks of every (source id, target position) pair of the sentence pairs,
    as the flat index source * V + target (int32: V is 8k) and the target
    position's number within the chunk (for the E-step's normalization)."""
    chunks, rows, total = [], [], 0
    for s, t in zip(src, tgt):
        if not 0 < len(s) <= MAX_LEN or not 0 < len(t) <= MAX_LEN:
            continue
        rows.append((np.append(s, null_id), t))
        total += (len(s) + 1) * len(t)
        if total >= CHUNK_PAIRS:
            chunks.append(pairs_of(rows)), rows.clear()
            total = 0
    if rows:
        chunks.append(pairs_of(rows))
    return chunks


def pairs_of(rows):
    n_src = np.array([len(s) for s, _ in rows])
    n_tgt = np.array([len(t) for _, t in rows])
    src_flat, tgt_flat = np.concatenate([s for s, _ in rows]), np.concatenate([t for _, t in rows])
    src_start = np.concatenate([[0], np.cumsum(n_src)[:-1]])
    tgt_start = np.concatenate([[0], np.cumsum(n_tgt)[:-1]])
    count = n_src * n_tgt
    sent = np.repeat(np.arange(len(rows)), count)
    j = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    position = tgt_start[sent] + j % n_tgt[sent]
    source = src_flat[src_start[sent] + j // n_tgt[sent]]
    return source.astype(np.int32), tgt_flat[position].astype(np.int32), position.astype(np.int32), len(tgt_flat)


def ibm1(chunks, vocab_size, iterations):
    """p(target | source) by IBM Model 1's EM, as a (V + 1, V) float32 table
    (row V: the empty source word)."""
    V = vocab_size
    table = torch.full(((V + 1) * V,), 1.0 / V)
    for it in range(iterations):
        start = time.time()
        counts = torch.zeros((V + 1) * V)
        for source, target, position, n_positions in chunks:
            flat = torch.from_numpy(source).long() * V + torch.from_numpy(target).long()
            p = table[flat]
            pos = torch.from_numpy(position).long()
            total = torch.zeros(n_positions).index_add_(0, pos, p)
            counts.index_add_(0, flat, p / total[pos])
        counts = counts.view(V + 1, V)
        table = (counts / counts.sum(1, keepdim=True).clamp_min(1e-30)).view(-1)
        print(f"shortlist: IBM Model 1 iteration {it + 1}/{iterations}, {time.time() - start:.0f} s", flush=True)
    return table.view(V + 1, V)


def build_table(data_dir, vocab_size, iterations):
    ids = {lang: read_ids(os.path.join(data_dir, f"train.{lang}.ids")) for lang in ("es", "en")}
    chunks = position_pairs(ids["es"], ids["en"], vocab_size) + position_pairs(ids["en"], ids["es"], vocab_size)
    print(f"shortlist: {sum(len(c[0]) for c in chunks) / 1e6:.0f} M position pairs in {len(chunks)} chunks",
          flush=True)
    frequency = {lang: np.bincount(np.concatenate(ids[lang]), minlength=vocab_size) for lang in ids}
    return {"p": ibm1(chunks, vocab_size, iterations), "frequency": frequency}


def choose(table, cfg, best, frequent, min_prob):
    """The shortlist's index tables: offsets (V + 1) and targets, and shortlist_first."""
    V = cfg.vocab_size
    first = 1 + max(cfg.bos_id, cfg.pad_id, cfg.eos_id, cfg.unk_id, *cfg.languages["target_lang_tokens"].values())
    p = table["p"][:V]
    top_p, top_id = p.topk(best, dim=1)
    lists = [top_id[s][top_p[s] >= min_prob].tolist() for s in range(V)]
    for lang, token in cfg.languages["target_lang_tokens"].items():
        order = np.argsort(-table["frequency"][lang], kind="stable")[:frequent]
        lists[token] = sorted(set(lists[token]) | set(order.tolist()))
    lists = [sorted(set(t for t in targets if t >= first)) for targets in lists]
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in lists])]).astype(np.int32)
    # I16 ids where they fit (half the bytes; the engine reads either).
    targets = np.array([t for targets in lists for t in targets], dtype=np.int16 if V <= 1 << 15 else np.int32)
    return first, offsets, targets


def write_model(src_dir, out_dir, first, offsets, targets, settings):
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(src_dir):
        path = os.path.join(src_dir, name)
        if os.path.isfile(path) and name not in ("model.safetensors", "config.json", "manifest.json"):
            shutil.copy(path, os.path.join(out_dir, name))
    tensors = ref.read_safetensors(os.path.join(src_dir, "model.safetensors"))
    tensors = {k: v for k, v in tensors.items() if not k.startswith("shortlist.")}
    tensors["shortlist.offsets"] = torch.from_numpy(offsets)
    tensors["shortlist.targets"] = torch.from_numpy(targets)
    ref.write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors, {"shortlist": json.dumps(settings)})
    with open(os.path.join(src_dir, "config.json")) as f:
        config = json.load(f)
    config["shortlist_first"] = first
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
        f.write("\n")
    if os.path.exists(os.path.join(src_dir, "manifest.json")):
        make_manifest.main([out_dir])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--in", dest="src", required=True, help="model directory")
    ap.add_argument("--out", required=True, help="the copy with the shortlist")
    ap.add_argument("--data", default=paths.CORPUS)
    ap.add_argument("--best", type=int, default=50, help="translations each source id brings in")
    ap.add_argument("--frequent", type=int, default=200, help="most frequent ids of the target language, always in")
    ap.add_argument("--min-prob", type=float, default=0.001, help="translations less likely than this stay out")
    ap.add_argument("--iterations", type=int, default=5, help="IBM Model 1 EM iterations")
    ap.add_argument("--table", help="IBM Model 1 table cache (read if present, else built and written)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    with open(os.path.join(args.src, "config.json")) as f:
        cfg = ref.ModelConfig.from_dict(json.load(f))
    if args.table and os.path.exists(args.table):
        table = torch.load(args.table)
    else:
        table = build_table(args.data, cfg.vocab_size, args.iterations)
        if args.table:
            torch.save(table, args.table)
    first, offsets, targets = choose(table, cfg, args.best, args.frequent, args.min_prob)
    settings = {"best": args.best, "frequent": args.frequent, "min_prob": args.min_prob,
                "iterations": args.iterations, "data": "train"}
    write_model(args.src, args.out, first, offsets, targets, settings)
    per_id = np.diff(offsets)
    print(f"{args.out}: shortlist_first {first}, {len(targets)} targets "
          f"(per source id: mean {per_id.mean():.1f}, max {per_id.max()})")


if __name__ == "__main__":
    main()
