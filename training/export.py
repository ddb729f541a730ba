"""Export a DosakuNet (a training checkpoint, or fresh weights for generation 0) to ONNX.

The net follows KataGo's v8 architecture (training/model.py), so its weights are written into
katago_bin's records and built by the same graph builder as converted KataGo nets
(katago_convert.build_onnx): the file has the same inputs, outputs, IR/opset versions and
metadata keys, and the engine treats it exactly like a converted net. Provenance (net size,
training steps, checkpoint sha256 or initialisation seed) is added to the metadata.

Every export is checked before it replaces OUT: the file is loaded through the engine's
OnnxModel and its outputs must equal PyTorch's within 1e-4 (relative above 1) on random
positions of two board sizes; ExportMismatch otherwise.

    python -m dosaku.training.export CHECKPOINT|RUN_DIR OUT.onnx [--policy-temperature T]
    python -m dosaku.training.export --random b6c96 [--seed 0] OUT.onnx

--policy-temperature T divides the policy logits by T (the last policy layers' weights, so the
graph is unchanged): a student trained on a teacher's soft policy comes out flatter than its
teacher, and a search at few visits spreads them over too many moves. Kept in the metadata.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from pathlib import Path

import numpy as np
import torch
from onnx import helper

from dosaku.engine.evaluators.features import FEATURE_SET, NUM_GLOBAL, NUM_SPATIAL
from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
from dosaku.networks import katago_bin as kb
from dosaku.networks import katago_convert as kc
from dosaku.training.checkpoint import load_checkpoint, resolve_checkpoint
from dosaku.training.model import SCORE_OUTPUTS, SCORE_SCALE, DosakuNet, build_net

MODEL_VERSION = 8  # the KataGo architecture version the net follows (V7 input features)
CHECK_SIZES = (9, 19)
TOLERANCE = 1e-4
OUTPUTS = ("policy", "value", "score", "ownership")
MULTIPLIERS = tuple(SCORE_SCALE if name in ("score_mean", "score_stdev", "lead") else default
                    for name, default in zip(kb.MULTIPLIER_NAMES, kb.DEFAULT_MULTIPLIERS))


class ExportMismatch(RuntimeError):
    """onnxruntime's outputs for the exported file differ from PyTorch's."""


# ------------------------------------------------------------------ torch -> KataGo records

def _conv(name: str, layer: torch.nn.Conv2d) -> kb.Conv:
    return kb.Conv(name, layer.weight.detach().numpy().transpose(2, 3, 1, 0).copy())  # OIHW->HWIO


def _matmul(name: str, layer: torch.nn.Linear) -> kb.MatMul:
    return kb.MatMul(name, layer.weight.detach().numpy().T.copy())


def _bias(name: str, layer: torch.nn.Linear) -> kb.MatBias:
    return kb.MatBias(name, layer.bias.detach().numpy().copy())


def _norm(name: str, norm) -> kb.Norm:
    """A scale-and-bias norm as KataGo's record: mean 0, variance 1, epsilon 0."""
    scale = norm.scale.detach().numpy().copy()
    return kb.Norm(name, np.zeros_like(scale), np.ones_like(scale), 0.0, scale,
                   norm.bias.detach().numpy().copy())


def _relu(name: str) -> kb.Act:
    return kb.Act(name, "ACTIVATION_RELU")


def _block(name: str, b) -> kb.OrdinaryBlock | kb.GPoolBlock:
    if hasattr(b, "conv_gpool"):
        return kb.GPoolBlock(name, _norm(f"{name}/pre", b.pre), _relu(f"{name}/pre"),
                             _conv(f"{name}/regular", b.conv_regular),
                             _conv(f"{name}/gpool", b.conv_gpool),
                             _norm(f"{name}/gpool", b.gpool_norm), _relu(f"{name}/gpool"),
                             _matmul(f"{name}/gpool_to_bias", b.gpool_to_bias),
                             _norm(f"{name}/mid", b.mid), _relu(f"{name}/mid"),
                             _conv(f"{name}/final", b.conv_final))
    return kb.OrdinaryBlock(name, _norm(f"{name}/pre", b.pre), _relu(f"{name}/pre"),
                            _conv(f"{name}/conv1", b.conv1), _norm(f"{name}/mid", b.mid),
                            _relu(f"{name}/mid"), _conv(f"{name}/conv2", b.conv2))


