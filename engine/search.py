"""Batched PUCT / UCB1 tree search over the array tree (engine/tree.py).

One batch = `select_batch` (numba: descend up to B leaves with virtual loss, replay each
path from the root board into the batch's scratch boards) -> one `Evaluator.evaluate(batch)`
-> `expand_and_backup` (numba). Python crosses into numba twice per batch, never per node.
Values follow tree.py's convention (mover's view, sign flip per ply).

An evaluator that can run several calls at once (`parallel_calls`, e.g. an ONNX network on one
thread per call) gets that many batches in flight, each evaluated on a worker thread while this
thread selects the next batch and backs up finished ones, oldest first: the order of selections
and backups does not depend on timing, so a visit-limited search is reproducible. The kernels
release the GIL. Batches start small and grow with the root's visits (SearchConfig.batch_growth):
leaves in flight carry virtual losses that push the other selections elsewhere, which costs
little in a wide tree but throws visits away in a young one.

Both kernels take the parameter vectors (engine.config.FloatParam / IntParam), then the arrays
of the tree and of SearchBuffers flattened (`*tree, *buffers`): numba types array arguments in
C but a NamedTuple argument in Python (1.5-3 us a call), so the kernels rebuild the NamedTuples
themselves (`_unpack`) and read every array by name.
"""

import sys
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit

from engine import board as B
from engine import child_weights as CW
from engine import tree as T
from engine import value_bias as VB
from engine.config import FloatParam, IntParam, SearchConfig
from engine.constants import BLACK, PASS_POINT
from engine.coords import action_from_point, point_from_action
from engine.evaluator import HISTORY_MOVES, PositionBatch
from engine.positions import batch_row_from_game

# leaf kinds
KIND_EVAL = 0  # needs the evaluator: its position is in batch row leaf_row
KIND_STORED = 1  # value already in node_value (terminal, full leaf, cache hit, depth cut)
_KIND_COLLIDE = 2
_KIND_FULL = 3
KIND_EVAL_END = 4  # a game ended by two passes where the rules remove dead stones: evaluated
#                    and searched on like KIND_EVAL (play goes on until the dead stones are
#                    gone, as KataGo's conservative pass does), never cached: the cache key
#                    does not tell a finished game from the same board in play

# select_batch out[] entries
OUT_LEAVES = 0
OUT_ROWS = 1
OUT_FULL = 2  # 1 when a descent found no free node
OUT_LEN = 3


class SearchBuffers(NamedTuple):
    """Every array the batch kernels use besides the tree and the evaluator's output, allocated
    once per board geometry. A = W * H + 1 actions, Bt = batch size, D = max path depth + 1,
    C = cache slots (a power of two, 0 = no cache), n = board row length (board.num_points)."""
    # the root position, copied in at the start of a search
    root_board: np.ndarray  # int64 [NUM_ROWS, n]
    root_history: np.ndarray  # int64 [HISTORY_BOARDS, NUM_ROWS, n]: boards 1, 2 plies ago
    root_points: np.ndarray  # int64 [HISTORY_MOVES]: its recent moves, most recent first
    root_colors: np.ndarray  # int64 [HISTORY_MOVES]: their colours (0 = none)
    root_prior: np.ndarray  # float32 [A]: root priors the search uses (noise included)
    root_legal: np.ndarray  # bool [A]: root actions this search may take (superko, analysis
    #                         restrictions); the root's edges hold every legal move
    # the rows handed to the evaluator (the PositionBatch's own arrays, see its docstring)
    boards: np.ndarray  # int64 [Bt, NUM_ROWS, n]
    history: np.ndarray  # int64 [Bt, HISTORY_BOARDS, NUM_ROWS, n]
    recent_points: np.ndarray  # int64 [Bt, HISTORY_MOVES]
    recent_colors: np.ndarray  # int64 [Bt, HISTORY_MOVES]
    to_move: np.ndarray  # int64 [Bt]
    legal: np.ndarray  # bool [Bt, A]
    # per leaf i of the batch
    path_nodes: np.ndarray  # int64 [Bt, D]: node at each depth of the path, root first
    path_actions: np.ndarray  # int64 [Bt, D]: action taken at each depth
    path_len: np.ndarray  # int64 [Bt]: depth of the leaf
    leaf_kind: np.ndarray  # int64 [Bt]: KIND_EVAL, KIND_EVAL_END or KIND_STORED
    leaf_row: np.ndarray  # int64 [Bt]: batch row of a leaf the evaluator values
    # evaluation cache keyed by position (see select_batch)
    cache_used: np.ndarray  # bool [C]
    cache_keys: np.ndarray  # int64 [C]
    cache_policy: np.ndarray  # float32 [C, A]
    cache_value: np.ndarray  # float32 [C]
    cache_score: np.ndarray  # float32 [C, 3]: score lead, expected score and its square
    # subtree value-bias table (engine/value_bias.py; length 1 = off)
    bias_delta: np.ndarray  # float64 [S]: weighted deltas per pattern slot
    bias_weight: np.ndarray  # float64 [S]: their weights
    child_scratch: np.ndarray  # float64 [4, A]: engine/child_weights.py's per-child values
    out: np.ndarray  # int64 [OUT_LEN]: select_batch's counts (OUT_*)


