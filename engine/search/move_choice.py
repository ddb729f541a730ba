"""Choosing the move to play from the root's statistics, and when to resign instead.

The best lower confidence bound of the value among well-visited moves (the most visited one
without LCB), or KataGo's own choice (`katago_choice`). Analysis reports put the same choice
first (engine/search/analysis_snapshot.py), so what they show as best is what genmove would
play. `config` is the engine's EngineConfig (engine/config.py), read here and not imported: the
search sits below the facade that owns it.
"""

import numpy as np

from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.results import RootStats


def lower_confidence_bounds(stats: RootStats, stdevs: float) -> np.ndarray:
    """Lower confidence bound of each child's value (variance shrunk toward 1, weight 2)."""
    n = stats.visits.astype(np.float64)
    var = np.maximum(stats.value_sq - stats.value ** 2, 0.0)
    var = (var * n + 2.0) / (n + 2.0)
    lcb = stats.value - stdevs * np.sqrt(var / np.maximum(n, 1))
    return np.where(n > 0, lcb, -1e9)


KATAGO_LCB_STDEVS = 5.0  # KataGo's lcbStdevs


def katago_selection_values(stats: RootStats, search: SearchConfig,
                            min_visit_prop: float) -> np.ndarray:
    """KataGo's play selection value of each child (its getPlaySelectionValues): the visits'
    weights (engine/search/uncertainty.py; the visits when each weighs 1), less those a child
    got beyond what PUCT would give it in hindsight against the most visited child; then the
    child with the best lower confidence bound on utility (5 standard errors, a light prior
    toward the widest spread) among those with `min_visit_prop` of the best's visits raised
    to the weight it would need to lose that bound's lead; finally children under one visit's
    weight dropped. Unvisited children get 0.
    """
    w = stats.weight.astype(np.float64)
    values = np.zeros_like(w)
    visited = w > 0
    if not visited.any():
        return values
    u = stats.utility
    # the most visited child, discounting its latest visit and leaning on the prior for ties
    best = int(np.argmax(np.where(visited, w * np.maximum(w - 1, 0) / np.maximum(w, 1)
                                  + 2.0 * stats.prior, -1e30)))
    scaling = stats.explore_scale
    best_explore = u[best] + scaling * stats.prior[best] / (1.0 + w[best])
    gap = best_explore - u
    with np.errstate(divide="ignore", invalid="ignore"):
        wanted = np.where(gap > 0, scaling * stats.prior / gap - 1.0, np.inf)
    values = np.where(visited, np.ceil(np.minimum(w, np.maximum(wanted, 0.0))), 0.0)
    values[best] = w[best]

    radius_max = 1.0 + search.static_score_utility + search.dynamic_score_utility
    n = np.maximum(w, 1.0)
    prior_weight = 1.0 / (n * n)
    sq = np.maximum(stats.utility_sq, u * u + 1e-8)
    sq = (sq * n + (sq + radius_max ** 2) * prior_weight) / (n + prior_weight)
    ess = (n + prior_weight) ** 2 / (n + prior_weight ** 2)
    radius = KATAGO_LCB_STDEVS * np.sqrt(np.maximum(sq - u * u, 0.0) / ess)
    lcb = u - radius
    eligible = (values > 0) & (values >= min_visit_prop * w[best])
    if eligible.any():
        top = int(np.argmax(np.where(eligible, lcb, -np.inf)))
        excess = lcb[top] - lcb
        ahead = visited & (excess >= 0)
        factor = (radius + excess) / (radius + 0.2 * excess)
        raised = np.where(ahead, factor * factor * values, 0.0)
        raised[top] = values[top]
        values[top] = raised.max()
    values[values < min(1.0, values.max() / 64.0)] = 0.0
    return values


def choose_action(stats: RootStats, config, game) -> int:
    """The action to play in `game`: by LCB or visits, or KataGo's choice; pass when the root
    has no children. Visits count with their weights (engine/search/uncertainty.py), as in
    KataGo's choice."""
    if len(stats.actions) == 0:
        return game.width * game.height
    visits = stats.weight.astype(np.float64)
    if visits.max() <= 0:
        return int(stats.actions[int(np.argmax(stats.prior))])
    best = int(np.argmax(visits + 1e-6 * stats.value))
    if config.katago_choice:
        values = katago_selection_values(stats, config.search, config.lcb_min_visit_prop)
        best = int(np.argmax(values + 1e-9 * stats.utility))
    elif config.use_lcb:
        eligible = (visits >= config.lcb_min_visit_prop * visits.max()) & (stats.visits >= 2)
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

    def should_resign(self, config, game, color: int, stats: RootStats,
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
