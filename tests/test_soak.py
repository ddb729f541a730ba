"""tournament.soak: a short soak of Dosaku against GNU Go level 10 under a byo-yomi clock sent as
kgs-time_settings / time_left (the long runs and their figures are in docs/reliability.md; the
soak against GNU Go under a real clock is marked slow, the quick run checks the clock's plumbing
with scripted engines), and the summary arithmetic on hand-made records."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sgfmill import sgf

from dosaku.tournament.soak import main, rss_mb, summary

ROOT = Path(__file__).resolve().parents[1]


def record(game, black, white, winner_engine, reason, spare=None):
    color = "B" if winner_engine == black else "W"
    return {"game": game, "black": black, "white": white, "winner_engine": winner_engine,
            "winner": color if winner_engine else None, "reason": reason,
            "time_spare": spare or {}}


def test_summary_counts_faults_and_memory():
    records = [record(0, 1, 2, 2, "timeout", {"B": 0.5, "W": 3.0}),
               record(1, 2, 1, 1, "resign", {"B": 1.5, "W": 0.25}),
               record(2, 1, 2, 1, "illegal"),  # engine 2 played the illegal move
               record(3, 2, 1, 2, "crash")]
    samples = [{"games": g, "engine": 1, "pid": 7, "rss_mb": rss}
               for g, rss in ((0, 100.0), (0, 150.0), (1, 160.0), (3, 170.0), (3, 165.0))]
    samples += [{"games": 3, "engine": 1, "pid": 9, "rss_mb": 120.0},
                {"games": 4, "engine": 1, "pid": 9, "rss_mb": 125.0}]
    s = summary(records, samples)
    e1, e2 = s["engine1"], s["engine2"]
    assert (e1["games"], e1["wins"], e1["illegal"], e1["crash"], e1["timeout"]) == (4, 2, 0, 1, 1)
    assert (e2["games"], e2["wins"], e2["illegal"], e2["crash"], e2["timeout"]) == (4, 2, 1, 0, 0)
    assert e1["least_spare_seconds"] == 0.25 and e2["least_spare_seconds"] == 1.5
    assert e1["processes"] == [
        {"pid": 7, "samples": 5, "games": 3, "rss_after_first_game_mb": 160.0,
         "rss_last_mb": 165.0, "rss_max_mb": 170.0},
        {"pid": 9, "samples": 2, "games": 1, "rss_after_first_game_mb": 125.0,
         "rss_last_mb": 125.0, "rss_max_mb": 125.0}]
    assert e2["processes"] == []


def test_rss_of_a_process():
    assert 5 < rss_mb(os.getpid()) < 10_000
    assert rss_mb(2 ** 22 + 12345) is None


def _byoyomi_soak(engines, out, max_moves, rss_interval, capsys) -> tuple[dict, str]:
    """Two 9x9 games under a tight byo-yomi clock (2 s main, 3 x 2 s): engine 1's summary and
    what the soak printed, after checking that nobody played illegally, crashed or lost on
    time."""
    code = main([*engines, "--games", "2", "--size", "9", "--komi", "7",
                 "--kgs-time-settings", "byoyomi", "2", "2", "3", "--time-margin", "0.2",
                 "--max-moves", str(max_moves), "--out", str(out), "--no-progress",
                 "--rss-interval", str(rss_interval)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    s = json.loads((out / "soak.json").read_text())["summary"]["engine1"]
    assert s["games"] == 2 and s["illegal"] == s["crash"] == s["timeout"] == 0
    assert 0 <= s["least_spare_seconds"] <= 8
    return s, printed


def test_soak_sends_the_byoyomi_clock_and_records_it(tmp_path, fake_engine, monkeypatch,
                                                    capsys):
    """The clock plumbing of the GNU Go soak below, with scripted engines: both are told the
    byo-yomi settings and the time left before each move, the records carry the clock, and no
    one loses on time."""
    log = tmp_path / "gtp.log"
    monkeypatch.setenv("FAKE_GTP_LOG", str(log))
    out = tmp_path / "soak"
    _byoyomi_soak([fake_engine("slow", "0.1"), fake_engine("pass")], out, 8, 0.05, capsys)
    sent = log.read_text().splitlines()
    assert sum(line == "kgs-time_settings byoyomi 2 2 3" for line in sent) >= 4  # 2 x 2 engines
    assert sum(line.startswith("time_left ") for line in sent) >= \
        sum(line.startswith("genmove ") for line in sent) > 0
    for game in json.loads((out / "match.json").read_text())["games"]:
        root = sgf.Sgf_game.from_bytes((out / game["sgf"]).read_bytes()).get_root()
        assert (root.get("TM"), root.get("OT")) == (2, "3x2 byo-yomi")


@pytest.mark.slow
def test_short_soak_against_gnugo_with_a_byoyomi_clock(tmp_path, capsys, gnugo):
    # compiled first: a cold compile alone would overrun the 2 s clock
    subprocess.run([sys.executable, str(ROOT / "run_engine.py"), "--precompile"], check=True,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=900)
    dosaku = f"{sys.executable} {ROOT / 'run_engine.py'} --boardsize 9"
    out = tmp_path / "soak"
    s, printed = _byoyomi_soak([dosaku, f"{gnugo} --mode gtp --level 10 --chinese-rules"], out,
                               30, 1, capsys)
    [proc] = s["processes"]  # one engine process for both games
    assert proc["samples"] >= 5 and proc["games"] >= 1
    assert 50 < proc["rss_after_first_game_mb"] and \
        proc["rss_last_mb"] < proc["rss_after_first_game_mb"] + 100
    for game in json.loads((out / "match.json").read_text())["games"]:
        root = sgf.Sgf_game.from_bytes((out / game["sgf"]).read_bytes()).get_root()
        assert (root.get("TM"), root.get("OT")) == (2, "3x2 byo-yomi")
        assert game["reason"] in ("passes", "resign", "max-moves"), game
    assert "engine1: 2 games" in printed and "illegal 0, crash 0, time losses 0" in printed


def test_soak_json_after_every_game_and_a_rerun_continues_it(tmp_path, fake_engine, capsys):
    """A soak stopped after its first game and run again with more --games keeps the memory
    samples of the first run: soak.json grows with the match instead of starting over."""
    out = tmp_path / "soak"
    args = [fake_engine("slow", "0.1"), fake_engine("pass"), "--size", "5", "--komi", "0.5",
            "--max-moves", "8", "--rss-interval", "0.05", "--no-progress", "--out", str(out)]
    assert main(args + ["--games", "1"]) == 0
    first = json.loads((out / "soak.json").read_text())
    assert first["summary"]["engine1"]["games"] == 1 and first["samples"]
    first_pids = {s["pid"] for s in first["samples"]}

    assert main(args + ["--games", "2"]) == 0
    data = json.loads((out / "soak.json").read_text())
    assert data["samples"][:len(first["samples"])] == first["samples"]
    later = data["samples"][len(first["samples"]):]
    assert later and not first_pids & {s["pid"] for s in later}  # new engine processes
    assert all(s["games"] >= 1 for s in later)
    times = [s["t"] for s in data["samples"]]
    assert times == sorted(times)
    e1 = data["summary"]["engine1"]
    assert e1["games"] == 2 and e1["illegal"] == e1["crash"] == e1["timeout"] == 0
    assert {p["pid"] for p in e1["processes"]} == {
        s["pid"] for s in data["samples"] if s["engine"] == 1}  # both runs' engine 1
    assert "engine1: 2 games" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [["--kgs-time-settings", "byoyomi", "2", "1"]])
def test_soak_refuses_bad_settings(tmp_path, bad, capsys):
    assert main(["a", "b", "--games", "1", "--out", str(tmp_path), *bad]) == 2
    assert "byoyomi" in capsys.readouterr().err
