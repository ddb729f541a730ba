"""Test helpers: ASCII diagrams, and a full comparison of an engine board with the reference."""

import numpy as np

from engine import board as B
from engine.constants import BLACK, EMPTY, NULL_POINT, WHITE
from engine.coords import point_from_xy
from tests.chains import chain_liberties, chain_size
from tests.reference_rules import RefBoard

STONE_CHARS = {"X": BLACK, "O": WHITE, ".": EMPTY, "+": EMPTY}


def parse_diagram(text):
    """Rows of tokens (X black, O white, . or + empty, a lowercase letter = named empty point).

    Returns (width, height, stones {(x, y): colour}, marks {letter: (x, y)}); y = 0 is the top row.
    """
    rows = [line.split() for line in text.strip().splitlines() if line.strip()]
    height, width = len(rows), len(rows[0])
    stones, marks = {}, {}
    for y, row in enumerate(rows):
        assert len(row) == width, f"ragged diagram row {y}"
        for x, tok in enumerate(row):
            if tok in STONE_CHARS:
                if STONE_CHARS[tok] != EMPTY:
                    stones[(x, y)] = STONE_CHARS[tok]
            else:
                assert tok.isalpha() and tok.islower() and tok not in marks, tok
                marks[tok] = (x, y)
    return width, height, stones, marks


def ref_from_diagram(text):
    width, height, stones, marks = parse_diagram(text)
    ref = RefBoard(width, height)
    for (x, y), c in stones.items():
        ref.grid[y][x] = c
    return ref, marks


def engine_board_from_grid(grid):
    """Engine board with the stones of a 2-D grid, placed without captures (asserted)."""
    height, width = len(grid), len(grid[0])
    b = B.new_board(width, height)
    for y in range(height):
        for x in range(width):
            if grid[y][x] != EMPTY:
                assert B.play_unchecked(b, point_from_xy(x, y, width), grid[y][x]) == 0
    # placing stones one by one may set a ko point; a diagram position has none
    b[B.ROW_HEADER, B.H_KO_POINT] = NULL_POINT
    b[B.ROW_HEADER, B.H_PRISONERS + BLACK] = 0
    b[B.ROW_HEADER, B.H_PRISONERS + WHITE] = 0
    return b


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
    w = int(b[B.ROW_HEADER, B.H_WIDTH])
    return ((p % (w + 1) - 1, p // (w + 1) - 1), int(b[B.ROW_HEADER, B.H_KO_COLOR]))
