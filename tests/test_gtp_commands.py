"""Every GTP command through GtpServer.handle_line (no subprocess)."""

import re

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.free_handicap import free_handicap_points
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.timecontrol import TimeSettings
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.server import GtpServer
from tests.gtp_answers import fail, ok

EXPECTED_COMMANDS = sorted("""
protocol_version name version known_command list_commands quit boardsize clear_board komi
get_komi play genmove undo gg-undo showboard final_score final_status_list fixed_handicap
place_free_handicap set_free_handicap loadsgf printsgf reg_genmove time_settings time_left
kgs-time_settings kgs-rules kata-get-rules kata-set-rules clear_cache cputime lz-analyze
kata-analyze lz-genmove_analyze kata-genmove_analyze kata-time_settings kata-list_time_settings
kgs-genmove_cleanup kgs-game_over kgs-chat gogui-analyze_commands dosaku-policy dosaku-ownership
dosaku-visits dosaku-pv dosaku-gfx dosaku-territory dosaku-winrates gogui-interrupt
kata-get-param kata-set-param dosaku-param
""".split())


@pytest.fixture
def srv():
    return GtpServer(Commands(EngineLoader.of(Engine(9, 9, 7.5))))


def board_rows(srv) -> list[str]:
    """The rows of showboard as strings of X/O/., top row first."""
    rows = [ln for ln in ok(srv, "showboard").splitlines() if re.match(r"^ ?\d+ ", ln)]
    return ["".join(ln.split()[1:-1]) for ln in rows]


def state(srv) -> tuple:
    return (ok(srv, "showboard"), ok(srv, "get_komi"), ok(srv, "kata-get-rules"),
            ok(srv, "printsgf"))


# ---- administration --------------------------------------------------------------------------
def test_admin_commands(srv):
    assert srv.handle_line("protocol_version") == "= 2\n\n"
    assert srv.handle_line("3 name") == "=3 Dosaku\n\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+", ok(srv, "version"))


def test_version_matches_setup_cfg(srv):
    from pathlib import Path
    cfg = (Path(__file__).resolve().parents[1] / "setup.cfg").read_text()
    assert f"version = {ok(srv, 'version')}" in cfg


def test_list_commands_is_exactly_the_implemented_set(srv):
    assert ok(srv, "list_commands").split("\n") == EXPECTED_COMMANDS
    for name in EXPECTED_COMMANDS:
        assert ok(srv, f"known_command {name}") == "true"
        if name != "quit":  # every listed command is wired to something that answers
            assert srv.handle_line(f"{name} !bad! !args! x y z").endswith("\n\n")
    for name in ("foo", "analyze", "genmove_analyze", "gogui-sigint", "PLAY"):
        assert ok(srv, f"known_command {name}") == "false"
    assert fail(srv, "known_command") == "syntax error"


def test_unknown_command_and_ids(srv):
    assert srv.handle_line("1 foo") == "?1 unknown command\n\n"
    assert srv.handle_line("foo bar") == "? unknown command\n\n"
    assert srv.handle_line("17") == "?17 unknown command\n\n"
    assert srv.handle_line("# comment only") == ""
    assert srv.handle_line("\r\n") == ""


def test_quit(srv):
    assert srv.handle_line("9 quit") == "=9 \n\n"
    assert srv.commands.quit_requested


# ---- board set-up ----------------------------------------------------------------------------
def test_boardsize_and_clear_board(srv):
    ok(srv, "play b e5")
    for bad in ("0", "1", "26", "100"):
        assert fail(srv, f"boardsize {bad}") == "unacceptable size"
    assert fail(srv, "boardsize x") == "syntax error"
    assert fail(srv, "boardsize") == "syntax error"
    assert board_rows(srv)[4] == "....X...."  # failures changed nothing
    ok(srv, "boardsize 5")
    assert board_rows(srv) == ["....."] * 5
    ok(srv, "boardsize 25")
    assert len(board_rows(srv)) == 25
    ok(srv, "boardsize 7 5")  # rectangular: width 7, height 5
    assert board_rows(srv) == ["......."] * 5
    ok(srv, "boardsize 9")
    ok(srv, "play b a1")
    ok(srv, "clear_board")
    assert board_rows(srv) == ["........."] * 9


