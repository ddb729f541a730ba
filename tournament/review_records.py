"""What a game review reads and keeps: the game as the engine replays it, the engine's view of
each position and the mistakes found (tournament/review.py makes them, review_output.py
writes them out)."""

from __future__ import annotations

from dataclasses import dataclass

from sgfmill import sgf

from dosaku.engine.rules.coords import format_vertex


@dataclass
class Game:
    """What the engine needs of an SGF game: board, komi, rules, set-up stones, main line."""
    sgf: sgf.Sgf_game
    size: int
    komi: float
    rules: str
    black: list[int]  # set-up (handicap) stones on the root
    white: list[int]
    first: int  # colour to move after the set-up
    moves: list[tuple[int, int]]  # (colour, point) of the main line

    def vertex(self, point: int) -> str:
        return format_vertex(point, self.size, self.size)


@dataclass
class Position:
    """The engine's view of one position, from Black's side."""
    to_move: str  # "B" or "W"
    visits: int
    winrate: float  # Black's winrate 0..1
    score: float  # Black's score lead
    best: str  # best move (vertex)
    pv: list[str]  # best line, starting with `best`


@dataclass
class Mistake:
    move: int  # 1-based move number
    color: str  # "B" or "W"
    vertex: str
    loss: float  # mover's winrate before minus after (0..1)
    score_loss: float  # mover's score lead before minus after
    best: str
