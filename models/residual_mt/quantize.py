#!/usr/bin/env python3
"""Writes an int8 copy of a model directory.

Every Linear weight and the output projection (with shared embeddings, the
embedding itself; otherwise both embeddings and the projection) becomes I8
with one float32 scale per output feature (row) in "<name>.qscale":
symmetric, scale = max|row| / 127, q = round(w / scale) (reference.py's
quantize_weight). Biases and LayerNorm parameters stay as they are. The
engine sees the dtype: such a model computes in int8 (docs/API.md, "int8
models"); nothing in config.json changes. The other files of the directory
are copied, and manifest.json, when there is one, is written anew (SHA-256).

With --float-embeddings the embeddings and the output projection stay as
they are (float16 in an exported model), since the output layer in int8
cost more than 0.3 BLEU on the test books (model card, "int8").
--int16-output does the same and sets config.json's "output_layer" to
"int16": the engine then quantizes the output projection to 16 bits per row
as it loads and computes the output layer in integers too (docs/API.md,
"int8 models"); the default model ships so.

    /usr/bin/python3 models/quantize.py --in models/es-en-f16 --out /tmp/es-en-int8 [--float-embeddings | --int16-output]
"""
import argparse
import json
import os
import shutil
import sys

import torch

from . import manifest as make_manifest
from . import reference as ref


def is_quantized(name: str, tensor: torch.Tensor, float_embeddings: bool = False) -> bool:
    """Linear weights and embeddings: every float matrix except LayerNorm parameters
    (and, with float_embeddings, except the embeddings and the output projection)."""
    if float_embeddings and ("embed_tokens" in name or "output_projection" in name):
        return False
    return tensor.dim() == 2 and tensor.is_floating_point() and name.endswith(".weight") and "layer_norm" not in name


def quantize_tensors(tensors, float_embeddings=False):
    out = {}
    for name, tensor in tensors.items():
        if is_quantized(name, tensor, float_embeddings):
            out[name], out[name + ".qscale"] = ref.quantize_weight(tensor)
        else:
            out[name] = tensor
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--in", dest="src", required=True, help="model directory (config.json, model.safetensors, ...)")
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--float-embeddings", action="store_true",
                    help="keep the embeddings and the output projection as they are")
    ap.add_argument("--int16-output", action="store_true",
                    help="--float-embeddings, and the engine computes the output layer in 16 bits")
    args = ap.parse_args()
    args.float_embeddings |= args.int16_output
    if os.path.abspath(args.src) == os.path.abspath(args.out):
        sys.exit("quantize.py: --out must differ from --in")
    tensors = ref.read_safetensors(os.path.join(args.src, "model.safetensors"))
    if any(t.dtype == torch.int8 for t in tensors.values()):
        sys.exit(f"quantize.py: {args.src} already has int8 tensors")
    os.makedirs(args.out, exist_ok=True)
    for name in os.listdir(args.src):
        path = os.path.join(args.src, name)
        if os.path.isfile(path) and name not in ("model.safetensors", "manifest.json"):
            shutil.copyfile(path, os.path.join(args.out, name))
    if args.int16_output:
        with open(os.path.join(args.src, "config.json")) as f:
            config = json.load(f)
        config["output_layer"] = "int16"
        with open(os.path.join(args.out, "config.json"), "w") as f:
            f.write(json.dumps(config, indent=2) + "\n")
    quantized = quantize_tensors(tensors, args.float_embeddings)
    ref.write_safetensors(os.path.join(args.out, "model.safetensors"), quantized,
                          {"format": ref.FORMAT, "quantization": "int8 weights, one scale per row"})
    if os.path.exists(os.path.join(args.src, "manifest.json")):
        make_manifest.write(args.out)
    n = sum(1 for name in quantized if name.endswith(".qscale"))
    before = os.path.getsize(os.path.join(args.src, "model.safetensors"))
    after = os.path.getsize(os.path.join(args.out, "model.safetensors"))
    print(f"{args.out}: {n} int8 matrices; model.safetensors {before / 1e6:.2f} MB -> {after / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
