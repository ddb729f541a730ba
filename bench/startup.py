"""Start-up latency of the engine as a GTP client sees it, from launching the process.

    python -m dosaku.bench.startup [--katago "CMD"] [--engine "CMD"] [--model NET]

Seconds from launch until the answers to `protocol_version` and `list_commands` (which the
engine should give at once, before its network and kernels are ready), until the first board
command (`boardsize 19`, which waits for the engine to be built), and until the first `genmove`
answer on the empty 19x19 board at the default flags (1 s a move), with the engine's CPU
seconds. Run alone it prints two rows: the first start of a new install (empty HOME, network
cache and numba cache: the net converted, the kernels compiled meanwhile) and a later start
(the same caches, once the first start's compiling helper is done), with KataGo's start beside
them when `--katago` gives its command. `measure` (for `python -m dosaku.bench`) uses the caches as
they are, `measure_cold` empty ones.
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

from dosaku.bench.runner import SHARED, Figures, Skip
from dosaku.tournament.controller import GtpController

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "run_engine.py"
MODEL = SHARED / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
ANSWER_TIMEOUT = 300.0


def default_command(model: str | None = None) -> str:
    """The engine at its default flags: the first genmove includes its second of thinking."""
    if not ENGINE.exists():
        raise Skip(f"{ENGINE.name} not found in {ROOT}")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(ENGINE))}"
    if model is not None:
        from dosaku.networks.cache import onnx_for
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
    """HOME, XDG_CACHE_HOME and NUMBA_CACHE_DIR pointing at a fresh empty directory (removed
    afterwards)."""
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


def wait_for_compiled_kernels(timeout: float = 900.0) -> None:
    """Until the first start's helper has filled the numba cache (its lock is free and the
    search kernel is there), so that the next start is a warm one."""
    import fcntl

    from dosaku.engine.precompile import LOCK, cache_is_cold
    lock = Path(os.environ["NUMBA_CACHE_DIR"]) / LOCK
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not cache_is_cold():
            with open(lock, "a") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return
                except OSError:
                    pass
        time.sleep(0.5)
    raise TimeoutError("the kernels were not compiled in time")


ROWS = ("to first board command answer", "to first genmove answer (19x19)")


def first_and_later_start(command: str) -> dict[str, Figures]:
    """The first start of a new install, then a later one on the caches it left."""
    with _empty_caches():
        first = _launch(command)
        wait_for_compiled_kernels()
        later = _launch(command)
    return {"first start (empty caches)": first, "later start (warm caches)": later}


def print_table(rows: dict[str, Figures]) -> None:
    print("| | `boardsize` answered | first 19x19 genmove answered |\n|---|---|---|")
    for name, figures in rows.items():
        print(f"| {name} | " + " | ".join(f"{figures[k][0]:.1f} s" for k in ROWS) + " |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", help="engine command line (default: python run_engine.py)")
    ap.add_argument("--model", help="network for the default engine command")
    ap.add_argument("--katago", help="KataGo's GTP command line, measured beside (a second "
                    "start: its first run has nothing to compile)")
    a = ap.parse_args()
    table = {f"Dosaku, {name}": figures for name, figures in
             first_and_later_start(a.engine or default_command(a.model)).items()}
    if a.katago:
        _launch(a.katago)
        table["KataGo"] = _launch(a.katago)
    print_table(table)
