"""The engine's settings as a frozen dataclass (one comment per field), and their defaults.

Objects receive these through their constructors; nothing reads a global config. Every default
that depends on other settings (time per move, limits) is resolved here, so
`EngineConfig(visits=100)` from Python means what `--visits 100` means on the command line. The
search's own settings are engine/search/config.py. The settings table, launch/settings.py, maps
the flags onto both. Importing this module loads nothing heavy (the flag parser reads the
choices before GTP answers).
"""

from dataclasses import dataclass, field

from dosaku.engine.search.config import SearchConfig

DEFAULT_SECONDS = 1.0  # time per move when nothing else limits a move


@dataclass(frozen=True)
class EngineConfig:
    """Limits, move choice and resignation of genmove (the flags that set them:
    launch/settings.py). Self-play's root noise and opening temperature are not genmove's: they
    are training/selfplay_game.py's SelfPlaySettings."""
    search: SearchConfig = field(default_factory=SearchConfig)
    visits: int = 0  # stop when the root has this many visits, reused ones included (0 = none)
    playouts: int = 0  # stop after this many new evaluations in this search (0 = none)
    seconds: float | None = None  # time per move when no clock is set; None = DEFAULT_SECONDS
    #                               unless visits or playouts is set, 0 = no time limit
    fallback_visits: int = 800  # visit limit when nothing else limits a move
    early_stop: bool = True  # stop when no other move can overtake the most visited one, where
    #                          the clock keeps the time saved; a visit or playout limit is
    #                          always spent in full (the visits grow the subtree the next
    #                          move reuses and decide the LCB choice)
    max_seconds: float = 600.0  # hard cap per genmove whatever the clock says
    lag_buffer: float = 0.5  # seconds kept back per move for GTP/network lag
    use_lcb: bool = True  # choose the move with the best lower confidence bound, not most visits
    lcb_stdevs: float = 3.0  # width of that bound in standard errors
    lcb_min_visit_prop: float = 0.15  # only moves with this share of the best visits compete
    katago_choice: bool = False  # choose as KataGo does instead (engine/search/move_choice.py):
    #                              trim visits spent beyond a move's worth, LCB of the utility
    resign_threshold: float = 0.05  # resign if the best winrate stays below this (0 = never)
    resign_consecutive: int = 3  # ... for this many of our moves in a row
    resign_min_move: int = 20  # ... and never before this move number (scaled to board area)
    resign_handicap_moves: int = 20  # extra moves per handicap stone before White may resign
    tree_reuse: bool = True  # keep the subtree of each move played for the next search
    #                          (off: every search starts fresh, KataGo's clearBotBeforeSearch)
    report_reuse: bool = True  # log reused visits to stderr after tree reuse
    report_moves: bool = True  # log one line per genmove: visits, speed, winrate, lead, PV
    ponder: bool = False  # think on the opponent's time after genmove (the GTP server runs it)
    friendly_pass: bool = True  # pass back after the opponent's pass when that keeps the result
    #                             with dead stones removed (engine/friendly_pass.py); off:
    #                             capture them first, for servers without a removal phase
    seed: int = 0  # seed of every random choice (noise, sampling, rollouts, symmetries)

    @property
    def time_per_move(self) -> float:
        """Seconds per move without a clock (0 = no time limit): `seconds` resolved."""
        if self.seconds is None:
            return 0.0 if self.visits or self.playouts else DEFAULT_SECONDS
        return self.seconds

    def move_limits(self, clock_budget: float | None = None) -> tuple[int, int, float]:
        """(visits, playouts, seconds) for one move, 0 = not limited; `clock_budget` is what
        the game clock allows (None without a clock). Something always limits the move."""
        seconds = self.time_per_move if clock_budget is None else clock_budget
        seconds = min(seconds, self.max_seconds)
        visits = self.visits
        if not (visits or self.playouts or seconds):
            visits = self.fallback_visits
        return visits, self.playouts, seconds
