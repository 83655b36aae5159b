"""A Marian transformer (marian_torch.py) as transformers.js loads a Marian model
(transformers.js 4: src/models/session_config.js names encoder_model and
decoder_model_merged for an encoder-decoder; dtype q8 adds `_quantized`):

  config.json, generation_config.json      model_type marian; the decoder starts
                                           from <pad> (the appended zero row), which
                                           generation never emits (bad_words_ids)
  tokenizer.json, tokenizer_config.json    the SentencePiece pieces as a Unigram
                                           (the benchmark feeds ids, not text)
  onnx/encoder_model.onnx                  input_ids, attention_mask -> last_hidden_state
  onnx/decoder_model_merged.onnx           optimum's merged layout: one If on
      use_cache_branch; its else branch decodes without a cache and computes each
      layer's encoder keys/values, its then branch decodes one step from
      past_key_values.* (and gives empty placeholders for the encoder's, which
      transformers.js replaces by the past ones); the weights are the outer graph's,
      shared by both branches
"""
import hashlib
import json
import os
import tempfile

import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def kv_names(prefix, layers, encoder=True):
    names = []
    for i in range(layers):
        names += [f"{prefix}.{i}.decoder.key", f"{prefix}.{i}.decoder.value"]
        if encoder:
            names += [f"{prefix}.{i}.encoder.key", f"{prefix}.{i}.encoder.value"]
    return names


class Encoder(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m.encode(input_ids, attention_mask)


class FirstStep(torch.nn.Module):
    """No cache: logits and every layer's decoder and encoder keys/values."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, encoder_attention_mask, encoder_hidden_states):
        memory = self.m.memory(encoder_hidden_states)
        logits, presents = self.m.decode(input_ids, encoder_attention_mask, None, memory)
        return (logits, *[t for kv, mem in zip(presents, memory) for t in (*kv, *mem)])


class NextStep(torch.nn.Module):
    """With the cache (a decoder key, value, encoder key, value per layer)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, encoder_attention_mask, *cache):
        n = len(self.m.decoder)
        past = [(cache[4 * i], cache[4 * i + 1]) for i in range(n)]
        memory = [(cache[4 * i + 2], cache[4 * i + 3]) for i in range(n)]
        logits, presents = self.m.decode(input_ids, encoder_attention_mask, past, memory)
        return (logits, *[t for kv in presents for t in kv])


def export(module, args, path, inputs, outputs, axes):
    torch.onnx.export(module, args, path, opset_version=OPSET, do_constant_folding=True,
                      input_names=inputs, output_names=outputs, dynamic_axes=axes)
    return onnx.load(path)


def export_graphs(m, tmp):
    """The encoder and the two decoders as ONNX models (from example inputs of batch 2)."""
    layers, heads, dh = len(m.decoder), m.heads, m.d // m.heads
    ids, mask = torch.randint(4, 100, (2, 5)), torch.ones(2, 5, dtype=torch.long)
    batch_src = {0: "batch_size", 1: "encoder_sequence_length"}
    encoder = export(Encoder(m), (ids, mask), os.path.join(tmp, "e.onnx"), ["input_ids", "attention_mask"],
                     ["last_hidden_state"], {"input_ids": batch_src, "attention_mask": batch_src, "last_hidden_state": batch_src})
    with torch.no_grad():
        hidden = m.encode(ids, mask)
    tgt = torch.randint(4, 100, (2, 1))
    presents = kv_names("present", layers)
    axes = {"input_ids": {0: "batch_size", 1: "decoder_sequence_length"}, "encoder_attention_mask": batch_src,
            "encoder_hidden_states": batch_src, "logits": {0: "batch_size", 1: "decoder_sequence_length"}}
    axes.update({n: {0: "batch_size", 2: "past_sequence_length" if ".decoder." in n else "encoder_sequence_length"}
                 for n in presents})
    first = export(FirstStep(m), (tgt, mask, hidden), os.path.join(tmp, "f.onnx"),
                   ["input_ids", "encoder_attention_mask", "encoder_hidden_states"], ["logits", *presents], dict(axes))
    cache = [torch.randn(2, heads, 3 if j < 2 else 5, dh) for _ in range(layers) for j in range(4)]
    past = kv_names("past_key_values", layers)
    axes = {k: v for k, v in axes.items() if k != "encoder_hidden_states" and not k.startswith("present")}
    axes.update({n: {0: "batch_size", 2: "past_sequence_length" if ".decoder." in n else "encoder_sequence_length"}
                 for n in past})
    axes.update({n: {0: "batch_size", 2: "total_sequence_length"} for n in kv_names("present", layers, False)})
    nxt = export(NextStep(m), (tgt, mask, *cache), os.path.join(tmp, "n.onnx"), ["input_ids", "encoder_attention_mask", *past],
                 ["logits", *kv_names("present", layers, False)], axes)
    return encoder, first, nxt


class Weights:
    """The merged graph's initializers, one per distinct content (both exports hold
    the same weights under their own names)."""

    def __init__(self):
        self.by_content, self.tensors = {}, []

    def name_of(self, t):
        key = (t.data_type, tuple(t.dims), hashlib.sha256(numpy_helper.to_array(t).tobytes()).hexdigest())
        if key not in self.by_content:
            copy = TensorProto()
            copy.CopyFrom(t)
            copy.name = f"w{len(self.tensors)}:{t.name}"
            self.by_content[key] = copy.name
            self.tensors.append(copy)
        return self.by_content[key]


