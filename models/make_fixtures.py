"""Writes the engine's test fixtures from the PyTorch reference.

For each residual style, two tiny random models (2+2 layers d=64 float32, and
3+1 layers d=48 float16 with odd sizes) go to tests/fixtures/models/<style>-<name>/
as model directories, with reference.json: the input sentences and the
reference's encoder output, teacher-forced logits and last-layer encoder
attention, greedy output and beam search n-best lists with scores and
alignments.

Rerun whenever models/reference.py changes:
    /usr/bin/python3 models/make_fixtures.py
"""

import json
import os
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from residual_mt import manifest as make_manifest  # noqa: E402
from residual_mt import reference as ref  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")

# name -> (config overrides, storage dtype)
MODELS = {
    "2x2": (dict(d_model=64, ffn_dim=76, n_heads=4, encoder_layers=2, decoder_layers=2, vocab_size=101), "float32"),
    "3x1": (dict(d_model=48, ffn_dim=84, n_heads=4, encoder_layers=3, decoder_layers=1, vocab_size=99,
                 share_embeddings=False, enc_alpha=0.75, dec_alpha=1.25, res_scale=0.8), "float16"),
}
MAX_POSITIONS = 64
# the reference's defaults (the engine's too)
MAX_LEN_A, MAX_LEN_B, MIN_LEN = ref.SEARCH["max_len_a"], ref.SEARCH["max_len_b"], ref.SEARCH["min_len"]
SEARCHES = [  # (beam, lenpen, nbest, min_len, max_len_a, max_len_b): the defaults, then other length settings
    (1, 1.0, 1, MIN_LEN, MAX_LEN_A, MAX_LEN_B),
    (2, 0.6, 2, MIN_LEN, MAX_LEN_A, MAX_LEN_B),
    (5, 1.0, 5, MIN_LEN, MAX_LEN_A, MAX_LEN_B),
    (3, 1.7, 3, 4, 0.5, 3),
    (4, 0.0, 2, 0, 2.0, 1),
]


def randomize(model: ref.Transformer, gen: torch.Generator):
    """Random weights with non-trivial LN gains/biases and linear biases, so that
    every parameter matters."""
    cfg = model.cfg
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.3 * torch.randn(p.shape, generator=gen))
            elif name.endswith("bias"):
                p.copy_(0.2 * torch.randn(p.shape, generator=gen))
            elif "embed_tokens" in name or "output_projection" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * cfg.d_model ** -0.5 * 2)
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * p.shape[-1] ** -0.5)
        model.encoder.embed_tokens.weight[cfg.pad_id] = 0


def tune_eos(model: ref.Transformer, src: torch.Tensor):
    """Moves the </s> output embedding along the mean decoder state so that
    greedy hypotheses end at varied lengths, neither all at once nor all at the
    length limit: the search's finishing logic is what the fixtures exercise."""
    cfg = model.cfg
    weight = model.output_weight()
    with torch.no_grad():
        enc_out, pad_mask = model.encode(src)
        prev = torch.full((src.size(0), 1), cfg.eos_id)
        for _ in range(8):  # a few greedy steps, keeping the final decoder states
            logits = model.decode(prev, enc_out, pad_mask)
            prev = torch.cat([prev, logits[:, -1:].argmax(-1)], dim=1)
        mean = model.decode(prev, enc_out, pad_mask, features_only=True).reshape(-1, cfg.d_model).mean(0)
    original = weight[cfg.eos_id].clone()
    limits = [ref.max_target_len(cfg, int(n), MAX_LEN_A, MAX_LEN_B) for n in src.ne(cfg.pad_id).sum(1)]
    best = None
    for factor in [0.05 * i for i in range(-40, 41)]:
        with torch.no_grad():
            weight[cfg.eos_id] = original + factor * mean / mean.norm() ** 2 * 20
        greedy = ref.greedy_search(model, src, max_len_a=MAX_LEN_A, max_len_b=MAX_LEN_B, min_len=MIN_LEN)
        lengths = [len(h) for h in greedy]
        varied = sum(1 < n < limit for n, limit in zip(lengths, limits))
        if best is None or varied > best[0]:
            best = (varied, factor)
    with torch.no_grad():
        weight[cfg.eos_id] = original + best[1] * mean / mean.norm() ** 2 * 20


