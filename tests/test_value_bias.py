"""Subtree value-bias correction (engine/value_bias.py), as KataGo 1.17.2 makes it: the pattern
key, the exact table, a node's entry and its corrected utility worked by hand on a three-node
tree, the table's bookkeeping against the tree, and what tree reuse keeps."""

import numpy as np
import pytest

from engine import board as B
from engine import tree as T
from engine import value_bias as VB
from engine.config import SearchConfig
from engine.constants import BLACK, NULL_POINT, WHITE
from engine.coords import point_from_action
from engine.evaluator import Capabilities, Evaluation
from engine.game import GameState
from engine.search import Search
from engine.search_limits import SearchLimits
from tests.boards import board_from_diagram, vertex
from tests.evaluators import SkewedEvaluator

FACTOR = 0.5
EXPONENT = 0.85  # KataGo's GTP default (program/setup.cpp), ours
CONFIG = SearchConfig(batch_size=1, max_nodes=20_000, max_edges=500_000,
                      value_bias_factor=FACTOR)

CENTRE = """
    . . . . . . .
    . . . . . . .
    . . O . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    """


def _key(diagram, move="D4", prev="C5", mover=BLACK, ko=NULL_POINT):
    """Key of `mover` playing `move` on the diagram's board (the board before the move)."""
    board = board_from_diagram(diagram)
    board[B.ROW_HEADER, B.H_KO_POINT] = ko
    g = GameState(7, 7, 0.5)
    return int(VB.pattern_key(board, vertex(g, move), vertex(g, prev), mover))


def _with(diagram, *stones):
    rows = [line.split() for line in diagram.strip().splitlines()]
    for x, y, stone in stones:
        rows[y][x] = stone
    return "\n".join(" ".join(r) for r in rows)


def test_pattern_key_reads_the_5x5_around_the_move_and_nothing_further():
    base = _key(CENTRE)
    assert base != 0
    assert _key(_with(CENTRE, (6, 3, "O"))) == base  # three points away: outside the pattern
    assert _key(_with(CENTRE, (0, 0, "X"))) == base
    assert _key(_with(CENTRE, (5, 3, "O"))) != base  # two points away: inside
    assert _key(_with(CENTRE, (5, 5, "X"))) != base
    assert _key(_with(CENTRE, (4, 4, "O"))) != _key(_with(CENTRE, (4, 4, "X")))
    assert _key(CENTRE, prev="E3") != base  # the previous move, the mover
    assert _key(CENTRE, mover=WHITE) != base
    assert _key(CENTRE, prev="pass") not in (0, base)  # a reply to a pass has a key
    assert _key(CENTRE, move="pass") == 0  # a pass has none
    board = board_from_diagram(CENTRE)
    assert VB.pattern_key(board, vertex(GameState(7, 7, 0.5), "D4"), NULL_POINT, BLACK) == 0


def test_pattern_key_sees_stones_in_atari_and_the_ko_ban_the_mover_faces():
    # White F4 sits on the pattern's edge; G4, one of its liberties, lies outside it
    white = _with(CENTRE, (5, 3, "O"))
    two_liberties = _key(_with(white, (5, 2, "X"), (5, 4, "X")))  # F5, F3: E4 and G4 left
    in_atari = _key(_with(white, (5, 2, "X"), (5, 4, "X"), (6, 3, "X")))  # and G4: E4 left
    assert in_atari != two_liberties  # the same colours inside the 5x5
    g = GameState(7, 7, 0.5)
    assert _key(CENTRE, ko=vertex(g, "A1")) != _key(CENTRE)


def test_the_table_gives_every_key_its_own_slot():
    keys = np.zeros(9, np.int64)  # 8 slots
    home = 5 << 7  # slot_of probes from (key >> 7) & 7
    a, b = home, home + (8 << 7)  # the same home
    sa, sb = int(VB.slot_of(keys, a)), int(VB.slot_of(keys, b))
    assert sa != sb and 1 <= min(sa, sb) and max(sa, sb) <= 8
    assert VB.slot_of(keys, a) == sa and VB.slot_of(keys, b) == sb
    for k in (1, 2, 3, 4, 6, 7):  # six more keys fill the table
        assert VB.slot_of(keys, k << 7) != 0
    assert VB.slot_of(keys, 99 << 7) == 0  # full: no slot, no correction
    assert VB.slot_of(keys, 0) == 0
    assert VB.slot_of(np.zeros(1, np.int64), a) == 0  # a table that is off


