"""KataGo's wideRootNoise bonus (engine/search/selection.py): its draw against a sampled
re-statement of maybeApplyWideRootNoise, the root only, nothing changed at 0, wider root
searches when large, and the analysis query's override reaching the search."""

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK
from dosaku.engine.rules.coords import format_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.search import tree as T
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from dosaku.engine.search.scores import expected_atan_table
from dosaku.engine.search.selection import _select_child
from dosaku.kata_analysis.position import at_turn
from dosaku.kata_analysis.query import parse_line
from dosaku.kata_analysis.settings import AnalysisSettings
from dosaku.kata_analysis.tasks import Task
from dosaku.kata_analysis.workers import Worker
from tests.evaluators import SkewedEvaluator

SMALL = SearchConfig(batch_size=4, max_nodes=5000, max_edges=200_000)


def _two_children(gap: float):
    """A root (Black to move, 3x3 actions) with two children of 10 visits each, equal
    priors, the first `gap` better in utility for Black: PUCT picks it unless the noise says
    otherwise."""
    t = T.new_tree(10, 100)
    root = T.reset_tree(t, BLACK, 1)
    legal = np.zeros(10, np.bool_)
    legal[[2, 7]] = True
    T.expand_node(t, root, legal, np.full(10, 0.5, np.float32))
    s = int(t.node_edge_start[root])
    for j, q in ((s, 0.1 + gap), (s + 1, 0.1)):
        child = T.alloc_node(t, 3 - BLACK, 0)
        T.attach_child(t, root, j, child)
        t.node_visits[child] = 10
        t.node_sel[child] = (10, 10 * q)
    t.node_visits[root] = 21
    t.node_sel[root] = (21, -21 * 0.1)
    t.node_utility_sq[root] = 21 * 0.02
    return t, root, [int(t.edge_action[s]), int(t.edge_action[s + 1])]


def _choices(noise: float, depth: int, n: int, gap: float = 0.5) -> np.ndarray:
    """The action _select_child picks, n times over, at `depth` of the two-child node."""
    t, node, _ = _two_children(gap)
    fp, ip = SearchConfig().kernel_params(komi=0.5, score_center=0.0, sqrt_area=3.0, ucb1=False,
                                         suicide=False, max_depth=20, history=False,
                                         exact_end=False, wide_root_noise=noise, ban_depth=0)
    fp, ip = np.array(fp), np.array(ip)
    prior = np.zeros(10, np.float32)
    prior[[2, 7]] = 0.5
    legal = prior > 0
    bans = np.zeros((3, 10), np.int64)
    table = expected_atan_table()
    B.seed_rng(11)
    return np.array([t.edge_action[_select_child(t, node, depth, prior, legal, bans, fp, ip,
                                                 table)] for _ in range(n)])


def test_the_bonus_is_katagos_half_chance_of_noise_times_a_half_normal():
    gap, noise, n = 0.5, 1.0, 6000
    _, _, (better, worse) = _two_children(gap)
    picked_worse = (_choices(noise, 0, n, gap) == worse).mean()
    # maybeApplyWideRootNoise, sampled: each child's utility gains noise * |g| half the time
    rng = np.random.default_rng(0)

    def bonus(m):
        return np.where(rng.random(m) < 0.5, noise * np.abs(rng.standard_normal(m)), 0.0)
    expected = (bonus(10 ** 6) - bonus(10 ** 6) > gap).mean()  # about 0.22
    # 4 standard errors; a bonus drawn every time would give about 0.26
    assert picked_worse == pytest.approx(expected, abs=4 * np.sqrt(expected / n))
    assert (_choices(0.0, 0, 200, gap) == better).all()


def test_the_bonus_is_for_the_root_only():
    _, _, (better, _) = _two_children(0.5)
    for depth in (1, 2):
        assert (_choices(5.0, depth, 300) == better).all()


# the root children's visits of this search before wideRootNoise's bonus and the move bans
# existed (engine at a48da98b); a deliberate change of the search re-records them
BEFORE = {8: 20, 14: 143, 16: 10, 2: 18, 20: 6, 22: 28, 13: 2, 21: 5, 10: 1, 11: 1, 15: 2,
          7: 55, 5: 8}


def _root_visits(**kw) -> dict[int, int]:
    s = Search(SkewedEvaluator(26, decay=0.8, score_per_value=4.0), SMALL, seed=7)
    s.run(GameState(5, 5, 0.5), BLACK, SearchLimits(playouts=300), **kw)
    st = s.root_stats()
    return {a: v for a, v in zip(st.actions.tolist(), st.visits.tolist()) if v}


def test_no_noise_leaves_the_search_as_it_was():
    assert _root_visits(wide_root_noise=0.0) == BEFORE
    assert _root_visits(wide_root_noise=0.5) != BEFORE


class _Favourite:
    """Nine tenths of the prior on C3, values from the position's hash: a search without
    noise sends most root visits to C3."""

    capabilities = Capabilities()

    def evaluate(self, batch):
        n = batch.count
        policy = batch.legal[:n].astype(np.float32)
        policy[:, 12] = 0.0
        policy /= policy.sum(axis=1, keepdims=True) / 0.1
        policy[:, 12] = 0.9
        keys = batch.boards[:n, B.ROW_HEADER, B.H_HASH]
        value = ((keys % 997) / 997.0 - 0.5).astype(np.float32) * 0.3
        return Evaluation(policy, value, np.zeros(n, np.float32), None)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_large_noise_spreads_the_root_visits(seed):
    def visits(noise):
        s = Search(_Favourite(), SMALL, seed=seed)
        s.run(GameState(5, 5, 0.5), BLACK, SearchLimits(playouts=500), wide_root_noise=noise)
        return s.root_stats().visits
    plain, wide = visits(0.0), visits(1.0)
    assert plain.max() > 300  # C3's
    assert (wide >= 10).sum() >= (plain >= 10).sum() + 5 and wide.max() < plain.max() - 100


def test_the_query_override_reaches_the_search():
    """wideRootNoise both flattens the root's policy (Query.root_temperature, as before) and
    now draws the bonus: the query's answer is the search given both, not the flattening
    alone."""
    line = ('{"id": "q", "moves": [], "rules": "chinese", "komi": 0.5, "boardXSize": 5, '
            '"boardYSize": 5, "maxVisits": 300, "overrideSettings": {"wideRootNoise": 1.0}}')
    query, _ = parse_line(line, AnalysisSettings(), 10_000)
    assert query.root_temperature == 5.0

    def engine():
        return Engine(5, 5, 0.5, evaluator=_Favourite(),
                      config=EngineConfig(seconds=0, report_moves=False, search=SMALL))
    out = []
    Worker(engine(), None, out.append, lambda: 0)._search(Task(query, 0, 0))
    answered = {m["move"]: m["visits"] for m in out[-1]["moveInfos"]}

    def direct(noise):
        e = engine()
        at_turn(e, query, 0)
        snap = e.analyze_position(300, root_temperature=5.0, wide_root_noise=noise)
        return {format_vertex(m.point, 5, 5): m.visits for m in snap.moves}
    assert answered == direct(1.0) and answered != direct(0.0)
