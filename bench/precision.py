"""Reduced-precision copies of the default net against float32, on the CPU at hand: speed and
KataGo's accuracy gate. Measures what docs/performance.md#reduced-precision-on-an-avx2-only-cpu
reports; not in `python -m dosaku.bench` (it calibrates and quantizes for minutes).

    python -m dosaku.bench.precision [--rounds 4] [--seconds 2.5] [--only NAME ...]

The copies, all from networks/katago_convert.py's graph, whose big products are named by role:
float32; float32 with Q/K/V and FFN up+gate fused (one product of concatenated weights, then a
Split); today's int8 recipe (networks/int8_transformer.py); every role in int8 the same way
(SmoothQuant + GPTQ, per-tensor dynamic activations) with 7-bit weights, so that AVX2 without
VNNI takes the uint8 x int8 kernel, unfused and fused, and with 8-bit weights; and
onnxruntime's MatMulNBits, 8-bit weights with a scale per block of 32 along K, accuracy_level 4
(int8 products, activations quantized per block).

Speed: evaluations per wall second and per CPU second of this process, 9x9 in batches of 16 and
19x19 in batches of 8, one session of two threads and two one-thread sessions side by side (as
the engine runs), the copies interleaved round by round; medians over rounds, as other jobs
share the cores. Gate (the issue's): on KataGo's 48 reference positions, the mean errors of win
rate, lead and policy against KataGo no larger than the float net's under symmetries 1..7, and
the float net's top move (symmetry 0) kept on at least 95 % of the positions.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

from dosaku.bench.nn import parallel_runs
from dosaku.bench.runner import B10_MODEL, TEST_DATA
from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
from dosaku.engine.evaluators.raw_nn import raw_nn_batch
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import rules_by_name
from dosaku.networks import int8_transformer as it
from dosaku.networks.cache import onnx_for
from dosaku.networks.katago_convert import ROLES
from dosaku.networks.quantize import TRANSFORMER_CALIBRATION, self_play_inputs

REFERENCE = TEST_DATA / "katago-b10c384h6-raw-nn.json"
GFLOP = {9: 1.80, 19: 9.56}  # per evaluation (docs/performance.md)
SHAPES = ((9, 16), (19, 8))  # (board size, batch)
FUSED = {"attention_qkv": ("attention_q", "attention_k", "attention_v"),
         "ffn_up_gate": ("ffn_up", "ffn_gate")}
NBITS_BLOCK = 32


def fuse(graph: onnx.ModelProto) -> None:
    """Each layer's products of one FUSED group (they read one input) become one product of
    the concatenated weights, named by the group, and a Split into the old outputs."""
    inits = {i.name: i for i in graph.graph.initializer}
    for group, roles in FUSED.items():
        layers: dict[str, list] = {}
        for node in graph.graph.node:
            if it.role(node) in roles:
                layers.setdefault(node.input[0], []).append(node)
        for x, nodes in layers.items():
            nodes.sort(key=lambda n: roles.index(it.role(n)))
            weights = [numpy_helper.to_array(inits[n.input[1]]) for n in nodes]
            name = f"{group}:{nodes[0].name.partition(':')[2]}"
            graph.graph.initializer.extend([
                numpy_helper.from_array(np.concatenate(weights, axis=1), f"{name}_w"),
                numpy_helper.from_array(np.array([w.shape[1] for w in weights]), f"{name}_n")])
            product = helper.make_node("MatMul", [x, f"{name}_w"], [f"{name}_y"], name=name)
            split = helper.make_node("Split", [f"{name}_y", f"{name}_n"],
                                     [n.output[0] for n in nodes], axis=-1)
            replace_nodes(graph, nodes, [product, split])
    it.drop_unused_initializers(graph)


def replace_nodes(graph: onnx.ModelProto, old: list, new: list) -> None:
    nodes = list(graph.graph.node)
    at = min(nodes.index(n) for n in old)
    nodes = [n for n in nodes if n not in old]
    nodes[at:at] = new
    del graph.graph.node[:]
    graph.graph.node.extend(nodes)


def nbits_weights(w: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """MatMulNBits' 8-bit layout of w [K, N]: uint8 [N, K/block, block] holding q + 128 (its
    default zero point) and float32 scales [N * K/block], max |w| / 127 of each block."""
    k, n = w.shape
    if k % block:
        raise ValueError(f"{k} input channels are not whole blocks of {block}")
    blocks = w.T.reshape(n, k // block, block)
    scale = np.abs(blocks).max(axis=2) / 127
    scale[scale == 0] = 1.0
    q = np.clip(np.round(blocks / scale[..., None]), -127, 127) + 128
    return q.astype(np.uint8), scale.astype(np.float32).ravel()


def to_nbits(graph: onnx.ModelProto, block: int = NBITS_BLOCK) -> None:
    """Every role's product becomes MatMulNBits (8 bits, accuracy_level 4)."""
    inits = {i.name: i for i in graph.graph.initializer}
    for node in [n for n in graph.graph.node if it.role(n) in ROLES and n.op_type == "MatMul"]:
        w = numpy_helper.to_array(inits[node.input[1]])
        q, scale = nbits_weights(w, block)
        graph.graph.initializer.extend([numpy_helper.from_array(q, f"{node.name}_q8"),
                                        numpy_helper.from_array(scale, f"{node.name}_s8")])
        node.CopyFrom(helper.make_node(
            "MatMulNBits", [node.input[0], f"{node.name}_q8", f"{node.name}_s8"],
            list(node.output), name=node.name, domain="com.microsoft", K=w.shape[0],
            N=w.shape[1], bits=8, block_size=block, accuracy_level=4))
    it.drop_unused_initializers(graph)


