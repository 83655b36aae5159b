#!/usr/bin/env python3
"""The paper's two mechanisms, measured in miniature.

For Post-LN, Pre-LN and ResiDual stacks of depth N (N encoder + N decoder
layers; N = 6, 12, 24, d_model 64 by default) this script measures, at
initialisation and again after a short training run on the Bible corpus:

* the gradient norm reaching each layer: the L2 norm of the loss gradient
  with respect to all parameters of that layer (label-smoothed
  cross-entropy, averaged over the target tokens of a few fixed batches);
* the cosine similarity between each layer's output and the next layer's
  output (the stream a layer hands to the next one: x for Post-LN and
  ResiDual, the residual stream for Pre-LN), averaged over non-pad tokens.

Claims being checked (ResiDual paper, Xie et al. 2023, sections 3-4):
Post-LN's gradients to the lower layers vanish as depth grows; Pre-LN's
upper layers collapse (consecutive outputs become nearly identical);
ResiDual avoids both.

Writes models/analysis/{grad_norms.png, cosine.png, table.md, results.json}.
With --checkpoints it measures given trained checkpoints instead (train.py's
or compare_styles.py's; the latter also hold the initial weights) and
writes the same files to --out.

    /usr/bin/python3 models/analyze.py                  # full (~minutes, 1 thread)
    /usr/bin/python3 models/analyze.py --steps 20 --depths 6 12   # quicker
    /usr/bin/python3 models/analyze.py --checkpoints build/compare_styles/*.pt \
        --source bible --out /tmp/measured
"""
import argparse
import json
import math
import os
import random
import time

import torch

from . import corpus, paths, training
from . import reference as R

STYLES = ("post", "pre", "residual")
NAMES = {"post": "Post-LN", "pre": "Pre-LN", "residual": "ResiDual"}


def layer_outputs_hooks(model, store):
    handles = []
    for stack_name, stack in (("enc", model.encoder), ("dec", model.decoder)):
        for i, layer in enumerate(stack.layers):
            def hook(mod, inp, out, key=(stack_name, i)):
                store[key] = out[0].detach()
            handles.append(layer.register_forward_hook(hook))
    return handles


def layer_grad_norms(model):
    out = {}
    for stack_name, stack in (("enc", model.encoder), ("dec", model.decoder)):
        norms = []
        for layer in stack.layers:
            sq = sum(float((p.grad.float() ** 2).sum()) for p in layer.parameters() if p.grad is not None)
            norms.append(math.sqrt(sq))
        out[stack_name] = norms
    return out


def cosine_consecutive(store, n_layers, masks):
    """Mean cosine similarity of layer l and layer l+1 outputs, non-pad tokens."""
    out = {}
    for stack_name in ("enc", "dec"):
        mask = masks[stack_name]
        sims = []
        for i in range(n_layers - 1):
            a = store[(stack_name, i)].float()[mask]
            b = store[(stack_name, i + 1)].float()[mask]
            sims.append(float(torch.nn.functional.cosine_similarity(a, b, dim=-1).mean()))
        out[stack_name] = sims
    return out


def measure(model, batches, examples, cfg, eps):
    """Gradient norms and consecutive-layer cosines averaged over batches."""
    model.train()  # dropout is 0 in these configs; train mode only for autograd parity
    grads = None
    cos = None
    store = {}
    handles = layer_outputs_hooks(model, store)
    total_loss = 0.0
    total_tok = 0
    for idx in batches:
        src, prev, target = corpus.collate(examples, idx, cfg, torch.device("cpu"))
        model.zero_grad(set_to_none=True)
        logits = model(src, prev)
        loss, nll, ntok = training.label_smoothed_nll(logits, target, eps, cfg.pad_id)
        (loss / ntok).backward()
        total_loss += float(nll)
        total_tok += ntok
        g = layer_grad_norms(model)
        c = cosine_consecutive(store, cfg.encoder_layers,
                               {"enc": src.ne(cfg.pad_id), "dec": prev.ne(cfg.pad_id)})
        if grads is None:
            grads, cos = g, c
        else:
            for k in grads:
                grads[k] = [a + b for a, b in zip(grads[k], g[k])]
                cos[k] = [a + b for a, b in zip(cos[k], c[k])]
    for h in handles:
        h.remove()
    n = len(batches)
    model.zero_grad(set_to_none=True)
    return ({k: [v / n for v in vs] for k, vs in grads.items()},
            {k: [v / n for v in vs] for k, vs in cos.items()},
            total_loss / total_tok)


