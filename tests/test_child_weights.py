"""KataGo's child weighting (engine/child_weights.py): the t CDF against its density, the
weights against a plain rewrite of the rules, and every node of a searched tree against a
recomputation from its children."""

import math

import numpy as np
import pytest

from engine import child_weights as CW
from engine import tree as T
from engine.config import SearchConfig
from engine.constants import BLACK
from engine.game import GameState
from engine.search import Search
from engine.search_limits import SearchLimits
from tests.evaluators import SkewedEvaluator

EXPONENT, PRUNE = 0.25, 0.15  # KataGo's defaults


def _t3_density(z):
    return 2.0 / (math.pi * math.sqrt(3.0)) * (1.0 + z * z / 3.0) ** -2


@pytest.mark.parametrize("z", [-6.0, -1.3, 0.0, 0.4, 2.5])
def test_t3_cdf_is_the_integral_of_the_density(z):
    grid = np.linspace(-2000.0, z, 4_000_001)
    dens = _t3_density(grid)
    integral = float(np.sum((dens[1:] + dens[:-1]) * np.diff(grid)) / 2.0)
    assert CW.t3_cdf(z) == pytest.approx(integral, abs=1e-6)


def _plain_weights(children, exponent, prune):
    """children: (utility, visits, prior) in visiting order. The rules of the module's
    docstring written out one by one."""
    weights = [float(n) for _, n, _ in children]
    if prune > 0:
        seen_u, seen_w, seen_p = [], [], []
        for i, (u, _, p) in enumerate(children):
            if sum(seen_w) > 0 and sum(seen_p) > 0:
                mean_before = sum(a * b for a, b in zip(seen_u, seen_w)) / sum(seen_w)
                share = sum(seen_w) * p / sum(seen_p)
                if u < mean_before and weights[i] > 2 * share:
                    excess = weights[i] - 2 * share
                    weights[i] -= excess * (1 - math.exp(-(mean_before - u) / prune))
            seen_u.append(u)
            seen_w.append(weights[i])
            seen_p.append(p)
    total = sum(weights)
    if exponent > 0:
        mean = sum(c[0] * w for c, w in zip(children, weights)) / total
        raised = []
        for (u, _, _), w in zip(children, weights):
            stdev = math.sqrt(1e-8 + 1 / (1.5 * math.sqrt(w)))
            raised.append(w * (_t3_density_cdf((u - mean) / stdev) + 1e-4) ** exponent)
        weights = [w * total / sum(raised) for w in raised]
    return weights, total


def _t3_density_cdf(z):
    """The t(3) CDF in its textbook closed form, written independently of the module's."""
    theta = math.atan(z / math.sqrt(3))
    return 0.5 + (theta + math.sin(theta) * math.cos(theta)) / math.pi


def _kernel_weights(children, exponent, prune):
    u = np.array([c[0] for c in children], float)
    w = np.array([c[1] for c in children], float)
    p = np.array([c[2] for c in children], float)
    total = CW.child_weights(u, w, p, len(children), exponent, prune)
    return list(w), total


def test_no_adjustment_leaves_the_visits_as_weights():
    children = [(0.3, 10, 0.5), (-0.4, 7, 0.2), (0.1, 1, 0.1)]
    weights, total = _kernel_weights(children, 0.0, 0.0)
    assert weights == [10, 7, 1] and total == 18


def test_noise_pruning_cuts_a_worse_child_down_toward_twice_its_policy_share_by_hand():
    # second child: mean before it 0.5, share 10 x 0.1 / 0.5 = 2, lenient 4, excess 6,
    # cut 6 (1 - exp(-0.5 / 0.15))
    children = [(0.5, 10, 0.5), (0.0, 10, 0.1)]
    weights, total = _kernel_weights(children, 0.0, PRUNE)
    cut = 6 * (1 - math.exp(-0.5 / PRUNE))
    assert weights == pytest.approx([10, 10 - cut])
    assert total == pytest.approx(20 - cut)
    better = [(0.5, 10, 0.5), (0.6, 10, 0.1)]  # a better child keeps its weight
    assert _kernel_weights(better, 0.0, PRUNE)[0] == [10, 10]
    within = [(0.5, 10, 0.5), (0.0, 4, 0.1)]  # within twice its share: kept
    assert _kernel_weights(within, 0.0, PRUNE)[0] == [10, 4]


