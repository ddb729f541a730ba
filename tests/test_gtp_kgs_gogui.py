"""kgs-genmove_cleanup, kgs-game_over, kgs-chat and the GoGui analyze commands through
GtpServer.handle_line (no subprocess)."""

import re

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation, UniformEvaluator
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.server import GtpServer
from tests.gogui_formats import dboard
from tests.gtp_answers import fail, ok

VERTEX = r"[A-HJ-Z]\d{1,2}"


def server(engine) -> GtpServer:
    return GtpServer(Commands(EngineLoader.of(engine)))


def rollout_engine(size=9, komi=7.5, seed=0, **cfg) -> Engine:
    config = EngineConfig(playouts=cfg.pop("playouts", 64), seconds=0, seed=seed, **cfg)
    return Engine(size, size, komi, PRESETS["chinese"], config=config)


def finished_game(srv) -> None:
    """Black wall on C, White wall on D, a dead white stone at B5 inside Black's area, two
    passes (the position of tests/test_gtp_scoring.py; B5's liberties: A5, B4, B6)."""
    for row in range(1, 10):
        ok(srv, f"play b c{row}")
        ok(srv, f"play w d{row}")
    for line in ("play w b5", "play b pass", "play w pass"):
        ok(srv, line)


def stone_at(srv, vertex: str) -> str:
    """'X', 'O' or '.' at a vertex, read from showboard."""
    col = "ABCDEFGHJ".index(vertex[0])
    row = int(vertex[1:])
    for line in ok(srv, "showboard").splitlines():
        words = line.split()
        if len(words) > 2 and words[0] == str(row) and words[-1] == str(row):
            return words[1 + col]
    raise AssertionError("row not found")


# ---- kgs-genmove_cleanup ---------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 7])
def test_cleanup_captures_the_dead_stone_before_passing(seed):
    srv = server(rollout_engine(seed=seed, resign_threshold=0))
    finished_game(srv)
    assert ok(srv, "final_status_list dead") == "B5"
    played = []
    for _ in range(3):
        move = ok(srv, "kgs-genmove_cleanup b")
        assert move in ("A5", "B4", "B6"), (played, move)  # attacks B5, never passes
        played.append(move)
        if stone_at(srv, "B5") == ".":
            break
        ok(srv, "play w pass")
    assert sorted(played) == ["A5", "B4", "B6"]  # three liberties, filled once each
    assert stone_at(srv, "B5") == "."
    assert "Black (X) captured 1" in ok(srv, "showboard")
    assert ok(srv, "final_status_list dead") == ""
    # with nothing dead left the command is a plain genmove again (here: any legal answer)
    ok(srv, "play w pass")
    assert re.fullmatch(VERTEX + "|pass|resign", ok(srv, "kgs-genmove_cleanup b"))


def test_cleanup_with_nothing_dead_is_genmove():
    """Same seed, same uniform evaluator: the cleanup move equals the genmove move."""
    answers = []
    for cmd in ("genmove", "kgs-genmove_cleanup"):
        engine = Engine(9, 9, 7.5, evaluator=UniformEvaluator(),
                        config=EngineConfig(playouts=64, seconds=0, seed=3, resign_threshold=0))
        srv = server(engine)
        for line in ("play b e5", "play w c3", "play b g7"):
            ok(srv, line)
        answers.append(ok(srv, f"{cmd} w"))
    assert answers[0] == answers[1]
    assert re.fullmatch(VERTEX + "|pass", answers[0])


def test_cleanup_may_still_resign():
    srv = server(rollout_engine(resign_threshold=0.99, resign_consecutive=1, resign_min_move=0))
    finished_game(srv)
    before = ok(srv, "showboard")
    assert ok(srv, "kgs-genmove_cleanup b") == "resign"
    assert ok(srv, "showboard") == before  # resigning plays nothing


