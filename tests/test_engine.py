"""Engine facade on the search: genmove, reuse, resign, analysis, dead stones."""

import threading

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import RESIGN, Engine
from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation, UniformEvaluator
from dosaku.engine.evaluators.rollout import RolloutEvaluator
from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import action_from_point, point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.engine.search import tree as T
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.move_choice import choose_action
from dosaku.engine.search.results import RootStats
from dosaku.engine.timecontrol import TimeSettings
from tests.boards import game_from_diagram, vertex

FAST = EngineConfig(search=SearchConfig(batch_size=8, max_nodes=20_000, max_edges=500_000),
                    playouts=200, seconds=0, report_reuse=False)


class LosingEvaluator:
    """Every position is lost for the side to move (so the root side's moves all look bad)."""

    capabilities = Capabilities(needs_history=False)

    def __init__(self, loser=None):
        self.loser = loser

    def evaluate(self, batch):
        n = batch.count
        legal = batch.legal[:n].astype(np.float32)
        v = np.where(batch.to_move[:n] == self.loser, -1.0, 1.0).astype(np.float32)
        return Evaluation(legal / legal.sum(1, keepdims=True), v, 10 * v, None)


def test_genmove_plays_legal_moves_and_reuses_the_tree():
    logs = []
    e = Engine(5, 5, 0.5, evaluator=UniformEvaluator(),
               config=EngineConfig(search=FAST.search, playouts=100, seconds=0),
               log=logs.append)
    for _ in range(8):
        color = e.game.to_move
        legal = e.game.legal_mask(color)
        before = len(e.game.moves)
        p = e.genmove(color)
        assert legal[action_from_point(p, 5, 5)] or p == PASS_POINT
        assert len(e.game.moves) == before + 1 and e.game.moves[-1] == (color, p)
    reused = [int(m.split()[2]) for m in logs if m.startswith("tree reuse")]
    assert len(reused) == 8 and max(reused) > 0


def test_without_tree_reuse_every_search_starts_fresh():
    logs = []
    cfg = EngineConfig(search=FAST.search, playouts=100, seconds=0, tree_reuse=False)
    e = Engine(5, 5, 0.5, evaluator=UniformEvaluator(), config=cfg, log=logs.append)
    for _ in range(4):
        e.genmove(e.game.to_move)
        assert not e.search.has_tree
        # a fresh root gets exactly the new playouts: nothing was kept
        e.genmove(e.game.to_move, commit=False)
        assert e.search.root_stats().root_visits == 100
        _replies(e, e.game.to_move)
    assert not [m for m in logs if m.startswith("tree reuse")]


def test_genmove_without_commit_leaves_the_game_alone():
    e = Engine(5, 5, 0.5, evaluator=UniformEvaluator(), config=FAST)
    p = e.genmove(BLACK, commit=False)
    assert e.game.moves == [] and isinstance(p, int)


def _replies(e, color=BLACK):
    """`color` plays its first legal move."""
    mask = e.game.legal_mask(color)
    a = int(np.flatnonzero(mask[:-1])[0])
    assert e.play(color, point_from_action(a, 5, 5)) == MOVE_OK


def test_resigns_only_after_consecutive_bad_moves_and_min_move():
    cfg = EngineConfig(search=FAST.search, playouts=50, seconds=0, resign_threshold=0.1,
                       resign_consecutive=2, resign_min_move=57,  # 57 * 25/361 = 3.9 on 5x5
                       resign_handicap_moves=0, report_reuse=False)
    e = Engine(5, 5, 0.5, evaluator=LosingEvaluator(loser=WHITE), config=cfg)
    # Black owns most of the board, so even exact end-of-game scoring agrees White is lost
    assert e.place_handicap([vertex(e.game, v) for v in
                             ("B2", "B3", "B4", "C2", "C4", "D2", "D3", "D4")])
    results = []
    for _ in range(3):
        results.append(e.genmove(WHITE) == RESIGN)
        _replies(e)
    # moves 0 and 2: too early; move 4: the second bad move in a row past the minimum
    assert results == [False, False, True]


