"""Review a collection of games: `dosaku review GAMES... --out DIR`.

Every SGF named, or found under a folder named, is reviewed as tournament/review.py reviews
one game: each position searched, its winrate, score lead and best line written into the SGF,
each side's biggest mistakes listed. Games are spread over `--workers` local processes (or,
with `--ray-address`, the same work on a Ray cluster: training/review_ray.py), a progress bar
counts finished games, and DIR/summary.json gathers the per-game summaries.

Resumable: each game keeps its sidecar JSON of analysed positions (tournament/review.py's
Cache) as it goes, so a rerun after an interrupt searches only what is missing, and a game
already complete costs no search at all.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Callable, Iterable, Iterator

from tqdm import tqdm

from dosaku.tournament.match_report import write_json
from dosaku.tournament.review import (
    Cache,
    ReviewError,
    add_engine_arguments,
    build_engine,
    engine_flags,
    load_game,
    mistakes,
    review_positions,
)


@dataclass(frozen=True)
class ReviewJob:
    """One game to review and the settings of the run (what engine_flags reads)."""
    game: str  # the SGF
    out: str  # the reviewed SGF to write (its sidecar JSON beside it)
    visits: int
    model: str | None
    evaluator: str | None
    threads: int
    seed: int
    rules: str | None
    mistakes: int


_engines: dict[tuple, object] = {}  # this process's engines, by their flags


def _engine(flags: list[str]):
    """An engine for these flags, built once per process (a worker reviews many games)."""
    key = tuple(flags)
    if key not in _engines:
        _engines[key] = build_engine(flags)
    return _engines[key]


def review_game(job: ReviewJob) -> dict:
    """Review one game (resuming from its sidecar); its summary, or its error."""
    from dosaku.tournament.review_output import annotate
    try:
        data = Path(job.game).read_bytes()
        game = load_game(data, job.rules)
        flags = engine_flags(job, game)
        cache = Cache(job.out + ".json", {"game": hashlib.sha256(data).hexdigest(),
                                          "engine": flags})
        searched = review_positions(game, cache, lambda: _engine(flags), progress=False)
    except (OSError, ValueError, ReviewError) as exc:
        return {"game": job.game, "error": str(exc)}
    found = mistakes(game, cache.positions)
    annotate(game, cache.positions, found, job.visits, job.mistakes)
    Path(job.out).write_bytes(game.sgf.serialise())
    return {"game": job.game, "out": job.out, "positions": len(game.moves) + 1,
            "searched": searched,
            "mistakes": {c: [asdict(m) for m in found[c][:job.mistakes]] for c in "BW"}}


def find_games(paths: list[str]) -> list[tuple[Path, Path]]:
    """(SGF, its path relative to the folder it was found under) for every game named."""
    games = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            games += [(p, p.relative_to(path)) for p in sorted(path.rglob("*.sgf"))]
        else:
            games.append((path, Path(path.name)))
    return games


def run_local(jobs: list[ReviewJob], workers: int) -> Iterator[dict]:
    """Review the jobs on `workers` processes (in this one for a single worker), yielding each
    summary as its game finishes."""
    if workers <= 1:
        yield from map(review_game, jobs)
        return
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(review_game, job) for job in jobs]
        for future in as_completed(futures):
            yield future.result()


def summary_line(summary: dict) -> str:
    if "error" in summary:
        return f"{summary['game']}: {summary['error']}"
    worst = {c: summary["mistakes"][c][0] if summary["mistakes"][c] else None for c in "BW"}
    text = ", ".join(f"{'Black' if c == 'B' else 'White'} move {m['move']} {m['vertex']} "
                     f"-{100 * m['loss']:.1f}%" for c, m in worst.items() if m)
    return f"{summary['game']}: {text or 'no mistakes'}"


def main(argv: list[str] | None = None,
         ray_runner: Callable[[list[ReviewJob], int, str], Iterable[dict]] | None = None) -> int:
    """`dosaku review`; `ray_runner(jobs, workers, address)` runs the jobs on Ray."""
    ap = argparse.ArgumentParser(prog="dosaku review", description=__doc__.split("\n")[0])
    ap.add_argument("games", nargs="+", help="SGF files and folders of them")
    ap.add_argument("--out", required=True, help="folder for the reviewed SGFs and summary.json")
    ap.add_argument("--visits", type=int, default=100, help="visits per position (default 100)")
    ap.add_argument("--workers", type=int, default=1, help="games reviewed at once (default 1)")
    ap.add_argument("--ray-address", help="run the workers on this Ray cluster")
    add_engine_arguments(ap, threads=1)
    a = ap.parse_args(argv)
    if a.visits < 1 or a.workers < 1 or a.threads < 1:
        ap.error("--visits, --workers and --threads must be at least 1")
    games = find_games(a.games)
    missing = [str(p) for p, _ in games if not p.is_file()]
    if missing or not games:
        ap.error(f"no such SGF: {', '.join(missing)}" if missing else "no SGF found")
    out = Path(a.out)
    jobs = []
    for path, rel in games:
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        jobs.append(ReviewJob(str(path), str(target), a.visits, a.model, a.evaluator,
                              a.threads, a.seed, a.rules, a.mistakes))
    if a.ray_address and ray_runner is None:
        ap.error("--ray-address needs Ray (the `train` extra: pip install dosaku[train])")
    results = ray_runner(jobs, a.workers, a.ray_address) if a.ray_address \
        else run_local(jobs, a.workers)
    summaries = []
    for summary in tqdm(results, total=len(jobs), unit="game", disable=a.no_progress,
                        file=sys.stderr):
        summaries.append(summary)
        tqdm.write(summary_line(summary), file=sys.stderr)
    summaries.sort(key=lambda s: s["game"])
    write_json(str(out / "summary.json"), {"visits": a.visits, "games": summaries})
    failed = sum("error" in s for s in summaries)
    print(f"reviewed {len(summaries) - failed} games, {failed} failed; summary: "
          f"{out / 'summary.json'}")
    return 1 if failed else 0
