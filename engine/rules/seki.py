"""Seki: chains that live without two eyes because neither side can fill their shared liberties.

A seki region is an empty region bordered by both colours where no move is worth playing for
either side: every move there is illegal (suicide) or a self-atari that captures nothing, so
whoever fills a liberty first loses the chain. Dame between living groups fail the test (a
move there leaves the mover's chain with two or more liberties), and so does a region next to
a chain in atari (the capture is a useful move). The chains bordering a seki region are in seki.
"""

import numpy as np

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, EMPTY, MOVE_OK, WHITE
from dosaku.engine.rules.game import GameState, board_with_stones


def seki_chains(b: np.ndarray, suicide: bool) -> list[list[int]]:
    """The chains (lists of stone points) in seki on board `b`, each once."""
    stride = int(b[B.ROW_HEADER, B.H_STRIDE])
    col = b[B.ROW_COLOR]
    seen = np.zeros(b.shape[1], np.bool_)
    heads: set[int] = set()
    for p0 in _empty_points(b):
        if seen[p0]:
            continue
        region = _region(col, p0, stride, seen)
        border = {q for p in region for q in (p - stride, p - 1, p + 1, p + stride)
                  if col[q] in (BLACK, WHITE)}
        if {int(col[q]) for q in border} != {BLACK, WHITE}:
            continue
        if any(_worth_playing(b, p, c, suicide) for p in region for c in (BLACK, WHITE)):
            continue
        heads.update(int(b[B.ROW_HEAD, q]) for q in border)
    return [_chain(b, h) for h in sorted(heads)]


def seki_stones(game: GameState, dead) -> list[int]:
    """Points of living stones in seki: seki on the board once the `dead` stones are gone."""
    dead = set(dead)
    col = game.board[B.ROW_COLOR]
    black, white = ([int(p) for p in np.flatnonzero(col == color) if p not in dead]
                    for color in (BLACK, WHITE))
    alive = board_with_stones(game.width, game.height, black, white)
    assert alive is not None  # taking stones off only adds liberties
    return sorted(p for chain in seki_chains(alive, game.rules.suicide) for p in chain)


def _empty_points(b: np.ndarray) -> list[int]:
    return sorted(int(p) for p in b[B.ROW_EMPTY, :int(b[B.ROW_HEADER, B.H_NUM_EMPTY])])


def _region(col: np.ndarray, p0: int, stride: int, seen: np.ndarray) -> list[int]:
    """The empty points connected to p0 (marked in `seen`)."""
    seen[p0] = True
    region = [p0]
    i = 0
    while i < len(region):
        p = region[i]
        i += 1
        for q in (p - stride, p - 1, p + 1, p + stride):
            if col[q] == EMPTY and not seen[q]:
                seen[q] = True
                region.append(q)
    return region


def _worth_playing(b: np.ndarray, p: int, color: int, suicide: bool) -> bool:
    """Whether `color` at p is legal and captures or leaves its chain two liberties or more."""
    if B.move_error(b, p, color, suicide) != MOVE_OK:
        return False
    trial = b.copy()
    if B.play_unchecked(trial, p, color) > 0:
        return True
    return trial[B.ROW_COLOR, p] == color and trial[B.ROW_LIBS, trial[B.ROW_HEAD, p]] >= 2


def _chain(b: np.ndarray, head: int) -> list[int]:
    stones = [head]
    s = int(b[B.ROW_NEXT, head])
    while s != head:
        stones.append(s)
        s = int(b[B.ROW_NEXT, s])
    return sorted(stones)
