"""Subtree value-bias correction (engine/value_bias.py): the pattern key, the table's bookkeeping
against a plain recomputation from the tree, and the correction a fresh leaf backs up."""

import numpy as np
import pytest

from engine import tree as T
from engine import value_bias as VB
from engine.config import SearchConfig
from engine.constants import BLACK, NULL_POINT, WHITE
from engine.coords import point_from_action
from engine.game import GameState
from engine.search import Search
from engine.search_limits import SearchLimits
from tests.boards import board_from_diagram, vertex
from tests.evaluators import SkewedEvaluator

FACTOR = 0.5
CONFIG = SearchConfig(batch_size=1, max_nodes=20_000, max_edges=500_000,
                      value_bias_factor=FACTOR)

CENTRE = """
    . . . . . . .
    . . . . . . .
    . . O . . . .
    . . . X . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    """


def _key(diagram, move="D4", prev="C5", mover=BLACK):
    board = board_from_diagram(diagram)
    g = GameState(7, 7, 0.5)
    return int(VB.pattern_key(board, vertex(g, move), vertex(g, prev), mover))


def _with(diagram, x, y, stone):
    rows = [line.split() for line in diagram.strip().splitlines()]
    rows[y][x] = stone
    return "\n".join(" ".join(r) for r in rows)


def test_pattern_key_reads_the_5x5_around_the_move_and_nothing_further():
    base = _key(CENTRE)
    assert base != 0
    assert _key(_with(CENTRE, 6, 3, "O")) == base  # three points away: outside the pattern
    assert _key(_with(CENTRE, 0, 0, "X")) == base
    assert _key(_with(CENTRE, 5, 3, "O")) != base  # two points away: inside
    assert _key(_with(CENTRE, 5, 5, "X")) != base
    assert _key(_with(CENTRE, 4, 4, "O")) != _key(_with(CENTRE, 4, 4, "X"))
    assert _key(CENTRE, prev="E3") != base  # the previous move, the mover
    assert _key(CENTRE, mover=WHITE) != base
    assert _key(CENTRE, prev="pass") not in (0, base)  # a reply to a pass has a key
    assert _key(CENTRE, move="pass") == 0  # a pass has none
    board = board_from_diagram(CENTRE)
    assert VB.pattern_key(board, vertex(GameState(7, 7, 0.5), "D4"), NULL_POINT, BLACK) == 0


def test_slot_zero_means_no_key_or_a_table_that_is_off():
    assert VB.slot_of(0, VB.table_length(FACTOR)) == 0
    assert VB.slot_of(123456789, VB.table_length(0.0)) == 0
    slots = {int(VB.slot_of(k, VB.table_length(FACTOR))) for k in range(1, 1 << 20, 977)}
    assert min(slots) >= 1 and max(slots) <= VB.TABLE_SLOTS


def _hand_tree():
    """Root, one child (slot 5, own value 0.2) and three visits below the child."""
    t = T.new_tree(10, 100)
    T.reset_tree(t, BLACK, 1)
    child = T.alloc_node(t, WHITE, 2)
    t.node_state[child] = T.EXPANDED
    t.node_bias_slot[child] = 5
    t.node_value[child] = 0.2
    return t, child


def test_record_replaces_the_nodes_contribution_with_its_subtree_mean_minus_its_own_value():
    t, child = _hand_tree()
    delta, weight = np.zeros(9), np.zeros(9)
    t.node_visits[child] = 1
    t.node_value_sum[child] = 0.2
    VB.record(t, child, delta, weight, 0.85)
    assert delta.sum() == weight.sum() == 0  # its own evaluation alone: nothing to learn
    t.node_visits[child] = 4
    t.node_value_sum[child] = 0.2 + 3 * 0.5  # the subtree says 0.5 where the net said 0.2
    VB.record(t, child, delta, weight, 0.85)
    assert weight[5] == pytest.approx(3 ** 0.85)
    assert delta[5] == pytest.approx(0.3 * 3 ** 0.85)
    t.node_visits[child] = 5
    t.node_value_sum[child] = 0.2 + 4 * 0.4
    VB.record(t, child, delta, weight, 0.85)  # replaced, not added
    assert weight[5] == pytest.approx(4 ** 0.85)
    assert delta[5] == pytest.approx(0.2 * 4 ** 0.85)
    # a new leaf of that pattern is corrected toward what the subtree found: +factor x 0.2
    leaf = T.alloc_node(t, WHITE, 3)
    t.node_bias_slot[leaf] = 5
    assert VB.correction(t, leaf, delta, weight, FACTOR) == pytest.approx(FACTOR * 0.2)
    t.node_bias_slot[leaf] = 6  # an empty slot corrects nothing
    assert VB.correction(t, leaf, delta, weight, FACTOR) == 0.0
    t.node_state[child] = T.TERMINAL  # an exact result has no bias to learn
    VB.rebuild(t, delta, weight, 0.85)
    assert delta.sum() == weight.sum() == 0