def copies(path, feeds, names: list[str] | None = None) -> dict[str, bytes]:
    """The serialized copies by name (the module docstring lists them), all or `names`."""
    every = ROLES + tuple(FUSED)

    def int8_all(graph):
        it.quantize_products(graph, feeds, every, it.RECIPES["all"].levels)
    recipes = {
        "float32": (),
        "float32 fused": (fuse,),
        "int8 today": (lambda graph: it.quantize_products(graph, feeds),),
        "int8 all, 7-bit w": (int8_all,),
        "int8 all, 8-bit w": (lambda graph: it.quantize_products(graph, feeds, ROLES),),
        "int8 all, 7-bit w, fused": (fuse, int8_all),
        "MatMulNBits 8-bit b32": (to_nbits,),
    }
    unknown = set(names or ()) - set(recipes)
    if unknown:
        raise ValueError(f"unknown copies {sorted(unknown)} (from {list(recipes)})")
    graphs = {}
    for name, steps in recipes.items():
        if names is None or name in names or name == "float32":
            graph = onnx.load(str(path))
            for step in steps:
                step(graph)
            graphs[name] = graph.SerializeToString()
    return graphs


def rate(models: list[OnnxModel], size: int, batch: int, seconds: float) -> tuple[float, float]:
    """(evaluations per wall second, per CPU second) of the models running side by side."""
    done, wall, cpu = parallel_runs(models, batch, size, seconds)
    return done / wall, done / cpu


def speeds(graphs: dict[str, bytes], rounds: int, seconds: float) -> None:
    sessions = {(name, mode): [OnnxModel(g, threads=t) for _ in range(count)]
                for name, g in graphs.items()
                for mode, t, count in (("2 threads", 2, 1), ("2 x 1 thread", 1, 2))}
    found: dict[tuple, list] = {}
    print(f"load average before: {os.getloadavg()}")
    for _ in range(rounds):
        for size, batch in SHAPES:
            for (name, mode), models in sessions.items():
                found.setdefault((size, mode, name), []).append(rate(models, size, batch,
                                                                     seconds))
    print(f"load average after: {os.getloadavg()}")
    print("evaluations a second (wall | CPU second), medians; GFLOP/s by wall")
    for (size, mode, name), values in sorted(found.items(), key=lambda kv: kv[0][:2]):
        wall, cpu = np.median(values, axis=0)
        base = np.median(found[(size, mode, "float32")], axis=0)
        print(f"{size:>2}x{size:<2} {mode:13} {name:25} {wall:7.2f} ({wall / base[0]:.2f}x) "
              f"{wall * GFLOP[size]:6.1f} GFLOP/s | {cpu:7.2f} ({cpu / base[1]:.2f}x)")


