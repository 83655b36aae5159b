"""Reference translations of a sample of the test books by the shipped model,
for tests/shipped.test.js: the engine (WASM) must produce the same tokens.

The path is independent of the engine: the real SentencePiece tool
(spm_encode / spm_decode from Debian's sentencepiece) tokenizes, and
models/reference.py translates (greedy and beam 5).

    /usr/bin/python3 models/make_shipped_sample.py [--model models/es-en] [--n 12]

Rerun whenever the shipped model or the reference changes.
"""

import argparse
import json
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from residual_mt import reference as ref  # noqa: E402

ROOT = os.path.join(HERE, "..")


def spm(tool, model, args, lines):
    out = subprocess.run([tool, f"--model={model}", *args], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout
    return out.split("\n")[:len(lines)]


def sample_cases(model, model_dir, data_dir, n):
    """The reference's greedy and beam-5 translations of every k-th line of
    the test books (n per direction), tokenized and detokenized by spm; for a
    model with a lexical shortlist, also without it ("greedy_all_words",
    "beam5_all_words": the engine's shortlist: false). Each with its ids
    ("<search>_ids") and its score ("<search>_score": mean log-probability
    per token, lenpen 1)."""
    cfg = model.cfg
    spm_path = os.path.join(model_dir, "spm.model")
    lang_tokens = cfg.languages.get("target_lang_tokens", {})
    directions = [("es", "en"), ("en", "es")] if lang_tokens else [("es", "en")]
    cases = []
    for src_lang, tgt_lang in directions:
        with open(os.path.join(data_dir, f"test.{src_lang}")) as f:
            # Every k-th line of the test books, so that several books are sampled.
            lines = [line.rstrip("\n") for line in f if line.strip()]
        step = max(1, len(lines) // n)
        texts = lines[::step][:n]
        ids = [list(map(int, line.split())) for line in spm("spm_encode", spm_path, ["--output_format=id"], texts)]
        prefix = [lang_tokens[tgt_lang]] if lang_tokens else []
        src = ref.pad_batch([prefix + s for s in ids], cfg)
        results = {}
        searches = [("greedy", 1, True), ("beam5", 5, True)]
        if getattr(model, "shortlist", None) is not None:
            searches += [("greedy_all_words", 1, False), ("beam5_all_words", 5, False)]
        for name, beam, shortlist in searches:
            hyps = ref.beam_search(model, src, beam=beam, lenpen=1.0, max_len_a=1.2, max_len_b=10, min_len=1, nbest=1,
                                   shortlist=shortlist)
            out_ids = [h[0][0] for h in hyps]
            out_text = spm("spm_decode", spm_path, ["--input_format=id"], [" ".join(map(str, o)) for o in out_ids])
            results[name] = (out_ids, out_text, [round(float(h[0][1]), 5) for h in hyps])
        for i, text in enumerate(texts):
            case = {"source_language": src_lang, "target_language": tgt_lang if lang_tokens else None,
                    "text": text, "source_ids": ids[i]}
            for name, (out_ids, out_text, scores) in results.items():
                case[f"{name}_ids"], case[name], case[f"{name}_score"] = out_ids[i], out_text[i], scores[i]
            cases.append(case)
    return cases


def parse_args(out_name):
    """--model, --data, --n and --out (default tests/fixtures/out_name)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=os.path.join(ROOT, "models", "es-en"))
    parser.add_argument("--data", default=os.path.join(ROOT, "models", "data", "work"))
    parser.add_argument("--n", type=int, default=12, help="sentences per direction")
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", out_name))
    torch.set_num_threads(2)
    return parser.parse_args()


def main():
    args = parse_args("shipped-sample.json")
    cases = sample_cases(ref.load_model_dir(args.model), args.model, args.data, args.n)
    with open(args.out, "w") as f:
        json.dump({"model": os.path.relpath(args.model, ROOT), "max_len_a": 1.2, "max_len_b": 10, "cases": cases}, f,
                  ensure_ascii=False, indent=1)
    for c in cases[:4]:
        print(c["text"], "=>", c["beam5"])


if __name__ == "__main__":
    main()
