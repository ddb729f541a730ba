"""Re-centring a reused tree: its utility sums counted around the new search's score centre.

The dynamic score utility is measured from a centre set from the root's expected score when a search
starts (KataGo's recentScoreCenter, engine/search/driver.py). Visits that tree reuse kept were
backed up around an earlier centre; added to new ones they would sum two units in Q, the FPU and the
stdev-scaled exploration. As KataGo's recursivelyRecomputeStats does, each node's utility sum and
squared-utility sum are rebuilt from its own evaluation and its children's sums, children first, so
that the tree holds what its visits would back up now.
"""

import numpy as np
from numba import njit

from dosaku.engine.search import tree as T
from dosaku.engine.search.backup import own_utility
from dosaku.engine.search.buffers import unpack


@njit(cache=True, nogil=True)
def recenter_utilities(fp, *arrays):
    """Recompute every selection sum under the root around fp's score centre; `arrays` as in
    select_batch. Children have larger node indices than their parents (tree.py allocates
    them later), so index order is a topological order."""
    t, buf = unpack(arrays)
    root = t.meta[T.M_ROOT]
    n = t.meta[T.M_NODES]
    depth = np.full(n, -1, np.int64)
    depth[root] = 0
    for nd in range(root, n):
        if depth[nd] < 0:
            continue
        start = t.node_edge_start[nd]
        for j in range(start, start + t.node_num_children[nd]):
            depth[t.edge_child[j]] = depth[nd] + 1
    for nd in range(n - 1, root - 1, -1):
        if depth[nd] < 0 or t.node_visits[nd] == 0:
            continue
        own = own_utility(t, buf, nd, depth[nd], fp)
        # the weight of its own evaluations: a leaf or finished game's repeats
        own_weight = t.node_sel[nd, 0] - t.node_virtual[nd]
        u_sum = 0.0
        sq_sum = 0.0
        start = t.node_edge_start[nd]
        for j in range(start, start + t.node_num_children[nd]):
            child = t.edge_child[j]
            own_weight -= t.node_sel[child, 0] - t.node_virtual[child]
            u_sum -= t.node_sel[child, 1] + t.node_virtual[child]
            sq_sum += t.node_utility_sq[child]
        t.node_sel[nd, 1] = u_sum + own_weight * own - t.node_virtual[nd]
        t.node_utility_sq[nd] = sq_sum + own_weight * own * own
