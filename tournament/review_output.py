"""What a review writes: comments and best-line variations in the SGF (sgfmill), the
winrate/score graph (matplotlib). Numbers are Black's winrate in percent and Black's score lead
(positive: Black ahead)."""

from __future__ import annotations

from dosaku.engine.rules.constants import BLACK
from dosaku.engine.rules.coords import parse_vertex, sgfmill_from_point
from dosaku.tournament.review_records import Game, Mistake, Position

TAG = "Dosaku review"


def _sgf_move(game: Game, vertex: str):
    """sgfmill (row, col) of a vertex, None for a pass."""
    point = parse_vertex(vertex, game.size, game.size)
    return None if point is None else sgfmill_from_point(point, game.size)


def position_text(pos: Position) -> str:
    return (f"Black winrate {100 * pos.winrate:.1f}%, Black score lead {pos.score:+.1f} "
            f"({pos.visits} visits)")


def _append_comment(node, text: str) -> None:
    old = node.get("C") if node.has_property("C") else ""
    node.set("C", f"{old}\n\n{text}" if old else text)


def mistake_lines(found: dict[str, list[Mistake]], count: int) -> list[str]:
    lines = []
    for color, name in (("B", "Black"), ("W", "White")):
        listed = found[color][:count]
        lines.append(f"{name}'s biggest mistakes:" + ("" if listed else " none"))
        lines += [f"  move {m.move} {m.vertex}: -{100 * m.loss:.1f}% winrate, "
                  f"{-m.score_loss:+.1f} points (best {m.best})" for m in listed]
    return lines


def annotate(game: Game, positions: dict[int, Position], found: dict[str, list[Mistake]],
             visits: int, count: int) -> None:
    """Comment every move node and the root; where the engine preferred another move, add its
    best line as a variation beside the played move."""
    nodes = [n for n in game.sgf.get_main_sequence() if n.get_move()[0] is not None]
    root = game.sgf.get_root()
    _append_comment(root, "\n".join([f"{TAG}, {visits} visits a position.",
                                     "Start: " + position_text(positions[0]),
                                     *mistake_lines(found, count)]))
    for k, node in enumerate(nodes):
        before, after = positions[k], positions[k + 1]
        color = game.moves[k][0]
        sign = 1.0 if color == BLACK else -1.0
        loss = sign * (before.winrate - after.winrate)
        text = [f"{TAG}: {position_text(after)}",
                f"This move: {-100 * loss:+.1f}% winrate for the mover; "
                f"best was {before.best} (line {' '.join(before.pv)})"]
        _append_comment(node, "\n".join(text))
        played = game.vertex(game.moves[k][1])
        if before.best != played:
            _add_line(game, node.parent, before, color)


def _add_line(game: Game, parent, pos: Position, color: int) -> None:
    """The best line as a variation of `parent`, after the played move's node."""
    node = parent
    letter = "b" if color == BLACK else "w"
    for k, vertex in enumerate(pos.pv):
        node = node.new_child()
        node.set_move(letter, _sgf_move(game, vertex))
        if k == 0:
            node.set("C", f"{TAG}: best line, {position_text(pos)} before it")
        letter = "w" if letter == "b" else "b"


def plot(game: Game, positions: dict[int, Position], found: dict[str, list[Mistake]],
         count: int, path: str) -> None:
    """Black's winrate (left axis) and score lead (right axis) after each move, the listed
    mistakes marked, as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = sorted(positions)
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.plot(xs, [100 * positions[i].winrate for i in xs], color="black", label="Black winrate")
    ax.set_ylim(0, 100)
    ax.set_xlabel("move")
    ax.set_ylabel("Black winrate (%)")
    ax.axhline(50, color="gray", linewidth=0.5)
    for color, marker in (("B", "v"), ("W", "^")):
        listed = found[color][:count]
        ax.scatter([m.move for m in listed], [100 * positions[m.move].winrate for m in listed],
                   marker=marker, color="red", zorder=3,
                   label=f"{'Black' if color == 'B' else 'White'} mistakes")
    right = ax.twinx()
    right.plot(xs, [positions[i].score for i in xs], color="tab:blue", linewidth=1,
               label="Black score lead")
    right.set_ylabel("Black score lead (points)")
    handles = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(handles[0] + more[0], handles[1] + more[1], loc="upper left", fontsize="small")
    root = game.sgf.get_root()
    names = [root.get(p) if root.has_property(p) else "?" for p in ("PB", "PW")]
    ax.set_title(f"{names[0]} (B) vs {names[1]} (W), {game.size}x{game.size}")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)
