"""Int8 copy of a converted network: onnxruntime static quantization of the trunk convolutions.

On CPUs with int8 dot-product instructions (AVX-512 VNNI, AVX-VNNI) the quantized trunk runs
about three times as many evaluations per CPU second as float32, on AVX2 alone 1.7 times. The
heads (policy, value, ownership) and the global-pooling matrix products stay in float32:
quantizing them costs the most accuracy for the least time. Activation ranges are calibrated on
positions of games the float32 net plays against itself (moves sampled from its policy), on 9x9
and 19x19, under random symmetries.

    python -m networks.quantize NET.onnx|NET.bin.gz OUT.onnx

The engine quantizes a network it plays once and caches the copy (networks/cache.py); the nets
Dosaku ships come with their int8 copies made by this module (weights/README.md).

Nets with attention (KataGo's transformer nets) are refused: their matrix products carry most of
their work, and with only their convolutions in int8 b10c384h6nbttflrs ran 5% faster but its
white win rate on the 9x9 reference positions moved by 0.03 on average and up to 0.14, where its
own symmetries differ by 0.005 and 0.05 (with the matrix products too: 1.7x, 0.05 and 0.25).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

from engine.constants import PASS_POINT
from engine.coords import point_from_action
from engine.evaluator import PositionBatch
from engine.features import NUM_GLOBAL, NUM_SPATIAL, fill_features
from engine.game import GameState
from engine.onnx_evaluator import OnnxEvaluator, OnnxModel, quantize_int8
from engine.positions import batch_row_from_game
from networks.cache import Model, onnx_for

RECIPE = "int8-trunk-v2"  # part of the cache name: change it when the recipe changes
# first outputs of the layers that stay float32 (names from networks/katago_convert.py)
FLOAT_LAYERS = ("p1_", "p2_", "g1_", "v1_", "vownership")
CALIBRATION = ((9, 7.0, 4), (19, 7.5, 1))  # (board size, komi, self-play games)
TEMPERATURE = 0.5  # of the move sampling: plausible games, yet not all alike


def self_play_inputs(model: OnnxModel, size: int, komi: float, games: int,
                     rng: np.random.Generator) -> list[dict[str, np.ndarray]]:
    """Network inputs of every position of `games` games the net plays against itself, each
    move drawn from its raw policy at TEMPERATURE; one random symmetry per position."""
    evaluator = OnnxEvaluator(model, seed=int(rng.integers(1 << 31)))
    feeds = []
    for _ in range(games):
        game = GameState(size, size, komi)
        passes = 0
        while passes < 2 and len(game.moves) < 2 * size * size:
            batch = PositionBatch(1, size, size, komi, game.rules)
            batch_row_from_game(batch, 0, game)
            batch.count = 1
            spatial = np.zeros((1, NUM_SPATIAL, size, size), np.float32)
            glob = np.zeros((1, NUM_GLOBAL), np.float32)
            fill_features(batch, spatial, glob, rng.integers(0, 8, 1))
            feeds.append({"spatial": spatial, "global": glob})
            batch.seed = int(rng.integers(1 << 31))
            weights = evaluator.evaluate(batch).policy[0].astype(np.float64) ** (1 / TEMPERATURE)
            action = int(rng.choice(len(weights), p=weights / weights.sum()))
            point = point_from_action(action, size, size)
            game.play(game.to_move, point)
            passes = passes + 1 if point == PASS_POINT else 0
    return feeds


def load_graph(src: Model) -> onnx.ModelProto:
    return onnx.load_from_string(src) if isinstance(src, bytes) else onnx.load(str(src))


def unsupported(graph: onnx.ModelProto) -> str | None:
    """Why this recipe does not suit the net, or None (see the module docstring)."""
    if any(node.op_type in ("Softmax", "MultiHeadAttention") for node in graph.graph.node):
        return "nets with attention (transformer nets) are not quantized: int8 costs them " \
               "far more accuracy than their own symmetry noise"
    return None


def quantize(src: Model | str, dst: str | Path, seed: int = 0) -> Path:
    """Write the int8 version of the float32 model `src` (a file or a serialized model) to
    `dst` (see the module docstring); ValueError for a net the recipe does not suit."""
    src = src if isinstance(src, bytes) else Path(src)
    graph = load_graph(src)
    reason = unsupported(graph)
    if reason is not None:
        raise ValueError(reason)
    rng = np.random.default_rng(seed)
    model = OnnxModel(src, threads=2)
    feeds = [f for size, komi, games in CALIBRATION
             for f in self_play_inputs(model, size, komi, games, rng)]
    for node in graph.graph.node:  # quantization excludes nodes by name; name them by output
        node.name = node.name or f"{node.op_type}:{node.output[0]}"
    keep = [n.name for n in graph.graph.node if n.output[0].startswith(FLOAT_LAYERS)]
    with tempfile.TemporaryDirectory() as tmp:
        named = Path(tmp) / "named.onnx"
        onnx.save(graph, str(named))
        quantize_int8(named, dst, feeds, keep)
    return Path(dst)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="float32 .onnx or a KataGo .bin.gz")
    ap.add_argument("output")
    args = ap.parse_args(argv)
    print(quantize(onnx_for(args.input), args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
