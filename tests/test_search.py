"""Search behaviour on tiny boards with fake evaluators."""


import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import (
    Capabilities,
    Evaluation,
    PositionBatch,
    UniformEvaluator,
)
from dosaku.engine.evaluators.rollout import RolloutEvaluator
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import action_from_point, point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.engine.search import driver as search_module
from dosaku.engine.search import tree as T
from dosaku.engine.search.bans import root_only
from dosaku.engine.search.buffers import KIND_EVAL, KIND_EVAL_END
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search, root_moves
from dosaku.engine.search.limits import SearchLimits, should_stop
from tests.boards import game_from_diagram, vertex
from tests.evaluators import SkewedEvaluator

SMALL = SearchConfig(batch_size=8, max_nodes=20_000, max_edges=500_000)


def _visited(s):
    st = s.root_stats()
    return {int(a): int(v) for a, v in zip(st.actions, st.visits) if v > 0}


def test_root_never_visits_illegal_moves_in_random_games():
    rng = np.random.default_rng(1)
    g = GameState(5, 5, 0.5)
    s = Search(UniformEvaluator(), SMALL, seed=3)
    for _ in range(30):
        color = g.to_move
        s.run(g, color, SearchLimits(playouts=64))
        legal = g.legal_mask(color)
        visited = _visited(s)
        assert visited and all(legal[a] for a in visited)
        choices = [a for a in np.flatnonzero(legal)]
        a = int(rng.choice(choices))
        g.play(color, point_from_action(a, 5, 5))
        s.update_with_move(g)


class _ForbidGame(GameState):
    """A game whose root legality forbids some moves (as superko would)."""

    forbidden: set[int] = set()

    def legal_mask(self, color):
        mask = super().legal_mask(color)
        for a in self.forbidden:
            mask[a] = False
        return mask


def test_root_legality_comes_from_the_game_record():
    g = _ForbidGame(5, 5, 0.5)
    g.forbidden = {0, 6, 12, 24}
    s = Search(UniformEvaluator(), SMALL)
    s.run(g, BLACK, SearchLimits(playouts=400))
    visited = _visited(s)
    assert len(visited) > 10
    assert not set(visited) & g.forbidden
    # after reuse the new root's edges were made with simple ko only; still filtered
    s2 = Search(UniformEvaluator(), SMALL)
    s2.run(g, BLACK, SearchLimits(playouts=400))
    assert not set(_visited(s2)) & g.forbidden


def test_root_moves_are_the_allowed_legal_ones_or_else_pass():
    legal = np.array([True, False, True, True])  # three points and pass
    assert root_moves(legal, None) is legal
    assert root_moves(legal, np.array([False, True, True, False])).tolist() == \
        [False, False, True, False]
    assert root_moves(legal, np.array([False, True, False, False])).tolist() == \
        [False, False, False, True]


def test_a_root_first_searched_under_a_restriction_keeps_every_legal_move():
    # an analysis limited to two moves expands the root; a later search of the same position
    # without the limit reuses that root and must still see, and search, every legal move
    g = GameState(5, 5, 0.5)
    s = Search(UniformEvaluator(), SMALL)
    allowed = np.zeros(26, np.bool_)
    allowed[[0, 12]] = True
    s.run(g, BLACK, SearchLimits(playouts=100), bans=root_only(allowed, BLACK))
    assert set(_visited(s)) == {0, 12}
    s.run(g, BLACK, SearchLimits(playouts=400))
    st = s.root_stats()
    legal = np.flatnonzero(g.legal_mask(BLACK)).tolist()
    assert sorted(st.actions.tolist()) == legal
    assert (st.prior > 0).all()
    assert sorted(_visited(s)) == legal


def test_root_noise_makes_uniform_priors_uneven_and_leaves_them_summing_to_one():
    g = GameState(5, 5, 0.5)
    legal = g.legal_mask(BLACK)
    plain = Search(UniformEvaluator(), SMALL, seed=4)
    plain.run(g, BLACK, SearchLimits(playouts=64))
    assert np.allclose(plain.root_prior[legal], 1 / legal.sum())
    priors = []
    for seed in (4, 5):  # self-play's root noise (training/selfplay_game.py)
        s = Search(UniformEvaluator(), SMALL, seed=seed)
        s.run(g, BLACK, SearchLimits(playouts=64), noise_weight=0.25, noise_alpha_scale=10.83)
        assert s.root_prior.sum() == pytest.approx(1.0, abs=1e-5)
        assert s.root_prior.std() > 0.01 and (s.root_prior[~legal] == 0).all()
        priors.append(s.root_prior.copy())
    assert not np.allclose(*priors)  # drawn from the search's seed


