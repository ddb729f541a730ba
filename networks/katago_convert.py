"""Convert a KataGo model file into an ONNX file with Dosaku's model contract.

Uses only numpy and the `onnx` package (no torch), so `run_engine.py --model X.bin.gz` can convert
at run time; networks/cache.py does that once per file into the user's cache.

Contract (architecture.md): inputs float32 `spatial` [N, C, H, W] and `global` [N, G] with N, H, W
dynamic; outputs, all raw and from the side to move's view: `policy` [N, H*W+1] (policy channel 0,
pass last), `value` [N, 3] (win, loss, no-result logits), `score` [N, S] (the net's score-value
outputs in file order, names in metadata `score_outputs`), `ownership` [N, H, W] (pre-tanh).
Nets with an optimistic policy channel (v12+) also output `policy_optimistic` [N, H*W+1].
Off-board points (mask plane 0) get policy logit -5000 and ownership 0, as KataGo's training does.

The graph follows katago-network.md §2: norm layers folded into per-channel Mul/Add, activation,
then multiplication by the on-board mask; KataGPool [mean, mean*(sqrtA-14)/10, masked max].
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from engine.features import FEATURE_SET
from networks import katago_bin as kb

OPSET = 17
IR_VERSION = 8  # onnxruntime 1.31 refuses IR > 13; opset 17 needs IR 8
FEATURE_SETS = {7: FEATURE_SET}  # KataGo input version -> our feature-set name
SCORE_OUTPUTS_V8 = ("scoremean", "scorestdev", "lead", "vartime")
SCORE_OUTPUTS_V9 = SCORE_OUTPUTS_V8 + ("shortterm_winloss_error", "shortterm_score_error")
OFF_BOARD_POLICY = 5000.0


class _Graph:
    """Accumulates ONNX nodes and initializers with unique names."""

    def __init__(self):
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint.replace('/', '_')}_{self.count}"

    def const(self, arr, hint: str = "c") -> str:
        arr = np.asarray(arr)
        n = self.name(hint)
        self.inits.append(numpy_helper.from_array(arr, n))
        return n

    def op(self, op_type: str, inputs, hint: str = "", outputs=None, **attrs) -> str:
        out = outputs or [self.name(hint or op_type)]
        self.nodes.append(helper.make_node(op_type, list(inputs), out, **attrs))
        return out[0]


class _Builder:
    """Emits the forward pass of one parsed model into a _Graph."""

    def __init__(self, g: _Graph):
        self.g = g

    def setup_mask(self, spatial: str) -> None:
        g = self.g
        self.mask = g.op("Slice", [spatial, g.const(np.array([0], np.int64)),
                                   g.const(np.array([1], np.int64)),
                                   g.const(np.array([1], np.int64))], "mask")  # [N,1,H,W]
        self.mask_minus_one = g.op("Sub", [self.mask, g.const(np.float32(1.0))], "mask_m1")
        self.axes_hw = g.const(np.array([2, 3], np.int64), "axes_hw")
        area = g.op("ReduceSum", [self.mask, self.axes_hw], "area", keepdims=0)  # [N,1]
        self.inv_area = g.op("Reciprocal", [area], "inv_area")
        sqrt_minus_14 = g.op("Sub", [g.op("Sqrt", [area]), g.const(np.float32(14.0))], "sqa14")
        self.size_term = g.op("Mul", [sqrt_minus_14, g.const(np.float32(0.1))], "size_term")
        sq = g.op("Mul", [sqrt_minus_14, sqrt_minus_14])
        self.size_term2 = g.op("Sub", [g.op("Mul", [sq, g.const(np.float32(0.01))]),
                                       g.const(np.float32(0.1))], "size_term2")

    def conv(self, x: str, c: kb.Conv) -> str:
        ky, kx = c.w.shape[:2]
        w = np.ascontiguousarray(c.w.transpose(3, 2, 0, 1))  # HWIO -> OIHW
        return self.g.op("Conv", [x, self.g.const(w, c.name)], c.name,
                         kernel_shape=[ky, kx], pads=[ky // 2, kx // 2, ky // 2, kx // 2])

    def act(self, x: str, a: kb.Act) -> str:
        g = self.g
        if a.kind == "ACTIVATION_RELU":
            return g.op("Relu", [x], a.name)
        if a.kind == "ACTIVATION_MISH":
            return g.op("Mul", [x, g.op("Tanh", [g.op("Softplus", [x])])], a.name)
        if a.kind == "ACTIVATION_SILU":
            return g.op("Mul", [x, g.op("Sigmoid", [x])], a.name)
        return x

    def norm_act(self, x: str, n: kb.Norm, a: kb.Act) -> str:
        """NA(x) = act(x*scale + bias) * mask (katago-network.md §2.2)."""
        scale, bias = n.merged()
        shape = (1, -1, 1, 1)
        if not np.all(scale == 1.0):
            x = self.g.op("Mul", [x, self.g.const(scale.reshape(shape), n.name + "_s")])
        if not np.all(bias == 0.0):
            x = self.g.op("Add", [x, self.g.const(bias.reshape(shape), n.name + "_b")])
        return self.g.op("Mul", [self.act(x, a), self.mask], n.name + "_masked")

    def matmul(self, x: str, m: kb.MatMul) -> str:
        return self.g.op("MatMul", [x, self.g.const(m.w, m.name)], m.name)

    def add_channel_bias(self, x: str, v: str) -> str:
        """x [N,C,H,W] + v [N,C] broadcast over the board."""
        v4 = self.g.op("Unsqueeze", [v, self.g.const(np.array([2, 3], np.int64))])
        return self.g.op("Add", [x, v4])

    def pool_means(self, x: str) -> str:
        total = self.g.op("ReduceSum", [x, self.axes_hw], keepdims=0)
        return self.g.op("Mul", [total, self.inv_area], "pool_mean")

    def gpool(self, x: str) -> str:
        """[mean, mean*(sqrtA-14)/10, max over board points] per channel -> [N, 3C]."""
        g = self.g
        mean = self.pool_means(x)
        scaled = g.op("Mul", [mean, self.size_term])
        shifted = g.op("Add", [x, self.mask_minus_one])
        mx = g.op("ReduceMax", [shifted], "pool_max", axes=[2, 3], keepdims=0)
        return g.op("Concat", [mean, scaled, mx], "gpool", axis=1)

    def value_pool(self, x: str) -> str:
        g = self.g
        mean = self.pool_means(x)
        return g.op("Concat", [mean, g.op("Mul", [mean, self.size_term]),
                               g.op("Mul", [mean, self.size_term2])], "vpool", axis=1)

    def block(self, t: str, b) -> str:
        if isinstance(b, kb.OrdinaryBlock):
            a = self.norm_act(t, b.pre_norm, b.pre_act)
            r = self.conv(self.norm_act(self.conv(a, b.conv1), b.mid_norm, b.mid_act), b.conv2)
        elif isinstance(b, kb.GPoolBlock):
            a = self.norm_act(t, b.pre_norm, b.pre_act)
            r = self.conv(a, b.conv_regular)
            gp = self.gpool(self.norm_act(self.conv(a, b.conv_gpool), b.gpool_norm, b.gpool_act))
            r = self.add_channel_bias(r, self.matmul(gp, b.gpool_to_bias))
            r = self.conv(self.norm_act(r, b.mid_norm, b.mid_act), b.conv_final)
        else:
            u = self.conv(self.norm_act(t, b.pre_norm, b.pre_act), b.pre_conv)
            for inner in b.blocks:
                u = self.block(u, inner)
            r = self.conv(self.norm_act(u, b.post_norm, b.post_act), b.post_conv)
        return self.g.op("Add", [t, r], b.name + "_out")

    def trunk(self, spatial: str, global_in: str, t: kb.Trunk) -> str:
        x = self.conv(spatial, t.initial_conv)
        x = self.add_channel_bias(x, self.matmul(global_in, t.initial_matmul))
        for b in t.blocks:
            x = self.block(x, b)
        return self.norm_act(x, t.tip_norm, t.tip_act)

    def policy(self, trunk: str, h: kb.PolicyHead) -> str:
        """Returns policy logits [N, P, H*W+1] with pass last."""
        g = self.g
        p = self.conv(trunk, h.p1_conv)
        gp = self.gpool(self.norm_act(self.conv(trunk, h.g1_conv), h.g1_norm, h.g1_act))
        p = self.add_channel_bias(p, self.matmul(gp, h.gpool_to_bias))
        p = self.conv(self.norm_act(p, h.p1_norm, h.p1_act), h.p2_conv)  # [N,P,H,W]
        off_board = g.op("Mul", [self.mask_minus_one, g.const(np.float32(OFF_BOARD_POLICY))])
        p = g.op("Add", [p, off_board])
        flat = g.op("Reshape", [p, g.const(np.array([0, h.channels, -1], np.int64))])
        if h.pass_mul2 is None:
            pass_logit = self.matmul(gp, h.pass_mul)
        else:
            hidden = g.op("Add", [self.matmul(gp, h.pass_mul), g.const(h.pass_bias.b)])
            pass_logit = self.matmul(self.act(hidden, h.pass_act), h.pass_mul2)
        pass3 = g.op("Unsqueeze", [pass_logit, g.const(np.array([2], np.int64))])
        return g.op("Concat", [flat, pass3], "policy_all", axis=2)

    def value(self, trunk: str, h: kb.ValueHead):
        g = self.g
        v1 = self.norm_act(self.conv(trunk, h.v1_conv), h.v1_norm, h.v1_act)
        v2 = g.op("Add", [self.matmul(self.value_pool(v1), h.v2_mul), g.const(h.v2_bias.b)])
        v2 = self.act(v2, h.v2_act)
        value = g.op("Add", [self.matmul(v2, h.v3_mul), g.const(h.v3_bias.b)])
        score = g.op("Add", [self.matmul(v2, h.sv3_mul), g.const(h.sv3_bias.b)])
        own = g.op("Mul", [self.conv(v1, h.own_conv), self.mask])
        return value, score, own


def input_version(model_version: int) -> int:
    return 7 if 8 <= model_version <= 17 else -1


def build_onnx(model: kb.KataModel) -> onnx.ModelProto:
    """The ONNX graph of a parsed KataGo model, with metadata."""
    g = _Graph()
    b = _Builder(g)
    b.setup_mask("spatial")
    trunk = b.trunk("spatial", "global", model.trunk)
    policy_all = b.policy(trunk, model.policy)
    g.op("Gather", [policy_all, g.const(np.array(0, np.int64))], outputs=["policy"], axis=1)
    value, score, own = b.value(trunk, model.value)
    g.op("Identity", [value], outputs=["value"])
    g.op("Identity", [score], outputs=["score"])
    g.op("Squeeze", [own, g.const(np.array([1], np.int64))], outputs=["ownership"])
    outputs = [
        helper.make_tensor_value_info("policy", TensorProto.FLOAT, ["N", "HW1"]),
        helper.make_tensor_value_info("value", TensorProto.FLOAT, ["N", 3]),
        helper.make_tensor_value_info("score", TensorProto.FLOAT,
                                      ["N", model.value.sv3_mul.w.shape[1]]),
        helper.make_tensor_value_info("ownership", TensorProto.FLOAT, ["N", "H", "W"]),
    ]
    if model.policy.channels >= 2:
        g.op("Gather", [policy_all, g.const(np.array(1, np.int64))],
             outputs=["policy_optimistic"], axis=1)
        outputs.append(helper.make_tensor_value_info("policy_optimistic", TensorProto.FLOAT,
                                                     ["N", "HW1"]))
    inputs = [
        helper.make_tensor_value_info("spatial", TensorProto.FLOAT,
                                      ["N", model.num_spatial, "H", "W"]),
        helper.make_tensor_value_info("global", TensorProto.FLOAT, ["N", model.num_global]),
    ]
    graph = helper.make_graph(g.nodes, model.name, inputs, outputs, g.inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="dosaku")
    proto.ir_version = IR_VERSION
    helper.set_model_props(proto, metadata(model))
    onnx.checker.check_model(proto)
    return proto


def metadata(model: kb.KataModel) -> dict:
    n_score = model.value.sv3_mul.w.shape[1]
    score_names = SCORE_OUTPUTS_V9 if n_score == 6 else SCORE_OUTPUTS_V8
    feature_set = FEATURE_SETS.get(input_version(model.version))
    if feature_set is None:
        raise kb.ModelFormatError(f"model version {model.version}: no known input feature set")
    props = {
        "feature_set": feature_set,
        "producer": "dosaku",
        "source": f"{model.name} sha256={model.sha256}",
        "source_name": model.name,
        "source_sha256": model.sha256,
        "model_version": str(model.version),
        "num_spatial": str(model.num_spatial),
        "num_global": str(model.num_global),
        "policy_channels": str(model.policy.channels),
        "score_outputs": ",".join(score_names[:n_score]),
        "multipliers": json.dumps(dict(zip(kb.MULTIPLIER_NAMES, model.multipliers))),
        "prefer_pass_alive_under_suicide": str(int(model.prefer_pass_alive_under_suicide)),
        "off_board_policy_logit": str(-OFF_BOARD_POLICY),
    }
    return props


def convert(in_path: str | Path, out_path: str | Path) -> Path:
    """Convert a KataGo model file to ONNX; writes atomically and returns the output path."""
    return save(build_onnx(kb.load(in_path)), out_path)


def save(proto: onnx.ModelProto, out_path: str | Path) -> Path:
    """Write via a temporary file and rename, so a reader never sees a partial model."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out_path.parent, suffix=".onnx.tmp")
    os.close(fd)
    try:
        onnx.save(proto, tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a model file is not secret
        os.replace(tmp, out_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out_path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Convert a KataGo .bin/.bin.gz/.txt model to ONNX.")
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args(argv)
    model = kb.load(args.input)
    out = save(build_onnx(model), args.output)
    print(f"{model.name}: version {model.version}, {kb.param_count(model)} parameters -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
