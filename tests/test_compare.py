"""tournament.compare: positions drawn from games, set up exactly in every engine, the judge
asked only where the engines differ, the losses and intervals, resuming, failures reported.

The engines are tests/fake_gtp_engine.py (`prefer` chooses the first free point of a list; the
`judge` prints a winrate per last move from a table), and GNU Go where it is installed.
"""

import json
import math
import statistics

import pytest

from dosaku.tournament import compare
from dosaku.tournament.compare_gtp import parse_analysis
from dosaku.tournament.compare_positions import sgf_positions
from dosaku.tournament.compare_stats import losses, mean_interval, summarize

Z95 = 1.959963984540054
# the judge's winrate (side to move) and score lead after each move; the mover's are 1 - w, -s
JUDGE = {"C3": (0.45, 1.5), "D4": (0.6, -2.0), "G7": (0.3, 4.0)}
JUDGE_ARG = ",".join(f"{v}={w}:{s}" for v, (w, s) in JUDGE.items())
POSITIONS = [[], ["C3"], ["D4"], ["C3", "D4"], ["C3", "D4", "G7", "E5"]]
A, B = "prefer C3,G7,D4", "prefer D4,G7"
# what A and B choose in POSITIONS (the first free point of their list, else pass)
CHOICES = [("C3", "D4"), ("G7", "D4"), ("C3", "G7"), ("G7", "G7"), ("pass", "pass")]


@pytest.fixture
def positions_file(tmp_path):
    path = tmp_path / "positions.json"
    path.write_text(json.dumps([{"moves": m, "size": 9, "komi": 6.5} for m in POSITIONS]))
    return path


def logged(command: str, log) -> str:
    """The engine command with every GTP command it receives appended to `log`."""
    return f"env FAKE_GTP_LOG={log} {command}"


def run(capsys, tmp_path, a, b, judge, sources, *extra, out="out.jsonl"):
    """(exit status, stdout, stderr, records in OUT) of one comparison."""
    rc = compare.main([a, b, *map(str, sources), "--judge", judge,
                       "--out", str(tmp_path / out), "--no-progress", *extra])
    captured = capsys.readouterr()
    path = tmp_path / out
    lines = path.read_text().splitlines()[1:] if path.exists() else []
    return rc, captured.out, captured.err, [json.loads(line) for line in lines]


def blocks(log) -> list[list[str]]:
    """The transcript cut into one list per position, each starting at `boardsize` (`quit`
    left out)."""
    out = []
    for line in log.read_text().splitlines():
        if line == "quit":
            continue
        if line.startswith("boardsize"):
            out.append([])
        if out:
            out.append(out.pop() + [line])
    return out


def mover_value(vertex: str) -> tuple[float, float]:
    winrate, lead = JUDGE[vertex]
    return 1 - winrate, -lead


def test_positions_are_set_up_exactly_and_judged_only_where_moves_differ(
        capsys, tmp_path, fake_engine, positions_file):
    logs = {k: tmp_path / f"{k}.log" for k in "abj"}
    rc, out, _, records = run(capsys, tmp_path, logged(fake_engine(A), logs["a"]),
                              logged(fake_engine(B), logs["b"]),
                              logged(fake_engine("judge", JUDGE_ARG), logs["j"]),
                              [positions_file])
    assert rc == 0, out
    assert [(r["a"], r["b"]) for r in records] == CHOICES
    setups = []
    for moves in POSITIONS:
        colors = ["b", "w"] * len(moves)
        setups.append(["boardsize 9", "clear_board", "komi 6.5",
                       *(f"play {c} {v}" for c, v in zip(colors, moves))])
    for k in "ab":
        assert blocks(logs[k]) == [s + [f"genmove {'bw'[len(m) % 2]}"]
                                   for s, m in zip(setups, POSITIONS)]
    expected = []
    for s, m, (a, b) in zip(setups, POSITIONS, CHOICES):
        mover, opponent = ("b", "w") if len(m) % 2 == 0 else ("w", "b")
        if a != b:
            expected += [s + [f"play {mover} {v}", f"kata-genmove_analyze {opponent} 1000"]
                         for v in (a, b)]
    assert blocks(logs["j"]) == expected
    assert "same move 2, judged 3" in out


