"""The search tree as preallocated flat arrays: nodes, and per node a contiguous slice of edges.

Value convention (the only one in the search): every value, value sum and score stored in the
tree is from the view of the player who made the move leading to that node, i.e. the opponent
of the node's side to move. A parent therefore maximises its children's Q + U directly, and a
backup flips the sign at every ply. The root follows the same rule, so the root's winrate for
its side to move is minus its stored mean.

Nodes hold the statistics (visits, value sum, sum of squares, score sums, virtual loss) and the
leaf evaluation; edges hold only (action, prior, child). An edge with child NO_NODE has never
been visited. Within a node's slice the edges with a child come first (`attach_child` swaps a
newly visited edge to the front), followed by the unvisited edge with the highest prior, so
selection reads child statistics only for the children and looks at one unvisited edge.
Node 0 is reserved as NO_NODE (never -1: numba wraps negative indices).

Capacity is fixed at construction. When the nodes run out the search stops; when the edges run
out a node is still evaluated but kept as a leaf (state LEAF) whose stored value is backed up
again on later visits. Nothing ever writes past the end.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import MAX_SIZE, NULL_POINT, WHITE

NO_NODE = 0

# node states
NEW = 0  # allocated, waiting for its evaluation (in flight) or never evaluated (fresh root)
EXPANDED = 1  # evaluated, edges created
TERMINAL = 2  # game over (two passes): the stored value is the exact result
LEAF = 3  # evaluated but no edge space left: the stored value stands for the subtree

# meta entries
M_NODES = 0  # nodes in use (node 0 reserved, so >= 1)
M_EDGES = 1  # edges in use
M_ROOT = 2  # root node index
META_LEN = 3

# Keys that make a position key depend on the side to move and an active simple-ko ban.
SIDE_KEY = np.int64(0x1F3D5B79A2C4E6F1)
KO_KEYS = np.random.default_rng(424242).integers(
    np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=B.MAX_POINTS, dtype=np.int64)
KO_KEYS[NULL_POINT] = 0


class TreeArrays(NamedTuple):
    """All arrays of one tree (passed whole to the numba kernels)."""
    meta: np.ndarray  # int64 [META_LEN]
    node_edge_start: np.ndarray  # int64: first edge of the node's slice
    node_num_edges: np.ndarray  # int32: edges in the slice (0 until expanded)
    node_num_children: np.ndarray  # int32: edges with a child; they come first in the slice
    node_state: np.ndarray  # int8: NEW / EXPANDED / TERMINAL / LEAF
    node_to_move: np.ndarray  # int8: side to move at the node
    node_key: np.ndarray  # int64: position key (stones, side to move, ko ban)
    node_visits: np.ndarray  # int64: completed visits through the node (its own evaluation too)
    node_value_sum: np.ndarray  # float64: sum of backed-up values (mover's view); this and the
    #                             other sums below add each visit times its weight (node_sel)
    node_value_sq: np.ndarray  # float64: sum of their squares (for the LCB)
    node_utility_sq: np.ndarray  # float64: sum of squared utilities (value + score utility)
    node_score_sum: np.ndarray  # float64: sum of backed-up score leads (mover's view)
    node_virtual: np.ndarray  # int32: in-flight visits (virtual losses) through the node
    node_sel: np.ndarray  # float64 [n, 2]: (weight sum + virtual, utility sum - virtual) side
    #                       by side, so selection reads one cache line per child (the utility:
    #                       value plus score utility, engine/search/backup.py; the weight of a
    #                       visit: 1, or its evaluation's under uncertainty weighting,
    #                       engine/search/uncertainty.py)
    node_value: np.ndarray  # float32: the node's own evaluation (mover's view)
    node_score: np.ndarray  # float32: the node's own score lead (mover's view)
    node_score_stats: np.ndarray  # float32 [n, 2]: its own expected final score (mover's
    #                               view) and expected squared score (for the stdev)
    node_score_moments: np.ndarray  # float64 [n, 2]: sums of backed-up (score, score^2)
    node_error: np.ndarray  # float32 [n, 2]: the net's short-term value and score errors of the
    #                         node's own evaluation (0 without those heads)
    edge_action: np.ndarray  # int32: action (pass = W*H)
    edge_prior: np.ndarray  # float32: policy prior
    edge_child: np.ndarray  # int32: child node or NO_NODE


TREE_FIELDS = len(TreeArrays._fields)  # kernels taking the arrays flattened split them here


def new_tree(max_nodes: int, max_edges: int) -> TreeArrays:
    """Empty tree with the given capacity (node 0 reserved, no root yet)."""
    n = max_nodes + 1
    t = TreeArrays(
        meta=np.zeros(META_LEN, np.int64),
        node_edge_start=np.zeros(n, np.int64),
        node_num_edges=np.zeros(n, np.int32),
        node_num_children=np.zeros(n, np.int32),
        node_state=np.zeros(n, np.int8),
        node_to_move=np.zeros(n, np.int8),
        node_key=np.zeros(n, np.int64),
        node_visits=np.zeros(n, np.int64),
        node_value_sum=np.zeros(n, np.float64),
        node_value_sq=np.zeros(n, np.float64),
        node_utility_sq=np.zeros(n, np.float64),
        node_score_sum=np.zeros(n, np.float64),
        node_virtual=np.zeros(n, np.int32),
        node_sel=np.zeros((n, 2), np.float64),
        node_value=np.zeros(n, np.float32),
        node_score=np.zeros(n, np.float32),
        node_score_stats=np.zeros((n, 2), np.float32),
        node_score_moments=np.zeros((n, 2), np.float64),
        node_error=np.zeros((n, 2), np.float32),
        edge_action=np.zeros(max_edges, np.int32),
        edge_prior=np.zeros(max_edges, np.float32),
        edge_child=np.zeros(max_edges, np.int32),
    )
    t.meta[M_NODES] = 1
    return t


@njit(cache=True)
def position_key(b, to_move):
    """Key of a position for tree verification and the evaluation cache."""
    k = b[B.ROW_HEADER, B.H_HASH]
    if to_move == WHITE:
        k ^= SIDE_KEY
    if b[B.ROW_HEADER, B.H_KO_COLOR] == to_move:
        k ^= KO_KEYS[b[B.ROW_HEADER, B.H_KO_POINT]]
    return k


@njit(cache=True)
def alloc_node(t, to_move, key):
    """A fresh NEW node, or NO_NODE when the tree is full."""
    n = t.meta[M_NODES]
    if n >= t.node_state.shape[0]:
        return NO_NODE
    t.meta[M_NODES] = n + 1
    t.node_edge_start[n] = 0
    t.node_num_edges[n] = 0
    t.node_num_children[n] = 0
    t.node_state[n] = NEW
    t.node_to_move[n] = to_move
    t.node_key[n] = key
    t.node_visits[n] = 0
    t.node_value_sum[n] = 0.0
    t.node_value_sq[n] = 0.0
    t.node_utility_sq[n] = 0.0
    t.node_score_sum[n] = 0.0
    t.node_virtual[n] = 0
    t.node_sel[n, 0] = 0.0
    t.node_sel[n, 1] = 0.0
    t.node_value[n] = 0.0
    t.node_score[n] = 0.0
    t.node_score_stats[n, :] = 0.0
    t.node_score_moments[n, :] = 0.0
    t.node_error[n, :] = 0.0
    return n


@njit(cache=True)
def reset_tree(t, to_move, key):
    """Drop everything and start from a fresh unevaluated root; returns the root."""
    t.meta[M_NODES] = 1
    t.meta[M_EDGES] = 0
    root = alloc_node(t, to_move, key)
    t.meta[M_ROOT] = root
    return root


@njit(cache=True)
def _swap_unvisited(t, i, j):
    """Swap the actions and priors of edges i and j (both without a child)."""
    a = t.edge_action[i]
    p = t.edge_prior[i]
    t.edge_action[i] = t.edge_action[j]
    t.edge_prior[i] = t.edge_prior[j]
    t.edge_action[j] = a
    t.edge_prior[j] = p


@njit(cache=True)
def _front_best_prior(t, lo, hi):
    """Swap the highest-prior edge of [lo, hi) to lo (the next unvisited edge PUCT may take)."""
    best = lo
    for j in range(lo + 1, hi):
        if t.edge_prior[j] > t.edge_prior[best]:
            best = j
    if best != lo:
        _swap_unvisited(t, lo, best)


@njit(cache=True)
def expand_node(t, node, legal, policy):
    """Create the node's edges for the legal actions with renormalised priors.

    Returns False (node untouched) when the edge space is exhausted.
    """
    n_legal = 0
    total = 0.0
    for a in range(legal.shape[0]):
        if legal[a]:
            n_legal += 1
            total += policy[a]
    start = t.meta[M_EDGES]
    if start + n_legal > t.edge_action.shape[0]:
        return False
    k = start
    for a in range(legal.shape[0]):
        if legal[a]:
            t.edge_action[k] = a
            t.edge_prior[k] = policy[a] / total if total > 0.0 else 1.0 / n_legal
            t.edge_child[k] = NO_NODE
            k += 1
    t.meta[M_EDGES] = k
    _front_best_prior(t, start, k)
    t.node_edge_start[node] = start
    t.node_num_edges[node] = n_legal
    t.node_num_children[node] = 0
    t.node_state[node] = EXPANDED
    return True


@njit(cache=True)
def attach_child(t, node, e, child):
    """Give edge e of `node` its child and move the edge to the end of the children prefix.

    Returns the edge's new index.
    """
    k = t.node_edge_start[node] + t.node_num_children[node]
    if k != e:
        _swap_unvisited(t, k, e)
    t.edge_child[k] = child
    t.node_num_children[node] += 1
    _front_best_prior(t, k + 1, t.node_edge_start[node] + t.node_num_edges[node])
    return k


@njit(cache=True)
def copy_subtree(src, root, dst):
    """Copy the subtree under src's node `root` into the empty tree dst (root becomes node 1).

    Breadth-first, so every node's edges stay contiguous. Returns the number of nodes copied;
    in-flight NEW nodes are dropped (their edges become unvisited again).
    """
    dst.meta[M_NODES] = 1
    dst.meta[M_EDGES] = 0
    queue = np.empty(src.meta[M_NODES], np.int64)  # new node index -> old node index
    queue[1] = root
    count = 2
    head = 1
    while head < count:
        old = queue[head]
        new = head
        head += 1
        dst.node_to_move[new] = src.node_to_move[old]
        dst.node_key[new] = src.node_key[old]
        dst.node_state[new] = src.node_state[old]
        dst.node_visits[new] = src.node_visits[old]
        dst.node_value_sum[new] = src.node_value_sum[old]
        dst.node_value_sq[new] = src.node_value_sq[old]
        # the selection sums as the visits backed them up (score utility included: the units of
        # the next backups), without virtual losses
        dst.node_utility_sq[new] = src.node_utility_sq[old]
        dst.node_score_sum[new] = src.node_score_sum[old]
        dst.node_virtual[new] = 0
        dst.node_sel[new, 0] = src.node_sel[old, 0] - src.node_virtual[old]
        dst.node_sel[new, 1] = src.node_sel[old, 1] + src.node_virtual[old]
        dst.node_value[new] = src.node_value[old]
        dst.node_score[new] = src.node_score[old]
        for k in range(2):  # not slice copies (see board.copy_board)
            dst.node_score_stats[new, k] = src.node_score_stats[old, k]
            dst.node_score_moments[new, k] = src.node_score_moments[old, k]
            dst.node_error[new, k] = src.node_error[old, k]
        ne = src.node_num_edges[old]
        start = dst.meta[M_EDGES]
        dst.node_edge_start[new] = start
        dst.node_num_edges[new] = ne
        s0 = src.node_edge_start[old]
        k = start  # children first, then the unvisited edges, as attach_child keeps them
        for j in range(ne):
            child = src.edge_child[s0 + j]
            if child != NO_NODE and src.node_state[child] != NEW:
                dst.edge_action[k] = src.edge_action[s0 + j]
                dst.edge_prior[k] = src.edge_prior[s0 + j]
                queue[count] = child
                dst.edge_child[k] = count
                count += 1
                k += 1
        dst.node_num_children[new] = k - start
        for j in range(ne):
            child = src.edge_child[s0 + j]
            if not (child != NO_NODE and src.node_state[child] != NEW):
                dst.edge_action[k] = src.edge_action[s0 + j]
                dst.edge_prior[k] = src.edge_prior[s0 + j]
                dst.edge_child[k] = NO_NODE
                k += 1
        _front_best_prior(dst, start + dst.node_num_children[new], start + ne)
        dst.meta[M_EDGES] = start + ne
    dst.meta[M_NODES] = count
    dst.meta[M_ROOT] = 1
    return count - 1


@njit(cache=True)
def find_child(t, node, action):
    """Child node reached by `action` from `node`, or NO_NODE."""
    s = t.node_edge_start[node]
    for j in range(t.node_num_edges[node]):
        if t.edge_action[s + j] == action:
            return t.edge_child[s + j]
    return NO_NODE


def max_depth_for(width: int, height: int) -> int:
    """Deepest path the kernels record (longer lines are cut and valued as leaves)."""
    return min(4 * width * height + 16, 4 * MAX_SIZE * MAX_SIZE + 16)
