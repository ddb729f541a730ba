"""Uncertainty-weighted playouts (engine/search/uncertainty.py): the weight of one evaluation
against KataGo's formula, the tree's weighted sums against a plain recursive re-statement of
KataGo's recomputeNodeStats, and the search with the option off (or a net without short-term
error heads) the same bit for bit as before the option existed."""

import hashlib
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator, OnnxModel
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import parse_vertex, point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.engine.search import tree as T
from dosaku.engine.search.config import FloatParam, SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from dosaku.engine.search.scores import expected_atan_table, score_utility
from dosaku.engine.search.selection import exploration_scale
from dosaku.engine.search.uncertainty import weight_of_errors
from dosaku.launch.factory import engine_config
from dosaku.launch.flags import parse_flags

COEFF, MAX_WEIGHT = 0.25, 8.0  # KataGo's GTP uncertaintyCoeff, uncertaintyMaxWeight


def _fp(sqrt_area: float) -> np.ndarray:
    fp, _ = SearchConfig(uncertainty=True).kernel_params(
        komi=7.0, score_center=0.0, sqrt_area=sqrt_area, ucb1=False, suicide=False,
        max_depth=100, history=False, exact_end=True, wide_root_noise=0.0, ban_depth=0)
    return np.array(fp, np.float64)


def _katago_weight(value_error, score_error, slope):
    """KataGo's computeWeightFromNNOutput with exponent 1."""
    return COEFF / (value_error + slope * score_error + COEFF / MAX_WEIGHT)


def _slope(score, center, fp):
    """The score utility's slope at a point score, by central differences of the utility itself
    (zero spread), not by the formula under test."""
    h = 1e-4
    table = expected_atan_table()
    def f(s):
        return score_utility(s, s * s, center, fp, table)
    return (f(score + h) - f(score - h)) / (2 * h)


@pytest.mark.parametrize("value_error, score_error, score, center",
                         [(0.0, 0.0, 0.0, 0.0), (0.05, 2.0, 3.0, 1.5), (0.4, 12.0, -20.0, 4.0),
                          (0.01, 0.5, 60.0, -3.0)])
def test_weight_is_katagos(value_error, score_error, score, center):
    fp = _fp(9.0)
    want = _katago_weight(value_error, score_error, _slope(score, center, fp))
    got = weight_of_errors(value_error, score_error, score, center, fp)
    assert got == pytest.approx(want, rel=1e-6)
    assert 0 < got <= MAX_WEIGHT


def test_weight_falls_as_the_error_grows():
    fp = _fp(9.0)
    weights = [weight_of_errors(e, 10 * e, 0.0, 0.0, fp) for e in (0.0, 0.01, 0.1, 1.0)]
    assert weights[0] == pytest.approx(MAX_WEIGHT)
    assert all(a > b for a, b in zip(weights, weights[1:]))


class ErrorsEvaluator:
    """Values, scores and short-term errors drawn from each position's hash (so a position
    always gets the same ones); the first call (the root) gets score 0, so that the score
    centre stays 0 for the whole search and every weight is known in advance."""

    capabilities = Capabilities(needs_history=False, shortterm_error=True)

    def __init__(self):
        self.calls = 0

    def evaluate(self, batch):
        n = batch.count
        policy = batch.legal[:n].astype(np.float32)
        policy[:, -1] = policy[:, :-1].sum(axis=1)  # pass half the prior: finished games
        policy /= policy.sum(axis=1, keepdims=True)
        rows = [np.random.default_rng(int(batch.boards[i][B.ROW_HEADER, B.H_HASH]) & 0xFFFFFFFF)
                for i in range(n)]
        value = np.array([r.uniform(-0.9, 0.9) for r in rows], np.float32)
        mean = np.array([r.uniform(-15, 15) for r in rows])
        if self.calls == 0:
            mean[:] = 0.0
        sq = mean * mean + np.array([r.uniform(0, 60) for r in rows])
        errors = np.array([(r.uniform(0.01, 0.6), r.uniform(0.2, 12)) for r in rows], np.float32)
        self.calls += 1
        return Evaluation(policy, value, mean.astype(np.float32), None,
                          mean.astype(np.float32), sq.astype(np.float32), errors)


