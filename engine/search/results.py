"""Reading a search's results: the root's children (visits, values, scores, priors), the
principal variation, and the ownership averaged over the evaluated leaves.

Functions of the tree and the root arrays, so that what genmove chooses from and what analysis
reports are read the same way; the search driver (engine/search/driver.py) offers them as methods.
"""

from dataclasses import dataclass, field

import numpy as np

from dosaku.engine.search import tree as T
from dosaku.engine.search.scores import score_mean_and_stdev
from dosaku.engine.search.selection import exploration_scale


@dataclass
class RootStats:
    """Statistics of the root's legal children, side to move's view (arrays, one per child)."""
    actions: np.ndarray
    visits: np.ndarray
    value: np.ndarray  # mean value in [-1, 1] (0 when unvisited); this and the other means
    #                    weigh each visit as the search did (engine/search/uncertainty.py)
    value_sq: np.ndarray  # mean squared value
    score: np.ndarray  # mean score lead
    prior: np.ndarray  # root prior used by the search (noise included)
    root_visits: int
    root_value: float
    root_score: float
    score_mean: np.ndarray = field(default_factory=lambda: np.zeros(0))  # expected final
    #                                   score (0 when unvisited)
    score_stdev: np.ndarray = field(default_factory=lambda: np.zeros(0))  # its standard
    #                                   deviation over the searched lines
    root_score_mean: float = 0.0
    root_score_stdev: float = 0.0
    utility: np.ndarray = field(default_factory=lambda: np.zeros(0))  # mean utility the search
    #                                   selected by: value plus score utility (0 when unvisited)
    utility_sq: np.ndarray = field(default_factory=lambda: np.zeros(0))  # its mean square
    explore_scale: float = 0.0  # PUCT's exploration factor at the root (0 before a search)
    root_utility: float = 0.0  # the root's mean utility (value plus score utility)
    weight: np.ndarray | None = None  # the visits' summed weights (engine/search/
    #                                   uncertainty.py); None: every visit weighs 1

    def __post_init__(self):
        if self.weight is None:
            self.weight = np.asarray(self.visits, np.float64)


def root_stats(t, root_legal: np.ndarray, root_prior: np.ndarray | None,
               fp: np.ndarray | None = None) -> RootStats:
    """The root's legal children (all children before a search set root_legal). `root_prior`:
    the priors the search used, None for the edges' own (before the root was expanded); `fp`:
    the kernel parameters it searched with (None before a search)."""
    root = int(t.meta[T.M_ROOT])
    s = int(t.node_edge_start[root])
    ne = int(t.node_num_edges[root]) if t.node_state[root] == T.EXPANDED else 0
    actions = t.edge_action[s:s + ne].astype(np.int64)
    if len(root_legal):
        keep = root_legal[actions]
    else:
        keep = np.ones(ne, np.bool_)
    children = t.edge_child[s:s + ne][keep]
    actions = actions[keep]
    visits = t.node_visits[children].copy()
    visits[children == T.NO_NODE] = 0
    weight = np.where(visits > 0, t.node_sel[children, 0] - t.node_virtual[children], 0.0)
    safe = np.where(visits > 0, weight, 1.0)
    value = np.where(visits > 0, t.node_value_sum[children] / safe, 0.0)
    value_sq = np.where(visits > 0, t.node_value_sq[children] / safe, 0.0)
    score = np.where(visits > 0, t.node_score_sum[children] / safe, 0.0)
    mean, stdev = score_mean_and_stdev(t.node_score_moments[children], weight)
    utility = np.where(visits > 0, t.node_sel[children, 1] / safe, 0.0)
    utility_sq = np.where(visits > 0, t.node_utility_sq[children] / safe, 0.0)
    if root_prior is not None:
        prior = root_prior[actions].astype(np.float64)
    else:
        prior = t.edge_prior[s:s + ne][keep].astype(np.float64)
    rv = int(t.node_visits[root])
    rw = float(t.node_sel[root, 0] - t.node_virtual[root]) if rv else 0.0
    root_mean, root_stdev = score_mean_and_stdev(t.node_score_moments[root:root + 1],
                                                 np.array([rw]))
    scale = 0.0
    if fp is not None and rv:
        scale = float(exploration_scale(t, root, -float(t.node_sel[root, 1]) / rw, fp))
    return RootStats(actions, visits, value, value_sq, score, prior, rv,
                     -float(t.node_value_sum[root]) / rw if rv else 0.0,
                     -float(t.node_score_sum[root]) / rw if rv else 0.0,
                     mean, stdev, -float(root_mean[0]), float(root_stdev[0]),
                     utility, utility_sq, scale,
                     -float(t.node_sel[root, 1]) / rw if rv else 0.0, weight)


