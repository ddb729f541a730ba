"""rootInfo's `thisHash` and `symHash`: 128-bit hashes of the analysed position, written as
KataGo writes its (32 upper-case hex digits).

KataGo hashes what makes two positions the same for its search: the stones, the side to move
and the point simple ko forbids (its situation hash with simple ko); `symHash` is the least of
the hashes of the board's eight symmetric images, so a position and its mirror images share
it. Our numbers are not KataGo's (its Zobrist keys are its own) but behave alike, and they are
the same in every run and process: a BLAKE2 digest of the position drawn as a grid, not
Python's salted `hash`. The grid holds the board's shape too, so a transposed rectangular
board is an image of the same position, as it is in KataGo's.
"""

import hashlib

import numpy as np

from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import xy_from_point

KO = 3  # the grid's mark of the point simple ko forbids (0 empty, BLACK 1, WHITE 2)


def position_grid(width: int, height: int, stones: dict[int, int],
                  ko_point: int | None) -> np.ndarray:
    """[H, W] the stones (BLACK, WHITE) and the forbidden ko point (KO) by row from the top."""
    grid = np.zeros((height, width), np.uint8)
    for point, color in stones.items():
        x, y = xy_from_point(point, width)
        grid[y, x] = color
    if ko_point is not None:
        x, y = xy_from_point(ko_point, width)
        grid[y, x] = KO
    return grid


def symmetric_images(grid: np.ndarray) -> list[np.ndarray]:
    """The grid under the eight symmetries of the square (flip rows, flip columns,
    transpose), the identity first."""
    images = []
    for transpose in (False, True):
        g = grid.T if transpose else grid
        for flip_rows in (False, True):
            for flip_columns in (False, True):
                images.append(g[::-1 if flip_rows else 1, ::-1 if flip_columns else 1])
    return images


def grid_hash(grid: np.ndarray, to_move: int) -> str:
    """32 upper-case hex digits of the grid (shape included) with `to_move` to play."""
    if to_move not in (BLACK, WHITE):
        raise ValueError(f"no side to move: {to_move}")
    h, w = grid.shape
    digest = hashlib.blake2b(bytes([h, w, to_move]) + np.ascontiguousarray(grid).tobytes(),
                             digest_size=16, person=b"dosaku-sithash")
    return digest.hexdigest().upper()


def position_hashes(width: int, height: int, stones: dict[int, int], to_move: int,
                    ko_point: int | None) -> tuple[str, str]:
    """(thisHash, symHash) of the position: `stones` by point, `to_move` to play, `ko_point`
    the point simple ko forbids it (None when none)."""
    images = symmetric_images(position_grid(width, height, stones, ko_point))
    hashes = [grid_hash(g, to_move) for g in images]
    return hashes[0], min(hashes)