def _reference(t, node, fp):
    """(weight, value, utility, utility^2, score) sums of the node, mover's view, rebuilt from
    each node's own evaluation and its children as KataGo's recomputeNodeStats does (the score
    centre 0, so the same from either player's view)."""
    visits = int(t.node_visits[node])
    kids = [int(t.edge_child[j]) for j in range(int(t.node_edge_start[node]),
                                               int(t.node_edge_start[node])
                                               + int(t.node_num_children[node]))]
    kids = [c for c in kids if t.node_visits[c] > 0]
    own_count = visits - sum(int(t.node_visits[c]) for c in kids)  # a finished game's repeats
    center = 0.0
    mean = float(t.node_score_stats[node, 0])
    if t.node_state[node] == T.TERMINAL:
        w = MAX_WEIGHT
    else:
        w = _katago_weight(float(t.node_error[node, 0]), float(t.node_error[node, 1]),
                           _slope(mean, center, fp))
    u = float(t.node_value[node]) + score_utility(mean, float(t.node_score_stats[node, 1]),
                                                  center, fp, expected_atan_table())
    sums = np.array([w, w * float(t.node_value[node]), w * u, w * u * u, w * mean]) * own_count
    for c in kids:
        child = _reference(t, c, fp)
        sums += child * np.array([1, -1, -1, 1, -1])  # the opponent's view one ply down
    return sums


def test_tree_sums_are_the_weighted_sums_of_the_evaluations():
    game = GameState(3, 3, 1.5, PRESETS["tromp-taylor"])  # two passes end the game
    search = Search(ErrorsEvaluator(), SearchConfig(uncertainty=True, batch_size=1,
                                                    cache_size=0), seed=3)
    search.run(game, game.to_move, SearchLimits(visits=150))
    t = search.tree
    fp = search._fp
    assert fp[FloatParam.score_center] == 0.0
    terminals = 0
    for node in range(1, int(t.meta[T.M_NODES])):
        if t.node_visits[node] == 0:
            continue
        terminals += t.node_state[node] == T.TERMINAL
        want = _reference(t, node, fp)
        got = [t.node_sel[node, 0], t.node_value_sum[node], t.node_sel[node, 1],
               t.node_utility_sq[node], t.node_score_moments[node, 0]]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    assert terminals > 0  # finished games (weight 8) were backed up too
    root = search.root
    assert t.node_sel[root, 0] != t.node_visits[root]  # the weights were not all 1
    stats = search.root_stats()
    for action, weight in zip(stats.actions, stats.weight):
        child = T.find_child(t, root, action)
        assert weight == (t.node_sel[child, 0] if child != T.NO_NODE else 0.0)


# Digests of the tree after two reused 48-visit searches (below), float32 nets on one thread,
# by the matrix kernels onnxruntime picks for the CPU (their sums round differently). On AVX2:
# b6c96's made with the search as it was before uncertainty weighting existed (commit
# a48da98b); b10's with the option off once its graph's first norms were fused (their logits
# moved by 2e-5), matching a48da98b's search on the earlier graph. On AVX-512: both made at
# 4c8c770, whose AVX2 digests are these.
BEFORE_BY_KERNELS = {
    "avx2": {"b6c96": ["d59d4b8d62992c5f", "ed6a23f772709d59"],
             "b10": ["6fb7c5b613fd9b28", "ed922bb46871c6b5"]},
    "avx512": {"b6c96": ["7ae1a18556701ee8", "e541e88421c59348"],
               "b10": ["52c2ad50e621356c", "d140015c77097249"]}}


def matrix_kernels() -> str:
    """Which of onnxruntime's float matrix kernels this CPU runs: AVX-512 where it has
    AVX-512F, else AVX2 (the machines this project runs on have one or the other)."""
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    return "avx512" if "avx512f" in flags else "avx2"


BEFORE = BEFORE_BY_KERNELS[matrix_kernels()]
DIGESTED = ("node_visits", "node_value_sum", "node_value_sq", "node_utility_sq", "node_score_sum",
            "node_sel", "node_score_moments", "node_value", "node_score_stats")


def _digest(t) -> str:
    h = hashlib.sha256()
    n, e = int(t.meta[T.M_NODES]), int(t.meta[T.M_EDGES])
    for f in DIGESTED:
        h.update(np.ascontiguousarray(getattr(t, f)[:n]).tobytes())
    for f in ("edge_action", "edge_prior", "edge_child"):
        h.update(np.ascontiguousarray(getattr(t, f)[:e]).tobytes())
    return h.hexdigest()[:16]


def _two_searches(model_path, uncertainty: bool) -> tuple[list[str], list]:
    model = OnnxModel(model_path, threads=1)
    config = replace(SearchConfig.for_evaluator("onnx"), uncertainty=uncertainty)
    search = Search(OnnxEvaluator(model, seed=5), config, seed=7)
    game = GameState(9, 9, 7.0)
    for v in ("E5", "C3", "G7"):
        game.play(game.to_move, parse_vertex(v, 9, 9))
    digests, root_stats = [], []
    for _ in range(2):
        search.run(game, game.to_move, SearchLimits(visits=48))
        digests.append(_digest(search.tree))
        stats = search.root_stats()
        root_stats.append(stats)
        game.play(game.to_move, point_from_action(int(stats.actions[np.argmax(stats.visits)]),
                                                  9, 9))
        search.update_with_move(game)
    return digests, root_stats


