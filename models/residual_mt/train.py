#!/usr/bin/env python3
"""Trains the reference Transformer (models/reference.py) on the es<->en
Bible corpus built by models/data/build_corpus.py.

One bidirectional model: the source starts with the target-language token
(<2en> or <2es>), so src = [<2xx>] + spm ids + [</s>], target = spm ids +
[</s>], prev_output_tokens = [</s>] + spm ids (fairseq teacher forcing).

    /usr/bin/python3 models/train.py --run models/runs/main \
        --style residual --enc 6 --dec 2 --time-budget 60

Training follows fairseq's transformer recipe: label-smoothed cross-entropy
(0.1), Adam(0.9, 0.98), inverse-sqrt learning rate with linear warm-up,
dropout, batches of at most --max-tokens tokens built from length-sorted
sentences.  On CPU it uses --threads threads and bf16 autocast; on a CUDA
GPU it runs there (bf16 autocast too).  A checkpoint (model, optimiser,
position in the data, clock) is written every --save-minutes and at the
end; rerunning the same command resumes from it.  The log (one JSON object
per line, run/log.jsonl) holds the training loss and the greedy valid BLEU.
"""
import argparse
import json
import math
import os
import random
import signal
import subprocess
import time

import torch
import torch.nn.functional as F

from . import bleu, paths
from . import reference as R
from .schedule import scheduled_lr

LANG_TOKENS = {"en": 4, "es": 5}  # user-defined symbols of the joint spm model
DIRECTIONS = (("es", "en"), ("en", "es"))


# ---------------------------------------------------------------- data

def read_ids(path):
    with open(path, encoding="utf-8") as f:
        return [[int(t) for t in line.split()] for line in f]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


class Pieces:
    """ids -> text with the spm vocabulary (unigram: concatenate the pieces,
    '\u2581' becomes a space); enough for BLEU without the spm library."""

    def __init__(self, vocab_path):
        self.pieces = [line.split("\t")[0] for line in read_lines(vocab_path)]

    def decode(self, ids):
        out = []
        for i in ids:
            if i < 6:  # specials and language tokens
                continue
            out.append(self.pieces[i])
        return "".join(out).replace("\u2581", " ").strip()


def source_has_direction(source, direction):
    """A source named 'name:es-en' (a back-translation: its Spanish side is
    Apertium's, its English side human) is used only in that direction, so
    that synthetic text is never a target; other sources in both."""
    return ":" not in source or source.rsplit(":", 1)[1] == direction


def make_examples(data_dir, split, max_len):
    """[(src, tgt, direction, source)] for both directions; pairs longer than
    max_len pieces on either side are dropped (there are very few).  source
    is the corpus the pair came from (split.src, one name per line), or
    'all' when the data has no such file.  Back-translated sources
    ('name:es-en', 'name:en-es') give examples in their direction only."""
    ids = {lang: read_ids(os.path.join(data_dir, "%s.%s.ids" % (split, lang))) for lang in ("es", "en")}
    src_path = os.path.join(data_dir, split + ".src")
    tags = read_lines(src_path) if os.path.exists(src_path) else ["all"] * len(ids["es"])
    out = []
    for s, t in DIRECTIONS:
        for a, b, tag in zip(ids[s], ids[t], tags):
            if not source_has_direction(tag, s + "-" + t):
                continue
            if 0 < len(a) <= max_len and 0 < len(b) <= max_len:
                out.append(([LANG_TOKENS[t]] + a, b, s + "-" + t, tag))
    return out


def parse_weights(text):
    """'bible=1,gettext=0.5' -> {'bible': 1.0, 'gettext': 0.5}."""
    out = {}
    for item in filter(None, (text or "").split(",")):
        name, _, value = item.partition("=")
        out[name.strip()] = float(value)
    return out


def epoch_selection(examples, weights, seed):
    """Indices of the examples used in one epoch: a source with weight w
    contributes floor(w) copies of each example plus a random fraction
    w - floor(w) of them (drawn anew each epoch); sources not named have
    weight 1."""
    rng = random.Random(seed)
    chosen = []
    for i, ex in enumerate(examples):
        w = weights.get(ex[3], 1.0)
        n = int(w)
        if rng.random() < w - n:
            n += 1
        chosen.extend([i] * n)
    return chosen