def test_positional_superko_move_is_excluded():
    # Black takes the ko at C3, both pass (the simple-ko ban is gone), and White's retake at
    # B3 would recreate the starting position: legal under simple ko, not under superko.
    diagram = """
        . X O .
        X O . O
        . X O .
        . . . .
        """
    for rules, retake_legal in ((PRESETS["chinese"], True), (PRESETS["tromp-taylor"], False)):
        g = game_from_diagram(diagram, BLACK, rules=rules)
        assert g.play(BLACK, vertex(g, "C3")) == MOVE_OK
        g.play(WHITE, PASS_POINT)
        g.play(BLACK, PASS_POINT)
        retake = action_from_point(vertex(g, "B3"), g.width, g.height)
        assert bool(g.legal_mask(WHITE)[retake]) == retake_legal
        s = Search(UniformEvaluator(), SMALL)
        s.run(g, WHITE, SearchLimits(playouts=300))
        assert (retake in _visited(s)) == retake_legal


def test_capture_is_found_with_rollouts():
    # White's four stones in atari at C3; capturing wins the board.
    g = game_from_diagram("""
        . . . . .
        . X X X .
        X O O O X
        X O . O X
        . X X X .
        """, BLACK, komi=0.5)
    s = Search(RolloutEvaluator(), SearchConfig(batch_size=8, ucb1=True), seed=5)
    s.run(g, BLACK, SearchLimits(playouts=3000))
    st = s.root_stats()
    best = int(st.actions[np.argmax(st.visits)])
    assert point_from_action(best, 5, 5) == vertex(g, "C2")


def test_passing_after_opponent_pass_is_scored_exactly():
    # White passed; Black is behind on the board, so passing (game over) must lose for sure.
    g = game_from_diagram("""
        . X O .
        . X O .
        . X O .
        . X O .
        """, WHITE, komi=2.5)
    g.play(WHITE, PASS_POINT)
    s = Search(RolloutEvaluator(), SearchConfig(batch_size=8), seed=2)
    s.run(g, BLACK, SearchLimits(playouts=800))
    st = s.root_stats()
    j = int(np.flatnonzero(st.actions == 16)[0])
    assert st.visits[j] > 0
    assert st.value[j] == -1.0 and st.score[j] == pytest.approx(-2.5)
    assert int(st.actions[np.argmax(st.visits)]) != 16


def test_update_with_move_keeps_the_subtree_and_resets_on_mismatch(counting_evaluator):
    g = GameState(5, 5, 0.5)
    s = Search(counting_evaluator, SMALL, log=lambda m: None)
    s.run(g, BLACK, SearchLimits(playouts=500))
    st = s.root_stats()
    a = int(st.actions[np.argmax(st.visits)])
    child = int(T.find_child(s.tree, s.root, a))
    visits = int(s.tree.node_visits[child])
    value_sum = float(s.tree.node_value_sum[child])
    grandchildren = sorted(int(s.tree.node_visits[c]) for c in
                           s.tree.edge_child[s.tree.node_edge_start[child]:][
                               :s.tree.node_num_children[child]])
    g.play(BLACK, point_from_action(a, 5, 5))
    assert s.update_with_move(g) == visits
    t = s.tree
    assert int(t.node_visits[s.root]) == visits
    assert float(t.node_value_sum[s.root]) == value_sum
    assert int(t.meta[T.M_NODES]) - 1 == 1 + _count_below(t, s.root)
    kids = t.edge_child[t.node_edge_start[s.root]:][:t.node_num_children[s.root]]
    assert sorted(int(t.node_visits[c]) for c in kids) == grandchildren
    # the next search continues from the kept statistics
    s.run(g, WHITE, SearchLimits(visits=visits + 50))
    assert int(s.tree.node_visits[s.root]) >= visits + 50

    # a stored key that disagrees with the game -> fresh tree
    st = s.root_stats()
    a = int(st.actions[np.argmax(st.visits)])
    child = int(T.find_child(s.tree, s.root, a))
    s.tree.node_key[child] ^= 12345
    g.play(WHITE, point_from_action(a, 5, 5))
    assert s.update_with_move(g) == 0
    assert s.root == T.NO_NODE
    # a move by the wrong colour (the root expected the other side) -> fresh tree
    s.run(g, BLACK, SearchLimits(playouts=100))
    g.play(WHITE, PASS_POINT)
    assert s.update_with_move(g) == 0


def _count_below(t, node):
    s0 = int(t.node_edge_start[node])
    kids = t.edge_child[s0:s0 + int(t.node_num_children[node])]
    return sum(1 + _count_below(t, int(c)) for c in kids)