@pytest.mark.parametrize("seed", range(12))
def test_weights_follow_the_plain_rules(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 40))
    children = [(float(rng.uniform(-1, 1)), int(rng.integers(1, 300)),
                 float(rng.dirichlet(np.ones(k))[0])) for _ in range(k)]
    for exponent, prune in [(EXPONENT, 0.0), (0.0, PRUNE), (EXPONENT, PRUNE), (0.5, 0.05)]:
        weights, total = _kernel_weights(children, exponent, prune)
        plain, plain_total = _plain_weights(children, exponent, prune)
        np.testing.assert_allclose(weights, plain, rtol=1e-9)
        assert total == pytest.approx(plain_total, rel=1e-12)
        assert sum(weights) == pytest.approx(total, rel=1e-9)  # value weighting keeps the sum


def test_value_weighting_moves_weight_to_the_better_of_equally_visited_children():
    weights, _ = _kernel_weights([(0.2, 50, 0.3), (-0.2, 50, 0.3)], EXPONENT, 0.0)
    assert weights[0] > 50 > weights[1]


CONFIG = SearchConfig(batch_size=8, max_nodes=20_000, max_edges=500_000,
                      value_weight_exponent=EXPONENT, noise_prune_scale=PRUNE,
                      dynamic_score_utility=0.0)


def _own_utility(t, node, sqrt_area):
    """The node's evaluation plus KataGo's static score utility (dynamic weight 0 here)."""
    k = 2 / math.pi * CONFIG.static_score_utility
    return float(t.node_value[node]) + k * math.atan(float(t.node_score[node]) / (2 * sqrt_area))


def test_every_node_holds_the_weighted_mean_of_its_children_and_its_own_utility():
    g = GameState(9, 9, 7.0)
    # priors on a few points, a value and a score lead per position so the static score utility
    # is not zero
    evaluator = SkewedEvaluator(82, decay=0.7, seed=5, spread=0.8, score_per_value=20)
    s = Search(evaluator, CONFIG, log=lambda m: None)
    s.run(g, BLACK, SearchLimits(playouts=1500))
    t = s.tree
    assert not t.node_virtual.any()
    checked = reweighed = 0
    for node in range(1, int(t.meta[T.M_NODES])):
        start = int(t.node_edge_start[node])
        kids = [(int(t.edge_child[j]), j) for j in range(start, start + t.node_num_children[node])
                if t.node_visits[t.edge_child[j]] > 0]
        if t.node_state[node] != T.EXPANDED or not kids:
            continue
        prior = (lambda j: float(s.root_prior[t.edge_action[j]])) if node == s.root else \
            (lambda j: float(t.edge_prior[j]))
        children = [(float(t.node_sel[c, 1]) / int(t.node_visits[c]), int(t.node_visits[c]),
                     prior(j)) for c, j in kids]
        weights, total = _plain_weights(children, EXPONENT, PRUNE)
        own = _own_utility(t, node, 9.0)
        mean = (own - sum(w * c[0] for w, c in zip(weights, children))) / (1 + total)
        visits = int(t.node_visits[node])
        assert float(t.node_sel[node, 1]) / visits == pytest.approx(mean, abs=1e-9), node
        squares = [float(t.node_utility_sq[c]) / int(t.node_visits[c]) for c, _ in kids]
        sq = (own * own + sum(w * q for w, q in zip(weights, squares))) / (1 + total)
        assert float(t.node_utility_sq[node]) / visits == pytest.approx(sq, abs=1e-9), node
        checked += 1
        plain_mean = float(t.node_value_sum[node]) / visits
        reweighed += abs(mean - plain_mean) > 1e-3
    assert checked > 100
    assert reweighed > checked // 4  # the weighting changed what selection sees


def test_off_selection_backs_up_plain_sums(counting_evaluator):
    assert SearchConfig().value_weight_exponent == 0.0 == SearchConfig().noise_prune_scale
    g = GameState(7, 7, 0.5)
    s = Search(counting_evaluator, SearchConfig(batch_size=4), log=lambda m: None)
    s.run(g, BLACK, SearchLimits(playouts=300))
    n = int(s.tree.meta[T.M_NODES])
    # the counting evaluator's scores are 0: selection sums equal the value sums everywhere
    np.testing.assert_allclose(s.tree.node_sel[1:n, 1], s.tree.node_value_sum[1:n], atol=1e-9)
