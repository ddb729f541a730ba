"""Engine facade: the only object the GTP layer talks to.

It owns the GameState and the Search. Every game change goes through here so the search tree
can follow it (tree reuse after play/genmove, reset after anything else).
"""

import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from engine import board as B
from engine import timecontrol
from engine.config import EngineConfig
from engine.constants import BLACK, WHITE
from engine.coords import point_from_action
from engine.evaluator import PositionBatch
from engine.game import GameState
from engine.positions import batch_row_from_game
from engine.rollout import RolloutEvaluator, rollout_batch
from engine.rules import PRESETS, Rules
from engine.search import RootStats, Search, SearchLimits

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
    """Game record + tree search. Construct with an evaluator (default: random playouts)."""

    DEAD_OWNERSHIP = 0.3  # a stone is dead when the other colour owns its point at least this
    DEAD_PLAYOUTS = 256  # playouts for dead-stone ownership when the evaluator gives none

    def __init__(self, width: int = 19, height: int = 19, komi: float = 7.5,
                 rules: Rules = PRESETS["chinese"], seed: int | None = None,
                 evaluator=None, config: EngineConfig | None = None, log=None):
        self.config = config if config is not None else EngineConfig()
        if seed is None:
            seed = self.config.seed
        self.game = GameState(width, height, komi, rules)
        self.time = TimeSettings()
        self.time_left: dict[int, tuple[float, int]] = {}
        self._rng = np.random.default_rng(seed)
        self.log = log if log is not None else (lambda msg: print(msg, file=sys.stderr))
        self.evaluator = evaluator if evaluator is not None else RolloutEvaluator()
        self.search = Search(self.evaluator, self.config.search, seed, self.log)
        self._low_winrate_moves = {BLACK: 0, WHITE: 0}

    # ---- game changes (each one keeps or resets the search tree) ----------------------------
    def _reset(self) -> None:
        self.search.reset()
        self._low_winrate_moves = {BLACK: 0, WHITE: 0}

    def set_size(self, width: int, height: int) -> None:
        self.game.resize(width, height)
        self._reset()

    def clear(self) -> None:
        self.game.clear()
        self._reset()

    def set_komi(self, komi: float) -> None:
        self.game.komi = komi
        self._reset()

    def set_rules(self, rules: Rules) -> None:
        self.game.rules = rules
        self._reset()

    def play(self, color: int, point: int) -> int:
        """board.MOVE_OK or the reason the move is illegal (nothing changes then)."""
        err = self.game.play(color, point)
        if err == B.MOVE_OK:
            self._follow_move()
        return err

    def undo(self) -> bool:
        ok = self.game.undo()
        self._reset()
        return ok

    def place_handicap(self, points: list[int]) -> bool:
        ok = self.game.place_handicap(points)
        self._reset()
        return ok

    def set_time_settings(self, settings: TimeSettings) -> None:
        """A new clock for both players (forgets any time_left reports)."""
        self.time = settings
        self.time_left.clear()

    def set_time_left(self, color: int, seconds: float, stones: int) -> None:
        """The controller's report of colour's clock (GTP time_left)."""
        self.time_left[color] = (seconds, stones)

    def clear_cache(self) -> None:
        """Forget cached evaluations and the search tree."""
        self.search.clear_cache()

    def _follow_move(self) -> None:
        had_tree = self.search.has_tree
        reused = self.search.update_with_move(self.game)
        if self.config.report_reuse and had_tree:
            self.log(f"tree reuse: {reused} visits kept")

    def warm_up(self) -> None:
        """Compile the numba kernels with a tiny search on a scratch copy of the position."""
        scratch = GameState(self.game.width, self.game.height, self.game.komi, self.game.rules)
        small = replace(self.config.search, max_nodes=1000, max_edges=100_000)
        search = Search(self.evaluator, small, self.config.seed, self.log)
        search.run(scratch, BLACK, SearchLimits(playouts=4 * small.batch_size))
        search.principal_variation(int(search.root_stats().actions[0]))

    # ---- move generation -------------------------------------------------------------------
    def genmove(self, color: int, commit: bool = True,
                on_update: Callable[[AnalysisSnapshot], None] | None = None,
                interval: float = 1.0) -> int | str:
        """Choose a move for colour (a point, or RESIGN) and play it unless commit is False."""
        cfg = self.config
        started = time.monotonic()
        seconds = self._time_budget(color)
        sampling = cfg.temperature > 0 and len(self.game.moves) < cfg.temperature_moves
        limits = SearchLimits(cfg.visits, cfg.playouts, seconds,
                              early_stop=cfg.early_stop and not sampling)
        if not (limits.visits or limits.playouts or limits.seconds):
            limits.visits = cfg.fallback_visits
        update = None
        if on_update is not None:
            update = lambda: on_update(self.snapshot(color))  # noqa: E731
        self.search.run(self.game, color, limits, on_update=update, interval=interval,
                        noise_weight=cfg.noise_weight if cfg.dirichlet_noise else 0.0,
                        noise_alpha_scale=cfg.noise_alpha_scale)
        stats = self.search.root_stats()
        action = self._choose(stats)
        point = point_from_action(action, self.game.width, self.game.height)
        self._account_time(color, time.monotonic() - started)
        if self._should_resign(color, stats, action):
            return RESIGN
        if commit:
            self.game.play(color, point)
            self._follow_move()
        return point

    def _time_budget(self, color: int) -> float:
        """Seconds for this move: from the clock if one is set, else config.seconds."""
        cfg = self.config
        ts = self.time
        untimed = ts.main_time < 0 or (ts.main_time == 0 and ts.byo_time > 0
                                       and ts.byo_stones == 0 and ts.byo_periods == 0)
        budget = None
        if not untimed:
            left, stones = self.time_left.get(color, (ts.main_time, 0))
            budget = timecontrol.move_budget(ts.main_time, ts.byo_time, ts.byo_stones,
                                             ts.byo_periods, left, stones,
                                             self.game.width * self.game.height,
                                             len(self.game.moves), cfg.lag_buffer)
        if budget is None:
            return min(cfg.seconds, cfg.max_seconds) if cfg.seconds else 0.0
        return min(budget, cfg.max_seconds)

    def _account_time(self, color: int, used: float) -> None:
        """Our own clock bookkeeping (a controller's time_left overrides it)."""
        ts = self.time
        if ts.main_time < 0:
            return
        left, stones = self.time_left.get(color, (ts.main_time, 0))
        self.time_left[color] = timecontrol.spend(left, ts.byo_time, ts.byo_stones,
                                                  ts.byo_periods, stones, used)

    def _lcb(self, stats: RootStats) -> np.ndarray:
        """Lower confidence bound of each child's value (variance shrunk toward 1, weight 2)."""
        n = stats.visits.astype(np.float64)
        var = np.maximum(stats.value_sq - stats.value ** 2, 0.0)
        var = (var * n + 2.0) / (n + 2.0)
        lcb = stats.value - self.config.lcb_stdevs * np.sqrt(var / np.maximum(n, 1))
        return np.where(n > 0, lcb, -1e9)

    def _choose(self, stats: RootStats, sample: bool = True) -> int:
        """The move to play: temperature sampling early in self-play, else LCB or visits."""
        cfg = self.config
        if len(stats.actions) == 0:
            return self.game.width * self.game.height
        visits = stats.visits.astype(np.float64)
        if visits.max() <= 0:
            return int(stats.actions[int(np.argmax(stats.prior))])
        if sample and cfg.temperature > 0 and len(self.game.moves) < cfg.temperature_moves:
            weights = (visits / visits.max()) ** (1.0 / cfg.temperature)
            return int(self._rng.choice(stats.actions, p=weights / weights.sum()))
        best = int(np.argmax(visits + 1e-6 * stats.value))
        if cfg.use_lcb:
            eligible = (visits >= cfg.lcb_min_visit_prop * visits.max()) & (visits >= 2)
            if eligible.any():
                lcb = np.where(eligible, self._lcb(stats), -1e18)
                best = int(np.argmax(lcb))
        return int(stats.actions[best])

    def _should_resign(self, color: int, stats: RootStats, action: int) -> bool:
        """Best winrate below the threshold for N moves in a row, late enough in the game."""
        cfg = self.config
        if cfg.resign_threshold <= 0 or len(stats.actions) == 0:
            return False
        j = int(np.flatnonzero(stats.actions == action)[0])
        winrate = (stats.value[j] + 1) / 2 if stats.visits[j] > 0 else 0.5
        if winrate >= cfg.resign_threshold:
            self._low_winrate_moves[color] = 0
            return False
        self._low_winrate_moves[color] += 1
        area = self.game.width * self.game.height
        min_move = cfg.resign_min_move * area / 361
        if color == WHITE and self.game.handicap > 0:
            min_move += cfg.resign_handicap_moves * self.game.handicap * area / 361
        return (self._low_winrate_moves[color] >= cfg.resign_consecutive
                and len(self.game.moves) >= min_move)

    # ---- analysis ----------------------------------------------------------------------------
    def snapshot(self, color: int) -> AnalysisSnapshot:
        """The current search statistics as an AnalysisSnapshot (best candidate first)."""
        stats = self.search.root_stats()
        w, h = self.game.width, self.game.height
        moves = []
        if len(stats.actions):
            chosen = self._choose(stats, sample=False)
            lcb = self._lcb(stats)
            order = sorted(range(len(stats.actions)),
                           key=lambda j: (stats.actions[j] != chosen, -stats.visits[j],
                                          -stats.prior[j]))
            for j in order:
                if stats.visits[j] == 0 and moves:
                    continue
                a = int(stats.actions[j])
                pv = [point_from_action(x, w, h) for x in self.search.principal_variation(a)]
                moves.append(MoveInfo(point_from_action(a, w, h), int(stats.visits[j]),
                                      float((stats.value[j] + 1) / 2), float(stats.prior[j]),
                                      float((max(lcb[j], -2.0) + 1) / 2),
                                      float(stats.score[j]), pv))
        return AnalysisSnapshot(moves, stats.root_visits, float((stats.root_value + 1) / 2),
                                stats.root_score, self.search.ownership())

    def analyze(self, color: int, on_update: Callable[[AnalysisSnapshot], None],
                interval: float, stop: threading.Event) -> None:
        """Search and report every `interval` seconds until `stop` is set."""
        self.search.run(self.game, color, SearchLimits(), stop=stop,
                        on_update=lambda: on_update(self.snapshot(color)), interval=interval)
        while not stop.wait(interval):  # tree full: keep reporting what we have
            on_update(self.snapshot(color))

    def dead_stones(self) -> list[int]:
        """Points of stones judged dead, from averaged ownership (evaluator's or playouts')."""
        own = self._black_ownership()
        w, h = self.game.width, self.game.height
        col = self.game.board[B.ROW_COLOR]
        dead = []
        for a in range(w * h):
            p = point_from_action(a, w, h)
            if (col[p] == BLACK and own[a] <= -self.DEAD_OWNERSHIP) or \
                    (col[p] == WHITE and own[a] >= self.DEAD_OWNERSHIP):
                dead.append(p)
        return dead

    def _black_ownership(self) -> np.ndarray:
        """Ownership of every point from Black's view (+1 Black), averaged."""
        g = self.game
        batch = PositionBatch(1, g.width, g.height, g.komi, g.rules)
        batch_row_from_game(batch, 0, g)
        batch.count = 1
        own = None
        if not isinstance(self.evaluator, RolloutEvaluator):
            own = self.evaluator.evaluate(batch).ownership
        if own is None:
            own = np.zeros((1, g.width * g.height), np.float32)
            komi = g.komi + g.rules.handicap_bonus(g.handicap)
            rollout_batch(batch.boards, batch.to_move, 1, komi, g.rules.suicide,
                          self.DEAD_PLAYOUTS, 3 * g.width * g.height + 20,
                          np.empty_like(g.board), np.zeros(g.width * g.height),
                          np.zeros(1, np.float32), np.zeros(1, np.float32), own)
        sign = 1.0 if g.to_move == BLACK else -1.0
        return sign * np.asarray(own, np.float64).reshape(-1)
