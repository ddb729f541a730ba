"""tournament.match, tournament.elo: Elo math and scoring by hand, short real matches, restarts.

Every scored game is replayed from its SGF into an engine.rules.game.GameState under the match's
rules: the recorded score and result must be that GameState's.
"""

import json
import math
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sgfmill import common, sgf

from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import parse_vertex, xy_from_point
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import result_string, rules_by_name
from dosaku.tournament.elo import Z95, elo_from_score, estimate, format_elo, wilson_interval
from dosaku.tournament.match import main
from dosaku.tournament.match_game import (
    MatchConfig,
    MatchError,
    MoveTimer,
    game_result,
    parse_final_score,
    random_opening,
    read_opening_file,
)

ROOT = Path(__file__).resolve().parents[1]


class ScriptedTimer(MoveTimer):
    """Charges every genmove of a colour the same scripted seconds instead of the wall time, so
    clock tests do not depend on how busy the machine is."""

    def __init__(self, black: float, white: float):
        self.seconds = {BLACK: black, WHITE: white}

    def genmove(self, color, send):
        return send(), self.seconds[color]


def load(out) -> dict:
    return json.loads((Path(out) / "match.json").read_text())


def sgf_moves(path):
    """The SGF game and its moves as (colour, GTP vertex)."""
    game = sgf.Sgf_game.from_bytes(Path(path).read_bytes())
    moves = [n.get_move() for n in game.get_main_sequence()[1:]]
    return game, [(c, common.format_vertex(p)) for c, p in moves]


def replay(size: int, komi: float, rules: str, moves) -> GameState:
    """A GameState with (colour, vertex) moves played; each must be legal."""
    game = GameState(size, size, komi, rules_by_name(rules))
    for color, v in moves:
        color = BLACK if color == "b" else WHITE
        assert game.play(color, parse_vertex(v, size, size)) == MOVE_OK
    return game


def assert_scored_by_rules(out, g, size=7, komi=7.5, rules="chinese"):
    """The game's SGF replayed under the rules gives exactly the recorded score and result."""
    game, moves = sgf_moves(Path(out) / g["sgf"])
    state = replay(size, komi, rules, moves)
    assert g["scorer"] == rules and g["score"] == state.score()
    assert g["result"] == game.get_root().get("RE") == result_string(state.score())


# ---- Elo and interval -----------------------------------------------------------------------

def test_elo_from_score_hand_values():
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.75) == pytest.approx(400 * 0.47712125472, abs=1e-6)  # 400 log10 3
    assert elo_from_score(0.25) == pytest.approx(-190.8485, abs=1e-3)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(0.7, 10)          # textbook Wilson 95 % interval for 7/10
    assert lo == pytest.approx(0.3968, abs=1e-4) and hi == pytest.approx(0.8922, abs=1e-4)
    lo, hi = wilson_interval(1.0, 10)          # closed form at p = 1: n / (n + z^2)
    assert hi == 1.0 and lo == pytest.approx(10 / (10 + Z95 ** 2), abs=1e-12)
    lo, hi = wilson_interval(0.0, 10)
    assert lo == 0.0 and hi == pytest.approx(Z95 ** 2 / (10 + Z95 ** 2), abs=1e-12)


def test_estimate_counts_draws_half():
    e = estimate(7, 0, 3)
    assert e.score == 0.7 and e.elo == pytest.approx(147.19, abs=0.01)
    assert e.elo_low == pytest.approx(400 * math.log10(0.39678 / 0.60322), abs=0.1)
    e = estimate(2, 2, 0)
    assert e.score == 0.75 and e.elo == pytest.approx(190.85, abs=0.01)
    e = estimate(5, 0, 0)
    assert e.elo == math.inf and math.isfinite(e.elo_low) and e.elo_low > 0
    assert (format_elo(e.elo), format_elo(-12.4), format_elo(0.0)) == ("+inf", "-12", "+0")


# ---- our rules as the scorer, openings ---------------------------------------------------------

WALLS = [m for row in "12345" for m in (("b", f"C{row}"), ("w", f"D{row}"))]