def test_handicap_delays_white_resignation():
    cfg = EngineConfig(search=FAST.search, playouts=50, seconds=0, resign_threshold=0.1,
                       resign_consecutive=1, resign_min_move=0, resign_handicap_moves=361,
                       report_reuse=False)
    e = Engine(5, 5, 0.5, evaluator=LosingEvaluator(loser=WHITE), config=cfg)
    assert e.place_handicap([vertex(e.game, "B2"), vertex(e.game, "D4")])
    assert e.genmove(WHITE) != RESIGN  # 2 stones * 361 * 25/361 = 50 moves of grace
    e2 = Engine(5, 5, 0.5, evaluator=LosingEvaluator(loser=WHITE), config=cfg)
    e2.play(BLACK, vertex(e2.game, "C3"))
    assert e2.genmove(WHITE) == RESIGN


@pytest.mark.parametrize("given_as", ["placed stones", "black moves"])
def test_resign_counts_moves_from_the_end_of_the_handicap(given_as):
    cfg = EngineConfig(search=FAST.search, playouts=50, seconds=0, resign_threshold=0.1,
                       resign_consecutive=1, resign_min_move=72,  # 72 * 25/361 = 5 on 5x5
                       resign_handicap_moves=0, report_reuse=False)
    e = Engine(5, 5, 0.5, evaluator=LosingEvaluator(loser=BLACK), config=cfg)
    stones = [vertex(e.game, "B2"), vertex(e.game, "D4")]
    if given_as == "placed stones":
        assert e.place_handicap(stones)
    else:
        for p in stones:
            assert e.play(BLACK, p) == MOVE_OK
    results = []
    for _ in range(3):
        _replies(e, WHITE)
        results.append(e.genmove(BLACK) == RESIGN)
    assert e.game.handicap == 2
    # Black's moves 2 and 4 after the handicap are too early, move 6 may resign
    assert results == [False, False, True]


def test_lcb_prefers_the_reliable_move():
    stats = RootStats(actions=np.array([0, 1, 2]), visits=np.array([100, 90, 3]),
                      value=np.array([0.1, 0.3, 0.9]), value_sq=np.array([0.05, 0.1, 0.81]),
                      score=np.zeros(3), prior=np.full(3, 1 / 3), root_visits=194,
                      root_value=0.2, root_score=0.0)
    game = GameState(5, 5, 0.5)
    # a higher bound than the most visited move's; the 3 visits of the best value are too few
    assert choose_action(stats, FAST, game) == 1
    assert choose_action(stats, EngineConfig(use_lcb=False), game) == 0


def test_analyze_reports_until_stopped():
    e = Engine(5, 5, 0.5, evaluator=UniformEvaluator(), config=FAST)
    stop = threading.Event()
    snaps = []

    def on_update(snap):
        snaps.append(snap)
        if len(snaps) >= 3:
            stop.set()

    e.analyze(BLACK, on_update, 0.05, stop)
    assert len(snaps) >= 3
    last = snaps[-1]
    assert last.root_visits > 0 and last.moves
    assert sum(m.visits for m in last.moves) <= last.root_visits
    assert all(m.pv and m.pv[0] == m.point for m in last.moves)
    visits = [m.visits for m in last.moves[1:]]
    assert visits == sorted(visits, reverse=True)
    assert e.game.moves == []


def test_genmove_updates_and_ownership_from_rollouts():
    e = Engine(5, 5, 0.5, config=EngineConfig(search=FAST.search, playouts=400, seconds=0,
                                              report_reuse=False))
    snaps = []
    e.genmove(BLACK, commit=False, on_update=snaps.append, interval=0.0)
    assert snaps and snaps[-1].ownership is not None
    assert snaps[-1].ownership.shape == (25,)