def test_identical_choices_cost_no_judge_call(capsys, tmp_path, fake_engine, positions_file):
    judge_log = tmp_path / "judge.log"
    rc, out, _, records = run(capsys, tmp_path, fake_engine(B), fake_engine(B),
                              logged(fake_engine("judge", JUDGE_ARG), judge_log),
                              [positions_file])
    assert rc == 0
    assert all(r["same"] and r["loss_a"] == r["loss_b"] == 0 for r in records)
    assert not judge_log.exists()  # the judge was never even started
    assert "same move 5, judged 0" in out


def test_losses_and_intervals_match_a_hand_computation(capsys, tmp_path, fake_engine,
                                                       positions_file):
    rc, out, _, records = run(capsys, tmp_path, fake_engine(A), fake_engine(B),
                              fake_engine("judge", JUDGE_ARG), [positions_file])
    assert rc == 0
    loss = {"a": [], "b": []}
    score_loss = {"a": [], "b": []}
    for record, (a, b) in zip(records, CHOICES):
        if a == b:
            for k in "ab":
                loss[k].append(0.0)
                score_loss[k].append(0.0)
            continue
        (wa, sa), (wb, sb) = mover_value(a), mover_value(b)
        assert record["value_a"] == pytest.approx(wa)
        assert record["score_b"] == pytest.approx(sb)
        loss["a"].append(max(wa, wb) - wa)
        loss["b"].append(max(wa, wb) - wb)
        score_loss["a"].append(max(sa, sb) - sa)
        score_loss["b"].append(max(sa, sb) - sb)
    assert [r["loss_a"] for r in records] == pytest.approx(loss["a"])
    assert [r["score_loss_b"] for r in records] == pytest.approx(score_loss["b"])

    def interval(xs):
        mean = statistics.mean(xs)
        half = Z95 * statistics.stdev(xs) / math.sqrt(len(xs))
        return mean, mean - half, mean + half

    diff = [x - y for x, y in zip(loss["a"], loss["b"])]
    summary = summarize(records)
    for key, xs in (("loss_a", loss["a"]), ("loss_b", loss["b"]), ("diff", diff),
                    ("score_loss_a", score_loss["a"])):
        iv = summary[key]
        assert (iv.mean, iv.low, iv.high) == pytest.approx(interval(xs)), key
        assert iv.n == 5
    mean, low, high = interval(loss["b"])
    assert f"{100 * mean:.2f} [{100 * low:.2f}, {100 * high:.2f}]" in out
    mean, low, high = interval(diff)
    assert f"{100 * mean:+.2f} [{100 * low:+.2f}, {100 * high:+.2f}]" in out
    csv_lines = (tmp_path / "out.csv").read_text().splitlines()
    assert csv_lines[0].startswith("id,to_move,a,b,same,value_a,value_b,loss_a,loss_b")
    assert len(csv_lines) == 6


def test_loss_arithmetic_and_interval_units():
    assert losses(0.7, 0.4) == pytest.approx((0.0, 0.3))
    assert losses(0.2, 0.5) == pytest.approx((0.3, 0.0))
    iv = mean_interval([0.0, 0.1, 0.3])
    half = Z95 * statistics.stdev([0.0, 0.1, 0.3]) / math.sqrt(3)
    assert (iv.mean, iv.low, iv.high, iv.n) == pytest.approx((0.4 / 3, 0.4 / 3 - half,
                                                              0.4 / 3 + half, 3))
    assert math.isnan(mean_interval([0.2]).low) and mean_interval([]).n == 0


def test_resume_after_interruption(capsys, tmp_path, fake_engine, positions_file,
                                   monkeypatch):
    args = (fake_engine(A), fake_engine(B), fake_engine("judge", JUDGE_ARG), [positions_file])
    rc, _, _, first = run(capsys, tmp_path, *args)
    assert rc == 0
    out = tmp_path / "out.jsonl"
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]) + lines[3][:40])  # header, 2 records, half a line
    log = tmp_path / "all.log"  # the same engine commands, or the results would not count
    monkeypatch.setenv("FAKE_GTP_LOG", str(log))
    rc, text, _, records = run(capsys, tmp_path, *args)
    assert rc == 0
    assert "2 positions from an earlier run" in text
    genmoves = [line for line in log.read_text().splitlines() if line.startswith("genmove")]
    assert genmoves == ["genmove w"] * 2 + ["genmove b"] * 4  # A and B, positions 2, 3, 4
    assert len(records) == 5  # the half line is gone
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in records]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in first]