@pytest.mark.parametrize("rules, moves, dead, expected", [
    ("chinese", [], [], -0.5),
    ("chinese", [("b", "C3")], [], 25 - 0.5),
    ("chinese", WALLS, [], 15 - 10 - 0.5),                       # stones + area: 15 v 10
    ("japanese", WALLS, [], 10 - 5 - 0.5),                       # territory only: 10 v 5
    ("chinese", [("b", "A1"), ("w", "E5")], [], -0.5),           # shared region: nobody's
    # a white stone left in black's area is not removed: the 9 points around it are neutral
    ("chinese", WALLS + [("w", "A1")], [], 5 - 11 - 0.5),
    ("japanese", WALLS + [("w", "A1")], [], 0 - 5 - 0.5),
    # marked dead it is removed: black gets all 10 points, plus a prisoner under territory rules
    ("chinese", WALLS + [("w", "A1")], ["A1"], 15 - 10 - 0.5),
    ("japanese", WALLS + [("w", "A1")], ["A1"], 10 + 1 - 5 - 0.5),
])
def test_score_of_known_positions(rules, moves, dead, expected):
    game = replay(5, 0.5, rules, moves)
    mask = np.zeros(game.board.shape[1], dtype=np.bool_)
    for v in dead:
        mask[parse_vertex(v, 5, 5)] = True
    assert game.score(mask if dead else None) == expected


def test_random_opening_legal_deterministic_off_edge():
    cfg = MatchConfig(engines=[], games=1, size=9, komi=7.5, out="")
    a = random_opening(cfg, 6, random.Random("0:3"))
    assert a == random_opening(cfg, 6, random.Random("0:3"))
    assert a != random_opening(cfg, 6, random.Random("0:4"))
    assert [c for c, _ in a] == [BLACK, WHITE] * 3
    game = cfg.new_game()
    for color, p in a:
        assert game.play(color, p) == MOVE_OK
        x, y = xy_from_point(p, 9)
        assert 1 <= x <= 7 and 1 <= y <= 7


def test_opening_file(tmp_path):
    cfg = MatchConfig(engines=[], games=1, size=7, komi=7.5, out="")
    f = tmp_path / "open.txt"
    f.write_text("# openings\nC3 E5\n\nD4  # centre\n")
    assert read_opening_file(str(f), cfg) == [[(BLACK, parse_vertex("C3", 7, 7)),
                                               (WHITE, parse_vertex("E5", 7, 7))],
                                              [(BLACK, parse_vertex("D4", 7, 7))]]
    f.write_text("C3 C3\n")
    with pytest.raises(MatchError, match="illegal opening move C3 .occupied"):
        read_opening_file(str(f), cfg)
    f.write_text("Z9\n")
    with pytest.raises(MatchError, match="not a vertex"):
        read_opening_file(str(f), cfg)


def test_result_strings_and_final_score():
    assert game_result(BLACK, "passes", 3.5) == "B+3.5"
    assert game_result(WHITE, "max-moves", -12.0) == "W+12"
    assert game_result(WHITE, "resign", None) == "W+R"
    assert game_result(BLACK, "timeout", None) == "B+T"
    assert game_result(WHITE, "illegal", None) == "W+F"
    assert game_result(BLACK, "crash", None) == "B+F"
    assert game_result(None, "passes", 0.0) == "0"
    assert game_result(None, "void", None) == "Void"
    assert parse_final_score("B+3.5") == 3.5 and parse_final_score("W+0.5") == -0.5
    assert parse_final_score("0") == 0.0
    with pytest.raises(ValueError):
        parse_final_score("cannot score")


# ---- real matches ------------------------------------------------------------------------------

BASE = ["--size", "7", "--komi", "7.5", "--max-moves", "50", "--no-progress"]


@pytest.fixture(scope="module")
def gnugo_match(gnugo_level0, tmp_path_factory):
    out = tmp_path_factory.mktemp("m") / "match"
    args = [gnugo_level0, gnugo_level0, "--games", "4", "--openings", "3", "--parallel", "2",
            "--rules", "chinese", "--out", str(out)] + BASE
    assert main(args) == 0
    return out, args


