"""Throughput of `dosaku review` on a game collection with 1 and 2 local workers: positions
reviewed a second, start-up included (each worker builds its engine once).

    python -m dosaku.bench.review [--games 4] [--visits 100] [--model NET] [--quick]

Games: the 19x19 match records in records/ (9x9 ones with --quick); the net: KataGo's g170
b6c96 from ../shared unless named (the default transformer reviews a few positions a second,
so give it fewer games and visits); every run starts from an empty output folder.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sgfmill import sgf

from dosaku.bench.runner import B6C96_MODEL, Figures, Skip, print_figures
from dosaku.tournament.records import game_files

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "records"


def measure(quick: bool, games: int = 4, visits: int = 100,
            model: Path = B6C96_MODEL) -> Figures:
    if not model.exists():
        raise Skip(f"no network at {model}")
    record = RECORDS / ("b6c96-100visits-vs-gnugo10-9x9.jsonl.gz" if quick
                        else "b6c96-1s-vs-gnugo10-19x19.jsonl.gz")
    chosen = game_files(record, tempfile.mkdtemp())[:games]
    figures = {}
    for workers in (1, 2):
        out = tempfile.mkdtemp()
        started = time.monotonic()
        subprocess.run([sys.executable, str(ROOT / "run_engine.py"), "review",
                        *map(str, chosen), "--out", out, "--workers", str(workers),
                        "--visits", str(16 if quick else visits), "--model", str(model),
                        "--no-progress"], check=True, capture_output=True)
        seconds = time.monotonic() - started
        positions = sum(len(sgf.Sgf_game.from_bytes(p.read_bytes()).get_main_sequence())
                        for p in chosen)  # the root and one node a move: one a position
        figures[f"dosaku review, {workers} worker{'s' * (workers > 1)}"] = (
            positions / seconds, "positions/s")
    return figures


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--model", type=Path, default=B6C96_MODEL,
                    help="net file (default: KataGo's g170 b6c96 in ../shared)")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    print_figures(measure(a.quick, a.games, a.visits, a.model))
