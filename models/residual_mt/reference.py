"""PyTorch reference implementation of the models residual-mt runs.

This file defines what "correct" means for the C engine: the engine's tests
compare against numbers this module produces (tests/fixtures/make_fixtures.py), and
models/train.py trains this same module.

Architecture: a fairseq-style encoder-decoder Transformer with one of three
residual styles (Xie et al., "ResiDual: Transformer with Dual Residual Connections", 2023, and its code, microsoft/ResiDual):

    post      x = LN(x + f(x))
    pre       x = x + f(LN(x))                   ... final LN after the stack
    residual  y = f(x); d = d + y * s; x = LN(y + x)
              ... stack output = x * alpha + LN_final(d), LN_final eps 1e-7

fairseq conventions: token embedding * sqrt(d_model), sinusoidal positions
starting at pad + 1 ([sin | cos] halves), <s>=0 <pad>=1 </s>=2 <unk>=3,
decoding starts from </s>, q scaled by head_dim^-0.5, ReLU FFN, tied
embeddings, fairseq parameter names.

Tensors are batch-first here ([B, T, C]); fairseq is time-first, which changes
no number.
"""

import inspect
import json
import math
import os
import struct
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

FORMAT = "residual-mt/1"
STYLES = ("post", "pre", "residual")


@dataclass
class ModelConfig:
    style: str = "residual"
    d_model: int = 256
    ffn_dim: int = 1024
    n_heads: int = 4
    encoder_layers: int = 6
    decoder_layers: int = 6
    vocab_size: int = 8000
    bos_id: int = 0
    pad_id: int = 1
    eos_id: int = 2
    unk_id: int = 3
    activation: str = "relu"
    ln_eps: float = 1e-5
    final_ln_eps: float = 1e-7  # ResiDual's LN_final on the dual stream
    res_scale: float = 1.0  # enc/dec_res_input_norm_scale
    enc_alpha: float = 1.0
    dec_alpha: float = 1.0
    share_embeddings: bool = True
    max_positions: int = 256
    # Training only; the engine ignores them.
    dropout: float = 0.1
    attention_dropout: float = 0.0
    activation_dropout: float = 0.0
    # Free-form metadata: {"source": [...], "target": [...], "target_lang_tokens": {...}}
    languages: Dict = field(default_factory=dict)
    # With a lexical shortlist (models/shortlist.py): the ids below this are always candidates.
    shortlist_first: Optional[int] = None
    # "int16": the engine computes the output layer in 16-bit integers (see int8 below).
    output_layer: str = "float"

    def __post_init__(self):
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, got {self.style!r}")
        if self.d_model % self.n_heads:
            raise ValueError("d_model must be divisible by n_heads")
        if self.activation != "relu":
            raise ValueError("only relu is supported")
        if self.output_layer not in ("float", "int16"):
            raise ValueError(f'output_layer must be "float" or "int16", got {self.output_layer!r}')

    @staticmethod
    def from_dict(d: dict) -> "ModelConfig":
        known = {k: v for k, v in d.items() if k in ModelConfig.__dataclass_fields__}
        return ModelConfig(**known)

    def to_dict(self) -> dict:
        return {"format": FORMAT, **asdict(self)}


def sinusoidal_table(num_embeddings: int, dim: int, pad_id: int) -> torch.Tensor:
    """fairseq's SinusoidalPositionalEmbedding.get_embedding."""
    half_dim = dim // 2
    step = math.log(10000) / (half_dim - 1)
    freqs = torch.exp(torch.arange(half_dim, dtype=torch.float) * -step)
    angles = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * freqs.unsqueeze(0)
    table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1).view(num_embeddings, -1)
    if dim % 2 == 1:
        table = torch.cat([table, torch.zeros(num_embeddings, 1)], dim=1)
    table[pad_id, :] = 0
    return table


