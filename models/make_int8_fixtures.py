#!/usr/bin/env python3
"""Writes the int8 parity fixtures: int8 copies of two float fixture models
(models/quantize.py's quantization) with the reference's int8 simulation
(reference.py, Int8Linear) of the same inputs as their float fixtures.

    tests/fixtures/models/residual-2x2-int8/   from residual-2x2 (float32, shared embeddings)
    tests/fixtures/models/residual-3x1-int8/   from residual-3x1 (float16, separate embeddings
                                               and output projection)

and the same two with their embeddings and output projection left in float
and the output layer computed in 16 bits ("output_layer": "int16", as
models/quantize.py --int16-output writes them):

    tests/fixtures/models/residual-2x2-int16/  (the output layer = the shared embedding)
    tests/fixtures/models/residual-3x1-int16/  (a separate output projection)

Each holds config.json, model.safetensors and reference.json in
models/make_fixtures.py's format. Rerun after make_fixtures.py, or whenever
the int8 arithmetic (reference.py / src/kernels.h) changes:
    /usr/bin/python3 models/make_int8_fixtures.py
"""
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures  # noqa: E402
from residual_mt import quantize  # noqa: E402
from residual_mt import reference as ref  # noqa: E402

MODELS = ["residual-2x2", "residual-3x1"]


def make(name: str, int16_output: bool = False):
    src_dir = os.path.join(make_fixtures.ROOT, "models", name)
    suffix = "int16" if int16_output else "int8"
    out_dir = os.path.join(make_fixtures.ROOT, "models", f"{name}-{suffix}")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(src_dir, "config.json")) as f:
        config = json.load(f)
    if int16_output:
        config["output_layer"] = "int16"
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        f.write(json.dumps(config, indent=2) + "\n")
    tensors = quantize.quantize_tensors(ref.read_safetensors(os.path.join(src_dir, "model.safetensors")),
                                        float_embeddings=int16_output)
    ref.write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors, {"format": ref.FORMAT})
    with open(os.path.join(src_dir, "reference.json")) as f:
        float_ref = json.load(f)
    model = ref.load_model_dir(out_dir)  # int8, as the engine computes it
    result = make_fixtures.reference_outputs(model, float_ref["sentences"],
                                             torch.tensor(float_ref["forced"]["prev_tokens"]),
                                             float_ref["long"]["sentence"])
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump(result, f, separators=(",", ":"))
    same = sum(a["tokens"] == b["tokens"] for s, t in zip(result["searches"], float_ref["searches"])
               for x, y in zip(s["hyps"], t["hyps"]) for a, b in zip(x, y))
    total = sum(len(x) for s in result["searches"] for x in s["hyps"])
    print(f"{name}-{suffix}: {same}/{total} hypotheses as the float model's")


def main():
    torch.manual_seed(0)
    for name in MODELS:
        make(name)
    for name in MODELS:
        make(name, int16_output=True)


if __name__ == "__main__":
    main()