def test_komi(srv):
    ok(srv, "komi 6.5")
    assert ok(srv, "get_komi") == "6.5"
    ok(srv, "komi -3")
    assert ok(srv, "get_komi") == "-3"
    for bad in ("komi abc", "komi", "komi nan", "komi 1 2"):
        assert fail(srv, bad) == "syntax error"
    assert ok(srv, "get_komi") == "-3"


# ---- moves -----------------------------------------------------------------------------------
def test_play_coordinates(srv):
    ok(srv, "play B J9")  # column J (no I), top right
    ok(srv, "play white a1")
    ok(srv, "play b pass")
    rows = board_rows(srv)
    assert rows[0] == "........X" and rows[8] == "O........"
    for bad in ("play b i5", "play b k1", "play b a10", "play b a0", "play x a1", "play b zz",
                "play b", "play"):
        assert fail(srv, bad) == "syntax error", bad  # malformed: GTP v2 spec wording
    assert fail(srv, "play b a1") == "illegal move"  # well-formed but occupied
    assert board_rows(srv) == rows


def test_capture_and_prisoners(srv):
    for line in ("play b b1", "play w a1", "play b a2"):
        ok(srv, line)
    rows = board_rows(srv)
    assert rows[8] == ".X......." and rows[7] == "X........"
    assert "Black (X) captured 1" in ok(srv, "showboard")


def test_suicide(srv):
    for line in ("play b b1", "play b b2", "play b a3", "play w a1", "play b e5"):
        ok(srv, line)
    assert fail(srv, "play w a2") == "illegal move"  # chinese: no suicide
    ok(srv, "kata-set-rules tromp-taylor")
    ok(srv, "play w a2")  # two-stone suicide is a legal move under Tromp-Taylor
    rows = board_rows(srv)
    assert rows[4] == "....X...." and rows[6:] == ["X........", ".X.......", ".X......."]
    assert "Black (X) captured 2" in ok(srv, "showboard")
    # single-stone suicide would repeat the position: positional superko forbids it
    assert fail(srv, "play w a1") == "illegal move"


def test_simple_ko(srv):
    for line in ("play b e6", "play b d5", "play b e4",  # black surrounds E5 on three sides
                 "play w f6", "play w g5", "play w f4",  # white surrounds F5 on three sides
                 "play w e5",                           # a white stone in black's mouth
                 "play b f5"):                          # black captures it: a ko
        ok(srv, line)
    assert board_rows(srv)[4] == "...X.XO.."
    assert fail(srv, "play w e5") == "illegal move"  # immediate recapture
    ok(srv, "play w a1")  # ko threat and answer
    ok(srv, "play b a9")
    ok(srv, "play w e5")  # now the recapture is legal
    assert board_rows(srv)[4] == "...XO.O.."


# 3x3: after these moves Black's B1 captures A1 and recreates the position after move 4
# (B: A2 B1, W: B2 C2), with White to move where it was Black to move then. It is not a
# simple ko (B1 has two liberties after the capture).
CYCLE = ["b A2", "w C2", "b B1", "w B2", "b C1", "w A1"]


@pytest.mark.parametrize("rules, legal", [("chinese", True), ("chinese-ogs", False),
                                          ("tromp-taylor", False), ("aga", True)])
def test_superko(srv, rules, legal):
    ok(srv, "boardsize 3")
    ok(srv, f"kata-set-rules {rules}")
    for move in CYCLE:
        ok(srv, "play " + move)
    assert board_rows(srv) == ["...", "XOO", "O.."]
    if legal:  # simple ko, or situational superko (the player to move differs)
        ok(srv, "play b B1")
        assert board_rows(srv) == ["...", "XOO", ".X."]
    else:
        assert fail(srv, "play b B1") == "illegal move"
        assert board_rows(srv) == ["...", "XOO", "O.."]


