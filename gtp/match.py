"""Play a match between two GTP engines (twogtp-style) and report wins, win rate and Elo.

Game i gives engine 1 black when i is even, white when odd; games 2k and 2k+1 share the same
opening. Each worker thread keeps its own engine processes across games and restarts one that
crashed or timed out. A game ends on resignation, two passes in a row or the move limit (both
scored: by the referee engine's `final_score` when --referee is given, else by a Tromp-Taylor
area count of the replayed moves), an illegal move (the mover loses: rejected by the referee
board, unparseable, a `?` to genmove, or a `?` from the opponent's `play`), a crash or a time-out
(that side loses). Results go to OUT/match.json after every game, one SGF per game; a rerun with
the same OUT skips games recorded in match.json whose SGF exists.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Callable

from sgfmill import common, sgf
from tqdm import tqdm

from gtp.controller import EngineDied, EngineError, EngineTimeout, GtpController, GtpFailure
from gtp.elo import estimate, format_elo
from gtp.refboard import Point, RefBoard, other, tromp_taylor_score

Move = tuple[str, Point | None]
Scorer = Callable[[int, list[Move], float], float]
ADMIN_TIMEOUT = 60.0
RESULT_FILE = "match.json"
CONFIG_KEYS = ("engines", "size", "komi", "rules", "openings", "opening_file", "move_time",
               "game_time", "max_moves", "referee", "seed")


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
    rules: str | None = None
    openings: int = 0
    opening_file: str | None = None
    move_time: float | None = None
    game_time: float | None = None
    max_moves: int | None = None
    referee: str | None = None
    seed: int = 0
    parallel: int = 1
    time_margin: float = 1.0

    @property
    def move_limit(self) -> int:
        return self.max_moves if self.max_moves is not None else 3 * self.size * self.size


@dataclass
class GameRecord:
    """One finished game as stored in match.json."""

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
    sgf: str = ""


def random_opening(size: int, n: int, rng: random.Random) -> list[Move]:
    """n legal random moves (black first), off the first line on boards of 7 and more."""
    board, moves, colour = RefBoard(size), [], "b"
    edge = 1 if size >= 7 else 0
    points = [(r, c) for r in range(edge, size - edge) for c in range(edge, size - edge)]
    while len(moves) < n:
        legal = [p for p in points if p not in board.stones and p != board.ko]
        rng.shuffle(legal)
        for p in legal:
            if board.play(colour, p) is None:
                moves.append((colour, p))
                break
        else:
            break
        colour = other(colour)
    return moves


def read_opening_file(path: str, size: int) -> list[list[Move]]:
    """One opening per line: GTP vertices, black first and alternating; '#' starts a comment."""
    openings = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            vertices = line.split("#")[0].split()
            if not vertices:
                continue
            board, moves, colour = RefBoard(size), [], "b"
            for v in vertices:
                try:
                    p = common.move_from_vertex(v, size)
                except ValueError as exc:
                    raise MatchError(f"{path}:{lineno}: {exc}") from None
                if board.play(colour, p) is not None:
                    raise MatchError(f"{path}:{lineno}: illegal opening move {v}")
                moves.append((colour, p))
                colour = other(colour)
            openings.append(moves)
    if not openings:
        raise MatchError(f"{path}: no openings")
    return openings


def result_string(winner: str | None, reason: str, score: float | None) -> str:
    """SGF RE value: B+3.5, W+R, B+T, W+F (illegal move or crash), 0 for a draw, Void."""
    if reason == "void":
        return "Void"
    if winner is None:
        return "0"
    code = {"resign": "R", "timeout": "T", "illegal": "F", "crash": "F"}.get(reason)
    return f"{winner.upper()}+{code if code else f'{abs(score):g}'}"


def parse_final_score(text: str) -> float:
    """`B+3.5` -> 3.5, `W+0.5` -> -0.5, `0` -> 0.0 (black minus white)."""
    t = text.strip().upper()
    if t in ("0", "DRAW", "JIGO"):
        return 0.0
    if len(t) > 2 and t[0] in "BW" and t[1] == "+":
        margin = float(t[2:])
        return margin if t[0] == "B" else -margin
    raise ValueError(f"cannot read final_score answer {text!r}")


class EngineSlots:
    """The engine processes of one worker: started on demand, kept across games."""

    def __init__(self, commands: list[str], log_dir: str, worker: int):
        self.commands = commands
        self.log_dir = log_dir
        self.worker = worker
        self.ctrl: dict[int, GtpController] = {}
        self.names: dict[int, str] = {}
        self.knows_rules: dict[int, bool] = {}
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
            label = "referee" if k == 2 else f"engine{k + 1}"
            path = os.path.join(self.log_dir, f"{label}-worker{self.worker}.log")
            self.logs[k] = open(path, "a", encoding="utf-8")
        c = GtpController(self.commands[k], stderr_log=self.logs[k])
        self.ctrl[k] = c
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

    def __init__(self, colour: str, reason: str, detail: str):
        super().__init__(detail)
        self.colour, self.reason, self.detail = colour, reason, detail


class _Void(Exception):
    """Ends a game without a result (an engine refused a pre-set opening move)."""


class GameRunner:
    """Plays single games with one worker's engines."""

    def __init__(self, cfg: MatchConfig, slots: EngineSlots, scorer: Scorer):
        self.cfg = cfg
        self.slots = slots
        self.scorer = scorer

    def _call(self, colour: str, ctrl: GtpController, command: str, timeout: float | None,
              optional: bool = False) -> str | None:
        """Send to the engine playing `colour`; its crash or time-out loses the game.

        A `?` answer raises GtpFailure, or returns None when `optional`."""
        try:
            return ctrl.send(command, timeout)
        except EngineTimeout as exc:
            raise _Loss(colour, "timeout", f"{command}: {exc}") from None
        except EngineDied as exc:
            raise _Loss(colour, "crash", f"{command}: {exc}") from None
        except EngineError as exc:
            raise _Loss(colour, "crash", f"{command}: {exc}") from None
        except GtpFailure:
            if optional:
                return None
            raise

    def _setup(self, colour: str, k: int) -> GtpController:
        try:
            ctrl = self.slots.get(k)
        except EngineError as exc:
            raise _Loss(colour, "crash", str(exc)) from None
        cfg = self.cfg
        try:
            self._call(colour, ctrl, f"boardsize {cfg.size}", ADMIN_TIMEOUT)
            self._call(colour, ctrl, "clear_board", ADMIN_TIMEOUT)
            self._call(colour, ctrl, f"komi {cfg.komi:g}", ADMIN_TIMEOUT)
        except GtpFailure as exc:
            raise MatchError(f"engine {cfg.engines[k]!r} refused the set-up: {exc}") from None
        if cfg.rules and self.slots.knows_rules.get(k):
            self._call(colour, ctrl, f"kgs-rules {cfg.rules}", ADMIN_TIMEOUT, optional=True)
        if cfg.game_time is not None:
            main = math.ceil(cfg.game_time)
            self._call(colour, ctrl, f"time_settings {main} 0 0", ADMIN_TIMEOUT, optional=True)
        elif cfg.move_time is not None:
            per = math.ceil(cfg.move_time)
            self._call(colour, ctrl, f"time_settings 0 {per} 1", ADMIN_TIMEOUT, optional=True)
        return ctrl

    def _move_timeout(self, colour: str, used: dict[str, float],
                      ctrl: GtpController) -> float | None:
        """Seconds allowed for this genmove (after telling the engine its clock)."""
        cfg = self.cfg
        limits = []
        if cfg.game_time is not None:
            left = max(0.0, cfg.game_time - used[colour])
            self._call(colour, ctrl, f"time_left {colour} {int(left)} 0", ADMIN_TIMEOUT, True)
            limits.append(left)
        elif cfg.move_time is not None:
            self._call(colour, ctrl, f"time_left {colour} {math.ceil(cfg.move_time)} 1",
                       ADMIN_TIMEOUT, True)
        if cfg.move_time is not None:
            limits.append(cfg.move_time)
        return min(limits) + cfg.time_margin if limits else None

    def play(self, index: int, opening: list[Move]) -> tuple[GameRecord, list[Move]]:
        """Play game `index` and return its record and moves."""
        cfg = self.cfg
        first = index % 2  # slot playing black
        slot = {"b": first, "w": 1 - first}
        moves: list[Move] = []
        used = {"b": 0.0, "w": 0.0}
        start = time.monotonic()
        winner, reason, detail, score, scorer = None, "", "", None, None
        try:
            ctrls = {c: self._setup(c, slot[c]) for c in ("b", "w")}
            board = self._play_opening(ctrls, opening, moves)
            reason = self._play_moves(ctrls, board, moves, used)
            score, scorer, detail = self._score(moves)
            winner = "b" if score > 0 else "w" if score < 0 else None
        except _Loss as loss:
            winner, reason, detail = other(loss.colour), loss.reason, loss.detail
        except _Void as void:
            reason, detail = "void", str(void)
        self.slots.discard_broken()
        names = {c: self.slots.names.get(slot[c], f"engine{slot[c] + 1}") for c in "bw"}
        record = GameRecord(
            game=index, black=slot["b"] + 1, white=slot["w"] + 1, black_name=names["b"],
            white_name=names["w"], result=result_string(winner, reason, score),
            winner=winner.upper() if winner else None,
            winner_engine=slot[winner] + 1 if winner else None, reason=reason, detail=detail,
            score=score, scorer=scorer, moves=len(moves), opening=len(opening),
            seconds=round(time.monotonic() - start, 3),
            time_used={c.upper(): round(t, 3) for c, t in used.items()})
        return record, moves

    def _play_opening(self, ctrls, opening: list[Move], moves: list[Move]) -> RefBoard:
        board = RefBoard(self.cfg.size)
        for colour, p in opening:
            board.play(colour, p)
            for c in "bw":
                try:
                    self._call(c, ctrls[c], f"play {colour} {common.format_vertex(p)}",
                               ADMIN_TIMEOUT)
                except GtpFailure as exc:
                    raise _Void(f"opening move refused: {exc}") from None
            moves.append((colour, p))
        return board

    def _play_moves(self, ctrls, board: RefBoard, moves: list[Move], used) -> str:
        """Alternate genmove/play until the game ends; return 'passes' or 'max-moves'."""
        colour = other(moves[-1][0]) if moves else "b"
        passes = 0
        while len(moves) < self.cfg.move_limit:
            mover, listener = ctrls[colour], ctrls[other(colour)]
            timeout = self._move_timeout(colour, used, mover)
            t0 = time.monotonic()
            try:
                answer = self._call(colour, mover, f"genmove {colour}", timeout)
            except GtpFailure as exc:
                raise _Loss(colour, "illegal", f"genmove failed: {exc.message}") from None
            used[colour] += time.monotonic() - t0
            if self.cfg.game_time is not None and \
                    used[colour] > self.cfg.game_time + self.cfg.time_margin:
                raise _Loss(colour, "timeout", f"game time used up ({used[colour]:.1f} s)")
            if answer.strip().lower() == "resign":
                raise _Loss(colour, "resign", "")
            try:
                p = common.move_from_vertex(answer.strip(), self.cfg.size)
            except ValueError:
                raise _Loss(colour, "illegal", f"unreadable move {answer!r}") from None
            why = board.play(colour, p)
            if why is not None:
                raise _Loss(colour, "illegal", f"{colour.upper()} {answer}: {why}")
            moves.append((colour, p))
            try:
                self._call(other(colour), listener, f"play {colour} {common.format_vertex(p)}",
                           ADMIN_TIMEOUT)
            except GtpFailure as exc:
                raise _Loss(colour, "illegal",
                            f"{colour.upper()} {answer} rejected by opponent: {exc.message}") from None
            passes = passes + 1 if p is None else 0
            if passes == 2:
                return "passes"
            colour = other(colour)
        return "max-moves"

    def _score(self, moves: list[Move]) -> tuple[float, str, str]:
        """(black minus white, scorer name, note); the referee when configured, else our count."""
        note = ""
        if self.cfg.referee:
            try:
                return self._referee_score(moves), "referee", ""
            except (EngineError, GtpFailure, ValueError) as exc:
                self.slots.discard(2)
                note = f"referee failed ({exc}); scored by tromp-taylor"
        return self.scorer(self.cfg.size, moves, self.cfg.komi), "tromp-taylor", note

    def _referee_score(self, moves: list[Move]) -> float:
        ref = self.slots.get(2)
        cfg = self.cfg
        ref.send(f"boardsize {cfg.size}", ADMIN_TIMEOUT)
        ref.send("clear_board", ADMIN_TIMEOUT)
        ref.send(f"komi {cfg.komi:g}", ADMIN_TIMEOUT)
        for colour, p in moves:
            ref.send(f"play {colour} {common.format_vertex(p)}", ADMIN_TIMEOUT)
        return parse_final_score(ref.send("final_score", ADMIN_TIMEOUT))