def test_a_visit_limit_is_spent_in_full_and_only_a_clock_stops_early():
    # the capture is clear after a few hundred visits; under --visits the search still spends
    # them all (KataGo's maxVisits does; stopping early lost 0.12 of the score against it at 16
    # visits), with a clock that keeps saved time it stops once no move can catch up
    diagram = """
        . . . . .
        . X X X .
        X O O O X
        X O . O X
        . X X X .
        """
    cfg = EngineConfig(search=SearchConfig(batch_size=8), visits=3000, seconds=0,
                       report_reuse=False, report_moves=False)
    visits = {}
    for clock in (False, True):
        e = Engine(5, 5, 0.5, evaluator=RolloutEvaluator(), config=cfg)
        e.game = game_from_diagram(diagram, BLACK, komi=0.5)
        if clock:
            e.set_time_settings(TimeSettings(main_time=600))
        assert e.genmove(BLACK, commit=False) == vertex(e.game, "C2")
        visits[clock] = e.search.root_stats().root_visits
    assert visits[False] == 3000
    assert visits[True] < 3000  # the last batches were not needed to choose C2


def test_two_passes_are_scored_on_the_board_only_where_the_rules_say_so():
    # Black alone on the board, White has passed: Black's pass ends the game and the board
    # counts all 25 points for Black. Under Tromp-Taylor that count is the result; under
    # Chinese rules the referee first removes dead stones, so the search plays on from the
    # finished game like any position (the evaluator here calls every position lost for Black).
    for rules, pass_winrate, pass_state in (("tromp-taylor", 1.0, T.TERMINAL),
                                            ("chinese", 0.0, T.EXPANDED)):
        g = game_from_diagram("""
            . . . . .
            . . . . .
            . . X . .
            . . . . .
            . . . . .
            """, WHITE, komi=0.5, rules=PRESETS[rules])
        assert g.play(WHITE, PASS_POINT) == MOVE_OK
        e = Engine(5, 5, 0.5, evaluator=LosingEvaluator(loser=BLACK),
                   config=EngineConfig(search=FAST.search, visits=200, seconds=0,
                                       report_reuse=False, report_moves=False,
                                       friendly_pass=False))  # the search's own choice
        e.game = g
        move = e.genmove(BLACK, commit=False)
        stats = e.search.root_stats()
        j = int(np.flatnonzero(stats.actions == action_from_point(PASS_POINT, 5, 5))[0])
        assert stats.visits[j] > 0, rules
        assert (stats.value[j] + 1) / 2 == pytest.approx(pass_winrate, abs=1e-6), rules
        tree = e.search.tree
        child = T.find_child(tree, e.search.root, stats.actions[j])
        assert tree.node_state[child] == pass_state, rules
        if rules == "tromp-taylor":
            assert move == PASS_POINT  # the only move that does not lose


def test_dead_stones_from_rollout_ownership():
    # Black's wall has four eyes; White's lone stone at B3 inside cannot live.
    g = game_from_diagram("""
        . X . X O .
        X X X X O .
        . O . X O O
        X X X X O .
        . X . X O .
        """, BLACK, komi=0.5)
    e = Engine(6, 5, 0.5, config=FAST)
    e.game = g
    dead = e.dead_stones()
    assert dead == [vertex(g, "B3")]


def test_clock_gives_the_search_its_budget():
    e = Engine(9, 9, 7.5, evaluator=UniformEvaluator(),
               config=EngineConfig(search=FAST.search, seconds=5.0, lag_buffer=0.0))
    # no clock: the configured time per move, all of it used (nothing carries over)
    assert (e._limits(BLACK).seconds, e._limits(BLACK).bank_time) == (5.0, False)
    e.set_time_settings(TimeSettings(main_time=0, byo_time=10, byo_stones=5))
    limits = e._limits(BLACK)  # 10 s for 5 stones: what one saves, the next ones get
    assert (limits.seconds, limits.bank_time) == (pytest.approx(2.0), True)
    e.set_time_left(BLACK, 3.0, 3)
    assert (e._limits(BLACK).seconds, e._limits(BLACK).bank_time) == (pytest.approx(1.0), True)
    e.set_time_left(BLACK, 3.0, 1)  # last stone of the period: the period resets after it
    assert (e._limits(BLACK).seconds, e._limits(BLACK).bank_time) == (pytest.approx(3.0), False)
