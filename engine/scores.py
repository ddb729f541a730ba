"""The search's score quantities: KataGo's score utility, which selection adds to values, and
the (lead, expected score, expected squared score) columns and their backed-up moments that
reports turn into a mean and standard deviation."""

import numpy as np
from numba import njit

from engine.config import FloatParam


@njit(cache=True)
def score_utility(score, center, fp):
    """KataGo's score utility added to a value for selection: a static term (centre 0) that
    prefers larger wins and smaller losses, and a dynamic term centred near the root's expected
    score so the search keeps caring about points when the winrate saturates.
    sv(s) = (2/pi) atan((s - c) / (scale sqrt(area))) with scales 2 and 0.75 (katago-network.md
    §4.1); `score` and `center` are from the same player's view."""
    k = 2.0 / np.pi
    sqrt_area = fp[FloatParam.sqrt_area]
    return (fp[FloatParam.static_score_utility] * k * np.arctan(score / (2.0 * sqrt_area))
            + fp[FloatParam.dynamic_score_utility] * k
            * np.arctan((score - center) / (0.75 * sqrt_area)))


def score_columns(ev) -> np.ndarray:
    """(score lead, expected final score, expected squared score) per row of an Evaluation.

    Evaluators without a score distribution give the lead as the expected score and its
    square as the second moment: the spread then comes from the leaves alone.
    """
    lead = np.asarray(ev.score, np.float64)
    mean = lead if ev.score_mean is None else np.asarray(ev.score_mean, np.float64)
    sq = mean * mean if ev.score_mean_sq is None else np.asarray(ev.score_mean_sq, np.float64)
    return np.ascontiguousarray(np.stack([lead, mean, sq], axis=1), dtype=np.float32)


def score_mean_and_stdev(moments: np.ndarray, visits: np.ndarray):
    """Mean and standard deviation of the final score from backed-up (score, score^2) sums,
    in the stored (mover's) view; 0 where there are no visits."""
    n = np.maximum(visits, 1)
    mean = np.where(visits > 0, moments[:, 0] / n, 0.0)
    var = np.where(visits > 0, moments[:, 1] / n - mean * mean, 0.0)
    return mean, np.sqrt(np.maximum(var, 0.0))
