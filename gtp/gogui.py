"""GoGui analyze-command answers: the menu and the board/point-list text formats.

GoGui reads `gogui-analyze_commands` as lines `type/Label/command`; it replaces `%m` by the
colour to move (`b`/`w`) before sending the command. Answer formats
(docs/gtp.md#gogui-analyze-commands, GoGui's manual, chapter "Analyze Commands"): the boards
(`dboard` numbers, positive shown black, negative white; `sboard` short strings; `cboard` colour
names) are one line per board row, top row first, W words each, `""` for nothing; `pspairs` is
`point text point text ...`; a `var` is a move list in which `b`/`w` words set the colour; a
`gfx` answer is one drawing command a line (`VAR` moves, `LABEL` point-text pairs, `INFLUENCE`
point-number pairs, `TEXT` a status line).
"""

from dosaku.engine.rules.constants import BLACK, PASS_POINT, opponent
from dosaku.engine.rules.coords import format_vertex, point_from_xy

ANALYZE_COMMANDS = (
    "gfx/Search/dosaku-gfx %m",
    "dboard/Policy/dosaku-policy %m",
    "dboard/Ownership/dosaku-ownership",
    "cboard/Territory/dosaku-territory",
    "pspairs/Visits/dosaku-visits %m",
    "sboard/Winrates/dosaku-winrates %m",
    "var/Principal Variation/dosaku-pv %m",
    "plist/Dead Stones/final_status_list dead",
    "string/Final Score/final_score",
    "param/Parameters/dosaku-param",
)
TERRITORY = 0.5  # |ownership| from which a point counts as one side's on the territory board


def double_board(values, width: int, height: int, fmt: str = "%.3f") -> str:
    """W*H numbers (row-major from the top-left) as GoGui's dboard text.

    Starts with a newline so the rows line up below the `=`; GoGui skips empty lines.
    """
    flat = [float(v) + 0.0 for v in values[:width * height]]  # + 0.0: no "-0.000"
    rows = [" ".join(fmt % v for v in flat[y * width:(y + 1) * width]) for y in range(height)]
    return "\n" + "\n".join(rows)


def word_board(words: dict[int, str], width: int, height: int) -> str:
    """A board of words (sboard, cboard): `words` by point, `""` on every other point."""
    rows = [" ".join(words.get(point_from_xy(x, y, width), '""') for x in range(width))
            for y in range(height)]
    return "\n" + "\n".join(rows)


def territory_words(black_ownership, width: int, height: int) -> dict[int, str]:
    """`black`/`white` on the points one side owns at least TERRITORY (row-major input)."""
    words = {}
    for a, v in enumerate(black_ownership[:width * height]):
        if abs(v) >= TERRITORY:
            words[point_from_xy(a % width, a // width, width)] = "black" if v > 0 else "white"
    return words


def winrate_words(moves) -> dict[int, str]:
    """Winrate in whole percent of every searched move (pass has no point to show it on)."""
    return {m.point: str(round(100 * m.winrate)) for m in moves
            if m.visits > 0 and m.point != PASS_POINT}


def search_gfx(snapshot, color: int, black_ownership, width: int, height: int) -> str:
    """One search drawn at once: the best line (VAR), visits on the candidates (LABEL), the
    ownership from Black's view (INFLUENCE) and the winrate and score in the status line."""
    moves = snapshot.moves
    lines = []
    if moves:
        lines.append("VAR " + variation(moves[0].pv or [moves[0].point], color, width, height))
        labels = visit_pairs(moves, width, height)
        if labels:
            lines.append("LABEL " + labels)
    if black_ownership is not None:
        pairs = (f"{format_vertex(point_from_xy(a % width, a // width, width), width, height)} "
                 f"{v + 0.0:.2f}" for a, v in enumerate(black_ownership[:width * height]))
        lines.append("INFLUENCE " + " ".join(pairs))
    side = "Black" if color == BLACK else "White"
    lines.append(f"TEXT {side} to move: winrate {100 * snapshot.root_winrate:.1f}%, "
                 f"score lead {snapshot.root_score_lead:+.1f}, {snapshot.root_visits} visits")
    return "\n".join(lines)


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

