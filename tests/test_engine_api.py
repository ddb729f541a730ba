"""Engine's read API, set-up stones, handicap choice, clocks, avoid/allow at the root and
ownership in analysis snapshots (fast configs, tiny boards)."""

import threading

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation, UniformEvaluator
from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import action_from_point, parse_vertex
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.engine.search.bans import MoveBan
from dosaku.engine.timecontrol import TimeSettings

FAST = EngineConfig(playouts=64, seconds=0)


def pt(v, n=9):
    return parse_vertex(v, n, n)


def test_read_methods_follow_the_game():
    e = Engine(9, 7, 6.5, PRESETS["japanese"], config=FAST)
    assert e.size == (9, 7) and e.komi == 6.5 and e.rules.name == "japanese"
    assert e.to_move == BLACK and e.moves == [] and e.is_empty()
    # Black captures the white stone at A1: B A2, W A1, B B1
    for color, v in ((BLACK, "A2"), (WHITE, "A1"), (BLACK, "B1")):
        assert e.play(color, parse_vertex(v, 9, 7)) == MOVE_OK
    assert e.moves == [(BLACK, parse_vertex("A2", 9, 7)), (WHITE, parse_vertex("A1", 9, 7)),
                       (BLACK, parse_vertex("B1", 9, 7))]
    assert e.to_move == WHITE and not e.is_empty()
    assert e.prisoners(BLACK) == 1 and e.prisoners(WHITE) == 0
    assert e.stones() == {parse_vertex("A2", 9, 7): BLACK, parse_vertex("B1", 9, 7): BLACK}
    assert e.chain_of(parse_vertex("A2", 9, 7)) != e.chain_of(parse_vertex("B1", 9, 7))
    e.moves.clear()  # a copy: the game is untouched
    assert len(e.moves) == 3


def split_board(rules: str, komi: float = 0.5) -> Engine:
    """5x5: black column B, white column D, C dame, a lone white stone at A3."""
    e = Engine(5, 5, komi, PRESETS[rules], config=FAST)
    for row in "12345":
        e.play(BLACK, parse_vertex("B" + row, 5, 5))
        e.play(WHITE, parse_vertex("D" + row, 5, 5))
    e.play(WHITE, parse_vertex("A3", 5, 5))
    return e


def test_score_with_dead_stones_under_area_and_territory_rules():
    a3 = [parse_vertex("A3", 5, 5)]
    e = split_board("chinese")
    assert e.score(a3) == pytest.approx(10 - 10 - 0.5)  # area: A-B black, D-E white
    # A3 alive: A1-A2 and A4-A5 touch both colours, black has only its 5 stones
    assert e.score() == pytest.approx(5 - 11 - 0.5)
    e = split_board("japanese")
    # territory: black A1-A5 (A3 included once removed) + 1 dead prisoner, white E1-E5
    assert e.score(a3) == pytest.approx(6 - 5 - 0.5)
    assert e.score() == pytest.approx(0 - 5 - 0.5)


def test_setup_places_stones_without_history():
    e = Engine(9, 9, 7.5, config=FAST)
    e.play(BLACK, pt("E5"))
    black, white = [pt("C3"), pt("D4")], [pt("G7")]
    assert e.setup(black, white, WHITE)
    assert e.stones() == {pt("C3"): BLACK, pt("D4"): BLACK, pt("G7"): WHITE}
    assert e.moves == [] and e.to_move == WHITE and not e.undo()
    assert e.setup_stones == (black, white, WHITE)
    assert e.play(WHITE, pt("C3")) != MOVE_OK  # occupied by a set-up stone
    assert e.play(WHITE, pt("E5")) == MOVE_OK and e.undo()
    assert e.stones() == {pt("C3"): BLACK, pt("D4"): BLACK, pt("G7"): WHITE}
    e.clear()
    assert e.setup_stones is None and e.is_empty()


@pytest.mark.parametrize("black,white", [
    (["A1", "A1"], []),  # repeated point
    (["A1"], ["A1"]),  # both colours on one point
    (["A1"], ["A2", "B1"]),  # the black stone has no liberty
    ([], ["pass"]),
])
def test_setup_refuses_impossible_positions(black, white):
    e = Engine(9, 9, 7.5, config=FAST)
    e.play(BLACK, pt("E5"))
    assert not e.setup([pt(v) for v in black], [pt(v) for v in white], BLACK)
    assert e.stones() == {pt("E5"): BLACK} and len(e.moves) == 1


def test_record_and_restore_a_setup_game():
    e = Engine(9, 9, 5.5, config=FAST)
    e.setup([pt("C3")], [pt("G7")], WHITE)
    e.play(WHITE, pt("E5"))
    e.play(BLACK, pt("E4"))
    rec = e.record()
    e.set_size(13, 13)
    e.restore(rec)
    assert e.size == (9, 9) and e.komi == 5.5
    assert e.stones() == {pt("C3"): BLACK, pt("G7"): WHITE, pt("E5"): WHITE, pt("E4"): BLACK}
    assert len(e.moves) == 2 and e.to_move == WHITE


def test_choose_handicap_uses_the_fixed_layout_then_spreads():
    e = Engine(19, 19, 0.5, config=FAST)
    assert e.choose_handicap(4) == [parse_vertex(v, 19, 19) for v in ("D16", "Q16", "D4", "Q4")]
    points = e.choose_handicap(12)
    assert len(set(points)) == 12 and PASS_POINT not in points
    assert e.is_empty()  # choosing places nothing
    assert len(Engine(3, 3, 0.5, config=FAST).choose_handicap(20)) == 8  # at most W*H - 1