def principal_variation(t, action: int, max_len: int = 30) -> list[int]:
    """Actions from the root's `action` on, following the most visited child."""
    pv = [action]
    node = int(T.find_child(t, int(t.meta[T.M_ROOT]), action))
    while node != T.NO_NODE and len(pv) < max_len and t.node_state[node] == T.EXPANDED:
        s = int(t.node_edge_start[node])
        ne = int(t.node_num_edges[node])
        children = t.edge_child[s:s + ne]
        visits = np.where(children != T.NO_NODE, t.node_visits[children], 0)
        j = int(np.argmax(visits))
        if visits[j] == 0:
            break
        pv.append(int(t.edge_action[s + j]))
        node = int(children[j])
    return pv


def pv_visits(t, pv: list[int]) -> list[int]:
    """Visits of the node each move of `pv` (actions from the root on) leads to."""
    visits = []
    node = int(t.meta[T.M_ROOT])
    for action in pv:
        node = int(T.find_child(t, node, action))
        if node == T.NO_NODE:
            break
        visits.append(int(t.node_visits[node]))
    return visits + [0] * (len(pv) - len(visits))


def root_policy(t, num_actions: int) -> np.ndarray:
    """The prior the root was expanded with, by action (pass last), -1 on actions it has no
    edge for (illegal moves); all -1 before the root is expanded."""
    out = np.full(num_actions, -1.0)
    root = int(t.meta[T.M_ROOT])
    if root != T.NO_NODE and t.node_state[root] == T.EXPANDED:
        s = int(t.node_edge_start[root])
        ne = int(t.node_num_edges[root])
        out[t.edge_action[s:s + ne]] = t.edge_prior[s:s + ne]
    return out


class OwnershipMean:
    """Average ownership of the leaves evaluated under the current root, from the root's side
    to move's view (evaluators report it from each leaf's side to move), overall and under
    each root move (what analysis reports per candidate); with `spread` on, also its standard
    deviation over those leaves (their sums of squares cost a little per batch, so only when
    asked)."""

    def __init__(self):
        self.spread = False
        self.clear()

    def clear(self) -> None:
        self._all: list | None = None  # [sum, sum of squares or None, count]
        self._by_action: dict[int, list] = {}  # root action -> the same

    def has_spread(self) -> bool:
        """Whether every leaf counted so far was counted with its square (true before any)."""
        return all(entry[1] is not None for entry in (self._all, *self._by_action.values())
                   if entry is not None)

    def _tally(self, entry: list | None, rows: np.ndarray) -> list:
        """`entry` (None: a new one) with `rows` added; squares only while `spread` is on,
        dropped when it goes off (they would no longer match the sum)."""
        if entry is None:
            entry = [np.zeros(rows.shape[1]), np.zeros(rows.shape[1]) if self.spread else None, 0]
        entry[0] += rows.sum(axis=0)
        if not self.spread:
            entry[1] = None
        elif entry[1] is not None:
            entry[1] += np.einsum("ij,ij->j", rows, rows)
        entry[2] += len(rows)
        return entry

    def add(self, own, rows_to_move: np.ndarray, color: int,
            root_actions: np.ndarray | None = None) -> None:
        """Add a batch's ownership rows; `rows_to_move`: each row's side to move;
        `root_actions`: the root move each row descends from (-1: the root itself)."""
        sign = np.where(rows_to_move == color, 1.0, -1.0)
        rows = np.asarray(own, np.float64).reshape(len(sign), -1) * sign[:, None]
        self._all = self._tally(self._all, rows)
        if root_actions is None:
            return
        for a in np.unique(root_actions[root_actions >= 0]):
            a = int(a)
            self._by_action[a] = self._tally(self._by_action.get(a), rows[root_actions == a])

    def mean(self) -> np.ndarray | None:
        """[W*H], or None before any leaf with ownership was evaluated."""
        return None if self._all is None else self._all[0] / self._all[2]

    def mean_after(self, action: int) -> np.ndarray | None:
        """[W*H] averaged over the leaves under root move `action`, None if none had any."""
        entry = self._by_action.get(action)
        return None if entry is None else entry[0] / entry[2]

    def stdev(self, action: int | None = None) -> np.ndarray | None:
        """[W*H] standard deviation of the ownership over the leaves (under root move `action`
        when given) whose mean `mean` (`mean_after`) is; None when there is none or the
        leaves were counted without `spread`."""
        entry = self._all if action is None else self._by_action.get(action)
        if entry is None or entry[1] is None:
            return None
        mean = entry[0] / entry[2]
        return np.sqrt(np.maximum(entry[1] / entry[2] - mean * mean, 0.0))