def test_match_files_consistent(gnugo_match, capsys):
    out, _ = gnugo_match
    data = load(out)
    games = data["games"]
    assert [g["game"] for g in games] == [0, 1, 2, 3]
    assert [(g["black"], g["white"]) for g in games] == [(1, 2), (2, 1)] * 2
    wins = {1: 0, 2: 0}
    for g in games:
        game, moves = sgf_moves(out / g["sgf"])
        root = game.get_root()
        assert game.get_size() == 7 and root.get("KM") == 7.5 and root.get("RU") == "chinese"
        assert root.get("PB") == root.get("PW") == "GNU Go"
        assert root.get("RE") == g["result"]
        assert len(moves) == g["moves"] <= 50 and g["opening"] == 3
        assert g["reason"] in ("passes", "max-moves", "resign")
        if g["reason"] in ("passes", "max-moves"):
            assert_scored_by_rules(out, g)
        assert g["winner"] == g["result"][0]
        assert g["winner_engine"] == (g["black"] if g["winner"] == "B" else g["white"])
        wins[g["winner_engine"]] += 1
    # games 2k and 2k+1 share their opening
    assert sgf_moves(out / games[0]["sgf"])[1][:3] == sgf_moves(out / games[1]["sgf"])[1][:3]
    s = data["summary"]
    assert (s["games"], s["engine1_wins"], s["engine2_wins"]) == (4, wins[1], wins[2])
    assert s["black_wins"] + s["white_wins"] + s["draws"] == 4
    e = estimate(wins[1], 0, wins[2])
    assert s["engine1_score"] == round(e.score, 4)


def test_match_restart_skips_finished_games(gnugo_match, tmp_path, capsys):
    src, args = gnugo_match
    out = tmp_path / "copy"
    shutil.copytree(src, out)
    args = [a if a != str(src) else str(out) for a in args]
    stamp = {p.name: p.stat().st_mtime_ns for p in out.glob("*.sgf")}
    before = load(out)["games"]
    assert main(args) == 0
    assert load(out)["games"] == before
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.sgf")} == stamp
    assert "engine 1 wins" in capsys.readouterr().out

    (out / "game-0002.sgf").unlink()                   # a lost SGF is replayed
    args6 = [a if a != "4" else "6" for a in args]     # and more games are added
    assert main(args6) == 0
    after = load(out)["games"]
    assert [g["game"] for g in after] == list(range(6))
    assert after[0] == before[0] and after[2:4] == before[2:4]
    for name in ("game-0001.sgf", "game-0003.sgf", "game-0004.sgf"):
        assert (out / name).stat().st_mtime_ns == stamp[name]
    assert all((out / f"game-000{i}.sgf").exists() for i in range(1, 7))

    changed = [a if a != "7.5" else "6.5" for a in args]
    assert main(changed) == 2


def run_pair(tmp_path, e1, e2, games, *extra, timer=None):
    out = tmp_path / "out"
    assert main([e1, e2, "--games", str(games), "--out", str(out)] + BASE + list(extra),
                timer) == 0
    return load(out)["games"]


@pytest.mark.parametrize("mode, reason, detail", [
    ("illegal", "illegal", "occupied"),
    ("garbage", "illegal", "unreadable"),
    ("crash", "crash", "exited"),
    ("resign", "resign", ""),
])
def test_misbehaving_engine_loses(fake_engine, gnugo_level0, tmp_path, mode, reason, detail):
    games = run_pair(tmp_path, fake_engine(mode), gnugo_level0, 2)
    for g in games:
        assert g["winner_engine"] == 2 and g["reason"] == reason and detail in g["detail"]
        loser = "B" if g["black"] == 1 else "W"
        code = {"illegal": "F", "crash": "F", "resign": "R"}[reason]
        assert g["result"] == ("W" if loser == "B" else "B") + "+" + code
        assert g["black_name" if loser == "B" else "white_name"] == f"Fake {mode}"


def test_timeout_loses(fake_engine, tmp_path):
    # black's passes are charged nothing; white's hang is waited for on the real clock
    games = run_pair(tmp_path, fake_engine("pass"), fake_engine("hang"), 1, "--move-time", "0.2",
                     "--time-margin", "0.2", timer=ScriptedTimer(0.0, 0.0))
    g = games[0]
    assert (g["reason"], g["winner_engine"], g["result"]) == ("timeout", 1, "B+T")
    assert g["moves"] == 1  # black passed, white hung on its first genmove