def test_undo_and_gg_undo(srv):
    assert fail(srv, "undo") == "cannot undo"
    ok(srv, "play b e5")
    ok(srv, "play w c3")
    ok(srv, "play b g7")
    assert fail(srv, "gg-undo 4") == "cannot undo"
    assert board_rows(srv)[2] == "......X.."  # nothing undone
    ok(srv, "gg-undo 2")
    assert board_rows(srv)[6] == "........." and board_rows(srv)[2] == "........."
    ok(srv, "gg-undo")
    assert board_rows(srv) == ["........."] * 9
    assert fail(srv, "undo") == "cannot undo"
    assert fail(srv, "gg-undo x") == "syntax error"


def test_undo_restores_captured_stones(srv):
    for line in ("play b b1", "play w a1", "play b a2"):
        ok(srv, line)
    ok(srv, "undo")
    assert board_rows(srv)[8] == "OX......."
    assert "Black (X) captured 0" in ok(srv, "showboard")


def test_genmove_plays_a_legal_move_and_reg_genmove_does_not(srv):
    before = board_rows(srv)
    v = ok(srv, "reg_genmove b")
    assert re.fullmatch(r"[A-HJ][1-9]|pass", v)
    assert board_rows(srv) == before
    v = ok(srv, "1 genmove w").lstrip("1").strip()
    assert re.fullmatch(r"[A-HJ][1-9]", v)
    col, row = "ABCDEFGHJ".index(v[0]), int(v[1:])
    assert board_rows(srv)[9 - row][col] == "O"
    assert fail(srv, "genmove x") == "syntax error"
    assert fail(srv, "genmove") == "syntax error"


def test_malformed_color_or_vertex_is_a_syntax_error_and_changes_nothing(srv):
    """GTP v2: malformed arguments answer `syntax error`; `illegal move` only for a
    well-formed move the rules forbid."""
    srv.handle_line("play b e5")
    before = state(srv)
    transcript = [
        ("1 play x D4", "?1 syntax error"), ("2 play b", "?2 syntax error"),
        ("3 play b Z9", "?3 syntax error"), ("4 play b K5", "?4 syntax error"),
        ("5 play b resign", "?5 syntax error"), ("6 play", "?6 syntax error"),
        ("7 play b e5", "?7 illegal move"), ("8 genmove x", "?8 syntax error"),
        ("9 reg_genmove purple", "?9 syntax error"),
        ("10 kgs-genmove_cleanup 1", "?10 syntax error"),
        ("11 time_left x 10 0", "?11 syntax error"), ("12 dosaku-policy y", "?12 syntax error"),
        ("13 dosaku-visits x", "?13 syntax error"), ("14 dosaku-pv b4", "?14 syntax error"),
    ]
    for line, answer in transcript:
        assert srv.handle_line(line) == answer + "\n\n", line
    assert state(srv) == before


# ---- handicap --------------------------------------------------------------------------------
GNUGO_FIXED = {  # GNU Go 3.8 answers on 19x19 (docs/gtp.md#handicap)
    2: "Q16 D4", 3: "D16 Q16 D4", 4: "D16 Q16 D4 Q4", 5: "D16 Q16 K10 D4 Q4",
    6: "D16 Q16 D10 Q10 D4 Q4", 7: "D16 Q16 D10 K10 Q10 D4 Q4",
    8: "D16 K16 Q16 D10 Q10 D4 K4 Q4", 9: "D16 K16 Q16 D10 K10 Q10 D4 K4 Q4",
}


@pytest.mark.parametrize("n", sorted(GNUGO_FIXED))
def test_fixed_handicap_layouts_19(srv, n):
    ok(srv, "boardsize 19")
    assert ok(srv, f"fixed_handicap {n}") == GNUGO_FIXED[n]
    assert sum(r.count("X") for r in board_rows(srv)) == n