def write_sgf(path: str, cfg: MatchConfig, rec: GameRecord, moves: list[Move]) -> None:
    """Save one game with sgfmill."""
    game = sgf.Sgf_game(size=cfg.size)
    root = game.get_root()
    root.set("KM", cfg.komi)
    root.set("PB", rec.black_name)
    root.set("PW", rec.white_name)
    root.set("RE", rec.result)
    root.set("GN", f"game {rec.game}")
    root.set("DT", time.strftime("%Y-%m-%d"))
    if cfg.rules:
        root.set("RU", cfg.rules)
    root.set("C", f"engine {rec.black} black, engine {rec.white} white; "
                  f"end: {rec.reason} {rec.detail}".strip())
    for i, (colour, p) in enumerate(moves):
        node = game.extend_main_sequence()
        node.set_move(colour, p)
        if i + 1 == rec.opening:
            node.set("C", "end of opening")
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(game.serialise())
    os.replace(tmp, path)


def tally(records: list[dict]) -> dict:
    """Counts by engine and colour plus the Elo estimate of engine 1 (voids left out)."""
    played = [r for r in records if r["reason"] != "void"]
    wins = {1: 0, 2: 0}
    by_colour = {1: {"B": 0, "W": 0}, 2: {"B": 0, "W": 0}}
    colour_wins = {"B": 0, "W": 0}
    reasons: dict[str, int] = {}
    for r in played:
        reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
        if r["winner_engine"] is not None:
            wins[r["winner_engine"]] += 1
            by_colour[r["winner_engine"]][r["winner"]] += 1
            colour_wins[r["winner"]] += 1
    draws = len(played) - wins[1] - wins[2]
    est = estimate(wins[1], draws, wins[2])

    def finite(x: float) -> float | None:
        return None if math.isinf(x) else round(x, 1)

    return {
        "games": len(played), "void": len(records) - len(played),
        "engine1_wins": wins[1], "engine2_wins": wins[2], "draws": draws,
        "engine1_wins_by_colour": by_colour[1], "engine2_wins_by_colour": by_colour[2],
        "black_wins": colour_wins["B"], "white_wins": colour_wins["W"], "reasons": reasons,
        "engine1_score": round(est.score, 4),
        "engine1_score_95": [round(est.score_low, 4), round(est.score_high, 4)],
        "elo": finite(est.elo), "elo_95": [finite(est.elo_low), finite(est.elo_high)],
        "elo_method": "Wilson score interval on engine 1's score (draws = half), "
                      "mapped through elo = 400 log10(p / (1 - p))",
    }


