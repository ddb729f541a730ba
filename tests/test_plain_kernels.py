"""The kernels as plain Python while a helper compiles them (engine/plain_kernels.py): the same
moves as compiled, nothing compiled in the process meanwhile, and the switch to the compiled
kernels once the helper is done."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dosaku.engine import plain_kernels
from dosaku.launch.factory import engine_from_flags

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--boardsize", "9", "--komi", "7", "--visits", "12", "--seed", "5"]
MOVES = 6

# A seeded game on the shipped default net in a process whose kernels run plain throughout
# (the "helper" never ends), into an empty numba cache: its moves, and what got compiled.
PLAIN_GAME = """
import json, subprocess, sys
from pathlib import Path
from dosaku.engine import plain_kernels
assert plain_kernels.install()
never_done = subprocess.Popen(["sleep", "600"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
plain_kernels.run_plain_until(never_done)
from dosaku.engine.rules import board
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.search import selection
from dosaku.launch.factory import engine_from_flags
engine = engine_from_flags(json.loads(sys.argv[1]))
moves = [engine.genmove((BLACK, WHITE)[i % 2]) for i in range(int(sys.argv[2]))]
print(json.dumps({"moves": [int(m) for m in moves], "plain": plain_kernels.is_plain(),
                  "compiled": [k.__name__ for k in (board.play_unchecked, board.legal_mask,
                                                    selection.select_batch) if k.signatures],
                  "cached": [p.name for p in Path(sys.argv[3]).rglob("*.nb*")]}))
never_done.kill()
"""


def seeded_game(engine) -> list[int]:
    from dosaku.engine.rules.constants import BLACK, WHITE
    return [int(engine.genmove((BLACK, WHITE)[i % 2])) for i in range(MOVES)]


def test_a_seeded_game_plays_the_same_moves_on_plain_kernels_as_compiled(tmp_path):
    cache = tmp_path / "numba"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    run = subprocess.run([sys.executable, "-c", PLAIN_GAME, json.dumps(FLAGS), str(MOVES),
                          str(cache)], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    plain = json.loads(run.stdout.strip().splitlines()[-1])
    assert plain["plain"] and plain["compiled"] == [] and plain["cached"] == [], plain
    compiled = seeded_game(engine_from_flags(FLAGS))
    assert plain["moves"] == compiled


@pytest.fixture
def plain_for(tmp_path):
    """Run plain until a helper that is given; leaves the process compiled again."""
    assert plain_kernels.install()
    started = []

    def start(code: str):
        helper = subprocess.Popen([sys.executable, "-c", code])
        started.append(helper)
        plain_kernels.run_plain_until(helper)
        return helper
    yield start
    for helper in started:
        helper.kill()
        helper.wait()
    plain_kernels.settle()
    assert not plain_kernels.is_plain()


def test_plain_until_the_helper_is_done_then_compiled(plain_for):
    helper = plain_for("import time; time.sleep(2)")
    plain_kernels.settle()
    assert plain_kernels.is_plain(), "plain while the helper runs"
    helper.wait()
    plain_kernels.settle()
    assert not plain_kernels.is_plain()


def test_a_failed_helper_says_so_and_leaves_compiling_to_the_process(plain_for, capfd):
    plain_for("raise SystemExit(3)").wait()
    plain_kernels.settle()
    assert not plain_kernels.is_plain()
    assert "exited with code 3" in capfd.readouterr().err


def test_plain_runs_the_python_function_and_unpacks_star_args(plain_for):
    """A kernel with no compiled version runs its own Python code while plain, `*args` as
    given (numba hands them over packed in one tuple)."""
    from numba import njit
    namespace = {"__name__": plain_kernels.PACKAGE + "probe"}
    exec("def probe(a, *rest):\n    return ('python', a, rest)", namespace)
    probe = njit(namespace["probe"])
    plain_for("import time; time.sleep(60)")
    assert probe(1, 2, 3) == ("python", 1, (2, 3))
    assert not probe.signatures
