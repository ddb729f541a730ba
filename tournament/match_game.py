"""Playing one game of a match: engine processes per worker, openings, the move loop, scoring.

The game itself is kept in an engine.rules.game.GameState under the match's rules, so legality
(superko included) and the score are those of our own rules code. Game i gives engine 1 black
when i is even, white when odd. A game ends on resignation, two passes in a row or the move
limit (both scored: by the referee engine's `final_score` when one is configured, else by
GameState.score(), dead stones not removed), an illegal move (the mover loses: refused by the
GameState, unreadable, a `?` to genmove, or a `?` from the opponent's `play`), a crash or a
time-out (that side loses). An opening move refused by an engine voids the game.

Time limits: --move-time / --game-time (announced with time_settings), or a server-style clock
(tournament/clock.py: absolute, Canadian, Japanese byo-yomi) announced with time_settings or
kgs-time_settings and reported with time_left before every genmove, as Go servers do. The clock
is charged each move's wall time less the time margin (the lag a server forgives).
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from dosaku.engine.rules.constants import (
    BLACK,
    MOVE_KO,
    MOVE_OCCUPIED,
    MOVE_OFF_BOARD,
    MOVE_OK,
    MOVE_SUICIDE,
    MOVE_SUPERKO,
    WHITE,
    opponent,
)
from dosaku.engine.rules.coords import format_vertex, parse_vertex, point_from_xy
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import result_string, rules_by_name
from dosaku.tournament.clock import COMMANDS, ClockSpec, PlayerClock
from dosaku.tournament.controller import (
    EngineError,
    EngineStartError,
    EngineTimeout,
    GtpController,
    GtpFailure,
)

Move = tuple[int, int]  # (BLACK or WHITE, engine point; PASS_POINT for a pass), as GameState.moves
WHY_ILLEGAL = {MOVE_OCCUPIED: "occupied", MOVE_OFF_BOARD: "off the board", MOVE_KO: "ko",
               MOVE_SUICIDE: "suicide", MOVE_SUPERKO: "superko"}
ADMIN_TIMEOUT = 60.0
# the first set-up command of a new engine process may wait for its start-up (a network to
# load, code to compile: minutes on a cold cache and a busy machine)
STARTUP_TIMEOUT = 600.0


class MatchError(Exception):
    """The match cannot go on: bad settings, an engine refusing the set-up, a changed OUT dir."""


@dataclass
class MatchConfig:
    """Everything that defines a match; all but games/parallel must match on a restart."""

    engines: list[str]
    games: int
    size: int
    komi: float
    out: str
    rules: str = "chinese"  # a preset of engine.rules.rulesets: legality and scoring of every game
    openings: int = 0
    opening_file: str | None = None
    move_time: float | None = None
    game_time: float | None = None
    max_moves: int | None = None
    referee: str | None = None
    seed: int = 0
    parallel: int = 1
    time_margin: float = 1.0
    clock: str | None = None  # a tournament.clock.ClockSpec: `byoyomi 30 2 3`, ...
    clock_command: str = "kgs-time_settings"  # the first of clock.COMMANDS tried to announce it

    @property
    def move_limit(self) -> int:
        return self.max_moves if self.max_moves is not None else 3 * self.size * self.size

    def clock_spec(self) -> ClockSpec | None:
        """The parsed clock; MatchError if malformed or mixed with the simple limits."""
        if self.clock is None:
            return None
        if self.move_time is not None or self.game_time is not None:
            raise MatchError("a clock excludes --move-time and --game-time")
        try:
            spec = ClockSpec.parse(self.clock)
            spec.settings_command(self.clock_command)
        except ValueError as exc:
            raise MatchError(str(exc)) from None
        return spec

    def new_game(self) -> GameState:
        """An empty GameState with the match's size, komi and rules; MatchError if unknown."""
        try:
            rules = rules_by_name(self.rules)
        except KeyError:
            raise MatchError(f"unknown rules {self.rules!r}") from None
        return GameState(self.size, self.size, self.komi, rules)


def color_letter(color: int) -> str:
    """`b` or `w`: the colour as GTP commands and sgfmill write it."""
    return "b" if color == BLACK else "w"


def why_illegal(game: GameState, color: int, point: int) -> str | None:
    """None when the move is legal on the GameState, else why it is not (nothing is played)."""
    err = game.move_error(color, point)
    return None if err == MOVE_OK else WHY_ILLEGAL.get(err, f"illegal (code {err})")


