"""Thin adapter: what the GTP layer reads from or sets on the Engine beyond its methods.

Everything here reaches into `Engine.game` / `Engine.time`; keeping it in one module means the
GTP layer has a single place to change when the Engine grows methods for these (see the report
of the GTP branch). Imports of numba-backed modules stay inside functions so that importing the
GTP layer stays fast (the server must answer `name` within 0.5 s of launch).
"""

from dataclasses import dataclass

from engine.constants import BLACK, WHITE


@dataclass(frozen=True)
class GameRecord:
    """Enough of a game to rebuild it exactly (used to undo a failed loadsgf)."""
    width: int
    height: int
    komi: float
    handicap: tuple[int, ...]
    moves: tuple[tuple[int, int], ...]


def size(engine) -> tuple[int, int]:
    return engine.game.width, engine.game.height


def komi(engine) -> float:
    return engine.game.komi


def rules(engine):
    return engine.game.rules


def to_move(engine) -> int:
    return engine.game.to_move


def moves(engine) -> list[tuple[int, int]]:
    """(colour, point) of every move after the handicap stones, oldest first."""
    return list(engine.game.moves)


def handicap_points(engine) -> list[int]:
    """Handicap stones placed by a handicap command (not part of the move history)."""
    return list(engine.game.handicap_points)


def prisoners(engine, color: int) -> int:
    """Stones captured by `color`."""
    return engine.game.prisoners(color)


def stones(engine) -> dict[int, int]:
    """Colour of every occupied point."""
    from engine import board as B
    w, h = size(engine)
    stride = w + 1
    row = engine.game.board[B.ROW_COLOR]
    out = {}
    for y in range(h):
        for x in range(w):
            p = (y + 1) * stride + x + 1
            if row[p] in (BLACK, WHITE):
                out[p] = int(row[p])
    return out


def color_at(engine, point: int) -> int:
    from engine import board as B
    return int(engine.game.board[B.ROW_COLOR, point])


def chain_of(engine, point: int) -> int:
    """An identifier of the chain through a stone (its head point)."""
    from engine import board as B
    return int(engine.game.board[B.ROW_HEAD, point])


def is_empty(engine) -> bool:
    """No stones, no moves, no handicap: what the handicap commands require."""
    g = engine.game
    return not g.moves and not g.handicap_points and not stones(engine)


def score(engine, dead: list[int]) -> float:
    """Black minus White under the game's rules with `dead` stones removed."""
    import numpy as np
    mask = np.zeros(engine.game.board.shape[1], dtype=np.bool_)
    mask[list(dead)] = True
    return engine.game.score(mask)


def set_time_settings(engine, settings) -> None:
    """Change the clock without touching the game (repeated settings mid-game are normal)."""
    engine.time = settings


def set_time_left(engine, color: int, seconds: float, stones_left: int) -> None:
    engine.time_left[color] = (seconds, stones_left)


def time_settings_class():
    from engine.engine import TimeSettings
    return TimeSettings


def record(engine) -> GameRecord:
    w, h = size(engine)
    return GameRecord(w, h, komi(engine), tuple(handicap_points(engine)), tuple(moves(engine)))


def restore(engine, rec: GameRecord) -> None:
    """Rebuild a recorded game (all its moves were legal when recorded, so replay succeeds)."""
    engine.set_size(rec.width, rec.height)
    engine.set_komi(rec.komi)
    if rec.handicap:
        engine.place_handicap(list(rec.handicap))
    for color, point in rec.moves:
        engine.play(color, point)

