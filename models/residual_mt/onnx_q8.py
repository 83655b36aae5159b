"""transformers.js' `q8` files, written with the onnx package alone, in the form
onnxruntime's dynamic quantizer writes them (onnxruntime/python/tools/quantization:
onnx_quantizer.py, operators/matmul.py and gather.py, quant_utils.py), as
transformers.js' scripts/quantize.py calls it for a model without Conv:
QuantizationMode.IntegerOps, weight_type QInt8, activations QUInt8, per tensor,
no reduce_range, MatMulConstBOnly, EnableSubgraph.

- A MatMul whose B is a float initializer (of its graph or an enclosing one):
      DynamicQuantizeLinear(A) -> A_quantized (uint8), A_scale, A_zero_point
          (one a tensor, shared by every MatMul that reads A, in the graph
          where A is: the outer one for the merged decoder's inputs)
      MatMulInteger(A_quantized, B_quantized, A_zero_point, B_zero_point) -> int32
      Cast(float); Mul(A_scale, B_scale); Mul(cast, scales) -> the MatMul's output
  B int8, symmetric: scale = max|B| * 2 / 254, zero point 0, values
  round-half-even(B / scale) clipped to [-128, 127] (onnxruntime 1.20, the
  version transformers.js' scripts/requirements.txt pins). An initializer of the outer
  graph is quantized there, once, so the merged decoder's two branches share it.
- A Gather from a float initializer (the embeddings): the table in uint8
  (asymmetric over [min(B, 0), max(B, 0)]: scale = range / 255, zero point
  round(-min / scale)), Gather of the uint8 rows, DequantizeLinear after it.
- Every other node (attention's activation x activation MatMuls, LayerNorm,
  Softmax...) stays float.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def int8_symmetric(w):
    absmax = max(abs(float(w.min())), abs(float(w.max())), 0.0)
    scale = np.float32(absmax * 2 / 254) if absmax > 0 else np.float32(1.0)
    q = np.clip(np.round(w.astype(np.float32) / scale), -128, 127).astype(np.int8)
    return q, scale, np.int8(0)


def uint8_asymmetric(w):
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = np.float32((hi - lo) / 255) if hi > lo else np.float32(1.0)
    zero = np.uint8(np.round(0 - lo / float(scale))) if hi > lo else np.uint8(0)
    q = np.clip(np.round(w.astype(np.float32) / scale) + float(zero), 0, 255).astype(np.uint8)
    return q, scale, zero


class Scope:
    """One graph being rewritten: its float initializers, its own tensors, its
    new nodes, the enclosing scope, and the activations already quantized in it."""

    def __init__(self, graph, parent=None):
        self.graph, self.parent, self.nodes = graph, parent, []
        self.floats = {t.name: t for t in graph.initializer if t.data_type == TensorProto.FLOAT}
        self.tensors = {i.name for i in graph.input} | {o for n in graph.node for o in n.output}
        self.weights = {}    # initializer name -> (quantized, scale, zero point) names
        self.activations = {}  # tensor name -> (quantized, scale, zero point) names

    def owner(self, name):
        """The scope whose initializer `name` is, or None."""
        if name in self.floats:
            return self
        return self.parent.owner(name) if self.parent else None

    def weight(self, name, quantize):
        if name not in self.weights:
            q, scale, zero = quantize(numpy_helper.to_array(self.floats[name]))
            names = (f"{name}_quantized", f"{name}_scale", f"{name}_zero_point")
            self.graph.initializer.extend([numpy_helper.from_array(q, names[0]),
                                           numpy_helper.from_array(np.array(scale, np.float32), names[1]),
                                           numpy_helper.from_array(np.array(zero), names[2])])
            self.weights[name] = names
        return self.weights[name]

    def activation(self, name):
        """DynamicQuantizeLinear of a tensor, once, in the graph that has it: a
        branch's MatMul on an outer input (the encoder's states) quantizes it in
        the outer graph, before the If, at every step."""
        if name not in self.tensors and self.parent:
            return self.parent.activation(name)
        if name not in self.activations:
            self.activations[name] = (f"{name}_quantized", f"{name}_scale", f"{name}_zero_point")
            self.nodes.append(helper.make_node("DynamicQuantizeLinear", [name], list(self.activations[name]),
                                               f"{name}_QuantizeLinear"))
        return self.activations[name]


def matmul_nodes(scope, node):
    a, b, y = node.input[0], node.input[1], node.output[0]
    wq, ws, wz = scope.owner(b).weight(b, int8_symmetric)
    aq, as_, az = scope.activation(a)
    name = f"{node.name}_quant" if node.name else ""
    scales = f"{name}_scales_mul" if name else f"{as_}_{ws}_mul"
    scope.nodes.extend([
        helper.make_node("MatMulInteger", [aq, wq, az, wz], [f"{y}_output_quantized"], name),
        helper.make_node("Cast", [f"{y}_output_quantized"], [f"{y}_output_quantized_cast_output"],
                         f"{y}_output_quantized_cast", to=TensorProto.FLOAT),
        helper.make_node("Mul", [as_, ws], [f"{scales}:0"], scales),
        helper.make_node("Mul", [f"{y}_output_quantized_cast_output", f"{scales}:0"], [y],
                         f"{name}_output_scale_mul" if name else "")])


def gather_nodes(scope, node):
    table, y = node.input[0], node.output[0]
    wq, ws, wz = scope.owner(table).weight(table, uint8_asymmetric)
    g = onnx.NodeProto()
    g.CopyFrom(node)
    g.input[0], g.output[0] = wq, f"{y}_quantized"
    scope.nodes.extend([g, helper.make_node("DequantizeLinear", [f"{y}_quantized", ws, wz], [y], f"{y}_DequantizeLinear")])


def rewrite(graph, parent=None):
    """Quantizes graph in place (its If branches first, as their own scopes); the count of MatMuls."""
    scope, count = Scope(graph, parent), 0
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                count += rewrite(attr.g, scope)
        const_b = len(node.input) > 1 and scope.owner(node.input[1]) is not None
        if node.op_type == "MatMul" and const_b:
            matmul_nodes(scope, node)
            count += 1
        elif node.op_type == "Gather" and scope.owner(node.input[0]) is not None:
            gather_nodes(scope, node)
        else:
            scope.nodes.append(node)
    del graph.node[:]
    graph.node.extend(scope.nodes)
    return count


def used_names(graph, names):
    for node in graph.node:
        names.update(node.input)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                used_names(attr.g, names)
    names.update(o.name for o in graph.output)
    return names


def drop_unused(graph):
    """The float weights no node reads any more (the quantizer's clean_initializers)."""
    used = used_names(graph, set())

    def prune(g):
        keep = [t for t in g.initializer if t.name in used]
        del g.initializer[:]
        g.initializer.extend(keep)
        for node in g.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    prune(attr.g)
    prune(graph)


def quantize_file(src, dst):
    """Writes dst, the q8 copy of the ONNX file src; the count of MatMuls made integer."""
    model = onnx.load(src)
    count = rewrite(model.graph)
    drop_unused(model.graph)
    onnx.checker.check_model(model)
    onnx.save(model, dst)
    return count
