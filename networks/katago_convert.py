"""Convert a KataGo model file into an ONNX file with Dosaku's model contract.

Uses only numpy and the `onnx` package (no torch), so `run_engine.py --model X.bin.gz` can convert
at run time; networks/cache.py does that once per file into the user's cache.

Contract (docs/architecture.md#the-onnx-model-contract): inputs float32 `spatial` [N, C, H, W]
and `global` [N, G] with N, H, W dynamic; outputs, all raw and from the side to move's view:
`policy` [N, H*W+1] (policy channel 0, pass last), `value` [N, 3] (win, loss, no-result logits),
`score` [N, S] (the net's score-value outputs in file order, names in metadata `score_outputs`),
`ownership` [N, H, W] (pre-tanh).
Nets with an optimistic policy channel (v12+) also output `policy_optimistic` [N, H*W+1].
Off-board points (mask plane 0) get policy logit -5000 and ownership 0, as KataGo's training does.

The graph follows katago-network.md §2: norm layers folded into per-channel Mul/Add, activation,
then multiplication by the on-board mask; KataGPool [mean, mean*(sqrtA-14)/10, masked max].
Transformer nets follow katago-transformer.md §4 and §6 with KataGo's semantics on the board, in
onnxruntime's fused operators where it has them (domain com.microsoft, CPU provider): each run of
transformer blocks, and of nested blocks made of them, works on the board as one sequence
[N, S, C] (s = y*W + x; 1x1 convolutions become matrix products); RMSNorm and the residual before
it are one SkipSimplifiedLayerNormalization, an RMSNorm with no residual to add is written in the
pattern onnxruntime fuses into SimplifiedLayerNormalization; RoPE is RotaryEmbedding with cos/sin
caches built in the graph from the buffer's H and W; attention is MultiHeadAttention, off-board
keys getting a large finite negative logit through an extra query/key channel. Off-board rows of
a sequence are not zeroed (only attention mixes positions there, and it masks them), and the
planes are masked where they mix positions again. Matrix products of transformer blocks are
named "role:layer".

`full_board` graphs (what the engine plays, networks/cache.py) are for inputs the board fills,
as the engine sizes them: they never read the mask plane, so the masking, the masked pooling
and the attention key bias are left out (2-3% faster on 9x9, about 1% on 19x19).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dosaku.engine.evaluators.features import FEATURE_SET
from dosaku.networks import katago_bin as kb

OPSET = 17
IR_VERSION = 8  # onnxruntime 1.31 refuses IR > 13; opset 17 needs IR 8
FEATURE_SETS = {7: FEATURE_SET}  # KataGo input version -> our feature-set name
SCORE_OUTPUTS_V8 = ("scoremean", "scorestdev", "lead", "vartime")
SCORE_OUTPUTS_V9 = SCORE_OUTPUTS_V8 + ("shortterm_winloss_error", "shortterm_score_error")
OFF_BOARD_POLICY = 5000.0
OFF_BOARD_KEY = 1e9  # subtracted from off-board attention logits: exp underflows to exactly 0
MS_DOMAIN = "com.microsoft"  # onnxruntime's own fused ops (attention, RMSNorm with residual)
ROLES = ("attention_q", "attention_k", "attention_v", "attention_out", "ffn_up", "ffn_gate",
         "ffn_down")  # the matrix products of transformer blocks, named "role:layer"


def flush_subnormals(arr: np.ndarray) -> np.ndarray:
    """`arr` with its subnormal float32 numbers set to zero. KataGo's transformer nets hold many
    (4% of b10c384h6's weights, in its feed-forward layers), and every product with one takes a
    microcode assist on Intel CPUs: 10-25x slower evaluations. They are below 1.2e-38, so the
    outputs do not change at KataGo's reference precision."""
    if arr.dtype != np.float32:
        return arr
    return np.where(np.abs(arr) < np.finfo(np.float32).tiny, np.float32(0), arr)


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
        arr = flush_subnormals(np.asarray(arr))
        n = self.name(hint)
        self.inits.append(numpy_helper.from_array(arr, n))
        return n

    def op(self, op_type: str, inputs, hint: str = "", outputs=None, **attrs) -> str:
        out = outputs or [self.name(hint or op_type)]
        self.nodes.append(helper.make_node(op_type, list(inputs), out, **attrs))
        return out[0]


class _Builder:
    """Emits the forward pass of one parsed model into a _Graph. With `full_board` the graph
    takes every point of its input to be on the board (mask plane all ones): it never reads
    the mask, so nothing is multiplied by it, pooled over it or added to attention logits."""

    def __init__(self, g: _Graph, full_board: bool = False):
        self.g = g
        self.full_board = full_board

    def setup_mask(self, spatial: str) -> None:
        g = self.g
        self.spatial = spatial
        self.shape = None  # of the input planes, made when first needed (input_shape)
        self.seq = None  # what transformer blocks share, made when the first one needs it
        self.axes_hw = g.const(np.array([2, 3], np.int64), "axes_hw")
        if self.full_board:
            self.mask = self.mask_minus_one = None
            hw = g.op("Slice", [self.input_shape(), g.const(np.array([2], np.int64)),
                                g.const(np.array([4], np.int64))])
            area = g.op("Cast", [g.op("ReduceProd", [hw], keepdims=1)], "area",
                        to=TensorProto.FLOAT)  # [1], the same for every sample
        else:
            self.mask = g.op("Slice", [spatial, g.const(np.array([0], np.int64)),
                                       g.const(np.array([1], np.int64)),
                                       g.const(np.array([1], np.int64))], "mask")  # [N,1,H,W]
            self.mask_minus_one = g.op("Sub", [self.mask, g.const(np.float32(1.0))], "mask_m1")
            area = g.op("ReduceSum", [self.mask, self.axes_hw], "area", keepdims=0)  # [N,1]
        self.inv_area = g.op("Reciprocal", [area], "inv_area")
        sqrt_minus_14 = g.op("Sub", [g.op("Sqrt", [area]), g.const(np.float32(14.0))], "sqa14")
        self.size_term = g.op("Mul", [sqrt_minus_14, g.const(np.float32(0.1))], "size_term")
        sq = g.op("Mul", [sqrt_minus_14, sqrt_minus_14])
        self.size_term2 = g.op("Sub", [g.op("Mul", [sq, g.const(np.float32(0.01))]),
                                       g.const(np.float32(0.1))], "size_term2")

    def input_shape(self) -> str:
        """[N, C, H, W] of the input planes, one Shape node for the whole graph."""
        if self.shape is None:
            self.shape = self.g.op("Shape", [self.spatial], "shape")
        return self.shape

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
        return self.masked(self.act(x, a), n.name + "_masked")

    def masked(self, x: str, hint: str) -> str:
        """x [N,C,H,W] zeroed off the board (nothing to do on a full board)."""
        return x if self.mask is None else self.g.op("Mul", [x, self.mask], hint)

    def matmul(self, x: str, m: kb.MatMul, role: str = "") -> str:
        """x @ m; with a role (ROLES), the node is named "role:layer" for networks/quantize."""
        name = {"name": f"{role}:{m.name}"} if role else {}
        return self.g.op("MatMul", [x, self.g.const(m.w, m.name)], m.name, **name)

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
        if self.mask is not None:
            x = g.op("Add", [x, self.mask_minus_one])
        mx = g.op("ReduceMax", [x], "pool_max", axes=[2, 3], keepdims=0)
        return g.op("Concat", [mean, scaled, mx], "gpool", axis=1)

    def value_pool(self, x: str) -> str:
        g = self.g
        mean = self.pool_means(x)
        return g.op("Concat", [mean, g.op("Mul", [mean, self.size_term]),
                               g.op("Mul", [mean, self.size_term2])], "vpool", axis=1)

    def stack(self, t: str, blocks) -> str:
        """The blocks applied in order to planes t [N,C,H,W]; each run of blocks that
        `on_sequence` accepts works on one sequence view [N,S,C] of them."""
        for sequence, run in itertools.groupby(blocks, on_sequence):
            if sequence:
                t = self.to_planes(self.sequence_run(self.to_sequence(t), list(run)))
            else:
                for b in run:
                    t = self.block(t, b)
        return t

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
        self.rope_blocks = [b for b in attention_blocks(t.blocks) if b.rope is not None]
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
        if n.spatial and self.mask is None:
            mean_sq = g.op("ReduceMean", [sq], axes=[1, 2, 3], keepdims=1)
        elif n.spatial:
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
        return self.masked(self.act(y, a), n.name + "_masked")

    def inverse_rms(self, mean_sq: str, eps: float) -> str:
        """1/sqrt(mean_sq + eps), KataGo's factor (multiplied in, not divided by)."""
        g = self.g
        shifted = g.op("Add", [mean_sq, g.const(np.float32(eps))])
        return g.op("Reciprocal", [g.op("Sqrt", [shifted])])

    # ---------------------------------------------------------------- sequence layout

    def sequence_setup(self) -> dict:
        """What every sequence run shares, made once: the [0,0,H,W] shape back to planes, the
        logit bias of each key [N,S,1,1] (0 on the board, -OFF_BOARD_KEY off it) and the RoPE
        tables of the attention blocks."""
        g = self.g
        shape = self.input_shape()
        hw = g.op("Slice", [shape, g.const(np.array([2], np.int64)),
                            g.const(np.array([4], np.int64))], "hw")
        planes = g.op("Concat", [g.const(np.array([0, 0], np.int64)), hw], axis=0)
        key_bias = None if self.mask is None else g.op(
            "Reshape", [g.op("Mul", [self.mask_minus_one, g.const(np.float32(OFF_BOARD_KEY))]),
                        g.const(np.array([0, -1, 1, 1], np.int64))], "key_bias")
        return {"planes": planes, "key_bias": key_bias, "columns": {},
                "rope": self.rope_tables(shape),
                "first_position": g.const(np.array([0], np.int64), "first_position")}

    def line_coordinates(self, shape: str, axis: int) -> str:
        """0, 1, .. along the buffer's rows (axis 2) or columns (axis 3), as float [length, 1]."""
        g = self.g
        length = g.op("Gather", [shape, g.const(np.array(axis, np.int64))])
        values = g.op("Range", [g.const(np.array(0, np.int64)), length,
                                g.const(np.array(1, np.int64))])
        return g.op("Unsqueeze", [g.op("Cast", [values], to=TensorProto.FLOAT),
                                  g.const(np.array([1], np.int64))], f"line{axis}")

    def rope_tables(self, shape: str) -> dict:
        """Per attention block with RoPE (by id), the cos and sin caches of onnxruntime's
        RotaryEmbedding for its queries and for its keys, [S*heads, P] each, row s*heads + h
        (§4.3). The angle x*fx + y*fy of every block's KV heads is turned into cos and sin as
        cos(x*fx)cos(y*fy) - sin(x*fx)sin(y*fy) and sin(x*fx)cos(y*fy) + cos(x*fx)sin(y*fy):
        trigonometry on rows and columns only, not on every point."""
        if not self.rope_blocks:
            return {}
        g = self.g
        freqs = [rope_frequencies(b) for b in self.rope_blocks]  # [KV heads or 1, P, 2] each
        freq = np.concatenate([f.reshape(-1, 2) for f in freqs])
        x_angle, y_angle = (g.op("Mul", [self.line_coordinates(shape, axis),
                                         g.const(np.ascontiguousarray(freq[:, i]))])
                            for axis, i in ((3, 0), (2, 1)))
        cos_x, sin_x = g.op("Cos", [x_angle]), g.op("Sin", [x_angle])  # [W, U]
        one_row = g.const(np.array([1], np.int64))
        cos_y, sin_y = (g.op("Unsqueeze", [g.op(op, [y_angle]), one_row]) for op in ("Cos", "Sin"))
        cos = g.op("Sub", [g.op("Mul", [cos_y, cos_x]), g.op("Mul", [sin_y, sin_x])])
        sin = g.op("Add", [g.op("Mul", [sin_y, cos_x]), g.op("Mul", [cos_y, sin_x])])
        sizes = [f.shape[0] * f.shape[1] for f in freqs]
        flat = g.const(np.array([-1, sum(sizes)], np.int64))
        parts = [self.split(g.op("Reshape", [t, flat]), sizes, axis=1) for t in (cos, sin)]
        tables = {}
        for b, f, cos_b, sin_b in zip(self.rope_blocks, freqs, *parts):
            tables[id(b)] = [self.rope_cache(t, f.shape, heads) for heads in
                             (b.num_heads, b.num_kv_heads) for t in (cos_b, sin_b)]
        return tables

    def rope_cache(self, table: str, shape: tuple, heads: int) -> str:
        """[S, rows*P] (one row of angles per KV head, or one for all) -> [S*heads, P], head h
        reading row h div (heads/rows)."""
        g = self.g
        rows, pairs = shape[:2]
        t = g.op("Reshape", [table, g.const(np.array([-1, rows, 1, pairs], np.int64))])
        if heads != rows:
            t = g.op("Expand", [t, g.const(np.array([1, rows, heads // rows, 1], np.int64))])
        return g.op("Reshape", [t, g.const(np.array([-1, pairs], np.int64))])

    def flatten_board(self, x: str) -> str:
        return self.g.op("Reshape", [x, self.g.const(np.array([0, 0, -1], np.int64))])

    def to_sequence(self, x: str) -> str:
        if self.seq is None:
            self.seq = self.sequence_setup()
        return self.g.op("Transpose", [self.flatten_board(x)], "to_seq", perm=[0, 2, 1])

    def to_planes(self, x: str) -> str:
        t = self.g.op("Transpose", [x], perm=[0, 2, 1])
        return self.g.op("Reshape", [t, self.seq["planes"]], "to_planes")

    def split(self, x: str, sizes, axis: int = -1) -> list[str]:
        outs = [self.g.name("part") for _ in sizes]
        self.g.op("Split", [x, self.g.const(np.array(sizes, np.int64))], outputs=outs, axis=axis)
        return outs

    def sequence_run(self, t: str, blocks) -> str:
        """Blocks applied to a sequence t [N,S,C]. Off-board rows are left as they come, not
        zeroed as KataGo does: every step here works position by position but attention,
        which masks off-board keys, so they never reach a board point, and the planes are
        masked before anything mixes positions again. A transformer block's residual is added
        by the next block's norm, in one fused op."""
        pending = None
        for b in blocks:
            if isinstance(b, kb.NestedBlock):
                t, pending = self.residual(t, pending), None
                t = self.nested_on_sequence(t, b)
            else:
                n, t = self.transformer_norm(t, pending, b.norm)
                pending = (self.attention(n, b) if isinstance(b, kb.AttentionBlock)
                           else self.ffn(n, b))
        return self.residual(t, pending)

    def residual(self, t: str, r: str | None) -> str:
        return t if r is None else self.g.op("Add", [t, r], "residual")

    def nested_on_sequence(self, t: str, b: kb.NestedBlock) -> str:
        """A nested bottleneck block (1x1 convolutions as matrix products) on t [N,S,C]."""
        u = self.pointwise(self.affine_act(t, b.pre_norm, b.pre_act), b.pre_conv)
        u = self.sequence_run(u, b.blocks)
        r = self.pointwise(self.affine_act(u, b.post_norm, b.post_act), b.post_conv)
        return self.g.op("Add", [t, r], b.name + "_out")

    def pointwise(self, x: str, c: kb.Conv) -> str:
        return self.g.op("MatMul", [x, self.g.const(np.ascontiguousarray(c.w[0, 0]), c.name)],
                         c.name)

    def affine_act(self, x: str, n: kb.Norm, a: kb.Act) -> str:
        """act(x*scale + bias) over the channels of x [N,S,C], not masked (sequence_run)."""
        scale, bias = n.merged()
        if not np.all(scale == 1.0):
            x = self.g.op("Mul", [x, self.g.const(scale, n.name + "_s")])
        if not np.all(bias == 0.0):
            x = self.g.op("Add", [x, self.g.const(bias, n.name + "_b")])
        return self.act(x, a)

    def transformer_norm(self, t: str, pending: str | None,
                         n: kb.TransformerNorm) -> tuple[str, str]:
        """(RMSNorm over the channels of t + pending (§4.1), t + pending)."""
        g = self.g
        weight = g.const(n.weight, n.name)
        if pending is None:  # in the pattern onnxruntime fuses into one RMSNorm
            mean_sq = g.op("ReduceMean", [g.op("Pow", [t, g.const(np.float32(2.0))])],
                           axes=[-1], keepdims=1)
            rms = g.op("Sqrt", [g.op("Add", [mean_sq, g.const(np.float32(n.eps))])])
            return g.op("Mul", [g.op("Div", [t, rms]), weight], n.name), t
        outputs = [g.name(n.name), "", "", g.name("residual")]
        g.op("SkipSimplifiedLayerNormalization", [t, pending, weight], outputs=outputs,
             domain=MS_DOMAIN, epsilon=n.eps)
        return outputs[0], outputs[3]

    def ffn(self, x: str, b: kb.FFNBlock) -> str:
        """SwiGLU: SiLU(x@linear1) * (x@gate), then linear2."""
        silu = self.act(self.matmul(x, b.linear1, "ffn_up"), kb.Act(b.name, "ACTIVATION_SILU"))
        hidden = self.g.op("Mul", [silu, self.matmul(x, b.gate, "ffn_gate")])
        return self.matmul(hidden, b.linear2, "ffn_down")

    def attention(self, x: str, b: kb.AttentionBlock) -> str:
        """Self-attention over on-board keys (§4.2): RoPE on Q and K, KV heads repeated for
        grouped queries (query head h reads KV head h div rep), then onnxruntime's
        MultiHeadAttention, off-board keys masked (mask_columns)."""
        g = self.g
        heads, kv, qd, vd = b.num_heads, b.num_kv_heads, b.q_head_dim, b.v_head_dim
        q, k, v = (self.matmul(x, m, "attention_" + part) for m, part in
                   ((b.q_proj, "q"), (b.k_proj, "k"), (b.v_proj, "v")))
        if b.rope is not None:
            q_cos, q_sin, k_cos, k_sin = self.seq["rope"][id(b)]
            q = self.rotate(q, heads, qd, q_cos, q_sin)
            k = self.rotate(k, kv, qd, k_cos, k_sin)
        if kv != heads:
            group = np.arange(heads) // (heads // kv)
            k, v = self.repeat_heads(k, kv, qd, group), self.repeat_heads(v, kv, vd, group)
        if self.mask is not None:
            ones, key_bias = self.mask_columns(heads)
            q, k = self.with_column(q, heads, qd, ones), self.with_column(k, heads, qd, key_bias)
        scale = np.float32(1.0) / np.sqrt(np.float32(qd))  # qHeadDim, as KataGo
        out = g.op("MultiHeadAttention", [q, k, v], b.name + "_mha", domain=MS_DOMAIN,
                   num_heads=heads, scale=float(scale))
        return self.matmul(out, b.out_proj, "attention_out")

    def mask_columns(self, heads: int) -> tuple[str, str]:
        """Ones and the key bias as [N,S,heads,1]: appended to every head of Q and of K, the
        logits become q.k + 1*bias, exactly q.k for a key on the board and -OFF_BOARD_KEY
        off it. onnxruntime's own key mask costs more: it copies an S*S mask per head."""
        g = self.g
        columns = self.seq["columns"]
        if heads not in columns:
            bias = g.op("Expand", [self.seq["key_bias"],
                                   g.const(np.array([1, 1, heads, 1], np.int64))])
            ones = g.op("ConstantOfShape", [g.op("Shape", [bias])],
                        value=numpy_helper.from_array(np.ones(1, np.float32)))
            columns[heads] = ones, bias
        return columns[heads]

    def with_column(self, x: str, heads: int, dim: int, column: str) -> str:
        """x [N,S,heads*dim] with `column` [N,S,heads,1] after each head's channels."""
        g = self.g
        split = g.op("Reshape", [x, g.const(np.array([0, -1, heads, dim], np.int64))])
        joined = g.op("Concat", [split, column], axis=3)
        return g.op("Reshape", [joined, g.const(np.array([0, 0, -1], np.int64))])

    def rotate(self, x: str, heads: int, dim: int, cos: str, sin: str) -> str:
        """RoPE on x [N,S,heads*dim] with caches [S*heads, dim/2]: onnxruntime's
        RotaryEmbedding on the heads laid out as one sequence, pairs interleaved as KataGo's."""
        g = self.g
        rows = g.op("Reshape", [x, g.const(np.array([0, -1, dim], np.int64))])
        turned = g.op("RotaryEmbedding", [rows, self.seq["first_position"], cos, sin], "rope",
                      domain=MS_DOMAIN, interleaved=1)
        return g.op("Reshape", [turned, g.const(np.array([0, -1, heads * dim], np.int64))])

    def repeat_heads(self, x: str, kv: int, dim: int, group: np.ndarray) -> str:
        """[N,S,kv*dim] -> [N,S,heads*dim], head h a copy of KV head group[h]."""
        g = self.g
        split = g.op("Reshape", [x, g.const(np.array([0, 0, kv, dim], np.int64))])
        picked = g.op("Gather", [split, g.const(group.astype(np.int64), "kv_group")], axis=2)
        return g.op("Reshape", [picked, g.const(np.array([0, 0, -1], np.int64))])

    def policy(self, trunk: str, h: kb.PolicyHead) -> str:
        """Returns policy logits [N, P, H*W+1] with pass last."""
        g = self.g
        p = self.conv(trunk, h.p1_conv)
        gp = self.gpool(self.norm_act(self.conv(trunk, h.g1_conv), h.g1_norm, h.g1_act))
        p = self.add_channel_bias(p, self.matmul(gp, h.gpool_to_bias))
        p = self.conv(self.norm_act(p, h.p1_norm, h.p1_act), h.p2_conv)  # [N,P,H,W]
        if self.mask is not None:
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
        own = self.masked(self.conv(v1, h.own_conv), "ownership_masked")
        return value, score, own


def on_sequence(block) -> bool:
    """Whether a block works position by position but for attention, so on a sequence view:
    transformer blocks, and nested blocks of them between 1x1 convolutions."""
    if isinstance(block, kb.TRANSFORMER_BLOCKS):
        return True
    return (isinstance(block, kb.NestedBlock) and block.pre_conv.w.shape[:2] == (1, 1)
            and block.post_conv.w.shape[:2] == (1, 1) and all(map(on_sequence, block.blocks)))


def attention_blocks(blocks) -> list[kb.AttentionBlock]:
    """The attention blocks among `blocks` and inside their nested blocks, in order."""
    found = []
    for b in blocks:
        if isinstance(b, kb.NestedBlock):
            found += attention_blocks(b.blocks)
        elif isinstance(b, kb.AttentionBlock):
            found.append(b)
    return found


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


def build_onnx(model: kb.KataModel, full_board: bool = False) -> onnx.ModelProto:
    """The ONNX graph of a parsed KataGo model, with metadata. `full_board`: a graph for inputs
    that the board fills (no off-board points), which skips the mask's work (metadata
    `full_board` 1; OnnxModel refuses inputs with off-board points for it)."""
    g = _Graph()
    b = _Builder(g, full_board)
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
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                             helper.make_opsetid(MS_DOMAIN, 1)],
                              producer_name="dosaku")
    proto.ir_version = IR_VERSION
    helper.set_model_props(proto, {**metadata(model), "full_board": str(int(full_board))})
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


def convert(in_path: str | Path, out_path: str | Path, full_board: bool = False) -> Path:
    """Convert a KataGo model file to ONNX, checked by onnx's checker (the engine's own
    conversion at start-up leaves that to onnxruntime's loading: the checker costs a third of a
    second); writes atomically and returns the output path."""
    proto = build_onnx(kb.load(in_path), full_board)
    onnx.checker.check_model(proto)
    return save(proto, out_path)


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
    ap.add_argument("--full-board", action="store_true",
                    help="a graph for inputs the board fills (what the engine plays), faster; "
                         "it refuses inputs with off-board points")
    args = ap.parse_args(argv)
    model = kb.load(args.input)
    out = save(build_onnx(model, args.full_board), args.output)
    print(f"{model.name}: version {model.version}, {kb.param_count(model)} parameters -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