def report(cfg: MatchConfig, records: list[dict], out=None) -> None:
    """Print the standings."""
    out = out or sys.stdout
    t = tally(records)
    est = estimate(t["engine1_wins"], t["draws"], t["engine2_wins"])
    w1, w2 = t["engine1_wins_by_colour"], t["engine2_wins_by_colour"]
    print(f"engine 1: {cfg.engines[0]}\nengine 2: {cfg.engines[1]}", file=out)
    print(f"games {t['games']} (void {t['void']}): engine 1 wins {t['engine1_wins']} "
          f"(as black {w1['B']}, as white {w1['W']}), engine 2 wins {t['engine2_wins']} "
          f"(as black {w2['B']}, as white {w2['W']}), draws {t['draws']}", file=out)
    print(f"by colour: black {t['black_wins']}, white {t['white_wins']}; endings: "
          + ", ".join(f"{k} {v}" for k, v in sorted(t["reasons"].items())), file=out)
    print(f"engine 1 score {100 * est.score:.1f}% [95% {100 * est.score_low:.1f}%, "
          f"{100 * est.score_high:.1f}%], Elo difference {format_elo(est.elo)} "
          f"[{format_elo(est.elo_low)}, {format_elo(est.elo_high)}] "
          "(Wilson interval on the score, draws count half)", file=out)


