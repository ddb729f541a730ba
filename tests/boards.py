"""Test helpers for boards: the one diagram dialect of the tests, boards and games built from
diagrams, and a full comparison of an engine board with the slow reference (reference_rules).

A diagram is rows of points, top row first (y = 0): X or x black, O or o white, . or + (or
KataGo's `) empty, any other lowercase letter names an empty point. Points may be separated by
spaces ("X . O") or not ("X.O"), so KataGo's compact rows (tests/data/katago_board_cases.json)
read the same.
"""

import json
from pathlib import Path

import numpy as np

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, EMPTY, MOVE_OK, NULL_POINT, WHITE
from dosaku.engine.rules.coords import parse_vertex, point_from_xy, xy_from_point
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from tests.chains import chain_liberties, chain_size

DATA = Path(__file__).resolve().parent / "data"
STONES = {"X": BLACK, "x": BLACK, "O": WHITE, "o": WHITE, ".": EMPTY, "+": EMPTY, "`": EMPTY}


def parse_diagram(diagram: str | list[str]):
    """(width, height, stones {(x, y): colour} in reading order, marks {letter: (x, y)}).

    `diagram` is one text or a list of row strings."""
    lines = diagram.splitlines() if isinstance(diagram, str) else diagram
    rows = [row for row in ([ch for ch in line if not ch.isspace()] for line in lines) if row]
    height, width = len(rows), len(rows[0])
    stones, marks = {}, {}
    for y, row in enumerate(rows):
        assert len(row) == width, f"ragged diagram row {y}"
        for x, tok in enumerate(row):
            if tok in STONES:
                if STONES[tok] != EMPTY:
                    stones[(x, y)] = STONES[tok]
            else:
                assert tok.isalpha() and tok.islower() and tok not in marks, tok
                marks[tok] = (x, y)
    return width, height, stones, marks


def board_from_diagram(diagram: str | list[str]) -> np.ndarray:
    """An engine board with the diagram's stones, placed one by one without captures
    (asserted); no ko point and no prisoners, as in a set-up position."""
    width, height, stones, _ = parse_diagram(diagram)
    b = B.new_board(width, height)
    for (x, y), color in stones.items():
        assert B.play_unchecked(b, point_from_xy(x, y, width), color) == 0
    b[B.ROW_HEADER, B.H_KO_POINT] = NULL_POINT
    b[B.ROW_HEADER, B.H_PRISONERS + BLACK] = 0
    b[B.ROW_HEADER, B.H_PRISONERS + WHITE] = 0
    return b


def game_from_diagram(diagram: str, to_move: int, komi: float = 0.5,
                      rules=PRESETS["tromp-taylor"]) -> GameState:
    """A GameState whose moves are the diagram's stones in reading order (each legal), with
    `to_move` to play."""
    width, height, stones, _ = parse_diagram(diagram)
    g = GameState(width, height, komi, rules)
    for (x, y), color in stones.items():
        assert g.play(color, point_from_xy(x, y, width)) == MOVE_OK
    g.to_move = to_move
    return g


def vertex(g: GameState, text: str) -> int:
    """The point of a GTP vertex on g's board."""
    return parse_vertex(text, g.width, g.height)


def points_xy(b: np.ndarray):
    """(x, y, point) for every on-board point in row-major order."""
    w, h = int(b[B.ROW_HEADER, B.H_WIDTH]), int(b[B.ROW_HEADER, B.H_HEIGHT])
    for y in range(h):
        for x in range(w):
            yield x, y, point_from_xy(x, y, w)


def katago_board_cases() -> dict:
    """KataGo's own ladder and area unit-test expectations (tests/data/katago_board_cases.json)."""
    return json.loads((DATA / "katago_board_cases.json").read_text())


def assert_board_matches(b, ref):
    """Colours, chains (heads, rings, sizes, liberties), empty list and hash of b agree with ref."""
    w, h = ref.width, ref.height
    assert b[B.ROW_HEADER, B.H_WIDTH] == w and b[B.ROW_HEADER, B.H_HEIGHT] == h
    col = b[B.ROW_COLOR]
    expect_hash = 0
    empties = set()
    seen = set()
    for y in range(h):
        for x in range(w):
            p = point_from_xy(x, y, w)
            c = ref.get(x, y)
            around = [ref.get(*q) for q in ref.neighbours(x, y)]
            nbr = sum(1 << (B.NBR_BITS * v) for v in around)
            assert b[B.ROW_NBR, p] == nbr, f"neighbour counts at {(x, y)}"
            assert col[p] == c, f"colour at {(x, y)}: engine {col[p]} reference {c}"
            if c == EMPTY:
                empties.add(p)
                assert b[B.ROW_HEAD, p] == NULL_POINT, f"stale chain head at empty {(x, y)}"
                continue
            expect_hash ^= int(B.ZOBRIST[c, p])
            if (x, y) in seen:
                continue
            stones = ref.chain(x, y)
            seen |= stones
            libs = len(ref.liberties(stones))
            pts = {point_from_xy(sx, sy, w) for sx, sy in stones}
            head = b[B.ROW_HEAD, p]
            assert all(b[B.ROW_HEAD, q] == head for q in pts), f"heads of chain at {(x, y)}"
            assert head in pts
            ring = set()
            s = head
            for _ in range(len(pts) + 1):
                ring.add(int(s))
                s = b[B.ROW_NEXT, s]
                if s == head:
                    break
            assert s == head and ring == pts, f"chain ring at {(x, y)}"
            assert chain_size(b, p) == len(pts), f"size at {(x, y)}"
            assert chain_liberties(b, p) == libs, \
                f"liberties at {(x, y)}: engine {chain_liberties(b, p)} reference {libs}"
    n = int(b[B.ROW_HEADER, B.H_NUM_EMPTY])
    listed = [int(v) for v in b[B.ROW_EMPTY, :n]]
    assert sorted(listed) == sorted(empties), "empty-point list"
    assert all(b[B.ROW_EMPTY_POS, p] == i for i, p in enumerate(listed))
    got_hash = int(b[B.ROW_HEADER, B.H_HASH])
    assert got_hash == np.int64(expect_hash), "incremental hash differs from recomputed hash"


def ko_of(b):
    """The engine's simple-ko ban as ((x, y), colour) or None."""
    p = int(b[B.ROW_HEADER, B.H_KO_POINT])
    if p == NULL_POINT:
        return None
    return xy_from_point(p, int(b[B.ROW_HEADER, B.H_WIDTH])), int(b[B.ROW_HEADER, B.H_KO_COLOR])