def make_batches(examples, max_tokens, seed, selection=None):
    """Length-sorted batches; a batch's cost is (longest source + longest
    target) * sentences, kept at or under max_tokens."""
    rng = random.Random(seed)
    order = list(range(len(examples))) if selection is None else list(selection)
    rng.shuffle(order)  # random tie-break among equal lengths
    order.sort(key=lambda i: (len(examples[i][0]), len(examples[i][1])))
    batches, cur, ms, mt = [], [], 0, 0
    for i in order:
        s, t = len(examples[i][0]) + 1, len(examples[i][1]) + 1
        nms, nmt = max(ms, s), max(mt, t)
        if cur and (nms + nmt) * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, nms, nmt = [], s, t
        cur.append(i)
        ms, mt = nms, nmt
    if cur:
        batches.append(cur)
    rng.shuffle(batches)
    return batches


def collate(examples, idx, cfg, device):
    srcs = [examples[i][0] for i in idx]
    tgts = [examples[i][1] for i in idx]
    src = R.pad_batch(srcs, cfg)
    T = max(len(t) for t in tgts) + 1
    prev = torch.full((len(idx), T), cfg.pad_id, dtype=torch.long)
    target = torch.full((len(idx), T), cfg.pad_id, dtype=torch.long)
    for k, t in enumerate(tgts):
        prev[k, :len(t) + 1] = torch.tensor([cfg.eos_id] + t)
        target[k, :len(t) + 1] = torch.tensor(t + [cfg.eos_id])
    return src.to(device), prev.to(device), target.to(device)


# ---------------------------------------------------------------- loss, lr

def label_smoothed_nll(logits, target, eps, pad_id):
    """fairseq's label_smoothed_nll_loss (sum over non-pad tokens)."""
    lprobs = F.log_softmax(logits.float(), dim=-1)
    nll = -lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    smooth = -lprobs.sum(-1)
    mask = target.ne(pad_id)
    nll = nll[mask].sum()
    smooth = smooth[mask].sum()
    eps_i = eps / (lprobs.size(-1) - 1)
    loss = (1.0 - eps - eps_i) * nll + eps_i * smooth
    return loss, nll, int(mask.sum())


# ---------------------------------------------------------------- eval

def translate(model, srcs, beam=1, batch_size=64, max_len_a=1.2, max_len_b=10, lenpen=1.0):
    """srcs: id lists including the language token, without eos. Returns id
    lists in input order; batches are built from length-sorted inputs."""
    order = sorted(range(len(srcs)), key=lambda i: len(srcs[i]))
    out = [None] * len(srcs)
    device = next(model.parameters()).device
    for k in range(0, len(order), batch_size):
        idx = order[k:k + batch_size]
        src = R.pad_batch([srcs[i] for i in idx], model.cfg).to(device)
        if beam == 1:
            hyps = R.greedy_search(model, src, max_len_a=max_len_a, max_len_b=max_len_b)
        else:
            hyps = [h[0][0] for h in R.beam_search(model, src, beam=beam, lenpen=lenpen,
                                                    max_len_a=max_len_a, max_len_b=max_len_b)]
        for i, h in zip(idx, hyps):
            out[i] = h
    return out


def evaluate_bleu(model, data_dir, split, pieces, beam=1, limit=None, batch_size=64):
    """Corpus BLEU per direction on a split; returns ({dir: score}, {dir: hyps})."""
    ids = {lang: read_ids(os.path.join(data_dir, "%s.%s.ids" % (split, lang))) for lang in ("es", "en")}
    txt = {lang: read_lines(os.path.join(data_dir, "%s.%s" % (split, lang))) for lang in ("es", "en")}
    scores, outputs = {}, {}
    model.eval()
    for s, t in DIRECTIONS:
        n = len(ids[s]) if limit is None else min(limit, len(ids[s]))
        srcs = [[LANG_TOKENS[t]] + ids[s][i][:model.cfg.max_positions - 3] for i in range(n)]
        out_ids = translate(model, srcs, beam=beam, batch_size=batch_size)
        if hasattr(pieces, "decode_many"):
            hyps = pieces.decode_many(out_ids)
        else:
            hyps = [pieces.decode(h) for h in out_ids]
        scores[s + "-" + t] = bleu.corpus_bleu(hyps, txt[t][:n])["score"]
        outputs[s + "-" + t] = hyps
    return scores, outputs


