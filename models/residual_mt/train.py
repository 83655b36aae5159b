"""Trains the reference Transformer (reference.py) on the es<->en corpus
built by models/data/build_corpus.py (the examples: corpus.py).

    /usr/bin/python3 models/train.py --run models/runs/main \
        --style residual --enc 6 --dec 2 --time-budget 60

Training follows fairseq's transformer recipe (training.py: label-smoothed
cross-entropy (0.1), Adam(0.9, 0.98), inverse-sqrt learning rate with
linear warm-up, dropout, batches of at most --max-tokens tokens built from
length-sorted sentences).  On CPU it uses --threads threads and bf16
autocast; on a CUDA GPU it runs there (bf16 autocast too).  A checkpoint
(model, optimiser, position in the data, clock; checkpoint.py) is written
every --save-minutes and at the end; rerunning the same command resumes
from it.  The log (one JSON object per line, run/log.jsonl) holds the
training loss and the greedy valid BLEU.
"""
import argparse
import json
import math
import os
import signal
import time

import torch

from . import checkpoint, corpus, paths, spm, training
from . import reference as R
from .evaluate import evaluate_split


def parse_args(argv=None):
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
    ap.add_argument("--bt-tag", action="store_true",
                    help="mark back-translated sources (name-bt:xx-yy) with <s> after the language token, so that "
                         "the model tells Apertium's text from human text (tagged back-translation); the engine "
                         "never writes the mark, so every source it reads counts as human")
    ap.add_argument("--valid-splits", default="valid,modern-valid",
                    help="splits scored by greedy BLEU during training (those present in --data)")
    ap.add_argument("--init", default=None,
                    help="model directory to start from (a new run only; pieces mapped by string)")
    return ap.parse_args(argv)


def init_from_model_dir(model, init_dir, vocab_path):
    """Warm start: copies every parameter of the model in init_dir (a shipped
    model directory) whose shape matches.  The embedding is mapped piece by
    piece through the two SentencePiece vocabularies, so a new vocabulary
    keeps what the old one learnt; a piece the old vocabulary lacks starts as
    the mean embedding of the old pieces spm_encode splits it into.  Returns
    counts for the log."""
    old = R.load_model_dir(init_dir)
    vocab = os.path.join(init_dir, "spm.vocab")
    old_pieces = [line.split("\t")[0] for line in corpus.read_lines(vocab)] \
        if os.path.exists(vocab) else spm.pieces(os.path.join(init_dir, "spm.model"))
    new_pieces = [line.split("\t")[0] for line in corpus.read_lines(vocab_path)]
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
    split_ids = spm.encode(os.path.join(init_dir, "spm.model"), [new_pieces[i].replace("\u2581", " ") for i in missing])
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


def choose_threads(speed, current, rate, interval):
    """--threads auto: the machine is shared, and two threads that wait on
    each other can be slower than one.  Keeps a running tokens/s per setting,
    uses the faster one, and tries the other one interval in six."""
    speed[current] = rate if current not in speed else 0.5 * speed[current] + 0.5 * rate
    other = 1 if current == 2 else 2
    if other not in speed or interval % 6 == 0:
        return other
    return max(speed, key=speed.get)


def deadline_at(hhmm):
    """The epoch time of the next UTC HH:MM (tomorrow's when today's is past:
    a run across midnight)."""
    hh, mm = (int(x) for x in hhmm.split(":"))
    tm = time.gmtime()
    deadline = time.time() - (tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) + hh * 3600 + mm * 60
    return deadline + 24 * 3600 if deadline <= time.time() else deadline


def new_config(args, vocab_size):
    return R.ModelConfig(
        style=args.style, d_model=args.d_model, ffn_dim=args.ffn, n_heads=args.heads,
        encoder_layers=args.enc, decoder_layers=args.dec, vocab_size=vocab_size, dropout=args.dropout,
        languages={"source": ["es", "en"], "target": ["en", "es"],
                   "target_lang_tokens": dict(corpus.LANG_TOKENS),
                   "usage": "src = [<2xx>] + spm ids + [</s>], xx the target language"})


