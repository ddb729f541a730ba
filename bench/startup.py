"""Start-up latency of the engine as a GTP client sees it, from launching the process.

    PYTHONPATH=. python bench/startup.py [--engine "CMD"] [--cold] [--model NET] [--quick]

Seconds from launch until the answers to `protocol_version` and `list_commands` (which the
engine should give at once, before its network and kernels are ready), and until the first
board command (`boardsize 19`, which waits for the engine to be built), and until the first
`genmove` answer on the empty 19x19 board (16 visits), with the engine's CPU seconds. The warm
figures use numba's on-disk cache as it is; `--cold` (and `measure_cold`) launches with empty
HOME and NUMBA_CACHE_DIR directories, so everything is compiled: the first start after
installing or updating. `--model` measures with that network (converted once beforehand).
"""

import argparse
import os
import resource
import shlex
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench.runner import SHARED, Figures, Skip, print_figures
from tournament.controller import GtpController

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "run_engine.py"
MODEL = SHARED / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
ANSWER_TIMEOUT = 300.0


def default_command(model: str | None = None) -> str:
    """The engine with a small visit limit, so the genmove figure is start-up, not thinking."""
    if not ENGINE.exists():
        raise Skip(f"{ENGINE.name} not found in {ROOT}")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(ENGINE))} --visits 16"
    if model is not None:
        from networks.cache import onnx_for
        onnx = model if model.endswith(".onnx") else str(onnx_for(Path(model)))
        command += f" --model {shlex.quote(onnx)}"
    return command


def _launch(command: str) -> Figures:
    """One launch: seconds to the first answers and to the first genmove, engine CPU time."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with GtpController(command, cwd=str(ROOT)) as engine:
        engine.send("protocol_version", ANSWER_TIMEOUT)
        t_version = time.perf_counter() - start
        engine.send("list_commands", ANSWER_TIMEOUT)
        t_commands = time.perf_counter() - start
        engine.send("boardsize 19", ANSWER_TIMEOUT)
        t_board = time.perf_counter() - start
        engine.send("clear_board", ANSWER_TIMEOUT)
        engine.send("genmove b", ANSWER_TIMEOUT)
        t_genmove = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime - cpu.ru_utime + after.ru_stime - cpu.ru_stime
    return {"to protocol_version answer": (t_version, "s"),
            "to list_commands answer": (t_commands, "s"),
            "to first board command answer": (t_board, "s"),
            "to first genmove answer (19x19)": (t_genmove, "s"),
            "engine CPU time, launch to quit after that genmove": (used, "s")}


@contextmanager
def _empty_caches():
    """HOME, XDG_CACHE_HOME and NUMBA_CACHE_DIR pointing at a fresh empty directory."""
    keys = ("HOME", "XDG_CACHE_HOME", "NUMBA_CACHE_DIR")
    saved = {k: os.environ.get(k) for k in keys}
    with tempfile.TemporaryDirectory() as home:
        os.environ.update(HOME=home, XDG_CACHE_HOME=os.path.join(home, ".cache"),
                          NUMBA_CACHE_DIR=os.path.join(home, "numba"))
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def measure(quick: bool, command: str | None = None) -> Figures:
    """One launch on the cache as it is (quick or not: a launch is what is measured)."""
    return _launch(command or default_command())


def measure_cold(quick: bool, command: str | None = None, model: str | None = None) -> Figures:
    """One launch with empty caches: numba compiles every kernel the first genmove needs."""
    command = command or default_command(model)
    with _empty_caches():
        figures = _launch(command)
    return {f"{name}, cold cache": value for name, value in figures.items()}


def measure_cold_network(quick: bool) -> Figures:
    """measure_cold with the reference KataGo network (../shared/models)."""
    if not MODEL.exists():
        raise Skip(f"no network at {MODEL}")
    return {f"{name}, b6c96 net": value
            for name, value in measure_cold(quick, model=str(MODEL)).items()}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", help="engine command line (default: python run_engine.py)")
    ap.add_argument("--cold", action="store_true", help="launch with empty caches")
    ap.add_argument("--model", help="network for the default engine command")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.cold:
        print_figures(measure_cold(a.quick, a.engine, a.model))
    else:
        print_figures(measure(a.quick, a.engine or default_command(a.model)))