def make_positions(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Positions start at pad_id + 1; pad tokens get pad_id (a zero vector)."""
    mask = tokens.ne(pad_id).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + pad_id


class MultiheadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.scaling = self.head_dim ** -0.5
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)  # [B, H, T, hd]

    def forward(self, query, key_value, key_padding_mask=None, attn_mask=None,
                cache: Optional[dict] = None, static_kv: bool = False, weights_out: Optional[list] = None):
        """cache: per-layer dict; self-attention appends k/v, cross-attention (static_kv)
        computes them once. weights_out: a list that gets the attention weights
        averaged over the heads ([B, Tq, Tk])."""
        q = self.split_heads(self.q_proj(query) * self.scaling)
        if cache is not None and static_kv and "k" in cache:
            k, v = cache["k"], cache["v"]
        else:
            k = self.split_heads(self.k_proj(key_value))
            v = self.split_heads(self.v_proj(key_value))
            if cache is not None and not static_kv and "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            if cache is not None:
                cache["k"], cache["v"] = k, v
        weights = torch.matmul(q, k.transpose(2, 3))  # [B, H, Tq, Tk]
        if attn_mask is not None:
            weights = weights + attn_mask
        if key_padding_mask is not None:
            weights = weights.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        probs = F.softmax(weights.float(), dim=-1).type_as(weights)
        if weights_out is not None:
            weights_out.append(probs.mean(dim=1))
        probs = F.dropout(probs, p=self.dropout, training=self.training)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(query.shape)
        return self.out_proj(out)


class SublayerNorm(nn.Module):
    """Holds the LN of one sub-layer and applies the residual style: the one
    place where Post-LN, Pre-LN and ResiDual differ."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.style = cfg.style
        self.res_scale = cfg.res_scale
        self.dropout = cfg.dropout
        self.layer_norm = nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps)

    def forward(self, x, dual, f):
        """Returns the new (x, dual) after sub-layer f (dual is None unless ResiDual)."""
        if self.style == "pre":
            return x + F.dropout(f(self.layer_norm(x)), self.dropout, self.training), dual
        out = F.dropout(f(x), self.dropout, self.training)
        if self.style == "residual":
            dual = dual + out * self.res_scale
        return self.layer_norm(out + x), dual


