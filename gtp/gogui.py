"""GoGui analyze-command answers: the menu and the board/point-list text formats.

GoGui reads `gogui-analyze_commands` as lines `type/Label/command`; it replaces `%m` by the
colour to move (`b`/`w`) before sending the command. Answer formats (docs/gtp.md B9, GoGui's
GtpUtil): a `dboard` is one line per board row, top row first, W numbers each (positive shown
black, negative white); `pspairs` is `point text point text ...`; a `var` is a move list in
which `b`/`w` words set the colour.
"""

from engine.constants import BLACK, PASS_POINT, opponent
from engine.coords import format_vertex

ANALYZE_COMMANDS = (
    "dboard/Policy/dosaku-policy %m",
    "dboard/Ownership/dosaku-ownership",
    "pspairs/Visits/dosaku-visits %m",
    "var/Principal Variation/dosaku-pv %m",
    "plist/Dead Stones/final_status_list dead",
)


def double_board(values, width: int, height: int, fmt: str = "%.3f") -> str:
    """W*H numbers (row-major from the top-left) as GoGui's dboard text.

    Starts with a newline so the rows line up below the `=`; GoGui skips empty lines.
    """
    flat = [float(v) + 0.0 for v in values[:width * height]]  # + 0.0: no "-0.000"
    rows = [" ".join(fmt % v for v in flat[y * width:(y + 1) * width]) for y in range(height)]
    return "\n" + "\n".join(rows)


def visit_pairs(moves, width: int, height: int) -> str:
    """`point visits` pairs of the searched moves, most visited first (GoGui cannot show pass)."""
    ranked = sorted((m for m in moves if m.visits > 0 and m.point != PASS_POINT),
                    key=lambda m: -m.visits)
    return " ".join(f"{format_vertex(m.point, width, height)} {m.visits}" for m in ranked)


def variation(points, first: int, width: int, height: int) -> str:
    """A move sequence with every colour written out: `b D4 w E5 ...`, starting with `first`."""
    words = []
    color = first
    for p in points:
        words.append(("b " if color == BLACK else "w ") + format_vertex(p, width, height))
        color = opponent(color)
    return " ".join(words)

