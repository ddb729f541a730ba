"""Benson area maps against KataGo's unit-test expectations (testboardarea.cpp), bit for bit."""

import numpy as np
import pytest

from dosaku.engine.rules.area import calculate_area, independent_life_area
from dosaku.engine.rules.constants import BLACK, WHITE
from tests.boards import board_from_diagram, katago_board_cases, points_xy

CASES = katago_board_cases()
CHAR = {0: ".", BLACK: "X", WHITE: "O"}


def area_rows(b, result):
    rows = []
    for x, _, p in points_xy(b):
        if x == 0:
            rows.append("")
        rows[-1] += CHAR[int(result[p])]
    return rows


def off_board_is_empty(b, result):
    on = np.zeros(b.shape[1], dtype=bool)
    on[[p for _, _, p in points_xy(b)]] = True
    return not result[~on].any()


@pytest.mark.parametrize("case", CASES["area"], ids=[c["name"] for c in CASES["area"]])
def test_katago_calculate_area(case):
    safe = (False, True, True, True)
    unsafe = (False, False, True, True)
    stones = (False, False, False, True)
    got = []
    for spec in case["boards"]:
        b = board_from_diagram(spec["rows"])
        before = b.copy()
        result = np.zeros(b.shape[1], dtype=np.int64)
        for mode in range(8):
            suicide = mode % 2 == 1
            calculate_area(b, result, stones[mode // 2], safe[mode // 2], unsafe[mode // 2],
                           suicide)
            got.append(f"Safe big territories {int(safe[mode // 2])} Unsafe big territories "
                       f"{int(unsafe[mode // 2])} Non pass alive stones {int(stones[mode // 2])} "
                       f"Suicide {int(suicide)}")
            got += area_rows(b, result)
            assert off_board_is_empty(b, result)
        assert np.array_equal(b, before)
    assert got == case["expected"]


@pytest.mark.parametrize("case", CASES["independent_life"],
                         ids=[c["name"] for c in CASES["independent_life"]])
def test_katago_independent_life_area(case):
    territories = (False, True, False, True)
    keep_stones = (False, False, True, True)
    got = []
    for spec in case["boards"]:
        b = board_from_diagram(spec["rows"])
        result = np.zeros(b.shape[1], dtype=np.int64)
        for mode in range(8):
            suicide = mode % 2 == 1
            count = independent_life_area(b, result, territories[mode // 2], keep_stones[mode // 2],
                                          suicide)
            got.append(f"Keep Territories {int(territories[mode // 2])} Keep Stones "
                       f"{int(keep_stones[mode // 2])} Suicide {int(suicide)}")
            got.append(f"whiteMinusBlackIndependentLifeRegionCount {count}")
            got += area_rows(b, result)
            assert off_board_is_empty(b, result)
    assert got == case["expected"]


def test_single_stone_owns_the_whole_board():
    rows = [".....", ".....", "..x..", ".....", "....."]
    b = board_from_diagram(rows)
    result = np.zeros(b.shape[1], dtype=np.int64)
    calculate_area(b, result, True, True, True, False)
    assert area_rows(b, result) == ["XXXXX"] * 5
    calculate_area(b, result, False, True, False, False)
    assert area_rows(b, result) == ["....."] * 5