def floats(t: torch.Tensor):
    return [float(f"{v:.7g}") for v in t.reshape(-1).tolist()]


def aligned(model: ref.Transformer, source, target) -> dict:
    """The reference's alignment of a hypothesis, with each token's margin
    (null when the source has one alignable position): engine tests accept
    another position only where the margin is a float-rounding near-tie."""
    positions, margins = ref.alignment(model, source, target)
    return {"alignment": positions,
            "margins": [None if m == float("inf") else float(f"{m:.3g}") for m in margins]}


def make(style: str, name: str, seed: int):
    overrides, dtype = MODELS[name]
    cfg = ref.ModelConfig(style=style, max_positions=MAX_POSITIONS, dropout=0.0, **overrides)
    gen = torch.Generator().manual_seed(seed)
    model = ref.Transformer(cfg)
    randomize(model, gen)
    V = cfg.vocab_size
    lengths = [5, 1, 12, 3, 20, 7]
    sentences = [torch.randint(4, V, (n,), generator=gen).tolist() for n in lengths]
    src = ref.pad_batch(sentences, cfg)
    tune_eos(model.eval(), src)
    out_dir = os.path.join(ROOT, "models", f"{style}-{name}")
    ref.save_model_dir(model, out_dir, dtype=dtype)
    model = ref.load_model_dir(out_dir)  # the numbers the engine sees (float16 rounding included)

    T = 6
    prev = torch.cat([torch.full((len(sentences), 1), cfg.eos_id), torch.randint(4, V, (len(sentences), T - 1),
                                                                                generator=gen)], dim=1)
    # A long input (near max_positions) on its own.
    long_sentence = torch.randint(4, V, (MAX_POSITIONS - 1,), generator=gen).tolist()
    result = reference_outputs(model, sentences, prev, long_sentence)
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump(result, f, separators=(",", ":"))
    ends = [len(h[0]["tokens"]) for h in result["searches"][0]["hyps"]]
    print(f"{style}-{name}: greedy lengths {ends}")
    return sentences


def reference_outputs(model: ref.Transformer, sentences, prev: torch.Tensor, long_sentence) -> dict:
    """reference.json: the reference's encoder output, teacher-forced logits
    (decoder inputs prev) and encoder attention, every search of SEARCHES,
    and greedy on long_sentence alone."""
    cfg = model.cfg
    lengths = [len(s) for s in sentences]
    src = ref.pad_batch(sentences, cfg)
    with torch.no_grad():
        enc_out, _ = model.encode(src)
        logits = model.decode(prev, enc_out, src.eq(cfg.pad_id))
    cross = ref.cross_attention(model, src, prev)
    result = {
        "sentences": sentences,
        "encoder_out": [floats(enc_out[i, :n + 1]) for i, n in enumerate(lengths)],
        "forced": {"prev_tokens": prev.tolist(), "logits": [floats(logits[i]) for i in range(len(sentences))],
                   "cross_attention": [floats(cross[i, :, :n + 1]) for i, n in enumerate(lengths)]},
        "max_len_a": MAX_LEN_A, "max_len_b": MAX_LEN_B, "min_len": MIN_LEN,
        "searches": [],
    }
    for beam, lenpen, nbest, min_len, max_len_a, max_len_b in SEARCHES:
        hyps = ref.beam_search(model, src, beam=beam, lenpen=lenpen, max_len_a=max_len_a, max_len_b=max_len_b,
                               min_len=min_len, nbest=nbest)
        result["searches"].append({
            "beam": beam, "lenpen": lenpen, "nbest": nbest, "min_len": min_len, "max_len_a": max_len_a,
            "max_len_b": max_len_b,
            "hyps": [[{"tokens": t, "score": float(f"{s:.8g}"), **aligned(model, sentences[i], t)} for t, s in sent]
                     for i, sent in enumerate(hyps)],
        })
    result["long"] = {"sentence": long_sentence,
                      "greedy": ref.greedy_search(model, ref.pad_batch([long_sentence], cfg), max_len_a=MAX_LEN_A,
                                                  max_len_b=MAX_LEN_B, min_len=MIN_LEN)[0]}
    return result


