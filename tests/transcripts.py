"""Seeded GTP transcripts: with fixed visits, one search thread and a seed the engine's answers
are a function of its input, so a change meant to keep behaviour must leave them
byte-identical.

    python tests/transcripts.py DIR   # write every run's answers to DIR/NAME.answers

Runs the engine as a subprocess (run_engine.py) on the command files in tests/data/transcript.
The PORTABLE runs (random playouts, uniform priors: numba code only) give the same answers on
any machine and are checked against the committed answers by test_gtp_transcript.py; the
network runs depend on the CPU's float kernels, so they are for comparing two versions on one
machine.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "transcript"
SEEDED = ("--seed", "1", "--visits", "64", "--threads", "1", "--no-ponder")

# name: (command file, flags)
PORTABLE = {
    "rollout-9": ("board9.gtp", ("--evaluator", "rollout")),
    "rollout-19": ("board19.gtp", ("--evaluator", "rollout")),
    "uniform-9": ("board9.gtp", ("--evaluator", "uniform")),
}
NETWORK = {
    "network-9": ("board9.gtp", ("--no-int8",)),
    "network-19": ("board19.gtp", ("--no-int8",)),
    "network-raw": ("network.gtp", ("--no-int8",)),
    "network-9-parallel": ("board9.gtp", ("--no-int8", "--threads", "2")),
}


def answers(commands: str, flags: tuple[str, ...]) -> bytes:
    """The engine's stdout for a command file (the last flags win over SEEDED's)."""
    with open(DATA / commands, "rb") as stdin:
        done = subprocess.run([sys.executable, str(ROOT / "run_engine.py"), *SEEDED, *flags],
                              stdin=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=600, check=True)
    return done.stdout


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, (commands, flags) in (PORTABLE | NETWORK).items():
        (out / f"{name}.answers").write_bytes(answers(commands, flags))
        print(name)
