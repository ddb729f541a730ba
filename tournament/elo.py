"""Elo difference and its 95 % interval from a match score.

Method: the score fraction p = (wins + draws/2) / games gets a Wilson score interval (treating
each game as one Bernoulli trial, draws as half a win); the point estimate and both bounds are
mapped through the logistic Elo curve elo(p) = 400 log10(p / (1 - p)). Wilson keeps the bounds
finite at 0 % or 100 % where the point estimate itself is infinite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054


def elo_from_score(p: float) -> float:
    """Elo difference that predicts expected score p (±inf at 0 and 1)."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return 400.0 * math.log10(p / (1.0 - p))


def wilson_interval(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion p observed over n trials."""
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    lo = 0.0 if p <= 0.0 else max(0.0, centre - half)   # exact ends despite rounding
    hi = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return lo, hi


@dataclass
class EloEstimate:
    """Score fraction and Elo difference of the first player, with 95 % bounds."""

    games: int
    score: float
    score_low: float
    score_high: float
    elo: float
    elo_low: float
    elo_high: float


def estimate(wins: int, draws: int, losses: int) -> EloEstimate:
    """Estimate from the first player's wins, draws and losses."""
    n = wins + draws + losses
    p = (wins + 0.5 * draws) / n if n else 0.5
    lo, hi = wilson_interval(p, n)
    return EloEstimate(n, p, lo, hi, elo_from_score(p), elo_from_score(lo), elo_from_score(hi))


def format_elo(x: float) -> str:
    """Signed Elo figure, 'inf' spelled out."""
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:+.0f}"
