"""Reader for KataGo model files (.bin, .bin.gz, .txt, .txt.gz) into plain numpy records.

Only numpy is needed, so the engine can convert a KataGo net at run time. The layout follows
katago-network.md §1: a stream of whitespace-separated tokens, float blocks either as decimal
tokens (text) or as `@BIN@` + little-endian float32 bytes (binary). Weights keep the file's
memory layout (conv: [kY, kX, inC, outC]; matmul: [inC, outC]); converting them to another
layout is the consumer's job. Transformer nets (an RMSNorm trunk tip, attention and SwiGLU
feed-forward blocks; katago-transformer.md §2) are read at any version that can carry them,
as KataGo 1.17.2 does; what KataGo refuses is refused here too, naming the record.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MIN_VERSION = 8
MAX_VERSION = 17
DEFAULT_MULTIPLIERS = (20.0, 20.0, 20.0, 20.0, 40.0, 0.25, 30.0)
MULTIPLIER_NAMES = ("td_score", "score_mean", "score_stdev", "lead", "variance_time",
                    "shortterm_value_error", "shortterm_score_error")
ACTIVATIONS = ("ACTIVATION_RELU", "ACTIVATION_MISH", "ACTIVATION_IDENTITY", "ACTIVATION_SILU")


class ModelFormatError(ValueError):
    """The file is not a KataGo model this reader understands."""


@dataclass
class Conv:
    name: str
    w: np.ndarray  # [kY, kX, inC, outC] as stored in the file
    dilation: tuple[int, int] = (1, 1)


@dataclass
class Norm:
    name: str
    mean: np.ndarray
    var: np.ndarray
    eps: float
    scale: np.ndarray | None
    bias: np.ndarray | None

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-channel (scale, bias) with y = x*scale + bias, folded in float32 like KataGo."""
        c = self.mean.shape[0]
        scale = self.scale if self.scale is not None else np.ones(c, np.float32)
        bias = self.bias if self.bias is not None else np.zeros(c, np.float32)
        merged_scale = (scale / np.sqrt(self.var + np.float32(self.eps))).astype(np.float32)
        return merged_scale, (bias - merged_scale * self.mean).astype(np.float32)


@dataclass
class RMSNorm:
    """Trunk-tip RMSNorm (trunkNormKind 1): one scale per sample over the board (spatial) or
    one per position, then x*scale*gamma + beta."""
    name: str
    gamma: np.ndarray
    beta: np.ndarray
    eps: float
    spatial: bool


@dataclass
class TransformerNorm:
    """Per-position RMSNorm over channels inside transformer blocks: no centring, no bias."""
    name: str
    weight: np.ndarray
    eps: float


@dataclass
class RopeFreqs:
    """Learnable 2-D RoPE: radians per column (last index 0) and per row (1)."""
    name: str
    freqs: np.ndarray  # [numKVHeads, qHeadDim/2, 2]


@dataclass
class RopeTheta:
    """Fixed 2-D RoPE from a base theta: the first half of the pairs rotate with the row, the
    second half with the column (katago-transformer.md §4.3)."""
    name: str
    theta: float


@dataclass
class Act:
    name: str
    kind: str  # one of ACTIVATIONS


@dataclass
class MatMul:
    name: str
    w: np.ndarray  # [inC, outC]


@dataclass
class MatBias:
    name: str
    b: np.ndarray


@dataclass
class OrdinaryBlock:
    name: str
    pre_norm: Norm
    pre_act: Act
    conv1: Conv
    mid_norm: Norm
    mid_act: Act
    conv2: Conv


@dataclass
class GPoolBlock:
    name: str
    pre_norm: Norm
    pre_act: Act
    conv_regular: Conv
    conv_gpool: Conv
    gpool_norm: Norm
    gpool_act: Act
    gpool_to_bias: MatMul
    mid_norm: Norm
    mid_act: Act
    conv_final: Conv


@dataclass
class NestedBlock:
    name: str
    pre_norm: Norm
    pre_act: Act
    pre_conv: Conv
    blocks: list
    post_norm: Norm
    post_act: Act
    post_conv: Conv


