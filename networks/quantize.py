"""Int8 copy of a converted network: onnxruntime static quantization of the trunk convolutions.

On CPUs with AVX2 the quantized trunk runs more evaluations per CPU second than float32, several
times as many where the CPU has int8 dot products (AVX-512 VNNI, AVX-VNNI; the figures are in
docs/performance.md#int8-for-convolution-nets). The heads (policy, value, ownership) and the
global-pooling matrix products stay in float32: quantizing them costs the most accuracy for the
least time. So does the stem, the convolution of
the input features: its output starts the residual stream, and an error there reaches every
block. A convolution read only by a ReLU keeps the range ReLU passes, [0, max], so that its 8
bits do not go to values ReLU drops (relu_ranges). At equal visits on 19x19 the int8 net of
recipe v2, without these two, lost clearly to float32 (docs/history.md#int8). Activation ranges
are calibrated on positions of games the float32 net plays against itself (moves sampled from its
policy), on 9x9 and 19x19, under random symmetries.

    python -m dosaku.networks.quantize NET.onnx|NET.bin.gz OUT.onnx

The engine quantizes a network it plays once and caches the copy (networks/int8_copy.py); the nets
Dosaku ships come with their int8 copies made by this module (weights/README.md).

Transformer nets (KataGo's b10c384h6nbttflrs) take a recipe of their own, networks/int8_transformer:
their convolutions carry little of the work, and int8 moved their outputs far more than this
recipe's does b6c96's. Its calibration is shorter: one 9x9 game and the opening of a 19x19 one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from dosaku.engine.evaluators.features import NUM_GLOBAL, NUM_SPATIAL, fill_features
from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator, OnnxModel
from dosaku.engine.evaluators.onnx_options import DEFAULT_INT8_PRODUCTS
from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.rules.constants import PASS_POINT
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.networks import int8_transformer
from dosaku.networks.cache import Model, onnx_for
from dosaku.networks.calibration import quantize_int8

RECIPE = "int8-trunk-v3"  # part of the cache name: change it when the recipe changes
# first outputs of the layers that stay float32: the stem (networks/katago_convert.py names it
# conv1, training/export initial_conv) and the heads
FLOAT_LAYERS = ("conv1_", "initial_conv_", "p1_", "p2_", "g1_", "v1_", "vownership")
CALIBRATION = ((9, 7.0, 4), (19, 7.5, 1))  # (board size, komi, self-play games)
TRANSFORMER_CALIBRATION = ((9, 7.0, 1, 100), (19, 7.5, 1, 40))  # ... and most moves a game
TEMPERATURE = 0.5  # of the move sampling: plausible games, yet not all alike


def self_play_inputs(model: OnnxModel, size: int, komi: float, games: int,
                     rng: np.random.Generator,
                     max_moves: int | None = None) -> list[dict[str, np.ndarray]]:
    """Network inputs of every position of `games` games the net plays against itself (up to
    `max_moves` moves each), each move drawn from its raw policy at TEMPERATURE; one random
    symmetry per position."""
    evaluator = OnnxEvaluator(model, seed=int(rng.integers(1 << 31)))
    feeds = []
    for _ in range(games):
        game = GameState(size, size, komi)
        passes = 0
        while passes < 2 and len(game.moves) < (max_moves or 2 * size * size):
            batch = position_batch(game)
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


def recipe(graph: onnx.ModelProto, products: str = DEFAULT_INT8_PRODUCTS) -> str:
    """The name of the recipe that suits the net (part of its int8 copy's cache name); for a
    transformer, the one of `products` (int8_transformer.RECIPES)."""
    if int8_transformer.suits(graph):
        return int8_transformer.RECIPES[products].name
    return RECIPE


def unsupported(graph: onnx.ModelProto) -> str | None:
    """Why no recipe suits the net, or None: attention whose matrix products
    networks/katago_convert did not name (the convolution recipe would cost far more accuracy
    than the net's own symmetry noise)."""
    attention = any(n.op_type in ("Softmax", "MultiHeadAttention") for n in graph.graph.node)
    if attention and not int8_transformer.suits(graph):
        return "nets with attention not converted by this engine are not quantized"
    return None


def relu_ranges(graph: onnx.ModelProto) -> int:
    """Give each quantized convolution output that only ReLUs read the range [0, max] of its
    calibrated range (zero point 0): values below 0 then round to 0, which ReLU makes of them
    anyway, and the 8 bits span only what ReLU passes. Returns how many outputs changed."""
    initializers = {i.name: i for i in graph.graph.initializer}
    changed = 0
    for conv in [n for n in graph.graph.node if n.op_type == "Conv"]:
        quantized = int8_transformer.consumers(graph, conv.output[0])
        if len(quantized) != 1 or quantized[0].op_type != "QuantizeLinear":
            continue
        dequantized = int8_transformer.consumers(graph, quantized[0].output[0])
        if len(dequantized) != 1 or dequantized[0].op_type != "DequantizeLinear":
            continue
        users = int8_transformer.consumers(graph, dequantized[0].output[0])
        if not users or any(n.op_type != "Relu" for n in users):
            continue
        scale_name, zero_name = quantized[0].input[1:3]  # the DequantizeLinear reads the same
        zero = numpy_helper.to_array(initializers[zero_name])
        if zero.dtype != np.uint8 or int(zero) == 0:
            continue
        top = (255 - int(zero)) * float(numpy_helper.to_array(initializers[scale_name]))
        initializers[scale_name].CopyFrom(
            numpy_helper.from_array(np.array(top / 255, np.float32), scale_name))
        initializers[zero_name].CopyFrom(numpy_helper.from_array(np.array(0, np.uint8), zero_name))
        changed += 1
    return changed


def quantize(src: Model | str, dst: str | Path, seed: int = 0,
             products: str = DEFAULT_INT8_PRODUCTS) -> Path:
    """Write the int8 version of the float32 model `src` (a file or a serialized model) to
    `dst` by the recipe that suits it (see the module docstring; for a transformer, that of
    `products`); ValueError for a net no recipe suits."""
    src = src if isinstance(src, bytes) else Path(src)
    graph = load_graph(src)
    reason = unsupported(graph)
    if reason is not None:
        raise ValueError(reason)
    rng = np.random.default_rng(seed)
    model = OnnxModel(src, threads=2)
    if int8_transformer.suits(graph):
        feeds = [f for size, komi, games, moves in TRANSFORMER_CALIBRATION
                 for f in self_play_inputs(model, size, komi, games, rng, moves)]
        chosen = int8_transformer.RECIPES[products]
        int8_transformer.quantize_products(graph, feeds, chosen.roles, chosen.levels)
        onnx.save(graph, str(dst))
        return Path(dst)
    feeds = [f for size, komi, games in CALIBRATION
             for f in self_play_inputs(model, size, komi, games, rng)]
    for node in graph.graph.node:  # quantization excludes nodes by name; name them by output
        node.name = node.name or f"{node.op_type}:{node.output[0]}"
    keep = [n.name for n in graph.graph.node if n.output[0].startswith(FLOAT_LAYERS)]
    with tempfile.TemporaryDirectory() as tmp:
        named, quantized = Path(tmp) / "named.onnx", Path(tmp) / "quantized.onnx"
        onnx.save(graph, str(named))
        quantize_int8(named, quantized, feeds, keep)
        graph = onnx.load(str(quantized))
    relu_ranges(graph)
    onnx.save(graph, str(dst))
    return Path(dst)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="float32 .onnx or a KataGo .bin.gz")
    ap.add_argument("output")
    ap.add_argument("--products", choices=tuple(int8_transformer.RECIPES),
                    default=DEFAULT_INT8_PRODUCTS,
                    help="a transformer's products to quantize (int8_transformer.RECIPES)")
    args = ap.parse_args(argv)
    print(quantize(onnx_for(args.input), args.output, products=args.products))
    return 0


if __name__ == "__main__":
    sys.exit(main())
