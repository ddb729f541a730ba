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
Transformer nets follow katago-transformer.md §4 and §6 with KataGo's C++ semantics: runs of
attention and SwiGLU blocks work on the board as a sequence [N, S, C] (s = y*W + x), RMSNorm is
built from primitives, 2-D RoPE angles are computed in the graph from the buffer's H and W,
off-board keys get a large finite negative logit, and residuals are multiplied by the mask.
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
OFF_BOARD_KEY = 1e9  # subtracted from off-board attention logits: exp underflows to exactly 0


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
        self.spatial = spatial
        self.seq = None  # what transformer blocks share, made when the first one needs it
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

    def stack(self, t: str, blocks) -> str:
        """The blocks applied in order to planes t [N,C,H,W]; each run of transformer blocks
        shares one sequence view [N,S,C] of them."""
        seq = None
        for b in blocks:
            if isinstance(b, kb.TRANSFORMER_BLOCKS):
                seq = self.transformer_block(seq or self.to_sequence(t), b)
            else:
                if seq is not None:
                    t, seq = self.to_planes(seq), None
                t = self.block(t, b)
        return t if seq is None else self.to_planes(seq)

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
            u = self.stack(u, b.blocks)
            r = self.conv(self.norm_act(u, b.post_norm, b.post_act), b.post_conv)
        return self.g.op("Add", [t, r], b.name + "_out")

    def trunk(self, spatial: str, global_in: str, t: kb.Trunk) -> str:
        x = self.conv(spatial, t.initial_conv)
        x = self.add_channel_bias(x, self.matmul(global_in, t.initial_matmul))
        x = self.stack(x, t.blocks)
        if isinstance(t.tip_norm, kb.RMSNorm):
            return self.rms_norm_act(x, t.tip_norm, t.tip_act)
        return self.norm_act(x, t.tip_norm, t.tip_act)

    def rms_norm_act(self, x: str, n: kb.RMSNorm, a: kb.Act) -> str:
        """Trunk-tip RMSNorm (§4.6): the trunk is not zero off-board, so the spatial mean of
        squares sums on-board points only, over C*A of them."""
        g = self.g
        sq = g.op("Mul", [x, x])
        if n.spatial:
            area = g.op("ReduceSum", [self.mask, g.const(np.array([1, 2, 3], np.int64))],
                        keepdims=1)
            total = g.op("ReduceSum", [g.op("Mul", [sq, self.mask]),
                                       g.const(np.array([1, 2, 3], np.int64))], keepdims=1)
            count = g.op("Mul", [area, g.const(np.float32(n.gamma.shape[0]))])
            mean_sq = g.op("Div", [total, count])
        else:
            mean_sq = g.op("ReduceMean", [sq], axes=[1], keepdims=1)
        y = g.op("Mul", [x, self.inverse_rms(mean_sq, n.eps)])
        y = g.op("Mul", [y, g.const(n.gamma.reshape(1, -1, 1, 1), n.name + "_gamma")])
        y = g.op("Add", [y, g.const(n.beta.reshape(1, -1, 1, 1), n.name + "_beta")])
        return g.op("Mul", [self.act(y, a), self.mask], n.name + "_masked")

    def inverse_rms(self, mean_sq: str, eps: float) -> str:
        """1/sqrt(mean_sq + eps), KataGo's factor (multiplied in, not divided by)."""
        g = self.g
        shifted = g.op("Add", [mean_sq, g.const(np.float32(eps))])
        return g.op("Reciprocal", [g.op("Sqrt", [shifted])])

    # ---------------------------------------------------------------- transformer blocks

    def sequence_setup(self) -> dict:
        """The mask as [N,S,1], the key bias [N,1,1,S], the [0,0,H,W] shape and the buffer
        coordinates x, y [S] (float) that RoPE needs."""
        g = self.g
        shape = g.op("Shape", [self.spatial])
        hw = g.op("Slice", [shape, g.const(np.array([2], np.int64)),
                            g.const(np.array([4], np.int64))], "hw")
        planes = g.op("Concat", [g.const(np.array([0, 0], np.int64)), hw], axis=0)
        mask_seq = g.op("Transpose", [self.flatten_board(self.mask)], "mask_seq", perm=[0, 2, 1])
        key_bias = g.op("Mul", [self.mask_minus_one, g.const(np.float32(OFF_BOARD_KEY))])
        key_bias = g.op("Reshape", [key_bias, g.const(np.array([0, 1, 1, -1], np.int64))],
                        "key_bias")
        x, y = (self.coordinate(shape, hw, axis) for axis in (3, 2))
        return {"mask": mask_seq, "key_bias": key_bias, "planes": planes, "x": x, "y": y}

    def coordinate(self, shape: str, hw: str, axis: int) -> str:
        """Column (axis 3) or row (axis 2) index of every position s = y*W + x, as float [S]."""
        g = self.g
        length = g.op("Gather", [shape, g.const(np.array(axis, np.int64))])
        values = g.op("Cast", [g.op("Range", [g.const(np.array(0, np.int64)), length,
                                              g.const(np.array(1, np.int64))])],
                      to=TensorProto.FLOAT)
        line_axis = 0 if axis == 3 else 1  # columns vary along a row, rows down a column
        line = g.op("Unsqueeze", [values, g.const(np.array([line_axis], np.int64))])
        grid = g.op("Expand", [line, hw])
        return g.op("Reshape", [grid, g.const(np.array([-1], np.int64))], f"coord{axis}")

    def flatten_board(self, x: str) -> str:
        return self.g.op("Reshape", [x, self.g.const(np.array([0, 0, -1], np.int64))])

    def to_sequence(self, x: str) -> str:
        if self.seq is None:
            self.seq = self.sequence_setup()
        return self.g.op("Transpose", [self.flatten_board(x)], "to_seq", perm=[0, 2, 1])

    def to_planes(self, x: str) -> str:
        t = self.g.op("Transpose", [x], perm=[0, 2, 1])
        return self.g.op("Reshape", [t, self.seq["planes"]], "to_planes")

    def transformer_block(self, t: str, b) -> str:
        """t [N,S,C] plus the block's residual, which counts on the board only."""
        r = self.attention(t, b) if isinstance(b, kb.AttentionBlock) else self.ffn(t, b)
        return self.g.op("Add", [t, self.g.op("Mul", [r, self.seq["mask"]])], b.name + "_out")

    def transformer_norm(self, x: str, n: kb.TransformerNorm) -> str:
        """Per-position RMSNorm over channels, zero off-board (§4.1)."""
        g = self.g
        mean_sq = g.op("ReduceMean", [g.op("Mul", [x, x])], axes=[-1], keepdims=1)
        y = g.op("Mul", [g.op("Mul", [x, self.inverse_rms(mean_sq, n.eps)]),
                         g.const(n.weight, n.name)])
        return g.op("Mul", [y, self.seq["mask"]], n.name + "_masked")

    def ffn(self, t: str, b: kb.FFNBlock) -> str:
        """SwiGLU: SiLU(n@linear1) * (n@gate), then linear2."""
        g = self.g
        x = self.transformer_norm(t, b.norm)
        a = self.matmul(x, b.linear1)
        hidden = g.op("Mul", [self.act(a, kb.Act(b.name, "ACTIVATION_SILU")),
                              self.matmul(x, b.gate)])
        return self.matmul(hidden, b.linear2)

    def split_heads(self, x: str, heads: int, dim: int) -> str:
        """[N,S,heads*dim] (head-major channels) -> [N,heads,S,dim]."""
        g = self.g
        x = g.op("Reshape", [x, g.const(np.array([0, 0, heads, dim], np.int64))])
        return g.op("Transpose", [x], perm=[0, 2, 1, 3])

    def attention(self, t: str, b: kb.AttentionBlock) -> str:
        """Self-attention over on-board keys (§4.2); query head h reads KV head h div rep."""
        g = self.g
        q, k, v = self.qkv(self.transformer_norm(t, b.norm), b)
        group = None
        if b.num_kv_heads != b.num_heads:
            group = g.const(np.arange(b.num_heads) // (b.num_heads // b.num_kv_heads), "kv_group")
        if b.rope is not None:
            q, k = self.apply_rope(q, k, b, group)
        if group is not None:
            k = g.op("Gather", [k, group], axis=1)
            v = g.op("Gather", [v, group], axis=1)
        scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
        scale = np.float32(1.0) / np.sqrt(np.float32(b.q_head_dim))  # qHeadDim, as KataGo
        scores = g.op("Mul", [scores, g.const(scale)])
        scores = g.op("Add", [scores, self.seq["key_bias"]])
        out = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])  # [N,heads,S,vd]
        out = g.op("Transpose", [out], perm=[0, 2, 1, 3])
        out = g.op("Reshape", [out, g.const(np.array([0, 0, -1], np.int64))])
        return self.matmul(out, b.out_proj)

    def qkv(self, x: str, b: kb.AttentionBlock) -> list[str]:
        """Q, K, V [N,heads,S,dim] from one MatMul. With RoPE, each head's Q and K channels
        come even ones first, then odd ones: the dot products do not change, and the pairs
        become two contiguous halves."""
        g = self.g
        wq, wk = b.q_proj.w, b.k_proj.w
        if b.rope is not None:
            wq, wk = deinterleave(wq, b.q_head_dim), deinterleave(wk, b.q_head_dim)
        sizes = [wq.shape[1], wk.shape[1], b.v_proj.w.shape[1]]
        w = g.const(np.concatenate([wq, wk, b.v_proj.w], axis=1), b.name + "_qkv")
        parts = [g.name(part) for part in "qkv"]
        g.op("Split", [g.op("MatMul", [x, w]), g.const(np.array(sizes, np.int64))],
             outputs=parts, axis=2)
        heads = (b.num_heads, b.num_kv_heads, b.num_kv_heads)
        dims = (b.q_head_dim, b.q_head_dim, b.v_head_dim)
        return [self.split_heads(name, n, d) for name, n, d in zip(parts, heads, dims)]

    def apply_rope(self, q: str, k: str, b: kb.AttentionBlock, group) -> tuple[str, str]:
        """Each pair (a, b) of q and k [.., dim] in halves [a.., b..] turned into
        (a*cos - b*sin, a*sin + b*cos) as x*[cos, cos] + [b, a]*[-sin, sin] (§4.3); with GQA
        (`group`: KV head of each query head) query heads take their KV head's angles."""
        g = self.g
        cos, sin = self.rope_tables(rope_frequencies(b))  # [kv or 1, S, dim]
        if isinstance(b.rope, kb.RopeFreqs) and group is not None:
            q_cos, q_sin = (g.op("Gather", [table, group], axis=0) for table in (cos, sin))
        else:
            q_cos, q_sin = cos, sin

        def rotate(x, c, s):
            first, second = g.name("first"), g.name("second")
            g.op("Split", [x], outputs=[first, second], axis=3)
            swapped = g.op("Concat", [second, first], axis=3)
            return g.op("Add", [g.op("Mul", [x, c]), g.op("Mul", [swapped, s])], "rope")
        return rotate(q, q_cos, q_sin), rotate(k, cos, sin)

    def rope_tables(self, freqs: np.ndarray) -> tuple[str, str]:
        """[cos, cos] and [-sin, sin] [heads, S, 2P] of the angles x*fx + y*fy [heads, S, P]."""
        g = self.g
        fx, fy = (g.const(np.ascontiguousarray(freqs[:, None, :, i])) for i in (0, 1))
        xs, ys = (g.op("Reshape", [self.seq[c], g.const(np.array([1, -1, 1], np.int64))])
                  for c in ("x", "y"))
        angle = g.op("Add", [g.op("Mul", [xs, fx]), g.op("Mul", [ys, fy])])
        cos, sin = g.op("Cos", [angle]), g.op("Sin", [angle])
        return (g.op("Concat", [cos, cos], "rope_cos", axis=2),
                g.op("Concat", [g.op("Neg", [sin]), sin], "rope_sin", axis=2))

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