@njit(cache=True)
def _select_child(t, node, depth, root_prior, root_legal, fp, ip):
    """Edge index maximising Q + U (PUCT) or UCB1 among the node's edges.

    Edges with a child come first (tree.attach_child), then the unvisited edge with the
    highest prior: of the unvisited ones only it can win PUCT (they share the FPU value). The
    root scans all edges since its priors (noise) and legality (superko) are its own. UCB1
    takes a random unvisited edge before revisiting anything.
    """
    is_root = depth == 0
    start = t.node_edge_start[node]
    end = start + t.node_num_edges[node]
    mid = start + t.node_num_children[node]
    if ip[IntParam.ucb1] != 0:
        if mid < end:
            if not is_root:
                return mid + np.random.randint(end - mid)
            legal_unvisited = 0
            for j in range(mid, end):
                if root_legal[t.edge_action[j]]:
                    legal_unvisited += 1
            if legal_unvisited > 0:
                r = np.random.randint(legal_unvisited)
                for j in range(mid, end):
                    if root_legal[t.edge_action[j]]:
                        if r == 0:
                            return j
                        r -= 1
        log_n = np.log(max(t.node_visits[node] + t.node_virtual[node], 1))
        best = -1e30
        best_j = start
        for j in range(start, mid):
            if is_root and not root_legal[t.edge_action[j]]:
                continue
            c = t.edge_child[j]
            n = t.node_sel[c, 0]
            if n == 0:
                return j
            q = t.node_sel[c, 1] / n
            s = q + fp[FloatParam.ucb1_c] * np.sqrt(log_n / n)
            if s > best:
                best = s
                best_j = j
        return best_j

    parent_n = t.node_visits[node] - 1 + t.node_virtual[node]
    if parent_n < 0:
        parent_n = 0
    # utilities from the chooser's view (the node's side to move): its own evaluation, and
    # the mean of the completed visits through it (node_sel minus the virtual losses)
    center = fp[FloatParam.score_center] if depth % 2 == 1 else -fp[FloatParam.score_center]
    own = -(t.node_value[node] + score_utility(t.node_score[node], center, fp))
    visits = t.node_visits[node]
    mean = -(t.node_sel[node, 1] + t.node_virtual[node]) / visits if visits > 0 else own
    mass = 0.0
    for j in range(start, mid):
        if is_root:
            mass += root_prior[t.edge_action[j]]
        else:
            mass += t.edge_prior[j]
    weight = min(1.0, mass ** fp[FloatParam.fpu_parent_weight_pow])
    red = fp[FloatParam.root_fpu_reduction] if is_root else fp[FloatParam.fpu_reduction]
    fpu = weight * mean + (1.0 - weight) * own - red * np.sqrt(mass)
    base = fp[FloatParam.c_puct_base]
    cp = fp[FloatParam.c_puct] + fp[FloatParam.c_puct_log] * np.log((parent_n + base) / base)
    prior = fp[FloatParam.utility_stdev_prior]
    stdev = prior
    if visits > 1:
        w = fp[FloatParam.utility_stdev_prior_weight]
        var = (((mean * mean + prior * prior) * w + t.node_utility_sq[node])
               / (w + visits - 1.0) - mean * mean)
        stdev = np.sqrt(max(var, 0.0))
    cp *= 1.0 + fp[FloatParam.utility_stdev_scale] * (stdev / prior - 1.0)
    scale = cp * np.sqrt(parent_n + 0.01)
    best = -1e30
    best_j = start
    for j in range(start, mid):
        if is_root:
            a = t.edge_action[j]
            if not root_legal[a]:
                continue
            p = root_prior[a]
        else:
            p = t.edge_prior[j]
        c = t.edge_child[j]
        n = t.node_sel[c, 0]
        q = t.node_sel[c, 1] / n if n > 0 else fpu
        s = q + scale * p / (1.0 + n)
        if s > best:
            best = s
            best_j = j
    if mid < end:
        top = -1.0
        top_j = end
        if is_root:
            for j in range(mid, end):
                a = t.edge_action[j]
                if root_legal[a] and root_prior[a] > top:
                    top = root_prior[a]
                    top_j = j
        else:
            top = t.edge_prior[mid]
            top_j = mid
        if top_j < end and fpu + scale * top > best:
            best_j = top_j
    return best_j


@njit(cache=True)
def _replay(root_board, root_history, root_points, root_colors, root_color, actions, depth,
            board, hist, rpoints, rcolors, want_history):
    """Play `actions[:depth]` (a leaf's path) from the root into `board`; fill its history
    boards and recent moves. Returns the side to move at the leaf. (Arrays, not the whole
    SearchBuffers: passing that tuple costs a reference count per array and call.)"""
    w = root_board[B.ROW_HEADER, B.H_WIDTH]
    h = root_board[B.ROW_HEADER, B.H_HEIGHT]
    B.copy_board(board, root_board)
    color = np.int64(root_color)  # int8 would compile a second play_unchecked
    for k in range(depth):
        if want_history:
            if k == depth - 2:
                B.copy_board(hist[1], board)
            if k == depth - 1:
                B.copy_board(hist[0], board)
        B.play_unchecked(board, point_from_action(actions[k], w, h), color)
        color = 3 - color
    if want_history:
        if depth == 0:
            B.copy_board(hist[0], root_history[0])
            B.copy_board(hist[1], root_history[1])
        elif depth == 1:
            B.copy_board(hist[1], root_history[0])
    for k in range(HISTORY_MOVES):
        if k < depth:
            m = depth - 1 - k
            rpoints[k] = point_from_action(actions[m], w, h)
            rcolors[k] = root_color if m % 2 == 0 else 3 - root_color
        else:
            rpoints[k] = root_points[k - depth]
            rcolors[k] = root_colors[k - depth]
    return color