def test_fixed_handicap_small_boards_and_errors(srv):
    assert ok(srv, "fixed_handicap 2") == "G7 C3"
    ok(srv, "boardsize 13")
    assert ok(srv, "fixed_handicap 5") == "D10 K10 G7 D4 K4"
    ok(srv, "clear_board")
    assert fail(srv, "fixed_handicap 1") == "invalid number of stones"
    assert fail(srv, "fixed_handicap 10") == "invalid number of stones"
    assert fail(srv, "fixed_handicap two") == "syntax error"
    ok(srv, "boardsize 8")
    assert fail(srv, "fixed_handicap 5") == "invalid number of stones"
    ok(srv, "boardsize 19")
    ok(srv, "play b a1")
    assert fail(srv, "fixed_handicap 2") == "board not empty"


def test_handicap_stones_are_not_undoable_and_white_moves_next(srv):
    ok(srv, "boardsize 19")
    ok(srv, "fixed_handicap 4")
    assert fail(srv, "undo") == "cannot undo"
    assert "white to move" in ok(srv, "showboard")
    ok(srv, "play w k10")
    ok(srv, "undo")
    assert sum(r.count("X") for r in board_rows(srv)) == 4


def test_set_free_handicap(srv):
    assert fail(srv, "set_free_handicap D4 D4") == "bad vertex list"
    assert fail(srv, "set_free_handicap D4") == "bad vertex list"
    assert fail(srv, "set_free_handicap D4 pass") == "bad vertex list"
    assert fail(srv, "set_free_handicap D4 Z9") == "bad vertex list"
    assert board_rows(srv) == ["........."] * 9
    ok(srv, "set_free_handicap C3 G7 E5")
    rows = board_rows(srv)
    assert rows[6][2] == rows[2][6] == rows[4][4] == "X"
    assert fail(srv, "set_free_handicap A1 A2") == "board not empty"


def test_place_free_handicap(srv):
    ok(srv, "boardsize 19")
    vs = ok(srv, "place_free_handicap 4").split()
    assert sorted(vs) == sorted(GNUGO_FIXED[4].split())
    ok(srv, "clear_board")
    vs = ok(srv, "place_free_handicap 12").split()
    assert len(set(vs)) == 12
    assert sum(r.count("X") for r in board_rows(srv)) == 12
    assert fail(srv, "place_free_handicap 3") == "board not empty"
    ok(srv, "boardsize 3")
    assert len(ok(srv, "place_free_handicap 100").split()) == 8  # capped at W*H - 1
    ok(srv, "clear_board")
    assert fail(srv, "place_free_handicap 1") == "invalid number of stones"


def test_free_handicap_points_spread_and_distinct():
    for size in (2, 5, 6, 9, 19, 25):
        for n in {min(n, size * size - 1) for n in (2, 5, 17, size * size)}:
            pts = free_handicap_points(n, size, size)
            assert len(pts) == len(set(pts)) == n


# ---- scoring ---------------------------------------------------------------------------------
def test_final_score(srv):
    assert ok(srv, "final_score") == "W+7.5"  # empty board: komi only
    ok(srv, "boardsize 5")
    ok(srv, "komi 0.5")
    ok(srv, "play b c3")
    assert ok(srv, "final_score") == "B+24.5"  # area: all 25 points are black's
    ok(srv, "komi 0")
    ok(srv, "clear_board")
    assert ok(srv, "final_score") == "0"
    # a 5x5 split board: black columns A-B (10), white D-E (10), C empty dame
    for v in ("a1", "a2", "a3", "a4", "a5"):
        ok(srv, f"play b b{v[1]}")
        ok(srv, f"play w d{v[1]}")
    ok(srv, "komi 0.5")
    assert ok(srv, "final_score") == "W+0.5"


def test_final_status_list(srv):
    ok(srv, "play b c3")
    ok(srv, "play b c4")
    ok(srv, "play w g7")
    alive = ok(srv, "final_status_list alive").split("\n")
    assert sorted(sorted(line.split()) for line in alive) == [["C3", "C4"], ["G7"]]
    assert ok(srv, "final_status_list dead") == ""
    assert ok(srv, "final_status_list seki") == ""
    assert fail(srv, "final_status_list foo") == "invalid status"


