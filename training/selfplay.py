"""Self-play and teacher games that become training rows (chunks + manifest, training.chunks).

The games themselves are played by training/selfplay_game.py, in this process or on Ray workers
(training/workers.py); this module writes their rows as chunks and keeps the manifest.

CLI (rerunning with the same --out resumes: --games is the total wanted there):
    python -m dosaku.training.selfplay --teacher NET.bin.gz --sizes 9,13,19 --games 100 --visits 8 \
        --out DIR [--workers W] [--ray-address ADDR]
        [--branch-share 0.5 --branch-out BRANCH_DIR]  (teacher-labelled positions a move off
                                                       the game line, in a folder of their own)
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from dosaku.training.chunks import Rows, read_manifest, write_chunk
from dosaku.training.selfplay_game import GameResult, GameSpec, SelfPlaySettings

CHUNK_ROWS = 2048  # rows per chunk file (per board size)


def concat_rows(parts: list[Rows]) -> Rows:
    """The rows of several games on one board size as one Rows."""
    first = parts[0]

    def cat(name):
        return np.concatenate([getattr(p, name) for p in parts])

    teacher = {k: np.concatenate([p.teacher[k] for p in parts]) for k in first.teacher}
    return Rows(first.height, first.width, first.num_spatial, first.feature_set,
                cat("spatial_bits"), cat("global_in"), cat("policy"), cat("policy_weight"),
                cat("value"), cat("score"), cat("ownership"), teacher)


# ------------------------------------------------------------------ chunks on disk

_CHUNK_NAME = re.compile(r"^(\d{6})-")


def games_in(folder: str | Path, source: str) -> int:
    """Games of this source already recorded in the folder's manifest."""
    return sum(int(c.get("games", 0)) for c in read_manifest(folder)["chunks"]
               if c.get("source") == source)


class ChunkWriter:
    """Collects finished games per board size and writes a chunk whenever one size has
    `chunk_rows` rows. Numbering continues after the highest chunk number in the folder
    (manifest or file), so a rerun never overwrites."""

    def __init__(self, folder: str | Path, source: str, info: dict, chunk_rows: int = CHUNK_ROWS):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.source = source
        self.info = info
        self.chunk_rows = chunk_rows
        self.pending: dict[int, list[GameResult]] = {}
        self.entries: list[dict] = []
        names = [c["file"] for c in read_manifest(self.folder)["chunks"]]
        names += [p.name for p in self.folder.iterdir()]
        numbers = [int(m.group(1)) for m in map(_CHUNK_NAME.match, names) if m]
        self.next_number = max(numbers, default=0) + 1

    def add(self, result: GameResult) -> None:
        """Queue a finished game's rows (the branch writer gets games whose `rows` are their
        branch rows)."""
        games = self.pending.setdefault(result.size, [])
        games.append(result)
        if sum(len(g.rows) for g in games) >= self.chunk_rows:
            self._write(result.size)

    def flush(self) -> None:
        for size in list(self.pending):
            self._write(size)

    def _write(self, size: int) -> None:
        games = [g for g in self.pending.pop(size, []) if len(g.rows)]
        if not games:
            return
        name = f"{self.next_number:06d}-{self.source}-{size}x{size}.npz"
        self.next_number += 1
        entry = write_chunk(
            self.folder, name, concat_rows([g.rows for g in games]), self.source,
            games=len(games), moves=sum(len(g.moves) for g in games),
            resigned=sum(bool(g.resigned) for g in games),
            resign_checked=sum(bool(g.would_resign) for g in games),
            false_resignations=sum(g.false_resign for g in games),
            game_seconds=round(sum(g.seconds for g in games), 3),
            game_cpu_seconds=round(sum(g.cpu_seconds for g in games), 3), **self.info)
        self.entries.append(entry)


# ------------------------------------------------------------------ the API and the CLI

def onnx_path(path: str | Path | None) -> str | None:
    """An ONNX file for a network path (.bin.gz converted once, cached); None stays None."""
    if path is None:
        return None
    from dosaku.networks.cache import onnx_for
    return str(onnx_for(path))