TEXTS = [
    "In the beginning God created the heavens and the earth.",
    "En el principio creó Dios los cielos y la tierra.",
    "Hello, world!",
    "x",
]


def spm(tool: str, model: str, args, text: str) -> str:
    return subprocess.run([tool, f"--model={model}", *args], input=text, capture_output=True, text=True,
                          check=True).stdout


def make_text_fixture():
    """A tiny bidirectional model with its own SentencePiece model (trained with
    spm_train, identity normalisation to stay small), the target-language tokens
    <2en> and <2es>, and the reference's greedy translations of TEXTS as text
    (spm_encode -> reference -> spm_decode)."""
    out_dir = os.path.join(ROOT, "models", "residual-text")
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        with open("/usr/share/common-licenses/GPL-3") as f:
            lines = [line.strip() for line in f if line.strip()]
        with open(corpus, "w") as f:
            f.write("\n".join(lines[:400] + TEXTS) + "\n")
        prefix = os.path.join(tmp, "spm")
        # Relative paths (run in tmp): the trainer spec stored in the model records them.
        subprocess.run(["spm_train", "--input=corpus.txt", "--model_prefix=spm", "--vocab_size=150",
                        "--model_type=unigram", "--normalization_rule_name=identity", "--character_coverage=1.0",
                        "--bos_id=0", "--pad_id=1", "--eos_id=2", "--unk_id=3", "--user_defined_symbols=<2en>,<2es>",
                        "--minloglevel=2"], check=True, capture_output=True, cwd=tmp)
        with open(prefix + ".model", "rb") as f:
            spm_bytes = f.read()
    spm_path = os.path.join(out_dir, "spm.model")
    with open(spm_path, "wb") as f:
        f.write(spm_bytes)
    cfg = ref.ModelConfig(style="residual", d_model=32, ffn_dim=64, n_heads=2, encoder_layers=2, decoder_layers=1,
                          vocab_size=150, max_positions=128, dropout=0.0,
                          languages={"source": ["en", "es"], "target": ["en", "es"],
                                     "target_lang_tokens": {"en": 4, "es": 5}})
    gen = torch.Generator().manual_seed(100)
    model = ref.Transformer(cfg)
    randomize(model, gen)
    ref.save_model_dir(model, out_dir)
    model = ref.load_model_dir(out_dir)
    ids = [list(map(int, line.split())) for line in spm("spm_encode", spm_path, ["--output_format=id"],
                                                          "\n".join(TEXTS) + "\n").splitlines()]
    result = {"texts": TEXTS, "ids": ids, "translations": {}}
    for lang, token in cfg.languages["target_lang_tokens"].items():
        src = ref.pad_batch([[token] + s for s in ids], cfg)
        out = ref.greedy_search(model, src, max_len_a=MAX_LEN_A, max_len_b=MAX_LEN_B, min_len=MIN_LEN)
        text = spm("spm_decode", spm_path, ["--input_format=id"], "\n".join(" ".join(map(str, o)) for o in out) + "\n")
        result["translations"][lang] = {"ids": out, "text": text.split("\n")[:len(TEXTS)],
                                        "aligned": [aligned(model, [token] + s, o) for s, o in zip(ids, out)]}
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
    make_manifest.write(out_dir)  # the loader checks SHA-256 sums
    print("residual-text:", result["translations"]["en"]["text"])


def main():
    torch.manual_seed(0)
    seed = 1
    for style in ref.STYLES:
        for name in MODELS:
            sentences = make(style, name, seed)
            seed += 1
    make_text_fixture()
    # An example input for `npm start`: the 2x2 fixtures' first sentences.
    with open(os.path.join(ROOT, "example-ids.txt"), "w") as f:
        for s in sentences[:3]:
            f.write(" ".join(map(str, s)) + "\n")


if __name__ == "__main__":
    main()
