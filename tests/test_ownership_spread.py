"""The ownership's standard deviation analysis reports (includeOwnershipStdev and
includeMovesOwnershipStdev): the spread over the evaluated leaves whose mean the ownership is,
against a plain walk of the search tree that recomputes every evaluated node's ownership."""

import numpy as np
import pytest

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.search import tree as T
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from tests.evaluators import SkewedEvaluator

SIZE = 5
CONFIG = SearchConfig(batch_size=4, max_nodes=20_000, max_edges=500_000)  # no evaluation cache


def black_ownership(stone_hash: int) -> np.ndarray:
    """[W*H] a made-up ownership from Black's view, fixed per stone configuration."""
    phases = (int(stone_hash) % 9973) * 0.37 + np.arange(SIZE * SIZE)
    return np.tanh(2.0 * np.sin(phases))


class OwnershipEvaluator(SkewedEvaluator):
    """SkewedEvaluator's uneven policy and values, with black_ownership from the side to
    move's view."""

    def __init__(self):
        super().__init__(SIZE * SIZE + 1, decay=0.6)

    def evaluate(self, batch):
        ev = super().evaluate(batch)
        n = batch.count
        keys = batch.boards[:n, B.ROW_HEADER, B.H_HASH]
        sign = np.where(batch.to_move[:n] == BLACK, 1.0, -1.0)
        ev.ownership = np.stack([black_ownership(k) for k in keys]) * sign[:, None]
        return ev


def tree_ownership(t, node: int, board: np.ndarray) -> list[np.ndarray]:
    """Black-view ownership of every node under `node` (itself included) that the evaluator
    evaluated, found by replaying each edge's move on a copy of the board."""
    found = []
    if t.node_state[node] in (T.EXPANDED, T.LEAF):
        found.append(black_ownership(board[B.ROW_HEADER, B.H_HASH]))
    start = int(t.node_edge_start[node])
    for j in range(int(t.node_num_children[node])):
        child = int(t.edge_child[start + j])
        if child == T.NO_NODE:
            continue
        after = board.copy()
        B.play_unchecked(after, point_from_action(int(t.edge_action[start + j]), SIZE, SIZE),
                         int(t.node_to_move[node]))
        found += tree_ownership(t, child, after)
    return found


def searched(color: int, visits: int) -> tuple[Search, GameState]:
    g = GameState(SIZE, SIZE, 0.5)
    for c, a in ((BLACK, 12), (WHITE, 7), (BLACK, 13)):
        g.play(c, point_from_action(a, SIZE, SIZE))
    g.to_move = color
    s = Search(OwnershipEvaluator(), CONFIG, seed=5)
    s.keep_ownership_spread(True)
    s.run(g, color, SearchLimits(visits=visits))
    return s, g


@pytest.mark.parametrize("color", [BLACK, WHITE])
def test_stdev_is_the_spread_of_the_evaluated_nodes_of_the_tree(color):
    s, g = searched(color, 300)
    t = s.tree
    view = 1.0 if color == BLACK else -1.0
    everything = view * np.array(tree_ownership(t, s.root, g.board))
    assert len(everything) > 200
    assert np.allclose(s.ownership(), everything.mean(axis=0))
    assert np.allclose(s.ownership_stdev(), everything.std(axis=0))
    assert s.ownership_stdev().max() > 0.3
    start = int(t.node_edge_start[s.root])
    moves = 0
    for j in range(int(t.node_num_children[s.root])):
        action, child = int(t.edge_action[start + j]), int(t.edge_child[start + j])
        after = g.board.copy()
        B.play_unchecked(after, point_from_action(action, SIZE, SIZE), color)
        under = view * np.array(tree_ownership(t, child, after))
        assert np.allclose(s.ownership(action), under.mean(axis=0))
        assert np.allclose(s.ownership_stdev(action), under.std(axis=0))
        moves += len(under) > 1
    assert moves >= 3  # several moves with a subtree of their own


def test_one_visit_has_no_spread():
    s, _ = searched(BLACK, 1)
    assert s.root_stats().root_visits == 1
    assert np.all(s.ownership_stdev() == 0.0)
    assert np.abs(s.ownership()).max() > 0.1


def test_spread_is_counted_only_when_asked_and_a_tree_counted_without_it_starts_afresh():
    s, g = searched(BLACK, 40)
    s.keep_ownership_spread(False)
    s.run(g, BLACK, SearchLimits(visits=80))
    assert s.ownership_stdev() is None and s.ownership() is not None  # nothing squared
    s.keep_ownership_spread(True)
    assert s.root_stats().root_visits == 0  # the leaves' ownership is gone with the tree
    s.run(g, BLACK, SearchLimits(visits=50))
    everything = np.array(tree_ownership(s.tree, s.root, g.board))
    assert np.allclose(s.ownership_stdev(), everything.std(axis=0))