def test_passes_end_and_score(fake_engine, tmp_path):
    g = run_pair(tmp_path, fake_engine("pass"), fake_engine("pass"), 1)[0]
    assert (g["reason"], g["moves"], g["score"], g["result"]) == ("passes", 2, -7.5, "W+7.5")
    assert g["scorer"] == "chinese"


KO = ("C2,B3,C4,A1,D3", "D2,E3,D4,C3,C3")         # white retakes the ko at once
SELF_CAPTURE = ("A2,B1", "E5,A1")                  # white fills A1 with no liberty


@pytest.mark.parametrize("rules, script, why", [
    ("chinese", KO, "W C3: ko"),
    ("tromp-taylor", KO, "W C3: ko"),
    ("chinese", SELF_CAPTURE, "W A1: suicide"),
    # suicide is legal here, but a lone stone's suicide repeats the position
    ("tromp-taylor", SELF_CAPTURE, "W A1: superko"),
    ("new-zealand", SELF_CAPTURE, None),            # legal: the game goes on to two passes
])
def test_moves_judged_by_the_match_rules(fake_engine, tmp_path, rules, script, why):
    out = tmp_path / "out"
    args = [fake_engine("script", script[0]), fake_engine("script", script[1]), "--games", "1",
            "--size", "5", "--komi", "0.5", "--rules", rules, "--out", str(out), "--no-progress"]
    assert main(args) == 0
    g = load(out)["games"][0]
    _, moves = sgf_moves(out / g["sgf"])
    played = [m for pair in zip(*(s.split(",") for s in script)) for m in pair]
    if why:
        assert (g["reason"], g["detail"], g["result"]) == ("illegal", why, "B+F")
        assert [v for _, v in moves] == played[:-1]       # the illegal move is not recorded
    else:
        assert g["reason"] == "passes" and [v for _, v in moves] == played + ["pass", "pass"]
        assert_scored_by_rules(out, g, 5, 0.5, rules)
        assert g["score"] == 3 - 1 - 0.5                 # A1 is empty again: B A2 B1, W E5


def test_rejected_move_and_void_opening(fake_engine, tmp_path):
    g = run_pair(tmp_path, fake_engine("picky"), fake_engine("illegal"), 1)[0]
    # engine 2 (white) plays a legal move that engine 1 refuses: the mover loses
    assert g["reason"] == "illegal" and g["winner_engine"] == 1
    assert "rejected by opponent" in g["detail"]
    shutil.rmtree(tmp_path / "out")
    g = run_pair(tmp_path, fake_engine("picky"), fake_engine("pass"), 2, "--openings", "1")[0]
    assert (g["reason"], g["result"], g["winner_engine"]) == ("void", "Void", None)
    assert load(tmp_path / "out")["summary"]["void"] == 2


def test_max_moves_and_referee(gnugo, gnugo_level0, tmp_path):
    games = run_pair(tmp_path, gnugo_level0, gnugo_level0, 1, "--max-moves", "6", "--referee",
                     f"{gnugo} --mode gtp --chinese-rules --level 0")
    g = games[0]
    assert (g["reason"], g["moves"], g["scorer"]) == ("max-moves", 6, "referee")
    # the same position scored by a separate GNU Go via loadsgf
    sgf_path = tmp_path / "out" / g["sgf"]
    gtp = f"loadsgf {sgf_path}\nfinal_score\nquit\n"
    answer = subprocess.run([gnugo, "--mode", "gtp", "--chinese-rules", "--level", "0"],
                            input=gtp, capture_output=True, text=True, timeout=30).stdout
    assert f"= {g['result']}" in answer


def test_referee_failure_falls_back(fake_engine, tmp_path):
    g = run_pair(tmp_path, fake_engine("pass"), fake_engine("pass"), 1, "--referee",
                 fake_engine("judge", "final=junk"))[0]
    assert g["scorer"] == "chinese" and "referee failed" in g["detail"]
    assert g["result"] == "W+7.5"
    assert load(tmp_path / "out")["summary"]["scorers"] == {"chinese": 1}


