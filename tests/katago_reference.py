"""Slow plain-numpy forward pass of a parsed KataGo model, written from katago-network.md §2
and, for transformer nets, katago-transformer.md §4.

Used only by tests, as an independent check of the ONNX graph built by networks/katago_convert.
Works in float64 from the file-layout weights (conv [kY, kX, inC, outC], matmul [inC, outC]).
Transformer blocks work on the board as a sequence [N, S, C], position s = y*W + x.
"""

import numpy as np

from dosaku.networks import katago_bin as kb


def conv(x, layer):
    """Same-padded cross-correlation, one kernel offset at a time."""
    w = layer.w.astype(np.float64)
    ky, kx, _, cout = w.shape
    n, _, h, wd = x.shape
    py, px = ky // 2, kx // 2
    xp = np.zeros((n, x.shape[1], h + 2 * py, wd + 2 * px))
    xp[:, :, py:py + h, px:px + wd] = x
    out = np.zeros((n, cout, h, wd))
    for dy in range(ky):
        for dx in range(kx):
            window = xp[:, :, dy:dy + h, dx:dx + wd]
            out += np.einsum("nihw,io->nohw", window, w[dy, dx])
    return out


def activate(x, kind):
    if kind == "ACTIVATION_RELU":
        return np.maximum(x, 0.0)
    if kind == "ACTIVATION_MISH":
        return x * np.tanh(np.log1p(np.exp(np.minimum(x, 20.0))) + np.maximum(x, 20.0) - 20.0)
    if kind == "ACTIVATION_SILU":
        return x / (1.0 + np.exp(-x))
    assert kind == "ACTIVATION_IDENTITY", kind
    return x


def norm_act(x, norm, act, mask):
    c = norm.mean.shape[0]
    scale = norm.scale if norm.scale is not None else np.ones(c)
    bias = norm.bias if norm.bias is not None else np.zeros(c)
    s = scale / np.sqrt(norm.var.astype(np.float64) + norm.eps)
    y = (x - norm.mean[None, :, None, None]) * s[None, :, None, None] + bias[None, :, None, None]
    return activate(y, act.kind) * mask


def board_area(mask):
    return mask.sum(axis=(1, 2, 3))  # [N]


def gpool(x, mask):
    area = board_area(mask)
    mean = x.sum(axis=(2, 3)) / area[:, None]
    scaled = mean * ((np.sqrt(area) - 14.0) / 10.0)[:, None]
    mx = np.where(mask > 0, x, -np.inf).max(axis=(2, 3))
    return np.concatenate([mean, scaled, mx], axis=1)


def value_pool(x, mask):
    area = board_area(mask)
    mean = x.sum(axis=(2, 3)) / area[:, None]
    k = np.sqrt(area) - 14.0
    return np.concatenate([mean, mean * (k / 10.0)[:, None],
                           mean * (k * k / 100.0 - 0.1)[:, None]], axis=1)


def rms_norm_act(x, norm, act, mask):
    """Trunk-tip RMSNorm (§4.6): statistics over on-board points only, then gamma, beta, act."""
    sq = x * x
    if norm.spatial:
        mean_sq = (sq * mask).sum(axis=(1, 2, 3), keepdims=True) / (
            board_area(mask)[:, None, None, None] * x.shape[1])
    else:
        mean_sq = sq.mean(axis=1, keepdims=True)
    y = x / np.sqrt(mean_sq + norm.eps) * norm.gamma[None, :, None, None]
    return activate(y + norm.beta[None, :, None, None], act.kind) * mask


def tip_norm_act(x, trunk, mask):
    if isinstance(trunk.tip_norm, kb.RMSNorm):
        return rms_norm_act(x, trunk.tip_norm, trunk.tip_act, mask)
    return norm_act(x, trunk.tip_norm, trunk.tip_act, mask)


def transformer_norm(t, norm, on_board):
    """Per-position RMSNorm over channels (§4.1) of t [N, S, C]; zero off-board."""
    rms = np.sqrt((t * t).mean(axis=2, keepdims=True) + norm.eps)
    return t / rms * norm.weight * on_board[:, :, None]


def rope_angles(rope, kv_heads, pairs, height, width):
    """Rotation angles [kv_heads, S, pairs] of §4.3 at buffer positions x = s mod W,
    y = s div W."""
    y, x = np.divmod(np.arange(height * width), width)
    if isinstance(rope, kb.RopeFreqs):
        f = rope.freqs.astype(np.float64)
        return x[None, :, None] * f[:, None, :, 0] + y[None, :, None] * f[:, None, :, 1]
    half = pairs // 2
    angles = np.empty((height * width, pairs))
    for p in range(pairs):
        j, coord = (p, y) if p < half else (p - half, x)
        angles[:, p] = coord * rope.theta ** (-2.0 * j / pairs)
    return np.broadcast_to(angles, (kv_heads,) + angles.shape)


def rotate_pairs(v, angles):
    """Channels (2p, 2p+1) of v [N, heads, S, d] rotated by angles [heads, S, d/2]."""
    c, s = np.cos(angles), np.sin(angles)
    even, odd = v[..., 0::2], v[..., 1::2]
    out = np.empty_like(v)
    out[..., 0::2] = even * c - odd * s
    out[..., 1::2] = even * s + odd * c
    return out


