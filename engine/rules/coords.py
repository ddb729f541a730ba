"""The one place that converts between GTP vertices, SGF coordinates, board points, (x, y) and
network actions.

vertex: GTP text, column letter A-Z without I, row 1 at the bottom ("D4", "pass").
point:  index in the padded board array (see engine/rules/board.py): (y + 1) * (W + 1) + x + 1.
xy:     column x from the left, row y from the top (0-based).
action: network index y * W + x; pass = W * H.
sgf:    SGF text, column letter then row letter, "a" = left / top ("dp"; "" for a pass);
        sgfmill's (row, col) pair has row 0 at the bottom (None for a pass).

The numeric helpers are plain Python, and engine/rules/board.py registers them with numba
(`register_jitable`), so kernels call these same functions. This module itself imports no
numba: the GTP front-end uses it and must answer before numba (a third of a second) is loaded.
"""

from dosaku.engine.rules.constants import PASS_POINT

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
SGF_LETTERS = "abcdefghijklmnopqrstuvwxy"


def point_from_xy(x: int, y: int, width: int) -> int:
    """Point of column x, row y (y = 0 top)."""
    return (y + 1) * (width + 1) + x + 1


def xy_from_point(point: int, width: int) -> tuple[int, int]:
    """(x, y) of an on-board point (y = 0 top)."""
    stride = width + 1
    return point % stride - 1, point // stride - 1


def action_from_xy(x: int, y: int, width: int) -> int:
    """Network action of column x, row y (y = 0 top)."""
    return y * width + x


def action_from_point(point: int, width: int, height: int) -> int:
    """Network action of a point (pass -> W * H)."""
    if point == PASS_POINT:
        return width * height
    x, y = xy_from_point(point, width)
    return action_from_xy(x, y, width)


def point_from_action(action: int, width: int, height: int) -> int:
    """Point of a network action (W * H -> PASS_POINT)."""
    if action == width * height:
        return PASS_POINT
    return point_from_xy(action % width, action // width, width)


def neighbours(point: int, width: int) -> tuple[int, int, int, int]:
    """The four orthogonal neighbours of a point (off-board ones are wall points)."""
    stride = width + 1
    return point - stride, point - 1, point + 1, point + stride


JITABLE = (point_from_xy, xy_from_point, action_from_xy, action_from_point, point_from_action)
# ^ the helpers numba kernels call (engine/rules/board.py registers them)


def parse_vertex(text: str, width: int, height: int) -> int | None:
    """Point of a GTP vertex, PASS_POINT for "pass", None if malformed or off the board."""
    t = text.strip().upper()
    if t == "PASS":
        return PASS_POINT
    if len(t) < 2 or t[0] not in COLUMNS or not t[1:].isdigit():
        return None
    x = COLUMNS.index(t[0])
    row = int(t[1:])
    if x >= width or not 1 <= row <= height:
        return None
    return point_from_xy(x, height - row, width)


def format_vertex(point: int, width: int, height: int) -> str:
    """GTP vertex of a point ("pass" for PASS_POINT)."""
    if point == PASS_POINT:
        return "pass"
    x, y = xy_from_point(point, width)
    return f"{COLUMNS[x]}{height - y}"


def sgf_text(point: int, width: int) -> str:
    """SGF coordinate of a point ("" for PASS_POINT)."""
    if point == PASS_POINT:
        return ""
    x, y = xy_from_point(point, width)
    return SGF_LETTERS[x] + SGF_LETTERS[y]


def point_from_sgfmill(move: tuple[int, int] | None, size: int) -> int:
    """Point of an sgfmill (row, col) move on a size x size board; PASS_POINT for None."""
    if move is None:
        return PASS_POINT
    row, col = move
    return point_from_xy(col, size - 1 - row, size)


def sgfmill_from_point(point: int, size: int) -> tuple[int, int] | None:
    """sgfmill (row, col) of a point on a size x size board; None for PASS_POINT."""
    if point == PASS_POINT:
        return None
    x, y = xy_from_point(point, size)
    return size - 1 - y, x
