"""Engine facade: the only object the GTP layer talks to.

It owns the GameState and the move generator. Every game change goes through here so the
search tree can follow it (tree reuse after play/genmove, reset after anything else).
"""

import threading
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from engine import board as B
from engine.constants import PASS_POINT
from engine.game import GameState
from engine.rules import PRESETS, Rules

RESIGN = "resign"


@dataclass
class MoveInfo:
    """Search statistics of one candidate move, from the side to move's view."""
    point: int
    visits: int
    winrate: float  # 0..1
    prior: float  # 0..1
    lcb: float  # lower confidence bound of the winrate, may leave 0..1
    score_lead: float = 0.0  # points
    pv: list[int] = field(default_factory=list)  # principal variation, starting with `point`


@dataclass
class AnalysisSnapshot:
    """What an analysis report shows at one moment: candidates best first and the root."""
    moves: list[MoveInfo]
    root_visits: int
    root_winrate: float
    root_score_lead: float
    ownership: np.ndarray | None = None  # [W*H] row-major from the top-left, side to move's view


@dataclass
class TimeSettings:
    """The clock as GTP told it (seconds); main_time < 0 means no time limit."""
    main_time: float = -1.0
    byo_time: float = 0.0
    byo_stones: int = 0
    byo_periods: int = 0  # >0 for Japanese byo-yomi (kgs-time_settings byoyomi)


class Engine:
    """Game record + move generation. Until the search lands, genmove uses SimplePolicy."""

    def __init__(self, width: int = 19, height: int = 19, komi: float = 7.5,
                 rules: Rules = PRESETS["chinese"], seed: int = 0):
        self.game = GameState(width, height, komi, rules)
        self.time = TimeSettings()
        self.time_left: dict[int, tuple[float, int]] = {}
        self._rng = np.random.default_rng(seed)

    # ---- game changes (each one keeps or resets the search tree) ----------------------------
    def set_size(self, width: int, height: int) -> None:
        self.game.resize(width, height)

    def clear(self) -> None:
        self.game.clear()

    def set_komi(self, komi: float) -> None:
        self.game.komi = komi

    def set_rules(self, rules: Rules) -> None:
        self.game.rules = rules

    def play(self, color: int, point: int) -> int:
        """board.MOVE_OK or the reason the move is illegal (nothing changes then)."""
        return self.game.play(color, point)

    def undo(self) -> bool:
        return self.game.undo()

    def place_handicap(self, points: list[int]) -> bool:
        return self.game.place_handicap(points)

    def clear_cache(self) -> None:
        """Forget cached evaluations and the search tree."""

    # ---- move generation -------------------------------------------------------------------
    def genmove(self, color: int, commit: bool = True,
                on_update: Callable[[AnalysisSnapshot], None] | None = None,
                interval: float = 1.0) -> int | str:
        """Choose a move for colour (a point, or RESIGN) and play it unless commit is False."""
        point = self._simple_policy(color)
        if commit:
            self.game.play(color, point)
        return point

    def analyze(self, color: int, on_update: Callable[[AnalysisSnapshot], None],
                interval: float, stop: threading.Event) -> None:
        """Report analysis every `interval` seconds until `stop` is set."""
        legal = np.flatnonzero(self.game.legal_mask(color))
        prior = 1.0 / len(legal)
        moves = [MoveInfo(int(B.point_of_action(self.game.board, a)), 0, 0.5, prior, 0.5)
                 for a in legal]
        while True:
            on_update(AnalysisSnapshot(moves, 0, 0.5, 0.0))
            if stop.wait(interval):
                return

    def dead_stones(self) -> list[int]:
        """Points of stones judged dead at the end of the game (none known yet)."""
        return []

    def _simple_policy(self, color: int) -> int:
        """SimplePolicy: a uniformly random legal move that fills no own eye, else pass."""
        mask = self.game.legal_mask(color)
        candidates = [int(B.point_of_action(self.game.board, a)) for a in np.flatnonzero(mask[:-1])]
        candidates = [p for p in candidates if not B.is_eye_like(self.game.board, p, color)]
        if not candidates:
            return PASS_POINT
        return candidates[int(self._rng.integers(len(candidates)))]
