"""The model of the transformers.js benchmark (tests/bench/tjs_bench.js): ONE
random-weight Marian transformer of OPUS-MT's base shape (6 + 6 layers, d 512,
FFN 2048, 8 heads, swish, tied embeddings, output bias, the shipped model's
8,000-piece SentencePiece vocabulary, Marian's sinusoids), written for both
runtimes from the same arrays:

  OUT/model.npz                 the Marian model (Marian's names, special:model.yml)
  OUT/rmt-f32/, OUT/rmt-int8/   residual-mt's model directories
                                (models/convert_marian.py, models/quantize.py)
  OUT/tjs/                      transformers.js' layout (residual_mt/tjs_layout.py),
                                fp32 and q8 (residual_mt/onnx_q8.py)
  OUT/sources.json              the benchmark's sentences as source ids (SentencePiece,
                                without </s>) and their PyTorch greedy ids
                                (residual_mt/marian_torch.py, in float64)

Every output length is forced: the output bias puts -30 on </s> and <unk>, so
greedy search never ends a sentence and each runtime decodes as many tokens as
it is told; the benchmark tells both len(source) + 1 (Marian's maximum at
max-length-factor 1, counting </s>), and the ids stay the model's argmax.

Random weights make a degenerate model (every position attends alike and one
token repeats) unless embeddings are large and queries/keys sharp; these scales
keep the outputs varied. Sharp attention also brings near-ties, where the order
of float32 sums decides the argmax (ONNX Runtime's and ours differ): of the
first lines of tests/fixtures/test-books/test.es, the sentences kept are those
whose float64 reference has its best logit --margin above the second at every
step, so that an id that differs between the runtimes is a difference in what
they compute, not in rounding.

    /usr/bin/python3 models/tjs_export.py --out DIR [--sentences 48] [--margin 0.1]
Needs Debian's python3-torch, python3-onnx, python3-sentencepiece, python3-yaml.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import yaml

from . import marian_torch, onnx_q8, tjs_layout
from .paths import FIXTURES, ROOT, SHIPPED

VOCAB = os.path.join(SHIPPED, "spm.model")
TEXT = os.path.join(FIXTURES, "test-books", "test.es")
SHAPE = {"dim": 512, "ffn": 2048, "heads": 8, "enc_depth": 6, "dec_depth": 6}
NEVER = -30.0  # output bias of </s> and <unk>


def random_marian(vocab, eos, unk, seed):
    """Marian's arrays ([in, out] matrices, [1, n] biases and LayerNorm parameters)."""
    rng = np.random.default_rng(seed)
    d, f = SHAPE["dim"], SHAPE["ffn"]

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    arrays = {"Wemb": normal((vocab, d), 0.3)}

    def block(prefix, n_in, n_out, gain=1.0):
        arrays[f"{prefix}"] = normal((n_in, n_out), gain * np.sqrt(2.0 / (n_in + n_out)))

    def norm(prefix):
        arrays[f"{prefix}_ln_scale"] = 1.0 + normal((1, d), 0.05)
        arrays[f"{prefix}_ln_bias"] = normal((1, d), 0.02)

    def attention(prefix):
        for x in "qkvo":
            block(f"{prefix}_W{x}", d, d, 2.5 if x in "qk" else 1.0)
            arrays[f"{prefix}_b{x}"] = normal((1, d), 0.02)
        norm(f"{prefix}_Wo")

    def ffn(prefix):
        block(f"{prefix}_W1", d, f)
        arrays[f"{prefix}_b1"] = normal((1, f), 0.02)
        block(f"{prefix}_W2", f, d)
        arrays[f"{prefix}_b2"] = normal((1, d), 0.02)
        norm(f"{prefix}_ffn")

    for i in range(1, SHAPE["enc_depth"] + 1):
        attention(f"encoder_l{i}_self")
        ffn(f"encoder_l{i}_ffn")
    for i in range(1, SHAPE["dec_depth"] + 1):
        attention(f"decoder_l{i}_self")
        attention(f"decoder_l{i}_context")
        ffn(f"decoder_l{i}_ffn")
    bias = normal((1, vocab), 0.05)
    bias[0, eos] = bias[0, unk] = NEVER
    arrays["decoder_ff_logit_out_b"] = bias
    return arrays


