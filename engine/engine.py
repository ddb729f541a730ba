"""Engine facade: the only object the GTP layer talks to.

It owns the GameState and the Search. Every game change goes through here so the search tree
can follow it (tree reuse after play/genmove, reset after anything else).
"""

import functools
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from dosaku.engine import plain_kernels, precompile
from dosaku.engine.config import EngineConfig
from dosaku.engine.dead_stones import DeadStones, black_ownership
from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.evaluators.rollout import RolloutEvaluator
from dosaku.engine.friendly_pass import (
    lead_for,
    opponent_passed,
    pass_keeps_result,
    removes_dead_stones,
)
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, EMPTY, MOVE_OK, NULL_POINT, PASS_POINT, WHITE
from dosaku.engine.rules.coords import format_vertex, neighbours, point_from_action
from dosaku.engine.rules.free_handicap import free_handicap_points
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS, Rules
from dosaku.engine.rules.seki import seki_stones
from dosaku.engine.search.analysis_snapshot import AnalysisSnapshot, analysis_snapshot
from dosaku.engine.search.bans import MoveBan, ban_table
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from dosaku.engine.search.move_choice import ResignWatch, choose_action, lower_confidence_bounds
from dosaku.engine.search.results import RootStats
from dosaku.engine.search.scores import expected_atan_table
from dosaku.engine.timecontrol import Clock, TimeSettings

RESIGN = "resign"


@dataclass(frozen=True)
class GameRecord:
    """Enough of a game to rebuild it exactly (used to undo a failed loadsgf)."""
    width: int
    height: int
    komi: float
    handicap: tuple[int, ...]
    setup: tuple[tuple[int, ...], tuple[int, ...], int] | None  # black, white, to move
    moves: tuple[tuple[int, int], ...]
    to_move: int  # at the end (after an undo it need not follow from the last move)


def _after_warm_up(method):
    """For methods that search or run the evaluator: wait for a warm-up under way in the
    background (board commands need not), and report its failure."""
    @functools.wraps(method)
    def waiting(self, *args, **kwargs):
        self._warm.wait()
        if self._warm_error is not None:
            raise RuntimeError(f"engine failed to start: {self._warm_error}")
        return method(self, *args, **kwargs)
    return waiting