# ---------------------------------------------------------------- main

def choose_threads(speed, current, rate, interval):
    """--threads auto: the machine is shared, and two threads that wait on
    each other can be slower than one.  Keeps a running tokens/s per setting,
    uses the faster one, and tries the other one interval in six."""
    speed[current] = rate if current not in speed else 0.5 * speed[current] + 0.5 * rate
    other = 1 if current == 2 else 2
    if other not in speed or interval % 6 == 0:
        return other
    return max(speed, key=speed.get)


def autocast(device, enabled):
    if not enabled:
        return torch.autocast(device_type="cpu", enabled=False)
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def init_from_model_dir(model, init_dir, vocab_path):
    """Warm start: copies every parameter of the model in init_dir (a shipped
    model directory) whose shape matches.  The embedding is mapped piece by
    piece through the two SentencePiece vocabularies, so a new vocabulary
    keeps what the old one learnt; a piece the old vocabulary lacks starts as
    the mean embedding of the old pieces spm_encode splits it into.  Returns
    counts for the log."""
    old = R.load_model_dir(init_dir)
    old_pieces = [line.split("\t")[0] for line in read_lines(os.path.join(init_dir, "spm.vocab"))] \
        if os.path.exists(os.path.join(init_dir, "spm.vocab")) else spm_pieces(os.path.join(init_dir, "spm.model"))
    new_pieces = [line.split("\t")[0] for line in read_lines(vocab_path)]
    old_sd, new_sd = old.state_dict(), model.state_dict()
    copied = 0
    for name, t in new_sd.items():
        if name.endswith("embed_tokens.weight") or name == "output_projection.weight":
            continue
        if name in old_sd and old_sd[name].shape == t.shape:
            t.copy_(old_sd[name])
            copied += 1
    old_index = {p: i for i, p in enumerate(old_pieces)}
    emb_old = old.encoder.embed_tokens.weight.detach()
    missing = [i for i, p in enumerate(new_pieces) if p not in old_index]
    split_ids = spm_encode_pieces(os.path.join(init_dir, "spm.model"),
                                  [new_pieces[i].replace("\u2581", " ") for i in missing])
    with torch.no_grad():
        emb = model.encoder.embed_tokens.weight
        for i, p in enumerate(new_pieces):
            if p in old_index:
                emb[i] = emb_old[old_index[p]]
        for i, ids in zip(missing, split_ids):
            ids = [k for k in ids if k > 5]
            if ids:
                emb[i] = emb_old[ids].mean(0)
        if not model.cfg.share_embeddings:
            model.decoder.embed_tokens.weight.copy_(emb)
    return {"tensors_copied": copied, "pieces_shared": len(new_pieces) - len(missing),
            "pieces_new": len(missing)}


def spm_pieces(model_path):
    out = subprocess.run(["spm_export_vocab", "--model=" + model_path], capture_output=True,
                         text=True, check=True).stdout
    return [line.split("\t")[0] for line in out.splitlines()]


def spm_encode_pieces(model_path, texts):
    """ids of each text under model_path, by Debian's spm_encode."""
    if not texts:
        return []
    out = subprocess.run(["spm_encode", "--model=" + model_path, "--output_format=id"],
                         input="\n".join(t.replace("\n", " ") for t in texts) + "\n",
                         capture_output=True, text=True, check=True).stdout
    return [[int(x) for x in line.split()] for line in out.split("\n")[:len(texts)]]