@dataclass
class GameResult:
    """One finished game as stored in match.json (colours as `B`/`W`, as in SGF)."""

    game: int
    black: int
    white: int
    black_name: str
    white_name: str
    result: str
    winner: str | None
    winner_engine: int | None
    reason: str
    detail: str
    score: float | None
    scorer: str | None
    moves: int
    opening: int
    seconds: float
    time_used: dict[str, float] = field(default_factory=dict)
    time_spare: dict[str, float] = field(default_factory=dict)  # clock: least time left
    sgf: str = ""


def random_opening(cfg: MatchConfig, n: int, rng: random.Random) -> list[Move]:
    """n random moves legal under the match's rules (black first), off the first line on
    boards of 7 and more."""
    game, color = cfg.new_game(), BLACK
    edge = 1 if cfg.size >= 7 else 0
    points = [point_from_xy(x, y, cfg.size) for y in range(edge, cfg.size - edge)
              for x in range(edge, cfg.size - edge)]
    while len(game.moves) < n:
        rng.shuffle(points)
        for p in points:
            if game.play(color, p) == MOVE_OK:
                break
        else:
            break
        color = opponent(color)
    return game.moves


def read_opening_file(path: str, cfg: MatchConfig) -> list[list[Move]]:
    """One opening per line: GTP vertices, black first and alternating; '#' starts a comment."""
    openings = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            vertices = line.split("#")[0].split()
            if not vertices:
                continue
            game, color = cfg.new_game(), BLACK
            for v in vertices:
                p = parse_vertex(v, cfg.size, cfg.size)
                if p is None:
                    raise MatchError(f"{path}:{lineno}: {v!r} is not a vertex on the board")
                why = why_illegal(game, color, p)
                if why is not None:
                    raise MatchError(f"{path}:{lineno}: illegal opening move {v} ({why})")
                game.play(color, p)
                color = opponent(color)
            openings.append(game.moves)
    if not openings:
        raise MatchError(f"{path}: no openings")
    return openings


def game_result(winner: int | None, reason: str, score: float | None) -> str:
    """SGF RE value: B+3.5, W+R, B+T, W+F (illegal move or crash), 0 for a draw, Void; a scored
    game's is engine.rules.rulesets.result_string."""
    if reason == "void":
        return "Void"
    code = {"resign": "R", "timeout": "T", "illegal": "F", "crash": "F"}.get(reason)
    return f"{color_letter(winner).upper()}+{code}" if code else result_string(score)


def score_winner(score: float) -> int | None:
    """BLACK, WHITE or None (a draw) for a score of Black minus White."""
    return BLACK if score > 0 else WHITE if score < 0 else None


def parse_final_score(text: str) -> float:
    """`B+3.5` -> 3.5, `W+0.5` -> -0.5, `0` -> 0.0 (black minus white)."""
    t = text.strip().upper()
    if t in ("0", "DRAW", "JIGO"):
        return 0.0
    if len(t) > 2 and t[0] in "BW" and t[1] == "+":
        margin = float(t[2:])
        return margin if t[0] == "B" else -margin
    raise ValueError(f"cannot read final_score answer {text!r}")


def referee_final_score(ref: GtpController, size: int, komi: float, moves: list[Move]) -> float:
    """Black minus White by the referee's final_score after `moves` on an empty board."""
    ref.send(f"boardsize {size}", ADMIN_TIMEOUT)
    ref.send("clear_board", ADMIN_TIMEOUT)
    ref.send(f"komi {komi:g}", ADMIN_TIMEOUT)
    for color, p in moves:
        ref.send(f"play {color_letter(color)} {format_vertex(p, size, size)}", ADMIN_TIMEOUT)
    return parse_final_score(ref.send("final_score", ADMIN_TIMEOUT))


def check_referee(command: str) -> None:
    """MatchError unless `command` starts a GTP engine that lists final_score: a referee that
    cannot score would leave every game to the fallback scorer, which keeps dead stones."""
    try:
        ref = GtpController(command.replace("{worker}", "0"))
    except EngineStartError as exc:
        raise MatchError(f"referee {command!r} did not start: {exc}") from None
    try:
        commands = ref.send("list_commands", STARTUP_TIMEOUT).split()
    except (EngineError, GtpFailure) as exc:
        raise MatchError(f"referee {command!r} did not answer list_commands ({exc}); "
                         f"see its command and its logs") from None
    finally:
        ref.close(grace=1.0)
    if "final_score" not in commands:
        raise MatchError(f"referee {command!r} does not offer final_score")


