"""Board speed: random games (moves/s) and random playouts (playouts/s) on one core.

A playout copies an empty board into a scratch board and plays uniformly random legal moves
that fill no own eye-like point (engine.board.random_playout) until two passes. Each figure
is the best of several rounds timed in CPU time of this process (the machine may be
shared), after a warm-up that also triggers the JIT compile.

    PYTHONPATH=. python bench/board.py [--seconds 2] [--rounds 3]
"""

import argparse
import time

import numpy as np
from numba import njit

from engine import board as B
from engine.constants import BLACK


# Not cached on purpose: numba's cache does not notice changes in engine/board.py, so a cached
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


def measure(size, seconds, rounds):
    root = B.new_board(size, size)
    scratch = np.empty_like(root)
    run_playouts(root, scratch, 20, False)  # warm-up
    best = (0.0, 0.0)
    for _ in range(rounds):
        count, moves, start = 0, 0, time.process_time()
        batch = 50 if size >= 13 else 200
        while time.process_time() - start < seconds:
            moves += run_playouts(root, scratch, batch, False)
            count += batch
        elapsed = time.process_time() - start
        if count / elapsed > best[0]:
            best = (count / elapsed, moves / elapsed)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per size (best is shown)")
    args = parser.parse_args()
    B.seed_rng(12345)
    for size in (9, 19):
        playouts, moves = measure(size, args.seconds, args.rounds)
        print(f"{size}x{size}: {moves / 1e6:6.2f} M moves/s  {playouts:9.0f} playouts/s  "
              f"({moves / playouts:.0f} moves per playout)")


if __name__ == "__main__":
    main()