@dataclass
class AttentionBlock:
    """Pre-norm multi-head (or grouped-query) self-attention over the board, residual."""
    name: str
    num_heads: int
    num_kv_heads: int
    q_head_dim: int
    v_head_dim: int
    norm: TransformerNorm
    q_proj: MatMul
    k_proj: MatMul
    v_proj: MatMul
    out_proj: MatMul
    rope: RopeFreqs | RopeTheta | None


@dataclass
class FFNBlock:
    """Pre-norm SwiGLU feed-forward block: (SiLU(n@linear1) * (n@gate)) @ linear2, residual."""
    name: str
    norm: TransformerNorm
    linear1: MatMul
    gate: MatMul
    linear2: MatMul


TRANSFORMER_BLOCKS = (AttentionBlock, FFNBlock)


@dataclass
class Trunk:
    name: str
    header: tuple  # numBlocks trunkC midC regularC dilatedC gpoolC as written (informational)
    initial_conv: Conv
    initial_matmul: MatMul
    blocks: list
    tip_norm: Norm | RMSNorm
    tip_act: Act


@dataclass
class PolicyHead:
    name: str
    channels: int
    p1_conv: Conv
    g1_conv: Conv
    g1_norm: Norm
    g1_act: Act
    gpool_to_bias: MatMul
    p1_norm: Norm
    p1_act: Act
    p2_conv: Conv
    pass_mul: MatMul
    pass_bias: MatBias | None = None  # v15+: pass = act(gp @ mul + bias) @ mul2
    pass_act: Act | None = None
    pass_mul2: MatMul | None = None


@dataclass
class ValueHead:
    name: str
    v1_conv: Conv
    v1_norm: Norm
    v1_act: Act
    v2_mul: MatMul
    v2_bias: MatBias
    v2_act: Act
    v3_mul: MatMul
    v3_bias: MatBias
    sv3_mul: MatMul
    sv3_bias: MatBias
    own_conv: Conv


@dataclass
class KataModel:
    name: str
    version: int
    num_spatial: int
    num_global: int
    multipliers: tuple
    trunk: Trunk
    policy: PolicyHead
    value: ValueHead
    sha256: str = ""
    prefer_pass_alive_under_suicide: bool = False
    consumed_bytes: int = 0
    total_bytes: int = 0


_TOKEN = re.compile(rb"\s*(\S+)")
_SPACE = re.compile(rb"\s*")


class _Reader:
    """Token stream over the decompressed bytes; float blocks are text or @BIN@ binary. It
    remembers the record being read, so that every error can name it."""

    def __init__(self, data: bytes, binary: bool):
        self.data = data
        self.pos = 0
        self.binary = binary
        self.record = "file header"

    def error(self, msg: str) -> ModelFormatError:
        return ModelFormatError(f"{self.record}: {msg} (byte {self.pos})")

    def token(self) -> str:
        m = _TOKEN.match(self.data, self.pos)
        if m is None:
            raise self.error("the file ends here (truncated?)")
        self.pos = m.end()
        return m.group(1).decode("ascii", errors="replace")

    def name(self) -> str:
        """The name token that starts a record; errors from here on name that record."""
        self.record = self.token()
        return self.record

    def int(self) -> int:
        return self._number(int, "an integer")

    def float(self) -> float:
        return self._number(float, "a number")

    def positive(self) -> int:
        """A size: KataGo refuses layers with no channels."""
        n = self.int()
        if n < 1:
            raise self.error(f"size {n} is not positive")
        return n

    def _number(self, convert, what: str):
        tok = self.token()
        try:
            return convert(tok)
        except ValueError:
            raise self.error(f"expected {what}, got {tok!r}") from None

    def floats(self, n: int) -> np.ndarray:
        if self.binary:
            start = _SPACE.match(self.data, self.pos).end()
            if start - self.pos > 100 or self.data[start:start + 5] != b"@BIN@":
                self.pos = start
                raise self.error("expected a binary float block (@BIN@)")
            begin = start + 5
            end = begin + 4 * n
            if end > len(self.data):
                raise self.error("the file ends inside a float block (truncated?)")
            arr = np.frombuffer(self.data, dtype="<f4", count=n, offset=begin).astype(np.float32)
            self.pos = end
        else:
            arr = np.array([self.float() for _ in range(n)], dtype=np.float32)
        if not np.all(np.isfinite(arr)):
            raise self.error("non-finite weight")
        return arr

    def at_end(self) -> bool:
        return _SPACE.match(self.data, self.pos).end() == len(self.data)