def game_specs(first: int, games: int, sizes, seed: int) -> list[GameSpec]:
    """Games first..first+games-1: sizes in turn, a seed per game number."""
    sizes = list(sizes)
    return [GameSpec(n, sizes[n % len(sizes)],
                     int(np.random.SeedSequence([seed, n]).generate_state(1)[0]))
            for n in range(first, first + games)]


def generate(out_dir: str | Path, net: str | Path | None = None,
             teacher: str | Path | None = None, games: int = 1, sizes=(9,),
             settings: SelfPlaySettings = SelfPlaySettings(), workers: int = 1,
             ray_address: str | None = None, seed: int | None = None,
             chunk_rows: int = CHUNK_ROWS, progress: bool = False,
             branch_out: str | Path | None = None) -> list[dict]:
    """Play `games` new games into out_dir (chunks + manifest) and return the new manifest
    entries (of out_dir).

    net: the network that plays (ONNX or KataGo .bin.gz); None plays with the teacher, or
    with no teacher by random-playout search (generation 0). teacher: a network whose raw
    outputs every row also carries. Board sizes take turns by game number. workers=1 without
    ray_address plays in this process; otherwise games run on Ray actors (training.workers).
    seed: None draws one (it is kept in the manifest). branch_out: the folder of the branch
    rows (settings.branch_share > 0, which needs a teacher), source "branch".
    """
    from dosaku.training.workers import run_games
    if settings.branch_share > 0 and (teacher is None or branch_out is None):
        raise ValueError("branch rows need a teacher to label them and a branch_out folder")
    net, teacher = onnx_path(net), onnx_path(teacher)
    source = "teacher" if teacher else "selfplay"
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    first = games_in(out_dir, source)
    info = {"net": Path(net or teacher).name if (net or teacher) else "rollout",
            "teacher": Path(teacher).name if teacher else None, "seed": seed,
            "settings": asdict(settings)}
    writer = ChunkWriter(out_dir, source, info, chunk_rows)
    branch_writer = ChunkWriter(branch_out, "branch", info, chunk_rows) if branch_out else None
    specs = game_specs(first, games, sizes, seed)
    try:
        for result in run_games(specs, net, teacher, settings, workers, ray_address, progress):
            writer.add(result)
            if branch_writer and result.branch_rows is not None:
                branch_writer.add(replace(result, rows=result.branch_rows, branch_rows=None))
    finally:
        writer.flush()
        if branch_writer:
            branch_writer.flush()
    return writer.entries


def summary(entries: list[dict], wall_seconds: float, workers: int) -> str:
    """Rows, games and speed per board size, and the resignation counts."""
    lines = []
    for size in sorted({e["size"][0] for e in entries}):
        mine = [e for e in entries if e["size"][0] == size]
        rows = sum(e["rows"] for e in mine)
        games = sum(e["games"] for e in mine)
        busy = sum(e["game_seconds"] for e in mine)
        cpu = sum(e["game_cpu_seconds"] for e in mine)
        lines.append(f"{size}x{size}: {games} games, {rows} rows, "
                     f"{rows / max(busy, 1e-9):.1f} rows/s per worker, "
                     f"{rows / max(cpu, 1e-9):.1f} rows per CPU second")
    rows = sum(e["rows"] for e in entries)
    lines.append(f"total: {rows} rows in {wall_seconds:.1f} s wall "
                 f"({rows / max(wall_seconds, 1e-9):.1f} rows/s with {workers} worker(s)); "
                 f"resigned {sum(e['resigned'] for e in entries)}, false resignations "
                 f"{sum(e['false_resignations'] for e in entries)} of "
                 f"{sum(e['resign_checked'] for e in entries)} played-out would-be resignations")
    return "\n".join(lines)


