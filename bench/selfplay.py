"""Training-data generation speed: teacher rows/s by board size and visits, self-play games/min.

    python -m dosaku.bench.selfplay [--quick]

Games are written to a scratch folder through training.selfplay.generate (chunks and all), so
the figures include everything a real run does. Rows per CPU second hardly depend on other
load on the machine (one thread per worker); wall rates do.
"""

import argparse
import tempfile
import time
from pathlib import Path

from dosaku.bench.runner import Skip, print_figures

MODEL = (Path(__file__).resolve().parents[1].parent / "shared" / "models"
         / "g170-b6c96-s175395328-d26788732.bin.gz")


def _need_model():
    if not MODEL.exists():
        raise Skip(f"no network at {MODEL}")


def _run(games, sizes, settings, workers=1, **kw):
    """(new manifest entries, wall seconds) of one generate call into a scratch folder."""
    from dosaku.training.selfplay import generate
    with tempfile.TemporaryDirectory() as out:
        started = time.monotonic()
        entries = generate(out, games=games, sizes=sizes, settings=settings, workers=workers,
                           seed=1, **kw)
        return entries, time.monotonic() - started


def measure_teacher(quick: bool) -> dict[str, tuple[float, str]]:
    """Teacher rows per CPU second and per wall second, one worker, visits 1 and 8."""
    _need_model()
    from dosaku.training.selfplay import SelfPlaySettings
    figures = {}
    _run(1, (9,), SelfPlaySettings(visits=8, full_search_prob=1.0), teacher=MODEL)  # warm up
    for visits in (1, 8):
        settings = SelfPlaySettings(visits=visits, full_search_prob=1.0, resign_threshold=0)
        for size in (9, 13, 19):
            games = 1 if quick or (visits > 1 and size == 19) else 3
            entries, _ = _run(games, (size,), settings, teacher=MODEL)
            rows = sum(e["rows"] for e in entries)
            figures[f"teacher {size}x{size}, visits {visits}"] = (
                rows / sum(e["game_cpu_seconds"] for e in entries), "rows/CPU s")
            figures[f"teacher {size}x{size}, visits {visits}, wall"] = (
                rows / sum(e["game_seconds"] for e in entries), "rows/s")
    return figures


def measure_ray(quick: bool) -> dict[str, tuple[float, str]]:
    """Teacher rows/s on 9x9 (visits 1) with two local Ray workers, start-up included."""
    _need_model()
    from dosaku.training.selfplay import SelfPlaySettings
    settings = SelfPlaySettings(visits=1, full_search_prob=1.0, resign_threshold=0)
    entries, wall = _run(4 if quick else 16, (9,), settings, workers=2, teacher=MODEL)
    return {"teacher 9x9, visits 1, 2 Ray workers": (sum(e["rows"] for e in entries) / wall,
                                                     "rows/s")}


def measure_selfplay(quick: bool) -> dict[str, tuple[float, str]]:
    """9x9 self-play games per minute of one worker with the b6c96 net (PUCT, 100 full /
    20 fast visits, full-search share 0.25; and Gumbel 16 simulations)."""
    _need_model()
    from dosaku.training.selfplay import SelfPlaySettings
    figures = {}
    for name, settings in (("PUCT 100/20 visits", SelfPlaySettings()),
                           ("Gumbel 16 sims", SelfPlaySettings(gumbel=True, fast_visits=4))):
        entries, _ = _run(1 if quick else 4, (9,), settings, net=MODEL)
        games = sum(e["games"] for e in entries)
        figures[f"self-play 9x9, b6c96, {name}"] = (
            60 * games / sum(e["game_cpu_seconds"] for e in entries), "games/CPU min")
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    quick = ap.parse_args().quick
    for measure in (measure_teacher, measure_selfplay, measure_ray):
        print_figures(measure(quick))


if __name__ == "__main__":
    main()
