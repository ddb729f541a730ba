"""The network's own evaluation of a search's root (analysis's rootInfo raw values): the
net's outputs for the root position under the search's symmetry, as kata-raw-nn gives them
(which tests/test_katago_*reference.py check against KataGo's), made once per root and without
touching the search's random numbers."""

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import Capabilities
from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator
from dosaku.engine.evaluators.raw_nn import raw_nn
from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.search.analysis_snapshot import root_raw_values
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from tests.evaluators import SkewedEvaluator

SMALL = SearchConfig(batch_size=4, max_nodes=20_000, max_edges=500_000)


def game(moves: str, size: int = 9) -> GameState:
    g = GameState(size, size, 7.0)
    for k, v in enumerate(moves.split()):
        g.play(BLACK if k % 2 == 0 else WHITE, parse_vertex(v, size, size))
    return g


def expected(model, g: GameState, symmetry: int) -> dict:
    """kata-raw-nn's values (White's view) turned to the side to move's."""
    r = raw_nn(model, g, symmetry)
    sign = 1.0 if g.to_move == WHITE else -1.0
    head = {-1.0: None}
    return {"winrate": (1 + sign * (r.white_win - r.white_loss)) / 2,
            "lead": sign * r.white_lead, "score_mean": sign * r.white_score_selfplay,
            "score_stdev": np.sqrt(r.white_score_selfplay_sq - r.white_score_selfplay ** 2),
            "no_result": r.no_result,
            "value_error": head.get(r.shortterm_winloss_error, r.shortterm_winloss_error),
            "score_error": head.get(r.shortterm_score_error, r.shortterm_score_error),
            "var_time_left": head.get(r.var_time_left, r.var_time_left)}


def check(model, g: GameState, symmetry: int, optimism: float = 0.0) -> dict:
    config = SearchConfig(batch_size=4, root_policy_optimism=optimism)
    s = Search(OnnxEvaluator(model, symmetry=symmetry), config)
    s.run(g, g.to_move, SearchLimits(visits=6))
    got = vars(root_raw_values(s.root_evaluation()))
    want = expected(model, g, symmetry)
    assert got.keys() == want.keys()
    for key, value in want.items():
        if value is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(value, rel=1e-4, abs=1e-5), key
    return got


@pytest.mark.parametrize("symmetry", [0, 5])
def test_the_root_evaluation_is_the_nets_under_the_searchs_symmetry(b6c96_model, symmetry):
    got = check(b6c96_model, game("E5 C3 C4 D3 G3"), symmetry)
    assert got["value_error"] is None  # a KataGo version 8 net has no short-term heads


def test_a_net_with_short_term_heads_gives_them(b10_model):
    got = check(b10_model, game("E5 C3 C4"), 3, optimism=0.2)
    assert got["value_error"] > 0 and got["score_error"] > 0 and got["var_time_left"] > 0


class CountingSkewed(SkewedEvaluator):
    def __init__(self, optimistic: bool):
        super().__init__(26)
        self.capabilities = Capabilities(optimistic_policy=optimistic)
        self.rows = 0

    def evaluate(self, batch):
        self.rows += batch.count
        return super().evaluate(batch)


def test_made_once_per_root_and_free_when_the_root_policy_made_one():
    for optimistic in (False, True):
        g = game("C3 D3", size=5)
        ev = CountingSkewed(optimistic)
        s = Search(ev, SearchConfig(batch_size=4, root_policy_optimism=0.2))
        s.run(g, g.to_move, SearchLimits(visits=20))
        rows = ev.rows
        first = s.root_evaluation()
        assert ev.rows == rows + (0 if optimistic else 1)
        s.run(g, g.to_move, SearchLimits(visits=40))  # the same root searched on
        assert s.root_evaluation() is first
        assert g.play(g.to_move, parse_vertex("B2", 5, 5)) == MOVE_OK
        s.run(g, g.to_move, SearchLimits(visits=10))
        assert s.root_evaluation() is not first  # a new root, evaluated anew


class SeedValued(SkewedEvaluator):
    """Values that move with each batch's seed, so a search's result shows its seed draws."""

    def evaluate(self, batch):
        ev = super().evaluate(batch)
        ev.value = ev.value + np.float32(batch.seed % 101 / 1000)
        return ev


def test_asking_during_a_search_changes_nothing_of_it():
    g = game("C3 D3 B2", size=5)

    def result(ask: bool) -> tuple:
        s = Search(SeedValued(26), SMALL, seed=9)
        s.run(g, g.to_move, SearchLimits(visits=150), noise_weight=0.25,
              on_update=s.root_evaluation if ask else None, interval=0.0)
        stats = s.root_stats()
        return stats.root_value, stats.visits.tolist()
    assert result(True) == result(False)


def test_none_before_a_search_or_for_the_other_side():
    g = game("C3 D3", size=5)
    s = Search(SkewedEvaluator(26), SMALL)
    assert s.root_evaluation() is None
    s.run(g, WHITE if g.to_move == BLACK else BLACK, SearchLimits(visits=10))
    assert s.root_evaluation() is None  # the root batch holds the game's side to move
