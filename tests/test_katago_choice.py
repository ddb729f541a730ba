"""KataGo's final move choice (engine/search/move_choice.py katago_selection_values), checked
against values worked out by hand from KataGo's formulas (cpp/search/searchresults.cpp
getPlaySelectionValues, searchhelpers.cpp getSelfUtilityLCBAndRadius)."""

import numpy as np

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import action_from_point
from dosaku.engine.rules.game import GameState
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.move_choice import choose_action, katago_selection_values
from dosaku.engine.search.results import RootStats
from tests.evaluators import SkewedEvaluator

CHOICE = EngineConfig(katago_choice=True)


def _stats(visits, prior, utility, utility_sq, explore_scale):
    """Root statistics; `explore_scale` as the search reports it for a root of these visits
    with mean utility 0 and mean square 0.04 (worked out in each test)."""
    n = len(visits)
    visits = np.array(visits, np.int64)
    return RootStats(actions=np.arange(n), visits=visits, value=np.array(utility, float),
                     value_sq=np.array(utility_sq, float), score=np.zeros(n),
                     prior=np.array(prior, float), root_visits=int(visits.sum()) + 1,
                     root_value=0.0, root_score=0.0,
                     utility=np.array(utility, float), utility_sq=np.array(utility_sq, float),
                     explore_scale=explore_scale)


def test_visits_beyond_a_moves_worth_are_trimmed():
    # 91 root visits, utility 0 with mean square 0.04: stdev sqrt((0.16*2 + 0.04*91) / 92)
    # = 0.2075, factor 1 + 0.85 (0.2075/0.4 - 1) = 0.5909; c = 1 + 0.45 ln(590/500) = 1.0745;
    # scaling = 1.0745 sqrt(90.01) 0.5909 = 6.024. The most visited child's PUCT value
    # 0.10 + 6.024 * 0.5 / 51 = 0.1591; the visits that value would have given the others:
    # 6.024 * 0.3 / (0.1591 - 0.05) - 1 = 15.57 -> 16 of 20, 6.024 * 0.2 / 0.4591 - 1 = 1.62 -> 2.
    stats = _stats([50, 20, 20], [0.5, 0.3, 0.2], [0.10, 0.05, -0.30],
                   [0.0125, 0.005, 0.0925], 6.024)
    values = katago_selection_values(stats, SearchConfig(), 0.15)
    assert values[1] == 16 and values[2] == 2
    assert values[0] >= 50
    assert choose_action(stats, CHOICE, GameState(5, 5, 0.5)) == 0


def test_a_tighter_better_move_overtakes_the_most_visited():
    # the second child: 40 visits, utility 0.1 with stdev 0.02: bound 0.1 - 5 * 0.02 / sqrt(40)
    # = 0.084 against the first's 0 - 5 * 0.02 / 10 = -0.01
    # 141 root visits: stdev sqrt((0.32 + 0.04 * 141) / 142) = 0.2049, factor 0.5853,
    # c = 1 + 0.45 ln(640/500) = 1.1111, scaling 1.1111 sqrt(140.01) 0.5853 = 7.696
    tight = _stats([100, 40], [0.5, 0.5], [0.0, 0.1], [0.0004, 0.0104], 7.696)
    game = GameState(5, 5, 0.5)
    assert choose_action(tight, CHOICE, game) == 1
    assert choose_action(tight, EngineConfig(use_lcb=False), game) == 0
    values = katago_selection_values(tight, SearchConfig(), 0.15)
    # raised until its lead in bounds would vanish: ((r + e) / (r + 0.2 e))^2 * 100 with
    # r = 0.01 (the first's radius), e = 0.0942: (0.1042 / 0.02884)^2 * 100 = 1305
    assert 1250 < values[1] < 1360
    # the same mean with stdev 0.5: bound 0.1 - 5 * 0.5 / sqrt(40) = -0.295, below the first's
    wide = _stats([100, 40], [0.5, 0.5], [0.0, 0.1], [0.0004, 0.26], 7.696)
    assert choose_action(wide, CHOICE, game) == 0


def test_too_few_visits_cannot_compete_on_the_bound():
    # 10 of 100 visits is under 0.15 of the most visited: however good, it is not chosen
    # 111 root visits: stdev 0.2062, factor 0.5881, c 1.0895: scaling 6.720
    stats = _stats([100, 10], [0.5, 0.5], [0.0, 0.5], [0.0004, 0.2501], 6.720)
    assert choose_action(stats, CHOICE, GameState(5, 5, 0.5)) == 0


def test_unvisited_children_get_nothing():
    # 36 root visits: stdev 0.2181, factor 0.6135, c 1.0305: scaling 3.740
    stats = _stats([30, 0, 5], [0.2, 0.7, 0.1], [0.0, 0.0, 0.0], [0.01, 0.0, 0.01], 3.740)
    values = katago_selection_values(stats, SearchConfig(), 0.15)
    assert values[1] == 0 and values[0] > 0


def test_an_engine_with_katago_choice_plays_legal_moves():
    cfg = EngineConfig(search=SearchConfig(batch_size=4, max_nodes=20_000, max_edges=200_000),
                       playouts=60, seconds=0, katago_choice=True, resign_threshold=0,
                       report_reuse=False, report_moves=False)
    evaluator = SkewedEvaluator(50, score_per_value=8.0)
    e = Engine(7, 7, 7.5, evaluator=evaluator, config=cfg, log=lambda m: None)
    for i in range(12):
        color = BLACK if i % 2 == 0 else WHITE
        legal = e.game.legal_mask(color)
        point = e.genmove(color, commit=False)
        stats = e.search.root_stats()
        assert stats.explore_scale > 0  # the search's own exploration factor reaches the choice
        visited = stats.visits > 0
        # utilities carry the score term: value alone stays in [-0.5, 0.5)
        assert np.all(np.abs(stats.utility[visited]) <= 1.4)
        assert legal[action_from_point(point, 7, 7)]
        assert e.play(color, point) == MOVE_OK
