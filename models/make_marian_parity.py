#!/usr/bin/env python3
"""Trains small Marian-architecture es -> en models in PyTorch and writes
them as Marian writes them: the parity fixtures of tests/marian-trained.test.js
(tests/fixtures/marian-trained/).

    python3 models/make_marian_parity.py prepare --corpus DIR --work WORK
    nice -n 10 python3 models/make_marian_parity.py train --work WORK --decoder ssru --minutes 45 --threads 2
    nice -n 10 python3 models/make_marian_parity.py train --work WORK --decoder attention --minutes 45 --threads 2
    python3 models/make_marian_parity.py export --work WORK [--out tests/fixtures/marian-trained]

(Debian's python3-torch; prepare and export run Debian's spm_encode /
spm_decode.) train checkpoints WORK/ckpt-DECODER.pt every two minutes and
resumes from it: --minutes is the total of wall-clock training time.

prepare: a 1,000-piece SentencePiece vocabulary (Debian's spm_train) and the
training pairs (the corpus of models/data/build_corpus.py: software messages,
package descriptions, the dictionary; no Bible text, so none of its reserved
books), each side at most MAX_LEN pieces; held-out sentences from the corpus's
modern-test (packages never seen in training) and modern-valid (checkpoints).

The network is Marian's transformer as marian-dev computes it at inference
(src/models/transformer.h, src/rnn/cells.h), and as src/transformer.c does
with a converted model's config (positions "marian", decoder_start "zeros"):

- embeddings: one matrix Wemb for source, target and output
  (tied-embeddings-all), scaled by sqrt(dim-emb), plus sinusoidal positions
  (sines in the first half, cosines in the second, 10000^(-i / (d/2 - 1)));
  the decoder's first input is a zero embedding (plus position 0);
- Post-LN ("dan"): x = LN(x + sublayer(x)), LayerNorm eps 1e-6, no final LN;
- attention: x Wq + bq, ..., heads of dim/heads, q scaled by heads^-0.5, Wo + bo;
- FFN: relu(x W1 + b1) W2 + b2;
- decoder self-attention (transformer-decoder-autoreg: self-attention), or the
  SSRU (rnn, dec-cell: ssru): f = sigmoid(x Wf + bf),
  c = f * c_prev + (1 - f) * (x W), out = relu(c), then LN(x + out) named _rnn_ffn;
- output: x Wemb^T + decoder_ff_logit_out_b; the source ends with </s>.

export writes, for each trained model, into OUT/<decoder>/:
- model.npz (the SSRU model's only): float32, as Marian's training saves it
  (cnpy: items sorted by name, "special:model.yml" last, an int8 array with
  its NUL);
- model.bin: float32, as `marian-conv --gemm-type float32` writes it
  (src/common/binary.cpp, each item's bytes padded to 256 as its memory is);
- model.intgemm.alphas.bin: as `marian-conv --gemm-type intgemm8` writes the
  model with the activation alphas of scripts/alphas/extract_stats.py
  (src/tensors/cpu/expression_graph_packable.h): every matrix named *_W? /
  *_W and every item whose name contains "Wemb" in int8, q = round(w * m)
  clamped to +-127 with m = 127 / max |w|, weights stored transposed ([out][in];
  Wemb as it is), then the float32 m; "<weight>_QuantMultA" = 127 / (mean +
  1.1 std) of the largest |activation| each product of that weight saw while
  translating the valid sentences one at a time (marian-decoder
  --dump-quantmult), float32 [1] (but "Wemb_QuantMultA", whose name holds
  "Wemb", in int8 like the embedding);
plus the PyTorch reference's greedy outputs on the held-out sentences, in
float32 (pytorch-greedy.json: ids and scores) and with int8 products each
way of INT8_WAYS (pytorch-int8-greedy.json: ids), and OUT/models.json (shapes,
updates, training minutes, BLEU); OUT/vocab.spm and the held-out sentences
OUT/test.es, OUT/test.en.
"""
import argparse
import json
import math
import os
import random
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOCAB_SIZE = 1000  # a multiple of 8: intgemm prepares the output matrix by 8 rows
MAX_LEN = 40  # pieces a side, </s> apart
TRAIN_SOURCES = ("gettext", "descriptions", "freedict", "gnome-help")
N_TEST = 250  # held-out sentences of the fixture
# Model shapes: every dimension a multiple of 16 (marian-conv's transposition works in 16 x 16 blocks).
SHAPES = {
    "ssru": dict(dim=64, ffn=256, heads=4, enc_depth=3, dec_depth=2),
    "attention": dict(dim=64, ffn=256, heads=4, enc_depth=2, dec_depth=2),
}
# Ways of computing an int8 product x W, simulated in PyTorch (int8_product):
# "row" ours (src/kernels.h: one activation scale a row, exact int32 sums;
# the output layer's activations 16-bit), "alpha" the same sums with Marian's
# precomputed activation multipliers (*_QuantMultA); "intgemm-tensor" and
# "intgemm-alpha" as Bergamot's WASM computes int8shiftAll (one multiplier
# for the whole matrix, 127 / max |x|) and int8shiftAlphaAll (the model's):
# intgemm's saturating pair sums included.
INT8_WAYS = ("row", "alpha", "intgemm-tensor", "intgemm-alpha")
UNK, BOS, EOS = 0, 1, 2  # spm_train's defaults; Marian uses the spm's ids


def lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def spm_encode(model, texts):
    out = subprocess.run(["spm_encode", "--model", model, "--output_format=id"], input="\n".join(texts) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")[:-1]
    assert len(out) == len(texts)
    return [[int(t) for t in line.split()] for line in out]


def prepare(args):
    os.makedirs(args.work, exist_ok=True)
    src, tgt, kind = (lines(os.path.join(args.corpus, f"train.{x}")) for x in ("es", "en", "src"))
    pairs = [(s, t) for s, t, k in zip(src, tgt, kind) if k in TRAIN_SOURCES and s.strip() and t.strip()]
    rng = random.Random(1)
    sample = rng.sample(pairs, min(len(pairs), 150000))
    spm_input = os.path.join(args.work, "spm_input.txt")
    with open(spm_input, "w", encoding="utf-8") as f:
        for s, t in sample:
            f.write(s + "\n" + t + "\n")
    prefix = os.path.join(args.work, "spm")
    subprocess.run(["spm_train", f"--input={spm_input}", f"--model_prefix={prefix}", "--model_type=unigram",
                    f"--vocab_size={VOCAB_SIZE}", "--num_threads=1", "--input_sentence_size=300000",
                    "--shuffle_input_sentence=false", "--minloglevel=2"], check=True)
    model = prefix + ".model"
    ids_s, ids_t = spm_encode(model, [p[0] for p in pairs]), spm_encode(model, [p[1] for p in pairs])
    train = [(a, b) for a, b in zip(ids_s, ids_t) if 0 < len(a) <= MAX_LEN and 0 < len(b) <= MAX_LEN]
    with open(os.path.join(args.work, "train.json"), "w") as f:
        json.dump(train, f)
    for split in ("modern-valid", "modern-test"):
        es, en = (lines(os.path.join(args.corpus, f"{split}.{x}")) for x in ("es", "en"))
        ids = spm_encode(model, es)
        keep = [(s, t) for s, t, i in zip(es, en, ids) if 0 < len(i) <= MAX_LEN]
        with open(os.path.join(args.work, f"{split}.json"), "w") as f:
            json.dump(keep, f, ensure_ascii=False)
    print(f"prepare: {len(train)} training pairs of {len(pairs)}; vocabulary {model}")


# ---------------------------------------------------------------- the network


def make_model(decoder, vocab=VOCAB_SIZE):
    import torch
    import torch.nn as nn

    class MarianTransformer(nn.Module):
        """Parameters under Marian's names and shapes: weights [in, out]
        (Marian computes x W + b), biases and LayerNorm parameters [1, n]."""

        def __init__(self):
            super().__init__()
            s = SHAPES[decoder]
            self.decoder, self.dim, self.ffn, self.heads = decoder, s["dim"], s["ffn"], s["heads"]
            self.enc_depth, self.dec_depth, self.vocab = s["enc_depth"], s["dec_depth"], vocab
            self.p = nn.ParameterDict()
            self.record = None  # name -> list of max |input| per product, while dumping alphas
            D, Fd = self.dim, self.ffn
            g = torch.Generator().manual_seed(7)

            def weight(name, n_in, n_out):
                bound = math.sqrt(6 / (n_in + n_out))  # Marian's glorot-uniform
                self.p[name] = nn.Parameter((torch.rand(n_in, n_out, generator=g) * 2 - 1) * bound)

            def bias(name, n):
                self.p[name] = nn.Parameter(torch.zeros(1, n))

            def norm(prefix):
                self.p[prefix + "_ln_scale"] = nn.Parameter(torch.ones(1, D))
                bias(prefix + "_ln_bias", D)

            def attention(prefix):
                for w in "qkvo":
                    weight(f"{prefix}_W{w}", D, D)
                    bias(f"{prefix}_b{w}", D)
                norm(prefix + "_Wo")

            def ffn(prefix):
                weight(prefix + "_W1", D, Fd)
                bias(prefix + "_b1", Fd)
                weight(prefix + "_W2", Fd, D)
                bias(prefix + "_b2", D)
                norm(prefix + "_ffn")

            weight("Wemb", vocab, D)
            for l in range(1, self.enc_depth + 1):
                attention(f"encoder_l{l}_self")
                ffn(f"encoder_l{l}_ffn")
            for l in range(1, self.dec_depth + 1):
                if decoder == "ssru":
                    weight(f"decoder_l{l}_rnn_W", D, D)
                    weight(f"decoder_l{l}_rnn_Wf", D, D)
                    bias(f"decoder_l{l}_rnn_bf", D)
                    norm(f"decoder_l{l}_rnn_ffn")
                else:
                    attention(f"decoder_l{l}_self")
                attention(f"decoder_l{l}_context")
                ffn(f"decoder_l{l}_ffn")
            bias("decoder_ff_logit_out_b", vocab)

        # x W (+ b), recording max |x| of this product for the alphas
        def lin(self, x, w, b=None):
            if self.record is not None:
                self.record.setdefault(w, []).append(float(x.abs().max()))
            y = self.int8_product(x, w) if self.quant else x @ self.p[w]
            return y if b is None else y + self.p[b]

        quant = None  # int8 products, simulated (int8_simulation): one of INT8_WAYS

        def int8_product(self, x, w):
            """x W with W's intgemm8 values (self.wq: q [in, out] and its
            multiplier) and x quantized to int8 in one of INT8_WAYS."""
            q_b, m_b = self.wq[w]
            if self.quant == "row":
                if w == "Wemb":  # the engine's output layer: 16-bit rows, near enough exact
                    return x @ (q_b * torch.tensor(1 / m_b, dtype=torch.float32))
                amax = x.abs().amax(-1, keepdim=True)
                amax = torch.where(amax > 0, amax, torch.ones_like(amax))
                q_a = torch.round(x * (127 / amax))
                return (q_a @ q_b) * (amax / 127) * torch.tensor(1 / m_b, dtype=torch.float32)
            m_a = self.alpha[w] if self.quant.endswith("alpha") else 127 / float(x.abs().max())
            m_a = torch.tensor(m_a, dtype=torch.float32)
            q_a = torch.clamp(torch.round(x * m_a), -127, 127)
            if not self.quant.startswith("intgemm"):
                return (q_a @ q_b) / (m_a * m_b)
            # intgemm's Int8Shift (Bergamot's WASM fallback): A + 127 as unsigned
            # bytes, maddubs sums each pair of products (k, k + 1) saturated to
            # int16, then madd to int32; the bias term takes back 127 * sum_k B.
            shape, K, N = x.shape[:-1], q_b.shape[0], q_b.shape[1]
            u = (q_a + 127).reshape(-1, K // 2, 2)
            pairs = torch.einsum("mip,ipn->min", u, q_b.reshape(K // 2, 2, N)).clamp(-32768, 32767)
            sums = pairs.sum(1) - 127 * q_b.sum(0)
            return (sums / (m_a * m_b)).reshape(*shape, N)

        def ln(self, x, prefix):
            import torch.nn.functional as F
            return F.layer_norm(x, (self.dim,), self.p[prefix + "_ln_scale"][0], self.p[prefix + "_ln_bias"][0], 1e-6)

        def positions(self, start, n):
            half = self.dim // 2
            step = math.log(10000.0) / (half - 1)
            freq = torch.exp(torch.arange(half, dtype=torch.float32) * -step)
            angle = torch.arange(start, start + n, dtype=torch.float32)[:, None] * freq[None]
            return torch.cat([torch.sin(angle), torch.cos(angle)], 1)

        def attend(self, prefix, q_in, k, v, mask):
            """q_in [B, Tq, D]; k, v already projected [B, H, Tk, dh]; mask
            [B or 1, 1 or Tq, Tk] True where a key is hidden."""
            B, Tq, D = q_in.shape
            H, dh = self.heads, D // self.heads
            q = self.lin(q_in, prefix + "_Wq", prefix + "_bq").view(B, Tq, H, dh).transpose(1, 2) * dh ** -0.5
            scores = q @ k.transpose(-1, -2)
            if mask is not None:
                scores = scores.masked_fill(mask[:, None], float("-inf"))
            out = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(B, Tq, D)
            return self.lin(out, prefix + "_Wo", prefix + "_bo")

        def keys_values(self, prefix, x):
            B, T, D = x.shape
            H, dh = self.heads, D // self.heads
            k = self.lin(x, prefix + "_Wk", prefix + "_bk").view(B, T, H, dh).transpose(1, 2)
            v = self.lin(x, prefix + "_Wv", prefix + "_bv").view(B, T, H, dh).transpose(1, 2)
            return k, v

        def ffn_block(self, prefix, x):
            h = torch.relu(self.lin(x, prefix + "_W1", prefix + "_b1"))
            return self.ln(x + self.lin(h, prefix + "_W2", prefix + "_b2"), prefix + "_ffn")

        def encode(self, src, src_mask):
            """src [B, S] (padded), src_mask [B, S] True at padding."""
            x = self.p["Wemb"][src] * math.sqrt(self.dim) + self.positions(0, src.shape[1])
            mask = src_mask[:, None, :]
            for l in range(1, self.enc_depth + 1):
                pre = f"encoder_l{l}_self"
                k, v = self.keys_values(pre, x)
                x = self.ln(x + self.attend(pre, x, k, v, mask), pre + "_Wo")
                x = self.ffn_block(f"encoder_l{l}_ffn", x)
            return x

        def context(self, enc):
            return [self.keys_values(f"decoder_l{l}_context", enc) for l in range(1, self.dec_depth + 1)]

        def embed_target(self, prev, start):
            """prev [B, T]: the previous tokens, -1 for none (the zero embedding)."""
            e = self.p["Wemb"][prev.clamp(min=0)] * (prev >= 0).unsqueeze(-1).float()
            return e * math.sqrt(self.dim) + self.positions(start, prev.shape[1])

        def decode(self, prev, ctx, src_mask, state=None, start=0):
            """Decoder over prev [B, T] from position start; state: the SSRU
            cells or the self-attention keys/values of earlier positions (per
            layer), updated in place when given. Returns logits [B, T, V]."""
            x = self.embed_target(prev, start)
            B, T, D = x.shape
            cross_mask = src_mask[:, None, :]
            for l in range(1, self.dec_depth + 1):
                i = l - 1
                if self.decoder == "ssru":
                    pre = f"decoder_l{l}_rnn"
                    xw = self.lin(x, pre + "_W")
                    f = torch.sigmoid(self.lin(x, pre + "_Wf", pre + "_bf"))
                    c = state[i] if state is not None and state[i] is not None else torch.zeros(B, D)
                    cells = []
                    for t in range(T):
                        c = f[:, t] * c + (1 - f[:, t]) * xw[:, t]
                        cells.append(c)
                    if state is not None:
                        state[i] = c
                    x = self.ln(x + torch.relu(torch.stack(cells, 1)), pre + "_ffn")
                else:
                    pre = f"decoder_l{l}_self"
                    k, v = self.keys_values(pre, x)
                    if state is not None:
                        if state[i] is not None:
                            k, v = torch.cat([state[i][0], k], 2), torch.cat([state[i][1], v], 2)
                        state[i] = (k, v)
                    Tk = k.shape[2]
                    causal = torch.ones(T, Tk, dtype=torch.bool).triu(Tk - T + 1)[None]
                    x = self.ln(x + self.attend(pre, x, k, v, causal), pre + "_Wo")
                pre = f"decoder_l{l}_context"
                k, v = ctx[i]
                x = self.ln(x + self.attend(pre, x, k, v, cross_mask), pre + "_Wo")
                x = self.ffn_block(f"decoder_l{l}_ffn", x)
            return self.output(x)

        def output(self, x):
            if self.record is not None:
                self.record.setdefault("Wemb", []).append(float(x.abs().max()))
            y = self.int8_product(x, "Wemb") if self.quant else x @ self.p["Wemb"].t()
            return y + self.p["decoder_ff_logit_out_b"]

    return MarianTransformer()


def pad(seqs, value):
    import torch
    n = max(len(s) for s in seqs)
    return torch.tensor([s + [value] * (n - len(s)) for s in seqs])


def greedy(model, sources, max_factor=2.0, scores=None):
    """Greedy decoding of each source (ids without </s>) on its own, as
    Bergamot is called in the test: ids of each output without </s>, at most
    max_factor times the source's length with its </s> (Marian's
    max-length-factor); <unk> is never chosen (Marian's allow-unk false: its
    log-probability is masked, the others are not renormalised). scores, when
    a list, receives each output's log-probability (its </s> included) over
    its length: Marian's score with normalize 1."""
    import torch
    outs = []
    with torch.no_grad():
        for ids in sources:
            src = torch.tensor([ids + [EOS]])
            mask = torch.zeros_like(src, dtype=torch.bool)
            enc = model.encode(src, mask)
            ctx = model.context(enc)
            state = [None] * model.dec_depth
            prev, out, total, steps = -1, [], 0.0, 0
            for t in range(int(max_factor * src.shape[1])):
                logp = torch.log_softmax(model.decode(torch.tensor([[prev]]), ctx, mask, state, t)[0, -1], -1)
                logp[UNK] = float("-inf")
                prev = int(logp.argmax())
                total += float(logp[prev])
                steps += 1
                if prev == EOS:
                    break
                out.append(prev)
            outs.append(out)
            if scores is not None:
                scores.append(total / steps)
    return outs


def spm_decode(model_path, ids):
    out = subprocess.run(["spm_decode", "--model", model_path, "--input_format=id"],
                         input="\n".join(" ".join(map(str, i)) for i in ids) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")[:-1]
    return out


def evaluate(model, work, split="modern-valid", n=200):
    sys.path.insert(0, HERE)
    from residual_mt import bleu
    pairs = json.load(open(os.path.join(work, f"{split}.json")))[:n]
    spm = os.path.join(work, "spm.model")
    hyps = spm_decode(spm, greedy(model, spm_encode(spm, [p[0] for p in pairs])))
    return bleu.corpus_bleu(hyps, [[p[1] for p in pairs]])["score"], hyps


def batches(train, max_tokens, rng):
    """Batches of pairs of similar length, about max_tokens target tokens each."""
    order = sorted(range(len(train)), key=lambda i: (len(train[i][1]), len(train[i][0]), rng.random()))
    out, cur, longest = [], [], 0
    for i in order:
        longest = max(longest, len(train[i][1]) + 1)
        if cur and longest * (len(cur) + 1) > max_tokens:
            out.append(cur)
            cur, longest = [], len(train[i][1]) + 1
        cur.append(i)
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def train(args):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    rng = random.Random(2)
    data = json.load(open(os.path.join(args.work, "train.json")))
    model = make_model(args.decoder)
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    peak, warmup = 3e-3, 400
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: peak * min((s + 1) / warmup, math.sqrt(warmup / (s + 1))))
    ckpt = os.path.join(args.work, f"ckpt-{args.decoder}.pt")
    step, seen, start, log = 0, 0, time.time(), []
    if os.path.exists(ckpt):
        saved = torch.load(ckpt)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        step, seen, log = saved["step"], saved["seen"], saved["log"]
        start -= saved["seconds"]
    budget = args.minutes * 60

    def save():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "step": step,
                    "seen": seen, "log": log, "seconds": time.time() - start}, ckpt)

    last_save = time.time()
    while time.time() - start < budget:
        for batch in batches(data, 2500, rng):
            if time.time() - start >= budget:
                break
            src = pad([data[i][0] + [EOS] for i in batch], EOS)
            src_mask = pad([[0] * (len(data[i][0]) + 1) for i in batch], 1).bool()
            tgt = pad([data[i][1] + [EOS] for i in batch], -100)
            prev = pad([[-1] + data[i][1] for i in batch], EOS)
            model.train()
            enc = model.encode(src, src_mask)
            logits = model.decode(prev, model.context(enc), src_mask)
            loss = F.cross_entropy(logits.reshape(-1, model.vocab), tgt.reshape(-1), ignore_index=-100,
                                   label_smoothing=0.1)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            seen += len(batch)
            if step % 100 == 0:
                log.append((step, round(time.time() - start), float(loss)))
                print(f"step {step} {time.time() - start:.0f}s loss {float(loss):.3f} pairs {seen}", flush=True)
            if time.time() - last_save > 120:
                save()
                last_save = time.time()
    save()
    model.eval()
    score, hyps = evaluate(model, args.work)
    print(f"train {args.decoder}: {step} updates, {seen} pairs, {(time.time() - start) / 60:.1f} min; "
          f"greedy BLEU {score:.2f} on 200 modern-valid sentences", flush=True)
    for h in hyps[:8]:
        print("  ", h)


# ---------------------------------------------------------------- Marian's files

MARIAN_VERSION = "v1.9.56 2781d735 2024-05-12 09:38:56 +0100"  # browsermt/marian-dev, whose sources these follow
TYPE_INT8, TYPE_FLOAT32, TYPE_INTGEMM8 = 0x0101, 0x0404, 0x4101


def model_yml(decoder):
    """special:model.yml as Marian writes it: the model features of
    src/models/encoder_decoder.cpp with Marian's defaults, keys sorted
    (cli::OutputYaml), yaml-cpp's block style (an empty list on a line of its
    own), no newline at the end."""
    s = SHAPES[decoder]
    ssru = decoder == "ssru"
    values = {
        "bert-train-type-embeddings": "true", "bert-type-vocab-size": "2",
        "dec-cell": "ssru" if ssru else "gru", "dec-cell-base-depth": "2", "dec-cell-high-depth": "1",
        "dec-depth": str(s["dec_depth"]), "dim-emb": str(s["dim"]), "dim-rnn": "1024",
        "dim-vocabs": [str(VOCAB_SIZE), str(VOCAB_SIZE)], "enc-cell": "gru", "enc-cell-depth": "1",
        "enc-depth": str(s["enc_depth"]), "enc-type": "bidirectional", "input-types": [],
        "layer-normalization": "false", "lemma-dim-emb": "0", "output-omit-bias": "false", "right-left": "false",
        "skip": "false", "special-vocab": [], "tied-embeddings": "false", "tied-embeddings-all": "true",
        "tied-embeddings-src": "false", "transformer-aan-activation": "swish", "transformer-aan-depth": "2",
        "transformer-aan-nogate": "false", "transformer-decoder-autoreg": "rnn" if ssru else "self-attention",
        "transformer-dim-aan": "2048", "transformer-dim-ffn": str(s["ffn"]), "transformer-ffn-activation": "relu",
        "transformer-ffn-depth": "2", "transformer-guided-alignment-layer": "last",
        "transformer-heads": str(s["heads"]), "transformer-no-projection": "false", "transformer-pool": "false",
        "transformer-postprocess": "dan", "transformer-postprocess-emb": "d", "transformer-postprocess-top": '""',
        "transformer-preprocess": '""', "transformer-tied-layers": [],
        "transformer-train-position-embeddings": "false", "type": "transformer", "ulr": "false",
        "ulr-dim-emb": "0", "ulr-trainable-transformation": "false", "version": MARIAN_VERSION,
    }
    out = []
    for key in sorted(values):
        v = values[key]
        if isinstance(v, list):
            out.append(f"{key}:\n" + ("\n".join(f"  - {x}" for x in v) if v else "  []"))
        else:
            out.append(f"{key}: {v}")
    return "\n".join(out)


def npy_header(descr, shape):
    """cnpy's create_npy_header: the dict padded with spaces to 16 bytes
    (a whole 16 when already aligned), ending in a newline."""
    d = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + ", ".join(map(str, shape))
    d += ("," if len(shape) == 1 else "") + "), }"
    d += " " * (16 - (10 + len(d)) % 16)
    d = d[:-1] + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode("latin1")


def write_npz(path, items, yml):
    """Marian's .npz (cnpy::npz_save of the graph's parameters, sorted by name,
    then special:model.yml): stored zip entries, no timestamps."""
    entries = [(name, "<f4", list(a.shape), a.astype("<f4").tobytes()) for name, a in sorted(items.items())]
    text = yml.encode() + b"\0"
    entries.append(("special:model.yml", "<i1", [len(text)], text))
    body, central = bytearray(), bytearray()
    for name, descr, shape, data in entries:
        fname = (name + ".npy").encode()
        blob = npy_header(descr, shape) + data
        crc = zlib.crc32(blob)
        local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0, crc, len(blob), len(blob), len(fname), 0)
        central += b"PK\x01\x02" + struct.pack("<H", 20) + local[4:30] + struct.pack("<HHHII", 0, 0, 0, 0, len(body))
        central += fname
        body += local + fname + blob
    footer = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(body), 0)
    with open(path, "wb") as f:
        f.write(bytes(body + central + footer))


