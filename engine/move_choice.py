"""Choosing the move to play from the root's statistics, and when to resign instead.

Temperature sampling early in self-play, else the best lower confidence bound of the value among
well-visited moves (the most visited one without LCB). Analysis reports put the same choice
first (engine/analysis_snapshot.py), so what they show as best is what genmove would play.
"""

import numpy as np

from engine.config import EngineConfig
from engine.constants import BLACK, WHITE
from engine.search_results import RootStats


def lower_confidence_bounds(stats: RootStats, stdevs: float) -> np.ndarray:
    """Lower confidence bound of each child's value (variance shrunk toward 1, weight 2)."""
    n = stats.visits.astype(np.float64)
    var = np.maximum(stats.value_sq - stats.value ** 2, 0.0)
    var = (var * n + 2.0) / (n + 2.0)
    lcb = stats.value - stdevs * np.sqrt(var / np.maximum(n, 1))
    return np.where(n > 0, lcb, -1e9)


def choose_action(stats: RootStats, config: EngineConfig, rng: np.random.Generator, game,
                  sample: bool = True) -> int:
    """The action to play in `game`: temperature sampling (drawn from `rng`) early in
    self-play when `sample`, else LCB or visits; pass when the root has no children."""
    if len(stats.actions) == 0:
        return game.width * game.height
    visits = stats.visits.astype(np.float64)
    if visits.max() <= 0:
        return int(stats.actions[int(np.argmax(stats.prior))])
    if sample and config.temperature > 0 and len(game.moves) < config.temperature_moves:
        weights = (visits / visits.max()) ** (1.0 / config.temperature)
        return int(rng.choice(stats.actions, p=weights / weights.sum()))
    best = int(np.argmax(visits + 1e-6 * stats.value))
    if config.use_lcb:
        eligible = (visits >= config.lcb_min_visit_prop * visits.max()) & (visits >= 2)
        if eligible.any():
            lcb = np.where(eligible, lower_confidence_bounds(stats, config.lcb_stdevs), -1e18)
            best = int(np.argmax(lcb))
    return int(stats.actions[best])


class ResignWatch:
    """Each colour's run of moves whose winrate fell below the resign threshold: resign after
    enough of them in a row, late enough in the game (later for White in a handicap game)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self._low_moves = {BLACK: 0, WHITE: 0}

    def should_resign(self, config: EngineConfig, game, color: int, stats: RootStats,
                      action: int) -> bool:
        """Count `color`'s move `action` chosen from `stats`; whether to resign instead."""
        if config.resign_threshold <= 0 or len(stats.actions) == 0:
            return False
        j = int(np.flatnonzero(stats.actions == action)[0])
        winrate = (stats.value[j] + 1) / 2 if stats.visits[j] > 0 else 0.5
        if winrate >= config.resign_threshold:
            self._low_moves[color] = 0
            return False
        self._low_moves[color] += 1
        area = game.width * game.height
        min_move = config.resign_min_move * area / 361
        if color == WHITE and game.handicap > 0:
            min_move += config.resign_handicap_moves * game.handicap * area / 361
        return (self._low_moves[color] >= config.resign_consecutive
                and game.moves_after_handicap >= min_move)
