"""The int8 recipe of transformer nets (networks/quantize.py chooses it for graphs whose matrix
products networks/katago_convert.py named by role).

The products of the first feed-forward layer (linear1 and gate) and of the attention output
projection become onnxruntime's DynamicQuantizeMatMul: each call quantizes its input to uint8
over the tensor's own range; the weights are int8 with one scale per output column. Two steps
keep them close to the float net, both from statistics of the products' inputs over the
calibration positions:

- SmoothQuant (Xiao et al. 2022): each input channel is divided by
  s = max|x|^SMOOTHING / max|w|^(1 - SMOOTHING) and its weight row multiplied by s, an exact
  rewrite that moves the channels' outliers from the activations, quantized per tensor, to
  the weights, quantized per column; the division is folded into the constant that makes the
  input (the norm's weight, or V's projection) where there is one.
- GPTQ (Frantar et al. 2022): weights are rounded one input channel at a time, the rounding
  error spread over the channels not yet rounded through the inputs' second moments, so that
  x @ W moves least on the inputs the net sees.

Everything else stays float32: Q.K, softmax and P.V, the norms and the heads, and also the
Q/K/V projections, the second feed-forward layer and the nested blocks' 1x1 convolutions. On
b10c384h6nbttflrs's 48 reference positions the white win rate moves by 0.002 on average with
this recipe, against 0.003 between the float net's own symmetries (tests/test_quantize.py);
Q/K/V or the second layer alone, quantized the same way, moved it by 0.003 and 0.005, and the
1x1 convolutions alone, rounded plainly, by 0.004 and 0.014. That recipe is "ffn"; "all"
quantizes every product with weights in [-63, 63], which onnxruntime runs on its fast uint8 x int8
kernel without VNNI too, at about four times the win rate's symmetry noise (`--int8-products`).
These and onnxruntime's MatMulNBits are compared by bench/precision.py
(docs/performance.md#reduced-precision-on-an-avx2-only-cpu).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
from dosaku.engine.evaluators.onnx_options import DEFAULT_INT8_PRODUCTS, INT8_RECIPES
from dosaku.networks.katago_convert import ROLES


@dataclass(frozen=True)
class Recipe:
    """Which of a transformer's matrix products (katago_convert.ROLES) an int8 copy quantizes,
    and to weights in [-levels, levels]."""
    name: str  # part of the cache name: change it with the recipe
    roles: tuple[str, ...]
    levels: int


RECIPES = {  # --int8-products NAME -> its recipe
    "ffn": Recipe(INT8_RECIPES["ffn"], ("ffn_up", "ffn_gate", "attention_out"), 127),
    "all": Recipe(INT8_RECIPES["all"], ROLES, 63),
}
SMOOTHING = 0.7  # SmoothQuant's alpha: 0.5 and 0.9 left larger output errors
DAMPING = 0.01  # of the mean second moment, added to the diagonal (GPTQ's default)
STATISTICS_BATCH = 8  # positions per network call while collecting the inputs' statistics


def role(node: onnx.NodeProto) -> str:
    """The role katago_convert named a matrix product with ("" for other nodes)."""
    return node.name.partition(":")[0] if ":" in node.name else ""


def suits(graph: onnx.ModelProto) -> bool:
    """Whether the graph has the named products these recipes quantize."""
    return any(role(node) in ROLES for node in graph.graph.node)


def quantize_products(graph: onnx.ModelProto, feeds: list[dict[str, np.ndarray]],
                      roles: tuple[str, ...] = RECIPES[DEFAULT_INT8_PRODUCTS].roles,
                      levels: int = RECIPES[DEFAULT_INT8_PRODUCTS].levels) -> None:
    """Quantize the graph's products of `roles` in place to weights in [-levels, levels];
    `feeds` are calibration inputs (dicts of spatial [1,C,H,W] and global [1,G]). A Recipe
    gives both; bench/precision.py's comparisons give others."""
    inits = {i.name: i for i in graph.graph.initializer}
    targets = [n for n in graph.graph.node if role(n) in roles and n.op_type == "MatMul"
               and n.input[1] in inits]
    by_input: dict[str, list[onnx.NodeProto]] = {}
    for node in targets:
        by_input.setdefault(node.input[0], []).append(node)
    widths = {t: numpy_helper.to_array(inits[nodes[0].input[1]]).shape[0]
              for t, nodes in by_input.items()}
    stats = input_statistics(graph, widths, feeds)
    factors = {}
    for tensor, nodes in by_input.items():
        absmax, moments = stats[tensor]
        weights = [numpy_helper.to_array(inits[n.input[1]]) for n in nodes]
        s = factors[tensor] = smoothing(absmax, weights)
        # one GPTQ pass for all products of an input: its columns are rounded independently
        q, scale = gptq(np.concatenate(weights, axis=1) * s[:, None], moments / np.outer(s, s),
                        levels)
        ends = np.cumsum([w.shape[1] for w in weights])[:-1]
        for node, q_part, scale_part in zip(nodes, np.split(q, ends, axis=1),
                                            np.split(scale, ends)):
            replace_product(graph, node, np.ascontiguousarray(q_part), scale_part)
    for tensor, s in factors.items():  # last: a Mul inserted re-creates the node list
        divide_channels(graph, tensor, s)
    drop_unused_initializers(graph)