def save_checkpoint(path, model, opt, state):
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state,
                "cfg": model.cfg.to_dict()}, tmp)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=paths.CORPUS)
    ap.add_argument("--run", required=True, help="run directory (checkpoints, log)")
    ap.add_argument("--style", default="residual", choices=R.STYLES)
    ap.add_argument("--enc", type=int, default=6)
    ap.add_argument("--dec", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--ffn", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--clip-norm", type=float, default=1.0)
    ap.add_argument("--max-tokens", type=int, default=3000)
    ap.add_argument("--max-len", type=int, default=200, help="drop training pairs longer than this (pieces)")
    ap.add_argument("--decay-start", type=int, default=0,
                    help="update at which the linear cooldown begins (with --decay-end)")
    ap.add_argument("--decay-end", type=int, default=0,
                    help="update at which the cooldown reaches 0 and training stops; 0: no cooldown")
    ap.add_argument("--time-budget", type=float, default=60.0, help="minutes of training in this invocation")
    ap.add_argument("--max-updates", type=int, default=0)
    ap.add_argument("--deadline", default=None, help="UTC wall-clock time HH:MM at which to stop in any case")
    ap.add_argument("--save-minutes", type=float, default=10.0)
    ap.add_argument("--valid-minutes", type=float, default=15.0)
    ap.add_argument("--valid-limit", type=int, default=40, help="valid sentences per direction for BLEU")
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--threads", default="2",
                    help="intra-op threads, or 'auto': 1 or 2, whichever measures faster on the shared machine")
    ap.add_argument("--no-bf16", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--source-weights", default="",
                    help="examples per epoch by corpus, e.g. 'bible=1,gettext=0.5' (train.src names)")
    ap.add_argument("--valid-splits", default="valid,modern-valid",
                    help="splits scored by greedy BLEU during training (those present in --data)")
    ap.add_argument("--init", default=None,
                    help="model directory to start from (a new run only; pieces mapped by string)")
    args = ap.parse_args()

    auto_threads = args.threads == "auto"
    threads = 2 if auto_threads else int(args.threads)
    torch.set_num_threads(threads)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_bf16 = not args.no_bf16
    os.makedirs(args.run, exist_ok=True)
    ckpt_path = os.path.join(args.run, "checkpoint_last.pt")
    log_path = os.path.join(args.run, "log.jsonl")
    pieces = Pieces(os.path.join(args.data, "spm.vocab"))

    def log(obj):
        obj["time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = json.dumps(obj)
        print(line, flush=True)
        with open(log_path, "a") as f:
            f.write(line + "\n")

    if os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path, map_location="cpu")
        cfg = R.ModelConfig.from_dict(ck["cfg"])
        state = ck["state"]
    else:
        ck = None
        cfg = R.ModelConfig(
            style=args.style, d_model=args.d_model, ffn_dim=args.ffn, n_heads=args.heads,
            encoder_layers=args.enc, decoder_layers=args.dec, vocab_size=len(pieces.pieces),
            dropout=args.dropout,
            languages={"source": ["es", "en"], "target": ["en", "es"],
                       "target_lang_tokens": dict(LANG_TOKENS),
                       "usage": "src = [<2xx>] + spm ids + [</s>], xx the target language"})
        state = {"step": 0, "epoch": 0, "batch": 0, "train_seconds": 0.0, "tokens": 0}
    model = R.Transformer(cfg).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-8)
    if ck is not None:
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        log({"event": "resume", "step": state["step"], "epoch": state["epoch"]})
    elif args.init:
        log({"event": "init", "from": args.init, **init_from_model_dir(model, args.init, os.path.join(args.data, "spm.vocab"))})
    nparams = sum(p.numel() for p in model.parameters())
    log({"event": "start", "params": nparams, "config": cfg.to_dict(), "device": str(device),
         "threads": args.threads, "bf16": use_bf16, "args": vars(args)})

    examples = make_examples(args.data, "train", args.max_len)
    weights = parse_weights(args.source_weights)
    counts = {}
    for ex in examples:
        counts[ex[3]] = counts.get(ex[3], 0) + 1
    log({"event": "data", "examples": counts, "weights": weights})
    valid_splits = [v for v in args.valid_splits.split(",")
                    if os.path.exists(os.path.join(args.data, v + ".es.ids"))]
    t_start = time.time()
    last_save = last_valid = t_log = time.time()
    thread_speed = {}
    budget = args.time_budget * 60.0
    deadline = None
    if args.deadline:
        hh, mm = (int(x) for x in args.deadline.split(":"))
        tm = time.gmtime()
        deadline = time.time() - (tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) + hh * 3600 + mm * 60
        if deadline <= time.time():  # HH:MM already past today: tomorrow's (a run across midnight)
            deadline += 24 * 3600
    acc = {"loss": 0.0, "nll": 0.0, "tok": 0, "n": 0}
    done = False
    # SIGTERM/SIGINT: finish the current update, save, stop (rerun to resume)
    stop_requested = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop_requested.append(True))
    while not done:
        selection = epoch_selection(examples, weights, args.seed * 1000 + state["epoch"])
        batches = make_batches(examples, args.max_tokens, args.seed + state["epoch"], selection)
        while state["batch"] < len(batches):
            idx = batches[state["batch"]]
            src, prev, target = collate(examples, idx, cfg, device)
            model.train()
            lr = scheduled_lr(state["step"] + 1, args.lr, args.warmup, args.decay_start, args.decay_end)
            for g in opt.param_groups:
                g["lr"] = lr
            with autocast(device, use_bf16):
                logits = model(src, prev)
            loss, nll, ntok = label_smoothed_nll(logits, target, args.label_smoothing, cfg.pad_id)
            opt.zero_grad(set_to_none=True)
            (loss / ntok).backward()
            if args.clip_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
            opt.step()
            state["step"] += 1
            state["batch"] += 1
            state["tokens"] += ntok
            acc["loss"] += float(loss)
            acc["nll"] += float(nll)
            acc["tok"] += ntok
            acc["n"] += 1
            now = time.time()
            elapsed = now - t_start
            if state["step"] % args.log_every == 0:
                rate = acc["tok"] / max(1e-9, now - t_log)
                log({"step": state["step"], "epoch": state["epoch"] + state["batch"] / len(batches),
                     "loss": acc["loss"] / acc["tok"] / math.log(2), "nll": acc["nll"] / acc["tok"] / math.log(2),
                     "ppl": 2 ** (acc["nll"] / acc["tok"] / math.log(2)), "lr": lr,
                     "tok_per_s": rate, "threads": threads,
                     "train_minutes": (state["train_seconds"] + elapsed) / 60})
                acc = {"loss": 0.0, "nll": 0.0, "tok": 0, "n": 0}
                t_log = time.time()
                if auto_threads:
                    threads = choose_threads(thread_speed, threads, rate, state["step"] // args.log_every)
                    if threads != torch.get_num_threads():
                        torch.set_num_threads(threads)
                        log({"event": "threads", "threads": threads,
                             "speeds": {k: round(v) for k, v in thread_speed.items()}})
            out_of_time = (elapsed >= budget or (args.max_updates and state["step"] >= args.max_updates)
                           or (args.decay_end > args.decay_start and state["step"] >= args.decay_end)
                           or (deadline is not None and now >= deadline) or bool(stop_requested))
            if now - last_valid >= args.valid_minutes * 60 or (out_of_time and not stop_requested):
                tv = time.time()
                for split in valid_splits:
                    scores, _ = evaluate_bleu(model, args.data, split, pieces, beam=1, limit=args.valid_limit)
                    log({"event": "valid", "split": split, "step": state["step"], "bleu_greedy": scores,
                         "sentences_per_direction": args.valid_limit, "seconds": time.time() - tv})
                last_valid = time.time()
                # evaluation time is not training time
                t_start += time.time() - tv
                t_log += time.time() - tv
            if now - last_save >= args.save_minutes * 60 or out_of_time:
                st = dict(state)
                st["train_seconds"] = state["train_seconds"] + (time.time() - t_start)
                save_checkpoint(ckpt_path, model, opt, st)
                # weights-only snapshots, for checkpoint averaging at export
                torch.save(model.state_dict(), os.path.join(args.run, "weights_%06d.pt" % state["step"]))
                last_save = time.time()
                log({"event": "save", "step": state["step"], "train_minutes": st["train_seconds"] / 60})
            if out_of_time:
                done = True
                break
        if not done:
            state["epoch"] += 1
            state["batch"] = 0
    log({"event": "end", "step": state["step"]})


if __name__ == "__main__":
    main()