@pytest.mark.parametrize("referee", ["sh -c 'exec no-such-referee-engine'", "pass"])
def test_referee_that_cannot_score_stops_the_match(fake_engine, tmp_path, capsys, referee):
    """A referee that does not start (here behind a wrapper, as `taskset -c 0 gnugo` is when
    gnugo is not on PATH) or has no final_score: no game is played."""
    command = fake_engine(referee) if referee == "pass" else referee
    out = tmp_path / "out"
    code = main([fake_engine("pass"), fake_engine("pass"), "--games", "2", "--out", str(out)]
                + BASE + ["--referee", command])
    assert code != 0 and "referee" in capsys.readouterr().err
    assert not list(out.glob("game-*.sgf"))


def test_plot_or_message(fake_engine, tmp_path, capsys):
    png = tmp_path / "elo.png"
    run_pair(tmp_path, fake_engine("pass"), fake_engine("resign"), 2, "--plot", str(png))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in capsys.readouterr().err
        assert not png.exists()
    else:
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_unstartable_engine_or_broken_results_stop_the_match(fake_engine, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["--games", "2", "--out", str(out)] + BASE
    assert main(["/nonexistent/engine", fake_engine("pass")] + args) == 2
    assert "cannot start" in capsys.readouterr().err
    (out / "match.json").write_text("{not json")
    assert main([fake_engine("pass"), fake_engine("pass")] + args) == 2
    assert "unreadable" in capsys.readouterr().err
    assert main([fake_engine("pass"), fake_engine("pass"), "--rules", "no-such-rules"] + args) == 2
    assert "unknown rules" in capsys.readouterr().err


DOSAKU = ROOT / "run_engine.py"


def test_dosaku_self_play_on_5x5(tmp_path):
    engine = (f"{shlex.quote(sys.executable)} {shlex.quote(str(DOSAKU))} --boardsize 5 "
              "--evaluator uniform --visits 32")
    out = tmp_path / "out"
    assert main([engine, engine, "--games", "2", "--size", "5", "--komi", "0.5",
                 "--max-moves", "40", "--out", str(out), "--no-progress"]) == 0
    data = load(out)
    assert [g["game"] for g in data["games"]] == [0, 1] and data["summary"]["games"] == 2
    for g in data["games"]:
        game, moves = sgf_moves(out / g["sgf"])
        assert game.get_size() == 5 and len(moves) == g["moves"] <= 40
        assert g["reason"] in ("passes", "max-moves", "resign"), g
        if g["reason"] != "resign":
            assert_scored_by_rules(out, g, 5, 0.5)


def test_worker_number_in_engine_commands(fake_engine, tmp_path):
    # each worker starts its engines with its own number, so it can be pinned to a core
    logs = tmp_path / "logs"
    logs.mkdir()
    engine = f"env FAKE_GTP_LOG={logs}/worker-{{worker}}.log {fake_engine('pass')}"
    games = run_pair(tmp_path, engine, engine, 4, "--parallel", "2")
    assert len(games) == 4
    assert sorted(p.name for p in logs.iterdir()) == ["worker-0.log", "worker-1.log"]
    for log in logs.iterdir():
        assert "genmove b" in log.read_text().splitlines()


def test_rescore_replaces_fallback_scores(fake_engine, tmp_path):
    """Games the fallback scored are asked of a working referee again; the summary follows."""
    from dosaku.tournament.rescore import main as rescore
    run_pair(tmp_path, fake_engine("pass"), fake_engine("pass"), 2, "--referee",
             fake_engine("judge", "final=junk"))
    out = tmp_path / "out"
    assert [g["result"] for g in load(out)["games"]] == ["W+7.5", "W+7.5"]
    assert rescore([str(out), "--referee", fake_engine("judge", "final=B+3")]) == 0
    data = load(out)
    for g in data["games"]:   # engine 1 is black in game 0, white in game 1
        assert (g["result"], g["winner"], g["scorer"]) == ("B+3", "B", "referee")
        assert g["winner_engine"] == g["black"] and "was W+7.5" in g["detail"]
        assert sgf.Sgf_game.from_bytes((out / g["sgf"]).read_bytes()).get_root().get("RE") == "B+3"
    s = data["summary"]
    assert (s["engine1_wins"], s["engine2_wins"], s["scorers"]) == (1, 1, {"referee": 2})
    # a second pass finds nothing left to rescore
    assert rescore([str(out), "--referee", fake_engine("judge", "final=W+1")]) == 0
    assert [g["result"] for g in load(out)["games"]] == ["B+3", "B+3"]