@njit(cache=True)
def _score_terminal(t, leaf, board, komi):
    """Store the exact result of a finished game (area score) in the leaf, mover's view."""
    black, white = B.area_counts(board)
    margin = black - white - komi
    if t.node_to_move[leaf] == BLACK:  # White made the last move
        margin = -margin
    t.node_score[leaf] = margin
    t.node_score_stats[leaf, 0] = margin
    t.node_score_stats[leaf, 1] = margin * margin
    t.node_value[leaf] = 1.0 if margin > 0 else (-1.0 if margin < 0 else 0.0)
    t.node_state[leaf] = T.TERMINAL


@njit(cache=True)
def _unpack(arrays):
    """(TreeArrays, SearchBuffers) from the flattened arrays of both."""
    return T.TreeArrays(*arrays[:T.TREE_FIELDS]), SearchBuffers(*arrays[T.TREE_FIELDS:])


@njit(cache=True, nogil=True)
def select_batch(fp, ip, *arrays):
    """Descend up to ip[batch_size] leaves; fill batch rows for those needing the evaluator.

    `arrays`: the tree's and then a SearchBuffers' arrays; out[OUT_*] receives the counts.
    """
    t, buf = _unpack(arrays)
    root = t.meta[T.M_ROOT]
    root_legal = buf.root_legal
    pass_action = root_legal.shape[0] - 1
    vl = ip[IntParam.virtual_loss]
    suicide = ip[IntParam.suicide] != 0
    cache_keys = buf.cache_keys
    bias_len = buf.bias_delta.shape[0]
    n_leaves = np.int64(0)  # a literal 0 compiles _replay twice (see features.fill_row)
    rows = 0
    collisions = 0
    buf.out[OUT_FULL] = 0
    while n_leaves < ip[IntParam.batch_size] and collisions < ip[IntParam.max_collisions]:
        i = n_leaves
        node = root
        depth = 0
        buf.path_nodes[i, 0] = root
        kind = KIND_STORED
        while True:
            st = t.node_state[node]
            if st == T.NEW:
                kind = _KIND_COLLIDE if t.node_virtual[node] > 0 else KIND_EVAL
                break
            if st != T.EXPANDED or depth >= ip[IntParam.max_depth]:
                kind = KIND_STORED
                break
            e = _select_child(t, node, depth, buf.root_prior, root_legal, fp, ip)
            buf.path_actions[i, depth] = t.edge_action[e]
            child = t.edge_child[e]
            if child == T.NO_NODE:
                child = T.alloc_node(t, 3 - t.node_to_move[node], np.int64(0))  # no literal
                if child == T.NO_NODE:
                    kind = _KIND_FULL
                    break
                T.attach_child(t, node, e, child)
                depth += 1
                buf.path_nodes[i, depth] = child
                kind = KIND_EVAL
                break
            depth += 1
            buf.path_nodes[i, depth] = child
            node = child
        if kind == _KIND_COLLIDE:
            collisions += 1
            continue
        if kind == _KIND_FULL:
            buf.out[OUT_FULL] = 1
            break
        for k in range(depth + 1):
            nd = buf.path_nodes[i, k]
            t.node_virtual[nd] += vl
            t.node_sel[nd, 0] += vl
            t.node_sel[nd, 1] -= vl
        buf.path_len[i] = depth
        leaf = buf.path_nodes[i, depth]
        if kind == KIND_EVAL:
            board = buf.boards[rows]
            tm = _replay(buf.root_board, buf.root_history, buf.root_points, buf.root_colors,
                         t.node_to_move[root], buf.path_actions[i], depth, board,
                         buf.history[rows], buf.recent_points[rows], buf.recent_colors[rows],
                         ip[IntParam.history] != 0)
            key = T.position_key(board, tm)
            t.node_key[leaf] = key
            if bias_len > 1 and depth >= 1:  # _replay wrote the leaf's last two moves
                recent = buf.recent_points[rows]
                t.node_bias_slot[leaf] = VB.slot_of(
                    VB.pattern_key(board, recent[0], recent[1], 3 - tm), bias_len)
            last_pass = depth >= 1 and buf.path_actions[i, depth - 1] == pass_action
            if depth >= 2:
                prev_pass = buf.path_actions[i, depth - 2] == pass_action
            else:
                prev_pass = buf.root_points[0] == PASS_POINT
            slot = (key >> 3) & (cache_keys.shape[0] - 1)
            ended = last_pass and prev_pass
            if ended and ip[IntParam.exact_end] != 0:
                _score_terminal(t, leaf, board, fp[FloatParam.komi])
                kind = KIND_STORED
            elif not ended and depth > 0 and cache_keys.shape[0] > 0 and buf.cache_used[slot] \
                    and cache_keys[slot] == key:
                B.legal_mask(board, tm, suicide, buf.legal[rows])
                t.node_value[leaf] = -buf.cache_value[slot]
                t.node_score[leaf] = -buf.cache_score[slot, 0]
                t.node_score_stats[leaf, 0] = -buf.cache_score[slot, 1]
                t.node_score_stats[leaf, 1] = buf.cache_score[slot, 2]
                if not T.expand_node(t, leaf, buf.legal[rows], buf.cache_policy[slot]):
                    t.node_state[leaf] = T.LEAF
                kind = KIND_STORED
            else:
                if ended:
                    kind = KIND_EVAL_END
                buf.to_move[rows] = tm
                # the root too gets an edge per legal move, not only the ones this search may
                # take (root_legal, applied at selection): later searches reuse the root
                B.legal_mask(board, tm, suicide, buf.legal[rows])
                buf.leaf_row[i] = rows
                rows += 1
        buf.leaf_kind[i] = kind
        n_leaves += 1
    buf.out[OUT_LEAVES] = n_leaves
    buf.out[OUT_ROWS] = rows
    return n_leaves