def short_train(model, examples, batches, steps, lr, warmup, eps):
    """steps updates on batches in turn; the NLL per token of each."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-8)
    losses = []
    # no gradient clipping: the point is to see how each style behaves
    options = training.Options(lr=lr, warmup=warmup, label_smoothing=eps, clip_norm=0.0)
    training.run(model, opt, examples, (batches[s % len(batches)] for s in range(steps)), options,
                 after_update=lambda u: losses.append(u.nll / u.tokens))
    return losses


def plot(results, depths, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for kind, fname, ylabel in (("grad", "grad_norms.png", "gradient norm of layer parameters"),
                                ("cos", "cosine.png", "cos(layer l output, layer l+1 output)")):
        fig, axes = plt.subplots(2 * len(depths), 2, figsize=(11, 3.2 * 2 * len(depths)), squeeze=False)
        for r, depth in enumerate(depths):
            for s, stack in enumerate(("enc", "dec")):
                for c, phase in enumerate(("init", "trained")):
                    ax = axes[2 * r + s][c]
                    for style in STYLES:
                        key = "%s-%d" % (style, depth)
                        if phase not in results.get(key, {}):
                            continue
                        vals = results[key][phase][kind][stack]
                        xs = list(range(1, len(vals) + 1))
                        ax.plot(xs, vals, marker="o", ms=3, label=NAMES[style])
                    if kind == "grad":
                        ax.set_yscale("log")
                    ax.set_title("%s, %s %d layers, %s" % (
                        "encoder" if stack == "enc" else "decoder", "depth", depth,
                        "at init" if phase == "init" else "after short training"), fontsize=9)
                    ax.set_xlabel("layer (1 = bottom)" if kind == "grad" else "layer pair l, l+1", fontsize=8)
                    ax.set_ylabel(ylabel, fontsize=8)
                    ax.grid(alpha=0.3)
                    ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, fname), dpi=80)
        plt.close(fig)


def summarise(results, depths):
    """Markdown table: per style/depth/phase, gradient ratio bottom/top and the
    mean cosine of the top quarter of layer pairs."""
    lines = ["| style | depth | phase | enc grad L1/LN | dec grad L1/LN | enc min grad | "
             "enc cos (top 1/4) | dec cos (top 1/4) | enc cos (bottom 1/4) | loss (nats) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for depth in depths:
        for style in STYLES:
            key = "%s-%d" % (style, depth)
            if key not in results:
                continue
            for phase in ("init", "trained"):
                if phase not in results[key]:
                    continue
                r = results[key][phase]
                g, c = r["grad"], r["cos"]
                q = max(1, (depth - 1) // 4)
                lines.append("| %s | %d | %s | %.3g | %.3g | %.3g | %.4f | %.4f | %.4f | %.3f |" % (
                    NAMES[style], depth, phase,
                    g["enc"][0] / g["enc"][-1], g["dec"][0] / g["dec"][-1], min(g["enc"]),
                    sum(c["enc"][-q:]) / q, sum(c["dec"][-q:]) / q, sum(c["enc"][:q]) / q,
                    r["loss"]))
    return "\n".join(lines) + "\n"


def measurement_batches(examples, max_tokens, n_batches, seed):
    """(measurement batches, the rest): the first n_batches of a shuffled batching."""
    batches = corpus.make_batches(examples, max_tokens, seed)
    random.Random(seed).shuffle(batches)
    return batches[:n_batches], batches[n_batches:]


def measure_checkpoints(paths, data_dir, source="", max_tokens=1200, n_batches=3, seed=1, eps=0.1):
    """The same measurements on trained models instead of this script's short
    training: each path is a torch checkpoint with "cfg" and "model" (a
    state dict; train.py's and compare_styles.py's checkpoints), and
    optionally "init_model" (the weights before training, measured as the
    "init" phase).  Dropout is off while measuring.  source: only training
    examples of that train.src corpus.  Returns {"style-depth": {phase:
    {"grad", "cos", "loss"}, "checkpoint": path}}."""
    examples = [ex for ex in corpus.make_examples(data_dir, "train", 100) if not source or ex[3] == source]
    batches, _ = measurement_batches(examples, max_tokens, n_batches, seed)
    results = {}
    for path in paths:
        ck = torch.load(path, map_location="cpu")
        cfg = R.ModelConfig.from_dict(ck["cfg"])
        if cfg.encoder_layers != cfg.decoder_layers:
            raise ValueError("%s: measuring needs as many decoder layers as encoder layers" % path)
        cfg.dropout = cfg.attention_dropout = cfg.activation_dropout = 0.0
        entry = {"checkpoint": path}
        for phase, field in (("init", "init_model"), ("trained", "model")):
            if field in ck:
                model = R.Transformer(cfg)
                model.load_state_dict(ck[field])
                g, c, loss = measure(model, batches, examples, cfg, eps)
                entry[phase] = {"grad": g, "cos": c, "loss": loss}
        results["%s-%d" % (cfg.style, cfg.encoder_layers)] = entry
    return results


def write_outputs(results, depths, meta, out_dir, results_name="results.json", table_name="table.md"):
    """results_name (every layer's numbers), table_name (summary),
    grad_norms.png and cosine.png in out_dir; returns the summary table."""
    with open(os.path.join(out_dir, results_name), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    table = summarise(results, depths)
    with open(os.path.join(out_dir, table_name), "w") as f:
        f.write("Settings: %s\n\n" % json.dumps(meta))
        f.write("grad L1/LN: gradient norm of the bottom layer divided by that of the top layer "
                "(<< 1: vanishing towards the bottom).  cos: mean cosine similarity between "
                "consecutive layer outputs (-> 1: layers stop changing the representation).  "
                "loss: NLL per target token (nats, without label smoothing) on the measurement batches.\n\n")
        f.write(table)
    plot(results, depths, out_dir)
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=paths.CORPUS)
    ap.add_argument("--out", default=None, help="output folder (default models/analysis)")
    ap.add_argument("--depths", type=int, nargs="+", default=[6, 12, 24])
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--steps", type=int, default=60, help="short training: Adam updates")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=1200)
    ap.add_argument("--measure-batches", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--checkpoints", nargs="+", default=None,
                    help="measure these trained checkpoints instead of training (needs --out)")
    ap.add_argument("--source", default="", help="with --checkpoints: measure on this train.src corpus only")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.checkpoints:
        if args.out is None:
            ap.error("--checkpoints needs --out (the default holds the committed short-training results)")
        os.makedirs(args.out, exist_ok=True)
        t0 = time.time()
        results = measure_checkpoints(args.checkpoints, args.data, args.source, args.max_tokens,
                                      args.measure_batches, args.seed)
        depths = sorted({int(k.rsplit("-", 1)[1]) for k in results})
        meta = {"checkpoints": args.checkpoints, "source": args.source, "max_tokens": args.max_tokens,
                "measure_batches": args.measure_batches, "seconds": time.time() - t0,
                "torch": torch.__version__}
        print(write_outputs(results, depths, meta, args.out))
        return
    args.out = args.out or paths.ANALYSIS
    os.makedirs(args.out, exist_ok=True)

    vocab = len(corpus.Pieces(os.path.join(args.data, "spm.vocab")).pieces)
    examples = corpus.make_examples(args.data, "train", 100)
    measure_batches, train_batches = measurement_batches(examples, args.max_tokens, args.measure_batches,
                                                         args.seed)
    eps = 0.1
    results = {}
    t0 = time.time()
    for depth in args.depths:
        for style in STYLES:
            torch.manual_seed(args.seed)  # same initial weights across styles of a depth
            cfg = R.ModelConfig(style=style, d_model=args.d_model, ffn_dim=4 * args.d_model,
                                n_heads=args.heads, encoder_layers=depth, decoder_layers=depth,
                                vocab_size=vocab, dropout=0.0)
            model = R.Transformer(cfg)
            g0, c0, l0 = measure(model, measure_batches, examples, cfg, eps)
            losses = short_train(model, examples, train_batches, args.steps, args.lr, args.warmup, eps)
            g1, c1, l1 = measure(model, measure_batches, examples, cfg, eps)
            key = "%s-%d" % (style, depth)
            results[key] = {"init": {"grad": g0, "cos": c0, "loss": l0},
                            "trained": {"grad": g1, "cos": c1, "loss": l1},
                            "train_losses": losses}
            print("%-9s depth %2d  loss %.3f -> %.3f  enc grad L1/LN %.3g -> %.3g  "
                  "enc cos top %.4f -> %.4f  (%.0f s)" % (
                      NAMES[style], depth, l0, l1, g0["enc"][0] / g0["enc"][-1], g1["enc"][0] / g1["enc"][-1],
                      c0["enc"][-1], c1["enc"][-1], time.time() - t0), flush=True)
    meta = {"d_model": args.d_model, "ffn_dim": 4 * args.d_model, "heads": args.heads,
            "depths": args.depths, "steps": args.steps, "lr": args.lr, "warmup": args.warmup,
            "max_tokens": args.max_tokens, "measure_batches": args.measure_batches,
            "seconds": time.time() - t0, "torch": torch.__version__}
    print(write_outputs(results, args.depths, meta, args.out))


if __name__ == "__main__":
    main()