def input_statistics(graph: onnx.ModelProto, tensors: dict[str, int],
                     feeds) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per tensor [.., K] (`tensors`: name -> K), over all rows of all feeds: the channels'
    max |x| [K] and the second moments mean(x x^T) [K, K] (float64), both computed by
    onnxruntime in the float graph, made to output them; positions are batched by size."""
    probe = onnx.ModelProto()
    probe.CopyFrom(graph)
    del probe.graph.output[:]
    for t, width in tensors.items():
        add_statistics(probe, t, width)
    model = OnnxModel(probe.SerializeToString(), threads=2)
    absmax = {t: 0.0 for t in tensors}
    sums = {t: 0.0 for t in tensors}
    rows = 0
    by_size: dict[tuple, list] = {}
    for feed in feeds:
        by_size.setdefault(feed["spatial"].shape, []).append(feed)
    for group in by_size.values():
        for start in range(0, len(group), STATISTICS_BATCH):
            chunk = group[start:start + STATISTICS_BATCH]
            out = model.run(np.concatenate([f["spatial"] for f in chunk]),
                            np.concatenate([f["global"] for f in chunk]))
            for t in tensors:
                absmax[t] = np.maximum(absmax[t], out[t + "_absmax"].astype(np.float64))
                sums[t] = sums[t] + out[t + "_gram"].astype(np.float64)
            rows += int(out["rows"])
    return {t: (absmax[t], sums[t] / rows) for t in tensors}


def add_statistics(probe: onnx.ModelProto, tensor: str, width: int) -> None:
    """Outputs `tensor`_absmax [K] (max |x| per channel) and `tensor`_gram [K, K] (x^T x)
    over the rows of `tensor` [.., K], and `rows`, their number."""
    nodes, flat, shape = probe.graph.node, f"{tensor}_rows", f"{tensor}_row_shape"
    probe.graph.initializer.append(numpy_helper.from_array(np.array([-1, width], np.int64),
                                                           shape))
    nodes.extend([
        helper.make_node("Reshape", [tensor, shape], [flat]),
        helper.make_node("Abs", [flat], [f"{tensor}_abs"]),
        helper.make_node("ReduceMax", [f"{tensor}_abs"], [f"{tensor}_absmax"], axes=[0],
                         keepdims=0),
        helper.make_node("Transpose", [flat], [f"{tensor}_columns"], perm=[1, 0]),
        helper.make_node("MatMul", [f"{tensor}_columns", flat], [f"{tensor}_gram"])])
    outputs = [f"{tensor}_absmax", f"{tensor}_gram"]
    if not any(o.name == "rows" for o in probe.graph.output):
        nodes.extend([helper.make_node("Shape", [flat], ["row_count"], start=0, end=1),
                      helper.make_node("Squeeze", ["row_count"], ["rows"])])
        outputs.append("rows")
    probe.graph.output.extend(
        helper.make_tensor_value_info(o, TensorProto.INT64 if o == "rows" else TensorProto.FLOAT,
                                      None) for o in outputs)


def smoothing(absmax: np.ndarray, weights: list[np.ndarray]) -> np.ndarray:
    """SmoothQuant's factor per input channel; 1 for a channel the calibration never saw
    nonzero or whose weights are all zero."""
    w_max = np.max([np.abs(w).max(axis=1) for w in weights], axis=0)
    live = (absmax > 0) & (w_max > 0)
    s = np.ones_like(absmax)
    s[live] = absmax[live] ** SMOOTHING / w_max[live] ** (1 - SMOOTHING)
    return s


def gptq(w: np.ndarray, moments: np.ndarray,
         levels: int = 127) -> tuple[np.ndarray, np.ndarray]:
    """(int8 weights [K, N], float32 scale per column [N]) for x @ w, scale max|column|/levels:
    input channels rounded in order, each one's rounding error compensated on the channels
    after it, through the inverse second moments of the channels not yet rounded (updated by
    one Schur step per channel)."""
    w = w.astype(np.float64).copy()
    scale = np.abs(w).max(axis=0) / levels
    scale[scale == 0] = 1.0
    h = moments.copy()
    dead = np.diag(h) == 0
    h[dead, dead] = 1.0
    h += DAMPING * np.mean(np.diag(h)) * np.eye(len(h))
    inverse = spd_inverse(h)
    q = np.empty_like(w)
    for i in range(len(w)):
        q[i] = np.clip(np.round(w[i] / scale), -levels, levels)
        column = inverse[i + 1:, i] / inverse[i, i]
        w[i + 1:] -= np.outer(column, w[i] - q[i] * scale)
        inverse[i + 1:, i + 1:] -= np.outer(column, inverse[i, i + 1:])
    return q.astype(np.int8), scale.astype(np.float32)


def spd_inverse(h: np.ndarray) -> np.ndarray:
    """Inverse of a symmetric positive definite matrix by the sweep operator: elementwise
    numpy only, where LAPACK's threaded inverse ran 50 times slower on a busy 2-core machine."""
    a = h.copy()
    for k in range(len(a)):
        row = a[k] / a[k, k]
        pivot = a[k, k]
        a -= np.outer(a[k], row)
        a[k] = a[:, k] = row
        a[k, k] = -1.0 / pivot
    return -a


