"""Reader for KataGo model files (.bin, .bin.gz, .txt, .txt.gz) into plain numpy records.

Only numpy is needed, so the engine can convert a KataGo net at run time. The layout follows
katago-network.md §1: a stream of whitespace-separated tokens, float blocks either as decimal
tokens (text) or as `@BIN@` + little-endian float32 bytes (binary). Weights keep the file's
memory layout (conv: [kY, kX, inC, outC]; matmul: [inC, outC]); converting them to another
layout is the consumer's job.
"""

from __future__ import annotations

import gzip
import hashlib
import re
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
class Trunk:
    name: str
    header: tuple  # numBlocks trunkC midC regularC dilatedC gpoolC as written (informational)
    initial_conv: Conv
    initial_matmul: MatMul
    blocks: list
    tip_norm: Norm
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
    """Token stream over the decompressed bytes; float blocks are text or @BIN@ binary."""

    def __init__(self, data: bytes, binary: bool):
        self.data = data
        self.pos = 0
        self.binary = binary

    def token(self) -> str:
        m = _TOKEN.match(self.data, self.pos)
        if m is None:
            raise ModelFormatError(f"unexpected end of file at byte {self.pos}")
        self.pos = m.end()
        return m.group(1).decode("ascii", errors="replace")

    def int(self) -> int:
        return self._number(int, "an integer")

    def float(self) -> float:
        return self._number(float, "a number")

    def _number(self, convert, what: str):
        tok = self.token()
        try:
            return convert(tok)
        except ValueError:
            raise ModelFormatError(f"expected {what}, got {tok!r} at byte {self.pos}") from None

    def floats(self, n: int, what: str) -> np.ndarray:
        if self.binary:
            start = _SPACE.match(self.data, self.pos).end()
            if start - self.pos > 100 or self.data[start:start + 5] != b"@BIN@":
                raise ModelFormatError(f"{what}: expected @BIN@ at byte {start}")
            begin = start + 5
            end = begin + 4 * n
            if end > len(self.data):
                raise ModelFormatError(f"{what}: file ends inside a float block")
            arr = np.frombuffer(self.data, dtype="<f4", count=n, offset=begin).astype(np.float32)
            self.pos = end
        else:
            arr = np.array([self.float() for _ in range(n)], dtype=np.float32)
        if not np.all(np.isfinite(arr)):
            raise ModelFormatError(f"{what}: non-finite weight")
        return arr

    def at_end(self) -> bool:
        return _SPACE.match(self.data, self.pos).end() == len(self.data)