def to_katago(net: DosakuNet, name: str, sha256: str = "") -> kb.KataModel:
    """The net's weights as a parsed KataGo v8 model (what katago_convert builds from)."""
    net = net.cpu()
    cfg = net.config
    header = (cfg.blocks, cfg.channels, cfg.channels, cfg.channels - cfg.gpool_channels, 0,
              cfg.gpool_channels)
    trunk = kb.Trunk("trunk", header, _conv("initial_conv", net.initial_conv),
                     _matmul("initial_matmul", net.initial_linear),
                     [_block(f"block{i}", b) for i, b in enumerate(net.blocks)],
                     _norm("trunk_tip", net.tip), _relu("trunk_tip"))
    p = net.policy_head
    policy = kb.PolicyHead("policy", 1, _conv("p1", p.p1_conv), _conv("g1", p.g1_conv),
                           _norm("g1", p.g1_norm), _relu("g1"),
                           _matmul("policy_gpool_to_bias", p.gpool_to_bias),
                           _norm("p1", p.p1_norm), _relu("p1"), _conv("p2", p.p2_conv),
                           _matmul("pass", p.pass_linear))
    v = net.value_head
    value = kb.ValueHead("value", _conv("v1", v.v1_conv), _norm("v1", v.v1_norm), _relu("v1"),
                         _matmul("v2", v.v2), _bias("v2", v.v2), _relu("v2"),
                         _matmul("v3", v.v3), _bias("v3", v.v3), _matmul("sv3", v.sv3),
                         _bias("sv3", v.sv3), _conv("ownership", v.own_conv))
    return kb.KataModel(name, MODEL_VERSION, net.initial_conv.in_channels,
                        net.initial_linear.in_features, MULTIPLIERS, trunk, policy, value,
                        sha256=sha256)


# ------------------------------------------------------------------ export and check

def random_positions(rng: np.random.Generator, n: int, size: int):
    """Random 0/1 input planes of a full size x size board and random globals."""
    spatial = (rng.random((n, NUM_SPATIAL, size, size)) < 0.3).astype(np.float32)
    spatial[:, 0] = 1.0
    glob = rng.normal(0.0, 0.5, (n, NUM_GLOBAL)).astype(np.float32)
    return spatial, glob


def check_export(net: DosakuNet, path: str | Path, sizes=CHECK_SIZES, seed: int = 0) -> float:
    """Largest output difference (relative above 1) between the engine's OnnxModel on `path`
    and the net on random positions of each board size; ExportMismatch above TOLERANCE."""
    model = OnnxModel(path)
    rng = np.random.default_rng(seed)
    net = net.cpu().eval()
    worst = 0.0
    for size in sizes:
        spatial, glob = random_positions(rng, 4, size)
        got = model.run(spatial, glob)
        with torch.no_grad():
            want = net(torch.from_numpy(spatial), torch.from_numpy(glob))
        for key, ref in zip(OUTPUTS, want):
            ref = ref.numpy()
            if got[key].shape != ref.shape:
                raise ExportMismatch(f"{path}: {key} has shape {got[key].shape}, PyTorch's "
                                     f"{ref.shape} on {size}x{size}")
            diff = float(np.max(np.abs(got[key] - ref) / np.maximum(1.0, np.abs(ref))))
            if not diff <= TOLERANCE:
                raise ExportMismatch(f"{path}: {key} differs from PyTorch by {diff:.3g} "
                                     f"(> {TOLERANCE:g}) on {size}x{size}")
            worst = max(worst, diff)
    return worst