def consumers(graph: onnx.ModelProto, tensor: str) -> list[onnx.NodeProto]:
    return [n for n in graph.graph.node if tensor in n.input]


def single_use_initializer(graph: onnx.ModelProto, name: str) -> onnx.TensorProto | None:
    found = [i for i in graph.graph.initializer if i.name == name]
    return found[0] if found and len(consumers(graph, name)) == 1 else None


def divide_channels(graph: onnx.ModelProto, tensor: str, s: np.ndarray) -> None:
    """Make `tensor` [.., K] (read by the products to quantize only) hold tensor / s: by
    scaling the per-channel constant of the node that makes it (a norm's weight, a constant
    Mul, the columns of a matrix product; through attention, V's channels), else by a Mul."""
    node = next(n for n in graph.graph.node if tensor in n.output)
    constant = None
    if node.op_type == "SkipSimplifiedLayerNormalization" and node.output[0] == tensor:
        constant = single_use_initializer(graph, node.input[2])
    elif node.op_type in ("Mul", "MatMul"):
        constant = single_use_initializer(graph, node.input[1])
    elif node.op_type == "MultiHeadAttention" and len(consumers(graph, node.input[2])) == 1:
        divide_channels(graph, node.input[2], s)  # its outputs are P-weighted sums of V's
        return
    value = None if constant is None else numpy_helper.to_array(constant)
    if value is not None and value.ndim in (1, 2) and value.shape[-1] == len(s):
        constant.CopyFrom(numpy_helper.from_array((value / s).astype(np.float32), constant.name))
        return
    insert_division(graph, tensor, s)


def insert_division(graph: onnx.ModelProto, tensor: str, s: np.ndarray) -> None:
    """A Mul by 1/s between `tensor` and its readers."""
    divided, factor = f"{tensor}_smoothed", f"{tensor}_inverse_smoothing"
    graph.graph.initializer.append(numpy_helper.from_array((1.0 / s).astype(np.float32),
                                                           factor))
    readers = consumers(graph, tensor)
    for reader in readers:
        reader.input[:] = [divided if i == tensor else i for i in reader.input]
    nodes = list(graph.graph.node)
    nodes.insert(nodes.index(readers[0]), helper.make_node("Mul", [tensor, factor], [divided]))
    del graph.graph.node[:]
    graph.graph.node.extend(nodes)


def replace_product(graph: onnx.ModelProto, node: onnx.NodeProto, q: np.ndarray,
                    scale: np.ndarray) -> None:
    """The MatMul `node` becomes DynamicQuantizeMatMul with weights q and column scales."""
    weights, scales = f"{node.input[1]}_int8", f"{node.input[1]}_scale"
    graph.graph.initializer.extend([numpy_helper.from_array(q, weights),
                                    numpy_helper.from_array(scale, scales)])
    node.CopyFrom(helper.make_node("DynamicQuantizeMatMul", [node.input[0], weights, scales],
                                   list(node.output), name=node.name, domain="com.microsoft"))


def drop_unused_initializers(graph: onnx.ModelProto) -> None:
    used = {i for n in graph.graph.node for i in n.input}
    kept = [i for i in graph.graph.initializer if i.name in used]
    del graph.graph.initializer[:]
    graph.graph.initializer.extend(kept)
