"""Backup, the second half of a batch: expand the evaluated leaves, fill the evaluation cache,
and add every leaf's value and score to the nodes of its path, taking its virtual losses back.

`expand_and_backup` (numba, releases the GIL) is called by the search driver
(engine/search/driver.py) once per batch, with the evaluator's outputs for the rows that
engine/search/selection.py filled. Values follow tree.py's convention (mover's view, sign flip per
ply).
"""

import numpy as np
from numba import njit

from dosaku.engine.search import tree as T
from dosaku.engine.search.buffers import KIND_EVAL, KIND_EVAL_END, unpack
from dosaku.engine.search.config import FloatParam, IntParam
from dosaku.engine.search.scores import score_utility
from dosaku.engine.search.uncertainty import eval_weight


@njit(cache=True, nogil=True)
def expand_and_backup(fp, ip, n_leaves, policy, value, score, error, *arrays):
    """Expand evaluated leaves (values from the side to move's view) and back all leaves up.

    policy / value / score / error: the evaluator's output for the batch rows (float32
    [rows, A], [rows], [rows, 3]: score lead, expected final score, expected squared score;
    [rows, 2]: short-term value and score errors, zeros without them); `arrays` as in
    select_batch. Values and scores are backed up as they are (they are what reports show);
    selection backs up the utility (value plus score utility, see own_utility). Each visit
    counts once in the visits and with its evaluation's weight (engine/search/uncertainty.py)
    in the sums and node_sel's counts.
    """
    t, buf = unpack(arrays)
    vl = ip[IntParam.virtual_loss]
    cache_keys = buf.cache_keys
    for i in range(n_leaves):
        depth = buf.path_len[i]
        leaf = buf.path_nodes[i, depth]
        kind = buf.leaf_kind[i]
        if kind == KIND_EVAL or kind == KIND_EVAL_END:
            r = buf.leaf_row[i]
            t.node_value[leaf] = -value[r]
            t.node_score[leaf] = -score[r, 0]
            t.node_score_stats[leaf, 0] = -score[r, 1]
            t.node_score_stats[leaf, 1] = score[r, 2]
            t.node_error[leaf, 0] = error[r, 0]
            t.node_error[leaf, 1] = error[r, 1]
            if not T.expand_node(t, leaf, buf.legal[r], policy[r]):
                t.node_state[leaf] = T.LEAF
            if kind == KIND_EVAL and cache_keys.shape[0] > 0:
                key = t.node_key[leaf]
                slot = (key >> 3) & (cache_keys.shape[0] - 1)
                buf.cache_used[slot] = True
                cache_keys[slot] = key
                for a in range(policy.shape[1]):  # loops, not slice copies (see copy_board)
                    buf.cache_policy[slot, a] = policy[r, a]
                buf.cache_value[slot] = value[r]
                for k in range(3):
                    buf.cache_score[slot, k] = score[r, k]
                for k in range(2):
                    buf.cache_error[slot, k] = error[r, k]
        v = np.float64(t.node_value[leaf])
        s = np.float64(t.node_score[leaf])
        m = np.float64(t.node_score_stats[leaf, 0])
        m2 = np.float64(t.node_score_stats[leaf, 1])
        u = own_utility(t, buf, leaf, depth, fp)  # one ply up it changes sign, as v does
        w = eval_weight(t, leaf, depth, fp, ip)
        for k in range(depth, -1, -1):
            nd = buf.path_nodes[i, k]
            t.node_visits[nd] += 1
            t.node_value_sum[nd] += w * v
            t.node_value_sq[nd] += w * v * v
            t.node_score_sum[nd] += w * s
            t.node_score_moments[nd, 0] += w * m
            t.node_score_moments[nd, 1] += w * m2
            t.node_virtual[nd] -= vl
            t.node_sel[nd, 0] += w - vl
            t.node_sel[nd, 1] += w * u + vl
            t.node_utility_sq[nd] += w * u * u
            v = -v
            u = -u
            s = -s
            m = -m


@njit(cache=True, nogil=True)
def own_utility(t, buf, node, depth, fp):
    """The node's own evaluation as selection counts it (its mover's view): value plus score
    utility around fp's centre (the node's mover is the root's side to move at odd depths, and
    the score and the centre change sign with the mover)."""
    center = fp[FloatParam.score_center]
    c = center if depth % 2 == 1 else -center
    return np.float64(t.node_value[node]) + score_utility(
        np.float64(t.node_score_stats[node, 0]), np.float64(t.node_score_stats[node, 1]), c, fp,
        buf.score_table)
