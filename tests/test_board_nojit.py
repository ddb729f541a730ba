"""The board tests once more as plain Python (NUMBA_DISABLE_JIT=1), on small boards.

Without the JIT, numba's silent index wrapping and type unification are gone, so this run
catches bugs numba would hide and gives Python tracebacks. It runs in a subprocess because the
variable must be set before numba is imported; DOSAKU_SMALL=1 shrinks the random game counts.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1",
                    reason="already running without JIT")
def test_board_suite_without_jit():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", DOSAKU_SMALL="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    files = ["tests/test_board_diagrams.py", "tests/test_board_differential.py",
             "tests/test_board_properties.py"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           *files], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
