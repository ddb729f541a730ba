"""Sabaki's GTP library (@sabaki/gtp, tests/sabaki/) drives run_engine.py through a session
(tests/sabaki/session.js): start-up queries, board sync, kata-analyze with ownership and
lz-analyze streams read line by line and interrupted by the next command, genmove, undo,
showboard, quit. The answers it printed are checked here against the synced position."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS

ROOT = Path(__file__).resolve().parents[1]
SABAKI = ROOT / "tests" / "sabaki"
SIZE = 9
HISTORY = [("B", "E5"), ("W", "C3"), ("B", "G3"), ("W", "C6")]  # as in session.js
KATA_KEYS = {"move", "visits", "winrate", "scoreLead", "prior", "lcb", "order", "pv"}
LZ_KEYS = {"move", "visits", "winrate", "prior", "lcb", "order", "pv"}


def install_sabaki_gtp() -> None:
    """`npm ci` from the committed lock file unless tests/sabaki/node_modules is there."""
    if (SABAKI / "node_modules" / "@sabaki" / "gtp").is_dir():
        return
    npm = shutil.which("npm")
    assert npm, "node is installed but npm is not (apt-get install -y npm)"
    p = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=SABAKI,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"npm ci failed:\n{p.stderr[-2000:]}"


def run_session(*engine_args: str) -> dict:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (.ci/run installs it from Debian)")
    install_sabaki_gtp()
    p = subprocess.run(["node", str(SABAKI / "session.js"), sys.executable,
                        str(ROOT / "run_engine.py"), "--boardsize", str(SIZE), *engine_args],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def synced_game() -> GameState:
    game = GameState(SIZE, SIZE, 6.5, PRESETS["chinese"])
    for color, vertex in HISTORY:
        color = BLACK if color == "B" else WHITE
        assert game.play(color, parse_vertex(vertex, SIZE, SIZE)) == MOVE_OK
    return game


def board_from_showboard(text: str) -> dict[str, str]:
    """{vertex: 'X'|'O'} of the stones in a showboard answer."""
    stones = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == SIZE + 2 and words[0].isdigit() and words[0] == words[-1]:
            for col, cell in zip("ABCDEFGHJ", words[1:-1]):
                if cell in "XO":
                    stones[f"{col}{words[0]}"] = cell
    return stones


def check_pv_is_legal(pv: list[str]) -> None:
    """The variation replays from the synced position, Black first, every move legal."""
    game = synced_game()
    color = BLACK
    for vertex in pv:
        point = parse_vertex(vertex, SIZE, SIZE)
        assert point is not None and game.play(color, point) == MOVE_OK, pv
        color = WHITE if color == BLACK else BLACK


def check_analysis(stream: dict, kata: bool) -> None:
    assert not stream["error"]
    assert stream["lines"] >= 3  # the session interrupts after the third line
    assert stream["interrupt"] == {"id": None, "content": "2", "error": False}
    assert all(ms >= 100 for ms in stream["intervalsMs"][:2])  # interval 20 cs
    totals = []
    for report in stream["parsed"]:
        moves = report["moves"]
        assert moves
        assert [int(m["order"]) for m in moves] == list(range(len(moves)))
        for m in moves:
            assert set(m) >= (KATA_KEYS if kata else LZ_KEYS), m
            assert m["pv"][0] == m["move"]
            check_pv_is_legal(m["pv"])
            if kata:
                for key in ("winrate", "prior", "lcb", "scoreLead"):
                    assert "." in m[key], m  # KataGo's floats always show the point
                assert 0.0 <= float(m["winrate"]) <= 1.0 and 0.0 <= float(m["prior"]) <= 1.0
                assert abs(float(m["scoreLead"])) <= SIZE * SIZE + 10
            else:
                assert re.fullmatch(r"\d+", m["winrate"]) and int(m["winrate"]) <= 10000
                assert re.fullmatch(r"\d+", m["prior"]) and int(m["prior"]) <= 10000
        assert len({m["move"] for m in moves}) == len(moves)
        totals.append(sum(int(m["visits"]) for m in moves))
        if kata:
            own = [float(v) for v in report["ownership"]]
            assert len(own) == SIZE * SIZE and all(-1.0 <= v <= 1.0 for v in own)
        else:
            assert report["ownership"] is None
    assert totals == sorted(totals) and totals[-1] > totals[0]  # the search kept going


def check_session(out: dict, name: str) -> None:
    assert (out["name"], out["protocol"]) == (name, "2")
    assert {"kata-analyze", "lz-analyze", "undo", "showboard", "genmove"} <= set(out["commands"])
    assert [tuple(c["args"]) for c in out["synced"]["history"]] == HISTORY
    assert out["komi"] == "6.5"
    check_analysis(out["kata"], kata=True)
    check_analysis(out["lz"], kata=False)

    before = board_from_showboard(out["showboardBefore"])
    assert before == {"E5": "X", "C3": "O", "G3": "X", "C6": "O"}
    move = out["genmove"]
    assert re.fullmatch(r"[A-HJ][1-9]", move) and move not in before, move
    assert board_from_showboard(out["showboardAfterGenmove"]) == {**before, move: "X"}
    assert (out["historyAfterGenmove"], out["historyAfterUndo"]) == (5, 4)
    assert not out["undoError"]
    assert out["showboardAfterUndo"] == out["showboardBefore"]
    assert out["badMove"] == {"id": None, "content": "illegal move", "error": True}
    assert out["exitCode"] == 0


def test_sabaki_session_with_random_playouts():
    check_session(run_session("--evaluator", "rollout", "--visits", "60"), "Dosaku")


def test_sabaki_session_with_the_katago_net(b6c96_file):
    from dosaku.launch.flags import parse_flags
    from dosaku.networks.cache import onnx_for
    from dosaku.networks.int8_copy import int8_for
    # On a CPU with AVX2 the engine quantizes the net the first time it starts (about a minute,
    # cached afterwards): done here first, so the session's deadline times the protocol only.
    if parse_flags(["--model", str(b6c96_file)]).int8 is not False:  # None: a convolution net's
        assert int8_for(onnx_for(b6c96_file)) is not None  # default is int8
    check_session(run_session("--model", str(b6c96_file), "--visits", "30"),
                  "Dosaku (g170-b6c96-s175395328-d26788732)")
