"""Subtree value-bias correction (KataGo's subtreeValueBiasFactor), as numba kernels.

A network misjudges some local shapes the same way wherever they occur: the search below a
node keeps finding the node's own evaluation too high or too low. This table learns that
error per local pattern during the search and corrects the evaluations of that pattern.
It follows KataGo 1.17.2 (`search/subtreevaluebiastable.cpp`, `searchupdatehelpers.cpp`):

- A node's pattern key is the move that made it, the move before it, the mover, and on the
  board BEFORE the move the 5x5 neighbourhood of the move (colours, stones in atari) and the
  ko ban. Passes, the root and the first move of a game have no key. The table stores the
  64-bit keys and probes linearly, so two patterns share an entry only if their keys collide
  (KataGo's map of 128-bit keys: none either in practice).
- Whenever a keyed node's utility is recomputed from its children (engine/backup.py), its
  entry's (delta sum, weight sum) replaces the node's last contribution by the new one:
  (children's mean utility - the node's own utility) x w and w, w = (children's visits) **
  weight exponent.
- The node's own utility then counts with factor x (delta sum / weight sum) added, and so does
  a new leaf's evaluation. Reported values stay the network's.

Values are in the tree's convention (the mover's view, engine/tree.py); the mover is part of
the key, so one entry's deltas always have the same player's sign. The table holds the
contributions of the current tree's nodes and what the dropped ones left (`rebuild`).

Slot 0 of the table means "no key" (never -1, see engine/constants.py); a table of length 1
turns the correction off.
"""

import numpy as np
from numba import njit

from engine import board as B
from engine import tree as T
from engine.constants import NULL_POINT, PASS_POINT, WALL
from engine.coords import point_from_xy, xy_from_point

TABLE_SLOTS = 1 << 19  # slots besides slot 0: a tree of 200,000 nodes fills under 40%
PATTERN_RADIUS = 2  # the 5x5 neighbourhood
MIN_WEIGHT = 0.001  # a slot's weight below this corrects nothing (KataGo's)
FREE_PROP = 0.8  # share of a dropped node's contribution taken out (subtreeValueBiasFreeProp)

_keys = np.random.default_rng(20261124)
_ints = np.iinfo(np.int64)
_AREA = (2 * PATTERN_RADIUS + 1) ** 2
PATTERN_KEYS = _keys.integers(_ints.min, _ints.max, size=(WALL + 1, _AREA), dtype=np.int64)
ATARI_KEYS = _keys.integers(_ints.min, _ints.max, size=_AREA, dtype=np.int64)
MOVE_KEYS = _keys.integers(_ints.min, _ints.max, size=(2, B.MAX_POINTS), dtype=np.int64)
MOVER_KEYS = _keys.integers(_ints.min, _ints.max, size=3, dtype=np.int64)
KO_KEYS = _keys.integers(_ints.min, _ints.max, size=B.MAX_POINTS, dtype=np.int64)
KO_KEYS[NULL_POINT] = 0


def table_length(factor: float) -> int:
    """Slots of the table for a correction factor (1 = only slot 0: off)."""
    return 1 + (TABLE_SLOTS if factor > 0 else 0)


@njit(cache=True)
def pattern_key(board, move, prev_move, mover):
    """Key of the node made by `mover` playing `move` after `prev_move`; `board` is the
    position BEFORE the move (KataGo's). 0 for a pass or when there is no previous move.
    Points off the board add nothing: the move fixes which of the 25 are on it."""
    if move == PASS_POINT or prev_move == NULL_POINT:
        return np.int64(0)
    w = board[B.ROW_HEADER, B.H_WIDTH]
    h = board[B.ROW_HEADER, B.H_HEIGHT]
    x0, y0 = xy_from_point(move, w)
    k = MOVE_KEYS[0, move] ^ MOVE_KEYS[1, prev_move] ^ MOVER_KEYS[mover]
    k ^= KO_KEYS[board[B.ROW_HEADER, B.H_KO_POINT]]
    j = 0
    for dy in range(-PATTERN_RADIUS, PATTERN_RADIUS + 1):
        for dx in range(-PATTERN_RADIUS, PATTERN_RADIUS + 1):
            x = x0 + dx
            y = y0 + dy
            if 0 <= x < w and 0 <= y < h:
                p = point_from_xy(x, y, w)
                k ^= PATTERN_KEYS[board[B.ROW_COLOR, p], j]
                head = board[B.ROW_HEAD, p]
                if head != NULL_POINT and board[B.ROW_LIBS, head] == 1:
                    k ^= ATARI_KEYS[j]
            j += 1
    return k


@njit(cache=True)
def slot_of(keys, key):
    """Slot of a pattern key in the table's `keys`, taken if the key is new (linear probing
    from the key's home); 0 for no key, a table that is off or a full one."""
    n = keys.shape[0] - 1
    if key == 0 or n == 0:
        return np.int64(0)
    i = (key >> 7) & (n - 1)
    for _ in range(n):
        s = 1 + i
        if keys[s] == key:
            return s
        if keys[s] == 0:
            keys[s] = key
            return s
        i = (i + 1) & (n - 1)
    return np.int64(0)


@njit(cache=True)
def correction(t, node, delta_sum, weight_sum, factor):
    """What the node's own evaluation gains for selection: factor x its slot's mean delta
    (slot 0, "no key", never gets weight)."""
    s = t.node_bias_slot[node]
    if weight_sum[s] <= MIN_WEIGHT:
        return 0.0
    return factor * delta_sum[s] / weight_sum[s]


@njit(cache=True)
def record(t, node, delta, child_visits, delta_sum, weight_sum, exponent):
    """Replace the node's contribution to its slot by `delta` (its children's mean utility
    minus its own) weighted by child_visits ** exponent."""
    s = t.node_bias_slot[node]
    if s == 0:
        return
    weight = np.float64(child_visits) ** exponent
    weighted = delta * weight
    delta_sum[s] += weighted - t.node_bias_delta[node]
    weight_sum[s] += weight - t.node_bias_weight[node]
    t.node_bias_delta[node] = weighted
    t.node_bias_weight[node] = weight


@njit(cache=True)
def rebuild(t, keys, delta_sum, weight_sum):
    """Refill the table after tree reuse (tree.copy_subtree) or a reset, as KataGo's node
    deletion and clearUnusedSynchronous leave it: an entry some kept node still uses holds the
    kept nodes' contributions plus (1 - FREE_PROP) of the dropped ones' (of its old sums);
    other entries go. The root has no key (KataGo's new root is a copy without one)."""
    old_keys = keys.copy()
    old_delta = delta_sum.copy()
    old_weight = weight_sum.copy()
    keys[:] = 0
    delta_sum[:] = 0.0
    weight_sum[:] = 0.0
    t.node_bias_slot[t.meta[T.M_ROOT]] = 0
    n = t.meta[T.M_NODES]
    for node in range(1, n):
        old = t.node_bias_slot[node]
        if old == 0:
            continue
        s = slot_of(keys, old_keys[old])
        t.node_bias_slot[node] = s
        delta_sum[s] = (1.0 - FREE_PROP) * old_delta[old]
        weight_sum[s] = (1.0 - FREE_PROP) * old_weight[old]
    for node in range(1, n):
        s = t.node_bias_slot[node]
        if s != 0:
            delta_sum[s] += FREE_PROP * t.node_bias_delta[node]
            weight_sum[s] += FREE_PROP * t.node_bias_weight[node]