class Run:
    """One invocation of a training run: resumes it (or starts it), trains
    until its budget is spent, validates and saves along the way."""

    def __init__(self, args):
        self.args = args
        self.auto_threads = args.threads == "auto"
        self.threads = 2 if self.auto_threads else int(args.threads)
        torch.set_num_threads(self.threads)
        torch.manual_seed(args.seed)
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        os.makedirs(args.run, exist_ok=True)
        self.log_path = os.path.join(args.run, "log.jsonl")
        self.pieces = corpus.Pieces(os.path.join(args.data, "spm.vocab"))
        ck = checkpoint.load_last(args.run)
        if ck is not None:
            cfg, self.state = R.ModelConfig.from_dict(ck["cfg"]), ck["state"]
        else:
            cfg = new_config(args, len(self.pieces.pieces))
            self.state = {"step": 0, "epoch": 0, "batch": 0, "train_seconds": 0.0, "tokens": 0}
        self.model = R.Transformer(cfg).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-8)
        if ck is not None:
            self.model.load_state_dict(ck["model"])
            self.opt.load_state_dict(ck["opt"])
            self.log({"event": "resume", "step": self.state["step"], "epoch": self.state["epoch"]})
        elif args.init:
            self.log({"event": "init", "from": args.init,
                      **init_from_model_dir(self.model, args.init, os.path.join(args.data, "spm.vocab"))})
        self.options = training.Options(lr=args.lr, warmup=args.warmup, decay_start=args.decay_start,
                                        decay_end=args.decay_end, label_smoothing=args.label_smoothing,
                                        clip_norm=args.clip_norm, bf16=not args.no_bf16)
        self.log({"event": "start", "params": sum(p.numel() for p in self.model.parameters()),
                  "config": cfg.to_dict(), "device": str(self.device), "threads": args.threads,
                  "bf16": self.options.bf16, "args": vars(args)})

    def log(self, obj):
        obj["time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = json.dumps(obj)
        print(line, flush=True)
        with open(self.log_path, "a") as f:
            f.write(line + "\n")

    def train(self):
        args = self.args
        weights = corpus.parse_weights(args.source_weights)
        self.examples = corpus.make_examples(args.data, "train", args.max_len, forward=set(weights),
                                             bt_tag=corpus.BT_TAG if args.bt_tag else None)
        counts = {}
        for ex in self.examples:
            counts[ex[3]] = counts.get(ex[3], 0) + 1
        self.log({"event": "data", "examples": counts, "weights": weights})
        self.valid_splits = [v for v in args.valid_splits.split(",") if corpus.has_split(args.data, v)]
        self.t_start = self.last_save = self.last_valid = self.t_log = time.time()
        self.thread_speed = {}
        self.deadline = deadline_at(args.deadline) if args.deadline else None
        self.acc = {"loss": 0.0, "nll": 0.0, "tok": 0}
        # SIGTERM/SIGINT: finish the current update, save, stop (rerun to resume)
        self.stop_requested = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop_requested.append(True))
        self.epochs = corpus.Epochs(self.examples, args.max_tokens, args.seed, self.state, weights)
        training.run(self.model, self.opt, self.examples, self.epochs, self.options,
                     first_step=self.state["step"], after_update=self.after_update)
        self.log({"event": "end", "step": self.state["step"]})

    def after_update(self, u):
        """Counts, logs, validates and saves; True when this invocation's time is up."""
        args, state = self.args, self.state
        state["step"] = u.step
        state["tokens"] += u.tokens
        self.acc["loss"] += u.loss
        self.acc["nll"] += u.nll
        self.acc["tok"] += u.tokens
        now = time.time()
        elapsed = now - self.t_start
        if u.step % args.log_every == 0:
            self.log_progress(u, now, elapsed)
        out_of_time = (elapsed >= args.time_budget * 60.0 or (args.max_updates and u.step >= args.max_updates)
                       or (args.decay_end > args.decay_start and u.step >= args.decay_end)
                       or (self.deadline is not None and now >= self.deadline) or bool(self.stop_requested))
        if now - self.last_valid >= args.valid_minutes * 60 or (out_of_time and not self.stop_requested):
            self.validate()
        if now - self.last_save >= args.save_minutes * 60 or out_of_time:
            self.save()
        return out_of_time

    def log_progress(self, u, now, elapsed):
        acc, args = self.acc, self.args
        rate = acc["tok"] / max(1e-9, now - self.t_log)
        def bits(v):  # per target token, in bits
            return v / acc["tok"] / math.log(2)
        self.log({"step": u.step, "epoch": self.epochs.progress(),
                  "loss": bits(acc["loss"]), "nll": bits(acc["nll"]), "ppl": 2 ** bits(acc["nll"]), "lr": u.lr,
                  "tok_per_s": rate, "threads": self.threads,
                  "train_minutes": (self.state["train_seconds"] + elapsed) / 60})
        self.acc = {"loss": 0.0, "nll": 0.0, "tok": 0}
        self.t_log = time.time()
        if self.auto_threads:
            self.threads = choose_threads(self.thread_speed, self.threads, rate, u.step // args.log_every)
            if self.threads != torch.get_num_threads():
                torch.set_num_threads(self.threads)
                self.log({"event": "threads", "threads": self.threads,
                          "speeds": {k: round(v) for k, v in self.thread_speed.items()}})

    def validate(self):
        tv = time.time()
        for split in self.valid_splits:
            scores, _ = evaluate_split(self.model, self.args.data, split, self.pieces, beam=1,
                                       limit=self.args.valid_limit)
            self.log({"event": "valid", "split": split, "step": self.state["step"],
                      "bleu_greedy": {d: v["bleu"] for d, v in scores.items()},
                      "chrf_greedy": {d: v["chrf"] for d, v in scores.items()},
                      "sentences_per_direction": self.args.valid_limit, "seconds": time.time() - tv})
        self.last_valid = time.time()
        # evaluation time is not training time
        self.t_start += time.time() - tv
        self.t_log += time.time() - tv

    def save(self):
        st = dict(self.state)
        st["train_seconds"] = self.state["train_seconds"] + (time.time() - self.t_start)
        checkpoint.save(self.args.run, self.model, self.opt, st)
        # weights-only snapshots, for checkpoint averaging at export
        checkpoint.save_snapshot(self.args.run, self.model, self.state["step"])
        self.last_save = time.time()
        self.log({"event": "save", "step": self.state["step"], "train_minutes": st["train_seconds"] / 60})


def main(argv=None):
    Run(parse_args(argv)).train()


if __name__ == "__main__":
    main()
