"""Board speed: moves/s of random legal games and random playouts/s, 9x9 and 19x19, one core.

A playout copies an empty board into a scratch board and plays uniformly random legal moves
that fill no own eye-like point (engine.rules.board.random_playout) until two passes, so it is also
a random legal game; moves/s counts its moves (passes included). Each figure is the best of
three rounds timed in CPU time of this process (the cores are shared), after a warm-up that
also triggers the JIT compile.

    python -m dosaku.bench.board [--seconds 1.5]
"""

import argparse
import time

import numpy as np
from numba import njit

from dosaku.bench.runner import print_figures
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK


# Not cached on purpose: numba's cache does not notice changes in engine/rules/board.py, so a cached
# caller would keep timing the board code it was first compiled with.
@njit
def run_playouts(root, scratch, count, allow_suicide):
    """Play `count` playouts from root; returns the total number of moves played."""
    moves = 0
    max_moves = 3 * root[B.ROW_HEADER, B.H_WIDTH] * root[B.ROW_HEADER, B.H_HEIGHT]
    for _ in range(count):
        B.copy_board(scratch, root)
        moves += B.random_playout(scratch, BLACK, allow_suicide, max_moves)
    return moves


def best_rates(size, seconds):
    """(playouts/s, moves/s), the best of three rounds of `seconds` CPU time each."""
    root = B.new_board(size, size)
    scratch = np.empty_like(root)
    run_playouts(root, scratch, 20, False)  # warm-up
    batch = 50 if size >= 13 else 200
    best = (0.0, 0.0)
    for _ in range(3):
        count, moves, start = 0, 0, time.process_time()
        while time.process_time() - start < seconds:
            moves += run_playouts(root, scratch, batch, False)
            count += batch
        elapsed = time.process_time() - start
        if count / elapsed > best[0]:
            best = (count / elapsed, moves / elapsed)
    return best


def rates(seconds: float, per_playout: bool = False) -> dict[str, tuple[float, str]]:
    """Both sizes' figures, each the best of three rounds of `seconds` CPU time."""
    B.seed_rng(12345)
    figures = {}
    for size in (9, 19):
        playouts, moves = best_rates(size, seconds)
        figures[f"{size}x{size} random-game moves"] = (moves / 1e6, "M moves/s")
        figures[f"{size}x{size} playouts"] = (playouts, "playouts/s")
        if per_playout:
            figures[f"{size}x{size} moves per playout"] = (moves / playouts, "moves")
    return figures


def measure(quick: bool) -> dict[str, tuple[float, str]]:
    """Figures for `python -m dosaku.bench`."""
    return rates(0.3 if quick else 1.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="CPU seconds per round")
    args = parser.parse_args()
    print_figures(rates(args.seconds, per_playout=True))


if __name__ == "__main__":
    main()
