"""Deterministic evaluators for search tests that need more than a uniform policy."""

import numpy as np

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B


class SkewedEvaluator:
    """A policy on a few favourite points (a fixed random order of the actions, each `decay`
    times as likely as the one before), so lines repeat local patterns; a value in
    [-spread, spread) fixed per position by its hash, and a score lead `score_per_value` times
    that value (0: no score, so the score utility stays out of selection)."""

    capabilities = Capabilities()

    def __init__(self, actions: int, decay: float = 0.5, seed: int = 3, spread: float = 0.5,
                 score_per_value: float = 0.0):
        self.weights = decay ** np.random.default_rng(seed).permutation(actions).astype(np.float32)
        self.spread = spread
        self.score_per_value = score_per_value

    def evaluate(self, batch):
        n = batch.count
        policy = batch.legal[:n] * self.weights[None, :]
        policy /= policy.sum(axis=1, keepdims=True)
        keys = batch.boards[:n, B.ROW_HEADER, B.H_HASH]
        value = ((keys % 1000) / 1000.0 * (2 * self.spread) - self.spread).astype(np.float32)
        return Evaluation(policy.astype(np.float32), value, value * self.score_per_value, None)
