"""What an analysis report shows at one moment, read from a search: the candidate moves best
first (the move genmove would choose leads) with their principal variations, and the root.

The GTP analysis commands (gtp/analysis.py, gtp/gogui.py) format these; they hold points and
winrates in 0..1, not the search's actions and values in -1..1.
"""

from dataclasses import dataclass, field

import numpy as np

from engine.rules.coords import point_from_action
from engine.search.results import RootStats


@dataclass
class MoveInfo:
    """Search statistics of one candidate move, from the side to move's view."""
    point: int
    visits: int
    winrate: float  # 0..1
    prior: float  # 0..1
    lcb: float  # lower confidence bound of the winrate, may leave 0..1
    score_lead: float = 0.0  # points
    pv: list[int] = field(default_factory=list)  # principal variation, starting with `point`
    score_mean: float | None = None  # expected final score (points), None if unknown
    score_stdev: float | None = None  # its standard deviation over the searched lines
    utility: float = 0.0  # mean utility the search selected it by (value plus score utility)
    utility_lcb: float = 0.0  # lower confidence bound of the utility
    pv_visits: list[int] = field(default_factory=list)  # visits of each node along `pv`
    ownership: np.ndarray | None = None  # [W*H] averaged over the leaves under this move


@dataclass
class AnalysisSnapshot:
    """What an analysis report shows at one moment: candidates best first and the root."""
    moves: list[MoveInfo]
    root_visits: int
    root_winrate: float
    root_score_lead: float
    ownership: np.ndarray | None = None  # [W*H] row-major from the top-left, side to move's view
    root_score_mean: float | None = None
    root_score_stdev: float | None = None
    root_utility: float = 0.0
    policy: np.ndarray | None = None  # [W*H+1] the root's prior by action, -1 where illegal


def analysis_snapshot(search, stats: RootStats, chosen: int, lcb: np.ndarray, width: int,
                      height: int, utility_lcb: np.ndarray | None = None) -> AnalysisSnapshot:
    """The snapshot of `search` (engine.search.driver.Search) whose root children are `stats`:
    `chosen` (an action) first, then by visits and prior; unvisited moves after the first are
    left out. `lcb`, `utility_lcb`: each child's lower confidence bound of its value and of its
    utility."""
    if utility_lcb is None:
        utility_lcb = stats.utility
    moves = []
    order = sorted(range(len(stats.actions)),
                   key=lambda j: (stats.actions[j] != chosen, -stats.visits[j], -stats.prior[j]))
    for j in order:
        if stats.visits[j] == 0 and moves:
            continue
        a = int(stats.actions[j])
        line = search.principal_variation(a)
        pv = [point_from_action(x, width, height) for x in line]
        moves.append(MoveInfo(point_from_action(a, width, height), int(stats.visits[j]),
                              float((stats.value[j] + 1) / 2), float(stats.prior[j]),
                              float((max(lcb[j], -2.0) + 1) / 2),
                              float(stats.score[j]), pv, float(stats.score_mean[j]),
                              float(stats.score_stdev[j]), float(stats.utility[j]),
                              float(max(utility_lcb[j], -3.0)), search.pv_visits(line),
                              search.ownership(a)))
    return AnalysisSnapshot(moves, stats.root_visits, float((stats.root_value + 1) / 2),
                            stats.root_score, search.ownership(),
                            stats.root_score_mean, stats.root_score_stdev, stats.root_utility,
                            search.root_policy(width * height + 1))