def _plain_table(t, length, exponent=CONFIG.value_bias_exponent):
    """The table recomputed from the tree, node by node, without the kernels."""
    delta, weight = np.zeros(length), np.zeros(length)
    for node in range(1, int(t.meta[T.M_NODES])):
        s, n = int(t.node_bias_slot[node]), int(t.node_visits[node]) - 1
        if s and n >= 1 and t.node_state[node] != T.TERMINAL:
            own = float(t.node_value[node])
            w = n ** exponent
            delta[s] += ((float(t.node_value_sum[node]) - own) / n - own) * w
            weight[s] += w
    return delta, weight


def _assert_table_matches_tree(s):
    delta, weight = _plain_table(s.tree, len(s._buf.bias_delta))
    np.testing.assert_allclose(s._buf.bias_delta, delta, atol=1e-9)
    np.testing.assert_allclose(s._buf.bias_weight, weight, atol=1e-9)


def test_table_holds_the_contributions_of_the_trees_nodes_through_reuse(counting_evaluator):
    g = GameState(7, 7, 0.5)
    s = Search(counting_evaluator, CONFIG, log=lambda m: None)
    s.run(g, BLACK, SearchLimits(playouts=800))
    keyed = np.count_nonzero(s.tree.node_bias_slot[1:int(s.tree.meta[T.M_NODES])])
    assert keyed > 100  # every node but passes and the root's children has a pattern
    assert np.count_nonzero(s._buf.bias_weight) > 20
    _assert_table_matches_tree(s)
    st = s.root_stats()
    a = int(st.actions[np.argmax(st.visits)])
    g.play(BLACK, point_from_action(a, 7, 7))
    assert s.update_with_move(g) > 0
    _assert_table_matches_tree(s)  # the dropped nodes' contributions are gone
    s.run(g, WHITE, SearchLimits(playouts=300))
    _assert_table_matches_tree(s)
    s.reset()
    assert not s._buf.bias_delta.any() and not s._buf.bias_weight.any()


def test_a_fresh_leaf_backs_up_its_value_plus_the_correction_for_selection_only():
    g = GameState(9, 9, 0.5)
    s = Search(SkewedEvaluator(82), CONFIG, log=lambda m: None)
    s.run(g, BLACK, SearchLimits(visits=2))
    t = s.tree
    corrected = 0
    for visits in range(3, 700):
        before_delta = s._buf.bias_delta.copy()
        before_weight = s._buf.bias_weight.copy()
        root = s.root
        sel, value_sum = float(t.node_sel[root, 1]), float(t.node_value_sum[root])
        nodes = int(t.meta[T.M_NODES])
        s.run(g, BLACK, SearchLimits(visits=visits))
        if int(t.meta[T.M_NODES]) != nodes + 1:
            continue  # no fresh leaf this time (a terminal position revisited)
        leaf = nodes
        v = float(t.node_value[leaf])
        d_value = float(t.node_value_sum[root]) - value_sum
        assert abs(d_value) == pytest.approx(abs(v), abs=1e-7)  # reports: the net's value
        slot = int(t.node_bias_slot[leaf])
        expected = 0.0
        if slot and before_weight[slot] > VB.MIN_WEIGHT:
            expected = FACTOR * before_delta[slot] / before_weight[slot]
        sign = 1.0 if (d_value >= 0) == (v >= 0) else -1.0  # the root's view of the leaf
        d_sel = float(t.node_sel[root, 1]) - sel
        assert d_sel - d_value == pytest.approx(sign * expected, abs=1e-6), visits
        corrected += expected != 0.0
    assert corrected >= 10


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

