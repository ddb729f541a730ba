"""tournament.regress: the .tst parser, the verdicts, and whole runs against GNU Go and a fake
engine."""

import io
from pathlib import Path

import pytest

from dosaku.tournament.regress import (
    FAIL,
    PASS,
    XFAIL,
    XPASS,
    Runner,
    Step,
    TstError,
    judge,
    main,
    parse_expectation,
    parse_tst,
)

HERE = Path(__file__).resolve().parent
REG = HERE / "regress"


# ---- parser ---------------------------------------------------------------------------------

def test_parse_commands_ids_and_patterns():
    text = ("# comment\n\nboardsize 9\n10 reg_genmove white\n#? [Q16|R16]\n"
            "20\tfinal_score\n#? [B\\+.*]*\n30 genmove b\n#? [!pass]\n40 name\n#?\n50 showboard\n")
    steps = parse_tst(text)
    assert [(s.lineno, s.id, s.command) for s in steps] == [
        (3, None, "boardsize 9"), (4, 10, "reg_genmove white"), (6, 20, "final_score"),
        (8, 30, "genmove b"), (10, 40, "name"), (12, 50, "showboard")]
    assert steps[2].line == "20 final_score"  # tab turned into a space
    assert steps[0].expect is None and steps[4].expect is None and steps[5].expect is None
    e1, e2, e3 = steps[1].expect, steps[2].expect, steps[3].expect
    assert (e1.shown, e1.negate, e1.expected_fail) == ("Q16|R16", False, False)
    assert (e2.shown, e2.negate, e2.expected_fail) == ("B\\+.*", False, True)
    assert (e3.shown, e3.negate, e3.expected_fail) == ("!pass", True, False)


@pytest.mark.parametrize("text, message", [
    ("#? [x]\n", "without a command"),
    ("1 name\n\n#? [x]\n", "without a command"),          # must follow directly
    ("1 name\n# note\n#? [x]\n", "without a command"),
    ("name\n#? [x]\n", "without a numeric id"),
    ("1 name\n#? x\n", "must be written"),
    ("1 name\n#? [x\n", "must be written"),
    ("1 name\n#? [(]\n", "bad regex"),
])
def test_parse_errors(text, message):
    with pytest.raises(TstError, match=message):
        parse_tst(text, "t.tst")


def test_pattern_is_whole_string_multiline_dotall():
    e = parse_expectation("[C]", "w")
    assert not e.matches("C3") and e.matches("C")
    assert parse_expectation("[C\\d]", "w").matches("C3")
    assert parse_expectation("[A.*B]", "w").matches("A\nx\nB")     # DOTALL
    assert parse_expectation("[^x$.*^y$]", "w").matches("x\ny")     # MULTILINE anchors
    neg = parse_expectation("[!pass]", "w")
    assert neg.matches("D4") and not neg.matches("pass")
    assert parse_expectation("  ", "w") is None


@pytest.mark.parametrize("spec, ok, text, status", [
    (None, True, "anything", PASS),
    (None, False, "illegal move", FAIL),
    ("[D4]", True, "D4", PASS),
    ("[D4]", True, "D5", FAIL),
    ("[D4]", False, "D4", FAIL),             # a '?' answer fails even if the text matches
    ("[!D4]", False, "illegal move", FAIL),  # ... negated patterns included
    ("[D4]*", True, "D5", XFAIL),
    ("[D4]*", True, "D4", XPASS),
    ("[.*]*", False, "x", XFAIL),
])
def test_judge(spec, ok, text, status):
    step = Step(1, "1 x", 1, "x", parse_expectation(spec, "w") if spec else None)
    assert judge(step, ok, text) == status


# ---- runs against GNU Go -------------------------------------------------------------------

