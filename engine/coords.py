"""The one place that converts between GTP vertices, board points and network actions.

vertex: GTP text, column letter A-Z without I, row 1 at the bottom ("D4", "pass").
point:  index in the padded board array (see engine/board.py).
action: network index y * W + x with y = 0 the top row; pass = W * H.
"""

from engine.constants import PASS_POINT

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def point_from_xy(x: int, y: int, width: int) -> int:
    """Point of column x, row y (y = 0 top)."""
    return (y + 1) * (width + 1) + x + 1


def xy_from_point(point: int, width: int) -> tuple[int, int]:
    """(x, y) of an on-board point (y = 0 top)."""
    stride = width + 1
    return point % stride - 1, point // stride - 1


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


def action_from_point(point: int, width: int, height: int) -> int:
    """Network action of a point (pass -> W * H)."""
    if point == PASS_POINT:
        return width * height
    x, y = xy_from_point(point, width)
    return y * width + x


def point_from_action(action: int, width: int, height: int) -> int:
    """Point of a network action."""
    if action == width * height:
        return PASS_POINT
    return point_from_xy(action % width, action // width, width)
