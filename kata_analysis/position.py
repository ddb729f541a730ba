"""A query's game replayed on an Engine: the initial stones, then the moves up to a turn.

As KataGo does, the moves may come in any order of colours (two black moves in a row are
fine), and black initial stones with White to play first count as handicap stones. The same
replay checks a query's moves before any of its turns is queued (the error names the first
illegal move) and sets up each turn's search.
"""

from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import format_vertex
from dosaku.kata_analysis.query import Query, QueryError


def set_up(engine, query: Query) -> None:
    """The engine at turn 0 of the query's game; QueryError if the stones are impossible."""
    engine.set_size(query.width, query.height)
    engine.set_rules(query.rules)
    engine.set_komi(query.komi)
    black, white = query.black_stones, query.white_stones
    if black and not white and query.initial_player == WHITE:
        ok = engine.place_handicap(black)
    elif black or white or query.initial_player != BLACK:
        ok = engine.setup(black, white, query.initial_player)
    else:
        ok = True
    if not ok:
        raise QueryError("initialStones", "the initial stones are not a legal position")


def play_to(engine, query: Query, turn: int, start: int = 0) -> None:
    """Play moves start..turn-1 on an engine at turn `start`; QueryError at an illegal one."""
    for k in range(start, turn):
        color, point = query.moves[k]
        if engine.play(color, point) != MOVE_OK:
            vertex = format_vertex(point, query.width, query.height)
            raise QueryError("moves", f"Illegal move {k}: {vertex}")


def check_moves(engine, query: Query) -> None:
    """Replay the whole game once; QueryError for impossible stones or an illegal move."""
    set_up(engine, query)
    play_to(engine, query, len(query.moves))


def at_turn(engine, query: Query, turn: int) -> None:
    """Put the engine at `turn` of a checked query: the side to move is the opponent of the
    last mover (the initial player at turn 0), as KataGo analyses it."""
    set_up(engine, query)
    play_to(engine, query, turn)
