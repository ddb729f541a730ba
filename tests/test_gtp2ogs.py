"""The real gtp2ogs 9.0.1 plays whole 9x9 games for the engine against our stand-in for OGS.

gtp2ogs (../shared/clients/gtp2ogs, one Node file) is what bot operators put the engine on
OGS with. The stand-in (tests/ogs_standin) offers a challenge, keeps OGS's clock and fails a
move made past it, judges every move's legality on a board of its own, and lets GNU Go play
the other side, scripted to pass or resign. Each game checks: the bot accepted and played only
legal moves, the game ended as scripted (two passes or a resignation), no move of the bot was
charged past its clock, the engine answered the clock commands gtp2ogs sent, and the engine
exited within gtp2ogs's grace period after `quit`.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ogs_standin.opponent import GnuGo
from tests.ogs_standin.server import StandIn

ROOT = Path(__file__).resolve().parents[1]
GTP2OGS = ROOT.parent / "shared" / "clients" / "gtp2ogs" / "gtp2ogs.js"
SHIM = ROOT / "tests" / "ogs_standin" / "port_in_host.js"
GRACE_MS = 3000  # gtp2ogs's quit_grace_period in the tests' config
ENGINE = [sys.executable, str(ROOT / "run_engine.py"), "--boardsize", "9"]

BYOYOMI = {"system": "byoyomi", "speed": "blitz", "main_time": 10, "period_time": 2,
           "periods": 3, "pause_on_weekends": False}
FISCHER = {"system": "fischer", "speed": "blitz", "initial_time": 12, "time_increment": 1,
           "max_time": 20, "pause_on_weekends": False}
SIMPLE = {"system": "simple", "speed": "blitz", "per_move": 10, "pause_on_weekends": False}


def config(tmp: Path) -> Path:
    """gtp2ogs's config for the stand-in (docs/gtp.md shows it)."""
    ranges = {"byoyomi": {"main_time_range": [0, 600], "period_time_range": [1, 60],
                          "periods_range": [1, 10]},
              "fischer": {"initial_time_range": [1, 600], "max_time_range": [1, 600],
                          "time_increment_range": [0, 60]},
              "simple": {"per_move_time_range": [1, 60]}}
    cfg = {"apikey": "standin-key",
           "bot": {"command": ENGINE, "quit_grace_period": GRACE_MS, "send_pv_data": False},
           "allowed_time_control_systems": ["byoyomi", "fischer", "simple"],
           "allowed_board_sizes": [9],
           "allowed_blitz_settings": {"concurrent_games": 1, **ranges},
           "log_game_chat": False}
    path = tmp / "dosaku.json5"
    path.write_text(json.dumps(cfg, indent=2))
    return path


@pytest.fixture(scope="module")
def node() -> str:
    if not GTP2OGS.exists():
        pytest.skip(f"{GTP2OGS} is absent (../shared not available)")
    exe = shutil.which("node")
    if exe is None:
        pytest.skip("node is not installed (gtp2ogs in ../shared/clients needs Node 18+)")
    return exe


@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory) -> dict:
    """The environment of a new install: a home and caches of the module's own, empty before
    its first game, so that the first game's clock meets a cold start (the network converted,
    the kernels compiled meanwhile) and the later games a warm one."""
    home = tmp_path_factory.mktemp("home")
    return dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
                NUMBA_CACHE_DIR=str(home / "numba"))


