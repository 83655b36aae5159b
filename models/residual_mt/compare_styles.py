#!/usr/bin/env python3
"""Post-LN, Pre-LN and ResiDual at equal budget, shallow and deep (issue 15).

Trains the three residual styles of models/reference.py with everything but
the style held equal: the same examples (one corpus source, both directions),
vocabulary, seed, batches in the same order, learning-rate schedule, number of
updates and initialisation.  microsoft/ResiDual adds no initialisation rule of
its own: its model is fairseq's TransformerModelBase with the layers swapped,
so all three styles start from fairseq's initialisation (fairseq_init below),
and one seed gives the three styles identical initial weights.

For each depth (N encoder + N decoder layers) and style it records the
training loss of every update, greedy BLEU on the valid split every
--eval-every updates, whether the run diverged (a non-finite loss, or the
loss rising well above where it started; training stops there), and at the
end BLEU with beam 5 on the valid and test splits, both directions.  Then it
re-runs models/analyze.py's measurements (gradient norm per layer, cosine of
consecutive layers) on the initial and the trained weights.

Writes to --out: results.json, table.md, bleu_curve.png (valid greedy BLEU
and training loss against updates), analysis.json, analysis.md,
grad_norms.png, cosine.png.  Checkpoints go to --work (not committed); a
finished run there with the same settings is reused, so an interrupted
comparison resumes run by run.

    nice -n 10 /usr/bin/python3 models/compare_styles.py      # the committed CPU run
    /usr/bin/python3 models/compare_styles.py --d-model 256 --ffn 1024 --updates 4000 \
        --warmup 1000 --max-tokens 4096 --valid-limit 0 --test-limit 0   # a fuller one
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads OpenMP

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from . import analysis as A  # noqa: E402
from . import corpus, paths, training  # noqa: E402
from . import reference as R  # noqa: E402
from .evaluate import evaluate_bleu  # noqa: E402

STYLES = A.STYLES
NAMES = A.NAMES
CPU = torch.device("cpu")

# The paper's IWSLT'14 de-en BLEU as quoted by secondary sources (approximate);
# None: "fails to train".
PAPER_BLEU = {6: {"post": 35.37, "pre": 35.12, "residual": 35.63},
              12: {"post": None, "pre": 35.18, "residual": 36.09}}

# Settings that must match for a finished run in --work to be reused.
RUN_SETTINGS = ("data", "source", "seed", "d_model", "ffn", "heads", "dropout", "lr", "warmup",
                "weight_decay", "clip_norm", "label_smoothing", "max_tokens", "max_len", "updates",
                "eval_every", "valid_limit", "test_limit", "beam", "divergence_window", "divergence_margin")


# ---------------------------------------------------------------- init

def fairseq_init(model):
    """fairseq's initialisation of a Transformer, which microsoft/ResiDual
    keeps for every style: embeddings N(0, d^-0.5) with a zero pad row;
    attention q/k/v weights xavier-uniform with gain 1/sqrt(2) and their
    biases left at torch's default; out_proj xavier-uniform, zero bias;
    fc1/fc2 torch's default nn.Linear initialisation; LayerNorm 1 and 0.
    Parameters are visited in module order, which is the same for the three
    styles (their LayerNorms draw no random numbers)."""
    d = model.cfg.d_model
    for name, module in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if isinstance(module, nn.Linear):
            if leaf in ("q_proj", "k_proj", "v_proj"):
                nn.init.xavier_uniform_(module.weight, gain=1 / math.sqrt(2))
                bound = 1 / math.sqrt(module.in_features)
                nn.init.uniform_(module.bias, -bound, bound)
            elif leaf == "out_proj":
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
            elif leaf == "output_projection":
                nn.init.normal_(module.weight, mean=0, std=d ** -0.5)
            else:
                module.reset_parameters()
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0, std=d ** -0.5)
            with torch.no_grad():
                module.weight[model.cfg.pad_id].zero_()


def build_model(style, depth, vocab_size, args):
    torch.manual_seed(args.seed)
    cfg = R.ModelConfig(style=style, d_model=args.d_model, ffn_dim=args.ffn, n_heads=args.heads,
                        encoder_layers=depth, decoder_layers=depth, vocab_size=vocab_size,
                        dropout=args.dropout,
                        languages={"source": ["es", "en"], "target": ["en", "es"],
                                   "target_lang_tokens": dict(corpus.LANG_TOKENS)})
    model = R.Transformer(cfg)
    fairseq_init(model)
    return model


def weights_fingerprint(model):
    """Sum and sum of squares of the parameters every style has (all but the
    stack-final LayerNorms), to show the styles start from the same weights."""
    s = sq = 0.0
    for name, p in model.named_parameters():
        if name.startswith(("encoder.layer_norm.", "decoder.layer_norm.")):
            continue
        s += float(p.double().sum())
        sq += float((p.double() ** 2).sum())
    return [s, sq]


# ---------------------------------------------------------------- divergence

def divergence(losses, window, margin):
    """None, or why a run counts as diverged: a non-finite loss, or the mean
    loss of the last `window` updates more than `margin` nats above the mean
    of the first `window` updates (the untrained model's loss)."""
    for i, v in enumerate(losses):
        if not math.isfinite(v):
            return "non-finite loss at update %d" % (i + 1)
    if len(losses) >= 2 * window:
        start = sum(losses[:window]) / window
        now = sum(losses[-window:]) / window
        if now > start + margin:
            return "loss rose from %.2f to %.2f nats by update %d" % (start, now, len(losses))
    return None


# ---------------------------------------------------------------- one run

def mean_bleu(scores):
    return sum(scores.values()) / len(scores)


@torch.no_grad()
def valid_nll(model, examples, max_tokens):
    """Teacher-forced cross-entropy per target token (nats, no smoothing)."""
    model.eval()
    total = tokens = 0
    for idx in corpus.make_batches(examples, max_tokens, 0):
        src, prev, target = corpus.collate(examples, idx, model.cfg, CPU)
        _, nll, ntok = training.label_smoothed_nll(model(src, prev), target, 0.0, model.cfg.pad_id)
        total += float(nll)
        tokens += ntok
    return total / tokens


def curve_point(step, model, valid_examples, pieces, losses, args):
    """Valid greedy BLEU and NLL, and the mean training loss since the last point."""
    scores, _ = evaluate_bleu(model, args.data, "valid", pieces, beam=1, limit=args.valid_limit or None,
                              batch_size=args.eval_batch)
    window = losses[-args.eval_every:]
    return {"update": step, "valid_greedy": scores, "valid_greedy_mean": mean_bleu(scores),
            "valid_nll": valid_nll(model, valid_examples, args.max_tokens),
            "train_loss": sum(window) / len(window)}


def train_one(style, depth, examples, valid_examples, pieces, args, log):
    model = build_model(style, depth, len(pieces.pieces), args)
    init_state = {k: v.clone() for k, v in model.state_dict().items()}
    fingerprint = weights_fingerprint(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-8,
                            weight_decay=args.weight_decay)
    torch.manual_seed(args.seed + 1)  # dropout masks: the same stream for every style
    losses, curve = [], []
    run = {"tokens": 0, "why": None, "train_seconds": 0.0, "eval_seconds": 0.0}
    name = "%s E%dD%d" % (NAMES[style], depth, depth)

    def after_update(u):
        run["tokens"] += u.tokens
        run["train_seconds"] += u.seconds
        losses.append(u.loss / u.tokens)
        run["why"] = divergence(losses, args.divergence_window, args.divergence_margin)
        if run["why"] is not None:
            log("%s diverged: %s" % (name, run["why"]))
            return True
        if u.step % args.eval_every == 0 or u.step == args.updates:
            t0 = time.time()
            curve.append(curve_point(u.step, model, valid_examples, pieces, losses, args))
            run["eval_seconds"] += time.time() - t0
            log("%s update %d loss %.3f valid nll %.3f greedy BLEU %.2f (train %.0f s, eval %.0f s)" % (
                name, u.step, curve[-1]["train_loss"], curve[-1]["valid_nll"],
                curve[-1]["valid_greedy_mean"], run["train_seconds"], run["eval_seconds"]))
        return u.step >= args.updates

    options = training.Options(lr=args.lr, warmup=args.warmup, label_smoothing=args.label_smoothing,
                               clip_norm=args.clip_norm, skip_nonfinite=True)
    step = 0
    if args.updates > 0:
        step = training.run(model, opt, examples, corpus.Epochs(examples, args.max_tokens, args.seed,
                                                                 {"epoch": 0, "batch": 0}),
                            options, after_update=after_update)
    why, tokens, train_seconds, eval_seconds = run["why"], run["tokens"], run["train_seconds"], run["eval_seconds"]
    result = {"style": style, "depth": depth, "updates": step, "target_tokens": tokens,
              "diverged": why is not None, "divergence": why, "losses": losses, "curve": curve,
              "init_fingerprint": fingerprint, "train_seconds": train_seconds}
    if why is None:
        t0 = time.time()
        result["bleu_beam"] = {}
        for split, limit in (("valid", None), ("test", args.test_limit or None)):
            scores, _ = evaluate_bleu(model, args.data, split, pieces, beam=args.beam, limit=limit,
                                      batch_size=args.eval_batch)
            result["bleu_beam"][split] = dict(scores, mean=mean_bleu(scores))
        eval_seconds += time.time() - t0
        log("%s E%dD%d beam %d BLEU valid %.2f test %.2f" % (
            NAMES[style], depth, depth, args.beam, result["bleu_beam"]["valid"]["mean"],
            result["bleu_beam"]["test"]["mean"]))
    result["eval_seconds"] = eval_seconds
    return model, init_state, result


# ---------------------------------------------------------------- outputs

def fmt(v, digits=2):
    return "–" if v is None else "%.*f" % (digits, v)


def write_table(runs, meta, path):
    st = meta["settings"]
    w = st["divergence_window"]
    lines = [
        "Settings: %s\n" % json.dumps(st),
        "BLEU (sacreBLEU-style, models/bleu.py), mean of both directions: valid greedy on the first "
        "%s valid sentences per direction (the last point of the curve), beam %d on the whole valid "
        "split (the Bible valid book in the project's corpus) and on %s of the test split (the Bible "
        "test books).  Loss: label-smoothed cross-entropy per target token (nats), mean of the first "
        "and last %d updates; valid NLL: teacher-forced, no smoothing, whole valid split.  Paper: "
        "IWSLT'14 de-en BLEU as quoted by secondary sources (approximate).\n" % (
            st["valid_limit"] or "all", st["beam"],
            "the first %d sentences per direction" % st["test_limit"] if st["test_limit"] else "all",
            w),
        "| depth | style | diverged | train loss start → end | valid NLL | valid greedy | valid beam | "
        "test beam es-en | test beam en-es | test beam mean | paper |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs.values():
        beam = r.get("bleu_beam")
        paper = PAPER_BLEU.get(r["depth"], {})
        paper_cell = "–" if r["depth"] not in PAPER_BLEU else (
            "fails to train" if paper.get(r["style"]) is None else "%.2f" % paper[r["style"]])
        last = r["curve"][-1] if r["curve"] else {}
        lines.append("| E%dD%d | %s | %s | %.2f → %.2f | %s | %s | %s | %s | %s | %s | %s |" % (
            r["depth"], r["depth"], NAMES[r["style"]],
            ("yes: " + r["divergence"]) if r["diverged"] else "no",
            sum(r["losses"][:w]) / len(r["losses"][:w]), sum(r["losses"][-w:]) / len(r["losses"][-w:]),
            fmt(last.get("valid_nll"), 3), fmt(last.get("valid_greedy_mean")), fmt(beam and beam["valid"]["mean"]),
            fmt(beam and beam["test"]["es-en"]), fmt(beam and beam["test"]["en-es"]),
            fmt(beam and beam["test"]["mean"]), paper_cell))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot_curves(runs, depths, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = (("valid BLEU (greedy, mean of both directions)", "BLEU"),
            ("valid loss (teacher-forced NLL)", "nats/token"),
            ("training loss (label-smoothed)", "nats/token"))
    fig, axes = plt.subplots(len(rows), len(depths), figsize=(5.5 * len(depths), 9.5), squeeze=False)
    for c, depth in enumerate(depths):
        for style in STYLES:
            r = runs.get("%s-%d" % (style, depth))
            if r is None:
                continue
            label = NAMES[style] + (" (diverged)" if r["diverged"] else "")
            xs = [p["update"] for p in r["curve"]]
            axes[0][c].plot(xs, [p["valid_greedy_mean"] for p in r["curve"]], marker="o", ms=3, label=label)
            axes[1][c].plot(xs, [p["valid_nll"] for p in r["curve"]], marker="o", ms=3, label=label)
            k = max(1, len(r["losses"]) // 50)  # averaged over about 50 points
            xs = list(range(k, len(r["losses"]) + 1, k))
            axes[2][c].plot(xs, [sum(r["losses"][x - k:x]) / k for x in xs], label=label)
        for ax, (title, ylabel) in zip((row[c] for row in axes), rows):
            ax.set_title("E%dD%d: %s" % (depth, depth, title), fontsize=9)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.set_xlabel("updates", fontsize=8)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def machine():
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": model, "cores": os.cpu_count(), "threads": torch.get_num_threads(),
            "nice": os.nice(0), "load_average_at_start": os.getloadavg(), "torch": torch.__version__}


# ---------------------------------------------------------------- main

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=paths.CORPUS)
    ap.add_argument("--source", default="bible", help="train.src name to train on ('' for all)")
    ap.add_argument("--out", default=os.path.join(paths.ANALYSIS, "compare"))
    ap.add_argument("--work", default=os.path.join(paths.ROOT, "build", "compare_styles"),
                    help="checkpoints (one per run)")
    ap.add_argument("--depths", type=int, nargs="+", default=[6, 12])
    ap.add_argument("--styles", nargs="+", default=list(STYLES), choices=STYLES)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--ffn", type=int, default=512)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--updates", type=int, default=250, help="updates per run")
    ap.add_argument("--max-tokens", type=int, default=1200, help="batch size, as in train.py")
    ap.add_argument("--max-len", type=int, default=200)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=60)
    ap.add_argument("--weight-decay", type=float, default=1e-4, help="decoupled, as fairseq's Adam")
    ap.add_argument("--clip-norm", type=float, default=0.0, help="0: none, as microsoft/ResiDual's configs")
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--eval-every", type=int, default=50, help="updates between valid greedy BLEU")
    ap.add_argument("--valid-limit", type=int, default=20,
                    help="valid sentences per direction for the curve's greedy BLEU (0: all)")
    ap.add_argument("--test-limit", type=int, default=73,
                    help="test sentences per direction for the final beam BLEU, the first ones "
                         "(73: the book of Joel; 0: all)")
    ap.add_argument("--beam", type=int, default=R.SEARCH["beam"])
    ap.add_argument("--eval-batch", type=int, default=256, help="sentences per decoding batch")
    ap.add_argument("--divergence-window", type=int, default=20)
    ap.add_argument("--divergence-margin", type=float, default=1.0, help="nats above the starting loss")
    ap.add_argument("--measure-tokens", type=int, default=1200, help="analyze.py measurement batch size")
    ap.add_argument("--measure-batches", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    args.data = os.path.abspath(args.data)
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    settings = {k: getattr(args, k) for k in RUN_SETTINGS}
    started = time.time()

    def log(text):
        print("[%5.0f s] %s" % (time.time() - started, text), flush=True)

    pieces = corpus.Pieces(os.path.join(args.data, "spm.vocab"))
    examples = [ex for ex in corpus.make_examples(args.data, "train", args.max_len)
                if not args.source or ex[3] == args.source]
    if not examples:
        sys.exit("no training examples from source %r in %s" % (args.source, args.data))
    valid_examples = corpus.make_examples(args.data, "valid", args.max_len)
    log("%d training examples (%s, both directions)" % (len(examples), args.source or "all sources"))
    meta = {"settings": settings, "depths": args.depths, "styles": args.styles, "examples": len(examples),
            "machine": machine(), "paper_bleu": PAPER_BLEU}
    runs, checkpoints = {}, []
    for depth in args.depths:
        for style in args.styles:
            key = "%s-%d" % (style, depth)
            path = os.path.join(args.work, key + ".pt")
            old = torch.load(path, map_location="cpu") if os.path.exists(path) else None
            if old is not None and old.get("settings") == settings:
                log("%s: reusing %s" % (key, path))
                runs[key] = old["result"]
            else:
                t0 = time.time()
                model, init_state, result = train_one(style, depth, examples, valid_examples, pieces, args, log)
                result["wall_seconds"] = time.time() - t0
                torch.save({"cfg": model.cfg.to_dict(), "model": model.state_dict(), "init_model": init_state,
                            "settings": settings, "result": result}, path)
                runs[key] = result
            if not any(not math.isfinite(v) for v in runs[key]["losses"]):
                checkpoints.append(path)
    meta["seconds"] = time.time() - started
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)
    write_table(runs, meta, os.path.join(args.out, "table.md"))
    plot_curves(runs, args.depths, os.path.join(args.out, "bleu_curve.png"))

    log("measuring gradient norms and layer cosines (models/analyze.py) on %d checkpoints" % len(checkpoints))
    measured = A.measure_checkpoints(checkpoints, args.data, source=args.source, max_tokens=args.measure_tokens,
                                     n_batches=args.measure_batches, seed=args.seed)
    A.write_outputs(measured, [d for d in args.depths if any(k.endswith("-%d" % d) for k in measured)],
                    {"checkpoints": "models/compare_styles.py runs", "source": args.source,
                     "max_tokens": args.measure_tokens, "measure_batches": args.measure_batches},
                    args.out, results_name="analysis.json", table_name="analysis.md")
    log("done in %.0f s" % (time.time() - started))


if __name__ == "__main__":
    main()
