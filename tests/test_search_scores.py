"""The search backs up the evaluator's score distribution: per-move expected score and stdev."""

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK
from dosaku.engine.rules.coords import point_from_xy
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from dosaku.gtp.analysis import Request, format_kata
from tests.boards import game_from_diagram

EMPTY5 = ". . . . .\n" * 5


class ScoreNet:
    """Uniform over the moves (never pass, so no line ends), value 0, and from Black's view a
    lead of 1 and a final score distributed with mean `mean` and stdev `stdev`."""
    capabilities = Capabilities(needs_history=False)

    def __init__(self, mean=3.0, stdev=4.0):
        self.mean, self.stdev = mean, stdev

    def evaluate(self, batch):
        n = batch.count
        legal = batch.legal[:n].astype(np.float32)
        legal[:, -1] = 0.0
        sign = np.where(batch.to_move[:n] == BLACK, 1.0, -1.0).astype(np.float32)
        return Evaluation(legal / legal.sum(1, keepdims=True), np.zeros(n, np.float32), sign,
                          None, sign * self.mean,
                          np.full(n, self.mean ** 2 + self.stdev ** 2, np.float32))


def test_children_carry_the_mean_and_stdev_of_their_leaves():
    s = Search(ScoreNet(), SearchConfig(batch_size=4), seed=1)
    s.run(game_from_diagram(EMPTY5, BLACK), BLACK, SearchLimits(playouts=200))
    st = s.root_stats()
    seen = st.visits > 0
    assert seen.sum() > 5
    assert np.allclose(st.score[seen], 1.0)  # the lead, Black's view
    assert np.allclose(st.score_mean[seen], 3.0, atol=1e-5)
    assert np.allclose(st.score_stdev[seen], 4.0, atol=1e-3)
    assert st.root_score_mean == pytest.approx(3.0, abs=1e-5)
    assert st.root_score_stdev == pytest.approx(4.0, abs=1e-3)


CENTRE = point_from_xy(2, 2, 5)


class SplitNet(ScoreNet):
    """Sure final scores (stdev 0) that split the lines: from Black's view +10 once Black has
    a stone on the centre point, -10 otherwise."""

    def evaluate(self, batch):
        ev = super().evaluate(batch)
        n = batch.count
        sign = np.where(batch.to_move[:n] == BLACK, 1.0, -1.0)
        black_view = np.where(batch.boards[:n, B.ROW_COLOR, CENTRE] == BLACK, 10.0, -10.0)
        ev.score_mean = (sign * black_view).astype(np.float32)
        ev.score_mean_sq = np.full(n, 100.0, np.float32)
        return ev


def test_stdev_reflects_disagreeing_lines():
    s = Search(SplitNet(), SearchConfig(batch_size=4), seed=3)
    s.run(game_from_diagram(EMPTY5, BLACK), BLACK, SearchLimits(playouts=300))
    st = s.root_stats()
    centre = int(np.flatnonzero(st.actions == 12)[0])  # C3, the middle of 25 actions
    assert st.visits[centre] > 2
    assert st.score_mean[centre] == pytest.approx(10.0)  # every line below it: +10
    assert st.score_stdev[centre] == pytest.approx(0.0, abs=1e-2)
    # every line ends at +10 or -10: a mean m comes with the stdev sqrt(100 - m^2)
    seen = st.visits > 0
    assert np.allclose(st.score_stdev[seen], np.sqrt(100.0 - st.score_mean[seen] ** 2),
                       atol=1e-2)
    m = st.root_score_mean
    assert -10.0 < m < 10.0
    assert st.root_score_stdev == pytest.approx(np.sqrt(100.0 - m * m), abs=1e-2)


def test_kata_analyze_prints_them():
    e = Engine(5, 5, 0.5, evaluator=ScoreNet(), log=lambda m: None,
               config=EngineConfig(search=SearchConfig(batch_size=4), playouts=100, seconds=0))
    snap = e.think(BLACK)
    line = format_kata(snap, Request(flags={"rootInfo": True}), 5, 5)
    first = line.split(" info ")[0]
    assert " scoreMean 3.0 scoreStdev 4.0 scoreLead 1.0 " in first
    assert line.split("rootInfo ")[1].endswith("scoreMean 3.0 scoreStdev 4.0 scoreLead 1.0")
