"""Shared helpers for the search tests: games from ASCII diagrams and fake evaluators."""

import numpy as np

from engine import board as B
from engine.constants import BLACK, WHITE
from engine.coords import parse_vertex
from engine.evaluator import Evaluation
from engine.game import GameState
from engine.rules import PRESETS


def game_from_diagram(diagram: str, to_move: int, komi: float = 0.5,
                      rules=PRESETS["tromp-taylor"]) -> GameState:
    """X = Black, O = White, . = empty; the first row is the top. Stones are set-up moves."""
    rows = [r.split() for r in diagram.strip().splitlines()]
    h, w = len(rows), len(rows[0])
    g = GameState(w, h, komi, rules)
    for y, row in enumerate(rows):
        for x, c in enumerate(row):
            if c in "XO":
                p = (y + 1) * (w + 1) + x + 1
                assert g.play(BLACK if c == "X" else WHITE, p) == B.MOVE_OK
    g.to_move = to_move
    return g


def vertex(g: GameState, text: str) -> int:
    return parse_vertex(text, g.width, g.height)


class CountingEvaluator:
    """Uniform policy, value from a fixed random table per position key; counts positions."""

    def __init__(self):
        self.positions = 0
        self.calls = 0

    def evaluate(self, batch):
        n = batch.count
        self.calls += 1
        self.positions += n
        legal = batch.legal[:n].astype(np.float32)
        policy = legal / legal.sum(axis=1, keepdims=True)
        keys = batch.boards[:n, B.ROW_HEADER, B.H_HASH]
        value = ((keys % 1000) / 1000.0 - 0.5).astype(np.float32)
        return Evaluation(policy, value, np.zeros(n, np.float32), None)