def attention(t, block, on_board, height, width):
    """Pre-norm self-attention over on-board keys (§4.2), query head h reading KV head
    h div (heads / kv_heads); the residual is added on the board only."""
    n, seq, _ = t.shape
    x = transformer_norm(t, block.norm, on_board)

    def split(proj, count, dim):
        return (x @ proj.w.astype(np.float64)).reshape(n, seq, count, dim).transpose(0, 2, 1, 3)

    heads, kv, qd = block.num_heads, block.num_kv_heads, block.q_head_dim
    q, k = split(block.q_proj, heads, qd), split(block.k_proj, kv, qd)
    v = split(block.v_proj, kv, block.v_head_dim)
    group = np.arange(heads) // (heads // kv)
    if block.rope is not None:
        angles = rope_angles(block.rope, kv, qd // 2, height, width)
        q, k = rotate_pairs(q, angles[group]), rotate_pairs(k, angles)
    logits = np.einsum("nhid,nhjd->nhij", q, k[:, group]) / np.sqrt(qd)
    logits = np.where(on_board[:, None, None, :] > 0, logits, -np.inf)
    weights = np.exp(logits - logits.max(axis=3, keepdims=True))
    weights /= weights.sum(axis=3, keepdims=True)
    heads_out = np.einsum("nhij,nhjd->nihd", weights, v[:, group]).reshape(n, seq, -1)
    return t + (heads_out @ block.out_proj.w) * on_board[:, :, None]


def feed_forward(t, block, on_board):
    """Pre-norm SwiGLU (§4.4): SiLU on linear1's output, the gate linear."""
    x = transformer_norm(t, block.norm, on_board)
    a, gate = x @ block.linear1.w, x @ block.gate.w
    return t + ((activate(a, "ACTIVATION_SILU") * gate) @ block.linear2.w) * on_board[:, :, None]


def transformer_residual(t, block, mask):
    """A transformer block applied to planes t [N, C, H, W] through the sequence view."""
    n, c, height, width = t.shape
    seq = t.reshape(n, c, -1).transpose(0, 2, 1)
    on_board = mask.reshape(n, -1)
    if isinstance(block, kb.AttentionBlock):
        seq = attention(seq, block, on_board, height, width)
    else:
        seq = feed_forward(seq, block, on_board)
    return seq.transpose(0, 2, 1).reshape(n, c, height, width)


def residual(t, block, mask):
    if isinstance(block, kb.TRANSFORMER_BLOCKS):
        return transformer_residual(t, block, mask)
    if isinstance(block, kb.OrdinaryBlock):
        a = norm_act(t, block.pre_norm, block.pre_act, mask)
        r = conv(norm_act(conv(a, block.conv1), block.mid_norm, block.mid_act, mask), block.conv2)
    elif isinstance(block, kb.GPoolBlock):
        a = norm_act(t, block.pre_norm, block.pre_act, mask)
        r = conv(a, block.conv_regular)
        g = norm_act(conv(a, block.conv_gpool), block.gpool_norm, block.gpool_act, mask)
        r = r + (gpool(g, mask) @ block.gpool_to_bias.w)[:, :, None, None]
        r = conv(norm_act(r, block.mid_norm, block.mid_act, mask), block.conv_final)
    else:
        u = conv(norm_act(t, block.pre_norm, block.pre_act, mask), block.pre_conv)
        for inner in block.blocks:
            u = residual(u, inner, mask)
        r = conv(norm_act(u, block.post_norm, block.post_act, mask), block.post_conv)
    return t + r


def forward(model, spatial, global_in):
    """Raw outputs: policy [N, P, H*W+1], value [N, 3], score [N, S], ownership [N, H, W]."""
    x = spatial.astype(np.float64)
    gl = global_in.astype(np.float64)
    mask = x[:, 0:1]
    tr = model.trunk
    t = conv(x, tr.initial_conv) + (gl @ tr.initial_matmul.w)[:, :, None, None]
    for block in tr.blocks:
        t = residual(t, block, mask)
    t = tip_norm_act(t, tr, mask)

    ph = model.policy
    p = conv(t, ph.p1_conv)
    g = norm_act(conv(t, ph.g1_conv), ph.g1_norm, ph.g1_act, mask)
    gp = gpool(g, mask)
    p = p + (gp @ ph.gpool_to_bias.w)[:, :, None, None]
    p = conv(norm_act(p, ph.p1_norm, ph.p1_act, mask), ph.p2_conv)
    if ph.pass_mul2 is None:
        pass_logit = gp @ ph.pass_mul.w
    else:
        hidden = activate(gp @ ph.pass_mul.w + ph.pass_bias.b, ph.pass_act.kind)
        pass_logit = hidden @ ph.pass_mul2.w
    n = x.shape[0]
    policy = np.concatenate([p.reshape(n, p.shape[1], -1), pass_logit[:, :, None]], axis=2)

    vh = model.value
    v1 = norm_act(conv(t, vh.v1_conv), vh.v1_norm, vh.v1_act, mask)
    v2 = activate(value_pool(v1, mask) @ vh.v2_mul.w + vh.v2_bias.b, vh.v2_act.kind)
    return {
        "policy": policy,
        "value": v2 @ vh.v3_mul.w + vh.v3_bias.b,
        "score": v2 @ vh.sv3_mul.w + vh.sv3_bias.b,
        "ownership": conv(v1, vh.own_conv)[:, 0],
    }