def test_cleanup_arguments():
    srv = server(rollout_engine())
    assert fail(srv, "kgs-genmove_cleanup") == "syntax error"
    assert fail(srv, "kgs-genmove_cleanup b w") == "syntax error"
    assert fail(srv, "kgs-genmove_cleanup x") == "syntax error"


# ---- kgs-game_over, kgs-chat -----------------------------------------------------------------
def test_game_over_and_chat():
    srv = server(rollout_engine())
    ok(srv, "play b e5")
    before = ok(srv, "printsgf")
    assert srv.handle_line("4 kgs-game_over") == "=4 \n\n"
    assert ok(srv, "printsgf") == before  # nothing changes
    reply = ok(srv, "kgs-chat game alice hello there")
    assert "Dosaku" in reply and "\n" not in reply
    for line in ("kgs-chat", "kgs-chat private bob", "kgs-chat game bob # what? \t\x01",
                 "kgs-chat " + "x" * 5000):
        assert ok(srv, line) == reply


def test_chat_answers_even_when_the_engine_failed_to_start():
    def broken():
        raise RuntimeError("no network")
    loader = EngineLoader.start(broken)
    srv = GtpServer(Commands(loader))
    assert ok(srv, "kgs-chat game bob hi")
    assert srv.handle_line("kgs-game_over") == "= \n\n"
    assert fail(srv, "genmove b").startswith("engine failed to start")


# ---- GoGui analyze commands (every menu entry: tests/test_gogui_analyze.py) --------------------
class FakeNet:
    """Policy proportional to action + 1 on legal actions; ownership +1 on the top row for the
    side to move, -0.5 elsewhere. Records the colour it was asked about."""
    capabilities = Capabilities(needs_history=False)

    def __init__(self):
        self.to_move = []

    def evaluate(self, batch):
        n = batch.count
        a = batch.legal.shape[1]
        self.to_move.append(int(batch.to_move[0]))
        policy = batch.legal[:n] * np.arange(1, a + 1, dtype=np.float32)
        policy /= policy.sum(axis=1, keepdims=True)
        own = np.full((n, a - 1), -0.5, np.float32)
        own[:, :batch.width] = 1.0
        zeros = np.zeros(n, np.float32)
        return Evaluation(policy, zeros, zeros.copy(), own)


def test_policy_board_layout_and_color():
    net = FakeNet()
    srv = server(Engine(5, 5, 7.5, evaluator=net, config=EngineConfig(playouts=8, seconds=0)))
    ok(srv, "play b a5")  # top-left corner: action 0
    ok(srv, "play w e1")  # bottom-right: action 24
    grid = dboard(ok(srv, "dosaku-policy w"), 5)
    assert net.to_move[-1] == WHITE
    expected = np.arange(1, 26, dtype=float)
    expected[[0, 24]] = 0.0  # occupied
    expected /= expected.sum() + 26  # the pass action (26) shares the mass
    assert np.allclose(grid.reshape(-1), expected, atol=6e-4)
    dboard(ok(srv, "dosaku-policy"), 5)
    assert net.to_move[-1] == BLACK  # the colour to move by default
    assert fail(srv, "dosaku-policy x") == "syntax error"
    assert fail(srv, "dosaku-policy b w") == "syntax error"


@pytest.mark.parametrize("moves,sign", [((), 1.0), (("play b c3",), -1.0)])
def test_ownership_board_is_from_blacks_view(moves, sign):
    srv = server(Engine(5, 5, 7.5, evaluator=FakeNet(),
                        config=EngineConfig(playouts=8, seconds=0)))
    for line in moves:
        ok(srv, line)
    grid = dboard(ok(srv, "dosaku-ownership"), 5)
    # the fake net gives +1 on the top row to the side to move: Black here iff sign > 0
    assert np.allclose(grid[0], sign * 1.0) and np.allclose(grid[1:], sign * -0.5)
    assert fail(srv, "dosaku-ownership b") == "syntax error"


