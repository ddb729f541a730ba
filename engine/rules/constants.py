"""Point colours, special points and move results shared by every module.

The board is a padded 1-D array (see engine/rules/board.py). PASS and NULL are points inside the
top wall row, so they are valid indices: numba silently wraps negative indices, so -1 is never
used as a "no point" marker.
"""

EMPTY = 0
BLACK = 1
WHITE = 2
WALL = 3

NULL_POINT = 0
PASS_POINT = 1

MIN_SIZE = 2
MAX_SIZE = 25

# what playing a move gives: MOVE_OK, or why the move is illegal (board.py's kernels give the
# first five, GameState also superko); here, not in board.py, so that GTP reads them before numba
# loads
MOVE_OK = 0
MOVE_OCCUPIED = 1
MOVE_OFF_BOARD = 2
MOVE_KO = 3
MOVE_SUICIDE = 4
MOVE_SUPERKO = 5


def opponent(color: int) -> int:
    """The other colour (BLACK <-> WHITE)."""
    return 3 - color
