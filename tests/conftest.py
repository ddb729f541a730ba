"""Shared test set-up: KataGo's reference outputs (tests/data, README.md there), the files
under ../shared (KataGo's b6c96 network, the network spec), GNU Go, the scripted fake engine,
and the fixtures built from them.

../shared sits beside the checkout and is never copied into the repository. A test that needs
a file missing from it is skipped with a reason naming ../shared (listed by `pytest -ra`):
every such test is collected whether or not ../shared exists, so none disappears silently.
KataGo's outputs of the b6c96 net and of the transformer net Dosaku ships in weights/ are in
tests/data, so the checks against the transformer run in a plain clone.

The run gets a home of its own, empty at the start and removed at the end, before anything
imports the engine, so nothing is read from or written into the developer's home and Dosaku
cache. Its cache (XDG_CACHE_HOME: numba's compiled kernels, converted and quantized networks) is
the one the test runs keep between them, in a folder keyed by everything the cached files
depend on (tests/run_cache.py: DOSAKU_TEST_CACHE, by default ~/.cache/dosaku-tests): a run
compiles the kernels only after a change to them, two processes at once before its first
test, and the tests of a first start give their engines an empty cache of their own. Engines
the tests start inherit both, and so do the two test processes pytest-xdist runs (setup.cfg's
`-n 2`): the controller sets them up, its workers find the home in DOSAKU_TEST_SANDBOX and
share the cache (numba's and the network cache write files beside their names and rename them
into place). Tests import nothing from this file: pytest loads it as `conftest`, and `from
tests.conftest import ...` would run it a second time, making a second home and dropping
NUMBA_CACHE_DIR, so it refuses to.

A marker (registered in setup.cfg) sets the expensive tests apart: `slow` for the originals of
checks the default run makes more cheaply (a wheel installed into a new venv, cold compiles, a
soak under a real clock, the `.tst` suite at a second a move, int8 calibrations).
`python -m pytest` leaves them out (the quick loop, minutes); `python -m pytest --all` runs
everything, as CI does (.ci/run). The 20-game matches against GNU Go are a benchmark
(bench/strength.py), not tests.
"""

import atexit
import functools
import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

if __name__ != "conftest" and "conftest" in sys.modules:  # see the docstring
    raise ImportError("tests/conftest.py is pytest's own: import nothing from it (a second run "
                      "of it makes a second home and drops NUMBA_CACHE_DIR)")
ROOT = Path(__file__).resolve().parents[1]
WORKER = bool(os.environ.get("PYTEST_XDIST_WORKER"))  # one of pytest-xdist's test processes
if WORKER and os.environ.get("DOSAKU_TEST_SANDBOX"):
    SANDBOX = Path(os.environ["DOSAKU_TEST_SANDBOX"])  # the controller set HOME and the cache
else:
    from tests.run_cache import cache_key, default_base, keyed_cache
    SANDBOX = Path(tempfile.mkdtemp(prefix="dosaku-tests-"))
    atexit.register(shutil.rmtree, SANDBOX, ignore_errors=True)
    os.environ["DOSAKU_TEST_SANDBOX"] = str(SANDBOX)
    os.environ["XDG_CACHE_HOME"] = str(keyed_cache(default_base(), cache_key(ROOT)))
    os.environ["HOME"] = str(SANDBOX / "home")
os.environ.pop("NUMBA_CACHE_DIR", None)  # engine/__init__ keys it under XDG_CACHE_HOME

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B

if not WORKER:  # before the test processes start
    from tests.run_cache import compile_kernels
    compile_kernels()

SHARED = ROOT.parent / "shared"
B6C96 = SHARED / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
DATA = ROOT / "tests" / "data"
REFERENCE = DATA / "katago-b6c96-raw-nn.json"  # KataGo's outputs (provenance: DATA/README.md)
B10 = ROOT / "weights" / "b10c384h6nbttflrs.bin.gz"  # the shipped default, KataGo's file
REFERENCE_B10 = DATA / "katago-b10c384h6-raw-nn.json"
NETWORK_SPEC = SHARED / "docs" / "katago-network.md"
GNUGO = shutil.which("gnugo") or "/usr/games/gnugo"
FAKE_ENGINE = ROOT / "tests" / "fake_gtp_engine.py"


EXPENSIVE = ("slow",)


def pytest_addoption(parser):
    parser.addoption("--all", action="store_true", dest="run_all",
                     help="also run the tests marked slow (what CI runs)")


def pytest_collection_modifyitems(config, items):
    """Without --all, deselect the expensive tests; the summary counts them as deselected."""
    if config.getoption("run_all"):
        return
    kept, expensive = [], []
    for item in items:
        (expensive if any(item.get_closest_marker(m) for m in EXPENSIVE) else kept).append(item)
    if expensive:
        config.hook.pytest_deselected(items=expensive)
        items[:] = kept