@pytest.mark.parametrize("uncertainty", [False, True])
def test_a_net_without_error_heads_searches_as_before(b6c96_onnx, uncertainty):
    assert _two_searches(b6c96_onnx, uncertainty)[0] == BEFORE["b6c96"]


def test_the_transformer_searches_as_before_with_the_option_off_and_otherwise_with_it_on(
        b10_onnx):
    assert _two_searches(b10_onnx, False)[0] == BEFORE["b10"]
    digests, root_stats = _two_searches(b10_onnx, True)
    assert digests[0] != BEFORE["b10"][0]
    for stats in root_stats:
        assert stats.root_visits == 48
        visited = stats.visits > 0
        assert np.all(stats.weight[visited] > 0)
        assert np.all(stats.weight[visited] <= MAX_WEIGHT * stats.visits[visited])
        assert not np.array_equal(stats.weight, stats.visits)
        assert np.all(np.abs(stats.value[visited]) <= 1.0) and abs(stats.root_value) <= 1.0


def test_flags_set_the_options():
    config = engine_config(parse_flags(
        ["--evaluator", "uniform", "--uncertainty", "--uncertainty-coeff", "0.3",
         "--uncertainty-exponent", "0.5", "--uncertainty-max-weight", "6",
         "--cpuct-utility-stdev-scale", "0", "--cpuct-utility-stdev-prior", "0.3",
         "--cpuct-utility-stdev-prior-weight", "4"]))
    s = config.search
    assert (s.uncertainty, s.uncertainty_coeff, s.uncertainty_exponent,
            s.uncertainty_max_weight) == (True, 0.3, 0.5, 6.0)
    assert (s.utility_stdev_scale, s.utility_stdev_prior,
            s.utility_stdev_prior_weight) == (0.0, 0.3, 4.0)
    default = engine_config(parse_flags(["--evaluator", "uniform"])).search
    assert not default.uncertainty and default.utility_stdev_scale == 0.85
    with pytest.raises(SystemExit):
        parse_flags(["--uncertainty-max-weight", "0.5"])


def test_exponent_other_than_one_powers_the_error():
    fp = _fp(9.0)
    fp[FloatParam.uncertainty_exponent] = 0.5
    got = weight_of_errors(0.09, 0.0, 0.0, 0.0, fp)
    assert got == pytest.approx(COEFF / (math.sqrt(0.09) + COEFF / MAX_WEIGHT))


def test_exploration_reads_weights_as_katago_does():
    """exploration_scale against KataGo's getFpuValueForChildrenAssumeVisited and
    getExploreScaling with weighted visits: cPUCT and its square-root factor from the
    children's total weight, the utility spread from the parent's weight sum."""
    rng = np.random.default_rng(11)
    fp = _fp(9.0)
    c = SearchConfig()
    for _ in range(50):
        t = T.new_tree(20, 200)
        node = T.reset_tree(t, BLACK, 1)
        T.expand_node(t, node, np.ones(10, np.bool_), np.full(10, 0.1, np.float32))
        own_w, own_u = rng.uniform(0.2, 8), rng.uniform(-1, 1)
        weight, u_sum, sq_sum = own_w, own_w * own_u, own_w * own_u ** 2
        children_weight = 0.0
        for _ in range(int(rng.integers(1, 5))):
            e = int(t.node_edge_start[node] + t.node_num_children[node])
            child = T.alloc_node(t, WHITE, 0)
            T.attach_child(t, node, e, child)
            k = int(rng.integers(1, 6))
            ws, us = rng.uniform(0.2, 8, k), rng.uniform(-1, 1, k)
            t.node_sel[child] = (ws.sum(), (ws * us).sum())
            children_weight += ws.sum()
            weight += ws.sum()
            u_sum -= (ws * us).sum()
            sq_sum += (ws * us * us).sum()
        t.node_visits[node] = 99  # visits no longer enter: weights do
        t.node_sel[node] = (weight, u_sum)
        t.node_utility_sq[node] = sq_sum
        mean = u_sum / weight
        prior, pw = c.utility_stdev_prior, c.utility_stdev_prior_weight
        stdev = prior if weight <= 1 else math.sqrt(max(0.0, (
            (mean ** 2 + prior ** 2) * pw + sq_sum) / (pw + weight - 1) - mean ** 2))
        factor = 1 + c.utility_stdev_scale * (stdev / prior - 1)
        cpuct = c.c_puct + c.c_puct_log * math.log((children_weight + c.c_puct_base)
                                                   / c.c_puct_base)
        want = cpuct * math.sqrt(children_weight + 0.01) * factor
        assert exploration_scale(t, node, mean, fp) == pytest.approx(want, rel=1e-12)