@njit(cache=True)
def score_utility(score, center, fp):
    """KataGo's score utility added to a value for selection: a static term (centre 0) that
    prefers larger wins and smaller losses, and a dynamic term centred near the root's expected
    score so the search keeps caring about points when the winrate saturates.
    sv(s) = (2/pi) atan((s - c) / (scale sqrt(area))) with scales 2 and 0.75 (katago-network.md
    §4.1); `score` and `center` are from the same player's view."""
    k = 2.0 / np.pi
    sqrt_area = fp[FloatParam.sqrt_area]
    return (fp[FloatParam.static_score_utility] * k * np.arctan(score / (2.0 * sqrt_area))
            + fp[FloatParam.dynamic_score_utility] * k
            * np.arctan((score - center) / (0.75 * sqrt_area)))


@njit(cache=True, nogil=True)
def expand_and_backup(fp, ip, n_leaves, policy, value, score, *arrays):
    """Expand evaluated leaves (values from the side to move's view) and back all leaves up.

    policy / value / score: the evaluator's output for the batch rows (float32 [rows, A],
    [rows], [rows, 3]: score lead, expected final score, expected squared score); `arrays` as
    in select_batch. Visits, values and scores are backed up as they are (they are what
    reports show); selection backs up the utility (value plus score utility, see
    score_utility, plus a fresh leaf's value-bias correction, see engine/value_bias.py), or,
    with KataGo's child weighting on, recomputes it at each node above the leaf from the
    node's children (engine/child_weights.py).
    """
    t, buf = _unpack(arrays)
    vl = ip[IntParam.virtual_loss]
    center = fp[FloatParam.score_center]
    cache_keys = buf.cache_keys
    bias_on = buf.bias_delta.shape[0] > 1
    bias_exponent = fp[FloatParam.value_bias_exponent]
    weight_exponent = fp[FloatParam.value_weight_exponent]
    prune_scale = fp[FloatParam.noise_prune_scale]
    reweigh = weight_exponent > 0.0 or prune_scale > 0.0
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
        v = np.float64(t.node_value[leaf])
        bias = 0.0
        if bias_on and t.node_visits[leaf] == 0:  # a fresh leaf (a finished game has no key)
            bias = VB.correction(t, leaf, buf.bias_delta, buf.bias_weight,
                                 fp[FloatParam.value_bias_factor])
        s = np.float64(t.node_score[leaf])
        m = np.float64(t.node_score_stats[leaf, 0])
        m2 = np.float64(t.node_score_stats[leaf, 1])
        for k in range(depth, -1, -1):
            nd = buf.path_nodes[i, k]
            # Node k's mover is the root's side to move when k is odd.
            c = center if k % 2 == 1 else -center
            t.node_visits[nd] += 1
            t.node_value_sum[nd] += v
            t.node_value_sq[nd] += v * v
            t.node_score_sum[nd] += s
            t.node_score_moments[nd, 0] += m
            t.node_score_moments[nd, 1] += m2
            t.node_virtual[nd] -= vl
            u = v + bias + score_utility(s, c, fp)
            t.node_sel[nd, 0] += 1 - vl
            t.node_sel[nd, 1] += u + vl
            t.node_utility_sq[nd] += u * u
            if reweigh and k < depth:
                own = t.node_value[nd] + score_utility(t.node_score[nd], c, fp)
                if bias_on:
                    own += VB.correction(t, nd, buf.bias_delta, buf.bias_weight,
                                         fp[FloatParam.value_bias_factor])
                CW.recompute(t, nd, own, buf.root_prior, k == 0, weight_exponent, prune_scale,
                             buf.child_scratch)
            if bias_on:
                VB.record(t, nd, buf.bias_delta, buf.bias_weight, bias_exponent)
            v = -v
            bias = -bias
            s = -s
            m = -m


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


@dataclass
class RootStats:
    """Statistics of the root's legal children, side to move's view (arrays, one per child)."""
    actions: np.ndarray
    visits: np.ndarray
    value: np.ndarray  # mean value in [-1, 1] (0 when unvisited)
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


def score_columns(ev) -> np.ndarray:
    """(score lead, expected final score, expected squared score) per row of an Evaluation.

    Evaluators without a score distribution give the lead as the expected score and its
    square as the second moment: the spread then comes from the leaves alone.
    """
    lead = np.asarray(ev.score, np.float64)
    mean = lead if ev.score_mean is None else np.asarray(ev.score_mean, np.float64)
    sq = mean * mean if ev.score_mean_sq is None else np.asarray(ev.score_mean_sq, np.float64)
    return np.ascontiguousarray(np.stack([lead, mean, sq], axis=1), dtype=np.float32)


