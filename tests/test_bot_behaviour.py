"""What a bot operator expects of the engine on a server (OGS through gtp2ogs): passing back
after the opponent's pass when that keeps the result, leaving at once on `quit` even mid-search,
and a clock counted from the moment `time_left` arrived."""

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.rollout import RolloutEvaluator
from dosaku.engine.friendly_pass import pass_keeps_result
from dosaku.engine.rules.constants import BLACK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.timecontrol import Clock, TimeSettings
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.server import GtpServer

ROOT = Path(__file__).resolve().parents[1]


def engine_with(black: list[str], white: list[str], rules="chinese", komi=0.5, **cfg):
    """A 9x9 position with `black` and `white` set up, White to move, then White's pass:
    Black to move, and a pass by Black would end the game."""
    log = []
    e = Engine(9, 9, komi, PRESETS[rules], RolloutEvaluator(),
               EngineConfig(search=SearchConfig(batch_size=8, max_nodes=20_000,
                                                max_edges=400_000), playouts=200, seconds=0,
                            **cfg), log=log.append)
    assert e.setup([parse_vertex(v, 9, 9) for v in black],
                   [parse_vertex(v, 9, 9) for v in white], WHITE)
    e.play(WHITE, PASS_POINT)
    return e, log


# Black walls column E, White column F; a white stone at A9, in a three-point corner Black
# closed with A7 B8 C9, is dead. Counted with it removed: Black 45, White 36, komi 0.5.
WALL_B = [f"E{r}" for r in range(1, 10)] + ["A7", "B8", "C9"]
WALL_W = [f"F{r}" for r in range(1, 10)] + ["A9"]


@pytest.mark.parametrize("rules", ["chinese", "japanese"])
def test_passes_back_when_the_count_with_dead_stones_removed_is_a_win(rules):
    e, log = engine_with(WALL_B, WALL_W, rules)
    assert e.moves[-1] == (WHITE, PASS_POINT) and e.to_move == BLACK
    assert parse_vertex("A9", 9, 9) in e.dead_stones()
    assert e.genmove(BLACK) == PASS_POINT
    assert any("passing keeps the result" in line for line in log)


def test_no_friendly_pass_keeps_cleanup_play():
    """--no-friendly-pass: the decision is the search's; the shortcut is not taken."""
    e, log = engine_with(WALL_B, WALL_W, friendly_pass=False)
    e.genmove(BLACK)
    assert not any("passing keeps the result" in line for line in log)


def test_tromp_taylor_removes_nothing_so_no_friendly_pass():
    """Under Tromp-Taylor the dead stone counts: passing would lose, so no shortcut."""
    e, log = engine_with(WALL_B, WALL_W, "tromp-taylor")
    e.genmove(BLACK)
    assert not any("passing keeps the result" in line for line in log)


def test_the_count_of_an_open_position_is_a_loss_for_black():
    """White walled off the two left columns and passed with the rest open: Black's count
    (1 stone against 18 + komi) is a loss, so only the search can make Black pass here."""
    e, _ = engine_with(["E5"], [f"B{r}" for r in range(1, 10)], komi=7.5)
    assert e.score(e.dead_stones()) == pytest.approx(1 - 18 - 7.5)


@pytest.mark.parametrize("lead, winrate, passes", [
    (8.5, None, True),  # a won count: pass without searching
    (-24.5, 0.9, False),  # a lost count, a won game by playing on: play on
    (-9.5, 0.2, True),  # lost either way: passing keeps the result
    (0.0, 0.5, True),  # a draw either way
    (-0.5, None, False),  # not searched yet: search before deciding
])
def test_pass_keeps_result(lead, winrate, passes):
    assert pass_keeps_result(lead, winrate) is passes


# ---- the clock ------------------------------------------------------------------------------
FISCHER = TimeSettings(main_time=5, increment=1)