def model_yml(vocab):
    """special:model.yml of OPUS-MT's transformer (Post-LN "dan", tied-embeddings-all)."""
    return {"type": "transformer", "dim-vocabs": [vocab, vocab], "dim-emb": SHAPE["dim"],
            "enc-depth": SHAPE["enc_depth"], "dec-depth": SHAPE["dec_depth"], "transformer-heads": SHAPE["heads"],
            "transformer-dim-ffn": SHAPE["ffn"], "transformer-ffn-depth": 2, "transformer-ffn-activation": "swish",
            "transformer-decoder-autoreg": "self-attention", "transformer-preprocess": "",
            "transformer-postprocess": "dan", "transformer-postprocess-emb": "d", "transformer-postprocess-top": "",
            "transformer-train-position-embeddings": False, "tied-embeddings-all": True, "tied-embeddings": False,
            "tied-embeddings-src": False, "output-omit-bias": False, "right-left": False, "skip": False,
            "layer-normalization": False, "max-length": 512, "version": "v1.12.0 random weights (models/tjs_export.py)"}


def write_npz(path, arrays, yml):
    text = yaml.safe_dump(yml, sort_keys=False).encode() + b"\0"
    with open(path, "wb") as f:
        np.savez(f, **arrays, **{"special:model.yml": np.frombuffer(text, dtype=np.int8)})


def run(*args):
    subprocess.run([sys.executable, *args], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def sources(spm, m, n, longest, margin):
    """The first n lines of TEXT of at most `longest` pieces whose PyTorch greedy
    decoding (float64) keeps its best logit `margin` above the second at every
    step, as (ids without </s>, reference ids)."""
    m = m.double()
    out = []
    with open(TEXT, encoding="utf-8") as f:
        for line in f:
            ids = spm.encode(line.strip())
            if 0 < len(ids) <= longest:
                ref, gap = m.greedy(ids + [spm.eos_id()], len(ids) + 1, spm.get_piece_size())
                if gap >= margin:
                    out.append((ids, ref))
            if len(out) == n:
                break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder to write (a scratch or cache folder, not the repository)")
    ap.add_argument("--sentences", type=int, default=48)
    ap.add_argument("--longest", type=int, default=48, help="most source pieces of a sentence")
    ap.add_argument("--margin", type=float, default=0.1, help="least logit gap of the reference's every step")
    ap.add_argument("--seed", type=int, default=41)
    a = ap.parse_args()
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2
    spm = sentencepiece.SentencePieceProcessor(model_file=VOCAB)
    proto = sentencepiece_model_pb2.ModelProto()
    with open(VOCAB, "rb") as f:
        proto.ParseFromString(f.read())
    vocab, eos, unk = spm.get_piece_size(), spm.eos_id(), spm.unk_id()
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    arrays, yml = random_marian(vocab, eos, unk, a.seed), model_yml(vocab)
    npz = os.path.join(a.out, "model.npz")
    write_npz(npz, arrays, yml)
    run("models/convert_marian.py", "--model", npz, "--vocab", VOCAB, "--out", os.path.join(a.out, "rmt-f32"),
        "--source-language", "es", "--target-language", "en")
    run("models/quantize.py", "--in", os.path.join(a.out, "rmt-f32"), "--out", os.path.join(a.out, "rmt-int8"))
    print(f"residual-mt models written ({time.time() - t0:.0f} s)", file=sys.stderr)
    m = marian_torch.from_marian(arrays, yml)
    tjs = os.path.join(a.out, "tjs")
    tjs_layout.write_onnx(m, tjs)
    tjs_layout.write_configs(tjs, m, [(p.piece, p.score) for p in proto.pieces], eos, unk, SHAPE["ffn"])
    for name in ("encoder_model", "decoder_model_merged"):
        count = onnx_q8.quantize_file(os.path.join(tjs, "onnx", f"{name}.onnx"), os.path.join(tjs, "onnx", f"{name}_quantized.onnx"))
        print(f"{name}_quantized.onnx: {count} MatMuls in integers", file=sys.stderr)
    print(f"transformers.js files written ({time.time() - t0:.0f} s)", file=sys.stderr)
    chosen = sources(spm, m, a.sentences, a.longest, a.margin)
    with open(os.path.join(a.out, "sources.json"), "w") as f:
        json.dump({"eos": eos, "pad": vocab, "sources": [s for s, _ in chosen], "torch": [r for _, r in chosen],
                   "margin": a.margin, "seed": a.seed}, f)
    print(f"sources.json: {len(chosen)} sentences and their PyTorch greedy ids ({time.time() - t0:.0f} s)", file=sys.stderr)

if __name__ == "__main__":
    main()
