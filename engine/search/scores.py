"""The search's score quantities: KataGo's score utility, which selection adds to values, and
the (lead, expected score, expected squared score) columns and their backed-up moments that
reports turn into a mean and standard deviation."""

from functools import cache

import numpy as np
from numba import njit

from dosaku.engine.search.config import FloatParam

# expected_atan's table: means and standard deviations in steps of TABLE_STEP up to
# TABLE_MEAN_RADIUS and TABLE_STDEV_MAX (units of the utility's scale; beyond, the edge value)
TABLE_STEP = 0.05
TABLE_MEAN_RADIUS = 20.0
TABLE_STDEV_MAX = 20.0
# the score utility's scales, times sqrt(area): KataGo's static 2 and dynamicScoreCenterScale
STATIC_SCORE_SCALE = 2.0
DYNAMIC_SCORE_SCALE = 0.75


@cache
def expected_atan_table() -> np.ndarray:
    """table[i, j] = (2/pi) E[atan(mu_i + sigma_j Z)], Z standard normal, mu_i = -RADIUS + i
    STEP, sigma_j = j STEP: atan sampled on a grid wide enough for six standard deviations,
    smoothed by each Gaussian through the FFT (its transform is known in closed form). Built
    once per process (about 0.1 s, 2.6 MB)."""
    h = TABLE_STEP
    n_mean = int(round(TABLE_MEAN_RADIUS / h))
    n_stdev = int(round(TABLE_STDEV_MAX / h)) + 1
    reach = n_mean + int(np.ceil(6 * TABLE_STDEV_MAX / h))
    x = np.arange(-reach, reach + 1) * h
    size = 1 << int(np.ceil(np.log2(len(x) + reach)))
    spectrum = np.fft.rfft(2.0 / np.pi * np.arctan(x), size)
    freq = np.fft.rfftfreq(size, h)
    table = np.empty((2 * n_mean + 1, n_stdev))
    means = slice(reach - n_mean, reach + n_mean + 1)
    table[:, 0] = 2.0 / np.pi * np.arctan(x[means])
    for j in range(1, n_stdev):
        smooth = np.exp(-0.5 * (2 * np.pi * freq * j * h) ** 2)
        table[:, j] = np.fft.irfft(spectrum * smooth, size)[means]
    return table


@njit(cache=True)
def expected_atan(mu, sigma, table):
    """(2/pi) E[atan(mu + sigma Z)] for a standard normal Z: bilinear in the table, exact
    (2/pi) atan(mu) at sigma 0 and interpolated from it below the first step."""
    rows, cols = table.shape
    x = min(max(mu / TABLE_STEP + (rows - 1) // 2, 0.0), rows - 1.0)
    i = min(int(x), rows - 2)
    fx = x - i
    y = min(sigma / TABLE_STEP, cols - 1.0)
    j = min(int(y), cols - 2)
    fy = y - j
    lo = 2.0 / np.pi * np.arctan(mu) if j == 0 else \
        table[i, j] + fx * (table[i + 1, j] - table[i, j])
    if fy == 0.0:
        return lo
    hi = table[i, j + 1] + fx * (table[i + 1, j + 1] - table[i, j + 1])
    return lo + fy * (hi - lo)


@njit(cache=True)
def score_utility(mean, mean_sq, center, fp, table):
    """KataGo's score utility added to a value for selection: a static term (centre 0) that
    prefers larger wins and smaller losses, and a dynamic term centred near the root's expected
    score so the search keeps caring about points when the winrate saturates, each the
    expectation of (2/pi) atan((s - c) / (scale sqrt(area))) (scales 2 and 0.75) over a normal
    final score s with the evaluation's mean and second moment, as KataGo's expectedScoreValue.
    `mean` and `center` are from the same player's view; a spread below a millionth of the
    squared mean is float32 rounding of a point estimate, not a distribution."""
    var = mean_sq - mean * mean
    sd = np.sqrt(var) if var > 1e-6 * (1.0 + mean * mean) else 0.0
    sqrt_area = fp[FloatParam.sqrt_area]
    static = STATIC_SCORE_SCALE * sqrt_area
    dynamic = DYNAMIC_SCORE_SCALE * sqrt_area
    return (fp[FloatParam.static_score_utility] * expected_atan(mean / static, sd / static, table)
            + fp[FloatParam.dynamic_score_utility]
            * expected_atan((mean - center) / dynamic, sd / dynamic, table))


def score_columns(ev) -> np.ndarray:
    """(score lead, expected final score, expected squared score) per row of an Evaluation.

    Evaluators without a score distribution give the lead as the expected score and its
    square as the second moment: the spread then comes from the leaves alone.
    """
    lead = np.asarray(ev.score, np.float64)
    mean = lead if ev.score_mean is None else np.asarray(ev.score_mean, np.float64)
    sq = mean * mean if ev.score_mean_sq is None else np.asarray(ev.score_mean_sq, np.float64)
    return np.ascontiguousarray(np.stack([lead, mean, sq], axis=1), dtype=np.float32)


def score_mean_and_stdev(moments: np.ndarray, weights: np.ndarray):
    """Mean and standard deviation of the final score from backed-up (score, score^2) sums
    and the summed weights of their visits, in the stored (mover's) view; 0 where there are
    no visits."""
    n = np.where(weights > 0, weights, 1)
    mean = np.where(weights > 0, moments[:, 0] / n, 0.0)
    var = np.where(weights > 0, moments[:, 1] / n - mean * mean, 0.0)
    return mean, np.sqrt(np.maximum(var, 0.0))
