"""RolloutEvaluator and MixedEvaluator against positions with known results."""

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation, PositionBatch
from dosaku.engine.evaluators.rollout import MixedEvaluator, RolloutEvaluator
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.rulesets import PRESETS
from tests.boards import game_from_diagram

SETTLED = """
    . X O . O
    X X O O O
    . X O . O
    X X O O O
    . X O . O
    """
# Black: 7 stones + 3 eyes = 10 points; White: 12 stones + 3 eyes = 15 points.


def _batch(g, colors):
    b = PositionBatch(len(colors), g.width, g.height, g.komi, g.rules)
    for i, c in enumerate(colors):
        b.boards[i] = g.board
        b.to_move[i] = c
        b.legal[i] = g.legal_mask(c)
    b.count = len(colors)
    return b


def test_settled_position_scores_exactly():
    g = game_from_diagram(SETTLED, BLACK, komi=0.5)
    ev = RolloutEvaluator(playouts_per_leaf=3).evaluate(_batch(g, [BLACK, WHITE]))
    assert ev.value.tolist() == [-1.0, 1.0]
    assert ev.score.tolist() == pytest.approx([-5.5, 5.5])
    assert ev.score_mean.tolist() == pytest.approx([-5.5, 5.5])  # every game ends the same
    assert ev.score_mean_sq.tolist() == pytest.approx([30.25, 30.25])
    expected = np.array([[1 if c == "X" or (c == "." and x < 2) else -1
                          for x, c in enumerate(row.split())]
                         for row in SETTLED.strip().splitlines()], np.float32).reshape(-1)
    assert np.array_equal(ev.ownership[0], expected)
    assert np.array_equal(ev.ownership[1], -expected)
    assert np.allclose(ev.policy.sum(axis=1), 1.0)


def test_handicap_bonus_is_part_of_the_komi():
    g = game_from_diagram(SETTLED, BLACK, komi=0.5, rules=PRESETS["chinese"])
    b = _batch(g, [BLACK])
    b.komi = -10.0
    b.handicap_stones = 2  # chinese: White gets 2 points, effective komi -8: B+3
    ev = RolloutEvaluator().evaluate(b)
    assert ev.value[0] == 1.0 and ev.score[0] == pytest.approx(3.0)


class _ConstantNet:
    capabilities = Capabilities(needs_history=False)

    def evaluate(self, batch):
        n = batch.count
        legal = batch.legal[:n].astype(np.float32)
        return Evaluation(legal / legal.sum(1, keepdims=True), np.full(n, 0.5, np.float32),
                          np.full(n, 4.0, np.float32), None)


def test_mixed_value_is_the_lambda_blend():
    g = game_from_diagram(SETTLED, BLACK, komi=0.5)
    ev = MixedEvaluator(_ConstantNet(), RolloutEvaluator(), lam=0.25).evaluate(_batch(g, [BLACK]))
    assert ev.value[0] == pytest.approx(0.75 * 0.5 + 0.25 * -1.0)
    assert ev.score[0] == pytest.approx(0.75 * 4.0 + 0.25 * -5.5)
    assert ev.ownership is not None  # the rollouts' when the net has none
    # the mixture's moments: the net's point mass at 4 and the rollouts' at -5.5
    assert ev.score_mean[0] == pytest.approx(0.75 * 4.0 + 0.25 * -5.5)
    assert ev.score_mean_sq[0] == pytest.approx(0.75 * 16.0 + 0.25 * 30.25)


def test_rollout_score_spread_on_an_open_board():
    g = game_from_diagram(". . . . .\n" * 5, BLACK, komi=0.5)
    ev = RolloutEvaluator(playouts_per_leaf=200).evaluate(_batch(g, [BLACK]))
    assert ev.score_mean[0] == pytest.approx(ev.score[0])
    # random games on an empty 5x5 end anywhere from a big loss to a big win
    assert ev.score_mean_sq[0] - ev.score_mean[0] ** 2 > 25.0
