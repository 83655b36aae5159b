#!/usr/bin/env python3
"""Everyday sentences through a model, for the model card: what a visitor
should expect outside the training domains.

The sentences (greetings, directions, shopping, work, weather, ...) are our
own, written for this table and used for nothing else: not for training,
not for choosing checkpoints.  Each is translated with beam 5 by the
reference (models/reference.py) on the model directory as shipped, tokenized
with Debian's spm_encode / spm_decode.

    /usr/bin/python3 models/everyday.py [--model models/es-en] [--markdown]

With --eval, it scores our everyday dev and test sets (models/everyday/
{dev,test}.{es,en}: 300+ sentence pairs each, written for them, never
trained on) in both directions: corpus chrF2 and BLEU by sacreBLEU's default
rules (models/chrf.py, models/bleu.py) and the number of sentences with a
sentence chrF of 70 or more, for the model (beam 5) AND for Apertium
(`apertium -u spa-eng` / `eng-spa`, Debian's rule-based translator) in the
same run:

    /usr/bin/python3 models/everyday.py --eval [--sets dev,test] [--model DIR | --checkpoint PT]
        [--json out.json] [--hyps DIR] [--no-apertium] [--threads 1]

--checkpoint takes a train.py checkpoint or weights_*.pt snapshot (with the
config of --model, whose spm.model tokenizes).

    /usr/bin/python3 models/everyday.py --curves run-logs/everyday-run4-train-log.jsonl ...

prints the runs' everyday dev curves (greedy chrF at each validation point).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

from . import bleu, chrf, paths, spm
from . import reference as R
from .evaluate import source_ids
from .evaluate import translate as translate_ids

EVERYDAY_DIR = paths.EVERYDAY
CHRF_GOOD = 70.0

SPANISH = [
    "Buenos días, ¿cómo estás?",
    "¿Dónde está la estación de tren?",
    "Gire a la izquierda y siga recto hasta el puente.",
    "¿Cuánto cuesta este libro?",
    "Quiero comprar pan y leche.",
    "Mi madre trabaja en un hospital.",
    "La reunión empieza a las diez de la mañana.",
    "Mañana va a llover en la ciudad.",
    "Hace mucho frío en invierno.",
    "La casa es grande y el perro duerme en el jardín.",
]
ENGLISH = [
    "Good morning, how are you?",
    "Where is the train station?",
    "Turn left and go straight on to the bridge.",
    "How much does this book cost?",
    "I want to buy bread and milk.",
    "My mother works in a hospital.",
    "The meeting starts at ten in the morning.",
    "It is going to rain in the city tomorrow.",
    "It is very cold in winter.",
    "The house is big and the dog sleeps in the garden.",
]


def translate(model, spm_path, texts, target, beam=R.SEARCH["beam"], batch_size=48):
    """texts translated by the reference (evaluate.translate), tokenized by spm."""
    srcs = [source_ids(model.cfg, ids, target) for ids in spm.encode(spm_path, texts)]
    return spm.decode(spm_path, translate_ids(model, srcs, beam=beam, batch_size=batch_size))


def apertium(texts, target):
    """Apertium's translation of each sentence (`apertium -u spa-eng` or
    `eng-spa`, one sentence per line, leading and trailing spaces trimmed)."""
    mode = {"en": "spa-eng", "es": "eng-spa"}[target]
    out = subprocess.run(["apertium", "-u", mode], input="\n".join(" ".join(t.split()) for t in texts) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    if out and out[-1] == "":
        out = out[:-1]
    if len(out) != len(texts):
        raise RuntimeError("apertium %s: %d lines in, %d out" % (mode, len(texts), len(out)))
    return [" ".join(o.split()) for o in out]


def read_set(name, lang, everyday_dir=EVERYDAY_DIR):
    with open(os.path.join(everyday_dir, "%s.%s" % (name, lang)), encoding="utf-8") as f:
        return [l.strip() for l in f if l.strip()]


def scores(hyps, refs):
    """chrF2, BLEU and the sentences at chrF >= 70 of hypotheses against references."""
    return {"chrf": round(chrf.corpus_chrf(hyps, refs), 2),
            "bleu": round(bleu.corpus_bleu(hyps, [refs])["score"], 2),
            "chrf_ge_70": sum(chrf.sentence_chrf(h, r) >= CHRF_GOOD for h, r in zip(hyps, refs)),
            "sentences": len(refs)}


def load(model_dir, checkpoint=None):
    model = R.load_model_dir(model_dir)
    if checkpoint:
        sd = torch.load(checkpoint, map_location="cpu")
        sd = sd.get("model", sd)
        missing, unexpected = model.load_state_dict(sd, strict=False)
        bad = [k for k in missing if "shortlist" not in k]
        if bad or unexpected:
            raise SystemExit("checkpoint does not fit %s: missing %s, unexpected %s" % (model_dir, bad, unexpected))
    model.eval()
    return model


def evaluate(model, spm_path, sets, with_apertium=True, beam=R.SEARCH["beam"], hyps_dir=None, log=print):
    """{set: {direction: {"model": scores, "apertium": scores}}}."""
    out = {}
    for name in sets:
        es, en = read_set(name, "es"), read_set(name, "en")
        out[name] = {}
        for direction, src, ref, target in (("es-en", es, en, "en"), ("en-es", en, es, "es")):
            row = {}
            systems = []
            if model is not None:
                t0 = time.time()
                systems.append(("model", translate(model, spm_path, src, target, beam=beam)))
                log("%s %s: model %.0f s" % (name, direction, time.time() - t0))
            if with_apertium:
                systems.append(("apertium", apertium(src, target)))
            for system, hyps in systems:
                row[system] = scores(hyps, ref)
                if hyps_dir:
                    os.makedirs(hyps_dir, exist_ok=True)
                    with open(os.path.join(hyps_dir, "%s.%s.%s" % (name, direction, system)), "w",
                              encoding="utf-8") as f:
                        f.write("\n".join(hyps) + "\n")
            out[name][direction] = row
    return out


def markdown_table(results):
    lines = ["| set, direction | system | chrF | BLEU | sentences with chrF ≥ 70 |", "|---|---|---|---|---|"]
    for name, dirs in results.items():
        for direction, row in dirs.items():
            arrow = direction.replace("-", "→")
            for system, sc in row.items():
                lines.append("| %s (%d), %s | %s | %.1f | %.1f | %d |" % (
                    name, sc["sentences"], arrow, system, sc["chrf"], sc["bleu"], sc["chrf_ge_70"]))
    return "\n".join(lines)


def curves_table(logs):
    """The everyday dev curve of each run (train.py's log.jsonl): greedy chrF
    at every validation point, 60 sentences a direction as train.py scores them."""
    lines = ["| run | update | everyday dev chrF, es→en | en→es |", "|---|---|---|---|"]
    for path in logs:
        name = os.path.basename(path).replace("-train-log.jsonl", "")
        with open(path) as f:
            for record in map(json.loads, f):
                if record.get("event") == "valid" and record.get("split") == "everyday-dev" and "chrf_greedy" in record:
                    chrf = record["chrf_greedy"]
                    lines.append("| %s | %d | %.1f | %.1f |" % (name, record["step"], chrf["es-en"], chrf["en-es"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=paths.SHIPPED)
    ap.add_argument("--markdown", action="store_true", help="print the model card's table")
    ap.add_argument("--eval", action="store_true", help="score the everyday dev/test sets, model and Apertium")
    ap.add_argument("--sets", default="dev,test")
    ap.add_argument("--checkpoint", default=None, help="train.py checkpoint or weights_*.pt to score")
    ap.add_argument("--no-apertium", action="store_true")
    ap.add_argument("--no-model", action="store_true", help="Apertium only")
    ap.add_argument("--beam", type=int, default=R.SEARCH["beam"])
    ap.add_argument("--json", default=None, help="write the scores here")
    ap.add_argument("--hyps", default=None, help="write each system's translations into this directory")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--curves", nargs="+", default=None, metavar="LOG",
                    help="print the everyday dev curves of these train.py logs (run-logs/*-train-log.jsonl)")
    args = ap.parse_args()
    if args.curves:
        print(curves_table(args.curves))
        return
    torch.set_num_threads(args.threads)
    spm_path = os.path.join(args.model, "spm.model")
    if args.eval:
        model = None if args.no_model else load(args.model, args.checkpoint)
        results = evaluate(model, spm_path, [s for s in args.sets.split(",") if s],
                           with_apertium=not args.no_apertium, beam=args.beam, hyps_dir=args.hyps,
                           log=lambda m: print(m, file=sys.stderr, flush=True))
        print(markdown_table(results))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"model": args.model, "checkpoint": args.checkpoint, "beam": args.beam,
                           "results": results}, f, indent=1, ensure_ascii=False)
                f.write("\n")
        return
    model = R.load_model_dir(args.model)
    en = translate(model, spm_path, SPANISH, "en")
    es = translate(model, spm_path, ENGLISH, "es")
    if args.markdown:
        print("| Spanish (ours) | → English | English (ours) | → Spanish |")
        print("|---|---|---|---|")
        for row in zip(SPANISH, en, ENGLISH, es):
            print("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
    else:
        for a, b in zip(SPANISH + ENGLISH, en + es):
            print("%s\n  -> %s" % (a, b))


if __name__ == "__main__":
    main()
