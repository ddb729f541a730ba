"""Play a match between two GTP engines (twogtp-style) and report wins, win rate and Elo.

Games 2k and 2k+1 share their opening with colours swapped (rules of a game:
tournament/match_game.py). Each worker thread keeps its own engine processes across games and
restarts one that crashed or timed out. Results go to OUT/match.json after every game, one SGF
per game; a rerun with the same OUT skips games recorded in match.json whose SGF exists and
refuses changed settings. tournament/records.py keeps a finished OUT as one file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, replace

from tqdm import tqdm

from dosaku.tournament.match_game import (
    EngineSlots,
    GameRunner,
    MatchConfig,
    MatchError,
    Move,
    MoveTimer,
    check_referee,
    random_opening,
    read_opening_file,
)
from dosaku.tournament.match_report import plot_elo, report, tally, write_json, write_sgf
from dosaku.tournament.resumable import run_resumable

RESULT_FILE = "match.json"
CONFIG_KEYS = ("engines", "size", "komi", "rules", "openings", "opening_file", "move_time",
               "game_time", "max_moves", "referee", "seed", "clock", "clock_command")


def sgf_name(index: int) -> str:
    """The SGF file of game `index` (from 0) in a match's --out folder."""
    return f"game-{index + 1:04d}.sgf"


def config_dict(cfg: MatchConfig) -> dict:
    """The settings match.json keeps and a rerun must find unchanged."""
    d = asdict(cfg)
    return {k: d[k] for k in CONFIG_KEYS}