def test_budget_counts_the_wait_since_time_left_was_read():
    clock = Clock()
    clock.set(FISCHER)
    clock.report(BLACK, 5.0, 0, at=100.0, moves_played=0)
    fresh = clock.budget(BLACK, 81, 0, 0.5, now=100.0)
    waited = clock.budget(BLACK, 81, 0, 0.5, now=104.0)  # 4 s of a 5 s clock gone
    assert fresh == pytest.approx(5 / 32.4 + 1)
    assert waited == pytest.approx(0.5)  # 1 s left less the 0.5 s lag buffer
    assert clock.budget(BLACK, 81, 1, 0.5, now=104.0) > 1  # a move since: the report is old


def test_byoyomi_wait_runs_main_time_into_the_periods():
    clock = Clock()
    clock.set(TimeSettings(main_time=3, byo_time=2, byo_periods=3))
    clock.report(WHITE, 3.0, 0, at=0.0)
    # 5.5 s: main time (3) and one period (2) gone, 0.5 s into the second period: 1.5 s left
    # of it, less the 0.5 s lag buffer
    assert clock.budget(WHITE, 81, 0, 0.5, now=5.5) == pytest.approx(1.0)


def test_time_left_read_during_start_up_shrinks_the_first_budget():
    """The server stamps a line when it is read, not when the engine gets to it."""
    e, _ = engine_with([], [])
    server = GtpServer(Commands(EngineLoader.of(e)))
    assert server.handle_line("kata-time_settings fischer 5 1").startswith("=")
    read_at = time.monotonic() - 4.0  # read 4 s ago, while the engine was loading
    server.handle_line("time_left b 5 0", received=read_at)
    budget = e.clock.budget(BLACK, 81, len(e.moves), 0.5, time.monotonic())
    assert budget < 0.6
    server.handle_line("time_left b 5 0")
    assert e.clock.budget(BLACK, 81, len(e.moves), 0.5, time.monotonic()) > 1


# ---- quit -----------------------------------------------------------------------------------
def start(*flags):
    return subprocess.Popen([sys.executable, str(ROOT / "run_engine.py"), "--boardsize", "9",
                             "--evaluator", "rollout", *flags], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def ask(proc, line: str) -> str:
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    out = []
    while (got := proc.stdout.readline()) not in ("\n", ""):
        out.append(got)
    return "".join(out)


def test_quit_mid_search_exits_well_within_three_seconds():
    proc = start("--time", "0.2")
    try:
        assert ask(proc, "genmove b").startswith("=")  # warm: kernels compiled
        assert ask(proc, "kata-set-param maxTime 60").startswith("=")
        proc.stdin.write("genmove w\n")
        proc.stdin.flush()
        time.sleep(1.0)  # a 60 s search is running
        sent = time.monotonic()
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(5)
        took = time.monotonic() - sent
        rest = proc.stdout.read()
    finally:
        proc.kill()
    assert took < 2.0, f"{took:.2f} s to exit after quit"
    assert rest.startswith("= ") and rest.split("\n\n")[1].startswith("=")  # move, then quit


def test_a_quit_queued_behind_a_genmove_waits_for_its_answer():
    """A script's lines arrive at once: the genmove before `quit` still searches to its limit
    and answers, then quit does (only a quit read during a search cuts it short)."""
    run = subprocess.run([sys.executable, str(ROOT / "run_engine.py"), "--boardsize", "9",
                          "--evaluator", "rollout", "--visits", "64"], cwd=ROOT,
                         input="boardsize 9\nclear_board\ngenmove b\nquit\n", text=True,
                         capture_output=True, timeout=300)
    answers = run.stdout.split("\n\n")
    assert [a[:2] for a in answers[:4]] == ["= "] * 4, run.stdout
    assert re.fullmatch(r"= [A-HJ]\d", answers[2]), answers
    assert re.search(r"genmove B \w+: 64 visits", run.stderr), run.stderr
