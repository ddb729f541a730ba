"""Dosaku's policy-value network in PyTorch: KataGo's v8 architecture on the V7 input features.

The forward pass is katago-network.md §2, layer for layer, so that training/export.py can hand
the weights to the same ONNX builder that converts KataGo nets (networks/katago_convert.py):
a 5x5 input convolution plus a global-input bias, pre-activation residual blocks (every third
block from the second one a global-pooling block), a tip norm, a policy head (board logits and a
pass logit from pooled features) and a value head (win/loss/no-result logits, score columns,
pre-tanh ownership). The on-board mask (input plane 0) is applied after every norm and in every
pooling, so one net serves every board size and a board padded into a larger buffer gives the
same outputs on its points.

Norm layers are a learned per-channel scale and bias ("fixup" style, no batch statistics): the
net computes the same function in training and at inference, on a batch of one board size or of
mixed padded sizes, exports as a plain Mul/Add, and the last convolution of every residual
branch starts at zero so a deep net starts as the identity and trains without batch norm.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from dosaku.engine.evaluators.features import NUM_GLOBAL, NUM_SPATIAL

SCORE_OUTPUTS = ("scoremean", "scorestdev", "lead")  # columns of the `score` output
SCORE_SCALE = 20.0  # points per raw score unit (KataGo's multiplier): targets come out near 1
OFF_BOARD_POLICY = 5000.0  # subtracted from off-board policy logits, as KataGo's training does
OUTPUT_INIT_SCALE = 0.1  # output layers start small: a fresh net is near uniform and near 0
_NAME = re.compile(r"^b(\d+)c(\d+)$")


@dataclass(frozen=True)
class NetConfig:
    """Sizes of a net called bXcY: X residual blocks of Y channels."""
    name: str
    blocks: int
    channels: int
    gpool_channels: int  # pooled channels of a global-pooling block (the rest stay regular)
    head_channels: int  # policy head (p1, g1) and value head (v1) channels
    value_hidden: int  # width of the value head's hidden layer

    def is_gpool(self, block: int) -> bool:
        return block % 3 == 1


def net_config(name: str) -> NetConfig:
    """The NetConfig of a name like b6c96 (b4c64, b10c128; b2c32 for tests)."""
    m = _NAME.match(name)
    if not m or int(m[1]) < 1 or int(m[2]) < 16:
        raise ValueError(f"net name {name!r}: expected bXcY with X >= 1 blocks and Y >= 16 "
                         f"channels, e.g. b6c96")
    blocks, channels = int(m[1]), int(m[2])
    head = max(8, channels // 4)
    return NetConfig(name, blocks, channels, head, head, 2 * head)


class Geometry:
    """Per-sample board quantities every layer needs: mask [N,1,H,W], 1/area and KataGo's
    board-size terms (sqrtA - 14)/10 and (sqrtA - 14)^2/100 - 0.1, each [N,1]."""

    def __init__(self, spatial: torch.Tensor):
        self.mask = spatial[:, 0:1]
        area = self.mask.sum(dim=(2, 3))
        self.inv_area = 1.0 / area
        sqrt_minus_14 = torch.sqrt(area) - 14.0
        self.size_term = sqrt_minus_14 * 0.1
        self.size_term2 = sqrt_minus_14 * sqrt_minus_14 * 0.01 - 0.1

    def gpool(self, x: torch.Tensor) -> torch.Tensor:
        """[mean, mean * size_term, max over board points] per channel: [N, 3C]."""
        mean = x.sum(dim=(2, 3)) * self.inv_area
        top = (x + (self.mask - 1.0)).amax(dim=(2, 3))
        return torch.cat([mean, mean * self.size_term, top], dim=1)

    def value_pool(self, x: torch.Tensor) -> torch.Tensor:
        """[mean, mean * size_term, mean * size_term2] per channel: [N, 3C]."""
        mean = x.sum(dim=(2, 3)) * self.inv_area
        return torch.cat([mean, mean * self.size_term, mean * self.size_term2], dim=1)


def conv(c_in: int, c_out: int, k: int) -> nn.Conv2d:
    return nn.Conv2d(c_in, c_out, k, padding=k // 2, bias=False)


class NormAct(nn.Module):
    """relu(x * scale + bias) * mask with a learned per-channel scale and bias."""

    def __init__(self, channels: int):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x: torch.Tensor, geo: Geometry) -> torch.Tensor:
        return F.relu(x * self.scale[:, None, None] + self.bias[:, None, None]) * geo.mask


class ResBlock(nn.Module):
    """t + conv2(NA(conv1(NA(t))))."""

    def __init__(self, c: int):
        super().__init__()
        self.pre = NormAct(c)
        self.conv1 = conv(c, c, 3)
        self.mid = NormAct(c)
        self.conv2 = conv(c, c, 3)

    def residual_out(self) -> nn.Conv2d:
        return self.conv2

    def forward(self, t: torch.Tensor, geo: Geometry) -> torch.Tensor:
        return t + self.conv2(self.mid(self.conv1(self.pre(t, geo)), geo))


class GPoolBlock(nn.Module):
    """A residual block whose regular channels get a bias from globally pooled channels."""

    def __init__(self, c: int, gp: int):
        super().__init__()
        self.pre = NormAct(c)
        self.conv_regular = conv(c, c - gp, 3)
        self.conv_gpool = conv(c, gp, 3)
        self.gpool_norm = NormAct(gp)
        self.gpool_to_bias = nn.Linear(3 * gp, c - gp, bias=False)
        self.mid = NormAct(c - gp)
        self.conv_final = conv(c - gp, c, 3)

    def residual_out(self) -> nn.Conv2d:
        return self.conv_final

    def forward(self, t: torch.Tensor, geo: Geometry) -> torch.Tensor:
        a = self.pre(t, geo)
        pooled = geo.gpool(self.gpool_norm(self.conv_gpool(a), geo))
        r = self.conv_regular(a) + self.gpool_to_bias(pooled)[:, :, None, None]
        return t + self.conv_final(self.mid(r, geo))


class PolicyHead(nn.Module):
    """Board logits [N, H*W] (off-board -5000) and a pass logit from pooled features."""

    def __init__(self, c: int, hc: int):
        super().__init__()
        self.p1_conv = conv(c, hc, 1)
        self.g1_conv = conv(c, hc, 1)
        self.g1_norm = NormAct(hc)
        self.gpool_to_bias = nn.Linear(3 * hc, hc, bias=False)
        self.p1_norm = NormAct(hc)
        self.p2_conv = conv(hc, 1, 1)
        self.pass_linear = nn.Linear(3 * hc, 1, bias=False)

    def output_layers(self) -> list[nn.Module]:
        return [self.p2_conv, self.pass_linear]

    def forward(self, trunk: torch.Tensor, geo: Geometry) -> torch.Tensor:
        pooled = geo.gpool(self.g1_norm(self.g1_conv(trunk), geo))
        p = self.p1_conv(trunk) + self.gpool_to_bias(pooled)[:, :, None, None]
        p = self.p2_conv(self.p1_norm(p, geo)) + (geo.mask - 1.0) * OFF_BOARD_POLICY
        return torch.cat([p.flatten(1), self.pass_linear(pooled)], dim=1)


class ValueHead(nn.Module):
    """Value logits [N, 3], score columns [N, len(SCORE_OUTPUTS)], ownership [N, H, W]."""

    def __init__(self, c: int, hc: int, hidden: int):
        super().__init__()
        self.v1_conv = conv(c, hc, 1)
        self.v1_norm = NormAct(hc)
        self.v2 = nn.Linear(3 * hc, hidden)
        self.v3 = nn.Linear(hidden, 3)
        self.sv3 = nn.Linear(hidden, len(SCORE_OUTPUTS))
        self.own_conv = conv(hc, 1, 1)

    def output_layers(self) -> list[nn.Module]:
        return [self.v3, self.sv3, self.own_conv]

    def forward(self, trunk: torch.Tensor, geo: Geometry):
        v1 = self.v1_norm(self.v1_conv(trunk), geo)
        v2 = F.relu(self.v2(geo.value_pool(v1)))
        ownership = (self.own_conv(v1) * geo.mask)[:, 0]
        return self.v3(v2), self.sv3(v2), ownership


class DosakuNet(nn.Module):
    """forward(spatial [N,22,H,W], global [N,19]) -> (policy, value, score, ownership), the
    raw outputs of the model contract (docs/architecture.md#the-onnx-model-contract), all for
    the side to move."""

    def __init__(self, config: NetConfig):
        super().__init__()
        self.config = config
        c = config.channels
        self.initial_conv = conv(NUM_SPATIAL, c, 5)
        self.initial_linear = nn.Linear(NUM_GLOBAL, c, bias=False)
        self.blocks = nn.ModuleList(
            GPoolBlock(c, config.gpool_channels) if config.is_gpool(i) else ResBlock(c)
            for i in range(config.blocks))
        self.tip = NormAct(c)
        self.policy_head = PolicyHead(c, config.head_channels)
        self.value_head = ValueHead(c, config.head_channels, config.value_hidden)
        self._initialize()

    def _initialize(self) -> None:
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        for block in self.blocks:
            nn.init.zeros_(block.residual_out().weight)
        with torch.no_grad():
            for layer in self.policy_head.output_layers() + self.value_head.output_layers():
                layer.weight.mul_(OUTPUT_INIT_SCALE)

    def forward(self, spatial: torch.Tensor, global_in: torch.Tensor):
        geo = Geometry(spatial)
        t = self.initial_conv(spatial) + self.initial_linear(global_in)[:, :, None, None]
        for block in self.blocks:
            t = block(t, geo)
        trunk = self.tip(t, geo)
        value, score, ownership = self.value_head(trunk, geo)
        return self.policy_head(trunk, geo), value, score, ownership


def build_net(name: str, seed: int | None = None) -> DosakuNet:
    """A freshly initialised net of the named size (seeded when `seed` is given)."""
    if seed is not None:
        torch.manual_seed(seed)
    return DosakuNet(net_config(name))


def decayed_parameters(net: nn.Module) -> list[nn.Parameter]:
    """The weights that c*||theta||^2 applies to: convolution and linear weights (not the
    norms' scales and biases, nor linear biases)."""
    return [m.weight for m in net.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]


def parameter_count(net: nn.Module) -> int:
    return sum(math.prod(p.shape) for p in net.parameters())
