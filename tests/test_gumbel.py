"""Gumbel root search: the halving schedule, completed-Q targets worked out by hand, and the
search on toy trees whose values a scripted evaluator fixes."""

import math

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.gumbel import (
    completed_q,
    gumbel_search,
    halving_rounds,
    improved_policy,
    mixed_value,
    sigma,
)


def considered_visits(m, n):
    """The schedule as mctx lists it: per simulation, the visits its move already had."""
    return [r for r, (_, take) in enumerate(halving_rounds(m, n)) for _ in range(take)]


@pytest.mark.parametrize("m, n, expected", [
    # Expected sequences of mctx's seq_halving_test (google-deepmind/mctx).
    (8, 24, [0] * 8 + [1] * 4 + [2] * 4 + [3, 3, 4, 4, 5, 5, 6, 6]),
    (8, 47, [0] * 8 + [1] * 4 + [2] * 4 + [3] * 4
     + [v for v in range(4, 17) for _ in range(2)] + [17]),
    (8, 2, [0, 0]),
    (8, 13, [0] * 8 + [1] * 4 + [2]),
    (7, 24, [0] * 7 + [1, 1, 1, 2, 2, 2] + [3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8]),
    (1, 16, list(range(16))),
])
def test_halving_schedule_matches_mctx(m, n, expected):
    assert considered_visits(m, n) == expected


def test_halving_keeps_the_budget_and_halves_to_two():
    # log2 16 = 4 phases; rounds per phase 48 // (4 * size): 1 of 16, 1 of 8, 3 of 4, 6 of 2.
    rounds = halving_rounds(16, 48)
    assert sum(take for _, take in rounds) == 48
    assert [size for size, _ in rounds] == [16, 8, 4, 4, 4] + [2] * 6


# A hand-worked root: moves 0, 1, 2 legal with prior 0.5, 0.3, 0.2; move 3 illegal.
PRIOR = np.array([0.5, 0.3, 0.2, 0.0])
LEGAL = np.array([True, True, True, False])
VISITS = np.array([2, 1, 0, 0])
Q = np.array([0.6, -0.2, 0.0, 0.0])
RAW = 0.1


def test_mixed_value_by_hand():
    # Prior-weighted Q of the visited moves: (0.5 * 0.6 + 0.3 * -0.2) / 0.8 = 0.3;
    # with the raw value, weights 1 : 3 visits: (0.1 + 3 * 0.3) / 4 = 0.25.
    assert mixed_value(RAW, Q, VISITS, PRIOR) == pytest.approx(0.25)
    np.testing.assert_allclose(completed_q(RAW, Q, VISITS, PRIOR), [0.6, -0.2, 0.25, 0.25])


def test_completed_q_target_by_hand():
    sig = sigma(completed_q(RAW, Q, VISITS, PRIOR), VISITS, LEGAL)
    # Rescaled over the legal moves: (q + 0.2) / 0.8 -> 1, 0, 0.5625; times (50 + 2) * 0.1.
    np.testing.assert_allclose(sig, [5.2, 0.0, 2.925, 0.0])
    logits = np.log(np.where(LEGAL, PRIOR, 1e-30))
    policy = improved_policy(logits, sig, LEGAL)
    weights = [0.5 * math.exp(5.2), 0.3, 0.2 * math.exp(2.925)]
    expected = [w / sum(weights) for w in weights] + [0.0]
    np.testing.assert_allclose(policy, expected, rtol=1e-12)
    assert policy[0] == pytest.approx(0.9575, abs=1e-4)


def test_nothing_visited_leaves_the_prior():
    visits = np.zeros(4, np.int64)
    done = completed_q(RAW, Q, visits, PRIOR)
    np.testing.assert_allclose(done, RAW)
    sig = sigma(done, visits, LEGAL)
    np.testing.assert_allclose(sig, 0.0)
    logits = np.log(np.where(LEGAL, PRIOR, 1e-30))
    np.testing.assert_allclose(improved_policy(logits, sig, LEGAL), PRIOR)