def test_all_pass_file_exit_zero(gnugo_level0):
    out = io.StringIO()
    report = Runner(gnugo_level0, 30, None, False, False, False, out).run_file(
        str(REG / "all_pass.tst"), "")
    statuses = {o.step.id: o.status for o in report.outcomes}
    # test 5 loads games/corner.sgf relative to the .tst file: the engine runs in its directory
    assert statuses == {1: PASS, 2: PASS, 3: XFAIL, 4: PASS, 5: PASS, 6: PASS, 7: PASS}
    assert report.fatal is None and report.errors == []
    assert main(["--engine", gnugo_level0, str(REG / "all_pass.tst")]) == 0


def test_mixed_outcomes_and_exit_one(gnugo_level0, capsys):
    report = Runner(gnugo_level0, 30, None, False, False, False, io.StringIO()).run_file(
        str(REG / "mixed.tst"), "")
    statuses = {o.step.id: o.status for o in report.outcomes}
    assert statuses == {10: PASS, 20: PASS, 30: FAIL, 40: XFAIL, 50: XPASS, 60: FAIL,
                        70: XFAIL, 80: FAIL}
    got = {o.step.id: o.got for o in report.outcomes}
    assert got[30] == "GNU Go" and got[60] == "? illegal move"
    assert len(report.errors) == 1 and "invalid color or coordinate" in report.errors[0]

    assert main(["--engine", gnugo_level0, str(REG / "mixed.tst")]) == 1
    lines = capsys.readouterr().out.splitlines()
    line30 = next(x for x in lines if x.startswith("FAIL") and " 30 name" in x)
    assert "expected [Leela]" in line30 and "got 'GNU Go'" in line30
    assert any(x.startswith("unexpected pass") and " 50 name" in x for x in lines)
    assert any(x.startswith("fail (expected)") and " 40 name" in x for x in lines)
    summary = next(x for x in lines if x.startswith("mixed.tst"))
    assert summary.split()[1:7] == ["8", "2", "3", "2", "1", "1"]


def test_file_error_is_exit_two_and_other_files_still_run(gnugo_level0, tmp_path, capsys):
    bad = tmp_path / "bad.tst"
    bad.write_text("1 name\n#? GNU Go\n")
    code = main(["--engine", gnugo_level0, str(bad), str(REG / "all_pass.tst")])
    out = capsys.readouterr().out
    assert code == 2
    assert "file error" in out and "all_pass.tst: PASS" in out
    assert main(["--engine", gnugo_level0, str(tmp_path / "missing.tst")]) == 2


def test_gtpfile_runs_first(gnugo_level0, tmp_path):
    pre = tmp_path / "pre.gtp"
    pre.write_text("boardsize 5\nclear_board\nplay b c3\n")
    tst = tmp_path / "t.tst"
    tst.write_text("1 list_stones black\n#? [C3]\n")
    assert main(["--engine", gnugo_level0, str(tst)]) == 1
    assert main(["--engine", gnugo_level0, "--gtpfile", str(pre), str(tst)]) == 0
    pre.write_text("boardsize 99\n")
    assert main(["--engine", gnugo_level0, "--gtpfile", str(pre), str(tst)]) == 2


# ---- engine errors ---------------------------------------------------------------------------

def test_engine_crash_mid_file_is_exit_two(fake_engine, tmp_path, capsys):
    tst = tmp_path / "crash.tst"
    tst.write_text("1 name\n#? [Fake pass]\n2 crash\n3 name\n")
    report = Runner(fake_engine("pass"), 10, None, False, False, False, io.StringIO()).run_file(
        str(tst), "")
    assert [(o.step.id, o.status) for o in report.outcomes] == [(1, PASS), (2, FAIL)]
    assert "engine error at line 3" in report.fatal
    assert main(["--engine", fake_engine("pass"), str(tst)]) == 2
    assert "engine error" in capsys.readouterr().out


def test_engine_timeout_and_missing_engine(fake_engine, tmp_path):
    tst = tmp_path / "hang.tst"
    tst.write_text("1 genmove b\n")
    assert main(["--engine", fake_engine("hang"), "--timeout", "0.3", str(tst)]) == 2
    assert main(["--engine", "/nonexistent/engine", str(tst)]) == 2