def replay(pos: dict) -> GameState:
    n = pos["board_size"]
    game = GameState(n, n, pos["komi"], rules_by_name(pos["rules"]))
    for color, vertex in pos["moves"]:
        game.play(BLACK if color == "B" else WHITE, parse_vertex(vertex, n, n))
    return game


def outputs(model: OnnxModel, positions: list[dict], symmetry: int) -> list:
    """raw_nn of every position (in order), one network call per board size."""
    found = {}
    for size in {p["board_size"] for p in positions}:
        ids = [i for i, p in enumerate(positions) if p["board_size"] == size]
        found.update(zip(ids, raw_nn_batch(model, [replay(positions[i]) for i in ids],
                                           symmetry)))
    return [found[i] for i in range(len(positions))]


def errors(raw: list, positions: list[dict]) -> dict[str, np.ndarray]:
    """|error| against KataGo of the white win rate, the lead and the largest policy one."""
    ref = [p["raw_nn"] for p in positions]
    return {
        "win": np.array([abs(o.white_win - r["whiteWin"]) for o, r in zip(raw, ref)]),
        "lead": np.array([abs(o.white_lead - r["whiteLead"]) for o, r in zip(raw, ref)]),
        "policy": np.array([np.nanmax(np.abs(o.policy - np.array(r["policy"], float)))
                            for o, r in zip(raw, ref)])}


def top_moves(raw: list) -> np.ndarray:
    return np.array([np.nanargmax(np.append(o.policy.ravel(), o.policy_pass)) for o in raw])


def gate(graphs: dict[str, bytes]) -> None:
    positions = json.loads(REFERENCE.read_text())["positions"]
    float32 = OnnxModel(graphs["float32"], threads=2)
    turned = [outputs(float32, positions, s) for s in range(1, 8)]
    noise = {k: np.mean([errors(t, positions)[k] for t in turned]) for k in ("win", "lead",
                                                                           "policy")}
    top = top_moves(outputs(float32, positions, 0))
    kept = [np.mean(top_moves(t) == top) for t in turned]
    print(f"\nfloat32, symmetries 1..7: mean error win {noise['win']:.4f} lead "
          f"{noise['lead']:.3f} policy {noise['policy']:.4f}; top move of symmetry 0 kept "
          f"{min(kept):.2f}-{max(kept):.2f}")
    for name, g in graphs.items():
        raw = outputs(OnnxModel(g, threads=2), positions, 0)
        err = {k: float(np.mean(v)) for k, v in errors(raw, positions).items()}
        same = float(np.mean(top_moves(raw) == top))
        passed = all(err[k] <= noise[k] for k in err) and same >= 0.95
        print(f"{name:25} win {err['win']:.4f} lead {err['lead']:.3f} policy "
              f"{err['policy']:.4f} top move kept {same:.2f}: {'passes' if passed else 'fails'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=2.5, help="per copy and shape a round")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="copies to compare (float32 too)")
    args = ap.parse_args(argv)
    path = onnx_for(B10_MODEL)
    rng = np.random.default_rng(0)
    model = OnnxModel(path, threads=2)
    feeds = [f for size, komi, games, moves in TRANSFORMER_CALIBRATION
             for f in self_play_inputs(model, size, komi, games, rng, moves)]
    graphs = copies(path, feeds, args.only)
    speeds(graphs, args.rounds, args.seconds)
    gate(graphs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
