"""Selection, the first half of a batch: descend the array tree (engine/search/tree.py) to up to B
leaves with virtual losses and replay each path from the root board into a batch row.

`select_batch` (numba, releases the GIL) chooses each child by PUCT or UCB1, allocates and
attaches new nodes, scores games ended by two passes exactly, answers repeated positions from
the evaluation cache, and leaves the rest for one `Evaluator.evaluate(batch)` call; the search
driver (engine/search/driver.py) crosses into numba once per batch here and once in the backup
(engine/search/backup.py), never per node. Arguments and leaf kinds: engine/search/buffers.py.
"""

import numpy as np
from numba import njit

from dosaku.engine.evaluators.evaluator import HISTORY_MOVES
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, PASS_POINT
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.search import tree as T
from dosaku.engine.search.buffers import (
    KIND_EVAL,
    KIND_EVAL_END,
    KIND_STORED,
    OUT_FULL,
    OUT_HITS,
    OUT_LEAVES,
    OUT_LOOKUPS,
    OUT_ROWS,
    unpack,
)
from dosaku.engine.search.config import FloatParam, IntParam
from dosaku.engine.search.scores import score_utility

# what a descent found besides a leaf (never stored in leaf_kind; 0, 1, 4 are leaf kinds)
_KIND_COLLIDE = 2  # a new node another leaf of the batch is waiting for
_KIND_FULL = 3  # no free node or edge left


@njit(cache=True)
def exploration_scale(t, node, mean, fp):
    """PUCT's exploration factor at `node` (U = factor x P / (1 + N)): cPUCT growing with the
    children's visit weights (KataGo's totalChildWeight; in flight ones included), scaled by
    the spread of its utility around `mean` (the chooser's view; KataGo's prior 0.40, weight 2,
    scale 0.85), times the square root of those weights. Also what KataGo's final choice trims
    by (engine/search/move_choice.py)."""
    weight = t.node_sel[node, 0] - t.node_virtual[node]  # its completed visits' weight
    parent_n = 0.0
    start = t.node_edge_start[node]
    for j in range(start, start + t.node_num_children[node]):
        parent_n += t.node_sel[t.edge_child[j], 0]
    base = fp[FloatParam.c_puct_base]
    cp = fp[FloatParam.c_puct] + fp[FloatParam.c_puct_log] * np.log((parent_n + base) / base)
    prior = fp[FloatParam.utility_stdev_prior]
    stdev = prior
    if weight > 1.0:
        w = fp[FloatParam.utility_stdev_prior_weight]
        var = (((mean * mean + prior * prior) * w + t.node_utility_sq[node])
               / (w + weight - 1.0) - mean * mean)
        stdev = np.sqrt(max(var, 0.0))
    cp *= 1.0 + fp[FloatParam.utility_stdev_scale] * (stdev / prior - 1.0)
    return cp * np.sqrt(parent_n + 0.01)