class FeedForward(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.fc1 = nn.Linear(cfg.d_model, cfg.ffn_dim)
        self.fc2 = nn.Linear(cfg.ffn_dim, cfg.d_model)
        self.activation_dropout = cfg.activation_dropout

    def forward(self, x):
        h = F.dropout(F.relu(self.fc1(x)), self.activation_dropout, self.training)
        return self.fc2(h)


class EncoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_attn = MultiheadAttention(cfg.d_model, cfg.n_heads, cfg.attention_dropout)
        self.self_attn_layer_norm = SublayerNorm(cfg)
        self.ffn = FeedForward(cfg)
        self.final_layer_norm = SublayerNorm(cfg)

    def forward(self, x, dual, pad_mask):
        x, dual = self.self_attn_layer_norm(x, dual, lambda h: self.self_attn(h, h, key_padding_mask=pad_mask))
        return self.final_layer_norm(x, dual, self.ffn)


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_attn = MultiheadAttention(cfg.d_model, cfg.n_heads, cfg.attention_dropout)
        self.self_attn_layer_norm = SublayerNorm(cfg)
        self.encoder_attn = MultiheadAttention(cfg.d_model, cfg.n_heads, cfg.attention_dropout)
        self.encoder_attn_layer_norm = SublayerNorm(cfg)
        self.ffn = FeedForward(cfg)
        self.final_layer_norm = SublayerNorm(cfg)

    def forward(self, x, dual, enc_out, enc_pad_mask, self_attn_mask, cache, cross_weights=None):
        self_cache = cache.setdefault("self", {}) if cache is not None else None
        cross_cache = cache.setdefault("cross", {}) if cache is not None else None
        x, dual = self.self_attn_layer_norm(
            x, dual, lambda h: self.self_attn(h, h, attn_mask=self_attn_mask, cache=self_cache))
        x, dual = self.encoder_attn_layer_norm(
            x, dual, lambda h: self.encoder_attn(h, enc_out, key_padding_mask=enc_pad_mask,
                                                 cache=cross_cache, static_kv=True, weights_out=cross_weights))
        return self.final_layer_norm(x, dual, self.ffn)


class Stack(nn.Module):
    """Embedding + layers + the style's final normalisation (fairseq's
    TransformerEncoder / TransformerDecoder minus the output projection)."""

    def __init__(self, cfg: ModelConfig, embed_tokens: nn.Embedding, layer_cls, n_layers: int, alpha: float):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = embed_tokens
        self.embed_scale = math.sqrt(cfg.d_model)
        self.register_buffer("positions", sinusoidal_table(cfg.max_positions + cfg.pad_id + 1, cfg.d_model, cfg.pad_id),
                             persistent=False)
        self.layers = nn.ModuleList([layer_cls(cfg) for _ in range(n_layers)])
        self.alpha = alpha
        eps = cfg.final_ln_eps if cfg.style == "residual" else cfg.ln_eps
        self.layer_norm = nn.LayerNorm(cfg.d_model, eps=eps) if cfg.style != "post" else None

    def embed(self, tokens, positions):
        x = self.embed_scale * self.embed_tokens(tokens) + self.positions[positions]
        return F.dropout(x, self.cfg.dropout, self.training)

    def start_dual(self, x):
        return x * self.cfg.res_scale if self.cfg.style == "residual" else None

    def finish(self, x, dual):
        if self.cfg.style == "residual":
            return x * self.alpha + self.layer_norm(dual)
        if self.cfg.style == "pre":
            return self.layer_norm(x)
        return x


class Transformer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        embed = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        dec_embed = embed if cfg.share_embeddings else nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.encoder = Stack(cfg, embed, EncoderLayer, cfg.encoder_layers, cfg.enc_alpha)
        self.decoder = Stack(cfg, dec_embed, DecoderLayer, cfg.decoder_layers, cfg.dec_alpha)
        if cfg.share_embeddings:
            self.output_projection = None
        else:
            self.output_projection = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        init_params(self)

    def output_weight(self):
        return self.decoder.embed_tokens.weight if self.output_projection is None else self.output_projection.weight

    def encode(self, src_tokens) -> Tuple[torch.Tensor, torch.Tensor]:
        pad_mask = src_tokens.eq(self.cfg.pad_id)
        x = self.encoder.embed(src_tokens, make_positions(src_tokens, self.cfg.pad_id))
        x = x * (1 - pad_mask.unsqueeze(-1).type_as(x))  # as fairseq: zero the pad rows
        dual = self.encoder.start_dual(x)
        for layer in self.encoder.layers:
            x, dual = layer(x, dual, pad_mask)
        return self.encoder.finish(x, dual), pad_mask

    def decode(self, prev_tokens, enc_out, enc_pad_mask, cache: Optional[List[dict]] = None,
               features_only: bool = False, cross_weights: Optional[list] = None):
        """Teacher-forced when cache is None; otherwise incremental: prev_tokens is
        the whole prefix, only its last token is run, and cache (one dict per layer,
        start with []) keeps the keys and values. features_only: the decoder's
        output states instead of logits. cross_weights: a list that gets each
        layer's encoder-attention weights, averaged over the heads ([B, T, S])."""
        positions = make_positions(prev_tokens, self.cfg.pad_id)
        if cache is not None:
            prev_tokens, positions = prev_tokens[:, -1:], positions[:, -1:]
            while len(cache) < len(self.decoder.layers):
                cache.append({})
            attn_mask = None
        else:
            T = prev_tokens.size(1)
            attn_mask = torch.triu(torch.full((T, T), float("-inf")), 1)
        x = self.decoder.embed(prev_tokens, positions)
        dual = self.decoder.start_dual(x)
        for i, layer in enumerate(self.decoder.layers):
            x, dual = layer(x, dual, enc_out, enc_pad_mask, attn_mask, cache[i] if cache is not None else None,
                            cross_weights)
        x = self.decoder.finish(x, dual)
        return x if features_only else self.project(x)

    def project(self, x):
        """The output layer: logits over the vocabulary (int8 after quantize_linears)."""
        int8 = getattr(self, "output_int8", None)
        return int8(x) if int8 is not None else F.linear(x, self.output_weight())

    def forward(self, src_tokens, prev_output_tokens):
        enc_out, enc_pad_mask = self.encode(src_tokens)
        return self.decode(prev_output_tokens, enc_out, enc_pad_mask)


def init_params(model: Transformer):
    """fairseq's initialisation: xavier-uniform linear weights with zero bias,
    N(0, d^-0.5) embeddings with a zero pad row; q/k/v with gain 1/sqrt(2)."""
    cfg = model.cfg
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            gain = 1 / math.sqrt(2) if name.split(".")[-1] in ("q_proj", "k_proj", "v_proj") else 1.0
            nn.init.xavier_uniform_(module.weight, gain=gain)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0, std=cfg.d_model ** -0.5)
            nn.init.zeros_(module.weight[cfg.pad_id])
    if model.output_projection is not None:
        nn.init.normal_(model.output_projection.weight, mean=0, std=cfg.d_model ** -0.5)


