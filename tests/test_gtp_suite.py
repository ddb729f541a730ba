"""The GTP regression suite tests/gtp/*.tst, run against run_engine.py through tournament.regress.

The suite checks the protocol and the rules, so it runs on the random-playout evaluator it was
written for; the shipped network's own games are tests/test_default_net.py's job. The quick
run caps each genmove at a few playouts (the answers are what the suite checks, not how long a
move takes); the run at the engine's default of a second a move is marked slow.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUITE = sorted((ROOT / "tests" / "gtp").glob("*.tst"))
ENGINE = f"{sys.executable} {ROOT / 'run_engine.py'} --evaluator rollout"
QUICK = "--playouts 32"  # a genmove's playouts in the quick run
ANSWER_TIMEOUT = 600  # seconds; only catches a hang (a first answer may wait for a cold compile)


def run_regress(files: list[Path], flags: str = QUICK) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", "dosaku.tournament.regress", "--engine",
                        f"{ENGINE} {flags}".strip(), "--quiet",
                        "--timeout", str(ANSWER_TIMEOUT), *map(str, files)],
                       cwd=ROOT, capture_output=True, text=True, timeout=3600)
    return p.returncode, p.stdout


def totals(output: str) -> dict[str, int]:
    line = [ln for ln in output.splitlines() if re.match(r"(total|\S+\.tst)\s+\d", ln)][-1]
    tests, passed, failed, xfail, upass, errors = map(int, line.split()[1:7])
    return dict(tests=tests, PASS=passed, FAIL=failed, fail=xfail, upass=upass, error=errors)


@pytest.mark.parametrize("flags", [
    pytest.param(QUICK, id="playout-limit"),
    pytest.param("", id="second-a-move", marks=pytest.mark.slow),
])
def test_suite_passes(flags):
    assert len(SUITE) >= 7
    code, out = run_regress(SUITE, flags)
    t = totals(out)
    must_fail = sum(f.read_text().count("\n#? [.*]*") for f in SUITE)
    assert (code, t["FAIL"], t["upass"], t["error"]) == (0, 0, 0, 0), out
    assert t["fail"] == must_fail, out  # every command that must be rejected was rejected
    assert t["PASS"] >= 100, out
    assert "!!" not in out, out


def test_suite_runner_sees_a_wrong_answer(tmp_path):
    wrong = tmp_path / "wrong.tst"
    wrong.write_text("1 name\n#? [GNU Go]\n2 play b a1\n3 play b a1\n#? [.*]*\n"
                     "4 play b b1\n#? [.*]*\n")
    code, out = run_regress([wrong])
    t = totals(out)
    assert code == 1 and (t["FAIL"], t["fail"], t["upass"]) == (1, 1, 1), out
