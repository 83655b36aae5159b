#!/usr/bin/env python3
"""Reference translations of a sample of the test books by the shipped model
in int8, for tests/shipped-int8.test.js: the engine must produce the same tokens.

The model is the shipped one as models/quantize.py quantizes it (in memory; or
as it is, when it is int8 already), translated by reference.py's int8
simulation, greedy and beam 5, on the lines models/make_shipped_sample.py
samples (spm_encode / spm_decode tokenize), with each greedy step's margin
between the best and the second-best logit. The fixture records the SHA-256 of
the model.safetensors it was made from; the test fails, naming this script,
when the shipped file changes. Rerun whenever the shipped model, the
reference or the int8 arithmetic changes:

    /usr/bin/python3 models/make_int8_sample.py [--model models/es-en] \\
        [--out tests/fixtures/shipped-int8-sample.json]
"""
import hashlib
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_shipped_sample  # noqa: E402
from residual_mt import quantize  # noqa: E402
from residual_mt import reference as ref  # noqa: E402

ROOT = os.path.join(HERE, "..")


@torch.no_grad()
def greedy_margins(model, source, output):
    """At each step of a greedy output (its </s> included), how far the chosen
    token's logit is above the runner-up's: where it is small, the engine's
    float rounding (and an activation rounded to the other int8 value) may
    choose the runner-up. Under the model's lexical shortlist, among the words
    it allows."""
    src = ref.pad_batch([source], model.cfg)
    enc, mask = model.encode(src)
    logits = model.decode(torch.tensor([[model.cfg.eos_id] + output]), enc, mask)[0]
    allowed = ref.shortlist_candidates(model, src)
    if allowed is not None:
        logits = logits.masked_fill(~allowed, float("-inf"))
    top = logits.topk(2, dim=-1).values
    return [round(float(m), 4) for m in top[:, 0] - top[:, 1]]


def main():
    args = make_shipped_sample.parse_args("shipped-int8-sample.json")
    path = os.path.join(args.model, "model.safetensors")
    with open(path, "rb") as f:
        sha256 = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(args.model, "config.json"), "rb") as f:
        config_sha256 = hashlib.sha256(f.read()).hexdigest()  # "output_layer" changes the arithmetic
    with open(os.path.join(args.model, "config.json")) as f:
        cfg = ref.ModelConfig.from_dict(json.load(f))
    tensors = ref.read_safetensors(path)
    quantize_at_load = not any(t.dtype == torch.int8 for t in tensors.values())
    if quantize_at_load:
        tensors = quantize.quantize_tensors(tensors)
    model = ref.model_from_tensors(cfg, tensors)
    cases = make_shipped_sample.sample_cases(model, args.model, args.data, args.n)
    lang_tokens = cfg.languages.get("target_lang_tokens", {})
    for c in cases:
        c["greedy_margins"] = greedy_margins(model, [lang_tokens[c["target_language"]]] + c["source_ids"],
                                             c["greedy_ids"])
    with open(args.out, "w") as f:
        json.dump({"model": os.path.relpath(args.model, ROOT), "model_sha256": sha256, "config_sha256": config_sha256,
                   "quantize_at_load": quantize_at_load, "max_len_a": 1.2, "max_len_b": 10, "cases": cases}, f,
                  ensure_ascii=False, indent=1)
    for c in cases[:4]:
        print(c["text"], "=>", c["beam5"])


if __name__ == "__main__":
    main()