class Match:
    """Schedules the games, stores results, restarts where a previous run stopped."""

    def __init__(self, cfg: MatchConfig, timer: MoveTimer | None = None):
        """`timer` times each genmove (default the wall clock)."""
        # the preset's own spelling of the rules; MatchError if unknown
        self.cfg = cfg = replace(cfg, rules=cfg.new_game().rules.name)
        cfg.clock_spec()  # MatchError if malformed
        self.path = os.path.join(cfg.out, RESULT_FILE)
        self.timer = timer
        self.records: dict[int, dict] = {}
        self.openings = read_opening_file(cfg.opening_file, cfg) if cfg.opening_file \
            else None
        self._local = threading.local()
        self._all_slots: list[EngineSlots] = []
        self._lock = threading.Lock()

    def load_previous(self) -> None:
        """Keep the games of an earlier run whose SGF still exists; refuse changed settings."""
        if not os.path.exists(self.path):
            return
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
        except ValueError as exc:
            raise MatchError(f"{self.path} is unreadable ({exc}); use another --out") from None
        old, new = data.get("config", {}), config_dict(self.cfg)
        changed = [k for k in CONFIG_KEYS if old.get(k) != new[k]]
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
            return random_opening(self.cfg, self.cfg.openings,
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
        runner = GameRunner(self.cfg, self._slots(), self.timer)
        result, moves = runner.play(index, self.opening(index))
        result.sgf = sgf_name(index)
        write_sgf(os.path.join(self.cfg.out, result.sgf), self.cfg, result, moves)
        return asdict(result)

    def save(self) -> None:
        data = {"config": config_dict(self.cfg),
                "games": [self.records[i] for i in sorted(self.records)],
                "summary": tally(list(self.records.values()))}
        write_json(self.path, data)

    def engine_pids(self) -> list[tuple[int, int]]:
        """(engine number 1 or 2, process id) of every engine process running now."""
        with self._lock:
            slots = list(self._all_slots)
        return [(k + 1, c.proc.pid) for s in slots for k, c in list(s.ctrl.items())
                if k < 2 and c.alive]

    def run(self, progress: bool = True) -> list[dict]:
        """Play the missing games of 0..games-1; return the records of those games."""
        os.makedirs(os.path.join(self.cfg.out, "logs"), exist_ok=True)
        self.load_previous()
        todo = [i for i in range(self.cfg.games) if i not in self.records]
        if todo and self.cfg.referee:
            check_referee(self.cfg.referee)
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
            self.save()
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


def clock_args(ap: argparse.ArgumentParser, a: argparse.Namespace) -> tuple[str | None, str]:
    """(clock spec, announcing command) of --time-settings / --kgs-time-settings / --fischer."""
    if sum(map(bool, (a.time_settings, a.kgs_time_settings, a.fischer))) > 1:
        ap.error("give one of --time-settings, --kgs-time-settings and --fischer")
    if a.fischer:
        return "fischer {:g} {:g} {:g}".format(*a.fischer), "kata-time_settings"
    if a.kgs_time_settings:
        return " ".join(a.kgs_time_settings), "kgs-time_settings"
    if a.time_settings:
        main, byo, stones = a.time_settings
        if stones != int(stones):
            ap.error("--time-settings STONES must be a whole number")
        if byo == 0 and stones == 0:
            return f"absolute {main:g}", "time_settings"
        return f"canadian {main:g} {byo:g} {int(stones)}", "time_settings"
    return None, "kgs-time_settings"


def parser(prog: str = "python -m dosaku.tournament.match",
           description: str = __doc__.split("\n")[0]) -> argparse.ArgumentParser:
    """The match's command line (the soak runner adds its own options to it)."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("engine1", help="command line of engine 1 (black in even games); {worker} "
                    "in a command becomes the worker's number (0 .. --parallel - 1)")
    ap.add_argument("engine2", help="command line of engine 2")
    ap.add_argument("--games", type=int, required=True)
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--komi", type=float, default=7.5)
    ap.add_argument("--out", required=True, help="directory for SGFs, match.json and logs")
    ap.add_argument("--rules", default="chinese",
                    help="preset of engine/rules/rulesets.py (chinese, tromp-taylor, japanese, "
                         "...): legality incl. superko and the score without a referee; recorded "
                         "in the SGF and sent as kgs-rules to engines that know it (default "
                         "chinese)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--openings", type=int, default=0, metavar="N",
                       help="N random legal opening moves, shared by each pair of games")
    group.add_argument("--opening-file", help="one opening a line: GTP vertices, black first")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random openings")
    ap.add_argument("--move-time", type=float, help="seconds per move (loss when exceeded)")
    ap.add_argument("--game-time", type=float, help="seconds per side per game (sudden death)")
    ap.add_argument("--time-settings", nargs=3, type=float, metavar=("MAIN", "BYO", "STONES"),
                    help="a clock as GTP time_settings gives it (Canadian: STONES moves in "
                         "every BYO seconds after MAIN; BYO 0: absolute), time_left before "
                         "every genmove")
    ap.add_argument("--kgs-time-settings", nargs="+", metavar="ARG",
                    help="a clock as kgs-time_settings gives it: absolute MAIN, canadian MAIN "
                         "PERIOD STONES or byoyomi MAIN PERIOD PERIODS (Japanese), time_left "
                         "before every genmove; engines refusing it get time_settings")
    ap.add_argument("--fischer", nargs=3, type=float, metavar=("MAIN", "INCREMENT", "MAX"),
                    help="OGS's Fischer clock, as gtp2ogs sends it: kata-time_settings "
                         "fischer-capped, or to engines refusing that a Canadian clock of one "
                         "stone per INCREMENT; time_left before every genmove")
    ap.add_argument("--time-margin", type=float, default=1.0,
                    help="grace seconds added to time limits for process overhead; a clock "
                         "is charged each move's time less this (a server's lag allowance)")
    ap.add_argument("--max-moves", type=int, help="move limit, then scored (default 3*size^2)")
    ap.add_argument("--parallel", type=int, default=1, help="games played at the same time")
    ap.add_argument("--referee", help="engine command whose final_score decides scored games")
    ap.add_argument("--plot", help="PNG of the running Elo estimate (needs matplotlib)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def config_from(ap: argparse.ArgumentParser, a: argparse.Namespace) -> MatchConfig:
    """The MatchConfig of parsed arguments (ap.error on inconsistent ones)."""
    if a.games < 1 or not 2 <= a.size <= 25:
        ap.error("need --games >= 1 and 2 <= --size <= 25")
    clock, clock_command = clock_args(ap, a)
    return MatchConfig(engines=[a.engine1, a.engine2], games=a.games, size=a.size,
                       komi=a.komi, out=a.out, rules=a.rules, openings=a.openings,
                       opening_file=a.opening_file, move_time=a.move_time,
                       game_time=a.game_time, max_moves=a.max_moves, referee=a.referee,
                       seed=a.seed, parallel=a.parallel, time_margin=a.time_margin,
                       clock=clock, clock_command=clock_command)


def main(argv: list[str] | None = None, timer: MoveTimer | None = None) -> int:
    """The command line; `timer` replaces the wall clock that times genmoves (tests)."""
    ap = parser()
    a = ap.parse_args(argv)
    cfg = config_from(ap, a)

    def play() -> tuple[Match, list[dict]]:
        match = Match(cfg, timer)
        return match, match.run(progress=not a.no_progress)

    status, played = run_resumable("match", (MatchError,), play)
    if status:
        return status
    match, records = played
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
