"""Test helper: boards from text diagrams (x/X black, o/O white, . empty; row 0 = top)."""

import json
from pathlib import Path

import numpy as np

from engine import board as B
from engine.constants import BLACK, EMPTY, WHITE
from engine.coords import point_from_xy
from tests.boardcheck import engine_board_from_grid

DATA = Path(__file__).resolve().parent / "data"


def board_from_rows(rows: list[str]) -> np.ndarray:
    """A board with these stones and no ko point (stones are placed one by one, no captures)."""
    return engine_board_from_grid([[{"x": BLACK, "o": WHITE}.get(ch.lower(), EMPTY) for ch in row]
                                   for row in rows])


def points_xy(b: np.ndarray):
    """(x, y, point) for every on-board point in row-major order."""
    w, h = int(b[B.ROW_HEADER, B.H_WIDTH]), int(b[B.ROW_HEADER, B.H_HEIGHT])
    for y in range(h):
        for x in range(w):
            yield x, y, point_from_xy(x, y, w)


def katago_board_cases() -> dict:
    """KataGo's own ladder and area unit-test expectations (tests/data/katago_board_cases.json)."""
    return json.loads((DATA / "katago_board_cases.json").read_text())