class EngineSlots:
    """The engine processes of one worker: started on demand, kept across games."""

    def __init__(self, commands: list[str], log_dir: str, worker: int,
                 labels: list[str] | None = None):
        """labels name the log file of each slot (default engine1, engine2, referee). `{worker}`
        in a command becomes this worker's number (from 0), e.g. to give each worker a core of
        its own with `taskset -c {worker}`."""
        self.commands = [c.replace("{worker}", str(worker)) for c in commands]
        self.labels = labels or ["engine1", "engine2", "referee"]
        self.log_dir = log_dir
        self.worker = worker
        self.ctrl: dict[int, GtpController] = {}
        self.names: dict[int, str] = {}
        self.knows_rules: dict[int, bool] = {}
        self.fresh: set[int] = set()  # slots whose process has not been set up for a game yet
        self.logs: dict[int, object] = {}
        self.stopping = False

    def get(self, k: int) -> GtpController:
        """A live controller for slot k (0, 1 = engines, 2 = referee); may raise EngineError."""
        c = self.ctrl.get(k)
        if c is not None and c.alive:
            return c
        if self.stopping:
            raise EngineError("match is stopping")
        self.discard(k)
        if k not in self.logs:
            path = os.path.join(self.log_dir, f"{self.labels[k]}-worker{self.worker}.log")
            self.logs[k] = open(path, "a", encoding="utf-8")
        try:
            c = GtpController(self.commands[k], stderr_log=self.logs[k])
        except EngineStartError as exc:
            raise MatchError(str(exc)) from None
        self.ctrl[k] = c
        self.fresh.add(k)
        try:
            self.names[k] = c.send("name", ADMIN_TIMEOUT) or f"engine{k + 1}"
        except GtpFailure:
            self.names[k] = f"engine{k + 1}"
        try:
            self.knows_rules[k] = c.send("known_command kgs-rules", ADMIN_TIMEOUT) == "true"
        except GtpFailure:
            self.knows_rules[k] = False
        return c

    def discard(self, k: int) -> None:
        c = self.ctrl.pop(k, None)
        if c is not None:
            c.close(grace=1.0)

    def discard_broken(self) -> None:
        for k in list(self.ctrl):
            if not self.ctrl[k].alive:
                self.discard(k)

    def kill(self) -> None:
        """Abort: kill every process now (safe while a game thread is using them)."""
        self.stopping = True
        for c in list(self.ctrl.values()):
            c.proc.kill()

    def close(self) -> None:
        for k in list(self.ctrl):
            self.discard(k)
        for fh in self.logs.values():
            fh.close()


class _Loss(Exception):
    """Ends a game: `colour` loses for `reason`."""

    def __init__(self, color: int, reason: str, detail: str):
        super().__init__(detail)
        self.color, self.reason, self.detail = color, reason, detail


class _Void(Exception):
    """Ends a game without a result (an engine refused a pre-set opening move)."""


class MoveTimer:
    """Times a genmove by the wall clock. The match charges clocks and judges time-outs by what
    this returns, so tests give a timer that returns scripted seconds instead of sleeping."""

    def genmove(self, color: int, send: Callable[[], str]) -> tuple[str, float]:
        """The answer of `send()` (the genmove of `color`) and the seconds it took."""
        t0 = time.monotonic()
        answer = send()
        return answer, time.monotonic() - t0


