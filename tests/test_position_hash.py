"""rootInfo's thisHash and symHash (kata_analysis/position_hash.py) from an Engine's position,
as the analysis workers compute them: KataGo's shape, the same position the same hash whatever
the move order and whatever the process, the eight mirror images one symHash."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import UniformEvaluator
from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.kata_analysis.position_hash import position_hashes

ROOT = Path(__file__).resolve().parents[1]
STONES = "C3 E5 G7 C7 D4"  # no symmetry of its own


def engine_after(moves: list[tuple[int, str]], width: int = 9, height: int = 9,
                 to_move: int | None = None) -> Engine:
    e = Engine(width, height, evaluator=UniformEvaluator())
    for color, v in moves:
        assert e.play(color, parse_vertex(v, width, height)) == MOVE_OK, v
    if to_move is not None and to_move != e.to_move:
        assert e.play(e.to_move, parse_vertex("pass", width, height)) == MOVE_OK
    return e


def hashes(e: Engine) -> tuple[str, str]:
    w, h = e.size
    return position_hashes(w, h, e.stones(), e.to_move, e.ko_point)


def alternate(vertices: str) -> list[tuple[int, str]]:
    return [(BLACK if k % 2 == 0 else WHITE, v) for k, v in enumerate(vertices.split())]


def image(vertex: str, symmetry: int, size: int = 9) -> str:
    """A vertex of a square board under one of the eight symmetries."""
    x, y = "ABCDEFGHJ".index(vertex[0]), int(vertex[1:]) - 1
    if symmetry & 4:
        x, y = y, x
    if symmetry & 1:
        y = size - 1 - y
    if symmetry & 2:
        x = size - 1 - x
    return f"{'ABCDEFGHJ'[x]}{y + 1}"


def test_katagos_shape_32_upper_case_hex_digits():
    this, sym = hashes(engine_after(alternate(STONES)))
    assert re.fullmatch("[0-9A-F]{32}", this) and re.fullmatch("[0-9A-F]{32}", sym)
    assert sym <= this


def test_transposed_move_orders_reach_the_same_hashes():
    one = engine_after(alternate("C3 E5 G7 C7 D4"))
    other = engine_after(alternate("D4 C7 C3 E5 G7"))
    assert hashes(one) == hashes(other)


def test_mirror_images_share_sym_hash_only():
    seen = set()
    syms = set()
    for symmetry in range(8):
        moved = " ".join(image(v, symmetry) for v in STONES.split())
        this, sym = hashes(engine_after(alternate(moved)))
        seen.add(this)
        syms.add(sym)
    assert len(seen) == 8 and len(syms) == 1
    assert syms == seen & syms  # the least image's own hash


def test_a_rectangular_board_and_its_transpose_share_sym_hash():
    wide = engine_after(alternate("B2 F3 C1"), width=7, height=5)
    tall = engine_after(alternate("D6 C2 E5"), width=5, height=7)  # the transpose, flipped
    assert hashes(wide)[1] == hashes(tall)[1] and hashes(wide)[0] != hashes(tall)[0]


def test_the_side_to_move_and_the_ko_ban_count():
    black = engine_after(alternate(STONES), to_move=BLACK)
    white = engine_after(alternate(STONES), to_move=WHITE)
    assert hashes(black)[0] != hashes(white)[0] and hashes(black)[1] != hashes(white)[1]
    # a ko: Black's E5 takes White's D5, and White may not take back at D5 at once
    ko = alternate("C5 E6 D6 E4 D4 F5 A1 D5 E5")
    taken = engine_after(ko)
    assert taken.ko_point == parse_vertex("D5", 9, 9) and taken.to_move == WHITE
    later = engine_after(ko + [(WHITE, "pass"), (BLACK, "pass")])  # the ban is over
    assert later.stones() == taken.stones() and later.to_move == taken.to_move
    assert later.ko_point is None and hashes(later)[0] != hashes(taken)[0]


def test_the_same_in_another_process():
    e = engine_after(alternate(STONES))
    args = (9, 9, e.stones(), e.to_move, e.ko_point)
    code = ("from dosaku.kata_analysis.position_hash import position_hashes;"
            f"print(*position_hashes{args!r})")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, env=dict(os.environ, PYTHONHASHSEED="123"))
    assert tuple(out.stdout.split()) == hashes(e)


@pytest.mark.parametrize("to_move", [0, 3])
def test_no_side_to_move_is_refused(to_move):
    with pytest.raises(ValueError):
        position_hashes(9, 9, {}, to_move, None)