def test_ownership_of_the_finished_game():
    srv = server(rollout_engine())
    finished_game(srv)
    grid = dboard(ok(srv, "dosaku-ownership"), 9)
    assert np.all(grid[:, :3] > 0.3)  # Black's area A-C, the dead white stone B5 included
    assert np.all(grid[:, 3] < -0.3)  # White's wall on D


def capture_position(srv) -> None:
    """5x5, Black to move after White's pass: White's rows 3 and 5 and Black's A4-D4 between
    them all have one liberty, E4. Black E4 captures ten stones and wins; any other move,
    a pass included, lets White E4 capture four and win."""
    for col in "ABCDE":
        ok(srv, f"play b {col}2")
        ok(srv, f"play w {col}3")
    for col in "ABCD":
        ok(srv, f"play b {col}4")
    for col in "ABCDE":
        ok(srv, f"play w {col}5")
    ok(srv, "play w pass")


def test_visits_and_pv_find_the_capture():
    srv = server(rollout_engine(size=5, playouts=300, seed=1))
    capture_position(srv)
    words = ok(srv, "dosaku-visits b").split()
    pairs = list(zip(words[::2], map(int, words[1::2])))
    assert pairs[0][0] == "E4"
    assert [n for _, n in pairs] == sorted((n for _, n in pairs), reverse=True)
    assert len({v for v, _ in pairs}) == len(pairs) and all(n > 0 for _, n in pairs)
    assert sum(n for _, n in pairs) <= 300 + 1
    pv = ok(srv, "dosaku-pv b").split()
    assert pv[:2] == ["b", "E4"]
    assert pv[0::2] == ["b", "w"] * (len(pv) // 4) + ["b"] * (len(pv) // 2 % 2)
    assert stone_at(srv, "E4") == "."
    assert len(ok(srv, "printsgf").split(";")) == 2 + 20  # nothing was played


# ---- docs/gtp.md#client-quirks ----------------------------------------------------------------
def test_time_left_is_clamped_and_a_late_clock_still_moves_fast():
    engine = rollout_engine(playouts=0)
    srv = server(engine)
    ok(srv, "time_settings 60 0 0")
    ok(srv, "time_left b -12.5 0")  # gtp2ogs can report an overdrawn clock
    assert engine.time_left[BLACK] == (0.0, 0)
    ok(srv, "time_left w 1e300 0")
    assert engine.time_left[WHITE] == (1e7, 0)
    for bad in ("time_left b inf 0", "time_left b nan 0", "time_left b 10 -1"):
        assert fail(srv, bad) == "syntax error"
    assert engine._limits(BLACK).seconds == pytest.approx(0.05)  # the minimum, not a stall
    assert re.fullmatch(VERTEX + "|pass", ok(srv, "genmove b"))


def test_resign_is_not_a_vertex_for_play():
    srv = server(rollout_engine())
    assert fail(srv, "play b resign") == "syntax error"
    assert fail(srv, "play resign") == "syntax error"
    assert fail(srv, "boardsize 26") == "unacceptable size"
    assert ok(srv, "printsgf").count(";") == 1  # nothing was played


SCRIPT = """boardsize 9
clear_board
komi 6.5
2 play b e5
play w c3
play b resign
time_settings 300 30 5
time_left b 290 0
kata-time_settings fischer-capped 300 10 600 -1
kata-list_time_settings
kgs-time_settings byoyomi 600 30 5
kgs-rules japanese
kata-get-rules
final_status_list dead
showboard
undo
gg-undo 1
gogui-analyze_commands
kgs-chat game x hi
kgs-game_over
set_free_handicap
fixed_handicap 2
printsgf
7 foo
list_commands
quit"""


def test_crlf_and_lf_give_the_same_answers():
    answers = {}
    for ending in ("\n", "\r\n", "\r\r\n"):
        srv = server(rollout_engine())
        answers[ending] = [srv.handle_line(line + ending) for line in SCRIPT.split("\n")]
    assert answers["\n"] == answers["\r\n"] == answers["\r\r\n"]
    assert all(a.endswith("\n\n") and "\r" not in a for a in answers["\n"])
