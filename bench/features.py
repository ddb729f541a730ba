"""Feature-fill time per position (KataGo V7 inputs), 9x9 and 19x19.

    python -m dosaku.bench.features [--seconds 1.0] [--batch 16]

Positions: the GNU Go self-play positions of KataGo's reference outputs in tests/data/ (real
games), or random legal games when a size has none there. Prints microseconds per position
for one fill_features call per batch, best of three slices (the cores are shared).
"""

import argparse
import json
import time

import numpy as np

from dosaku.bench.runner import KATAGO_REFERENCE
from dosaku.engine.evaluators.evaluator import PositionBatch
from dosaku.engine.evaluators.features import NUM_GLOBAL, NUM_SPATIAL, fill_features
from dosaku.engine.evaluators.positions import batch_row_from_game
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import parse_vertex, point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS


def reference_games(size):
    if not KATAGO_REFERENCE.exists():
        return []
    games = []
    for pos in json.loads(KATAGO_REFERENCE.read_text())["positions"]:
        if pos["board_size"] != size or not pos["id"].startswith("gnugo") or len(pos["moves"]) < 10:
            continue
        g = GameState(size, size, pos["komi"], PRESETS["chinese"])
        for c, v in pos["moves"]:
            g.play(BLACK if c == "B" else WHITE, parse_vertex(v, size, size))
        games.append(g)
    return games


def random_games(size, count, rng):
    games = []
    for _ in range(count):
        g = GameState(size, size, 7.5, PRESETS["chinese"])
        for _ in range(int(size * size * 0.6)):
            legal = np.flatnonzero(g.legal_mask(g.to_move)[:-1])
            if len(legal) == 0:
                break
            g.play(g.to_move, point_from_action(int(rng.choice(legal)), g.width, g.height))
        games.append(g)
    return games


def time_fill(games, size, batch_size, seconds):
    """Best time per position over batches that together cover every game at least once."""
    batches = []
    for first in range(0, max(len(games) // batch_size, 1) * batch_size, batch_size):
        batch = PositionBatch(batch_size, size, size, 7.5, PRESETS["chinese"])
        for i in range(batch_size):
            batch_row_from_game(batch, i, games[(first + i) % len(games)])
        batch.count = batch_size
        batches.append(batch)
    spatial = np.zeros((batch_size, NUM_SPATIAL, size, size), dtype=np.float32)
    glob = np.zeros((batch_size, NUM_GLOBAL), dtype=np.float32)
    syms = np.arange(batch_size) % 8
    fill_features(batches[0], spatial, glob, syms)
    best = float("inf")
    for _ in range(3):
        rounds, start = 0, time.perf_counter()
        while rounds < 3 or time.perf_counter() - start < seconds / 3:
            for batch in batches:
                fill_features(batch, spatial, glob, syms)
            rounds += 1
        best = min(best, (time.perf_counter() - start) / (rounds * len(batches) * batch_size))
    return best * 1e6


def measure(quick: bool) -> dict[str, tuple[float, str]]:
    """Figures for `python -m dosaku.bench`: microseconds per position at batch 16."""
    rng = np.random.default_rng(0)
    seconds = 0.3 if quick else 1.0
    figures = {}
    for size in (9, 19):
        for name, games in (("gnugo", reference_games(size)),
                            ("random", random_games(size, 8, rng))):
            if games:
                figures[f"{size}x{size} {name} positions"] = (time_fill(games, size, 16, seconds),
                                                              "us/position")
    return figures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"feature fill, microseconds per position (batch {args.batch}, best of 3 slices)")
    for size in (9, 19):
        for name, games in (("gnugo", reference_games(size)),
                            ("random", random_games(size, 8, rng))):
            if games:
                for b in sorted({1, args.batch}):
                    us = time_fill(games, size, b, args.seconds)
                    print(f"  {size}x{size} {name:<7} batch {b:>3}: {us:8.1f} us/position")


if __name__ == "__main__":
    main()