def test_deterministic_with_a_seed():
    def run(seed):
        g = GameState(6, 6, 0.5)
        s = Search(RolloutEvaluator(), SearchConfig(batch_size=4, ucb1=True), seed=seed)
        s.run(g, BLACK, SearchLimits(playouts=500))
        st = s.root_stats()
        return st.visits.tolist(), st.value.round(12).tolist()

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_cache_serves_repeated_positions(counting_evaluator):
    g = GameState(4, 4, 0.5)
    cfg = SearchConfig(batch_size=4, max_nodes=20_000, max_edges=400_000, cache_size=4096)
    ev = counting_evaluator
    s = Search(ev, cfg)
    s.run(g, BLACK, SearchLimits(playouts=2000))
    # transpositions (A then B == B then A) are served from the cache
    assert ev.positions < 2000
    assert int(s.tree.node_visits[s.root]) >= 2000


def test_counters_add_up_to_what_the_search_did(counting_evaluator):
    """Evaluations counted are the rows the evaluator saw; every leaf the tree gained was
    either one of those or a cache hit; a second search of the same root counts the first's
    visits as kept, and a move followed into the tree counts the child's."""
    g = GameState(4, 4, 0.5)
    cfg = SearchConfig(batch_size=4, max_nodes=20_000, max_edges=400_000, cache_size=4096)
    ev = counting_evaluator
    s = Search(ev, cfg)
    s.run(g, BLACK, SearchLimits(playouts=600))
    c = s.counters
    first = int(s.tree.node_visits[s.root])
    assert c.evaluations == ev.positions > 0
    assert 0 < c.hits <= c.lookups
    assert c.evaluations + c.hits >= int(s.tree.meta[T.M_NODES]) - 1 - _terminal_nodes(s.tree)
    assert (c.searches, c.visits, c.visits_reused) == (1, first, 0)
    s.run(g, BLACK, SearchLimits(playouts=first + 100))
    assert (c.searches, c.visits_reused) == (2, first)
    assert c.visits == first + int(s.tree.node_visits[s.root])
    st = s.root_stats()
    action = int(st.actions[np.argmax(st.visits)])
    g.play(BLACK, point_from_action(action, 4, 4))
    kept = s.update_with_move(g)
    s.run(g, WHITE, SearchLimits(playouts=kept + 50))
    assert kept > 0 and c.visits_reused == first + kept


def _terminal_nodes(t) -> int:
    return int(np.count_nonzero(t.node_state[1:int(t.meta[T.M_NODES])] == T.TERMINAL))


def test_early_stop_when_the_lead_is_unassailable():
    # one obviously winning move (the capture) soon has more visits than the rest can reach
    g = game_from_diagram("""
        . . . . .
        . X X X .
        X O O O X
        X O . O X
        . X X X .
        """, BLACK, komi=0.5)
    s = Search(RolloutEvaluator(), SearchConfig(batch_size=8), seed=5)
    done = s.run(g, BLACK, SearchLimits(playouts=20000, early_stop=True))
    st = s.root_stats()
    top, second = sorted(st.visits)[-1], sorted(st.visits)[-2]
    assert done < 20000
    assert top - second > 20000 - done - 8  # checked once per batch of 8
    assert point_from_action(int(st.actions[np.argmax(st.visits)]), 5, 5) == vertex(g, "C2")


class TickingClock:
    """Stands in for the time module: monotonic() moves on by `tick` seconds at every call."""

    def __init__(self, tick: float):
        self.tick = tick
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += self.tick
        return self.now


@pytest.mark.parametrize("elapsed, step, launch", [(0.0, 0.0, True), (0.6, 0.35, True),
                                                   (0.7, 0.35, False), (0.9, 0.05, True),
                                                   (0.96, 0.05, False), (1.2, 0.0, False)])
def test_no_batch_is_launched_that_would_end_past_the_time_limit(elapsed, step, launch):
    """A batch launched at `elapsed` returns `step` seconds later (as the last one did): under
    a 1 s limit it is launched only if it comes back in time, since a late move costs a
    byo-yomi period (a soak lost one game on time when half a step was allowed past it)."""
    limits = SearchLimits(seconds=1.0)
    assert should_stop(limits, None, None, None, 0, 0, elapsed, step) is not launch


def test_early_stop_cuts_the_time_only_when_the_clock_keeps_what_is_saved(monkeypatch):
    # the capture is clear after a few hundred playouts; with a fixed time per move the search
    # still uses all of it (stopping would save nothing), with a clock it stops early
    g = game_from_diagram("""
        . . . . .
        . X X X .
        X O O O X
        X O . O X
        . X X X .
        """, BLACK, komi=0.5)
    # the search reads a clock that moves on 0.2 ms at every look (about the pace of real
    # playouts), so what it does depends on the playouts alone, not on how busy the machine is
    clock = TickingClock(0.0002)
    monkeypatch.setattr(search_module, "time", clock)
    used = {}
    for bank in (False, True):
        s = Search(RolloutEvaluator(), SearchConfig(batch_size=8), seed=5)
        start = clock.monotonic()
        s.run(g, BLACK, SearchLimits(seconds=3.0, early_stop=True, bank_time=bank))
        used[bank] = clock.monotonic() - start
    assert 2.9 <= used[False] < 3.1  # the time limit stops at seconds - half a batch
    assert used[True] < 0.9 * 3.0  # early stop: the clock keeps the rest