@njit(cache=True)
def _select_child(t, node, depth, root_prior, root_legal, bans, fp, ip, score_table):
    """Edge index maximising Q + U (PUCT) or UCB1 among the node's edges; -1 when the bans
    (engine/search/bans.py) leave the node no move.

    Edges with a child come first (tree.attach_child), then the unvisited edge with the
    highest prior: of the unvisited ones only it can win PUCT (they share the FPU value). The
    root scans all edges since its priors (noise) and legality (superko, its bans) are its
    own, and so does a node the bans reach (less than ip[ban_depth] plies down), skipping the
    moves banned for its side to move. UCB1 takes a random unvisited edge before revisiting
    anything. At the root, PUCT adds KataGo's wideRootNoise: half of the times a child is
    weighed, fp[wide_root_noise] x |a normal draw| to its utility.
    """
    is_root = depth == 0
    banned = not is_root and depth < ip[IntParam.ban_depth]
    mover = t.node_to_move[node]
    start = t.node_edge_start[node]
    end = start + t.node_num_edges[node]
    mid = start + t.node_num_children[node]
    if ip[IntParam.ucb1] != 0:
        if mid < end:
            if not is_root and not banned:
                return mid + np.random.randint(end - mid)
            open_unvisited = 0
            for j in range(mid, end):
                a = t.edge_action[j]
                if root_legal[a] if is_root else bans[mover, a] <= depth:
                    open_unvisited += 1
            if open_unvisited > 0:
                r = np.random.randint(open_unvisited)
                for j in range(mid, end):
                    a = t.edge_action[j]
                    if root_legal[a] if is_root else bans[mover, a] <= depth:
                        if r == 0:
                            return j
                        r -= 1
        log_n = np.log(max(t.node_visits[node] + t.node_virtual[node], 1))
        best = -1e30
        best_j = -1
        for j in range(start, mid):
            a = t.edge_action[j]
            if (is_root and not root_legal[a]) or (banned and bans[mover, a] > depth):
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

    # utilities from the chooser's view (the node's side to move): its own evaluation, and
    # the mean of the completed visits through it (node_sel minus the virtual losses)
    center = fp[FloatParam.score_center] if depth % 2 == 1 else -fp[FloatParam.score_center]
    own = -(t.node_value[node] + score_utility(t.node_score_stats[node, 0],
                                               t.node_score_stats[node, 1], center, fp,
                                               score_table))
    weight = t.node_sel[node, 0] - t.node_virtual[node]
    mean = -(t.node_sel[node, 1] + t.node_virtual[node]) / weight if weight > 0 else own
    mass = 0.0
    for j in range(start, mid):
        if is_root:
            mass += root_prior[t.edge_action[j]]
        else:
            mass += t.edge_prior[j]
    weight = min(1.0, mass ** fp[FloatParam.fpu_parent_weight_pow])
    red = fp[FloatParam.root_fpu_reduction] if is_root else fp[FloatParam.fpu_reduction]
    fpu = weight * mean + (1.0 - weight) * own - red * np.sqrt(mass)
    scale = exploration_scale(t, node, mean, fp)
    noise = fp[FloatParam.wide_root_noise] if is_root else 0.0
    best = -1e30
    best_j = -1
    for j in range(start, mid):
        a = t.edge_action[j]
        if is_root:
            if not root_legal[a]:
                continue
            p = root_prior[a]
        else:
            if banned and bans[mover, a] > depth:
                continue
            p = t.edge_prior[j]
        c = t.edge_child[j]
        n = t.node_sel[c, 0]
        q = t.node_sel[c, 1] / n if n > 0 else fpu
        if noise > 0.0 and np.random.random() < 0.5:
            q += noise * abs(np.random.standard_normal())
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
        elif banned:
            for j in range(mid, end):
                if bans[mover, t.edge_action[j]] <= depth and t.edge_prior[j] > top:
                    top = t.edge_prior[j]
                    top_j = j
        else:
            top = t.edge_prior[mid]
            top_j = mid
        if top_j < end:
            q = fpu
            if noise > 0.0 and np.random.random() < 0.5:
                q += noise * abs(np.random.standard_normal())
            if q + scale * top > best:
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



@njit(cache=True, nogil=True)
def select_batch(fp, ip, *arrays):
    """Descend up to ip[batch_size] leaves; fill batch rows for those needing the evaluator.

    `arrays`: the tree's and then a SearchBuffers' arrays; out[OUT_*] receives the counts.
    """
    t, buf = unpack(arrays)
    root = t.meta[T.M_ROOT]
    root_legal = buf.root_legal
    pass_action = root_legal.shape[0] - 1
    vl = ip[IntParam.virtual_loss]
    suicide = ip[IntParam.suicide] != 0
    cache_keys = buf.cache_keys
    n_leaves = np.int64(0)  # a literal 0 compiles _replay twice (see features.fill_row)
    rows = 0
    collisions = 0
    buf.out[OUT_FULL] = 0
    buf.out[OUT_LOOKUPS] = 0
    buf.out[OUT_HITS] = 0
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
            e = _select_child(t, node, depth, buf.root_prior, root_legal, buf.bans, fp, ip,
                              buf.score_table)
            if e < 0:  # every move here is banned: the node's own evaluation stands for it
                kind = KIND_STORED
                break
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
            last_pass = depth >= 1 and buf.path_actions[i, depth - 1] == pass_action
            if depth >= 2:
                prev_pass = buf.path_actions[i, depth - 2] == pass_action
            else:
                prev_pass = buf.root_points[0] == PASS_POINT
            slot = (key >> 3) & (cache_keys.shape[0] - 1)
            ended = last_pass and prev_pass
            looked_up = not ended and depth > 0 and cache_keys.shape[0] > 0
            buf.out[OUT_LOOKUPS] += looked_up
            if ended and ip[IntParam.exact_end] != 0:
                _score_terminal(t, leaf, board, fp[FloatParam.komi])
                kind = KIND_STORED
            elif looked_up and buf.cache_used[slot] and cache_keys[slot] == key:
                buf.out[OUT_HITS] += 1
                B.legal_mask(board, tm, suicide, buf.legal[rows])
                t.node_value[leaf] = -buf.cache_value[slot]
                t.node_score[leaf] = -buf.cache_score[slot, 0]
                t.node_score_stats[leaf, 0] = -buf.cache_score[slot, 1]
                t.node_score_stats[leaf, 1] = buf.cache_score[slot, 2]
                t.node_error[leaf, 0] = buf.cache_error[slot, 0]
                t.node_error[leaf, 1] = buf.cache_error[slot, 1]
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
