"""Start-up latency of the engine as a GTP client sees it, from launching the process.

    PYTHONPATH=. python bench/startup.py [--engine "CMD"] [--quick]

Seconds from launch until the answers to `protocol_version` and `list_commands` (which the
engine should give at once, before its network and kernels are ready), and until the first
`genmove` answer on an empty 9x9 board (16 visits). numba's on-disk cache is used as it is: a first run
after a code change includes compilation and shows up in the spread.
"""

import argparse
import shlex
import sys
import time
from pathlib import Path

from bench.runner import Figures, Skip, print_figures
from tournament.controller import GtpController

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "run_engine.py"
ANSWER_TIMEOUT = 300.0


def default_command() -> str:
    """The engine with a small visit limit, so the genmove figure is start-up, not thinking."""
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(ENGINE))} --visits 16"


def measure(quick: bool, command: str | None = None) -> Figures:
    """One launch (quick or not: a launch is what is measured)."""
    if command is None:
        if not ENGINE.exists():
            raise Skip(f"{ENGINE.name} not found in {ROOT}")
        command = default_command()
    start = time.perf_counter()
    with GtpController(command, cwd=str(ROOT)) as engine:
        engine.send("protocol_version", ANSWER_TIMEOUT)
        t_version = time.perf_counter() - start
        engine.send("list_commands", ANSWER_TIMEOUT)
        t_commands = time.perf_counter() - start
        engine.send("boardsize 9", ANSWER_TIMEOUT)
        engine.send("clear_board", ANSWER_TIMEOUT)
        engine.send("genmove b", ANSWER_TIMEOUT)
        t_genmove = time.perf_counter() - start
    return {"to protocol_version answer": (t_version, "s"),
            "to list_commands answer": (t_commands, "s"),
            "to first genmove answer (9x9)": (t_genmove, "s")}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", help="engine command line (default: python run_engine.py)")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    print_figures(measure(a.quick, a.engine))