# ---------------------------------------------------------------- parameter names

def fairseq_name(name: str, cfg: ModelConfig) -> str:
    """This module's parameter name -> fairseq's. With shared embeddings the
    decoder embedding and output projection are encoder.embed_tokens.weight."""
    name = name.replace("_layer_norm.layer_norm.", "_layer_norm.").replace(".ffn.fc", ".fc")
    if name == "output_projection.weight":
        return "decoder.output_projection.weight"
    if cfg.share_embeddings and name == "decoder.embed_tokens.weight":
        return "encoder.embed_tokens.weight"
    return name


def fairseq_state_dict(model: Transformer) -> Dict[str, torch.Tensor]:
    """Parameters under their fairseq names; a shared embedding is stored once."""
    return {fairseq_name(n, model.cfg): t for n, t in model.state_dict().items()}


def load_fairseq_state_dict(model: Transformer, tensors: Dict[str, torch.Tensor]):
    model.load_state_dict({n: tensors[fairseq_name(n, model.cfg)].float() for n in model.state_dict()})


# ---------------------------------------------------------------- int8

# int8 models (models/quantize.py): every Linear weight and the output
# projection (with shared embeddings, the embedding) stored as I8 with one
# float32 scale per output feature (row) in "<name>.qscale": weight = q * scale,
# q in [-127, 127], scale = max|row| / 127. The engine keeps them int8 and
# computes each such Linear as
#     q_x = round_half_even(x * (127 / max|x|)) clamped to [-127, 127], per row of x
#     a_scale = max|x| / 127                           (a row of zeros: q_x = 0, a_scale 0)
#     out = (float32(sum_k q_x * q_w) * a_scale) * w_scale + bias    (float32, in that order)
# in every build (the relaxed-SIMD one computes the same integers: src/kernels.h).
# The output layer's input is quantized the same way to 16 bits instead of 8:
# to qmax_i16(K) in place of 127 (the largest qmax <= 32767 with
# 127 * qmax * K < 2^31, so that the engine's int32 sums stay exact).
# With config "output_layer": "int16" the engine quantizes the (float) output
# projection itself at load, per row as quantize_weight does, to
# qmax_w16(K) levels (the largest q <= 32767 with q * q * K < 2^31), and its
# input to the same qmax; otherwise the same arithmetic.
# Embedding lookups use the dequantized rows. Int8Linear simulates that
# exactly (integer sums in float64, exact below 2^53); the rest of the model
# stays float32 as in the float reference.
QMAX = 127
QMAX_I16 = 32767


