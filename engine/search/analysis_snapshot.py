"""What an analysis report shows at one moment, read from a search: the candidate moves best
first (the move genmove would choose leads) with their principal variations, and the root.

The GTP analysis commands (gtp/analysis.py, gtp/gogui.py) format these; they hold points and
winrates in 0..1, not the search's actions and values in -1..1.
"""

from dataclasses import dataclass, field

import numpy as np

from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.search.results import RootStats


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
    ownership_stdev: np.ndarray | None = None  # [W*H] its standard deviation over them


@dataclass
class RootRawValues:
    """The network's own evaluation of the root, side to move's view: what KataGo's rootInfo
    reports as raw values beside the search's."""
    winrate: float  # 0..1: (1 + win - loss) / 2
    lead: float  # points
    score_mean: float  # expected final score
    score_stdev: float  # its standard deviation
    no_result: float  # probability of no result
    value_error: float | None  # short-term error of the value (win - loss); None: no such head
    score_error: float | None  # short-term error of the score (points); None: no such head
    var_time_left: float | None  # KataGo's varTimeLeft; None: no such head


def root_raw_values(ev) -> RootRawValues | None:
    """RootRawValues of the first row of an Evaluation (engine.evaluators.evaluator), None for
    an evaluator that gives no score mean or no-result probability (not a network)."""
    if ev.score_mean is None or ev.score_mean_sq is None or ev.no_result is None:
        return None
    mean = float(ev.score_mean[0])

    errors = ev.shortterm_error
    return RootRawValues((1.0 + float(ev.value[0])) / 2, float(ev.score[0]), mean,
                         float(np.sqrt(max(0.0, float(ev.score_mean_sq[0]) - mean * mean))),
                         float(ev.no_result[0]),
                         None if errors is None else float(errors[0, 0]),
                         None if errors is None else float(errors[0, 1]),
                         None if ev.var_time_left is None else float(ev.var_time_left[0]))


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
    ownership_stdev: np.ndarray | None = None  # [W*H] standard deviation of `ownership`'s
    #                                            leaves, when asked
    root_raw: RootRawValues | None = None  # the network's own root evaluation, when asked


def analysis_snapshot(search, stats: RootStats, chosen: int, lcb: np.ndarray, width: int,
                      height: int, utility_lcb: np.ndarray | None = None, raw: bool = False,
                      spread: bool = False) -> AnalysisSnapshot:
    """The snapshot of `search` (engine.search.driver.Search) whose root children are `stats`:
    `chosen` (an action) first, then by visits and prior; unvisited moves after the first are
    left out. `lcb`, `utility_lcb`: each child's lower confidence bound of its value and of its
    utility. raw: with the network's own root evaluation (Search.root_evaluation: one more
    evaluation of a root the search did not evaluate alone); spread: with the ownership's
    standard deviations (what the search counted with keep_ownership_spread)."""
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
                              search.ownership(a),
                              search.ownership_stdev(a) if spread else None))
    ev = search.root_evaluation() if raw and search.capabilities.network else None
    return AnalysisSnapshot(moves, stats.root_visits, float((stats.root_value + 1) / 2),
                            stats.root_score, search.ownership(),
                            stats.root_score_mean, stats.root_score_stdev, stats.root_utility,
                            search.root_policy(width * height + 1),
                            search.ownership_stdev() if spread else None,
                            None if ev is None else root_raw_values(ev))