class _OneLine:
    """Every position is worth V to its side to move; the policy puts 99% on the first legal
    action in index order, so the search descends one line: root, A (action 0), A1 (1)..."""

    capabilities = Capabilities()

    def __init__(self, actions, value):
        self.weights = (0.01 ** np.arange(actions)).astype(np.float32)
        self.value = value

    def evaluate(self, batch):
        n = batch.count
        policy = batch.legal[:n] * self.weights[None, :]
        policy /= policy.sum(axis=1, keepdims=True)
        return Evaluation(policy.astype(np.float32), np.full(n, self.value, np.float32),
                          np.zeros(n, np.float32), None)


def test_a_node_learns_its_entry_from_its_children_and_counts_corrected():
    """KataGo's recomputeNodeStats, by hand. Values are each node's mover's view; with every
    position worth V = 0.3 to its side to move, a node's own evaluation is -0.3."""
    g = GameState(7, 7, 0.5)
    g.play(BLACK, vertex(g, "D4"))  # so that the root's children have a previous move
    s = Search(_OneLine(50, 0.3), CONFIG, log=lambda m: None)
    s.run(g, WHITE, SearchLimits(visits=3))
    t = s.tree
    root = s.root
    a = int(T.find_child(t, root, 0))
    a1 = int(T.find_child(t, a, 1))
    assert [int(t.node_visits[n]) for n in (root, a, a1)] == [3, 2, 1]
    slot_a = int(t.node_bias_slot[a])
    assert slot_a != 0 and t.node_bias_slot[root] == 0
    # A's child says +0.3 from A's mover's view, A itself -0.3: delta 0.6, weight 1 ** 0.85
    assert s._buf.bias_delta[slot_a] == pytest.approx(0.6)
    assert s._buf.bias_weight[slot_a] == pytest.approx(1.0)
    # A counts its own -0.3 corrected by 0.5 x 0.6, beside its child's +0.3
    assert t.node_sel[a, 1] / 2 == pytest.approx((-0.3 + FACTOR * 0.6 + 0.3) / 2)
    assert t.node_sel[root, 1] / 3 == pytest.approx((-0.3 - 2 * 0.15) / 3)
    s.run(g, WHITE, SearchLimits(visits=4))  # A1 gets a child: A1's entry 0.6 / 1 too
    a11 = int(T.find_child(t, a1, 2))
    assert [int(t.node_visits[n]) for n in (a, a1, a11)] == [3, 2, 1]
    assert t.node_sel[a1, 1] / 2 == pytest.approx(0.15)
    # A's contribution is replaced: its children now say -0.15, so delta 0.15, weight
    # 2 ** 0.85; A's own evaluation counts -0.3 + 0.5 x 0.15
    w = 2 ** EXPONENT
    assert s._buf.bias_weight[slot_a] == pytest.approx(w)
    assert s._buf.bias_delta[slot_a] == pytest.approx(0.15 * w)
    assert t.node_sel[a, 1] / 3 == pytest.approx((-0.3 + FACTOR * 0.15 - 2 * 0.15) / 3)


def _children_mean(t, node):
    """The node's children's mean utility for selection, from the node's mover's view."""
    start = int(t.node_edge_start[node])
    children = [int(t.edge_child[j]) for j in range(start, start + int(t.node_num_children[node]))]
    return -sum(float(t.node_sel[c, 1]) for c in children) / sum(
        int(t.node_visits[c]) for c in children)