def qmax_i16(k: int) -> int:
    """An int8 output layer's activation range for K inputs (src/kernels.h rmt_qmax_i16)."""
    return min(QMAX_I16, (2**31 - 1) // (QMAX * k))


def qmax_w16(k: int) -> int:
    """A 16-bit output layer's weight and activation range (src/kernels.h rmt_qmax_w16)."""
    return min(QMAX_I16, math.isqrt((2**31 - 1) // k))


def quantize_weight(w: torch.Tensor, qmax: int = QMAX) -> Tuple[torch.Tensor, torch.Tensor]:
    """A float weight (N, K) -> (q int8 (N, K), or int16 for qmax > 127, scale
    float32 (N)): symmetric per row, scale = max|row| / qmax (1 for a row of zeros)."""
    w = w.float()
    amax = w.abs().amax(dim=1)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    q = torch.round(w / scale[:, None]).clamp(-qmax, qmax).to(torch.int8 if qmax <= QMAX else torch.int16)
    return q, scale


def quantize_rows(x: torch.Tensor, qmax: int = QMAX) -> Tuple[torch.Tensor, torch.Tensor]:
    """Activations (..., K) float32 -> (q as float32 integers in [-qmax, qmax], a_scale (..., 1)), as the engine does."""
    amax = x.abs().amax(dim=-1, keepdim=True)
    inv = torch.where(amax > 0, torch.tensor(float(qmax)) / amax, torch.zeros_like(amax))
    return torch.round(x * inv).clamp(-qmax, qmax), amax / qmax


class Int8Linear(nn.Module):
    """The engine's int8 Linear (see above): int8 weights with row scales, activations quantized per row."""

    def __init__(self, q: torch.Tensor, scale: torch.Tensor, bias: Optional[torch.Tensor], act_qmax: int = QMAX):
        super().__init__()
        self.act_qmax = act_qmax
        self.register_buffer("q", q.to(torch.float64))  # integers, exact in float64
        self.register_buffer("scale", scale.float())
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())

    def forward(self, x):
        qx, a_scale = quantize_rows(x.float(), self.act_qmax)
        sums = torch.matmul(qx.double(), self.q.t())  # exact integer sums
        out = sums.float() * a_scale * self.scale
        return out if self.bias is None else out + self.bias


def quantize_linears(model: "Transformer", int8: Dict[str, Tuple[torch.Tensor, torch.Tensor]]):
    """Replaces every Linear (and the output projection) whose fairseq weight
    name is in int8 ({name: (q, scale)}) by its Int8Linear. The model's float
    weights must already be the dequantized ones."""
    for name, module in list(model.named_modules()):
        if not isinstance(module, nn.Linear) or name == "output_projection":
            continue
        key = fairseq_name(name + ".weight", model.cfg)
        if key in int8:
            parent_name, _, attr = name.rpartition(".")
            setattr(model.get_submodule(parent_name), attr, Int8Linear(*int8[key], module.bias))
    key = "encoder.embed_tokens.weight" if model.cfg.share_embeddings else "decoder.output_projection.weight"
    if key in int8:
        q, scale = int8[key]
        model.output_int8 = Int8Linear(q, scale, None, qmax_i16(q.shape[1]))
    return model


# ---------------------------------------------------------------- safetensors

_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.int8: "I8", torch.int32: "I32", torch.int16: "I16"}
_TORCH_DTYPES = {v: k for k, v in _DTYPES.items()}


def write_safetensors(path: str, tensors: Dict[str, torch.Tensor], metadata: Optional[dict] = None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, tensor in tensors.items():
        data = tensor.detach().contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": _DTYPES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path: str) -> Dict[str, torch.Tensor]:
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = _TORCH_DTYPES[info["dtype"]]
        out[name] = torch.frombuffer(bytearray(raw[base + start:base + end]), dtype=dtype).view(info["shape"])
    return out


def save_model_dir(model: Transformer, path: str, dtype: str = "float32"):
    os.makedirs(path, exist_ok=True)
    torch_dtype = {"float32": torch.float32, "float16": torch.float16}[dtype]
    tensors = {k: v.to(torch_dtype) for k, v in fairseq_state_dict(model).items()}
    write_safetensors(os.path.join(path, "model.safetensors"), tensors, {"format": FORMAT})
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(model.cfg.to_dict(), f, indent=2)
        f.write("\n")


def split_int8(tensors: Dict[str, torch.Tensor]):
    """Safetensors contents -> (float tensors with int8 ones dequantized, {name: (q, scale)} of the int8 ones)."""
    int8 = {}
    for name in [n for n, t in tensors.items() if t.dtype == torch.int8]:
        q, scale = tensors[name], tensors.pop(name + ".qscale").float()
        if q.dim() != 2 or scale.numel() != q.shape[0]:
            raise ValueError(f"{name}: only int8 matrices with one scale per row are supported")
        int8[name] = (q, scale)
        tensors[name] = q.float() * scale[:, None]
    return tensors, int8


def load_model_dir(path: str, int8: bool = True) -> Transformer:
    """A model directory as the engine runs it. An int8 model computes its int8
    Linears in int8 as the engine does, or (int8=False) in float32 on the
    dequantized weights."""
    with open(os.path.join(path, "config.json")) as f:
        cfg = ModelConfig.from_dict(json.load(f))
    return model_from_tensors(cfg, read_safetensors(os.path.join(path, "model.safetensors")), int8)


def model_from_tensors(cfg: ModelConfig, tensors: Dict[str, torch.Tensor], int8: bool = True) -> Transformer:
    """A model from safetensors contents (int8 ones included: see load_model_dir)."""
    model = Transformer(cfg)
    tensors = dict(tensors)
    if cfg.shortlist_first is not None:
        model.shortlist = (tensors.pop("shortlist.offsets").long(), tensors.pop("shortlist.targets").long())
    tensors, int8_tensors = split_int8(tensors)
    load_fairseq_state_dict(model, tensors)
    if int8_tensors and int8:
        quantize_linears(model, int8_tensors)
    if cfg.output_layer == "int16" and int8:
        key = "encoder.embed_tokens.weight" if cfg.share_embeddings else "decoder.output_projection.weight"
        if key in int8_tensors:
            raise ValueError(f'{key} is int8: "output_layer": "int16" quantizes a float output projection')
        q, scale = quantize_weight(model.output_weight().detach(), qmax_w16(cfg.d_model))
        model.output_int8 = Int8Linear(q, scale, None, qmax_w16(cfg.d_model))
    return model.eval()


# ---------------------------------------------------------------- search

def pad_batch(sentences: List[List[int]], cfg: ModelConfig) -> torch.Tensor:
    """Source id lists (without eos) -> [B, S] right-padded tensor, eos appended."""
    width = max(len(s) for s in sentences) + 1
    out = torch.full((len(sentences), width), cfg.pad_id, dtype=torch.long)
    for i, s in enumerate(sentences):
        out[i, :len(s) + 1] = torch.tensor(list(s) + [cfg.eos_id])
    return out


def max_target_len(cfg: ModelConfig, src_len_with_eos: int, max_len_a: float, max_len_b: int) -> int:
    """fairseq's max_len, from each sentence's own length (fairseq uses the padded
    batch width; per sentence keeps a translation independent of its batch)."""
    return min(int(max_len_a * src_len_with_eos + max_len_b), cfg.max_positions - 1)


def shortlist_candidates(model, src_tokens: torch.Tensor) -> Optional[torch.Tensor]:
    """[B, V] bool: each sentence's output candidates under the model's lexical
    shortlist (None without one), by Marian's rule as the engine applies it
    (src/shortlist.c shortlist_candidates): the ids below shortlist_first,
    every source id (</s> included), the targets each brings in, then the
    lowest other ids from shortlist_first on until the count is a multiple of 8."""
    cfg = model.cfg
    if getattr(model, "shortlist", None) is None:
        return None
    offsets, targets = model.shortlist
    allowed = torch.zeros(src_tokens.shape[0], cfg.vocab_size, dtype=torch.bool)
    for b, row in enumerate(src_tokens.tolist()):
        allowed[b, :cfg.shortlist_first] = True
        for token in row:
            if token == cfg.pad_id:
                continue
            allowed[b, token] = True
            allowed[b, targets[offsets[token]:offsets[token + 1]]] = True
        missing = (-int(allowed[b].sum())) % 8
        fill = (~allowed[b, cfg.shortlist_first:]).nonzero().flatten()[:missing] + cfg.shortlist_first
        allowed[b, fill] = True
    return allowed


def step_log_probs(model, tokens, enc_out, enc_pad_mask, cache, step, max_lens, min_len, allowed=None):
    """allowed: [rows, V] bool, the lexical shortlist's candidates (others are
    left out of the softmax), or None."""
    cfg = model.cfg
    logits = model.decode(tokens, enc_out, enc_pad_mask, cache)[:, -1, :].float()
    if allowed is not None:
        logits = logits.masked_fill(~allowed, float("-inf"))
    lprobs = F.log_softmax(logits, dim=-1)
    lprobs[lprobs != lprobs] = float("-inf")
    lprobs[:, cfg.pad_id] = float("-inf")
    at_max = step >= max_lens
    if at_max.any():
        eos_col = lprobs[:, cfg.eos_id].clone()
        lprobs[at_max] = float("-inf")
        lprobs[at_max, cfg.eos_id] = eos_col[at_max]
    if step < min_len:
        lprobs[~at_max, cfg.eos_id] = float("-inf")
    return lprobs


def reorder_cache(cache, order):
    for layer in cache:
        for part in layer.values():
            for key in ("k", "v"):
                part[key] = part[key].index_select(0, order)


@torch.no_grad()
def greedy_search(model: Transformer, src_tokens: torch.Tensor, **search) -> List[List[int]]:
    """beam_search with beam 1: the best ids per sentence; search: its other
    keywords (max_len_a, max_len_b, min_len, shortlist)."""
    return [hyps[0][0] for hyps in beam_search(model, src_tokens, **dict(search, beam=1, lenpen=1.0, nbest=1))]


@torch.no_grad()
def beam_search(model: Transformer, src_tokens: torch.Tensor, beam: int = 5, lenpen: float = 1.0,
                max_len_a: float = 1.2, max_len_b: int = 10, min_len: int = 1,
                nbest: int = 1, shortlist: bool = True) -> List[List[Tuple[List[int], float]]]:
    """fairseq's SequenceGenerator with BeamSearch (no unk penalty, no n-gram
    blocking), sentence by sentence inside one batched decoder call. Returns per
    sentence up to nbest (ids without eos, score) with score = sum of log-probs
    (eos included) / length^lenpen, length counting eos. With the model's
    lexical shortlist (shortlist=False: without), each sentence's words are
    chosen among its candidates (shortlist_candidates)."""
    cfg = model.cfg
    model.eval()
    B, S = src_tokens.shape
    src_lens = src_tokens.ne(cfg.pad_id).sum(1)
    max_lens = torch.tensor([max_target_len(cfg, int(n), max_len_a, max_len_b) for n in src_lens])
    enc_out, enc_pad_mask = model.encode(src_tokens)
    rows = torch.arange(B).repeat_interleave(beam)  # row r belongs to sentence r // beam
    enc_out, enc_pad_mask = enc_out[rows], enc_pad_mask[rows]
    allowed = shortlist_candidates(model, src_tokens) if shortlist else None
    row_allowed = allowed[rows] if allowed is not None else None
    row_max_lens = max_lens[rows]
    V = cfg.vocab_size
    T = int(max_lens.max()) + 2
    tokens = torch.full((B * beam, T), cfg.pad_id, dtype=torch.long)
    tokens[:, 0] = cfg.eos_id
    scores = torch.zeros(B * beam, T)
    finalized: List[List[Tuple[List[int], float]]] = [[] for _ in range(B)]
    finished = [False] * B
    ignore = torch.zeros(B, beam, dtype=torch.bool)  # fairseq's cands_to_ignore
    cache: List[dict] = []
    for step in range(T - 1):
        lprobs = step_log_probs(model, tokens[:, :step + 1], enc_out, enc_pad_mask, cache, step, row_max_lens, min_len,
                                row_allowed)
        lprobs = lprobs.view(B, beam, V)
        if step == 0:
            cand = lprobs[:, 0, :]  # all beams are equal at the first step
        else:
            cand = (lprobs + scores.view(B, beam, T)[:, :, step - 1].unsqueeze(-1)).view(B, beam * V)
        k = min(2 * beam, cand.size(1) - 1)
        cand_scores, cand_flat = torch.topk(cand, k)
        cand_beams = torch.div(cand_flat, V, rounding_mode="floor")
        cand_tokens = cand_flat % V
        eos_mask = cand_tokens.eq(cfg.eos_id) & cand_scores.ne(float("-inf"))
        eos_mask[:, :beam][ignore] = False
        for b in range(B):
            if finished[b]:
                continue
            for j in range(beam):
                if not eos_mask[b, j]:
                    continue
                row = b * beam + int(cand_beams[b, j])
                if len(finalized[b]) < beam:
                    score = float(cand_scores[b, j]) / (step + 1) ** lenpen
                    finalized[b].append((tokens[row, 1:step + 1].tolist(), score))
            if len(finalized[b]) == beam or step == int(max_lens[b]):
                finished[b] = True
        if all(finished):
            break
        # Continue with the best beam candidates that are not eos.
        cand_offsets = torch.arange(k)
        skip = eos_mask.clone()
        skip[:, :beam] |= ignore
        active_key = skip.long() * k + cand_offsets
        new_ignore, active = torch.topk(active_key, beam, dim=1, largest=False)
        ignore = new_ignore.ge(k)
        parent = (torch.gather(cand_beams, 1, active) + torch.arange(B).unsqueeze(1) * beam).view(-1)
        tokens[:, :step + 1] = tokens[parent, :step + 1]
        tokens[:, step + 1] = torch.gather(cand_tokens, 1, active).view(-1)
        scores[:, :step] = scores[parent, :step]
        scores[:, step] = torch.gather(cand_scores, 1, active).view(-1)
        reorder_cache(cache, parent)
    out = []
    for b in range(B):
        hyps = sorted(finalized[b], key=lambda h: -h[1])  # stable: ties keep finalisation order
        out.append(hyps[:nbest])
    return out


# ---------------------------------------------------------------- alignment


# The search defaults every script reads: beam_search's keyword defaults,
# written once in its signature (the engine's are checked against them).
SEARCH = {name: p.default for name, p in inspect.signature(beam_search).parameters.items()
          if p.default is not inspect.Parameter.empty}


@torch.no_grad()
def cross_attention(model: Transformer, src_tokens: torch.Tensor, prev_tokens: torch.Tensor) -> torch.Tensor:
    """The last decoder layer's encoder attention, averaged over the heads,
    teacher-forced on prev_tokens: [B, T, S]."""
    enc_out, pad_mask = model.encode(src_tokens)
    weights: list = []
    model.decode(prev_tokens, enc_out, pad_mask, cross_weights=weights)
    return weights[-1]


def alignable(cfg: ModelConfig, source: List[int]) -> List[int]:
    """Source positions a target token may be aligned to: not </s>, not a
    target-language token (they stand for no word of the text)."""
    lang = set(cfg.languages.get("target_lang_tokens", {}).values())
    return [j for j, token in enumerate(source) if token not in lang]


@torch.no_grad()
def alignment(model: Transformer, source: List[int], target: List[int]) -> Tuple[List[int], List[float]]:
    """The engine's alignment (src/translation.h, rmt_translation_hyp_alignment):
    for each token of `target` (ids without </s>, a translation of `source`,
    ids without </s>), the source position whose weight in the last decoder
    layer's encoder attention, averaged over the heads, is largest at the step
    that chose the token (decoder input </s> + target[:i]): the first of
    equals, among alignable() positions, -1 when there is none. Also returns
    per token the margin of that weight over the next best (a near-tie is
    where float rounding may choose differently)."""
    cfg = model.cfg
    if not target:
        return [], []
    src = pad_batch([source], cfg)
    prev = torch.tensor([[cfg.eos_id] + list(target[:-1])])
    weights = cross_attention(model, src, prev)[0]  # [T, S]
    candidates = alignable(cfg, source)
    positions, margins = [], []
    for row in weights.tolist():
        ranked = sorted(candidates, key=lambda j: (-row[j], j))
        positions.append(ranked[0] if ranked else -1)
        margins.append(row[ranked[0]] - row[ranked[1]] if len(ranked) > 1 else float("inf"))
    return positions, margins

