"""PUCT child selection against a plain re-statement of KataGo's formulas (searchexplorehelpers
.cpp): exploration scaled by the parent's utility spread and the first-play urgency mixing in the
parent's own evaluation while little of its policy has been visited."""

import math

import numpy as np

from dosaku.engine.rules.constants import BLACK
from dosaku.engine.search import tree as T
from dosaku.engine.search.config import FloatParam, SearchConfig
from dosaku.engine.search.scores import expected_atan_table, score_utility
from dosaku.engine.search.selection import _select_child

ACTIONS = 10  # a 3x3 board and pass


def _random_node(rng, children):
    """A tree whose node 1 is expanded, with `children` visited children and random stats."""
    t = T.new_tree(100, 1000)
    node = T.reset_tree(t, BLACK, 1)
    policy = rng.dirichlet(np.ones(ACTIONS)).astype(np.float32)
    T.expand_node(t, node, np.ones(ACTIONS, np.bool_), policy)
    utilities = []
    for _ in range(children):
        first_free = t.node_edge_start[node] + t.node_num_children[node]
        e = first_free + int(rng.integers(ACTIONS - t.node_num_children[node]))
        child = T.alloc_node(t, 3 - BLACK, 0)
        T.attach_child(t, node, e, child)
        n = int(rng.integers(1, 30))
        u = rng.uniform(-1, 1, n)
        t.node_visits[child] = n
        t.node_sel[child] = (n, u.sum())
        utilities.extend(-u)  # the parent's mover sees the child's utilities negated
    own = rng.uniform(-1, 1)
    utilities = np.array(utilities + [own])
    t.node_visits[node] = len(utilities)
    t.node_sel[node] = (len(utilities), utilities.sum())
    t.node_utility_sq[node] = (utilities ** 2).sum()
    t.node_value[node] = rng.uniform(-1, 1)
    t.node_score[node] = rng.uniform(-20, 20)
    t.node_score_stats[node] = (t.node_score[node], t.node_score[node] ** 2 + rng.uniform(0, 200))
    return t, node


def _reference(t, node, depth, fp):
    """Index of the edge KataGo's PUCT picks (chooser = the node's side to move)."""
    c = SearchConfig()
    center = fp[FloatParam.score_center] * (1 if depth % 2 == 1 else -1)
    own = -(t.node_value[node] + score_utility(t.node_score_stats[node, 0],
                                               t.node_score_stats[node, 1], center, fp,
                                               expected_atan_table()))
    visits = t.node_visits[node]
    mean = -t.node_sel[node, 1] / visits
    start, kids = t.node_edge_start[node], t.node_num_children[node]
    edges = range(start, start + t.node_num_edges[node])
    mass = sum(t.edge_prior[j] for j in range(start, start + kids))
    weight = min(1.0, mass ** c.fpu_parent_weight_pow)
    fpu = weight * mean + (1 - weight) * own - c.fpu_reduction * math.sqrt(mass)
    parent_n = visits - 1
    cpuct = c.c_puct + c.c_puct_log * math.log((parent_n + c.c_puct_base) / c.c_puct_base)
    prior, pw = c.utility_stdev_prior, c.utility_stdev_prior_weight
    var = ((mean ** 2 + prior ** 2) * pw + t.node_utility_sq[node]) / (pw + visits - 1) - mean ** 2
    cpuct *= 1 + c.utility_stdev_scale * (math.sqrt(max(var, 0)) / prior - 1)
    explore = cpuct * math.sqrt(parent_n + 0.01)

    def value(j):
        child = t.edge_child[j]
        n = t.node_visits[child] if child != T.NO_NODE else 0
        q = t.node_sel[child, 1] / n if n else fpu
        return q + explore * t.edge_prior[j] / (1 + n)

    return max(edges, key=value)


def test_selection_matches_katago_formulas():
    # 300 random nodes: with either refinement left out, about 1 in 20 choices would differ
    for seed in range(300):
        rng = np.random.default_rng(seed)
        t, node = _random_node(rng, int(rng.integers(1, 6)))
        depth = int(rng.integers(1, 4))
        fp, ip = SearchConfig().kernel_params(komi=7.0, score_center=rng.uniform(-5, 5),
                                             sqrt_area=3.0, ucb1=False, suicide=False,
                                             max_depth=20, history=False, exact_end=False,
                                             wide_root_noise=0.0, ban_depth=0)
        fp, ip = np.array(fp), np.array(ip)
        chosen = _select_child(t, node, depth, np.zeros(ACTIONS, np.float32),
                               np.ones(ACTIONS, np.bool_), np.zeros((3, ACTIONS), np.int64),
                               fp, ip, expected_atan_table())
        assert chosen == _reference(t, node, depth, fp), seed
