"""Match clocks sent the way Go servers send them: the set-up command, `time_left` before every
genmove, time losses. Checked on the command transcripts of scripted engines whose moves are
charged scripted seconds (tests.test_match.ScriptedTimer), so a busy machine changes nothing."""

import os
from pathlib import Path

import pytest
from sgfmill import sgf

from dosaku.tournament import match_game
from dosaku.tournament.match import main
from tests.test_match import ScriptedTimer, load


def play(tmp_path, fake_engine, seconds: tuple[float, float], *clock, refuse="", moves=10):
    """One 9x9 game between two fakes whose genmoves take `seconds` (black, white); returns the
    game record and both transcripts."""
    out = tmp_path / "out"
    logs = [tmp_path / "black.log", tmp_path / "white.log"]
    env = os.environ.copy()
    engines = [f"env FAKE_GTP_LOG={path} FAKE_GTP_REFUSE={refuse} {fake_engine('slow', 0)}"
               for path in logs]
    code = main([*engines, "--games", "1", "--size", "9", "--max-moves", str(moves),
                 "--out", str(out), "--no-progress", *clock], ScriptedTimer(*seconds))
    assert os.environ == env
    assert code == 0
    return load(out)["games"][0], [p.read_text().splitlines() for p in logs], out


def clock_lines(transcript: list[str]) -> list[str]:
    """The time commands and genmoves, in order."""
    return [ln for ln in transcript if ln.split()[0] in
            ("time_settings", "kgs-time_settings", "time_left", "genmove")]


def test_japanese_byoyomi_announced_and_reported(tmp_path, fake_engine):
    game, (black, white), out = play(tmp_path, fake_engine, (0.6, 0.1),
                                     "--kgs-time-settings", "byoyomi", "1", "1", "2",
                                     "--time-margin", "0.05")
    assert (game["reason"], game["moves"]) == ("max-moves", 10)
    b = clock_lines(black)
    assert b[0] == "kgs-time_settings byoyomi 1 1 2"
    # every genmove comes right after the mover's own time_left: whole seconds of main time
    # (0.45 s are "0"), then the period and the periods left (0.55 s a move loses none)
    assert b[1::2] == ["time_left b 1 0", "time_left b 0 0"] + ["time_left b 1 2"] * 3
    assert b[2::2] == ["genmove b"] * 5
    # white is charged 0.05 s a move: all its moves fit in its main time, shown as 0 whole
    # seconds after the first
    w = clock_lines(white)
    assert w[0] == "kgs-time_settings byoyomi 1 1 2"
    assert w[1] == "time_left w 1 0" and set(w[3::2]) == {"time_left w 0 0"}
    # least time from a loss: Black 2 periods less 0.55 s, White before its fifth move 0.8 s of
    # main time and 2 periods, less 0.05 s
    assert game["time_spare"] == pytest.approx({"B": 1.45, "W": 2.75})
    root = sgf.Sgf_game.from_bytes((out / game["sgf"]).read_bytes()).get_root()
    assert (root.get("TM"), root.get("OT")) == (1, "2x1 byo-yomi")


def test_running_out_of_byoyomi_periods_loses(tmp_path, fake_engine):
    game, (black, _), _ = play(tmp_path, fake_engine, (1.5, 0.05),
                               "--kgs-time-settings", "byoyomi", "0", "1", "2",
                               "--time-margin", "0.1")
    # 1.4 s charged: the first move uses one period; the second may take the last period and
    # the margin (1.1 s), and 1.5 s is more
    assert (game["reason"], game["winner"], game["result"]) == ("timeout", "W", "W+T")
    assert game["detail"] == "genmove b: no answer to 'genmove b' within 1.1 s"
    assert game["moves"] == 2
    assert clock_lines(black)[1:] == ["time_left b 1 2", "genmove b",
                                      "time_left b 1 1", "genmove b"]


def test_canadian_through_time_settings(tmp_path, fake_engine):
    game, (black, _), out = play(tmp_path, fake_engine, (0.3, 0.05),
                                 "--time-settings", "0", "2", "3", "--time-margin", "0.05")
    assert game["reason"] == "max-moves"
    b = clock_lines(black)
    assert b[0] == "time_settings 0 2 3"
    # three stones in every 2 s: the period's seconds and stones count down, then start again
    assert b[1::2] == ["time_left b 2 3", "time_left b 1 2", "time_left b 1 1",
                       "time_left b 2 3", "time_left b 1 2"]
    root = sgf.Sgf_game.from_bytes((out / game["sgf"]).read_bytes()).get_root()
    assert (root.get("TM"), root.get("OT")) == (0, "3/2 Canadian")


def test_engine_without_kgs_time_settings_gets_time_settings(tmp_path, fake_engine):
    _, (black, _), _ = play(tmp_path, fake_engine, (0.05, 0.05),
                            "--kgs-time-settings", "byoyomi", "30", "2", "3",
                            refuse="kgs-time_settings", moves=2)
    assert clock_lines(black)[:3] == ["kgs-time_settings byoyomi 30 2 3",
                                      "time_settings 30 2 1", "time_left b 30 0"]


def test_bad_clocks_stop_the_match(tmp_path, capsys, fake_engine):
    base = [fake_engine("pass"), fake_engine("pass"), "--games", "1", "--out", str(tmp_path / "o"),
            "--no-progress"]
    assert main(base + ["--kgs-time-settings", "byoyomi", "30", "2"]) == 2
    assert "byoyomi MAIN PERIOD PERIODS" in capsys.readouterr().err
    assert main(base + ["--kgs-time-settings", "absolute", "60", "--move-time", "5"]) == 2
    assert "excludes" in capsys.readouterr().err
    assert main(base + ["--time-settings", "60", "5", "0"]) == 2
    assert not Path(tmp_path / "o" / "match.json").exists()


def test_a_new_engine_may_take_long_to_start(tmp_path, monkeypatch, fake_engine):
    """The first set-up of a new process waits up to STARTUP_TIMEOUT (a cold start on a busy
    machine), later set-up commands only ADMIN_TIMEOUT."""
    monkeypatch.setattr(match_game, "ADMIN_TIMEOUT", 0.5)
    monkeypatch.setattr(match_game, "STARTUP_TIMEOUT", 5.0)
    out = tmp_path / "out"
    assert main([fake_engine("slowstart", 1.5), fake_engine("pass"), "--games", "2",
                 "--out", str(out), "--no-progress"]) == 0
    games = load(out)["games"]
    assert [g["reason"] for g in games] == ["passes", "passes"]
