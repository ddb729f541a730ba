"""The array tree: capacity bounds, children-first edge slices, subtree copy."""

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import UniformEvaluator
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.search import tree as T
from dosaku.engine.search.config import FloatParam, SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from dosaku.engine.search.scores import expected_atan_table, score_utility
from tests.evaluators import SkewedEvaluator


def _check_structure(t):
    """Every expanded node: children prefix, best-prior unvisited edge next, visits add up."""
    root = int(t.meta[T.M_ROOT])
    stack = [root]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        assert t.node_virtual[node] == 0
        assert t.node_sel[node, 0] == t.node_visits[node]
        assert t.node_sel[node, 1] == pytest.approx(t.node_value_sum[node])
        if t.node_state[node] != T.EXPANDED:
            continue
        s, ne = int(t.node_edge_start[node]), int(t.node_num_edges[node])
        nc = int(t.node_num_children[node])
        children = t.edge_child[s:s + ne]
        assert np.all(children[:nc] != T.NO_NODE) and np.all(children[nc:] == T.NO_NODE)
        if nc < ne:
            assert t.edge_prior[s + nc] == t.edge_prior[s + nc:s + ne].max()
        assert len(set(t.edge_action[s:s + ne].tolist())) == ne
        child_visits = int(t.node_visits[children[:nc]].sum())
        assert t.node_visits[node] == 1 + child_visits
        stack.extend(int(c) for c in children[:nc])
    return seen


def test_visits_add_up_and_slices_stay_ordered(counting_evaluator):
    g = GameState(5, 5, 0.5)
    s = Search(counting_evaluator, SearchConfig(batch_size=8, max_nodes=5000, max_edges=200_000))
    s.run(g, 1, SearchLimits(playouts=600))
    assert _check_structure(s.tree) == int(s.tree.meta[T.M_NODES]) - 1


def test_node_capacity_is_never_exceeded_and_search_stops():
    g = GameState(5, 5, 0.5)
    cfg = SearchConfig(batch_size=8, max_nodes=40, max_edges=100_000)
    s = Search(UniformEvaluator(), cfg, log=lambda m: None)
    played = s.run(g, 1, SearchLimits(playouts=5000))
    assert s.tree_full
    assert played < 5000
    assert int(s.tree.meta[T.M_NODES]) - 1 <= 40
    assert s.tree.node_state[1:41].tolist().count(T.NEW) == 0


def test_edge_capacity_full_keeps_evaluated_leaves():
    g = GameState(5, 5, 0.5)
    cfg = SearchConfig(batch_size=4, max_nodes=10_000, max_edges=100)  # room for 4 nodes' edges
    s = Search(UniformEvaluator(), cfg, log=lambda m: None)
    played = s.run(g, 1, SearchLimits(playouts=300))
    t = s.tree
    assert played >= 300
    assert int(t.meta[T.M_EDGES]) <= 100
    states = t.node_state[1:int(t.meta[T.M_NODES])]
    assert (states == T.LEAF).any()
    assert int(t.node_visits[s.root]) == played  # every playout was backed up to the root


def test_copy_subtree_keeps_exactly_the_subtree(counting_evaluator):
    g = GameState(5, 5, 0.5)
    s = Search(counting_evaluator, SearchConfig(batch_size=4, max_nodes=5000, max_edges=200_000))
    s.run(g, 1, SearchLimits(playouts=400))
    t = s.tree
    root = s.root
    st = s.root_stats()
    action = int(st.actions[np.argmax(st.visits)])
    child = int(T.find_child(t, root, action))

    def shape(tree, node):
        if tree.node_state[node] != T.EXPANDED:
            return (int(tree.node_visits[node]), round(float(tree.node_value_sum[node]), 9))
        s0, ne = int(tree.node_edge_start[node]), int(tree.node_num_edges[node])
        kids = {int(tree.edge_action[s0 + j]): shape(tree, int(tree.edge_child[s0 + j]))
                for j in range(ne) if tree.edge_child[s0 + j] != T.NO_NODE}
        return (int(tree.node_visits[node]), round(float(tree.node_value_sum[node]), 9), kids)

    before = shape(t, child)
    dst = T.new_tree(5000, 200_000)
    copied = T.copy_subtree(t, child, dst)
    assert shape(dst, 1) == before
    assert _check_structure(dst) == copied


