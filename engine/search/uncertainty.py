"""KataGo's uncertainty-weighted playouts: the weight one evaluation carries in its node's and its
ancestors' averages and in PUCT's counts (tree.node_sel), from the net's own prediction of how far
its value and score are off (the short-term error heads of nets of version 9 and up).

An evaluation whose utility the net expects to be off by u weighs coeff / (u ** exponent +
coeff / max_weight): max_weight when sure, less the less it is. u adds the value error (the
win/loss utility has slope 1) and the score error times the slope of the score utility at the
evaluation's expected score, as KataGo's computeWeightFromNNOutput and
getApproxScoreUtilityDerivative. A finished game is exact and weighs max_weight. With the
weighting off, or an evaluator without those heads, every evaluation weighs exactly 1.
"""

import numpy as np
from numba import njit

from dosaku.engine.search import tree as T
from dosaku.engine.search.config import FloatParam, IntParam
from dosaku.engine.search.scores import DYNAMIC_SCORE_SCALE, STATIC_SCORE_SCALE


@njit(cache=True)
def _atan_slope(score, center, scale):
    """d/ds of (2/pi) atan((s - center) / scale) at s = score."""
    d = score - center
    return 2.0 / np.pi * scale / (scale * scale + d * d)


@njit(cache=True)
def score_utility_slope(score, center, fp):
    """Slope of the score utility (engine/search/scores.py) at a point estimate of the final
    score; `score` and `center` from the same player's view."""
    sqrt_area = fp[FloatParam.sqrt_area]
    return (fp[FloatParam.static_score_utility]
            * _atan_slope(score, 0.0, STATIC_SCORE_SCALE * sqrt_area)
            + fp[FloatParam.dynamic_score_utility]
            * _atan_slope(score, center, DYNAMIC_SCORE_SCALE * sqrt_area))


@njit(cache=True)
def weight_of_errors(value_error, score_error, score, center, fp):
    """The weight of an evaluation with these predicted errors at expected score `score`."""
    u = value_error + score_utility_slope(score, center, fp) * score_error
    coeff = fp[FloatParam.uncertainty_coeff]
    exponent = fp[FloatParam.uncertainty_exponent]
    powered = u if exponent == 1.0 else u ** exponent
    return coeff / (powered + coeff / fp[FloatParam.uncertainty_max_weight])


@njit(cache=True)
def eval_weight(t, node, depth, fp, ip):
    """The weight of one visit ending at `node` (at `depth` below the root) with its stored
    evaluation: 1 unless ip[uncertainty]; the score centre is the root side's, so it changes
    sign with the node's mover as in backup.own_utility."""
    if ip[IntParam.uncertainty] == 0:
        return 1.0
    if t.node_state[node] == T.TERMINAL:
        return fp[FloatParam.uncertainty_max_weight]
    center = fp[FloatParam.score_center]
    c = center if depth % 2 == 1 else -center
    return weight_of_errors(np.float64(t.node_error[node, 0]), np.float64(t.node_error[node, 1]),
                            np.float64(t.node_score_stats[node, 0]), c, fp)