class ToyEvaluator:
    """3x3 positions valued by a table of Black's values per centre state; prior fixed per
    action (pass last); values reported from the side to move's view."""

    capabilities = Capabilities(needs_history=False)

    def __init__(self, prior, black_value):
        self.prior = np.asarray(prior, np.float64)
        self.black_value = black_value  # f(board colour row) -> Black's value

    def evaluate(self, batch):
        n = batch.count
        legal = batch.legal[:n]
        policy = np.where(legal, self.prior, 0.0)
        policy = (policy / policy.sum(axis=1, keepdims=True)).astype(np.float32)
        value = np.array([self.black_value(batch.boards[i][B.ROW_COLOR]) *
                          (1 if batch.to_move[i] == BLACK else -1) for i in range(n)], np.float32)
        return Evaluation(policy, value, np.zeros(n, np.float32), None)


def toy_search(prior, black_value):
    game = GameState(3, 3, 0.5, PRESETS["chinese"])
    search = Search(ToyEvaluator(prior, black_value),
                    SearchConfig(batch_size=1, max_nodes=2000, max_edges=50_000), seed=0,
                    log=lambda msg: None)
    return game, search


def black_stone_sum(col):
    """Black's value: 0.05 plus (action / 10) for each black stone."""
    return 0.05 + sum(a / 10 for a in range(9) if col[point_from_action(a, 3, 3)] == BLACK)


def test_one_simulation_per_candidate_gives_the_hand_computed_target():
    prior = np.arange(1, 11, dtype=np.float64)  # action a has prior (a + 1) / 55
    prior /= prior.sum()
    game, search = toy_search(prior, black_stone_sum)
    res = gumbel_search(search, game, BLACK, k=4, simulations=4,
                        rng=np.random.default_rng(1))
    logits = np.log(prior)
    considered = sorted(np.argsort(-(res.gumbel + logits))[:4])
    assert sorted(res.considered) == considered
    # Each candidate got one visit: its value is the evaluation of the child position,
    # Black's 0.05 + a / 10 for a stone on action a, and the root's 0.05 after a pass.
    expected_visits = np.zeros(10)
    expected_visits[considered] = 1
    np.testing.assert_array_equal(res.visits, expected_visits)
    q = {a: 0.05 + (a / 10 if a < 9 else 0.0) for a in considered}
    np.testing.assert_allclose([res.q[a] for a in considered], [q[a] for a in considered],
                               atol=1e-6)
    # Written out: mixed value for the six unvisited moves, rescaling, sigma, softmax.
    p_seen = sum(prior[a] for a in considered)
    v_mix = (0.05 + 4 * sum(prior[a] * q[a] for a in considered) / p_seen) / 5
    completed = np.array([q.get(a, v_mix) for a in range(10)])
    scaled = (completed - completed.min()) / (completed.max() - completed.min())
    sig = (50 + 1) * 0.1 * scaled
    target = prior * np.exp(sig)
    np.testing.assert_allclose(res.policy, target / target.sum(), atol=1e-6)
    best = max(considered, key=lambda a: res.gumbel[a] + logits[a] + sig[a])
    assert res.action == best
    assert res.value == pytest.approx(q[best], abs=1e-6)


def centre_decides(col):
    """Black's value: +0.9 with a black stone in the centre, -0.9 with a white one, else -0.2."""
    c = col[point_from_action(4, 3, 3)]
    return 0.9 if c == BLACK else (-0.9 if c == WHITE else -0.2)


@pytest.mark.parametrize("seed", range(3))
def test_search_finds_the_move_the_prior_neglects(seed):
    prior = np.full(10, 0.105)
    prior[4] = 0.055  # the centre, the one good move, has the lowest prior
    game, search = toy_search(prior / prior.sum(), centre_decides)
    res = gumbel_search(search, game, BLACK, k=10, simulations=40,
                        rng=np.random.default_rng(seed))
    assert res.action == 4
    assert int(np.argmax(res.policy)) == 4 and res.policy[4] > 0.9
    assert res.visits.sum() == 40 and res.visits[4] == res.visits.max()
    assert res.value == pytest.approx(0.9, abs=1e-6)


def test_only_pass_legal_needs_no_simulation():
    game, search = toy_search(np.full(10, 0.1), centre_decides)
    # Black stones everywhere but one own eye: filling it would be suicide, so only pass.
    eye = point_from_action(8, 3, 3)
    assert game.set_position([point_from_action(a, 3, 3) for a in range(8)], [], BLACK)
    assert np.flatnonzero(game.legal_mask(BLACK)).tolist() == [9]
    res = gumbel_search(search, game, BLACK, k=4, simulations=8, rng=np.random.default_rng(0))
    assert res.visits.sum() == 0 and res.action == 9 and res.policy[9] == 1.0
    assert game.board[B.ROW_COLOR, eye] == 0
