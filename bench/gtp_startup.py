"""Print how long run_engine.py takes to answer the admin commands and the first board command.

Usage: PYTHONPATH=. python bench/gtp_startup.py [--cold]   (--cold: empty numba cache)
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def read_answer(stream) -> str:
    lines = []
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError("engine closed stdout")
        if line == b"\n":
            return b"".join(lines).decode()
        lines.append(line)


def main() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if "--cold" in sys.argv:
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp()
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(ROOT / "run_engine.py")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(b"protocol_version\nname\nversion\nlist_commands\nboardsize 19\n")
    proc.stdin.flush()
    for name in ("protocol_version", "name", "version", "list_commands", "boardsize"):
        read_answer(proc.stdout)
        print(f"{name:<17} answered after {time.monotonic() - t0:.3f} s")
    proc.stdin.write(b"quit\n")
    proc.stdin.close()
    proc.wait(10)


if __name__ == "__main__":
    main()
