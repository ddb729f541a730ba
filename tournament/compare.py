"""Compare two engines move by move: on positions from real games each chooses a move; where
they differ a strong judge values both; each engine's mean loss with its 95 % interval.

    python -m dosaku.tournament.compare "ENGINE A" "ENGINE B" --judge "JUDGE" GAMES... --out OUT

Engines and judge are GTP command lines. Positions: tournament/compare_positions.py; how the
judge values a move: tournament/compare_gtp.py; the arithmetic: tournament/compare_stats.py.
Each worker (--parallel) keeps its own three engine processes across positions and restarts
one that crashed or timed out. Every position's record is appended to OUT (JSON lines, the
engines and judge first) as soon as it is known, so a rerun with the same engines and judge
continues where the last one stopped and asks again only about positions that failed; a CSV
of the records is written beside OUT. Exit status: 0, 1 when positions failed, 2 on bad
settings or an engine that cannot start.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from tqdm import tqdm

from dosaku.tournament.compare_gtp import (
    AnswerError,
    JudgeUnfit,
    Value,
    choose_move,
    judge_command,
    set_up,
    value_after,
)
from dosaku.tournament.compare_positions import Position, collect
from dosaku.tournament.compare_stats import judged_losses, summarize, table
from dosaku.tournament.controller import EngineError
from dosaku.tournament.match_game import ADMIN_TIMEOUT, STARTUP_TIMEOUT, EngineSlots, MatchError
from dosaku.tournament.resumable import run_resumable

LABELS = ["A", "B", "judge"]
FIELDS = ["id", "to_move", "a", "b", "same", "value_a", "value_b", "loss_a", "loss_b",
          "score_a", "score_b", "score_loss_a", "score_loss_b", "reply_a", "reply_b",
          "reply_visits_a", "reply_visits_b", "seconds", "error"]


class CompareError(Exception):
    """The comparison cannot run: an OUT file of other engines, an engine that cannot start,
    a judge without analysis commands."""


class Results:
    """OUT: a first line naming engines and judge, then one JSON record per line; a later
    record of a position replaces an earlier one."""

    def __init__(self, path: str, key: dict):
        self.path = path
        self.records: dict[str, dict] = {}
        self._lock = threading.Lock()
        if not os.path.exists(path):
            self._write([key])
            return
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        lines = text.splitlines()
        try:
            head = json.loads(lines[0]) if lines else None
        except ValueError:
            head = None
        if head != key:
            raise CompareError(f"{path} holds the results of other engines or another judge "
                               "(or is no comparison); use another --out")
        good = [head]
        for line in lines[1:]:
            try:
                record = json.loads(line)
                self.records[record["id"]] = record
                good.append(record)
            except (ValueError, KeyError, TypeError):
                pass  # the line an interrupted run was writing
        if len(good) != len(lines) or not text.endswith("\n"):
            self._write(good)

    def _write(self, items: list[dict]) -> None:
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(item) + "\n" for item in items)
        os.replace(tmp, self.path)

    def done(self, pos: Position) -> dict | None:
        """The earlier record of this very position, unless it failed."""
        r = self.records.get(pos.id)
        if r is None or r.get("error") or r.get("position") != pos.to_dict():
            return None
        return r

    def add(self, record: dict) -> None:
        with self._lock:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
            self.records[record["id"]] = record


class Worker:
    """One thread's engine processes (A, B and the judge), kept across positions."""

    def __init__(self, commands: list[str], log_dir: str, index: int, timeout: float | None):
        self.slots = EngineSlots(commands, log_dir, index, labels=LABELS)
        self.timeout = timeout
        self.judge_with: str | None = None

    def _timeouts(self, k: int) -> tuple[float, float]:
        """(first command, other commands) timeouts: a new process may still be starting."""
        first = STARTUP_TIMEOUT if k in self.slots.fresh else ADMIN_TIMEOUT
        self.slots.fresh.discard(k)
        return first, ADMIN_TIMEOUT

    def _engine(self, k: int):
        try:
            return self.slots.get(k)
        except MatchError as exc:
            raise CompareError(str(exc)) from None

    def _move(self, k: int, pos: Position) -> str:
        ctrl = self._engine(k)
        set_up(ctrl, pos, LABELS[k], self._timeouts(k), self.slots.knows_rules.get(k, False))
        return choose_move(ctrl, pos, LABELS[k], self.timeout)

    def _value(self, pos: Position, move: str) -> Value:
        if move == "resign":
            return Value(0.0, None, None, "")
        ctrl = self._engine(2)
        timeouts = self._timeouts(2)
        if self.judge_with is None:
            try:
                self.judge_with = judge_command(ctrl, timeouts[0])
            except JudgeUnfit as exc:
                raise CompareError(str(exc)) from None
        return value_after(ctrl, self.judge_with, pos, move, "judge", timeouts, self.timeout,
                           self.slots.knows_rules.get(2, False))

    def compare(self, pos: Position) -> dict:
        """The record of one position; an unusable answer or a crash goes into its error."""
        record = dict.fromkeys(FIELDS)
        record.update(id=pos.id, to_move=pos.to_move, position=pos.to_dict())
        start = time.monotonic()
        k = 0
        try:
            a = self._move(0, pos)
            k = 1
            b = self._move(1, pos)
            record.update(a=a, b=b, same=a == b)
            if a != b:
                k = 2
                for name, move in (("a", a), ("b", b)):
                    v = self._value(pos, move)
                    record.update({f"value_{name}": v.winrate, f"score_{name}": v.score,
                                   f"reply_visits_{name}": v.visits, f"reply_{name}": v.reply})
            judged_losses(record)
        except AnswerError as exc:
            record["error"] = str(exc)
        except EngineError as exc:
            record["error"] = f"{LABELS[k]}: {exc}"
            self.slots.discard(k)
        record["seconds"] = round(time.monotonic() - start, 3)
        return record


