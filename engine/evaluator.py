"""The evaluator seam: what the search hands to a leaf evaluator and what it gets back.

The search fills a PositionBatch (preallocated arrays, one row per leaf) in numba, then makes
one `Evaluator.evaluate(batch)` call for the whole batch. Every evaluator (uniform, rollout,
ONNX network) sees the same batch, so they are interchangeable.
"""

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from engine import board as B
from engine.rules import Rules

HISTORY_MOVES = 5  # recent moves kept per position (KataGo V7 uses 5)
HISTORY_BOARDS = 2  # earlier boards kept per position (ladder features of 1 and 2 turns ago)


class PositionBatch:
    """Up to `capacity` positions to evaluate; the first `count` rows are filled.

    boards[i]            the position (a board array, see engine/board.py)
    history_boards[i, k] the board k + 1 plies earlier (a copy of the oldest known board when
                         the game is shorter)
    recent_points[i, k]  the point of the move k + 1 plies ago (most recent first), NULL_POINT
                         where the history is shorter; PASS_POINT for a pass
    recent_colors[i, k]  the colour that made that move (0 where none)
    to_move[i]           the side to move
    legal[i, a]          legal actions of the side to move (pass last)
    handicap_stones      the game's handicap (the rules' white handicap bonus depends on it)
    seed                 a fresh random number per evaluate call (e.g. to pick a symmetry)
    """

    def __init__(self, capacity: int, width: int, height: int, komi: float, rules: Rules):
        n = B.num_points(width, height)
        self.capacity = capacity
        self.width = width
        self.height = height
        self.komi = komi
        self.rules = rules
        self.seed = 0
        self.count = 0
        self.handicap_stones = 0
        self.boards = np.zeros((capacity, B.NUM_ROWS, n), dtype=np.int64)
        self.history_boards = np.zeros((capacity, HISTORY_BOARDS, B.NUM_ROWS, n), dtype=np.int64)
        self.recent_points = np.zeros((capacity, HISTORY_MOVES), dtype=np.int64)
        self.recent_colors = np.zeros((capacity, HISTORY_MOVES), dtype=np.int64)
        self.to_move = np.zeros(capacity, dtype=np.int64)
        self.legal = np.zeros((capacity, width * height + 1), dtype=np.bool_)


@dataclass
class Evaluation:
    """Evaluator output for the first `count` positions of a batch, from the side to move's view.

    policy         [count, W*H+1] probabilities, 0 on illegal actions, summing to 1
    value          [count] expected outcome in [-1, 1] (win = 1)
    score          [count] expected score lead in points
    ownership      [count, W*H] in [-1, 1] (+1 = side to move owns it), or None
    score_mean     [count] expected final score (KataGo's scoreMean), or None if the
                   evaluator does not tell it apart from the lead
    score_mean_sq  [count] expected squared final score (mean^2 + variance), or None
    """
    policy: np.ndarray
    value: np.ndarray
    score: np.ndarray
    ownership: np.ndarray | None = None
    score_mean: np.ndarray | None = None
    score_mean_sq: np.ndarray | None = None


class Evaluator(Protocol):
    """Anything that turns a PositionBatch into an Evaluation.

    Optional attributes the search reads: `needs_history` (default True; False lets the
    search skip filling history_boards), `has_priors` (default True; False makes the
    search use UCB1 instead of PUCT) and `parallel_calls` (default 1: how many evaluate calls,
    each on its own batch, the search may run at once from worker threads).
    """

    def evaluate(self, batch: PositionBatch) -> Evaluation: ...


class UniformEvaluator:
    """Uniform policy over legal moves, value 0: measures pure search overhead in tests."""

    needs_history = False

    def evaluate(self, batch: PositionBatch) -> Evaluation:
        legal = batch.legal[:batch.count].astype(np.float32)
        policy = legal / legal.sum(axis=1, keepdims=True)
        zeros = np.zeros(batch.count, dtype=np.float32)
        return Evaluation(policy, zeros, zeros.copy(), None)