def _shape_error(block: str, layer, expected: str) -> ModelFormatError:
    return ModelFormatError(f"{block}: {layer.name} is {'x'.join(map(str, layer.w.shape))}, "
                            f"expected {expected}")


class _Parser:
    def __init__(self, reader: _Reader, version: int):
        self.r = reader
        self.version = version

    def conv(self) -> Conv:
        name = self.r.name()
        ky, kx, cin, cout = (self.r.positive() for _ in range(4))
        dy, dx = self.r.int(), self.r.int()
        if ky % 2 == 0 or kx % 2 == 0:
            raise self.r.error(f"even convolution kernel {ky}x{kx}")
        if (dy, dx) != (1, 1):
            raise self.r.error("dilated convolutions are not supported")
        w = self.r.floats(ky * kx * cin * cout).reshape(ky, kx, cin, cout)
        return Conv(name, w, (dy, dx))

    def norm(self) -> Norm:
        name = self.r.name()
        c = self.r.positive()
        eps = self.r.float()
        has_scale, has_bias = self.r.int(), self.r.int()
        mean = self.r.floats(c)
        var = self.r.floats(c)
        scale = self.r.floats(c) if has_scale else None
        bias = self.r.floats(c) if has_bias else None
        return Norm(name, mean, var, eps, scale, bias)

    def epsilon(self) -> float:
        """An RMSNorm epsilon, a text token; KataGo wants 0 < eps <= 1."""
        eps = self.r.float()
        if not 0.0 < eps <= 1.0:
            raise self.r.error(f"RMSNorm epsilon {eps} is not in (0, 1]")
        return eps

    def rms_norm(self) -> RMSNorm:
        name = self.r.name()
        c = self.r.positive()
        eps = self.epsilon()
        spatial, group = self.r.int(), self.r.int()
        if group != 0:
            raise self.r.error(f"grouped RMSNorm (cgroupSize {group}) is not supported "
                               "(KataGo refuses it too)")
        gamma = self.r.floats(c)
        return RMSNorm(name, gamma, self.r.floats(c), eps, spatial != 0)

    def transformer_norm(self) -> TransformerNorm:
        name = self.r.name()
        c = self.r.positive()
        eps = self.epsilon()
        return TransformerNorm(name, self.r.floats(c), eps)

    def act(self) -> Act:
        name = self.r.name()
        if self.version < 11:
            return Act(name, "ACTIVATION_RELU")
        kind = self.r.token()
        if kind not in ACTIVATIONS:
            raise self.r.error(f"unknown activation {kind}")
        return Act(name, kind)

    def matmul(self) -> MatMul:
        name = self.r.name()
        cin, cout = self.r.positive(), self.r.positive()
        return MatMul(name, self.r.floats(cin * cout).reshape(cin, cout))

    def matbias(self) -> MatBias:
        name = self.r.name()
        c = self.r.positive()
        return MatBias(name, self.r.floats(c))

    def zeros(self, n: int) -> None:
        for _ in range(n):
            value = self.r.int()
            if value != 0:
                raise self.r.error(f"unsupported option {value} (expected 0)")

    def block(self, where: str):
        self.r.record = where
        kind = self.r.token()
        if kind == "ordinary_block":
            return OrdinaryBlock(self.r.name(), self.norm(), self.act(), self.conv(),
                                 self.norm(), self.act(), self.conv())
        if kind == "gpool_block":
            return GPoolBlock(self.r.name(), self.norm(), self.act(), self.conv(), self.conv(),
                              self.norm(), self.act(), self.matmul(), self.norm(), self.act(),
                              self.conv())
        if kind == "nested_bottleneck_block":
            name = self.r.name()
            n_inner = self.r.int()
            pre = (self.norm(), self.act(), self.conv())
            inner = [self.block(f"{name} inner block {i}") for i in range(n_inner)]
            return NestedBlock(name, *pre, inner, self.norm(), self.act(), self.conv())
        if kind == "transformer_attention_block":
            return self.attention()
        if kind == "transformer_ffn_block":
            return self.ffn()
        raise self.r.error(f"unsupported block kind {kind!r}")

    def attention(self) -> AttentionBlock:
        name = self.r.name()
        heads, kv, qd, vd = (self.r.positive() for _ in range(4))
        use_rope, learnable = self.r.int() != 0, self.r.int() != 0
        if heads % kv:
            raise self.r.error(f"{heads} heads are not a multiple of {kv} KV heads")
        if use_rope and qd % 2:
            raise self.r.error(f"RoPE needs an even qHeadDim, got {qd}")
        norm = self.transformer_norm()
        q, k, v, out = (self.matmul() for _ in range(4))
        for proj, width in ((q, heads * qd), (k, kv * qd), (v, kv * vd)):
            if proj.w.shape[1] != width:
                raise _shape_error(name, proj, f"{width} outputs")
        if out.w.shape[0] != heads * vd:
            raise _shape_error(name, out, f"{heads * vd} inputs")
        rope = None
        if use_rope:
            rope = self.rope_freqs(kv, qd // 2) if learnable else self.rope_theta()
        return AttentionBlock(name, heads, kv, qd, vd, norm, q, k, v, out, rope)

    def rope_freqs(self, kv_heads: int, pairs: int) -> RopeFreqs:
        name = self.r.name()
        dims = tuple(self.r.int() for _ in range(3))
        if dims != (kv_heads, pairs, 2):
            raise self.r.error(f"RoPE frequencies are {dims}, expected {(kv_heads, pairs, 2)}")
        return RopeFreqs(name, self.r.floats(kv_heads * pairs * 2).reshape(kv_heads, pairs, 2))

    def rope_theta(self) -> RopeTheta:
        name = self.r.name()
        theta = self.r.float()
        if not (theta > 0.0 and math.isfinite(theta)):
            raise self.r.error(f"RoPE theta {theta} is not positive and finite")
        return RopeTheta(name, theta)

    def ffn(self) -> FFNBlock:
        name = self.r.name()
        c, f = self.r.positive(), self.r.positive()
        if self.r.int() == 0:
            raise self.r.error("feed-forward blocks without SwiGLU are not supported "
                               "(no KataGo backend runs them)")
        norm = self.transformer_norm()
        linear1, gate, linear2 = self.matmul(), self.matmul(), self.matmul()
        for layer, (cin, cout) in ((linear1, (c, f)), (gate, (c, f)), (linear2, (f, c))):
            if layer.w.shape != (cin, cout):
                raise _shape_error(name, layer, f"{cin}x{cout}")
        return FFNBlock(name, norm, linear1, gate, linear2)

    def trunk(self, meta_encoder_version: int) -> Trunk:
        name = self.r.name()
        header = tuple(self.r.int() for _ in range(6))
        norm_kind = 0
        if self.version >= 15:
            norm_kind = self.r.int()
            self.zeros(5)
            if norm_kind not in (0, 1):
                raise self.r.error(f"trunk norm kind {norm_kind} is not supported (KataGo "
                                   "knows 0, a norm, and 1, an RMSNorm)")
        conv = self.conv()
        matmul = self.matmul()
        if meta_encoder_version > 0:
            raise ModelFormatError(f"{name}: SGF-metadata encoder nets are not supported")
        blocks = [self.block(f"{name} block {i}") for i in range(header[0])]
        tip = self.rms_norm() if norm_kind == 1 else self.norm()
        return Trunk(name, header, conv, matmul, blocks, tip, self.act())

    def policy(self) -> PolicyHead:
        name = self.r.name()
        if self.version >= 17:
            channels = self.r.int()
            self.zeros(3)
        else:
            channels = 4 if self.version == 16 else 2 if self.version >= 12 else 1
        head = PolicyHead(name, channels, self.conv(), self.conv(), self.norm(), self.act(),
                          self.matmul(), self.norm(), self.act(), self.conv(), self.matmul())
        if self.version >= 15:
            head.pass_bias, head.pass_act = self.matbias(), self.act()
            head.pass_mul2 = self.matmul()
        out_pass = (head.pass_mul2 or head.pass_mul).w.shape[1]
        if head.p2_conv.w.shape[3] != channels or out_pass != channels:
            raise ModelFormatError(f"{name}: expected {channels} policy channels")
        return head

    def value(self) -> ValueHead:
        name = self.r.name()
        if self.version >= 17:
            self.zeros(3)
        head = ValueHead(name, self.conv(), self.norm(), self.act(), self.matmul(), self.matbias(),
                         self.act(), self.matmul(), self.matbias(), self.matmul(), self.matbias(),
                         self.conv())
        if head.v3_mul.w.shape[1] != 3:
            raise ModelFormatError(f"{name}: value head must have 3 outputs")
        return head


def read_bytes(path: str | Path) -> tuple[bytes, bool]:
    """Decompressed file contents and whether float blocks are binary (from the file name)."""
    path = Path(path)
    raw = path.read_bytes()
    suffixes = path.name.lower().split(".")[1:]
    data = gzip.decompress(raw) if suffixes and suffixes[-1] == "gz" else raw
    core = [s for s in suffixes if s != "gz"]
    binary = not (core and core[-1] == "txt")
    if core and core[-1] not in ("bin", "txt"):  # bare .gz or unknown: sniff for @BIN@
        binary = b"@BIN@" in data[:1 << 20]
    return data, binary


def parse(data: bytes, binary: bool) -> KataModel:
    """Parse decompressed model bytes; the whole stream must be consumed."""
    r = _Reader(data, binary)
    name = r.name()
    version = r.int()
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise ModelFormatError(f"{name}: model version {version} not supported "
                               f"(this reader handles {MIN_VERSION}-{MAX_VERSION})")
    num_spatial, num_global = r.int(), r.int()
    multipliers = tuple(r.float() for _ in range(7)) if version >= 13 else DEFAULT_MULTIPLIERS
    p = _Parser(r, version)
    meta_encoder_version, prefer_pass_alive = 0, False
    if version >= 15:
        meta_encoder_version = r.int()
        prefer_pass_alive = r.int() == 1
        p.zeros(6)
    trunk = p.trunk(meta_encoder_version)
    policy = p.policy()
    value = p.value()
    if not r.at_end():
        raise ModelFormatError(f"{name}: trailing data after the value head at byte {r.pos}")
    model = KataModel(name, version, num_spatial, num_global, multipliers, trunk, policy, value,
                      prefer_pass_alive_under_suicide=prefer_pass_alive,
                      consumed_bytes=r.pos, total_bytes=len(data))
    _check_shapes(model)
    return model


def load(path: str | Path) -> KataModel:
    """Read a KataGo model file and record its sha256 (of the file as stored on disk). Format
    errors name the file as well as the record."""
    try:
        data, binary = read_bytes(path)
        model = parse(data, binary)
    except (EOFError, gzip.BadGzipFile, zlib.error) as err:
        raise ModelFormatError(f"{path}: damaged gzip data ({err})") from None
    except ModelFormatError as err:
        raise ModelFormatError(f"{path}: {err}") from None
    model.sha256 = file_sha256(path)
    return model


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def layers(model: KataModel):
    """All layer records in file order (blocks flattened), for listings and parameter counts."""
    out = [model.trunk.initial_conv, model.trunk.initial_matmul]

    def walk(block):
        if isinstance(block, NestedBlock):
            out.extend([block.pre_norm, block.pre_act, block.pre_conv])
            for inner in block.blocks:
                walk(inner)
            out.extend([block.post_norm, block.post_act, block.post_conv])
        elif isinstance(block, AttentionBlock):
            out.extend([block.norm, block.q_proj, block.k_proj, block.v_proj, block.out_proj])
            out.extend([block.rope] if block.rope is not None else [])
        elif isinstance(block, FFNBlock):
            out.extend([block.norm, block.linear1, block.gate, block.linear2])
        elif isinstance(block, GPoolBlock):
            out.extend([block.pre_norm, block.pre_act, block.conv_regular, block.conv_gpool,
                        block.gpool_norm, block.gpool_act, block.gpool_to_bias, block.mid_norm,
                        block.mid_act, block.conv_final])
        else:
            out.extend([block.pre_norm, block.pre_act, block.conv1, block.mid_norm, block.mid_act,
                        block.conv2])

    for b in model.trunk.blocks:
        walk(b)
    out.extend([model.trunk.tip_norm, model.trunk.tip_act])
    ph = model.policy
    out.extend([ph.p1_conv, ph.g1_conv, ph.g1_norm, ph.g1_act, ph.gpool_to_bias, ph.p1_norm,
                ph.p1_act, ph.p2_conv, ph.pass_mul])
    if ph.pass_mul2 is not None:
        out.extend([ph.pass_bias, ph.pass_act, ph.pass_mul2])
    vh = model.value
    out.extend([vh.v1_conv, vh.v1_norm, vh.v1_act, vh.v2_mul, vh.v2_bias, vh.v2_act, vh.v3_mul,
                vh.v3_bias, vh.sv3_mul, vh.sv3_bias, vh.own_conv])
    return out


def param_count(model: KataModel) -> int:
    """KataGo's count: conv, matmul and matbias weights, norm scale/bias where present,
    RMSNorm gamma and beta, transformer norm weights and learnable RoPE frequencies."""
    n = 0
    for layer in layers(model):
        if isinstance(layer, Conv | MatMul):
            n += layer.w.size
        elif isinstance(layer, MatBias):
            n += layer.b.size
        elif isinstance(layer, Norm):
            n += sum(a.size for a in (layer.scale, layer.bias) if a is not None)
        elif isinstance(layer, RMSNorm):
            n += layer.gamma.size + layer.beta.size
        elif isinstance(layer, TransformerNorm):
            n += layer.weight.size
        elif isinstance(layer, RopeFreqs):
            n += layer.freqs.size
    return n


def _check_shapes(model: KataModel) -> None:
    """Channel counts must chain; a mismatch means a misread file, so fail loudly here."""
    def need(cond, msg):
        if not cond:
            raise ModelFormatError(f"{model.name}: {msg}")

    t = model.trunk
    c = t.initial_conv.w.shape[3]
    need(t.initial_conv.w.shape[2] == model.num_spatial, "initial conv input != spatial inputs")
    need(t.initial_matmul.w.shape == (model.num_global, c), "initial matmul shape")

    def check_block(b, width):
        if isinstance(b, AttentionBlock):
            check_attention(b, width)
            return
        if isinstance(b, FFNBlock):
            need(b.norm.weight.shape[0] == b.linear1.w.shape[0] == width,
                 f"{b.name}: width {b.linear1.w.shape[0]} in a stack of width {width}")
            return
        need(b.pre_norm.mean.shape[0] == width, f"{b.name}: pre norm width")
        if isinstance(b, NestedBlock):
            mid = b.pre_conv.w.shape[3]
            for inner in b.blocks:
                check_block(inner, mid)
            need(b.post_conv.w.shape[3] == width, f"{b.name}: post conv width")
        elif isinstance(b, GPoolBlock):
            g = b.conv_gpool.w.shape[3]
            reg = b.conv_regular.w.shape[3]
            need(b.gpool_to_bias.w.shape == (3 * g, reg), f"{b.name}: gpool matmul shape")
            need(b.conv_final.w.shape[3] == width, f"{b.name}: final conv width")
        else:
            need(b.conv2.w.shape[3] == width, f"{b.name}: final conv width")

    def check_attention(b, width):
        reads = {b.norm.weight.shape[0], b.q_proj.w.shape[0], b.k_proj.w.shape[0],
                 b.v_proj.w.shape[0], b.out_proj.w.shape[1]}
        need(reads == {width}, f"{b.name}: widths {sorted(reads)} in a stack of width {width}")

    for b in t.blocks:
        check_block(b, c)
    tip = t.tip_norm.gamma if isinstance(t.tip_norm, RMSNorm) else t.tip_norm.mean
    need(tip.shape[0] == c, f"{t.tip_norm.name}: width {tip.shape[0]} != trunk width {c}")
    ph, vh = model.policy, model.value
    g1 = ph.g1_conv.w.shape[3]
    need(ph.gpool_to_bias.w.shape == (3 * g1, ph.p1_conv.w.shape[3]), "policy gpool matmul shape")
    need(vh.v2_mul.w.shape[0] == 3 * vh.v1_conv.w.shape[3], "value pool matmul shape")
    need(vh.own_conv.w.shape[3] == 1, "ownership conv must have 1 output")