def run(positions: list[Position], commands: list[str], results: Results, parallel: int,
        timeout: float | None, progress: bool = True) -> list[dict]:
    """Compare on every position not done before; the records of all, in order."""
    todo = [p for p in positions if results.done(p) is None]
    log_dir = os.path.splitext(results.path)[0] + "-logs"
    os.makedirs(log_dir, exist_ok=True)
    local = threading.local()
    workers: list[Worker] = []
    lock = threading.Lock()

    def one(pos: Position) -> dict:
        worker = getattr(local, "worker", None)
        if worker is None:
            with lock:
                worker = Worker(commands, log_dir, len(workers), timeout)
                workers.append(worker)
            local.worker = worker
        return worker.compare(pos)

    bar = tqdm(total=len(positions), initial=len(positions) - len(todo), unit="pos",
               disable=not progress, file=sys.stderr)
    pool = ThreadPoolExecutor(max_workers=max(1, parallel))
    try:
        for fut in as_completed([pool.submit(one, p) for p in todo]):
            record = fut.result()
            results.add(record)
            bar.update(1)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        with lock:
            for w in workers:
                w.slots.kill()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for w in workers:
            w.slots.close()
        bar.close()
    return [results.records[p.id] for p in positions]


def write_csv(path: str, records: list[dict]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)
    os.replace(tmp, path)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m dosaku.tournament.compare",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("engine_a", help="command line of engine A")
    ap.add_argument("engine_b", help="command line of engine B")
    ap.add_argument("sources", nargs="+",
                    help="SGF games, JSON position lists, directories of SGF games")
    ap.add_argument("--judge", required=True,
                    help="command line of the judge (KataGo, Dosaku with a strong net): "
                         "it values both moves where A and B differ")
    ap.add_argument("--out", required=True, help="results (JSON lines); a CSV goes beside it")
    ap.add_argument("--per-game", type=int, default=4, help="positions drawn per SGF game")
    ap.add_argument("--skip", type=int, default=8, help="leave out the first N moves of games")
    ap.add_argument("--positions", type=int, help="at most N positions (a seeded draw)")
    ap.add_argument("--size", type=int, help="only boards of this size (and the default "
                                             "size of JSON positions, else 19)")
    ap.add_argument("--komi", type=float, default=7.5, help="komi of JSON positions")
    ap.add_argument("--rules", default="chinese", help="rules of JSON positions")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draws")
    ap.add_argument("--parallel", type=int, default=1, help="workers (3 processes each)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds for one genmove or one judge search (default 600)")
    ap.add_argument("--failures", type=int, default=10, help="failed positions listed")
    ap.add_argument("--no-progress", action="store_true")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    a = ap.parse_args(argv)
    if a.per_game < 1 or a.skip < 0 or (a.positions is not None and a.positions < 1):
        ap.error("need --per-game >= 1, --skip >= 0, --positions >= 1")
    positions, notes = collect(a.sources, a.per_game, a.skip, a.seed, a.size, a.positions,
                               (a.size or 19, a.komi, a.rules))
    for note in notes:
        print(f"compare: skipped {note}", file=sys.stderr)
    if not positions:
        print("compare: no positions", file=sys.stderr)
        return 2
    commands = [a.engine_a, a.engine_b, a.judge]

    def compare() -> tuple[int, list[dict]]:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        results = Results(a.out, {"engine_a": a.engine_a, "engine_b": a.engine_b,
                                  "judge": a.judge})
        reused = sum(results.done(p) is not None for p in positions)
        return reused, run(positions, commands, results, a.parallel, a.timeout,
                           progress=not a.no_progress)

    status, compared = run_resumable("compare", (CompareError,), compare)
    if status:
        return status
    reused, records = compared
    csv_path = os.path.splitext(a.out)[0] + ".csv"
    write_csv(csv_path, records)
    print(f"A: {a.engine_a}\nB: {a.engine_b}\njudge: {a.judge}")
    print(table(summarize(records)))
    failed = [r for r in records if r["error"]]
    for r in failed[:a.failures]:
        print(f"failed {r['id']}: {r['error']}")
    print(f"results: {a.out} ({reused} positions from an earlier run), {csv_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