# ---- time ------------------------------------------------------------------------------------
def test_time_settings_never_reset_the_game(srv):
    engine = srv.commands.engine
    ok(srv, "play b e5")
    ok(srv, "time_settings 300 30 5")
    assert engine.time == TimeSettings(300, 30, 5, 0)
    ok(srv, "time_settings 300 30 5")
    ok(srv, "time_left b 290 0")
    ok(srv, "time_left white 12.5 3")
    assert engine.time_left == {BLACK: (290, 0), WHITE: (12.5, 3)}
    assert board_rows(srv)[4] == "....X...."
    ok(srv, "undo")  # the history is intact
    ok(srv, "time_settings 0 10 0")  # byo time, no stones: no time limit
    assert engine.time.main_time < 0
    ok(srv, "time_settings 600 0 0")  # absolute
    assert engine.time == TimeSettings(600, 0, 0, 0)


def test_kgs_time_settings(srv):
    engine = srv.commands.engine
    ok(srv, "kgs-time_settings byoyomi 600 30 5")
    assert engine.time == TimeSettings(600, 30, 1, 5)
    ok(srv, "kgs-time_settings canadian 600 300 25")
    assert engine.time == TimeSettings(600, 300, 25, 0)
    ok(srv, "kgs-time_settings absolute 900")
    assert engine.time == TimeSettings(900, 0, 0, 0)
    ok(srv, "kgs-time_settings none")
    assert engine.time.main_time < 0
    for bad in ("kgs-time_settings", "kgs-time_settings fischer 10 5",
                "kgs-time_settings byoyomi 600 30", "kgs-time_settings absolute -5",
                "time_settings 1 2", "time_settings a b c", "time_settings -1 0 0",
                "time_left b x 0", "time_left q 10 0"):
        assert fail(srv, bad) == "syntax error", bad
    assert engine.time.main_time < 0


def test_kata_time_settings(srv):
    engine = srv.commands.engine
    assert ok(srv, "kata-list_time_settings") == "none absolute byoyomi canadian fischer " \
        "fischer-capped"
    ok(srv, "play b e5")
    ok(srv, "kata-time_settings fischer 300 5.5")
    assert engine.time == TimeSettings(300, increment=5.5)
    ok(srv, "kata-time_settings fischer-capped 300 10 600 -1")
    assert engine.time == TimeSettings(300, increment=10, main_time_cap=600, max_per_move=-1)
    ok(srv, "kata-time_settings fischer-capped 300 10 -1 30")
    assert engine.time == TimeSettings(300, increment=10, main_time_cap=-1, max_per_move=30)
    ok(srv, "kata-time_settings byoyomi 600 30 5")  # the kgs kinds work too
    assert engine.time == TimeSettings(600, 30, 1, 5)
    ok(srv, "kata-time_settings none")
    assert engine.time.main_time < 0
    for bad in ("kata-time_settings fischer 300", "kata-time_settings fischer 300 -1",
                "kata-time_settings fischer-capped 300 10 200 -1",  # cap below main time
                "kata-time_settings fischer-capped 300 10 600", "kata-time_settings blitz 5",
                "kata-list_time_settings x"):
        assert fail(srv, bad) == "syntax error", bad
    assert engine.time.main_time < 0
    assert engine.moves == [(BLACK, engine.moves[0][1])]  # time commands never touch the game


# ---- rules -----------------------------------------------------------------------------------
def test_rules_commands(srv):
    import json
    assert json.loads(ok(srv, "kata-get-rules"))["ko"] == "SIMPLE"
    ok(srv, "kgs-rules japanese")
    got = json.loads(ok(srv, "kata-get-rules"))
    assert got["scoring"] == "TERRITORY" and got["tax"] == "SEKI"
    ok(srv, "kgs-rules chinese")
    assert json.loads(ok(srv, "kata-get-rules"))["ko"] == "POSITIONAL"
    ok(srv, "kata-set-rules tromp-taylor")
    assert json.loads(ok(srv, "kata-get-rules"))["suicide"] is True
    ok(srv, 'kata-set-rules {"ko": "SITUATIONAL", "scoring": "AREA"}')
    got = json.loads(ok(srv, "kata-get-rules"))
    assert got["ko"] == "SITUATIONAL" and got["suicide"] is True  # unnamed keys kept
    for bad in ("kgs-rules ing", "kata-set-rules foo", 'kata-set-rules {"ko": "NONE"}',
                "kata-set-rules {bad json", "kata-set-rules [1]"):
        assert fail(srv, bad) == "unknown rules"
    assert fail(srv, "kata-set-rules") == "syntax error"
    assert json.loads(ok(srv, "kata-get-rules"))["ko"] == "SITUATIONAL"


