"""Ladder search against KataGo's unit-test expectations (testboardbasic.cpp), bit for bit."""

import numpy as np
import pytest

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import EMPTY
from dosaku.engine.rules.ladder import (
    ladder_captured,
    ladder_captured_attacker_first,
    new_ladder_scratch,
)
from tests.boards import board_from_diagram, katago_board_cases, points_xy

CASES = katago_board_cases()["ladder"]


def ladder_map(b, one_liberty):
    """KataGo's printout: per stone 0/1, '.' for empty points."""
    w, h = int(b[B.ROW_HEADER, B.H_WIDTH]), int(b[B.ROW_HEADER, B.H_HEIGHT])
    stack, buf = new_ladder_scratch(w, h)
    moves = np.zeros(2, dtype=np.int64)
    rows = []
    for x, _, p in points_xy(b):
        if x == 0:
            rows.append("")
        if b[B.ROW_COLOR, p] == EMPTY:
            rows[-1] += "."
        elif one_liberty:
            rows[-1] += str(int(ladder_captured(b, p, True, stack, buf)))
        else:
            rows[-1] += str(int(ladder_captured_attacker_first(b, p, stack, buf, moves) > 0))
    return rows


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_katago_ladder_expectations(case):
    got = []
    for spec in case["boards"]:
        b = board_from_diagram(spec["rows"])
        before = b.copy()
        got += ladder_map(b, case["name"] == "Ladders 1 Lib")
        # The search leaves the board as it found it (scratch marks aside).
        keep = [r for r in range(B.NUM_ROWS) if r != B.ROW_MARK]
        assert np.array_equal(b[keep, 1:], before[keep, 1:])
    assert got == case["expected"]
