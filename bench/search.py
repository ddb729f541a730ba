"""Search speed: visits/s with the uniform evaluator (pure search overhead) on 9x9 and 19x19,
and playouts/s of the rollout evaluator (alone, and inside the search).

    python -m dosaku.bench.search [--visits N] [--playouts N]

Each search runs twice on the same Search object and the second run is timed, so numba
compilation and first-touch page faults of the tree arrays are left out.
"""

import argparse
import time

from dosaku.bench.runner import B6C96_MODEL, Skip
from dosaku.engine.evaluators.evaluator import PositionBatch, UniformEvaluator
from dosaku.engine.evaluators.rollout import RolloutEvaluator
from dosaku.engine.rules.game import GameState
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits


def search_rate(evaluator, size: int, visits: int, batch: int) -> tuple[float, float]:
    """(microseconds per visit, visits per second) of a search from the empty board."""
    g = GameState(size, size, 7.5)
    s = Search(evaluator, SearchConfig(batch_size=batch), seed=1)
    s.run(g, 1, SearchLimits(visits=visits))
    s.reset()
    t0 = time.perf_counter()
    n = s.run(g, 1, SearchLimits(visits=visits))
    dt = time.perf_counter() - t0
    return dt / n * 1e6, n / dt


def playout_rate(size: int, count: int) -> float:
    """Random playouts per second from the empty board (evaluator alone)."""
    g = GameState(size, size, 7.5)
    batch = PositionBatch(64, size, size, 7.5, g.rules)
    batch.boards[:] = g.board
    batch.to_move[:] = 1
    batch.legal[:] = True
    batch.count = 64
    ev = RolloutEvaluator()
    ev.evaluate(batch)
    t0 = time.perf_counter()
    done = 0
    while done < count:
        ev.evaluate(batch)
        done += 64
    return done / (time.perf_counter() - t0)


def measure_uniform(quick: bool) -> dict[str, tuple[float, str]]:
    """Pure search overhead per visit, and rollout playouts/s inside the search."""
    visits = 5000 if quick else 20000
    figures = {}
    for size in (9, 19):
        us, _ = search_rate(UniformEvaluator(), size, visits, 16)
        figures[f"uniform evaluator {size}x{size}, batch 16"] = (us, "us/visit")
    for size in (9, 19):
        _, rate = search_rate(RolloutEvaluator(), size, 1000 if quick else 5000, 8)
        figures[f"rollout search {size}x{size}, batch 8"] = (rate, "playouts/s")
    return figures


def measure_onnx(quick: bool) -> dict[str, tuple[float, str]]:
    """Visits/s of the search with the b6c96 network as the engine runs it (two one-thread
    evaluations in flight, batches growing to 16, cache off), float32 and int8."""
    if not B6C96_MODEL.exists():
        raise Skip(f"no network at {B6C96_MODEL}")
    from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator, OnnxModel
    from dosaku.networks.cache import onnx_for
    from dosaku.networks.int8_copy import int8_for
    figures = {}
    float_model = onnx_for(B6C96_MODEL)
    for name, path in (("b6c96", float_model), ("b6c96 int8", int8_for(float_model))):
        evaluator = OnnxEvaluator(OnnxModel(path, threads=1), seed=1, parallel_calls=2)
        for size in (9, 19):
            _, rate = search_rate(evaluator, size, 200 if quick else 800, 16)
            figures[f"{name} search {size}x{size}, 2 evaluations in flight"] = (rate, "visits/s")
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--visits", type=int, default=20000)
    ap.add_argument("--playouts", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    for size in (9, 19):
        us, rate = search_rate(UniformEvaluator(), size, args.visits, args.batch)
        print(f"uniform  {size:2d}x{size:<2d} batch {args.batch}: {us:6.2f} us/visit "
              f"({rate:8.0f} visits/s, {args.visits} visits)")
    for size in (9, 19):
        print(f"rollout  {size:2d}x{size:<2d} evaluator alone: "
              f"{playout_rate(size, args.playouts):8.0f} playouts/s")
        us, rate = search_rate(RolloutEvaluator(), size, args.playouts, 8)
        print(f"rollout  {size:2d}x{size:<2d} search batch 8: {rate:8.0f} playouts/s")


if __name__ == "__main__":
    main()