def test_results_of_other_engines_are_not_mixed_in(capsys, tmp_path, fake_engine,
                                                    positions_file):
    judge = fake_engine("judge", JUDGE_ARG)
    assert run(capsys, tmp_path, fake_engine(A), fake_engine(B), judge, [positions_file])[0] == 0
    rc, _, err, _ = run(capsys, tmp_path, fake_engine(A), fake_engine(A), judge,
                        [positions_file])
    assert rc == 2 and "other engines or another judge" in err


def test_failed_answers_are_reported_and_asked_again(capsys, tmp_path, fake_engine,
                                                     positions_file, monkeypatch):
    args = (fake_engine(A), fake_engine(B), fake_engine("judge", JUDGE_ARG), [positions_file])
    monkeypatch.setenv("FAKE_GTP_REFUSE", "genmove")
    rc, out, _, records = run(capsys, tmp_path, *args)
    assert rc == 1
    assert all(r["error"] == "A: `genmove b` failed: unknown command"
               for r in records if r["to_move"] == "b")
    assert "failed 5" in out and "failed /" in out and "`genmove w` failed" in out
    monkeypatch.delenv("FAKE_GTP_REFUSE")
    rc, out, _, records = run(capsys, tmp_path, *args)
    assert rc == 0 and "0 positions from an earlier run" in out
    assert [(r["a"], r["b"]) for r in records[5:]] == CHOICES


def test_illegal_and_unreadable_moves_and_crashes(capsys, tmp_path, fake_engine,
                                                  positions_file):
    judge = fake_engine("judge", JUDGE_ARG)
    # C3 is free in positions 0 and 2, occupied in the others
    rc, out, _, records = run(capsys, tmp_path, fake_engine("script", "C3"), fake_engine(B),
                              judge, [positions_file], out="illegal.jsonl")
    assert rc == 1
    errors = [r["error"] for r in records]
    assert errors[0] is None and errors[2] is None
    assert errors[1] == errors[3] == errors[4] == "A: genmove played C3 (occupied)"
    assert "failed 3" in out
    rc, out, _, records = run(capsys, tmp_path, fake_engine(A), fake_engine("garbage"), judge,
                              [positions_file], out="garbage.jsonl")
    assert {r["error"] for r in records} == {"B: genmove answered 'Z99', not a move on 9x9"}
    rc, out, _, records = run(capsys, tmp_path, fake_engine("crash"), fake_engine(B), judge,
                              [positions_file], out="crash.jsonl")
    assert rc == 1 and len(records) == 5  # a new process for every position
    assert all(r["error"].startswith("A: engine exited (code 3) while answering 'genmove")
               for r in records)


def test_judge_without_analysis_is_refused(capsys, tmp_path, fake_engine, positions_file):
    rc, _, err, _ = run(capsys, tmp_path, fake_engine(A), fake_engine(B), fake_engine("pass"),
                        [positions_file])
    assert rc == 2 and "the judge lists none of kata-search_analyze" in err


def test_resign_is_worth_nothing_and_a_second_pass_is_scored(capsys, tmp_path, fake_engine):
    path = tmp_path / "positions.json"
    path.write_text(json.dumps([{"moves": ["C3", "pass"], "size": 9}]))
    judge_log = tmp_path / "judge.log"
    judge = logged(fake_engine("judge", JUDGE_ARG + ",final=B+2.5"), judge_log)
    rc, _, _, records = run(capsys, tmp_path, fake_engine("resign"), fake_engine("pass"),
                            judge, [path])
    assert rc == 0
    r = records[0]
    assert (r["a"], r["b"]) == ("resign", "pass")
    # a resignation is not asked about; Black's pass ends the game, which Black wins by 2.5
    assert (r["value_a"], r["value_b"], r["score_b"]) == (0.0, 1.0, 2.5)
    assert (r["loss_a"], r["loss_b"], r["score_loss_a"]) == (1.0, 0.0, None)
    assert blocks(judge_log) == [["boardsize 9", "clear_board", "komi 7.5", "play b C3",
                                  "play w pass", "play b pass", "final_score"]]


