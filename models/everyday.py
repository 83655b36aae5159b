#!/usr/bin/env python3
"""Everyday sentences through a model, for the model card: what a visitor
should expect outside the training domains.

The sentences (greetings, directions, shopping, work, weather, ...) are our
own, written for this table and used for nothing else: not for training,
not for choosing checkpoints.  Each is translated with beam 5 by the
reference (models/reference.py) on the model directory as shipped, tokenized
with Debian's spm_encode / spm_decode.

    /usr/bin/python3 models/everyday.py [--model models/es-en] [--markdown]
"""
import argparse
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as R  # noqa: E402

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


def spm(tool, model, args, lines):
    out = subprocess.run([tool, "--model=" + model] + args, input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout
    return out.split("\n")[:len(lines)]


def translate(model, spm_path, texts, target, beam=5):
    cfg = model.cfg
    ids = [[int(t) for t in line.split()] for line in spm("spm_encode", spm_path, ["--output_format=id"], texts)]
    prefix = [cfg.languages["target_lang_tokens"][target]]
    src = R.pad_batch([prefix + s for s in ids], cfg)
    with torch.no_grad():
        hyps = R.beam_search(model, src, beam=beam, lenpen=1.0, max_len_a=1.2, max_len_b=10)
    out_ids = [" ".join(str(t) for t in h[0][0] if t != cfg.eos_id) for h in hyps]
    return spm("spm_decode", spm_path, ["--input_format=id"], out_ids)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(HERE, "es-en"))
    ap.add_argument("--markdown", action="store_true", help="print the model card's table")
    args = ap.parse_args()
    torch.set_num_threads(2)
    model = R.load_model_dir(args.model)
    spm_path = os.path.join(args.model, "spm.model")
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