def absent(path: Path) -> str:
    return f"{path} is absent (../shared not available)"


def need_shared(path: Path) -> Path:
    """`path` when it exists, else skip the test saying that ../shared is missing."""
    if not path.exists():
        pytest.skip(absent(path))
    return path


@functools.cache
def reference_positions(path: Path = REFERENCE) -> dict[str, dict]:
    """KataGo's `kata-raw-nn 0` reference positions by id, in file order."""
    return {p["id"]: p for p in json.loads(path.read_text())["positions"]}


def pytest_generate_tests(metafunc):
    """A test taking `reference_position` runs once per KataGo reference position."""
    if "reference_position" in metafunc.fixturenames:
        metafunc.parametrize("reference_position", [
            pytest.param(p, id=i) for i, p in reference_positions().items()])


@pytest.fixture(scope="session")
def katago_reference() -> dict[str, dict]:
    """KataGo's kata-raw-nn outputs of the b6c96 net on the 48 positions, by id."""
    return reference_positions()


@pytest.fixture(scope="session")
def katago_network_spec() -> Path:
    """katago-network.md, the network format the converter follows."""
    return need_shared(NETWORK_SPEC)


@pytest.fixture(scope="session")
def b6c96_file() -> Path:
    """KataGo's b6c96 network as released (.bin.gz)."""
    return need_shared(B6C96)


@pytest.fixture(scope="session")
def b6c96_onnx(b6c96_file, tmp_path_factory) -> Path:
    """The b6c96 network converted to ONNX once for the whole run."""
    from dosaku.networks.katago_convert import convert
    return convert(b6c96_file, tmp_path_factory.mktemp("b6c96") / "b6c96.onnx")


@pytest.fixture(scope="session")
def b6c96_model(b6c96_onnx):
    """An OnnxModel of the converted b6c96 network on one thread."""
    from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
    return OnnxModel(b6c96_onnx, threads=1)


@pytest.fixture(scope="session")
def b10_file() -> Path:
    """KataGo's transformer net b10c384h6nbttflrs as released (.bin.gz): the copy Dosaku ships
    as its default, so that the checks against KataGo's outputs check what users play."""
    assert B10.is_file(), f"{B10} is missing: it is Dosaku's default network"
    return B10


@pytest.fixture(scope="session")
def b10_onnx(b10_file, tmp_path_factory) -> Path:
    """The transformer net converted to ONNX once for the whole run."""
    from dosaku.networks.katago_convert import convert
    return convert(b10_file, tmp_path_factory.mktemp("b10") / "b10.onnx")


@pytest.fixture(scope="session")
def b10_model(b10_onnx):
    """An OnnxModel of the converted transformer net on two threads (it is 10 times b6c96's
    size)."""
    from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
    return OnnxModel(b10_onnx, threads=2)


@pytest.fixture(scope="session")
def katago_b10_reference() -> dict[str, dict]:
    """KataGo's kata-raw-nn outputs of the transformer net on the 48 positions, by id."""
    return reference_positions(REFERENCE_B10)


@pytest.fixture(scope="session")
def gnugo() -> str:
    """Path of GNU Go 3.8 (skips when it is not installed)."""
    if not Path(GNUGO).exists():
        pytest.skip("GNU Go not installed (apt-get install gnugo)")
    return GNUGO


@pytest.fixture(scope="session")
def gnugo_level0(gnugo) -> str:
    """GNU Go's quickest GTP command line."""
    return f"{gnugo} --mode gtp --level 0"


@pytest.fixture(scope="session")
def fake_engine():
    """fake_engine(mode, arg=0): command line of the scripted engine tests/fake_gtp_engine.py."""
    def command(mode: str, arg: int | str = 0) -> str:
        return f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE_ENGINE))} {mode} {arg}"
    return command


class CountingEvaluator:
    """Uniform policy, value from a fixed random table per position key; counts positions."""

    capabilities = Capabilities()

    def __init__(self):
        self.positions = 0
        self.calls = 0

    def evaluate(self, batch):
        n = batch.count
        self.calls += 1
        self.positions += n
        legal = batch.legal[:n].astype(np.float32)
        policy = legal / legal.sum(axis=1, keepdims=True)
        keys = batch.boards[:n, B.ROW_HEADER, B.H_HASH]
        value = ((keys % 1000) / 1000.0 - 0.5).astype(np.float32)
        return Evaluation(policy, value, np.zeros(n, np.float32), None)


@pytest.fixture
def counting_evaluator() -> CountingEvaluator:
    """A fresh CountingEvaluator for search and tree tests."""
    return CountingEvaluator()