class _Parser:
    def __init__(self, reader: _Reader, version: int):
        self.r = reader
        self.version = version

    def conv(self) -> Conv:
        name = self.r.token()
        ky, kx, cin, cout, dy, dx = (self.r.int() for _ in range(6))
        if ky % 2 == 0 or kx % 2 == 0:
            raise ModelFormatError(f"{name}: even convolution kernel {ky}x{kx}")
        if (dy, dx) != (1, 1):
            raise ModelFormatError(f"{name}: dilated convolutions are not supported")
        w = self.r.floats(ky * kx * cin * cout, name).reshape(ky, kx, cin, cout)
        return Conv(name, w, (dy, dx))

    def norm(self) -> Norm:
        name = self.r.token()
        c = self.r.int()
        eps = self.r.float()
        has_scale, has_bias = self.r.int(), self.r.int()
        mean = self.r.floats(c, name)
        var = self.r.floats(c, name)
        scale = self.r.floats(c, name) if has_scale else None
        bias = self.r.floats(c, name) if has_bias else None
        return Norm(name, mean, var, eps, scale, bias)

    def act(self) -> Act:
        name = self.r.token()
        if self.version < 11:
            return Act(name, "ACTIVATION_RELU")
        kind = self.r.token()
        if kind not in ACTIVATIONS:
            raise ModelFormatError(f"{name}: unknown activation {kind}")
        return Act(name, kind)

    def matmul(self) -> MatMul:
        name = self.r.token()
        cin, cout = self.r.int(), self.r.int()
        return MatMul(name, self.r.floats(cin * cout, name).reshape(cin, cout))

    def matbias(self) -> MatBias:
        name = self.r.token()
        c = self.r.int()
        return MatBias(name, self.r.floats(c, name))

    def zeros(self, n: int, what: str) -> None:
        for _ in range(n):
            if self.r.int() != 0:
                raise ModelFormatError(f"{what}: unsupported option (expected 0)")

    def block(self):
        kind = self.r.token()
        if kind == "ordinary_block":
            return OrdinaryBlock(self.r.token(), self.norm(), self.act(), self.conv(),
                                 self.norm(), self.act(), self.conv())
        if kind == "gpool_block":
            return GPoolBlock(self.r.token(), self.norm(), self.act(), self.conv(), self.conv(),
                              self.norm(), self.act(), self.matmul(), self.norm(), self.act(),
                              self.conv())
        if kind == "nested_bottleneck_block":
            name = self.r.token()
            n_inner = self.r.int()
            pre = (self.norm(), self.act(), self.conv())
            inner = [self.block() for _ in range(n_inner)]
            return NestedBlock(name, *pre, inner, self.norm(), self.act(), self.conv())
        raise ModelFormatError(f"unsupported block kind {kind!r}")

    def trunk(self, meta_encoder_version: int) -> Trunk:
        name = self.r.token()
        header = tuple(self.r.int() for _ in range(6))
        if self.version >= 15:
            if self.r.int() != 0:
                raise ModelFormatError(f"{name}: RMSNorm trunk tip is not supported")
            self.zeros(5, name)
        conv = self.conv()
        matmul = self.matmul()
        if meta_encoder_version > 0:
            raise ModelFormatError(f"{name}: SGF-metadata encoder nets are not supported")
        blocks = [self.block() for _ in range(header[0])]
        return Trunk(name, header, conv, matmul, blocks, self.norm(), self.act())

    def policy(self) -> PolicyHead:
        name = self.r.token()
        if self.version >= 17:
            channels = self.r.int()
            self.zeros(3, name)
        else:
            channels = 4 if self.version == 16 else 2 if self.version >= 12 else 1
        head = PolicyHead(name, channels, self.conv(), self.conv(), self.norm(), self.act(),
                          self.matmul(), self.norm(), self.act(), self.conv(), self.matmul())
        if self.version >= 15:
            head.pass_bias, head.pass_act, head.pass_mul2 = self.matbias(), self.act(), self.matmul()
        out_pass = (head.pass_mul2 or head.pass_mul).w.shape[1]
        if head.p2_conv.w.shape[3] != channels or out_pass != channels:
            raise ModelFormatError(f"{name}: expected {channels} policy channels")
        return head

    def value(self) -> ValueHead:
        name = self.r.token()
        if self.version >= 17:
            self.zeros(3, name)
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
    name = r.token()
    version = r.int()
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise ModelFormatError(
            f"{name}: model version {version} not supported (this reader handles {MIN_VERSION}-{MAX_VERSION})")
    num_spatial, num_global = r.int(), r.int()
    multipliers = tuple(r.float() for _ in range(7)) if version >= 13 else DEFAULT_MULTIPLIERS
    p = _Parser(r, version)
    meta_encoder_version, prefer_pass_alive = 0, False
    if version >= 15:
        meta_encoder_version = r.int()
        prefer_pass_alive = r.int() == 1
        p.zeros(6, name)
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
    """Read a KataGo model file and record its sha256 (of the file as stored on disk)."""
    data, binary = read_bytes(path)
    model = parse(data, binary)
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
    """KataGo's count: conv, matmul and matbias weights plus norm scale/bias where present."""
    n = 0
    for layer in layers(model):
        if isinstance(layer, Conv | MatMul):
            n += layer.w.size
        elif isinstance(layer, MatBias):
            n += layer.b.size
        elif isinstance(layer, Norm):
            n += sum(a.size for a in (layer.scale, layer.bias) if a is not None)
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

    for b in t.blocks:
        check_block(b, c)
    ph, vh = model.policy, model.value
    g1 = ph.g1_conv.w.shape[3]
    need(ph.gpool_to_bias.w.shape == (3 * g1, ph.p1_conv.w.shape[3]), "policy gpool matmul shape")
    need(vh.v2_mul.w.shape[0] == 3 * vh.v1_conv.w.shape[3], "value pool matmul shape")
    need(vh.own_conv.w.shape[3] == 1, "ownership conv must have 1 output")
