"""Which stones are dead at the end of a game (final_score, final_status_list, cleanup moves).

A stone is dead when the other colour owns its point strongly enough, by the evaluator's
ownership or, for evaluators without one (random playouts), by ownership averaged over
playouts from the position.
"""

import numpy as np

from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.evaluators.rollout import RolloutEvaluator, rollout_batch
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.seki import seki_chains

DEAD_OWNERSHIP = 0.3  # a stone is dead when the other colour owns its point at least this
DEAD_PLAYOUTS = 256  # playouts for the ownership when the evaluator gives none


def black_ownership(game: GameState, evaluator) -> np.ndarray:
    """Ownership [W*H] of every point from Black's view (+1 Black .. -1 White), row-major from
    the top-left: the evaluator's if it has one, else averaged random playouts."""
    batch = position_batch(game)
    own = None
    if not isinstance(evaluator, RolloutEvaluator):
        own = evaluator.evaluate(batch).ownership
    if own is None:
        area = game.width * game.height
        own = np.zeros((1, area), np.float32)
        komi = game.komi + game.rules.handicap_bonus(game.handicap)
        rollout_batch(batch.boards, batch.to_move, 1, komi, game.rules.suicide, DEAD_PLAYOUTS,
                      3 * area + 20, np.empty_like(game.board), np.zeros(area),
                      np.zeros(1, np.float32), np.zeros(1, np.float32),
                      np.zeros(1, np.float32), own)
    sign = 1.0 if game.to_move == BLACK else -1.0
    return sign * np.asarray(own, np.float64).reshape(-1)


def dead_points(game: GameState, own: np.ndarray) -> list[int]:
    """Points of the stones that `own` (black_ownership) gives to the other colour, never
    stones in seki (random playouts, which fill shared liberties blindly, often see seki
    groups captured)."""
    w, h = game.width, game.height
    col = game.board[B.ROW_COLOR]
    in_seki = {p for chain in seki_chains(game.board, game.rules.suicide) for p in chain}
    dead = []
    for a in range(w * h):
        p = point_from_action(a, w, h)
        if p not in in_seki and ((col[p] == BLACK and own[a] <= -DEAD_OWNERSHIP) or
                                 (col[p] == WHITE and own[a] >= DEAD_OWNERSHIP)):
            dead.append(p)
    return dead


class DeadStones:
    """The dead-stone judgement, remembered per position, komi and rules, so that final_score
    and final_status_list agree even though the playout estimate is random."""

    def __init__(self):
        self._key = None
        self._dead: list[int] = []

    def judge(self, game: GameState, evaluator) -> list[int]:
        key = (game.stone_hash, game.to_move, len(game.moves), game.komi, game.rules,
               game.handicap)
        if key != self._key:
            self._dead = dead_points(game, black_ownership(game, evaluator))
            self._key = key
        return list(self._dead)