def score_mean_and_stdev(moments: np.ndarray, visits: np.ndarray):
    """Mean and standard deviation of the final score from backed-up (score, score^2) sums,
    in the stored (mover's) view; 0 where there are no visits."""
    n = np.maximum(visits, 1)
    mean = np.where(visits > 0, moments[:, 0] / n, 0.0)
    var = np.where(visits > 0, moments[:, 1] / n - mean * mean, 0.0)
    return mean, np.sqrt(np.maximum(var, 0.0))


def _cache_size(n: int) -> int:
    """Round a cache size to a power of two (0 stays 0)."""
    return 0 if n <= 0 else 1 << (int(n) - 1).bit_length()


@dataclass
class _Slot:
    """One batch of leaves: its evaluator rows, its kernel buffers (root and cache arrays
    shared with the other slots) and, while it is in flight, its evaluation."""
    batch: PositionBatch
    buf: SearchBuffers
    leaves: int = 0  # leaves selected (rows to evaluate and stored values alike)
    launched: float = 0.0  # when its evaluation started (time.monotonic)
    result: Future | None = None  # the Evaluation, or None when no row needed the evaluator


class Search:
    """Owns the tree, the batch buffers and the evaluator; runs searches from a GameState."""

    def __init__(self, evaluator, config: SearchConfig = SearchConfig(), seed: int = 0,
                 log=None):
        self.evaluator = evaluator
        self.config = config
        self.seed = seed
        self.rng: np.random.Generator | None = None  # the search's noise and batch seeds
        self._searches = 0  # searches run so far, pondering left out (see _seed_search)
        self._ponders = 0  # ponder searches since the last of those
        self.log = log if log is not None else (lambda msg: print(msg, file=sys.stderr))
        self.tree = T.new_tree(config.max_nodes, config.max_edges)
        self._spare = None  # second tree that update_with_move copies into (pages stay warm)
        self.want_history = bool(getattr(evaluator, "needs_history", True))
        self.ucb1 = config.ucb1 or not getattr(evaluator, "has_priors", True)
        self._geometry = None
        self._buf = None  # the first slot's buffers (root and cache arrays are shared)
        self._slots: list[_Slot] = []
        # batches in flight at once: one per evaluate call the evaluator can run in parallel,
        # each on a worker thread while this one selects the next batch and backs up the last
        self._parallel = max(1, int(getattr(evaluator, "parallel_calls", 1)))
        self._pool = ThreadPoolExecutor(self._parallel, thread_name_prefix="evaluate") \
            if self._parallel > 1 else None
        self._new_root_state()

    def set_config(self, config: SearchConfig) -> None:
        """New search settings: buffers are rebuilt and the tree starts fresh."""
        if (config.max_nodes, config.max_edges) != (self.config.max_nodes, self.config.max_edges):
            self.tree = T.new_tree(config.max_nodes, config.max_edges)
            self._spare = None
        self.config = config
        self.ucb1 = config.ucb1 or not getattr(self.evaluator, "has_priors", True)
        self._geometry = None
        self.reset()

    # ---- buffers ---------------------------------------------------------------------------
    def _ensure_buffers(self, game) -> None:
        geom = (game.width, game.height, game.komi, game.rules, game.handicap)
        if geom == self._geometry:
            return
        self._geometry = geom
        w, h = game.width, game.height
        bs = self.config.batch_size
        a = w * h + 1
        # the root's board, history and recent moves, filled as the leaves' rows are
        self._root_batch = r = PositionBatch(1, w, h, game.komi, game.rules)
        d = T.max_depth_for(w, h) + 1
        cs = _cache_size(self.config.cache_size)
        bias_len = VB.table_length(self.config.value_bias_factor)
        slots = []
        for _ in range(self._parallel):
            b = PositionBatch(bs, w, h, game.komi, game.rules)
            slots.append(_Slot(b, SearchBuffers(
                root_board=r.boards[0], root_history=r.history_boards[0],
                root_points=r.recent_points[0], root_colors=r.recent_colors[0],
                root_prior=np.zeros(a, np.float32), root_legal=np.zeros(a, np.bool_),
                boards=b.boards, history=b.history_boards, recent_points=b.recent_points,
                recent_colors=b.recent_colors, to_move=b.to_move, legal=b.legal,
                path_nodes=np.zeros((bs, d), np.int64), path_actions=np.zeros((bs, d), np.int64),
                path_len=np.zeros(bs, np.int64), leaf_kind=np.zeros(bs, np.int64),
                leaf_row=np.zeros(bs, np.int64),
                cache_used=np.zeros(cs, np.bool_), cache_keys=np.zeros(cs, np.int64),
                cache_policy=np.zeros((cs, a), np.float32),
                cache_value=np.zeros(cs, np.float32), cache_score=np.zeros((cs, 3), np.float32),
                bias_delta=np.zeros(bias_len), bias_weight=np.zeros(bias_len),
                child_scratch=np.zeros((4, a)),
                out=np.zeros(OUT_LEN, np.int64))))
        first = slots[0].buf  # the root arrays and the cache are one for all slots
        shared = {f: getattr(first, f) for f in ("root_prior", "root_legal", "cache_used",
                                                  "cache_keys", "cache_policy", "cache_value",
                                                  "cache_score", "bias_delta", "bias_weight")}
        self._slots = [_Slot(slot.batch, slot.buf._replace(**shared)) for slot in slots]
        self._buf = first
        self._dummy_policy = np.zeros((1, a), np.float32)
        self._dummy_value = np.zeros(1, np.float32)
        self._dummy_score = np.zeros((1, 3), np.float32)
        self.reset()

    @property
    def root_prior(self) -> np.ndarray:
        """The root priors of the last search, by action (noise included; empty before one)."""
        return self._buf.root_prior if self._buf is not None else np.zeros(0, np.float32)

    @property
    def root_legal(self) -> np.ndarray:
        """The legal root actions of the last search (empty before one)."""
        return self._buf.root_legal if self._buf is not None else np.zeros(0, np.bool_)

    # ---- tree lifecycle -------------------------------------------------------------------
    @property
    def root(self) -> int:
        return int(self.tree.meta[T.M_ROOT])

    @property
    def has_tree(self) -> bool:
        """Whether a searched root exists (something update_with_move could keep)."""
        root = self.root
        return root != T.NO_NODE and int(self.tree.node_visits[root]) > 0

    def reset(self) -> None:
        """Forget the tree (the root is re-created at the next search)."""
        self.tree.meta[T.M_ROOT] = T.NO_NODE
        self.tree.meta[T.M_NODES] = 1
        self.tree.meta[T.M_EDGES] = 0
        self._new_root_state()
        self._rebuild_value_bias()

    def _rebuild_value_bias(self) -> None:
        """Make the value-bias table hold the contributions of the current tree's nodes."""
        if self._buf is not None and len(self._buf.bias_delta) > 1:
            VB.rebuild(self.tree, self._buf.bias_delta, self._buf.bias_weight,
                       self.config.value_bias_exponent)

    def _new_root_state(self) -> None:
        """Forget what belonged to the previous root: its prior, ownership and full flag."""
        self._prior_ready = False
        self._own_sum = None
        self._own_n = 0
        self.tree_full = False

    def clear_cache(self) -> None:
        self.reset()
        if self._buf is not None:
            self._buf.cache_used[:] = False

    def _ensure_root(self, game, color: int) -> None:
        self._ensure_buffers(game)
        key = int(T.position_key(game.board, color))
        root = self.root
        if root == T.NO_NODE or int(self.tree.node_key[root]) != key \
                or int(self.tree.node_to_move[root]) != color:
            T.reset_tree(self.tree, color, key)
            self._new_root_state()
            self._rebuild_value_bias()

    def update_with_move(self, game) -> int:
        """Follow the game's last move into the matching subtree; returns reused visits.

        The root must be the position before that move with its mover to play, and the child's
        stored key must equal the game's new position; otherwise the tree starts fresh (0).
        """
        root = self.root
        if root == T.NO_NODE or not game.moves or self._buf is None:
            self.reset()
            return 0
        color, point = game.moves[-1]
        before = game.board_before(1)
        ok = int(self.tree.node_to_move[root]) == color and \
            int(self.tree.node_key[root]) == int(T.position_key(before, color))
        child = T.NO_NODE
        if ok:
            action = action_from_point(point, game.width, game.height)
            child = int(T.find_child(self.tree, root, action))
        new_key = int(T.position_key(game.board, game.to_move))
        if child == T.NO_NODE or self.tree.node_state[child] == T.NEW \
                or int(self.tree.node_key[child]) != new_key:
            self.reset()
            return 0
        if self._spare is None:
            self._spare = T.new_tree(self.config.max_nodes, self.config.max_edges)
        fresh = self._spare
        T.copy_subtree(self.tree, child, fresh)
        self._spare = self.tree
        self.tree = fresh
        self._new_root_state()
        self._rebuild_value_bias()
        return int(fresh.node_visits[1])

    # ---- running ---------------------------------------------------------------------------
    def _setup_root_prior(self, noise_weight: float, noise_alpha_scale: float) -> None:
        t = self.tree
        root = self.root
        s = int(t.node_edge_start[root])
        ne = int(t.node_num_edges[root])
        actions = t.edge_action[s:s + ne]
        prior = t.edge_prior[s:s + ne].astype(np.float64)
        legal = self.root_legal[actions]
        prior = np.where(legal, prior, 0.0)
        total = prior.sum()
        n_legal = int(legal.sum())
        prior = prior / total if total > 0 else legal / max(n_legal, 1)
        if noise_weight > 0 and n_legal > 1:
            alpha = noise_alpha_scale / n_legal
            noise = np.zeros(ne)
            noise[legal] = self.rng.dirichlet(np.full(n_legal, alpha))
            prior = (1 - noise_weight) * prior + noise_weight * noise
        self.root_prior[:] = 0
        self.root_prior[actions] = prior
        self._prior_ready = True

    def run(self, game, color: int, limits: SearchLimits, stop=None, on_update=None,
            interval: float = 1.0, noise_weight: float = 0.0,
            noise_alpha_scale: float = 0.03 * 361, pondering: bool = False) -> int:
        """Search the position of `game` with `color` to move; returns new playouts.

        on_update() is called about every `interval` seconds; `stop` (an Event) ends early.
        pondering: a search that runs on the opponent's time (see _seed_search).
        """
        self._seed_search(pondering)
        self._ensure_root(game, color)
        t = self.tree
        buf = self._buf
        buf.root_legal[:] = game.legal_mask(color)
        buf.root_prior[:] = 0
        self._prior_ready = False
        if t.node_state[self.root] == T.EXPANDED:
            self._setup_root_prior(noise_weight, noise_alpha_scale)
        batch_row_from_game(self._root_batch, 0, game)  # fills buf.root_board, history, moves
        for slot in self._slots:
            slot.batch.handicap_stones = game.handicap
        fp, ip = self._kernel_params(game, noise_weight)
        self._set_score_center(fp)
        start = time.monotonic()
        next_update = start + interval
        playouts = 0
        in_flight = 0  # leaves of the batches being evaluated
        step = 0.0  # seconds from launching a batch to its results, the last time
        free = deque(self._slots)
        pending: deque[_Slot] = deque()
        stopping = False
        try:
            while True:
                while free and not stopping:  # launch batches while the limits allow
                    now = time.monotonic()
                    visits = int(t.node_visits[self.root])
                    stopping = self._should_stop(limits, stop, visits + in_flight,
                                                 playouts + in_flight, now - start, step)
                    leaves = self._leaves_wanted(limits, visits, playouts, in_flight)
                    if stopping or leaves <= 0:
                        break
                    slot = free.popleft()
                    ip[IntParam.batch_size] = leaves
                    slot.leaves = select_batch(fp, ip, *t, *slot.buf)
                    if slot.buf.out[OUT_FULL]:
                        if not self.tree_full:
                            self.log(f"search: tree full ({int(t.meta[T.M_NODES]) - 1} nodes, "
                                     f"{int(t.meta[T.M_EDGES])} edges), stopping")
                        self.tree_full = stopping = True
                    if slot.leaves == 0:  # only collisions: wait for a batch in flight
                        free.appendleft(slot)
                        break
                    self._launch(slot, now)
                    pending.append(slot)
                    in_flight += slot.leaves
                if not pending:
                    break
                slot = pending.popleft()  # oldest first, so a visit limit gives one tree
                self._back_up(slot, fp, ip, color)
                step = time.monotonic() - slot.launched
                in_flight -= slot.leaves
                if playouts == 0:
                    self._set_score_center(fp)
                playouts += slot.leaves
                free.append(slot)
                if not self._prior_ready and t.node_state[self.root] == T.EXPANDED:
                    self._setup_root_prior(noise_weight, noise_alpha_scale)
                if on_update is not None and time.monotonic() >= next_update:
                    on_update()
                    next_update = time.monotonic() + interval
        except BaseException:
            for slot in pending:  # let the evaluations in flight finish, then forget the
                slot.result.exception()  # tree: their virtual losses would corrupt it
            self.reset()
            raise
        if on_update is not None:
            on_update()
        return playouts

    def _seed_search(self, pondering: bool) -> None:
        """Seed the random numbers of one search from the seed and the search's number: numba
        keeps a random state per thread (selection and playouts draw from it), and searches
        run on whatever thread calls them. Whether a ponder starts, and how long it runs,
        depends on when the controller's next line comes, so ponders number only their own
        streams (the k-th since the n-th other search), never the later searches'."""
        if pondering:
            self._ponders += 1
        else:
            self._searches += 1
            self._ponders = 0
        numba_seq, numpy_seq = np.random.SeedSequence(
            [self.seed, self._searches, self._ponders]).spawn(2)
        B.seed_rng(int(numba_seq.generate_state(1)[0]))
        self.rng = np.random.default_rng(numpy_seq)

    def _kernel_params(self, game, noise_weight: float) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' float and int parameter vectors for a search of `game`."""
        rules = game.rules
        per_search = dict(komi=game.komi + rules.handicap_bonus(game.handicap),
                          score_center=0.0, sqrt_area=np.sqrt(game.width * game.height),
                          ucb1=self.ucb1, suicide=rules.suicide,
                          exact_end=rules.scoring == "area" and not rules.friendly_pass_ok,
                          max_depth=T.max_depth_for(game.width, game.height),
                          history=self.want_history)
        if noise_weight > 0:
            per_search["root_fpu_reduction"] = 0.0
        fp, ip = self.config.kernel_params(**per_search)
        return np.array(fp, np.float64), np.array(ip, np.int64)

    def compile_backup(self, game) -> None:
        """Compile expand_and_backup by backing up no leaves (nothing changes): how the
        cold-start helper (engine/precompile.py) stores it while the engine compiles the
        selection."""
        self._ensure_root(game, game.to_move)
        fp, ip = self._kernel_params(game, 0.0)
        expand_and_backup(fp, ip, 0, self._dummy_policy, self._dummy_value, self._dummy_score,
                          *self.tree, *self._buf)

    def _should_stop(self, limits: SearchLimits, stop, visits: int, playouts: int,
                     elapsed: float, step: float) -> bool:
        """Whether to launch no more batches; visits and playouts count those in flight.

        The time limit stops when one more batch would end further past it than we are short
        of it; early stop when no other root move can catch up with the most visited one.
        """
        if stop is not None and stop.is_set():
            return True
        if limits.seconds and elapsed + 0.5 * step >= limits.seconds:
            return True
        return bool(limits.early_stop and playouts
                    and root_visit_gap(self.tree, self.root_legal)
                    > _remaining_playouts(limits, visits, playouts, elapsed))

    def _leaves_wanted(self, limits: SearchLimits, visits: int, playouts: int,
                       in_flight: int) -> int:
        """Leaves for the next batch: config.batch_size at most, fewer while the tree is small
        (root visits / (batch_growth x batches in flight): virtual losses then send few visits
        astray), never beyond a visit or playout limit (counting the leaves in flight)."""
        cfg = self.config
        n = cfg.batch_size
        if cfg.batch_growth:
            n = min(n, max(1, visits // (cfg.batch_growth * self._parallel)))
        if limits.visits:
            n = min(n, limits.visits - visits - in_flight)
        if limits.playouts:
            n = min(n, limits.playouts - playouts - in_flight)
        return n

    def _launch(self, slot: "_Slot", now: float) -> None:
        """Start evaluating the slot's batch rows: on a worker thread when batches run in
        parallel, else here (slot.result is then already done)."""
        rows = int(slot.buf.out[OUT_ROWS])
        slot.launched = now
        slot.result = Future()
        if not rows:
            slot.result.set_result(None)
            return
        b = slot.batch
        b.count = rows
        b.seed = int(self.rng.integers(1 << 31))
        if self._pool is not None:
            slot.result = self._pool.submit(self.evaluator.evaluate, b)
        else:
            slot.result.set_result(self.evaluator.evaluate(b))

    def _back_up(self, slot: "_Slot", fp, ip, color: int) -> None:
        """Wait for the slot's evaluation, expand its leaves and back all its leaves up."""
        ev = slot.result.result()
        if ev is None:  # no row needed the evaluator (terminal positions, cache hits)
            policy, value, score = self._dummy_policy, self._dummy_value, self._dummy_score
        else:
            policy = np.ascontiguousarray(ev.policy, dtype=np.float32)
            value = np.ascontiguousarray(ev.value, dtype=np.float32)
            score = score_columns(ev)
            if ev.ownership is not None:
                b = slot.batch
                self._add_ownership(ev.ownership, b.to_move[:b.count], color)
        expand_and_backup(fp, ip, slot.leaves, policy, value, score, *self.tree, *slot.buf)

    def _set_score_center(self, fp) -> None:
        """Centre of the dynamic score utility: 0.8 x the root's expected score for its side
        to move (KataGo's recentScoreCenter), 0 before the root has been evaluated."""
        t = self.tree
        visits = int(t.node_visits[self.root])
        expected = -float(t.node_score_sum[self.root]) / visits if visits else 0.0
        fp[FloatParam.score_center] = 0.8 * expected

    def _add_ownership(self, own, rows_to_move, color) -> None:
        sign = np.where(rows_to_move == color, 1.0, -1.0)
        total = (np.asarray(own, np.float64).reshape(len(sign), -1) * sign[:, None]).sum(axis=0)
        if self._own_sum is None:
            self._own_sum = np.zeros_like(total)
        self._own_sum += total
        self._own_n += len(sign)

    # ---- results ---------------------------------------------------------------------------
    def ownership(self) -> np.ndarray | None:
        """Average ownership of the leaves evaluated in this search, root side to move's view."""
        if self._own_sum is None or self._own_n == 0:
            return None
        return self._own_sum / self._own_n

    def root_stats(self) -> RootStats:
        t = self.tree
        root = self.root
        s = int(t.node_edge_start[root])
        ne = int(t.node_num_edges[root]) if t.node_state[root] == T.EXPANDED else 0
        actions = t.edge_action[s:s + ne].astype(np.int64)
        if len(self.root_legal):
            keep = self.root_legal[actions]
        else:
            keep = np.ones(ne, np.bool_)
        children = t.edge_child[s:s + ne][keep]
        actions = actions[keep]
        visits = t.node_visits[children].copy()
        visits[children == T.NO_NODE] = 0
        safe = np.maximum(visits, 1)
        value = np.where(visits > 0, t.node_value_sum[children] / safe, 0.0)
        value_sq = np.where(visits > 0, t.node_value_sq[children] / safe, 0.0)
        score = np.where(visits > 0, t.node_score_sum[children] / safe, 0.0)
        mean, stdev = score_mean_and_stdev(t.node_score_moments[children], visits)
        if self._prior_ready:
            prior = self.root_prior[actions].astype(np.float64)
        else:
            prior = t.edge_prior[s:s + ne][keep].astype(np.float64)
        rv = int(t.node_visits[root])
        root_mean, root_stdev = score_mean_and_stdev(t.node_score_moments[root:root + 1],
                                                     np.array([rv]))
        return RootStats(actions, visits, value, value_sq, score, prior, rv,
                         -float(t.node_value_sum[root]) / rv if rv else 0.0,
                         -float(t.node_score_sum[root]) / rv if rv else 0.0,
                         mean, stdev, -float(root_mean[0]), float(root_stdev[0]))

    def principal_variation(self, action: int, max_len: int = 30) -> list[int]:
        """Actions from `action` on, following the most visited child."""
        t = self.tree
        pv = [action]
        node = int(T.find_child(t, self.root, action))
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
