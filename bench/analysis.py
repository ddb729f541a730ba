"""Throughput of the JSON analysis engine: positions analysed a second over 19x19 games, turns
of each game at a fixed number of visits, with Dosaku's `dosaku analysis` and, when a
KataGo binary is given, KataGo's own analysis engine on the same net.

    python -m dosaku.bench.analysis [--visits 100] [--games N] [--turns T] [--model NET]
        [--katago BINARY] [--katago-threads A,S] [--quick] [-- DOSAKU_FLAGS...]

Each engine is started, its ready line awaited on stderr (start-up is not timed), then every
game is sent as one query with T of its turns spread evenly over it (`analyzeTurns`; 20 unless
told, 0 for all), all at once, as a batch review does; the clock stops at the last final
answer. Games: a 19x19 match record of records/. The net: KataGo's transformer in weights/
(Dosaku's default), or the one named.
KataGo runs with numAnalysisThreads A and numSearchThreadsPerAnalysisThread S
(default 4,2: a batch configuration for two cores, its example config's advice for
throughput), Dosaku with its defaults (16 analysis threads of 2 leaves, batches up to 64).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sgfmill import sgf

from dosaku.bench.runner import B10_MODEL, Figures, Skip, print_figures
from dosaku.engine.rules.coords import format_vertex, point_from_sgfmill
from dosaku.tournament.records import game_files

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "records" / "b6c96-1s-vs-gnugo10-19x19.jsonl.gz"
READY = b"Started, ready to begin handling requests"


def main_line(game: sgf.Sgf_game) -> list[tuple[str, str]]:
    """The game's moves as (colour "b"/"w", GTP vertex or "pass")."""
    size = game.get_size()
    return [(color, format_vertex(point_from_sgfmill(move, size), size, size))
            for color, move in (node.get_move() for node in game.get_main_sequence()[1:])
            if color is not None]


def game_queries(count: int, visits: int, turns: int = 0) -> list[dict]:
    """One query per game (its whole main line; every turn analysed, or `turns` of them)."""
    queries = []
    for path in game_files(GAMES, tempfile.mkdtemp())[:count]:
        game = sgf.Sgf_game.from_bytes(path.read_bytes())
        moves = [[color.upper(), vertex] for color, vertex in main_line(game)]
        queries.append({"id": path.stem, "moves": moves, "rules": "chinese",
                        "komi": game.get_komi(), "boardXSize": 19, "boardYSize": 19,
                        "maxVisits": visits, "analyzeTurns": spread(len(moves) + 1, turns)})
    return queries


def spread(count: int, turns: int) -> list[int]:
    """All of range(count), or `turns` of it spread evenly from the first to the last."""
    if not turns or turns >= count:
        return list(range(count))
    return sorted({round(k * (count - 1) / max(turns - 1, 1)) for k in range(turns)})


def run(command: list[str], queries: list[dict]) -> tuple[int, float]:
    """(positions answered, seconds from sending the queries to the last final answer)."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tempfile.mkdtemp())
    try:
        for line in proc.stderr:
            if READY in line:
                break
        else:
            raise RuntimeError(f"{command[0]} exited before it was ready")
        expected = sum(len(q["analyzeTurns"]) for q in queries)
        started = time.monotonic()
        proc.stdin.write(b"".join(json.dumps(q).encode() + b"\n" for q in queries))
        proc.stdin.flush()
        done = 0
        while done < expected:
            answer = json.loads(proc.stdout.readline())
            if "error" in answer:
                raise RuntimeError(f"{command[0]}: {answer}")
            done += answer.get("isDuringSearch") is False
        return done, time.monotonic() - started
    finally:
        proc.kill()


def measure(quick: bool, katago: str | None = None, threads: str = "4,2",
            visits: int = 100, games: int = 0, flags: tuple[str, ...] = (),
            model: Path = B10_MODEL, turns: int = 20) -> Figures:
    if not model.exists():
        raise Skip(f"no network at {model}")
    queries = game_queries(games or (1 if quick else 2), 10 if quick else visits,
                           4 if quick else turns)
    figures = {}
    dosaku = [sys.executable, str(ROOT / "run_engine.py"), "analysis", "-model",
              str(model), *flags]
    n, seconds = run(dosaku, queries)
    figures[" ".join(["dosaku analysis", *flags])] = (n / seconds, "positions/s")
    if katago:
        analysis_threads, search_threads = threads.split(",")
        cfg = Path(tempfile.mkdtemp()) / "analysis.cfg"
        cfg.write_text(f"numAnalysisThreads = {analysis_threads}\n"
                       f"numSearchThreadsPerAnalysisThread = {search_threads}\n"
                       "nnMaxBatchSize = 64\nlogToStderr = false\nlogDir = logs\n")
        n, seconds = run([katago, "analysis", "-config", str(cfg), "-model",
                          str(model)], queries)
        figures[f"KataGo analysis ({threads})"] = (n / seconds, "positions/s")
    return figures


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--katago", help="KataGo binary to compare with")
    ap.add_argument("--katago-threads", default="4,2", help="numAnalysisThreads,"
                    "numSearchThreadsPerAnalysisThread of KataGo (default 4,2)")
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--games", type=int, default=0, help="games (default 2, quick 1)")
    ap.add_argument("--turns", type=int, default=20,
                    help="turns of each game analysed, spread evenly (default 20, 0: all)")
    ap.add_argument("--model", type=Path, default=B10_MODEL, help="net file (default: "
                    "KataGo's transformer in weights/, Dosaku's default)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("flags", nargs="*", help="dosaku's own flags (after --), e.g. --no-int8")
    a = ap.parse_args()
    print_figures(measure(a.quick, a.katago, a.katago_threads, a.visits, a.games,
                          tuple(a.flags), a.model, a.turns))
