"""Test helper: boards from text diagrams (x/X black, o/O white, . empty; row 0 = top)."""

import json
from pathlib import Path

import numpy as np

from engine import board as B
from engine.constants import BLACK, EMPTY, WHITE

DATA = Path(__file__).resolve().parent / "data"


def board_from_rows(rows: list[str]) -> np.ndarray:
    """A board with these stones and no ko point (stones are placed one by one, no captures)."""
    height, width = len(rows), len(rows[0])
    b = B.new_board(width, height)
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            color = {"x": BLACK, "o": WHITE}.get(ch.lower(), EMPTY)
            if color != EMPTY:
                assert B.play_unchecked(b, (y + 1) * (width + 1) + x + 1, color) == 0
    return b


def points_xy(b: np.ndarray):
    """(x, y, point) for every on-board point in row-major order."""
    w, h = int(b[B.ROW_HEADER, B.H_WIDTH]), int(b[B.ROW_HEADER, B.H_HEIGHT])
    for y in range(h):
        for x in range(w):
            yield x, y, (y + 1) * (w + 1) + x + 1


def katago_board_cases() -> dict:
    """KataGo's own ladder and area unit-test expectations (tests/data/katago_board_cases.json)."""
    return json.loads((DATA / "katago_board_cases.json").read_text())