class GameRunner:
    """Plays single games with one worker's engines."""

    def __init__(self, cfg: MatchConfig, slots: EngineSlots, timer: MoveTimer | None = None):
        self.cfg = cfg
        self.slots = slots
        self.timer = timer or MoveTimer()
        self.clock = cfg.clock_spec()
        self.clocks: dict[int, PlayerClock] = {}  # per colour, for the game being played
        self.spare: dict[int, float] = {}  # least clock time a colour had left after a move

    def _call(self, color: int, ctrl: GtpController, command: str, timeout: float | None,
              optional: bool = False) -> str | None:
        """Send to the engine playing `colour`; its crash or time-out loses the game.

        A `?` answer raises GtpFailure, or returns None when `optional`."""
        try:
            return ctrl.send(command, timeout)
        except EngineTimeout as exc:
            raise _Loss(color, "timeout", f"{command}: {exc}") from None
        except EngineError as exc:
            raise _Loss(color, "crash", f"{command}: {exc}") from None
        except GtpFailure:
            if optional:
                return None
            raise

    def _setup(self, color: int, k: int) -> GtpController:
        try:
            ctrl = self.slots.get(k)
        except EngineError as exc:
            raise _Loss(color, "crash", str(exc)) from None
        cfg = self.cfg
        first = STARTUP_TIMEOUT if k in self.slots.fresh else ADMIN_TIMEOUT
        self.slots.fresh.discard(k)
        try:
            self._call(color, ctrl, f"boardsize {cfg.size}", first)
            self._call(color, ctrl, "clear_board", ADMIN_TIMEOUT)
            self._call(color, ctrl, f"komi {cfg.komi:g}", ADMIN_TIMEOUT)
        except GtpFailure as exc:
            raise MatchError(f"engine {cfg.engines[k]!r} refused the set-up: {exc}") from None
        if self.slots.knows_rules.get(k):
            self._call(color, ctrl, f"kgs-rules {cfg.rules}", ADMIN_TIMEOUT, optional=True)
        if self.clock is not None:
            self._announce_clock(color, ctrl)
        elif cfg.game_time is not None:
            main = math.ceil(cfg.game_time)
            self._call(color, ctrl, f"time_settings {main} 0 0", ADMIN_TIMEOUT, optional=True)
        elif cfg.move_time is not None:
            per = math.ceil(cfg.move_time)
            self._call(color, ctrl, f"time_settings 0 {per} 1", ADMIN_TIMEOUT, optional=True)
        return ctrl

    def _announce_clock(self, color: int, ctrl: GtpController) -> None:
        """The clock as configured; an engine refusing that command gets the next of
        clock.COMMANDS (what kgsGtp and gtp2ogs do: kata-time_settings, kgs-time_settings,
        time_settings)."""
        for command in COMMANDS[COMMANDS.index(self.cfg.clock_command):]:
            announced = self._call(color, ctrl, self.clock.settings_command(command),
                                   ADMIN_TIMEOUT, optional=True)
            if announced is not None:
                return

    def _move_timeout(self, color: int, used: dict[int, float],
                      ctrl: GtpController) -> float | None:
        """Seconds allowed for this genmove (after telling the engine its clock)."""
        cfg = self.cfg
        letter = color_letter(color)
        limits = []
        if self.clock is not None:
            seconds, stones = self.clocks[color].time_left()
            self._call(color, ctrl, f"time_left {letter} {seconds} {stones}", ADMIN_TIMEOUT,
                       True)
            limits.append(self.clocks[color].allowance())
        elif cfg.game_time is not None:
            left = max(0.0, cfg.game_time - used[color])
            self._call(color, ctrl, f"time_left {letter} {int(left)} 0", ADMIN_TIMEOUT, True)
            limits.append(left)
        elif cfg.move_time is not None:
            self._call(color, ctrl, f"time_left {letter} {math.ceil(cfg.move_time)} 1",
                       ADMIN_TIMEOUT, True)
        if cfg.move_time is not None:
            limits.append(cfg.move_time)
        return min(limits) + cfg.time_margin if limits else None

    def play(self, index: int, opening: list[Move]) -> tuple[GameResult, list[Move]]:
        """Play game `index` and return its result and moves."""
        first = index % 2  # slot playing black
        slot = {BLACK: first, WHITE: 1 - first}
        game = self.cfg.new_game()
        used = {BLACK: 0.0, WHITE: 0.0}
        start = time.monotonic()
        winner, reason, detail, score, scorer = None, "", "", None, None
        if self.clock is not None:
            self.clocks = {c: PlayerClock(self.clock) for c in (BLACK, WHITE)}
            self.spare = {}
        try:
            ctrls = {c: self._setup(c, slot[c]) for c in (BLACK, WHITE)}
            self._play_opening(ctrls, game, opening)
            reason = self._play_moves(ctrls, game, used)
            score, scorer, detail = self._score(game)
            winner = score_winner(score)
        except _Loss as loss:
            winner, reason, detail = opponent(loss.color), loss.reason, loss.detail
        except _Void as void:
            reason, detail = "void", str(void)
        self.slots.discard_broken()
        names = {c: self.slots.names.get(slot[c], f"engine{slot[c] + 1}") for c in slot}
        result = GameResult(
            game=index, black=slot[BLACK] + 1, white=slot[WHITE] + 1, black_name=names[BLACK],
            white_name=names[WHITE], result=game_result(winner, reason, score),
            winner=color_letter(winner).upper() if winner else None,
            winner_engine=slot[winner] + 1 if winner else None, reason=reason, detail=detail,
            score=score, scorer=scorer, moves=len(game.moves), opening=len(opening),
            seconds=round(time.monotonic() - start, 3),
            time_used={color_letter(c).upper(): round(t, 3) for c, t in used.items()},
            time_spare={color_letter(c).upper(): round(t, 3) for c, t in self.spare.items()})
        return result, game.moves

    def _vertex(self, p: int) -> str:
        return format_vertex(p, self.cfg.size, self.cfg.size)

    def _play_opening(self, ctrls, game: GameState, opening: list[Move]) -> None:
        """Both engines play the opening; a move either refuses voids the game (unplayed)."""
        for color, p in opening:
            if why_illegal(game, color, p) is not None:
                raise MatchError(f"opening move {self._vertex(p)} is illegal")
            for c in (BLACK, WHITE):
                try:
                    self._call(c, ctrls[c], f"play {color_letter(color)} {self._vertex(p)}",
                               ADMIN_TIMEOUT)
                except GtpFailure as exc:
                    raise _Void(f"opening move refused: {exc}") from None
            game.play(color, p)

    def _play_moves(self, ctrls, game: GameState, used: dict[int, float]) -> str:
        """Alternate genmove/play until the game ends; return 'passes' or 'max-moves'."""
        color = opponent(game.moves[-1][0]) if game.moves else BLACK
        while len(game.moves) < self.cfg.move_limit:
            mover, listener = ctrls[color], ctrls[opponent(color)]
            letter = color_letter(color)
            timeout = self._move_timeout(color, used, mover)
            command = f"genmove {letter}"
            try:
                answer, elapsed = self.timer.genmove(
                    color, partial(self._call, color, mover, command, timeout))
            except GtpFailure as exc:
                raise _Loss(color, "illegal", f"genmove failed: {exc.message}") from None
            if timeout is not None and elapsed > timeout:
                raise _Loss(color, "timeout", f"{command}: no answer to {command!r} within "
                                              f"{timeout:g} s")
            used[color] += elapsed
            self._charge_clock(color, elapsed)
            if self.cfg.game_time is not None and \
                    used[color] > self.cfg.game_time + self.cfg.time_margin:
                raise _Loss(color, "timeout", f"game time used up ({used[color]:.1f} s)")
            if answer.strip().lower() == "resign":
                raise _Loss(color, "resign", "")
            p = parse_vertex(answer, self.cfg.size, self.cfg.size)
            if p is None:
                raise _Loss(color, "illegal", f"unreadable move {answer!r}")
            why = why_illegal(game, color, p)
            if why is not None:
                raise _Loss(color, "illegal", f"{letter.upper()} {answer}: {why}")
            game.play(color, p)
            try:
                self._call(opponent(color), listener, f"play {letter} {self._vertex(p)}",
                           ADMIN_TIMEOUT)
            except GtpFailure as exc:
                why = f"{letter.upper()} {answer} rejected by opponent: {exc.message}"
                raise _Loss(color, "illegal", why) from None
            if game.is_over():
                return "passes"
            color = opponent(color)
        return "max-moves"

    def _charge_clock(self, color: int, elapsed: float) -> None:
        """Take the move's time (less the margin) off the clock; a loss on time if it ran out."""
        clock = self.clocks.get(color)
        if clock is None:
            return
        charged = max(0.0, elapsed - self.cfg.time_margin)
        spare = clock.allowance() - charged
        self.spare[color] = min(spare, self.spare.get(color, spare))
        if not clock.spend(charged):
            raise _Loss(color, "timeout", f"clock ran out ({elapsed:.2f} s for the move, "
                                           f"{clock.spec} clock)")

    def _score(self, game: GameState) -> tuple[float, str, str]:
        """(black minus white, scorer, note): the referee when configured, else GameState.score()
        under the match's rules (scorer = the rules' name)."""
        note = ""
        if self.cfg.referee:
            try:
                score = referee_final_score(self.slots.get(2), self.cfg.size, self.cfg.komi,
                                            game.moves)
                return score, "referee", ""
            except (EngineError, GtpFailure, ValueError) as exc:
                self.slots.discard(2)
                note = f"referee failed ({exc}); scored by {game.rules.name} rules"
        return game.score(), game.rules.name, note