def sharpened(net: DosakuNet, temperature: float) -> DosakuNet:
    """A copy of the net whose policy logits (board and pass) are the net's divided by
    `temperature`; off-board points stay far below every legal move."""
    if not temperature > 0:
        raise ValueError(f"policy temperature {temperature} must be positive")
    net = copy.deepcopy(net)
    with torch.no_grad():
        for layer in net.policy_head.output_layers():
            layer.weight /= temperature
            if layer.bias is not None:
                layer.bias /= temperature
    return net


def export_net(net: DosakuNet, out_path: str | Path, training_steps: int,
               checkpoint_sha: str = "", init_seed: int | None = None,
               check_sizes=CHECK_SIZES, policy_temperature: float = 1.0) -> Path:
    """Write the net as ONNX with provenance metadata, checked against PyTorch first."""
    if policy_temperature != 1.0:
        net = sharpened(net, policy_temperature)
    net_name = net.config.name
    name = f"dosaku-{net_name}-s{training_steps}"
    kata = to_katago(net, name, checkpoint_sha)
    proto = kc.build_onnx(kata)
    props = kc.metadata(kata)
    assert (props["feature_set"], props["score_outputs"]) == (FEATURE_SET, ",".join(SCORE_OUTPUTS))
    provenance = f"checkpoint sha256={checkpoint_sha}" if checkpoint_sha else \
        f"random initialisation, seed {init_seed}"
    props.update({"source": f"dosaku {net_name}, {training_steps} training steps, {provenance}",
                  "net": net_name, "training_steps": str(training_steps),
                  "checkpoint_sha256": checkpoint_sha})
    if init_seed is not None:
        props["init_seed"] = str(init_seed)
    if policy_temperature != 1.0:
        props["policy_temperature"] = f"{policy_temperature:g}"
    helper.set_model_props(proto, props)
    out_path = Path(out_path)
    staged = kc.save(proto, out_path.with_name(out_path.name + ".staged"))
    try:
        check_export(net, staged, check_sizes)
        os.replace(staged, out_path)
    finally:
        if staged.exists():
            staged.unlink()
    return out_path


def export_checkpoint(checkpoint: str | Path, out_path: str | Path,
                      check_sizes=CHECK_SIZES, policy_temperature: float = 1.0) -> Path:
    """Export a checkpoint file (or a run directory's latest checkpoint)."""
    path = resolve_checkpoint(checkpoint)
    state = load_checkpoint(path)
    net = build_net(state["net"])
    net.load_state_dict(state["model"])
    return export_net(net, out_path, state["step"], kb.file_sha256(path),
                      check_sizes=check_sizes, policy_temperature=policy_temperature)


def export_random(net_name: str, out_path: str | Path, seed: int = 0,
                  check_sizes=CHECK_SIZES) -> Path:
    """Export freshly initialised weights: generation 0 of a training loop."""
    return export_net(build_net(net_name, seed), out_path, 0, init_seed=seed,
                      check_sizes=check_sizes)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dosaku.training.export",
                                 description="Export a Dosaku checkpoint (or random weights) "
                                             "to ONNX, checked against PyTorch.")
    ap.add_argument("source", nargs="?",
                    help="checkpoint file, or a run directory (its latest checkpoint)")
    ap.add_argument("output", help="the .onnx file to write")
    ap.add_argument("--random", metavar="NET", help="export fresh weights of this size (b6c96)")
    ap.add_argument("--seed", type=int, default=0, help="initialisation seed for --random")
    ap.add_argument("--policy-temperature", type=float, default=1.0,
                    help="divide the policy logits by this (below 1: a sharper policy)")
    args = ap.parse_args(argv)
    if (args.source is None) == (args.random is None):
        ap.error("give either a checkpoint/run directory or --random NET")
    try:
        if args.random:
            out = export_random(args.random, args.output, args.seed)
        else:
            out = export_checkpoint(args.source, args.output,
                                    policy_temperature=args.policy_temperature)
    except (ValueError, FileNotFoundError, ExportMismatch) as err:
        print(f"export failed: {err}", file=sys.stderr)
        return 1
    meta = OnnxModel(out).meta
    print(f"{out}: {meta['source']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
