"""When a search stops: the visit, playout and time limits, the early stop once no other root
move can catch up, and how many leaves the next batch may take without overshooting a limit.

The search driver (engine/search/driver.py) asks before each batch it launches; visits and playouts
count the leaves in flight, whose results are not back yet.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from dosaku.engine.search import tree as T
from dosaku.engine.search.config import SearchConfig


@dataclass
class SearchLimits:
    """Stop when any set limit is reached (0 = not set)."""
    visits: int = 0  # root visits, reused ones included
    playouts: int = 0  # new leaf evaluations in this search
    seconds: float = 0.0  # wall-clock time
    early_stop: bool = False  # also stop once no other move can catch up with the most visited
    # seconds left unused stay on a clock for later moves, so early_stop may stop short of the
    # time limit; otherwise (a fixed time per move, a byo-yomi period) the time is used up
    bank_time: bool = False


@njit(cache=True)
def root_visit_gap(t, root_legal):
    """Visits of the most visited legal root child minus those of the runner-up."""
    root = t.meta[T.M_ROOT]
    s = t.node_edge_start[root]
    first = 0
    second = 0
    for j in range(s, s + t.node_num_children[root]):
        if not root_legal[t.edge_action[j]]:
            continue
        v = t.node_visits[t.edge_child[j]]
        if v > first:
            second = first
            first = v
        elif v > second:
            second = v
    return first - second


def _remaining_playouts(limits: SearchLimits, root_visits: int, playouts: int,
                        elapsed: float) -> float:
    """How many more playouts the limits allow at most (inf when unlimited)."""
    rem = np.inf
    if limits.visits:
        rem = min(rem, limits.visits - root_visits)
    if limits.playouts:
        rem = min(rem, limits.playouts - playouts)
    if limits.seconds and limits.bank_time and elapsed > 0.05 and playouts > 0:
        rem = min(rem, playouts / elapsed * (limits.seconds - elapsed))
    return rem


def should_stop(limits: SearchLimits, stop, tree, root_legal, visits: int, playouts: int,
                elapsed: float, step: float) -> bool:
    """Whether to launch no more batches; visits and playouts count those in flight.

    The time limit stops when one more batch would end past it (`step`: seconds from
    launching a batch to its results, the last time): a batch launched later would make the
    move late, and a late move under byo-yomi costs a period; early stop when no other root
    move can catch up with the most visited one.
    """
    if stop is not None and stop.is_set():
        return True
    if limits.seconds and elapsed + step >= limits.seconds:
        return True
    return bool(limits.early_stop and playouts
                and root_visit_gap(tree, root_legal)
                > _remaining_playouts(limits, visits, playouts, elapsed))


def backs_up_in_launch_order(limits: SearchLimits) -> bool:
    """Whether a search backs its batches up in the order it launched them, whatever the order
    they finish in: under a visit or playout limit without a time limit, whose search then
    depends on its seed alone. Any other search's length depends on the clock (or on a stop)
    anyway, and backs each batch up as soon as it is evaluated."""
    return bool(limits.visits or limits.playouts) and not limits.seconds


def most_in_flight(limits: SearchLimits, config: SearchConfig, root_visits: int,
                   parallel: int) -> float:
    """Leaves a search may have in flight at once (inf: no cap). Under a visit or playout
    limit, as KataGo's search threads under its visit limit: one leaf per evaluation the
    evaluator runs at once (`parallel`, KataGo's numSearchThreads), and one per
    config.playouts_per_leaf_in_flight new playouts the limits allow at its start
    (`root_visits` reused; KataGo's minPlayoutsPerThread), at least one. Leaves in flight
    carry virtual losses that send the next selections to moves a serial search would not
    visit; a batch of several leaves per evaluation is only faster on a time limit."""
    new = _remaining_playouts(limits, root_visits, 0, 0.0)
    if not config.playouts_per_leaf_in_flight or not np.isfinite(new):
        return np.inf
    return max(1, min(parallel, int(new) // config.playouts_per_leaf_in_flight))


def leaves_wanted(limits: SearchLimits, config: SearchConfig, parallel: int, visits: int,
                  playouts: int, in_flight: int, most: float = np.inf) -> int:
    """Leaves for the next batch: config.batch_size at most, fewer while the tree is small
    (root visits / (batch_growth x `parallel` batches in flight): virtual losses then send few
    visits astray), never beyond a visit or playout limit (counting the leaves in flight) nor
    beyond `most` leaves in flight (most_in_flight)."""
    n = min(config.batch_size, most - in_flight)
    if config.batch_growth:
        n = min(n, max(1, visits // (config.batch_growth * parallel)))
    if limits.visits:
        n = min(n, limits.visits - visits - in_flight)
    if limits.playouts:
        n = min(n, limits.playouts - playouts - in_flight)
    return n
