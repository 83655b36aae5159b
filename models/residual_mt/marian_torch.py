"""A Marian transformer (OPUS-MT's kind: Post-LN, tied embeddings, output bias)
in PyTorch, written from Marian's math (marian-dev src/models/transformer.h),
in the graph layout Hugging Face's MarianMTModel exports: the reference the
transformers.js benchmark checks both runtimes against, and the module
models/tjs_export.py exports to ONNX.

Marian's math, as residual-mt's converted models run it ("positions":
"marian", "decoder_start": "zeros", ln_eps 1e-6):
    embeddings x sqrt(d), plus Marian's sinusoids from position 0
        (frequency i of d/2: exp(-i ln(10000) / (d/2 - 1)), [sin | cos]);
    each layer: x = LN(x + sublayer(x)); attention (x W + b) per head,
        softmax(q k^T / sqrt(dh)); FFN swish;
    logits = x Wemb^T + b;
    the decoder starts from a zero embedding: HF's layout appends <pad> as the
        last id with a zero row and a zero bias, and starts from it.
Weights are Marian's [in, out] (x W); torch's Linear holds [out, in].
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

MASKED = -1e9  # added to the scores of padded source positions and future target ones


def marian_positions(n, dim):
    """Marian's sinusoid table [n, dim], in float32 as Marian computes it."""
    half = dim // 2
    step = np.float32(math.log(10000.0) / (half - 1))
    freq = np.exp(np.arange(half, dtype=np.float32) * -step).astype(np.float32)
    angle = np.arange(n, dtype=np.float32)[:, None] * freq[None, :]
    return torch.from_numpy(np.concatenate([np.sin(angle), np.cos(angle)], axis=1).astype(np.float32))


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def split(self, x):  # [B, T, d] -> [B, heads, T, dh]
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, query, k, v, bias):
        q = self.split(self.q(query))
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(q.shape[-1])
        if bias is not None:
            scores = scores + bias
        out = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2)
        return self.o(out.reshape(out.shape[0], out.shape[1], -1))

    def keys_values(self, x):
        return self.split(self.k(x)), self.split(self.v(x))


class FFN(nn.Module):
    def __init__(self, d, ffn):
        super().__init__()
        self.w1, self.w2 = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)))


class EncoderLayer(nn.Module):
    def __init__(self, d, ffn, heads, eps):
        super().__init__()
        self.self_att, self.self_ln = Attention(d, heads), nn.LayerNorm(d, eps=eps)
        self.ffn, self.ffn_ln = FFN(d, ffn), nn.LayerNorm(d, eps=eps)

    def forward(self, x, src_bias):
        k, v = self.self_att.keys_values(x)
        x = self.self_ln(x + self.self_att(x, k, v, src_bias))
        return self.ffn_ln(x + self.ffn(x))


class DecoderLayer(nn.Module):
    def __init__(self, d, ffn, heads, eps):
        super().__init__()
        self.self_att, self.self_ln = Attention(d, heads), nn.LayerNorm(d, eps=eps)
        self.context, self.context_ln = Attention(d, heads), nn.LayerNorm(d, eps=eps)
        self.ffn, self.ffn_ln = FFN(d, ffn), nn.LayerNorm(d, eps=eps)

    def forward(self, x, self_bias, past, memory, src_bias):
        """past: this layer's earlier (keys, values) or None; memory: the
        encoder's (keys, values) for this layer. Returns x and all (keys, values)."""
        k, v = self.self_att.keys_values(x)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        x = self.self_ln(x + self.self_att(x, k, v, self_bias))
        x = self.context_ln(x + self.context(x, memory[0], memory[1], src_bias))
        return self.ffn_ln(x + self.ffn(x)), (k, v)