def branch(model, tag, weights, outer, wanted, placeholder_shape):
    """One If branch from an exported decoder: its weights moved to the outer graph,
    its other names prefixed by tag; outputs in the order wanted (a placeholder
    where the decoder has none)."""
    g = model.graph
    renamed = {t.name: weights.name_of(t) for t in g.initializer}

    def name(x):
        return x if x == "" or x in outer else renamed.get(x, f"{tag}/{x}")

    nodes = []
    for i, n in enumerate(g.node):
        copy = onnx.NodeProto()
        copy.CopyFrom(n)
        copy.input[:] = [name(x) for x in n.input]
        copy.output[:] = [name(x) for x in n.output]
        copy.name = f"{tag}/{n.name or n.op_type + str(i)}"
        nodes.append(copy)
    have = {o.name for o in g.output}
    outputs = []
    for out in wanted:
        if out not in have:
            nodes.append(helper.make_node("Constant", [], [f"{tag}/{out}"], f"{tag}/{out}_placeholder",
                                          value=helper.make_tensor(f"{tag}/{out}_value", TensorProto.FLOAT,
                                                                   placeholder_shape, [])))
        outputs.append(helper.make_tensor_value_info(name(out) if out in have else f"{tag}/{out}", TensorProto.FLOAT, None))
    return helper.make_graph(nodes, tag, [], outputs)


def merged_decoder(first, nxt, layers, heads, dh, vocab):
    weights = Weights()
    inputs = {i.name: i for g in (first.graph, nxt.graph) for i in g.input}
    outer = set(inputs) | {"use_cache_branch"}
    wanted = ["logits", *kv_names("present", layers)]
    no_cache = branch(first, "no_cache", weights, outer, wanted, [0, heads, 0, dh])
    cached = branch(nxt, "cached", weights, outer, wanted, [0, heads, 0, dh])
    order = ["encoder_attention_mask", "input_ids", "encoder_hidden_states", *kv_names("past_key_values", layers)]
    graph_inputs = [inputs[n] for n in order] + [helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "decoder_sequence_length", vocab])]
    outputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch_size", heads, None, dh])
                for n in kv_names("present", layers)]
    node = helper.make_node("If", ["use_cache_branch"], wanted, "optimum::if", then_branch=cached, else_branch=no_cache)
    graph = helper.make_graph([node], "decoder_model_merged", graph_inputs, outputs, initializer=weights.tensors)
    model = helper.make_model(graph, opset_imports=list(first.opset_import))
    model.ir_version = first.ir_version
    onnx.checker.check_model(model)
    return model


def write_onnx(m, out):
    """onnx/encoder_model.onnx and onnx/decoder_model_merged.onnx of module m."""
    os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        encoder, first, nxt = export_graphs(m, tmp)
    onnx.save(encoder, os.path.join(out, "onnx", "encoder_model.onnx"))
    merged = merged_decoder(first, nxt, len(m.decoder), m.heads, m.d // m.heads, m.embed.weight.shape[0])
    onnx.save(merged, os.path.join(out, "onnx", "decoder_model_merged.onnx"))


def write_json(out, name, obj):
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)


def write_configs(out, m, pieces, eos, unk, ffn):
    """config.json, generation_config.json and the tokenizer files; pieces: the
    vocabulary's (piece, score) in id order; <pad> is appended after them."""
    pad = len(pieces)
    layers = len(m.decoder)
    write_json(out, "config.json", {
        "architectures": ["MarianMTModel"], "model_type": "marian", "activation_function": "swish",
        "d_model": m.d, "encoder_layers": len(m.encoder), "decoder_layers": layers, "num_hidden_layers": layers,
        "encoder_attention_heads": m.heads, "decoder_attention_heads": m.heads,
        "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn, "vocab_size": pad + 1, "decoder_vocab_size": pad + 1,
        "max_position_embeddings": m.positions.shape[0], "scale_embedding": True, "static_position_embeddings": True,
        "share_encoder_decoder_embeddings": True, "tie_word_embeddings": True, "is_encoder_decoder": True,
        "use_cache": True, "pad_token_id": pad, "decoder_start_token_id": pad, "eos_token_id": eos,
        "bos_token_id": eos})
    write_json(out, "generation_config.json", {
        "decoder_start_token_id": pad, "pad_token_id": pad, "eos_token_id": eos, "bad_words_ids": [[pad]],
        "max_length": m.positions.shape[0], "num_beams": 1})
    specials = [(eos, "</s>"), (unk, "<unk>"), (pad, "<pad>")]
    write_json(out, "tokenizer.json", {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, t in specials],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}},
                                                                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [], "special_tokens": {"</s>": {"id": "</s>", "ids": [eos], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": unk, "byte_fallback": False,
                  "vocab": [[p, s] for p, s in pieces] + [["<pad>", 0.0]]}})
    write_json(out, "tokenizer_config.json", {
        "tokenizer_class": "MarianTokenizer", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
        "model_max_length": m.positions.shape[0], "separate_vocabs": False})