def quantised(name, a):
    """intgemm8 as marian-conv stores it: int8 values (a weight transposed to
    [out][in]; a name with Wemb as it is), then the float32 multiplier."""
    import numpy as np
    a = a.astype(np.float32)
    mult = np.float32(127.0) / np.float32(np.abs(a).max())
    if "Wemb" not in name:
        a = a.T
    q = np.clip(np.rint(a * mult), -127, 127).astype(np.int8)  # float32 product, rounded to even (cvtps2dq)
    return q.tobytes() + struct.pack("<f", float(mult))


def is_gemm_weight(name):
    """expression_graph_packable.h's test: the first "_W" ends two or three
    characters before the end, or the name holds "Wemb"."""
    i = name.find("_W")
    return i != -1 and i in (len(name) - 3, len(name) - 2) or "Wemb" in name


def write_bin(path, items, yml, intgemm8=False):
    """Marian's .bin (src/common/binary.cpp) as marian-conv writes it: items
    sorted by name, each one's bytes its parameter memory (padded to 256
    bytes, the allocator's alignment), special:model.yml last (unpadded)."""
    records = []
    for name, a in sorted(items.items()):
        if intgemm8 and is_gemm_weight(name):
            data, type_ = quantised(name, a), TYPE_INTGEMM8
        else:
            data, type_ = a.astype("<f4").tobytes(), TYPE_FLOAT32
        data += b"\0" * (-len(data) % 256)
        records.append((name, type_, list(a.shape), data))
    text = yml.encode() + b"\0"
    records.append(("special:model.yml", TYPE_INT8, [len(text)], text))
    head = struct.pack("<QQ", 1, len(records))
    for name, type_, shape, data in records:
        head += struct.pack("<QQQQ", len(name.encode()) + 1, type_, len(shape), len(data))
    for name, _, _, _ in records:
        head += name.encode() + b"\0"
    for _, _, shape, _ in records:
        head += struct.pack(f"<{len(shape)}i", *shape)
    pos = len(head)
    nextpos = ((pos + 8) // 256 + 1) * 256
    head += struct.pack("<Q", nextpos - pos - 8) + b"\0" * (nextpos - pos - 8)
    with open(path, "wb") as f:
        f.write(head)
        for record in records:
            f.write(record[3])


def alphas(model, sources):
    """scripts/alphas/extract_stats.py's multipliers: 127 / (mean + 1.1 std)
    of each product's largest |input|, over every call while translating
    (greedy, one sentence a call, as the test calls Bergamot)."""
    import numpy as np
    model.record = {}
    greedy(model, sources)
    record, model.record = model.record, None
    out = {}
    for w, maxima in record.items():
        m = np.array(maxima, dtype=np.float64)
        out[w + "_QuantMultA"] = np.array([127 / (m.mean() + 1.1 * m.std())], dtype=np.float32)
    out["none_QuantMultA"] = out["Wemb_QuantMultA"]  # the output layer's name under a shortlist
    return out


def int8_simulation(model, items, multipliers, sources):
    """Greedy outputs of the model with its intgemm8 weights (q / m, as both
    engines read them) and int8 activations in each of fake_quant's three
    ways: what the engine's per-row activations and Marian's precomputed
    alphas would each give, to hold against Bergamot's int8 outputs."""
    import numpy as np
    import torch
    model.wq = {}
    for name, a in items.items():
        if is_gemm_weight(name):
            mult = np.float32(127.0) / np.float32(np.abs(a).max())
            q = np.clip(np.rint(a * mult), -127, 127).astype(np.float32)
            model.wq[name] = (torch.from_numpy(q.T.copy() if name == "Wemb" else q), float(mult))
    model.alpha = {k[:-len("_QuantMultA")]: float(v[0]) for k, v in multipliers.items()}
    # Embedding lookups read the int8 table too (q / m, as both engines do).
    q, mult = model.wq["Wemb"]
    saved = model.p["Wemb"].detach().clone()
    with torch.no_grad():
        model.p["Wemb"].copy_(q.t() * torch.tensor(1 / mult, dtype=torch.float32))
    out = {}
    for way in INT8_WAYS:
        model.quant = way
        out[way] = greedy(model, sources)
    model.quant = None
    with torch.no_grad():
        model.p["Wemb"].copy_(saved)
    return out


def export(args):
    import torch
    import numpy as np
    sys.path.insert(0, HERE)
    from residual_mt import bleu
    os.makedirs(args.out, exist_ok=True)
    spm = os.path.join(args.work, "spm.model")
    with open(spm, "rb") as f, open(os.path.join(args.out, "vocab.spm"), "wb") as g:
        g.write(f.read())
    test = json.load(open(os.path.join(args.work, "modern-test.json")))[:N_TEST]
    valid = json.load(open(os.path.join(args.work, "modern-valid.json")))
    for x, i in (("es", 0), ("en", 1)):
        with open(os.path.join(args.out, f"test.{x}"), "w", encoding="utf-8") as f:
            f.write("".join(p[i] + "\n" for p in test))
    summary = {}
    for decoder in sorted(SHAPES):
        ckpt = os.path.join(args.work, f"ckpt-{decoder}.pt")
        if not os.path.exists(ckpt):
            print(f"export: no {ckpt}, skipped")
            continue
        saved = torch.load(ckpt)
        model = make_model(decoder)
        model.load_state_dict(saved["model"])
        model.eval()
        items = {name: p.detach().numpy().astype(np.float32) for name, p in model.p.items()}
        out = os.path.join(args.out, decoder)
        os.makedirs(out, exist_ok=True)
        yml = model_yml(decoder)
        if decoder == "ssru":  # one .npz is enough for the fixtures (the same writer): a smaller repository
            write_npz(os.path.join(out, "model.npz"), items, yml)
        write_bin(os.path.join(out, "model.bin"), items, yml)
        multipliers = alphas(model, spm_encode(spm, [p[0] for p in valid[:200]]))
        write_bin(os.path.join(out, "model.intgemm.alphas.bin"), {**items, **multipliers}, yml, intgemm8=True)
        simulated = int8_simulation(model, items, multipliers, spm_encode(spm, [p[0] for p in test]))
        with open(os.path.join(out, "pytorch-int8-greedy.json"), "w") as f:
            f.write("{\n" + ",\n".join(f'"{k}": {json.dumps(v, separators=(",", ":"))}' for k, v in simulated.items())
                    + "\n}\n")
        scores = []
        ids = greedy(model, spm_encode(spm, [p[0] for p in test]), scores=scores)
        hyps = spm_decode(spm, ids)
        score = bleu.corpus_bleu(hyps, [[p[1] for p in test]])["score"]
        with open(os.path.join(out, "pytorch-greedy.json"), "w") as f:
            f.write("[\n" + ",\n".join(json.dumps({"ids": i, "score": round(s, 6)}) for i, s in zip(ids, scores))
                    + "\n]\n")
        summary[decoder] = {"parameters": sum(a.size for a in items.values()), "updates": saved["step"],
                            "pairs_seen": saved["seen"], "training_minutes": round(saved["seconds"] / 60, 1),
                            "pytorch_greedy_bleu": round(score, 2), **SHAPES[decoder]}
        print(f"export {decoder}: {summary[decoder]}")
    with open(os.path.join(args.out, "models.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--corpus", required=True, help="models/data/build_corpus.py's output directory")
    p.add_argument("--work", required=True)
    p = sub.add_parser("train")
    p.add_argument("--work", required=True)
    p.add_argument("--decoder", choices=sorted(SHAPES), required=True)
    p.add_argument("--minutes", type=float, default=20)
    p.add_argument("--threads", type=int, default=1)
    p = sub.add_parser("export")
    p.add_argument("--work", required=True)
    p.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "marian-trained"))
    args = parser.parse_args()
    {"prepare": prepare, "train": train, "export": export}[args.command](args)
