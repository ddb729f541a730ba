"""Subtree value-bias correction (KataGo's subtreeValueBiasFactor), as numba kernels.

A network misjudges some local shapes the same way wherever they occur: the search below a
node keeps finding the node's own evaluation too high or too low. This table learns that
error per local pattern during the search and corrects new leaves of the same pattern.

- A node's pattern key is the move that made it, the move before it, the 5x5 neighbourhood of
  the move on the board after it, the mover and the ko ban the move left. Passes and the first
  move of a game have no key.
- Each evaluated node with a key adds to its table slot (delta, weight): the mean value its
  subtree backed up minus its own evaluation, weighted by (subtree visits) ** weight_exponent.
  The node's last contribution is kept so that the next backup replaces it.
- A new leaf with a key backs up, for selection only, its evaluation plus
  factor x (delta sum / weight sum) of its slot. Reported values stay the network's.

Values are in the tree's convention (the mover's view, engine/tree.py), so one key's delta
always has the same player's sign. The table holds the contributions of the nodes of the
current tree: `rebuild` refills it after tree reuse dropped the rest.

Slot 0 of the table means "no key" (never -1, see engine/constants.py); a table of length 1
turns the correction off.
"""

import numpy as np
from numba import njit

from engine import board as B
from engine import tree as T
from engine.constants import EMPTY, NULL_POINT, PASS_POINT, WALL
from engine.coords import point_from_xy, xy_from_point

TABLE_SLOTS = 1 << 18  # slots besides slot 0: collisions in a tree of 200,000 nodes stay rare
PATTERN_RADIUS = 2  # the 5x5 neighbourhood
MIN_WEIGHT = 0.001  # a slot's weight below this corrects nothing (KataGo's)

_keys = np.random.default_rng(20261124)
_ints = np.iinfo(np.int64)
PATTERN_KEYS = _keys.integers(_ints.min, _ints.max, size=(WALL + 1, (2 * PATTERN_RADIUS + 1) ** 2),
                              dtype=np.int64)
MOVE_KEYS = _keys.integers(_ints.min, _ints.max, size=(2, B.MAX_POINTS), dtype=np.int64)
MOVER_KEYS = _keys.integers(_ints.min, _ints.max, size=3, dtype=np.int64)
KO_KEYS = _keys.integers(_ints.min, _ints.max, size=B.MAX_POINTS, dtype=np.int64)
KO_KEYS[NULL_POINT] = 0
PATTERN_KEYS[EMPTY, :] = 0  # so an empty neighbourhood adds nothing (any constant would do)


def table_length(factor: float) -> int:
    """Slots of the table for a correction factor (1 = only slot 0: off)."""
    return 1 + (TABLE_SLOTS if factor > 0 else 0)


@njit(cache=True)
def pattern_key(board, move, prev_move, mover):
    """Key of the node made by `mover` playing `move` after `prev_move`; `board` is the
    position after the move. 0 for a pass or when there is no previous move."""
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
                k ^= PATTERN_KEYS[board[B.ROW_COLOR, point_from_xy(x, y, w)], j]
            else:
                k ^= PATTERN_KEYS[WALL, j]
            j += 1
    return k


@njit(cache=True)
def slot_of(key, table_len):
    """Table slot of a pattern key (0 for no key or a table that is off)."""
    if key == 0 or table_len <= 1:
        return np.int64(0)
    return 1 + ((key >> 7) & (table_len - 2))


@njit(cache=True)
def correction(t, node, delta_sum, weight_sum, factor):
    """What a fresh leaf adds to its value for selection: factor x its slot's mean delta
    (slot 0, "no key", never gets weight)."""
    s = t.node_bias_slot[node]
    if weight_sum[s] <= MIN_WEIGHT:
        return 0.0
    return factor * delta_sum[s] / weight_sum[s]


@njit(cache=True)
def record(t, node, delta_sum, weight_sum, exponent):
    """Replace the node's contribution to its slot by the one its visits give now."""
    s = t.node_bias_slot[node]
    n = t.node_visits[node] - 1  # visits below the node (the first was its own evaluation)
    if s == 0 or n < 1 or t.node_state[node] == T.TERMINAL:
        return
    own = np.float64(t.node_value[node])
    delta = (t.node_value_sum[node] - own) / n - own
    weight = np.float64(n) ** exponent
    delta_sum[s] += delta * weight - t.node_bias_delta[node]
    weight_sum[s] += weight - t.node_bias_weight[node]
    t.node_bias_delta[node] = delta * weight
    t.node_bias_weight[node] = weight


@njit(cache=True)
def rebuild(t, delta_sum, weight_sum, exponent):
    """Empty the table and add the contribution of every node of a tree copied by
    tree.copy_subtree (which zeroes the nodes' last contributions)."""
    delta_sum[:] = 0.0
    weight_sum[:] = 0.0
    for node in range(1, t.meta[T.M_NODES]):
        record(t, node, delta_sum, weight_sum, exponent)