class MarianTransformer(nn.Module):
    def __init__(self, vocab, d, ffn, heads, enc_depth, dec_depth, max_positions=512, eps=1e-6):
        super().__init__()
        self.d, self.heads = d, heads
        self.embed = nn.Embedding(vocab + 1, d)  # + <pad>: the zero start row
        self.register_buffer("logit_bias", torch.zeros(vocab + 1))
        self.register_buffer("positions", marian_positions(max_positions, d))
        self.encoder = nn.ModuleList(EncoderLayer(d, ffn, heads, eps) for _ in range(enc_depth))
        self.decoder = nn.ModuleList(DecoderLayer(d, ffn, heads, eps) for _ in range(dec_depth))

    def embedded(self, ids, start):
        return self.embed(ids) * math.sqrt(self.d) + self.positions[start:start + ids.shape[1]]

    def encode(self, ids, mask):
        x, bias = self.embedded(ids, 0), source_bias(mask)
        for layer in self.encoder:
            x = layer(x, bias)
        return x

    def memory(self, encoded):
        """Each decoder layer's encoder keys and values."""
        return [layer.context.keys_values(encoded) for layer in self.decoder]

    def decode(self, ids, mask, past, memory):
        """Logits of ids placed after past's positions (past: a (keys, values)
        per layer, or None), and every layer's self-attention keys and values."""
        start = 0 if past is None else past[0][0].shape[2]
        x, src_bias = self.embedded(ids, start), source_bias(mask)
        t = ids.shape[1]
        causal = torch.triu(torch.full((t, t), MASKED), diagonal=1) if past is None else None
        presents = []
        for i, layer in enumerate(self.decoder):
            x, kv = layer(x, causal, None if past is None else past[i], memory[i], src_bias)
            presents.append(kv)
        return F.linear(x, self.embed.weight) + self.logit_bias, presents

    @torch.no_grad()
    def greedy(self, src, n_out, start_id):
        """n_out greedy target ids for one source (ids with </s>), decoded step by
        step with the cache, as transformers.js runs the exported graphs, and the
        smallest gap between the best and the second-best logit of any step."""
        ids = torch.tensor([src])
        mask = torch.ones_like(ids)
        memory = self.memory(self.encode(ids, mask))
        token, past, out, margin = torch.tensor([[start_id]]), None, [], float("inf")
        while len(out) < n_out:
            logits, past = self.decode(token, mask, past, memory)
            top = torch.topk(logits[0, -1], 2)
            margin = min(margin, float(top.values[0] - top.values[1]))
            out.append(int(top.indices[0]))
            token = torch.tensor([[out[-1]]])
        return out, margin


def source_bias(mask):
    """[B, S] 1/0 mask -> [B, 1, 1, S] additive scores."""
    return (1.0 - mask[:, None, None, :].to(torch.float32)) * MASKED


def from_marian(arrays, yml):
    """The module of a Marian transformer's arrays ({name: numpy}, tied-embeddings-all)."""
    emb = arrays["Wemb"]
    vocab, d = emb.shape
    m = MarianTransformer(vocab, d, int(yml["transformer-dim-ffn"]), int(yml["transformer-heads"]),
                          int(yml["enc-depth"]), int(yml["dec-depth"]))
    state = {"embed.weight": np.concatenate([emb, np.zeros((1, d), np.float32)]),
             "logit_bias": np.concatenate([arrays["decoder_ff_logit_out_b"].reshape(-1), np.zeros(1, np.float32)])}

    def linear(ours, marian_w, marian_b):
        state[f"{ours}.weight"] = arrays[marian_w].T
        state[f"{ours}.bias"] = arrays[marian_b].reshape(-1)

    def norm(ours, marian):
        state[f"{ours}.weight"] = arrays[f"{marian}_ln_scale"].reshape(-1)
        state[f"{ours}.bias"] = arrays[f"{marian}_ln_bias"].reshape(-1)

    def attention(ours, ln, marian):
        for x in "qkvo":
            linear(f"{ours}.{x}", f"{marian}_W{x}", f"{marian}_b{x}")
        norm(ln, f"{marian}_Wo")

    def ffn(ours, marian):
        linear(f"{ours}.ffn.w1", f"{marian}_W1", f"{marian}_b1")
        linear(f"{ours}.ffn.w2", f"{marian}_W2", f"{marian}_b2")
        norm(f"{ours}.ffn_ln", f"{marian}_ffn")

    for i in range(len(m.encoder)):
        attention(f"encoder.{i}.self_att", f"encoder.{i}.self_ln", f"encoder_l{i + 1}_self")
        ffn(f"encoder.{i}", f"encoder_l{i + 1}_ffn")
    for i in range(len(m.decoder)):
        attention(f"decoder.{i}.self_att", f"decoder.{i}.self_ln", f"decoder_l{i + 1}_self")
        attention(f"decoder.{i}.context", f"decoder.{i}.context_ln", f"decoder_l{i + 1}_context")
        ffn(f"decoder.{i}", f"decoder_l{i + 1}_ffn")
    tensors = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in state.items()}
    tensors["positions"] = m.positions
    m.load_state_dict(tensors, strict=True)
    return m.eval()