def _assert_nodes_hold_what_their_children_say(s):
    """Every keyed node with children: its last contribution is (children's mean - its own
    value) x w, w = (visits below it) ** 0.85; a node alone in its entry counts its own value
    corrected by factor x that delta."""
    t = s.tree
    n = int(t.meta[T.M_NODES])
    slots = t.node_bias_slot[:n]
    for node in range(1, n):
        if not slots[node] or t.node_visits[node] < 2:
            continue
        w = (int(t.node_visits[node]) - 1) ** EXPONENT
        delta = _children_mean(t, node) - float(t.node_value[node])
        assert t.node_bias_weight[node] == pytest.approx(w)
        assert t.node_bias_delta[node] == pytest.approx(delta * w, abs=1e-9)
        if np.count_nonzero(slots == slots[node]) == 1 and \
                s._buf.bias_weight[slots[node]] == pytest.approx(w):
            visits = int(t.node_visits[node])
            own = float(t.node_value[node]) + FACTOR * delta
            expected = (own + _children_mean(t, node) * (visits - 1)) / visits
            assert t.node_sel[node, 1] / visits == pytest.approx(expected, abs=1e-9)


def _table_by_key(s):
    keys = s._buf.bias_keys
    return {int(keys[i]): (float(s._buf.bias_delta[i]), float(s._buf.bias_weight[i]))
            for i in np.flatnonzero(keys)}


def _node_sums_by_key(t, keys):
    sums = {}
    for node in range(1, int(t.meta[T.M_NODES])):
        slot = int(t.node_bias_slot[node])
        if slot:
            d, w = sums.get(int(keys[slot]), (0.0, 0.0))
            sums[int(keys[slot])] = (d + float(t.node_bias_delta[node]),
                                     w + float(t.node_bias_weight[node]))
    return sums


def test_table_holds_its_nodes_contributions_and_reuse_keeps_a_fifth_of_the_dropped_ones():
    g = GameState(7, 7, 0.5)
    g.play(BLACK, vertex(g, "D4"))
    s = Search(SkewedEvaluator(50), CONFIG, log=lambda m: None)
    s.run(g, WHITE, SearchLimits(visits=800))
    t = s.tree
    assert np.count_nonzero(s._buf.bias_weight) > 50
    _assert_nodes_hold_what_their_children_say(s)
    fresh = _table_by_key(s)
    assert fresh.keys() == _node_sums_by_key(t, s._buf.bias_keys).keys()
    for key, (d, w) in _node_sums_by_key(t, s._buf.bias_keys).items():
        assert fresh[key] == pytest.approx((d, w), abs=1e-9)
    st = s.root_stats()
    a = int(st.actions[np.argmax(st.visits)])
    g.play(WHITE, point_from_action(a, 7, 7))
    assert s.update_with_move(g) > 0
    t = s.tree
    assert t.node_bias_slot[s.root] == 0  # KataGo's new root has no entry
    kept = _node_sums_by_key(t, s._buf.bias_keys)
    after = _table_by_key(s)
    assert after.keys() == kept.keys()  # entries no kept node uses are gone
    for key, (d, w) in kept.items():
        d0, w0 = fresh[key]
        assert after[key] == pytest.approx((0.2 * d0 + 0.8 * d, 0.2 * w0 + 0.8 * w), abs=1e-9)
    s.run(g, BLACK, SearchLimits(visits=1200))
    _assert_nodes_hold_what_their_children_say(s)
    s.reset()
    assert not s._buf.bias_keys.any() and not s._buf.bias_delta.any()


def test_off_by_default_and_without_a_table_nothing_is_keyed(counting_evaluator):
    assert SearchConfig().value_bias_factor == 0.0
    g = GameState(7, 7, 0.5)
    s = Search(counting_evaluator, SearchConfig(batch_size=4), log=lambda m: None)
    s.run(g, BLACK, SearchLimits(playouts=200))
    assert len(s._buf.bias_delta) == 1
    assert not s.tree.node_bias_slot.any()
    # selection values equal the backed-up values (scores are 0: no score utility either)
    root = s.root
    assert float(s.tree.node_sel[root, 1]) == pytest.approx(float(s.tree.node_value_sum[root]))