class _PathCheckingEvaluator:
    """Compares every batch row with batch_row_from_game on the game replayed along the row's
    tree path: the search must hand the network exactly what the game record would."""

    capabilities = Capabilities()

    def __init__(self, game):
        self.game = game
        self.search = None
        self.rows_checked = 0
        self.max_depth = 0

    def evaluate(self, batch):
        from copy import deepcopy

        from dosaku.engine.evaluators.positions import batch_row_from_game
        s = self.search
        ref = PositionBatch(1, batch.width, batch.height, batch.komi, batch.rules)
        buf = s._buf
        for i in range(int(buf.out[0])):
            if buf.leaf_kind[i] not in (KIND_EVAL, KIND_EVAL_END):
                continue
            r = int(buf.leaf_row[i])
            depth = int(buf.path_len[i])
            g = deepcopy(self.game)
            for k in range(depth):
                a = int(buf.path_actions[i, k])
                assert g.play(g.to_move, point_from_action(a, g.width, g.height)) == MOVE_OK
            batch_row_from_game(ref, 0, g)
            assert np.array_equal(batch.boards[r, B.ROW_COLOR], ref.boards[0, B.ROW_COLOR])
            assert np.array_equal(batch.history_boards[r, :, B.ROW_COLOR],
                                  ref.history_boards[0, :, B.ROW_COLOR])
            header = [B.H_KO_POINT, B.H_KO_COLOR, B.H_HASH, B.H_NUM_EMPTY]
            assert np.array_equal(batch.boards[r, B.ROW_HEADER, header],
                                  ref.boards[0, B.ROW_HEADER, header])
            assert np.array_equal(batch.history_boards[r, :, B.ROW_HEADER][:, header],
                                  ref.history_boards[0, :, B.ROW_HEADER][:, header])
            assert batch.recent_points[r].tolist() == ref.recent_points[0].tolist()
            assert batch.recent_colors[r].tolist() == ref.recent_colors[0].tolist()
            assert batch.to_move[r] == ref.to_move[0]
            assert np.array_equal(batch.legal[r], ref.legal[0])
            self.rows_checked += 1
            self.max_depth = max(self.max_depth, depth)
        n = batch.count
        legal = batch.legal[:n].astype(np.float32)
        rng = np.random.default_rng(batch.seed)
        return Evaluation(legal / legal.sum(1, keepdims=True),
                          rng.uniform(-0.5, 0.5, n).astype(np.float32), np.zeros(n, np.float32))


def test_batch_rows_equal_the_game_record_pipeline():
    g = GameState(5, 5, 0.5, PRESETS["chinese"])  # simple ko: tree legality == game legality
    for i, v in enumerate(["C3", "C4", "B4", "pass", "D4", "B3"]):
        color = BLACK if i % 2 == 0 else WHITE
        assert g.play(color, vertex(g, v) if v != "pass" else PASS_POINT) == MOVE_OK
    ev = _PathCheckingEvaluator(g)
    s = Search(ev, SearchConfig(batch_size=8, max_nodes=5000, max_edges=200_000), seed=9)
    ev.search = s
    s.run(g, g.to_move, SearchLimits(playouts=400))
    assert ev.rows_checked > 300 and ev.max_depth >= 3


class _Undeclared:
    """An evaluator that says nothing about itself."""

    def evaluate(self, batch):
        return UniformEvaluator().evaluate(batch)


class _MisDeclared(_Undeclared):
    capabilities = {"needs_history": False}  # not a Capabilities


@pytest.mark.parametrize("evaluator", [_Undeclared(), _MisDeclared()])
def test_an_evaluator_must_declare_its_capabilities(evaluator):
    name = type(evaluator).__name__
    with pytest.raises(TypeError, match=f"{name} declares no capabilities"):
        Search(evaluator)


def test_declared_capabilities_set_the_search_up():
    assert not Search(UniformEvaluator()).want_history  # Capabilities(needs_history=False)
    assert Search(SkewedEvaluator(26)).want_history
    assert Search(RolloutEvaluator()).ucb1  # no priors: UCB1 although the config says PUCT
    assert not Search(UniformEvaluator()).ucb1