class Bridge:
    """The stand-in plus a gtp2ogs process connected to it."""

    def __init__(self, node: str, tmp: Path, env: dict):
        self.standin = StandIn()
        port = self.standin.start()
        self.log = open(tmp / "gtp2ogs.log", "w+")
        self.proc = subprocess.Popen(
            [node, "-r", str(SHIM), str(GTP2OGS), "-c", str(config(tmp)),
             "--server", f"http://127.0.0.1:{port}", "-vvv"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        assert self.standin.wait_authenticated(60), self.text()

    def text(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")

    def engines(self) -> list[int]:
        """Process ids of the engines gtp2ogs runs now (its children)."""
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        try:
            return [int(p) for p in path.read_text().split()]
        except OSError:
            return []

    def close(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(10)
        self.standin.stop()
        self.log.close()


@pytest.fixture
def bridge(node, fresh_install, tmp_path):
    b = Bridge(node, tmp_path, fresh_install)
    yield b
    b.close()


def gnugo_factory(gnugo: str, **script):
    return lambda game: GnuGo(gnugo, game.size, game.komi, game.other(game.bot_color), **script)


def play(bridge: Bridge, time_control: dict, bot_color: str, opponent, timeout: float):
    """One game to its end; returns (game, seconds from its end to the engine's exit)."""
    gid = bridge.standin.challenge(time_control, bot_color, opponent)
    engines_seen = set()
    deadline = time.monotonic() + timeout
    game = None
    while game is None and time.monotonic() < deadline:
        engines_seen.update(bridge.engines())
        game = bridge.standin.wait_finished(gid, 0.2)
    assert game is not None, f"game {gid} did not end in {timeout} s:\n{bridge.text()[-4000:]}"
    ended = time.monotonic()
    while set(bridge.engines()) & engines_seen and time.monotonic() < ended + 10:
        time.sleep(0.05)
    return game, time.monotonic() - ended, engines_seen


def check_game(bridge: Bridge, game, exit_seconds: float, engines_seen, outcome: str) -> None:
    log = bridge.text()
    bot_moves = [m for m in game.moves if m[0] == game.bot_color]
    assert engines_seen, "gtp2ogs started no engine"
    assert not game.illegal, game.illegal
    assert bot_moves, f"the bot made no move:\n{log[-3000:]}"
    assert game.outcome == outcome, (game.outcome, game.moves, log[-3000:])
    assert not any(c.timed_out for c in game.clocks.values()), game.moves  # clocks kept
    assert "Unexpected output" not in log
    assert not re.search(r"<<< \?", log), "the engine refused a command gtp2ogs sent"
    sent = {"byoyomi": "kgs-time_settings byoyomi", "fischer": "kata-time_settings fischer-capped",
            "simple": "time_settings 0 "}[game.time_control["system"]]
    if len(bot_moves) > 1 or game.time_control["system"] == "simple":  # first move: see docs
        assert f">>> {sent}" in log and ">>> time_left" in log, f"gtp2ogs sent no {sent!r}"
    assert exit_seconds < GRACE_MS / 1000, f"engine took {exit_seconds:.1f} s to exit"
    assert "killing forcefully" not in log


def test_byoyomi_bot_black_passes_back_to_end_the_game(bridge, gnugo):
    """The module's first game, so a new install's cold start under OGS's clock. GNU Go passes
    from move 10 on: the bot plays on until the count with dead stones removed is its win,
    then passes back, and two passes end the game."""
    game, exit_s, seen = play(bridge, BYOYOMI, "black", gnugo_factory(gnugo, pass_from=10), 240)
    assert game.two_passes()
    check_game(bridge, game, exit_s, seen, game.outcome)
    assert game.outcome.endswith("points")


def test_fischer_bot_white_opponent_resigns_mid_search(bridge, gnugo):
    """GNU Go resigns while the bot thinks on move 12: gtp2ogs sends `quit` mid-search."""
    game, exit_s, seen = play(bridge, FISCHER, "white", gnugo_factory(gnugo, resign_at=11), 240)
    check_game(bridge, game, exit_s, seen, "Resignation")
    assert game.winner == 1001 and len(game.moves) == 11


@pytest.mark.slow
def test_simple_bot_black_opponent_resigns(bridge, gnugo):
    game, exit_s, seen = play(bridge, SIMPLE, "black", gnugo_factory(gnugo, resign_at=4), 240)
    check_game(bridge, game, exit_s, seen, "Resignation")


@pytest.mark.slow
def test_byoyomi_bot_white_whole_game_to_two_passes(bridge, gnugo):
    """GNU Go plays the game out; it ends by two passes (or the bot resigns)."""
    game, exit_s, seen = play(bridge, BYOYOMI, "white", gnugo_factory(gnugo), 600)
    check_game(bridge, game, exit_s, seen, game.outcome)
    assert game.two_passes() or game.outcome == "Resignation"


@pytest.mark.slow
def test_fischer_bot_black_passes_back(bridge, gnugo):
    game, exit_s, seen = play(bridge, FISCHER, "black", gnugo_factory(gnugo, pass_from=12), 300)
    assert game.two_passes()
    check_game(bridge, game, exit_s, seen, game.outcome)
