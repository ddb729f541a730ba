"""KataGo's score utility as an expectation over the net's score distribution: the table-based
expected_atan against plain quadrature, and score_utility against the point formula where the
distribution is a point."""

import math

import numpy as np
import pytest

from dosaku.engine.search.config import FloatParam, SearchConfig
from dosaku.engine.search.scores import expected_atan, expected_atan_table, score_utility


def quadrature(mu: float, sigma: float) -> float:
    """(2/pi) E[atan(mu + sigma Z)] summed plainly over a fine grid of Z (±8, 160,001 points)."""
    z = np.linspace(-8, 8, 160_001)
    w = np.exp(-0.5 * z * z)
    return float((w * np.arctan(mu + sigma * z)).sum() / w.sum() * 2 / math.pi)


@pytest.mark.parametrize("mu, sigma", [(0.0, 0.3), (0.4, 0.01), (-1.3, 0.7), (2.5, 2.0),
                                       (0.7, 0.05), (-6.0, 4.5), (12.3, 17.0), (0.02, 9.9)])
def test_expected_atan_matches_quadrature(mu, sigma):
    table = expected_atan_table()
    assert expected_atan(mu, sigma, table) == pytest.approx(quadrature(mu, sigma), abs=2e-4)
    assert expected_atan(-mu, sigma, table) == pytest.approx(-expected_atan(mu, sigma, table),
                                                             abs=1e-12)


def test_a_point_distribution_is_the_plain_atan():
    table = expected_atan_table()
    for mu in (-30.0, -2.2, 0.0, 0.013, 1.0, 7.5, 25.0):
        assert expected_atan(mu, 0.0, table) == 2 / math.pi * math.atan(mu)


def test_score_utility_weighs_the_spread():
    fp = np.array(SearchConfig().kernel_params(komi=7.0, score_center=3.0, sqrt_area=19.0,
                                               ucb1=False, suicide=False, max_depth=20,
                                               history=False, exact_end=False,
                                               wide_root_noise=0.0, ban_depth=0)[0])
    table = expected_atan_table()

    def point(mean, center):  # the utility of a known final score
        return (0.1 * 2 / math.pi * math.atan(mean / 38.0)
                + 0.3 * 2 / math.pi * math.atan((mean - center) / 14.25))

    # a point estimate (its square's float32 rounding included) is the plain formula
    for mean in (-12.0, 0.5, 9.0):
        sq = float(np.float32(mean * mean))
        assert score_utility(mean, sq, 3.0, fp, table) == pytest.approx(point(mean, 3.0),
                                                                        abs=1e-12)
    # a spread flattens it: the same mean with a 15-point stdev is worth less than the point
    spread = score_utility(20.0, 400.0 + 225.0, 3.0, fp, table)
    expected = (0.1 * quadrature(20 / 38, 15 / 38) + 0.3 * quadrature(17 / 14.25, 15 / 14.25))
    assert spread == pytest.approx(expected, abs=2e-4)
    assert spread < point(20.0, 3.0) - 0.01
    assert fp[FloatParam.score_center] == 3.0