def _selection_sums(t, node, path=()):
    """{actions from `node`: (visits, selection visits, utility sum, squared utility sum)}
    over the visited subtree."""
    sums = {path: (int(t.node_visits[node]), float(t.node_sel[node, 0]),
                   float(t.node_sel[node, 1]), float(t.node_utility_sq[node]))}
    s0 = int(t.node_edge_start[node])
    for j in range(s0, s0 + int(t.node_num_children[node])):
        sums |= _selection_sums(t, int(t.edge_child[j]), path + (int(t.edge_action[j]),))
    return sums


def test_reused_subtree_keeps_what_its_visits_backed_up_for_selection():
    # a nonzero score lead (score utility): a reused node must hold the same selection sums
    # as before the move, the units the next backups add
    g = GameState(9, 9, 7.0)
    cfg = SearchConfig(batch_size=8, max_nodes=20_000, max_edges=500_000)
    ev = SkewedEvaluator(82, decay=0.7, seed=5, spread=0.8, score_per_value=20)
    s = Search(ev, cfg, log=lambda m: None)
    s.run(g, BLACK, SearchLimits(playouts=1500))
    st = s.root_stats()
    action = int(st.actions[np.argmax(st.visits)])
    before = _selection_sums(s.tree, int(T.find_child(s.tree, s.root, action)))
    assert len(before) > 100
    g.play(BLACK, point_from_action(action, 9, 9))
    assert s.update_with_move(g) == before[()][0]
    assert _selection_sums(s.tree, s.root) == before


def _plain_selection_sums(t, root, fp):
    """Node -> (utility sum, squared-utility sum) as fresh backups of the tree's evaluations
    at fp's score centre give them, counted plainly: every evaluation in a node's subtree adds
    its own utility, sign-flipped by the plies between them."""
    center = fp[FloatParam.score_center]
    depth, order, stack = {root: 0}, [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        s = int(t.node_edge_start[node])
        for c in t.edge_child[s:s + int(t.node_num_children[node])]:
            depth[int(c)] = depth[node] + 1
            stack.append(int(c))

    def own(node):
        c = center if depth[node] % 2 == 1 else -center
        s = int(t.node_edge_start[node])
        children = t.edge_child[s:s + int(t.node_num_children[node])]
        count = int(t.node_visits[node]) - int(t.node_visits[children].sum())
        return count, float(t.node_value[node]) + score_utility(
            float(t.node_score_stats[node, 0]), float(t.node_score_stats[node, 1]), c, fp,
            expected_atan_table())

    sums = {}
    for a in order:
        total = square = 0.0
        below = [a]
        while below:
            d = below.pop()
            count, u = own(d)
            total += (-1) ** (depth[d] - depth[a]) * count * u
            square += count * u * u
            s = int(t.node_edge_start[d])
            below.extend(int(c) for c in t.edge_child[s:s + int(t.node_num_children[d])])
        sums[a] = (total, square)
    return sums


def test_reused_visits_count_around_the_new_searchs_score_centre():
    # the centre of the score utility follows the root's expected score from search to search;
    # the visits a reused tree kept must be counted around the new centre, as new ones are
    g = GameState(9, 9, 7.0)
    cfg = SearchConfig(batch_size=8, max_nodes=20_000, max_edges=500_000)
    ev = SkewedEvaluator(82, decay=0.7, seed=5, spread=0.8, score_per_value=20)
    s = Search(ev, cfg, log=lambda m: None)
    s.run(g, BLACK, SearchLimits(playouts=800))
    st = s.root_stats()
    action = int(st.actions[np.argmax(st.visits)])
    g.play(BLACK, point_from_action(action, 9, 9))
    assert s.update_with_move(g) > 100
    t = s.tree
    center = 0.8 * -float(t.node_score_sum[s.root]) / float(t.node_visits[s.root])
    s.run(g, WHITE, SearchLimits(playouts=200))
    fp, _ = s._kernel_params(g, 0.0)
    fp[FloatParam.score_center] = center
    expected = _plain_selection_sums(t, s.root, fp)
    assert len(expected) > 300
    for node, (total, square) in expected.items():
        assert t.node_sel[node, 1] == pytest.approx(total, rel=1e-9, abs=1e-6)
        assert t.node_utility_sq[node] == pytest.approx(square, rel=1e-9, abs=1e-6)
    fp[FloatParam.score_center] = center + 3.0  # the centre matters to these sums
    moved = _plain_selection_sums(t, s.root, fp)
    assert abs(moved[s.root][0] - expected[s.root][0]) > 1.0