def test_parse_analysis_of_katago_leela_zero_and_dosaku_lines():
    kata = ("=\ninfo move E4 visits 487 edgeVisits 487 utility -0.04 winrate 0.480018 "
            "scoreMean -0.61 scoreStdev 24.7 scoreLead -0.58 prior 0.221 lcb 0.477 order 0 "
            "pv E4 E3 info move P16 visits 300 winrate 0.47 scoreLead -1 order 1 pv P16 "
            "rootInfo visits 1101 winrate 0.5 scoreLead 0.1\nplay E4")
    assert parse_analysis(kata, lz=False) == (0.480018, -0.58, 487, "E4")
    lz = ("info move D4 visits 836 winrate 4656 prior 839 lcb 4640 order 0 pv D4 Q16 "
          "info move D16 visits 856 winrate 4655 prior 856 lcb 4639 order 1 pv D16 Q4")
    assert parse_analysis("info move D4 visits 3 winrate 5000 order 0 pv D4\n" + lz,
                          lz=True) == (0.4656, None, 836, "D4")
    dosaku = "info move C3 visits 9 winrate 0.25 scoreLead 1.5 prior 0.1 lcb 0.2 order 0 pv C3"
    assert parse_analysis(dosaku + "\nplay C3", lz=False) == (0.25, 1.5, 9, "C3")
    with pytest.raises(ValueError):
        parse_analysis("play pass", lz=False)


def test_sgf_positions_are_drawn_seeded_from_unfinished_positions(tmp_path):
    game = tmp_path / "game.sgf"
    game.write_text("(;FF[4]GM[1]SZ[9]KM[5.5]RU[Japanese];B[ee];W[cc];B[gg];W[cg];B[gc];"
                    "W[dd];B[tt];W[tt])")
    every = sgf_positions(str(game), per_game=20, skip=2, seed=0)
    assert [p.id for p in every] == [f"{game}:{n}" for n in range(2, 8)]
    last = every[-1]
    assert (last.size, last.komi, last.rules, last.to_move) == (9, 5.5, "japanese", "w")
    assert last.moves == (("b", "E5"), ("w", "C7"), ("b", "G3"), ("w", "C3"), ("b", "G7"),
                          ("w", "D6"), ("b", "pass"))
    drawn = sgf_positions(str(game), per_game=3, skip=2, seed=5)
    assert drawn == sgf_positions(str(game), per_game=3, skip=2, seed=5)
    assert len(drawn) == 3 and set(drawn) <= set(every)
    draws = {tuple(p.id for p in sgf_positions(str(game), 3, 2, seed)) for seed in range(10)}
    assert len(draws) > 1


def test_handicap_games_and_bad_sources(capsys, tmp_path, fake_engine):
    game = tmp_path / "handicap.sgf"
    game.write_text("(;FF[4]GM[1]SZ[9]KM[0.5]HA[2]AB[cc][gg];W[ee];B[ce])")
    broken = tmp_path / "broken.sgf"
    broken.write_text("(;FF[4]GM[1]SZ[9];B[ee];W[ee])")
    a_log = tmp_path / "a.log"
    rc, _, err, records = run(capsys, tmp_path, logged(fake_engine(B), a_log), fake_engine(B),
                              fake_engine("judge", JUDGE_ARG), [game, broken],
                              "--skip", "0")
    assert rc == 0 and f"skipped {broken}: move 2 W E5 is illegal (occupied)" in err
    assert [r["id"] for r in records] == [f"{game}:0", f"{game}:1"]
    assert blocks(a_log)[1] == ["boardsize 9", "clear_board", "komi 0.5",
                                "set_free_handicap C7 G3", "play w E5", "genmove b"]


def test_gnugo_moves_are_compared(capsys, tmp_path, fake_engine, gnugo, positions_file):
    judge_log = tmp_path / "judge.log"
    rc, out, _, records = run(capsys, tmp_path, f"{gnugo} --mode gtp --level 0",
                              fake_engine(B), logged(fake_engine("judge"), judge_log),
                              [positions_file])
    assert rc == 0, out
    judged = sum(not r["same"] for r in records)
    assert judged == sum(r["a"] != r["b"] for r in records) > 0
    analyses = [x for x in judge_log.read_text().splitlines() if "genmove_analyze" in x]
    assert len(analyses) == 2 * judged
    assert all(r["value_a"] == r["value_b"] == 0.5 for r in records if not r["same"])