def test_clear_cache_and_cputime(srv):
    ok(srv, "clear_cache")
    assert float(ok(srv, "cputime")) >= 0.0
    assert fail(srv, "cputime 1") == "syntax error"


# ---- SGF -------------------------------------------------------------------------------------
SGF = "(;GM[1]FF[4]SZ[9]KM[6.5]HA[2]AB[cg][gc];W[ee];B[de];W[ff];B[ef];W[fe];B[df])"


def test_loadsgf_handicap_and_moves(srv, tmp_path):
    f = tmp_path / "g.sgf"
    f.write_text(SGF)
    assert ok(srv, f"loadsgf {f}") == "white"
    assert ok(srv, "get_komi") == "6.5"
    rows = board_rows(srv)
    assert rows[6][2] == rows[2][6] == "X"  # AB[cg] = C3, AB[gc] = G7
    assert rows[4][4] == "O" and rows[4][3] == "X" and rows[5][3] == "X"
    assert fail(srv, "gg-undo 7") == "cannot undo"  # handicap stones are not moves
    ok(srv, "gg-undo 6")
    assert sum(r.count("X") for r in board_rows(srv)) == 2
    assert ok(srv, f"loadsgf {f} 3") == "white"  # position before move 3 (W[ff])
    assert sum(r.count("X") + r.count("O") for r in board_rows(srv)) == 4


def test_loadsgf_setup_stones_and_errors(srv, tmp_path):
    f = tmp_path / "setup.sgf"
    f.write_text("(;SZ[5]AB[aa][bb]AW[cc];B[dd];AW[ee]AE[bb];W[ab])")
    assert ok(srv, f"loadsgf {f}") == "black"
    assert board_rows(srv) == ["X....", "O....", "..O..", "...X.", "....O"]
    ok(srv, "play b b2")
    before = state(srv)
    assert fail(srv, f"loadsgf {tmp_path / 'missing.sgf'}") == "cannot load file"
    bad = tmp_path / "bad.sgf"
    bad.write_text("this is not sgf")
    assert fail(srv, f"loadsgf {bad}") == "cannot load file"
    illegal = tmp_path / "illegal.sgf"
    illegal.write_text("(;SZ[9]KM[0.5];B[aa];W[aa])")
    assert fail(srv, f"loadsgf {illegal}") == "cannot load file"
    big = tmp_path / "big.sgf"
    big.write_text("(;SZ[30])")
    assert fail(srv, f"loadsgf {big}") == "cannot load file"
    assert state(srv) == before  # failures changed nothing
    assert fail(srv, "loadsgf") == "syntax error"
    assert fail(srv, f"loadsgf {f} 0") == "syntax error"


def test_setup_stones_are_not_moves_and_round_trip(srv, tmp_path):
    f = tmp_path / "setup.sgf"
    f.write_text("(;SZ[5]KM[0.5]AB[aa][bb]AW[cc][dd]PL[W])")
    assert ok(srv, f"loadsgf {f}") == "white"
    assert board_rows(srv) == ["X....", ".X...", "..O..", "...O.", "....."]
    assert "White to move" in ok(srv, "showboard").replace("white", "White")
    assert fail(srv, "undo") == "cannot undo"  # set-up stones are no moves
    text = ok(srv, "printsgf")
    assert "AB[aa][bb]" in text and "AW[cc][dd]" in text and "PL[W]" in text
    ok(srv, "play w e5")
    out = tmp_path / "again.sgf"
    ok(srv, f"printsgf {out}")
    before = state(srv)
    ok(srv, "clear_board")
    assert ok(srv, f"loadsgf {out}") == "black"
    assert state(srv) == before
    ok(srv, "undo")  # the move after the set-up is a move
    assert fail(srv, "undo") == "cannot undo"
    # a set-up chain without liberties is refused and changes nothing
    current = state(srv)
    bad = tmp_path / "dead.sgf"
    bad.write_text("(;SZ[5]AB[aa]AW[ba][ab])")
    assert fail(srv, f"loadsgf {bad}") == "cannot load file"
    assert state(srv) == current