def plot_elo(records: list[dict], path: str) -> bool:
    """Running Elo estimate of engine 1 with its 95 % band; False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    w = d = l = 0
    xs, ys, los, his = [], [], [], []
    for r in sorted(records, key=lambda r: r["game"]):
        if r["reason"] == "void":
            continue
        w += r["winner_engine"] == 1
        l += r["winner_engine"] == 2
        d += r["winner_engine"] is None
        e = estimate(w, d, l)
        clip = lambda x: max(-800.0, min(800.0, x))  # noqa: E731 (keep inf off the axes)
        xs.append(w + d + l)
        ys.append(clip(e.elo))
        los.append(clip(e.elo_low))
        his.append(clip(e.elo_high))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between(xs, los, his, alpha=0.3, label="95% interval")
    ax.plot(xs, ys, label="Elo (engine 1 - engine 2)")
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("games")
    ax.set_ylabel("Elo difference (clipped to ±800)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


class Match:
    """Schedules the games, stores results, restarts where a previous run stopped."""

    def __init__(self, cfg: MatchConfig, scorer: Scorer = tromp_taylor_score):
        self.cfg = cfg
        self.scorer = scorer
        self.path = os.path.join(cfg.out, RESULT_FILE)
        self.records: dict[int, dict] = {}
        self.openings = read_opening_file(cfg.opening_file, cfg.size) if cfg.opening_file \
            else None
        self._local = threading.local()
        self._all_slots: list[EngineSlots] = []
        self._lock = threading.Lock()

    def _config_dict(self) -> dict:
        d = asdict(self.cfg)
        return {k: d[k] for k in CONFIG_KEYS}

    def load_previous(self) -> None:
        """Keep the games of an earlier run whose SGF still exists; refuse changed settings."""
        if not os.path.exists(self.path):
            return
        with open(self.path, encoding="utf-8") as fh:
            data = json.load(fh)
        old = data.get("config", {})
        changed = [k for k in CONFIG_KEYS if old.get(k) != self._config_dict()[k]]
        if changed:
            raise MatchError(f"{self.path} was written with different settings "
                             f"({', '.join(changed)}); use another --out")
        for r in data.get("games", []):
            if os.path.exists(os.path.join(self.cfg.out, r["sgf"])):
                self.records[r["game"]] = r

    def opening(self, index: int) -> list[Move]:
        pair = index // 2
        if self.openings:
            return self.openings[pair % len(self.openings)]
        if self.cfg.openings:
            return random_opening(self.cfg.size, self.cfg.openings,
                                  random.Random(f"{self.cfg.seed}:{pair}"))
        return []

    def _slots(self) -> EngineSlots:
        slots = getattr(self._local, "slots", None)
        if slots is None:
            commands = list(self.cfg.engines) + [self.cfg.referee or ""]
            with self._lock:
                slots = EngineSlots(commands, os.path.join(self.cfg.out, "logs"),
                                    len(self._all_slots))
                self._all_slots.append(slots)
            self._local.slots = slots
        return slots

    def _play_one(self, index: int) -> dict:
        runner = GameRunner(self.cfg, self._slots(), self.scorer)
        rec, moves = runner.play(index, self.opening(index))
        rec.sgf = f"game-{index + 1:04d}.sgf"
        write_sgf(os.path.join(self.cfg.out, rec.sgf), self.cfg, rec, moves)
        return asdict(rec)

    def save(self) -> None:
        data = {"config": self._config_dict(),
                "games": [self.records[i] for i in sorted(self.records)],
                "summary": tally(list(self.records.values()))}
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
        os.replace(tmp, self.path)

    def run(self, progress: bool = True) -> list[dict]:
        """Play the missing games of 0..games-1; return the records of those games."""
        os.makedirs(os.path.join(self.cfg.out, "logs"), exist_ok=True)
        self.load_previous()
        todo = [i for i in range(self.cfg.games) if i not in self.records]
        bar = tqdm(total=self.cfg.games, initial=self.cfg.games - len(todo), unit="game",
                   disable=not progress, file=sys.stderr)
        pool = ThreadPoolExecutor(max_workers=max(1, self.cfg.parallel))
        try:
            futures = [pool.submit(self._play_one, i) for i in todo]
            for fut in as_completed(futures):
                rec = fut.result()
                self.records[rec["game"]] = rec
                self.save()
                bar.update(1)
                bar.set_postfix_str(f"last: {rec['result']} ({rec['reason']})")
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            with self._lock:
                for slots in self._all_slots:
                    slots.kill()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            for slots in self._all_slots:
                slots.close()
            bar.close()
        return [self.records[i] for i in range(self.cfg.games)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gtp.match", description=__doc__.split("\n")[0])
    ap.add_argument("engine1", help="command line of engine 1 (black in even games)")
    ap.add_argument("engine2", help="command line of engine 2")
    ap.add_argument("--games", type=int, required=True)
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--komi", type=float, default=7.5)
    ap.add_argument("--out", required=True, help="directory for SGFs, match.json and logs")
    ap.add_argument("--rules", help="recorded in the SGF and sent as kgs-rules to engines that "
                                    "know it; our own scorer always counts area")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--openings", type=int, default=0, metavar="N",
                       help="N random legal opening moves, shared by each pair of games")
    group.add_argument("--opening-file", help="one opening a line: GTP vertices, black first")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random openings")
    ap.add_argument("--move-time", type=float, help="seconds per move (loss when exceeded)")
    ap.add_argument("--game-time", type=float, help="seconds per side per game (sudden death)")
    ap.add_argument("--time-margin", type=float, default=1.0,
                    help="grace seconds added to time limits for process overhead")
    ap.add_argument("--max-moves", type=int, help="move limit, then scored (default 3*size^2)")
    ap.add_argument("--parallel", type=int, default=1, help="games played at the same time")
    ap.add_argument("--referee", help="engine command whose final_score decides scored games")
    ap.add_argument("--plot", help="PNG of the running Elo estimate (needs matplotlib)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    a = ap.parse_args(argv)
    if a.games < 1 or not 2 <= a.size <= 25:
        ap.error("need --games >= 1 and 2 <= --size <= 25")
    cfg = MatchConfig(engines=[a.engine1, a.engine2], games=a.games, size=a.size, komi=a.komi,
                      out=a.out, rules=a.rules, openings=a.openings,
                      opening_file=a.opening_file, move_time=a.move_time,
                      game_time=a.game_time, max_moves=a.max_moves, referee=a.referee,
                      seed=a.seed, parallel=a.parallel, time_margin=a.time_margin)
    try:
        match = Match(cfg)
        records = match.run(progress=not a.no_progress)
    except (MatchError, OSError) as exc:
        print(f"match: {exc}", file=sys.stderr)
        return 2
    report(cfg, records)
    print(f"results: {match.path}")
    if a.plot:
        if plot_elo(records, a.plot):
            print(f"plot: {a.plot}")
        else:
            print("matplotlib is not installed: no plot written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
