"""The evaluator seam: what the search hands to a leaf evaluator and what it gets back.

The search fills a PositionBatch (preallocated arrays, one row per leaf) in numba, then makes
one `Evaluator.evaluate(batch)` call for the whole batch. Every evaluator (uniform, rollout,
ONNX network) sees the same batch, so they are interchangeable.
"""

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dosaku.engine.rules import board as B
from dosaku.engine.rules.rulesets import Rules

HISTORY_MOVES = 5  # recent moves kept per position (KataGo V7 uses 5)
HISTORY_BOARDS = 2  # earlier boards kept per position (ladder features of 1 and 2 turns ago)


class PositionBatch:
    """Up to `capacity` positions to evaluate; the first `count` rows are filled.

    boards[i]            the position (a board array, see engine/rules/board.py)
    history_boards[i, k] the board k + 1 plies earlier (a copy of the oldest known board when
                         the game is shorter)
    recent_points[i, k]  the point of the move k + 1 plies ago (most recent first), NULL_POINT
                         where the history is shorter; PASS_POINT for a pass
    recent_colors[i, k]  the colour that made that move (0 where none)
    to_move[i]           the side to move
    legal[i, a]          legal actions of the side to move (pass last)
    handicap_stones      the game's handicap (the rules' white handicap bonus depends on it)
    seed                 a fresh random number per evaluate call (e.g. to pick a symmetry)
    policy_optimism      share of a network's optimistic policy head mixed into its policy
                         logits (KataGo's policy optimism); evaluators without that head
                         (Capabilities.optimistic_policy) ignore it
    """

    def __init__(self, capacity: int, width: int, height: int, komi: float, rules: Rules):
        n = B.num_points(width, height)
        self.capacity = capacity
        self.width = width
        self.height = height
        self.komi = komi
        self.rules = rules
        self.seed = 0
        self.policy_optimism = 0.0
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
    shortterm_error [count, 2] the net's predicted short-term error of its value and of its
                   score in points (KataGo's shorttermWinlossError, shorttermScoreError), or
                   None from an evaluator without such heads
    no_result      [count] probability of no result (a network's third value output), or None
    var_time_left  [count] a network's KataGo varTimeLeft, or None (nets without the
                   short-term heads)
    The search weighs playouts by shortterm_error (engine/search/uncertainty.py); the other
    fields after `score` are what analysis reports of the root's own evaluation.
    """
    policy: np.ndarray
    value: np.ndarray
    score: np.ndarray
    ownership: np.ndarray | None = None
    score_mean: np.ndarray | None = None
    score_mean_sq: np.ndarray | None = None
    shortterm_error: np.ndarray | None = None
    no_result: np.ndarray | None = None
    var_time_left: np.ndarray | None = None


@dataclass(frozen=True)
class Capabilities:
    """What an evaluator tells the search and the engine about itself, declared by every
    evaluator as its `capabilities` attribute (on the class, or per instance when it depends on
    the arguments) so that nobody has to guess from its type or other attributes."""
    needs_history: bool = True  # reads history_boards: False lets the search skip filling them
    has_priors: bool = True  # its policy is informative: False makes the search use UCB1
    parallel_calls: int = 1  # evaluate calls, each on its own batch, it can run at once (the
    #                          search keeps that many in flight on worker threads)
    network: bool = False  # has raw_model(): an ONNX network whose raw outputs kata-raw-nn shows
    optimistic_policy: bool = False  # mixes batch.policy_optimism of an optimistic policy head in
    shortterm_error: bool = False  # its Evaluations carry shortterm_error (a net with the heads)
    precompile_kind: str | None = None  # its numba kernels that engine/precompile.py compiles
    #                                     on a cold start: `rollout`, a feature set, or None


def capabilities_of(evaluator) -> Capabilities:
    """The evaluator's declared Capabilities; TypeError for one that declares none (there is no
    default: a wrong guess about history or priors would silently weaken the search)."""
    try:
        caps = evaluator.capabilities
    except AttributeError:
        caps = None
    if not isinstance(caps, Capabilities):
        raise TypeError(f"{type(evaluator).__name__} declares no capabilities: give it a "
                        "`capabilities = Capabilities(...)` attribute "
                        "(engine/evaluators/evaluator.py)")
    return caps


class Evaluator(Protocol):
    """Anything that turns a PositionBatch into an Evaluation and declares its Capabilities."""

    capabilities: Capabilities

    def evaluate(self, batch: PositionBatch) -> Evaluation: ...


class UniformEvaluator:
    """Uniform policy over legal moves, value 0: measures pure search overhead in tests."""

    capabilities = Capabilities(needs_history=False)

    def evaluate(self, batch: PositionBatch) -> Evaluation:
        legal = batch.legal[:batch.count].astype(np.float32)
        policy = legal / legal.sum(axis=1, keepdims=True)
        zeros = np.zeros(batch.count, dtype=np.float32)
        return Evaluation(policy, zeros, zeros.copy(), None)
