"""Pondering, GoGui's interrupt, the per-move stderr line and the seed on every thread that
searches, through the server's stdin loop and the real engine."""

import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import UniformEvaluator
from dosaku.engine.evaluators.rollout import RolloutEvaluator
from dosaku.engine.rules.coords import format_vertex, point_from_action
from dosaku.engine.search.config import SearchConfig
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.server import GtpServer
from dosaku.tournament.controller import GtpController
from dosaku.weights import DEFAULT_NAME

ROOT = Path(__file__).resolve().parents[1]
SEARCH = SearchConfig(batch_size=8, max_nodes=200_000, max_edges=4_000_000)
HANG = 10.0  # seconds: an answer held up by pondering would wait minutes (SlowUniform's tree)
REPORT = re.compile(r"genmove ([BW]) (\S+): (\d+) visits, (\d+) playouts, ([\d.]+) s, "
                    r"(\d+) visits/s, winrate ([\d.]+)%, lead ([-+][\d.]+), pv (.*)")


class SlowUniform(UniformEvaluator):
    """Uniform priors, 2 ms per batch: a search that would take minutes to fill the tree."""

    def evaluate(self, batch):
        time.sleep(0.002)
        return super().evaluate(batch)


class Loop:
    """A GtpServer serving a pipe pair on a thread, with an answer reader."""

    def __init__(self, engine):
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        self.server = GtpServer(Commands(EngineLoader.of(engine)))
        self.thread = threading.Thread(target=self.server.serve,
                                       args=(os.fdopen(in_r, "rb"), os.fdopen(out_w, "wb")),
                                       daemon=True)
        self.thread.start()
        self.writer = os.fdopen(in_w, "wb", buffering=0)
        self.reader = os.fdopen(out_r, "rb")

    def send(self, text: str) -> None:
        self.writer.write(text.encode())

    def answer(self) -> str:
        lines = []
        while (line := self.reader.readline().decode()) != "\n":
            assert line, "server closed its output"
            lines.append(line)
        return "".join(lines)

    def timed(self, text: str) -> tuple[str, float]:
        t0 = time.monotonic()
        self.send(text)
        return self.answer(), time.monotonic() - t0

    def close(self) -> None:
        self.send("quit\n")
        assert self.answer() == "= \n"
        self.thread.join(5)
        assert not self.thread.is_alive()


def engine_with(logs: list, **config) -> Engine:
    cfg = EngineConfig(search=SEARCH, report_reuse=False, **{"seconds": 0, **config})
    return Engine(9, 9, 7.5, evaluator=SlowUniform(), config=cfg, log=logs.append)


def test_pondered_visits_count_at_the_next_genmove():
    logs = []
    engine = engine_with(logs, visits=100, ponder=True)  # a visit limit is spent in full
    loop = Loop(engine)
    answer, _ = loop.timed("genmove b\n")
    assert re.fullmatch(r"= [A-J]\d\n", answer)
    time.sleep(1.0)  # White's thinking time: the engine ponders
    answer, waited = loop.timed("name\n")
    assert answer == "= Dosaku\n" and waited < HANG  # pondering never holds an answer back
    # pondering resumed after `name` (the game is unchanged), so visits only grow from here
    stats = engine.search.root_stats()
    assert stats.root_visits > 200  # far beyond the 100 of a genmove
    best = int(stats.actions[stats.visits.argmax()])
    reply = format_vertex(point_from_action(best, 9, 9), 9, 9)
    assert loop.timed(f"play w {reply}\n")[0] == "= \n"  # White plays the move pondered most
    kept = engine.search.root_stats().root_visits  # pondering stopped at `play`
    assert 0 < stats.visits.max() <= kept < 100  # its subtree was kept
    logs.clear()
    loop.send("genmove b\n")
    loop.answer()
    report = REPORT.fullmatch(logs[-1])
    visits, playouts = int(report[3]), int(report[4])
    # the search only added what the 100-visit limit still lacked (batches never overshoot it)
    assert visits == kept + playouts == 100
    loop.close()


def assert_search_idle(engine, seconds: float) -> None:
    """No visits are added to the engine's tree for `seconds`."""
    visits = engine.search.root_stats().root_visits
    time.sleep(seconds)
    assert engine.search.root_stats().root_visits == visits


def test_commands_during_pondering_are_answered_at_once_and_pondering_goes_on():
    logs = []
    engine = engine_with(logs, visits=50, ponder=True)
    loop = Loop(engine)
    loop.timed("genmove b\n")
    seen = []
    for line in ("protocol_version\n", "showboard\n", "kata-get-param visits\n",
                 "time_left b 100 0\n"):
        time.sleep(0.3)
        answer, waited = loop.timed(line)
        assert answer.startswith("=") and waited < HANG, (line, waited)
        seen.append(engine.search.root_stats().root_visits)
    assert seen == sorted(seen) and seen[-1] > seen[0] + 50  # resumed after each command
    assert loop.timed("play w pass\n")[0] == "= \n"  # the game changed: no more pondering
    assert_search_idle(engine, 0.3)
    loop.close()