def deinterleave(w: np.ndarray, head_dim: int) -> np.ndarray:
    """Projection columns reordered within each head: channels 0, 2, 4, .. then 1, 3, 5, .."""
    heads = w.shape[1] // head_dim
    order = np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)])
    return np.ascontiguousarray(w[:, (np.arange(heads)[:, None] * head_dim + order).ravel()])


def rope_frequencies(b: kb.AttentionBlock) -> np.ndarray:
    """Radians per column and per row [kv heads or 1, P, 2] (float32) of a block's RoPE. Fixed
    RoPE (one table for every head): pair p < P/2 turns with the row at theta^(-2p/P), the
    others with the column at theta^(-2(p-P/2)/P), as KataGo computes them (powf)."""
    if isinstance(b.rope, kb.RopeFreqs):
        return b.rope.freqs.astype(np.float32)
    pairs = b.q_head_dim // 2
    half = pairs // 2
    p = np.arange(pairs)
    j = np.where(p < half, p, p - half).astype(np.float32)
    freq = np.float32(1.0) / np.power(np.float32(b.rope.theta), np.float32(2.0) * j
                                      / np.float32(pairs))
    table = np.zeros((1, pairs, 2), np.float32)
    table[0, :, 1] = np.where(p < half, freq, 0.0)
    table[0, :, 0] = np.where(p < half, 0.0, freq)
    return table


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