def test_printsgf_round_trip(srv, tmp_path):
    ok(srv, "boardsize 9")
    ok(srv, "komi 5.5")
    ok(srv, "fixed_handicap 3")
    for line in ("play w e5", "play b d5", "play w pass", "play b e4", "play w f4", "play b e6",
                 "play w d4", "play b f5"):
        ok(srv, line)
    text = ok(srv, "printsgf")
    assert "\n\n" not in text and text.startswith("(;") and text.endswith(")")
    assert "SZ[9]" in text and "KM[5.5]" in text and "HA[3]" in text and ";W[]" in text
    before = state(srv)
    f = tmp_path / "out.sgf"
    assert ok(srv, f"printsgf {f}") == ""
    ok(srv, "boardsize 13")
    ok(srv, "komi 0")
    assert ok(srv, f"loadsgf {f}") == "white"
    assert state(srv) == before
    assert fail(srv, f"printsgf {tmp_path}/no/such/dir/x.sgf") == "cannot save file"


# ---- bad input changes nothing ---------------------------------------------------------------
BAD_LINES = [
    "boardsize 1", "boardsize abc", "komi x", "play b d4 extra", "play b q1", "play b e5",
    "fixed_handicap 2", "set_free_handicap a1 a1", "undo 1", "gg-undo 99", "genmove purple",
    "reg_genmove", "time_settings 1 2 x", "kgs-rules foo", "kata-set-rules {}x", "loadsgf /nope",
    "lz-analyze b foo", "kata-analyze b 10 ownership maybe", "lz-genmove_analyze q 10",
    "final_status_list", "printsgf a b", "\x00\x01\x02", "12 \xff\xfe",
]


def test_bad_input_changes_nothing(srv):
    ok(srv, "play b e5")
    ok(srv, "play w c3")
    before = state(srv)
    for line in BAD_LINES:
        answer = srv.handle_line(line)
        assert answer == "" or answer.startswith("?"), (line, answer)
    assert state(srv) == before


class KomiRecorder:
    """Uniform policy and a komi-dependent value; records the komi and position of every
    position it is asked to evaluate."""

    capabilities = Capabilities(needs_history=False)

    def __init__(self):
        self.seen = []  # (komi, position hash) per evaluated position

    def evaluate(self, batch):
        n = batch.count
        self.seen += [(batch.komi, int(k)) for k in batch.boards[:n, B.ROW_HEADER, B.H_HASH]]
        legal = batch.legal[:n].astype(np.float32)
        white = np.where(batch.to_move[:n] == WHITE, 1.0, -1.0)
        value = np.tanh(white * batch.komi / 10).astype(np.float32)
        return Evaluation(legal / legal.sum(1, keepdims=True), value, 0 * value, None)


def test_komi_change_mid_game_reaches_the_next_search():
    """After `komi` the next genmove evaluates every position, its root included, under the new
    komi: no stale tree and no evaluation cached under the old one."""
    rec = KomiRecorder()
    config = EngineConfig(search=SearchConfig(batch_size=4, cache_size=1024), visits=64)
    gtp = GtpServer(Commands(EngineLoader.of(Engine(9, 9, 7.5, evaluator=rec, config=config))))
    for line in ("play b E5", "play w C3", "genmove b"):
        ok(gtp, line)
    before = set(rec.seen)
    assert before and {k for k, _ in before} == {7.5}
    rec.seen.clear()
    assert ok(gtp, "komi 0.5") == ""
    assert ok(gtp, "get_komi") == "0.5"
    ok(gtp, "genmove w")
    assert rec.seen and {k for k, _ in rec.seen} == {0.5}
    # Positions evaluated (and cached) under the old komi were evaluated again.
    assert len({h for _, h in before} & {h for _, h in rec.seen}) > 1