def test_fischer_clock_bookkeeping_after_genmove():
    e = Engine(9, 9, 7.5, evaluator=UniformEvaluator(), config=FAST)
    e.warm_up()  # a first compilation would be charged to the clock
    e.set_time_settings(TimeSettings(600, increment=10, main_time_cap=605))
    e.genmove(BLACK)
    left, stones = e.time_left[BLACK]
    assert stones == 0 and 600 < left <= 605  # the increment came back, capped at 605
    e.set_time_left(WHITE, 42.0, 0)
    assert e.time_left[WHITE] == (42.0, 0)


def _analyse(e, color, seconds=0.4, **kw):
    """The last snapshot of a `seconds` analysis; kernels are compiled first, so that a cold
    numba cache does not eat the analysis time."""
    e.warm_up()
    snaps = []
    stop = threading.Event()
    timer = threading.Timer(seconds, stop.set)
    timer.start()
    e.analyze(color, snaps.append, 0.1, stop, **kw)
    timer.join()
    return snaps[-1]


def test_avoid_and_allow_restrict_the_root_search():
    e = Engine(5, 5, 0.5, evaluator=UniformEvaluator(), config=FAST)
    avoid = {parse_vertex(v, 5, 5) for v in ("C3", "B2", "D4")}
    snap = _analyse(e, BLACK, bans=(MoveBan(BLACK, frozenset(avoid), 1),))
    searched = {m.point for m in snap.moves if m.visits > 0}
    assert searched and not searched & avoid
    assert snap.root_visits > 50
    allow = {parse_vertex(v, 5, 5) for v in ("A1", "E5")}
    snap = _analyse(e, BLACK, bans=(MoveBan(BLACK, frozenset(allow), 1, allow=True),))
    assert {m.point for m in snap.moves if m.visits > 0} == allow
    # the restriction is for that analysis only: the game's legal moves are untouched
    assert e.game.legal_mask(BLACK).sum() == 26
    snap = _analyse(e, BLACK)  # every move is back, the avoided ones included
    everything = {parse_vertex(f"{c}{r}", 5, 5) for c in "ABCDE" for r in "12345"}
    assert {m.point for m in snap.moves if m.visits > 0} == everything | {PASS_POINT}


class _Favourite:
    """Most of the prior on one action, value and score 0: an unrestricted search plays it."""

    capabilities = Capabilities()

    def __init__(self, action: int):
        self.action = action

    def evaluate(self, batch):
        n = batch.count
        policy = batch.legal[:n].astype(np.float32)
        policy[:, self.action] *= 50.0
        policy /= policy.sum(axis=1, keepdims=True)
        return Evaluation(policy, np.zeros(n, np.float32), np.zeros(n, np.float32), None)


def test_restricted_and_unrestricted_searches_do_not_share_root_visits():
    c3 = parse_vertex("C3", 5, 5)
    e = Engine(5, 5, 0.5, evaluator=_Favourite(action_from_point(c3, 5, 5)),
               config=EngineConfig(visits=100, seconds=0, report_moves=False))
    e.warm_up()  # compiling would eat the analysis time
    avoid = (MoveBan(BLACK, frozenset({c3}), 1),)
    snap = _analyse(e, BLACK, bans=avoid)  # longer than a genmove: it must not decide it
    assert snap.root_visits > 100 and c3 not in {m.point for m in snap.moves if m.visits}
    assert e.genmove(BLACK, commit=False) == c3
    allow = {parse_vertex(v, 5, 5) for v in ("A1", "E5")}
    only = (MoveBan(BLACK, frozenset(allow), 1, allow=True),)
    snap = _analyse(e, BLACK, seconds=0.2, bans=only)  # none of the genmove's visits
    assert snap.root_visits == 1 + sum(m.visits for m in snap.moves)
    assert {m.point for m in snap.moves} == allow


def test_allow_list_of_illegal_points_leaves_pass():
    e = Engine(5, 5, 0.5, evaluator=UniformEvaluator(), config=FAST)
    e.play(BLACK, parse_vertex("C3", 5, 5))
    only = (MoveBan(WHITE, frozenset({parse_vertex("C3", 5, 5)}), 1, allow=True),)
    snap = _analyse(e, WHITE, seconds=0.2, bans=only)
    assert [m.point for m in snap.moves if m.visits > 0] == [PASS_POINT]


def test_analysis_snapshot_carries_ownership_from_the_evaluator():
    # 5x5, Black owns columns A-B, White D-E; rollouts give ownership per leaf
    e = Engine(5, 5, 0.5, config=FAST)
    for row in "12345":
        e.play(BLACK, parse_vertex("B" + row, 5, 5))
        e.play(WHITE, parse_vertex("D" + row, 5, 5))
    for color, sign in ((BLACK, 1.0), (WHITE, -1.0)):
        own = _analyse(e, color).ownership
        assert own is not None and own.shape == (25,)
        grid = sign * np.asarray(own).reshape(5, 5)  # Black's view, row 0 = top
        assert (grid[:, :2] > 0.5).all() and (grid[:, 3:] < -0.5).all()
