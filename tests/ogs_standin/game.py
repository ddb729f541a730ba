"""One game on the stand-in: the board (sgfmill's, not the engine's), the moves, both clocks,
and the gamedata OGS sends for it.

Legality is judged here independently of the engine under test: a stone on an empty point,
no suicide, no retaking a simple ko (positional superko is not checked). After two passes
GNU Go, the referee, counts the game (opponent.py).
"""

import time
from dataclasses import dataclass, field

from sgfmill import boards

from tests.ogs_standin.clock import PlayerClock

BOT_ID, OPPONENT_ID = 1001, 2002


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Game:
    """A game between the bot and a scripted opponent, as the stand-in keeps it."""
    game_id: int
    time_control: dict  # OGS's: system, speed and the system's fields
    bot_color: str = "black"
    size: int = 9
    komi: float = 7.0
    moves: list = field(default_factory=list)  # (colour, (x, y) or None for pass, seconds)
    phase: str = "play"
    outcome: str = ""
    winner: int | None = None
    illegal: list = field(default_factory=list)  # what a move broke, if it broke anything

    def __post_init__(self):
        self.board = boards.Board(self.size)
        self.ko = None  # (x, y) the player to move may not take
        self.clocks = {c: PlayerClock(self.time_control) for c in ("black", "white")}
        self.turn_started = time.monotonic()
        self.last_move_ms = now_ms()

    @property
    def to_move(self) -> str:
        return "black" if len(self.moves) % 2 == 0 else "white"

    def player_id(self, color: str) -> int:
        return BOT_ID if color == self.bot_color else OPPONENT_ID

    def play(self, color: str, xy) -> str | None:
        """Make a move (xy in OGS's x from the left, y from the top; None = pass). None if it
        stands, else why not (the game is then over)."""
        if self.phase != "play":
            return "game over"
        if color != self.to_move:
            return f"{color} moved out of turn"
        used = time.monotonic() - self.turn_started
        if not self.clocks[color].charge(used):
            self.finish(self.other(color), "Timeout")
            return f"{color} moved {used:.2f} s into the turn, past the clock"
        why = None if xy is None else self._place(color, xy)
        if why is not None:
            self.illegal.append(why)
            self.finish(self.other(color), "Illegal move")
            return why
        self.moves.append((color, xy, used))
        self.turn_started = time.monotonic()
        self.last_move_ms = now_ms()
        return None

    def _place(self, color: str, xy) -> str | None:
        x, y = xy
        row, col = self.size - 1 - y, x  # sgfmill: row 0 at the bottom
        if not (0 <= x < self.size and 0 <= y < self.size):
            return f"{xy} is off the board"
        if self.board.get(row, col) is not None:
            return f"{color} played on the occupied point {xy}"
        if self.ko == (row, col):
            return f"{color} retook the ko at {xy} at once"
        before = self.board.copy()
        ko = self.board.play(row, col, color[0])
        if self.board.get(row, col) is None:
            self.board = before
            return f"{color} played suicide at {xy}"
        self.ko = ko
        return None

    @staticmethod
    def other(color: str) -> str:
        return "white" if color == "black" else "black"

    def two_passes(self) -> bool:
        return len(self.moves) >= 2 and self.moves[-1][1] is None and self.moves[-2][1] is None

    def finish(self, winner_color: str, outcome: str) -> None:
        self.phase, self.outcome = "finished", outcome
        self.winner = self.player_id(winner_color)

    # ---- what OGS sends ---------------------------------------------------------------------
    def clock_json(self) -> dict:
        players = {"black_player_id": self.player_id("black"),
                   "white_player_id": self.player_id("white")}
        return {"game_id": self.game_id, **players,
                "current_player": self.player_id(self.to_move), "title": "stand-in",
                "last_move": self.last_move_ms, "expiration": self.last_move_ms + 3_600_000,
                "black_time": self.clocks["black"].json(),
                "white_time": self.clocks["white"].json(), "paused_since": None}

    def move_json(self, n: int) -> list:
        _, xy, used = self.moves[n]
        x, y = (-1, -1) if xy is None else xy
        return [x, y, int(used * 1000)]

    def gamedata(self) -> dict:
        players = {c: {"id": self.player_id(c),
                       "username": "dosaku-bot" if c == self.bot_color else "scripted"}
                   for c in ("black", "white")}
        return {"game_id": self.game_id, "game_name": "stand-in game", "phase": self.phase,
                "width": self.size, "height": self.size, "komi": self.komi, "handicap": 0,
                "free_handicap_placement": False, "rules": "chinese", "ranked": False,
                "initial_player": "black", "initial_state": {"black": "", "white": ""},
                "moves": [self.move_json(i) for i in range(len(self.moves))],
                "players": players, "black_player_id": players["black"]["id"],
                "white_player_id": players["white"]["id"], "time_control": self.time_control,
                "clock": self.clock_json(), "winner": self.winner, "outcome": self.outcome,
                "pause_control": {}}