def test_without_ponder_nothing_searches_between_commands():
    logs = []
    engine = engine_with(logs, visits=50)
    loop = Loop(engine)
    loop.timed("genmove b\n")
    assert_search_idle(engine, 0.5)
    loop.close()


def test_interrupt_ends_a_genmove_and_other_lines_do_not():
    logs = []
    loop = Loop(engine_with(logs, seconds=30.0))
    loop.send("genmove b\n")
    time.sleep(0.3)
    answer, waited = loop.timed("# interrupt\n")
    assert re.fullmatch(r"= [A-J]\d\n", answer) and waited < HANG  # not the 30 s limit
    assert REPORT.fullmatch(logs[-1])
    ok = loop.timed("kata-set-param time 0.8\n")[0]
    assert ok == "= \n"
    answer, waited = loop.timed("genmove w\nname\n")  # a pipelined command waits its turn
    assert re.fullmatch(r"= [A-J]\d\n", answer) and waited > 0.75
    assert loop.answer() == "= Dosaku\n"
    assert loop.timed("gogui-interrupt\n")[0] == "= \n"
    loop.close()


def test_genmove_report_line():
    logs = []
    engine = engine_with(logs, playouts=64)
    move = engine.genmove(1)
    report = REPORT.fullmatch(logs[-1])
    assert report, logs[-1]
    color, shown, visits, playouts, seconds, rate, winrate, lead, pv = report.groups()
    assert color == "B" and shown == format_vertex(move, 9, 9) == pv.split()[0]
    assert 64 <= int(playouts) <= 64 + 8 and int(visits) >= int(playouts)
    assert 0 <= float(winrate) <= 100 and float(seconds) > 0
    assert abs(int(rate) * float(seconds) - int(playouts)) <= 0.005 * int(rate) + 1  # rounding


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")
def test_ponder_flag_in_the_real_engine(tmp_path):
    """run_engine.py --ponder: answers during pondering come at once; stderr has the line."""
    err = open(tmp_path / "stderr.txt", "wb")
    p = subprocess.Popen([sys.executable, str(ROOT / "run_engine.py"), "--ponder",
                          "--boardsize", "9", "--visits", "64"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)

    def ask(line: str) -> tuple[bytes, float]:
        t0 = time.monotonic()
        p.stdin.write(line.encode())
        p.stdin.flush()
        answer = b""
        while (got := p.stdout.readline()) != b"\n":
            answer += got
        return answer, time.monotonic() - t0
    try:
        assert ask("genmove b\n")[0].startswith(b"= ")  # waits for the kernels
        for _ in range(3):
            time.sleep(0.5)
            answer, waited = ask("name\n")
            assert answer == f"= Dosaku ({DEFAULT_NAME})\n".encode() and waited < HANG, waited
        ask("quit\n")
        assert p.wait(10) == 0
    finally:
        p.kill()
        err.close()
    assert REPORT.search((tmp_path / "stderr.txt").read_text())


class CountedRollouts(RolloutEvaluator):
    """Random playouts that set `stop` after `calls` more evaluations (when given one): a ponder
    as long in every run, whatever the clock says."""
    stop: threading.Event | None = None
    calls = 0

    def evaluate(self, batch):
        if self.stop is not None:
            self.calls -= 1
            if self.calls <= 0:
                self.stop.set()
        return super().evaluate(batch)


def on_new_thread(fn, *args):
    """fn(*args) on a thread of its own, as the GTP server runs genmove and pondering (numba's
    random state is per thread)."""
    out = []
    t = threading.Thread(target=lambda: out.append(fn(*args)))
    t.start()
    t.join()
    return out[0]


def test_the_seed_decides_genmove_and_pondering_on_any_thread():
    def play(seed):
        ev = CountedRollouts()
        cfg = EngineConfig(visits=50, seconds=0, seed=seed, resign_threshold=0,
                           report_moves=False, report_reuse=False)
        engine = Engine(9, 9, 7.5, evaluator=ev, config=cfg)
        seen = []
        for _ in range(4):
            seen.append(on_new_thread(engine.genmove, engine.to_move))
            ev.stop, ev.calls = threading.Event(), 20
            on_new_thread(engine.ponder, ev.stop)  # the next genmove goes on from its tree
            ev.stop = None
            seen.append(engine.search.root_stats().visits.tolist())
        return seen

    assert play(5) == play(5)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")
def test_a_seeded_engine_plays_the_same_game_again():
    """run_engine.py --seed with random playouts and pondering, twice: the same moves. The
    engine ponders after each genmove until the next line comes, so what that finds depends
    on timing: `undo` and `play` give every genmove a fresh tree."""
    command = (f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'run_engine.py'))} "
               "--evaluator rollout --seed 5 --visits 50 --boardsize 9 --ponder "
               "--resign-threshold 0")

    def game():
        moves = []
        with GtpController(command) as engine:
            for color in "bwbwbwbwbw":
                moves.append(engine.send(f"genmove {color}", timeout=600))  # compiles first
                time.sleep(0.05)  # pondering on its own thread
                engine.send("undo")
                engine.send(f"play {color} {moves[-1]}")
        return moves

    assert game() == game()