class Engine:
    """Game record + tree search. Construct with an evaluator (default: random playouts);
    every random choice follows `config.seed`."""

    def __init__(self, width: int = 19, height: int = 19, komi: float = 7.5,
                 rules: Rules = PRESETS["chinese"], evaluator=None,
                 config: EngineConfig | None = None, log=None):
        self.config = config if config is not None else EngineConfig()
        self.game = GameState(width, height, komi, rules)
        self.clock = Clock()
        self.log = log if log is not None else (lambda msg: print(msg, file=sys.stderr))
        self.evaluator = evaluator if evaluator is not None else RolloutEvaluator()
        self.search = Search(self.evaluator, self.config.search, self.config.seed, self.log)
        self._resign = ResignWatch()
        self._setup: tuple[tuple[int, ...], tuple[int, ...], int] | None = None
        self._dead = DeadStones()
        self._bans: np.ndarray | None = None  # the move bans the tree was searched with
        #                                       (_run; engine/search/bans.py), None = none
        self._warm = threading.Event()  # cleared while a background warm-up runs
        self._warm.set()
        self._warm_error: BaseException | None = None

    # ---- reading the game (copies: changing them changes nothing) --------------------------
    @property
    def size(self) -> tuple[int, int]:
        return self.game.width, self.game.height

    @property
    def komi(self) -> float:
        return self.game.komi

    @property
    def rules(self) -> Rules:
        return self.game.rules

    @property
    def to_move(self) -> int:
        return self.game.to_move

    @property
    def moves(self) -> list[tuple[int, int]]:
        """(colour, point) of every move after the handicap or setup stones, oldest first."""
        return list(self.game.moves)

    @property
    def handicap_points(self) -> list[int]:
        """Stones placed by a handicap command (not part of the move history)."""
        return list(self.game.handicap_points)

    @property
    def setup_stones(self) -> tuple[list[int], list[int], int] | None:
        """(black, white, colour to move) as given to `setup`; None if there was none."""
        if self._setup is None:
            return None
        return list(self._setup[0]), list(self._setup[1]), self._setup[2]

    @property
    def time(self) -> TimeSettings:
        """The clock settings GTP gave (main_time < 0: untimed)."""
        return self.clock.settings

    @property
    def time_left(self) -> dict[int, tuple[float, int]]:
        """(seconds, stones) left per colour, as reported or as our bookkeeping has it."""
        return self.clock.left

    def prisoners(self, color: int) -> int:
        """Stones captured by `color`."""
        return self.game.prisoners(color)

    def stones(self) -> dict[int, int]:
        """Colour of every occupied point."""
        w, h = self.size
        row = self.game.board[B.ROW_COLOR]
        out = {}
        for a in range(w * h):
            p = point_from_action(a, w, h)
            if row[p] in (BLACK, WHITE):
                out[p] = int(row[p])
        return out

    @property
    def ko_point(self) -> int | None:
        """The point simple ko forbids the side to move to take now, None when there is none."""
        header = self.game.board[B.ROW_HEADER]
        if header[B.H_KO_COLOR] != self.to_move or header[B.H_KO_POINT] == NULL_POINT:
            return None
        return int(header[B.H_KO_POINT])

    def chain_of(self, point: int) -> int:
        """An identifier of the chain through a stone (the chain's head point)."""
        return int(self.game.board[B.ROW_HEAD, point])

    def is_empty(self) -> bool:
        """No stones, no moves, no handicap: what the handicap commands require."""
        g = self.game
        return not g.moves and not g.handicap_points and \
            int(g.board[B.ROW_HEADER, B.H_NUM_EMPTY]) == g.width * g.height

    def score(self, dead: list[int] = ()) -> float:
        """Black minus White under the game's rules (komi, handicap bonus), `dead` removed."""
        mask = np.zeros(self.game.board.shape[1], dtype=np.bool_)
        mask[list(dead)] = True
        return self.game.score(mask)

    def final_score(self) -> float:
        """Black minus White with the stones `dead_stones` judges dead taken off."""
        return self.score(self.dead_stones())

    def record(self) -> GameRecord:
        w, h = self.size
        return GameRecord(w, h, self.komi, tuple(self.handicap_points), self._setup,
                          tuple(self.game.moves), self.to_move)

    def restore(self, rec: GameRecord) -> None:
        """Rebuild a recorded game (all its moves were legal when recorded)."""
        self.set_size(rec.width, rec.height)
        self.set_komi(rec.komi)
        if rec.handicap:
            self.place_handicap(list(rec.handicap))
        if rec.setup is not None:
            black, white, to_move = rec.setup
            self.setup(black, white, to_move if rec.moves else rec.to_move)
        for color, point in rec.moves:
            self.play(color, point)

    # ---- game changes (each one keeps or resets the search tree) ----------------------------
    def _reset(self) -> None:
        self.search.reset()
        self._bans = None
        self._resign.reset()

    def set_size(self, width: int, height: int) -> None:
        self.game.resize(width, height)
        self._setup = None
        self._reset()

    def clear(self) -> None:
        self.game.clear()
        self._setup = None
        self._reset()

    def set_komi(self, komi: float) -> None:
        self.game.komi = komi
        self._reset()

    def set_rules(self, rules: Rules) -> None:
        self.game.rules = rules
        self._reset()

    def play(self, color: int, point: int) -> int:
        """MOVE_OK or the reason the move is illegal (nothing changes then)."""
        err = self.game.play(color, point)
        if err == MOVE_OK:
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

    def choose_handicap(self, n: int) -> list[int]:
        """Points for n engine-chosen handicap stones (fewer if the board is too small);
        nothing is placed."""
        w, h = self.size
        return free_handicap_points(min(n, w * h - 1), w, h)

    def setup(self, black: list[int], white: list[int], to_move: int) -> bool:
        """Replace the position by these stones with `to_move` to play (SGF AB/AW/PL).

        The stones are not moves: the history starts here, so undo cannot remove them, and the
        position starts the superko history. False (nothing changes) for repeated points or a
        chain without liberties.
        """
        if not self.game.set_position(black, white, to_move):
            return False
        self._setup = (tuple(black), tuple(white), to_move)
        self._reset()
        return True

    def set_time_settings(self, settings: TimeSettings) -> None:
        """A new clock for both players (forgets any time_left reports)."""
        self.clock.set(settings)

    def set_time_left(self, color: int, seconds: float, stones: int,
                      at: float | None = None) -> None:
        """The controller's report of colour's clock (GTP time_left), received at monotonic
        time `at` (None: now does not matter): colour's next genmove counts from then."""
        self.clock.report(color, seconds, stones, at, len(self.game.moves))

    def clear_cache(self) -> None:
        """Forget cached evaluations and the search tree."""
        self.search.clear_cache()

    def _follow_move(self) -> None:
        if not self.config.tree_reuse or (self._bans is not None and self._bans.max() > 1):
            self.search.reset()  # bans below the root shaped the subtrees: none is kept
            self._bans = None
            return
        had_tree = self.search.has_tree
        reused = self.search.update_with_move(self.game)
        self._bans = None  # the kept subtree was searched below a root: with every move
        if self.config.report_reuse and had_tree:
            self.log(f"tree reuse: {reused} visits kept")

    def warm_up(self, background: bool = False, loading: Future | None = None) -> None:
        """Load the numba kernels a genmove calls from the cache, or compile them there.

        The network is not run: the first search loads what its evaluator needs. While the
        kernels run plain (engine/plain_kernels.py) there is nothing to load. On a cold
        cache a helper process compiles every kernel at the same time (engine/precompile.py):
        the search's, game's and tree's are compiled here meanwhile, then the evaluator's come
        from the helper's cache. In the background, board commands go on at once
        (compiling the few kernels they need) while the methods that search or evaluate wait
        for the warm-up. `loading`: precompile.load_search_kernels already under way (while the
        network loaded), to be waited for instead.
        """
        self._warm.clear()
        if background:
            threading.Thread(target=self._warm_up, args=(loading,), name="warm-up",
                             daemon=True).start()
        else:
            self._warm_up(loading)
            if self._warm_error is not None:
                raise self._warm_error

    def _warm_up(self, loading: Future | None = None) -> None:
        try:
            if plain_kernels.is_plain():  # a helper compiles them: only the search's table
                expected_atan_table()
                return
            kind = self.search.capabilities.precompile_kind
            if loading is not None:
                loading.result()
            else:
                helper = precompile.start_helper(kind)
                precompile.load_search_kernels(self.config.search, *self.size)
                if helper is not None:
                    precompile.wait_for(helper)
            precompile.compile_evaluator(kind)
        except BaseException as exc:  # reported by the first method that needs the kernels
            self._warm_error = exc
        finally:
            self._warm.set()

    # ---- move generation -------------------------------------------------------------------
    @_after_warm_up
    def genmove(self, color: int, commit: bool = True,
                on_update: Callable[[AnalysisSnapshot], None] | None = None,
                interval: float = 1.0, cleanup: bool = False,
                stop: threading.Event | None = None) -> int | str:
        """Choose a move for colour (a point, or RESIGN) and play it unless commit is False.

        cleanup (kgs-genmove_cleanup): while opponent stones judged dead remain, never pass;
        attack those stones (their liberties) if that is legal, else play any other move.
        stop (GoGui's interrupt) ends the search early; the best move so far is chosen.
        """
        cfg = self.config
        started = time.monotonic()
        limits = self._limits(color)
        friendly = cfg.friendly_pass and not cleanup and removes_dead_stones(self.game.rules) \
            and opponent_passed(self.game, color)
        lead = lead_for(color, self.final_score()) if friendly else 0.0
        if friendly and pass_keeps_result(lead, None):
            return self._friendly_pass(color, commit, started, lead)
        update = None
        if on_update is not None:
            update = lambda: on_update(self.snapshot(color))  # noqa: E731
        playouts = self._run(color, limits, self._cleanup_bans(color) if cleanup else None,
                             stop=stop, on_update=update, interval=interval)
        stats = self.search.root_stats()
        action = choose_action(stats, cfg, self.game)
        point = point_from_action(action, self.game.width, self.game.height)
        seconds = time.monotonic() - started
        resign = self._resign.should_resign(cfg, self.game, color, stats, action)
        if friendly and not resign and pass_keeps_result(lead, self._winrate(stats, action)):
            return self._friendly_pass(color, commit, started, lead)
        self.clock.record_move(color, seconds)
        if cfg.report_moves:
            self.log(self._move_report(color, stats, action, playouts, seconds, resign))
        if resign:
            return RESIGN
        if commit:
            self.game.play(color, point)
            self._follow_move()
        return point

    def _friendly_pass(self, color: int, commit: bool, started: float, lead: float) -> int:
        """Pass back after the opponent's pass (engine/friendly_pass.py)."""
        self.clock.record_move(color, time.monotonic() - started)
        if self.config.report_moves:
            self.log(f"genmove {'B' if color == BLACK else 'W'} pass: the opponent passed and "
                     f"passing keeps the result (lead {lead:+.1f} with dead stones removed)")
        if commit:
            self.game.play(color, PASS_POINT)
            self._follow_move()
        return PASS_POINT

    @staticmethod
    def _winrate(stats: RootStats, action: int) -> float:
        """The searched winrate of `action` for the side to move (0.5 when unvisited)."""
        j = np.flatnonzero(stats.actions == action)
        return float((stats.value[j[0]] + 1) / 2) if len(j) else 0.5

    def _move_report(self, color: int, stats: RootStats, action: int, playouts: int,
                     seconds: float, resign: bool) -> str:
        """One line about a genmove: the move, visits, speed, its winrate and score lead from
        the mover's view, and the principal variation."""
        w, h = self.size
        pv = [format_vertex(point_from_action(a, w, h), w, h)
              for a in self.search.principal_variation(action)]
        j = np.flatnonzero(stats.actions == action)
        winrate = float((stats.value[j[0]] + 1) / 2) if len(j) else 0.5
        lead = float(stats.score[j[0]]) if len(j) else 0.0
        rate = playouts / seconds if seconds > 0 else 0.0
        move = RESIGN if resign else pv[0]
        return (f"genmove {'B' if color == BLACK else 'W'} {move}: {stats.root_visits} visits, "
                f"{playouts} playouts, {seconds:.2f} s, {rate:.0f} visits/s, "
                f"winrate {100 * winrate:.1f}%, lead {lead:+.1f}, pv {' '.join(pv)}")

    @_after_warm_up
    def ponder(self, stop: threading.Event) -> int:
        """Search the current position for the side to move until `stop` is set (thinking on
        the opponent's time); the tree is what the next genmove reuses. Returns playouts."""
        if self.game.is_over():
            return 0
        return self._run(self.to_move, SearchLimits(), stop=stop, pondering=True)

    def set_config(self, config: EngineConfig) -> None:
        """New settings from the next search on (a new search shape starts a fresh tree)."""
        if config.search != self.config.search:
            self.search.set_config(config.search)
        self.config = config

    def _limits(self, color: int) -> SearchLimits:
        """The search limits of a genmove now: the config's, with the clock's budget."""
        cfg = self.config
        g = self.game
        budget = self.clock.budget(color, g.width * g.height, len(g.moves), cfg.lag_buffer,
                                   time.monotonic())
        bank_time = budget is not None and self.clock.keeps_saved_time(color)
        return SearchLimits(*cfg.move_limits(budget), bank_time=bank_time,
                            early_stop=cfg.early_stop and bank_time)

    def _cleanup_bans(self, color: int) -> np.ndarray | None:
        """The move-ban table of a cleanup move (see genmove: only the root moves it permits),
        None for all moves."""
        w, h = self.size
        col = self.game.board[B.ROW_COLOR]
        dead = [p for p in self.dead_stones() if col[p] != color]
        if not dead:
            return None
        targets = {q for p in dead for q in neighbours(p, w)
                   if col[q] == EMPTY}  # liberties of the dead stones
        legal = self.game.legal_mask(color)
        on_board = [point_from_action(a, w, h) for a in np.flatnonzero(legal[:-1])]
        attacks = [p for p in on_board if p in targets]
        if not on_board:
            return None  # nothing but pass is legal
        return ban_table([MoveBan(color, frozenset(attacks or on_board), 1, allow=True)], w, h)

    # ---- analysis ----------------------------------------------------------------------------
    def snapshot(self, color: int, raw: bool = False, spread: bool = False) -> AnalysisSnapshot:
        """The current search statistics as an AnalysisSnapshot (best candidate first); raw,
        spread: with the network's own root evaluation, with the ownership's standard
        deviations (analysis_snapshot)."""
        stats = self.search.root_stats()
        chosen = choose_action(stats, self.config, self.game)
        lcb = lower_confidence_bounds(stats, self.config.lcb_stdevs)
        utility_lcb = lower_confidence_bounds(
            replace(stats, value=stats.utility, value_sq=stats.utility_sq), self.config.lcb_stdevs)
        return analysis_snapshot(self.search, stats, chosen, lcb, *self.size, utility_lcb, raw,
                                 spread)

    @_after_warm_up
    def think(self, color: int) -> AnalysisSnapshot:
        """Search as genmove would (same limits) and report, playing nothing and leaving the
        clocks alone; the tree stays for the next search of this position."""
        self._run(color, self._limits(color))
        return self.snapshot(color)

    @_after_warm_up
    def policy(self, color: int) -> np.ndarray:
        """The evaluator's prior [W*H+1] for `color` to move here (one evaluation; pass last).

        Uniform over the legal moves for evaluators without priors (random playouts)."""
        batch = position_batch(self.game)
        batch.to_move[0] = color
        batch.legal[0] = self.game.legal_mask(color)
        return np.asarray(self.evaluator.evaluate(batch).policy[0], np.float64)

    @_after_warm_up
    def analyze(self, color: int, on_update: Callable[[AnalysisSnapshot], None],
                interval: float, stop: threading.Event, bans: tuple[MoveBan, ...] = ()) -> None:
        """Search and report every `interval` seconds until `stop` is set.

        bans: KataGo's avoid / allow entries (engine/search/bans.py): a banned move is never
        searched at the depths its entry names, for its player (at the root, pass stays
        possible if nothing else is left).
        """
        self._run(color, SearchLimits(), ban_table(bans, *self.size), stop=stop,
                  on_update=lambda: on_update(self.snapshot(color)), interval=interval)
        while not stop.wait(interval):  # tree full: keep reporting what we have
            on_update(self.snapshot(color))

    @_after_warm_up
    def analyze_position(self, visits: int = 0, seconds: float = 0.0,
                         stop: threading.Event | None = None,
                         on_update: Callable[[AnalysisSnapshot], None] | None = None,
                         interval: float = 1.0, bans: tuple[MoveBan, ...] = (),
                         root_temperature: float = 1.0, wide_root_noise: float = 0.0,
                         raw: bool = False, spread: bool = False) -> AnalysisSnapshot:
        """One search of the side to move's options, as a query of KataGo's analysis engine
        asks: until `visits` root visits or `seconds` (0: no such limit) or `stop`, reporting
        every `interval` seconds; plays nothing and returns the final snapshot. bans as in
        `analyze`; root_temperature > 1 flattens the root's priors, wide_root_noise adds
        KataGo's random bonus to the root's children (Search.run); raw, spread: snapshots with
        the network's own root evaluation, with the ownership's standard deviations (counted
        only when asked: Search.keep_ownership_spread)."""
        color = self.to_move
        self.search.keep_ownership_spread(spread)
        update = None if on_update is None else (
            lambda: on_update(self.snapshot(color, raw, spread)))
        self._run(color, SearchLimits(visits=visits, seconds=seconds),
                  ban_table(bans, *self.size), stop=stop, on_update=update, interval=interval,
                  root_temperature=root_temperature, wide_root_noise=wide_root_noise)
        return self.snapshot(color, raw, spread)

    def _run(self, color: int, limits: SearchLimits, bans: np.ndarray | None = None,
             **options) -> int:
        """Search the game for `color` under the move-ban table `bans` (engine/search/bans.py;
        None: none); `options` go to Search.run. A tree searched under other bans starts
        afresh, as KataGo's does when the avoided moves change: its visits went to moves
        banned now or passed over moves that are not, and would count toward this search's
        limits."""
        plain_kernels.settle()  # the compiled kernels, once ready, from this search on
        same = bans is None if self._bans is None else \
            bans is not None and np.array_equal(bans, self._bans)
        if not same:
            self.search.reset()
            self._bans = bans
        return self.search.run(self.game, color, limits, bans=bans, **options)

    # ---- raw network output ----------------------------------------------------------------
    @property
    def has_network(self) -> bool:
        """Whether the evaluator is, or mixes in, an ONNX network (what kata-raw-nn needs)."""
        return self.search.capabilities.network

    @_after_warm_up
    def raw_nn(self, symmetries: list[int]) -> list:
        """engine.evaluators.raw_nn.RawNN of the current position for each symmetry (network
        only)."""
        if not self.has_network:
            raise ValueError("raw network output needs an ONNX network evaluator")
        from dosaku.engine.evaluators.raw_nn import raw_nn
        model = self.evaluator.raw_model()
        return [raw_nn(model, self.game, s) for s in symmetries]

    @_after_warm_up
    def dead_stones(self) -> list[int]:
        """Points of stones judged dead (engine/dead_stones.py), the same answer for the same
        position, komi and rules."""
        return self._dead.judge(self.game, self.evaluator)

    def seki_stones(self) -> list[int]:
        """Points of living stones in seki (engine/rules/seki.py), the dead stones taken off."""
        return seki_stones(self.game, self.dead_stones())

    @_after_warm_up
    def black_ownership(self) -> np.ndarray:
        """Ownership [W*H] from Black's view, row-major from the top-left (dead_stones.py)."""
        return black_ownership(self.game, self.evaluator)