def main(argv=None) -> int:
    d = SelfPlaySettings()
    ap = argparse.ArgumentParser(
        description="Self-play or teacher games into training chunks (see training.selfplay).")
    ap.add_argument("--out", required=True, help="folder of chunks + manifest.json (resumed)")
    ap.add_argument("--net", help="network that plays (ONNX or KataGo .bin.gz)")
    ap.add_argument("--teacher", help="teacher network: plays unless --net, labels every row")
    ap.add_argument("--games", type=int, default=100,
                    help="games wanted in --out in total (a rerun plays only the missing ones)")
    ap.add_argument("--sizes", default="9", help="board sizes taking turns, e.g. 9,13,19")
    ap.add_argument("--visits", type=int, default=d.visits,
                    help="full search visits (<=1: raw policy)")
    ap.add_argument("--fast-visits", type=int, default=d.fast_visits)
    ap.add_argument("--full-search-prob", type=float,
                    help="share of full searches (default 1 with --teacher, else "
                         f"{d.full_search_prob})")
    ap.add_argument("--noise-weight", type=float, default=d.noise_weight)
    ap.add_argument("--temperature-moves", type=int, default=d.temperature_moves)
    ap.add_argument("--pass-from", type=float, default=d.pass_from,
                    help="no pass before this share of the board's points in moves")
    ap.add_argument("--resign-threshold", type=float,
                    help=f"default 0 (never) with --teacher, else {d.resign_threshold}")
    ap.add_argument("--resign-playout-share", type=float, default=d.resign_playout_share)
    ap.add_argument("--gumbel", action="store_true", help="Gumbel root search, completed-Q targets")
    ap.add_argument("--gumbel-k", type=int, default=d.gumbel_k)
    ap.add_argument("--gumbel-simulations", type=int, default=d.gumbel_simulations)
    ap.add_argument("--komi", type=float, help="komi for every size (default 7 on 9x9, else 7.5)")
    ap.add_argument("--rules", default=d.rules)
    ap.add_argument("--batch", type=int, default=d.batch_size)
    ap.add_argument("--workers", type=int, default=1, help="1: this process; more: Ray actors")
    ap.add_argument("--ray-address", help="join this Ray cluster instead of starting one")
    ap.add_argument("--branch-share", type=float, default=d.branch_share,
                    help="with --teacher: share of positions that also give a row a move off "
                         "the game line (labelled by the teacher) into --branch-out")
    ap.add_argument("--branch-top", type=int, default=d.branch_top,
                    help="the branch move is drawn from the player's this many top other moves")
    ap.add_argument("--branch-out", help="folder of the branch rows (resumed with --out)")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS)
    args = ap.parse_args(argv)
    # Teacher games are cheap: every move is a full search and games are never resigned.
    share = args.full_search_prob
    if share is None:
        share = 1.0 if args.teacher else d.full_search_prob
    resign = args.resign_threshold
    if resign is None:
        resign = 0.0 if args.teacher else d.resign_threshold
    settings = SelfPlaySettings(
        visits=args.visits, fast_visits=args.fast_visits, full_search_prob=share,
        noise_weight=args.noise_weight, temperature_moves=args.temperature_moves,
        pass_from=args.pass_from,
        resign_threshold=resign, resign_playout_share=args.resign_playout_share,
        gumbel=args.gumbel, gumbel_k=args.gumbel_k, gumbel_simulations=args.gumbel_simulations,
        komi=args.komi, rules=args.rules, batch_size=args.batch,
        branch_share=args.branch_share, branch_top=args.branch_top)
    if settings.branch_share > 0 and not (args.teacher and args.branch_out):
        ap.error("--branch-share needs --teacher and --branch-out")
    sizes = tuple(int(s) for s in args.sizes.split(","))
    source = "teacher" if args.teacher else "selfplay"
    have = games_in(args.out, source)
    todo = max(args.games - have, 0)
    print(f"selfplay: {have} {source} games in {args.out}, playing {todo} more", file=sys.stderr)
    started = time.monotonic()
    try:
        entries = generate(args.out, args.net, args.teacher, todo, sizes, settings,
                           args.workers, args.ray_address, args.seed, args.chunk_rows,
                           progress=True, branch_out=args.branch_out)
    except KeyboardInterrupt:
        print(f"selfplay: interrupted; finished games are in {args.out} (rerun to go on)",
              file=sys.stderr)
        return 130
    if entries:
        print(summary(entries, time.monotonic() - started, args.workers), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
