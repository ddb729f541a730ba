"""A finished match kept as one compact file, from which its folder can be made again.

    python -m dosaku.tournament.records pack OUT_DIR records/NAME.jsonl.gz [--about TEXT] \
        [--cpu CPU]
    python -m dosaku.tournament.records unpack records/NAME.jsonl.gz DIR
    python -m dosaku.tournament.records sgf records/NAME.jsonl.gz N > game.sgf
    python -m dosaku.tournament.records index records

A match's --out folder holds an SGF per game beside match.json (and soak.json for a soak): tens
of files per match, too many to keep in the repository. A record is JSON Lines, gzip'd when its
name ends in .gz. Line 1, the header: the record's name, what it measured (`about`), the commit
and CPU it ran on, the date of its last game, match.json's config and summary, and for a soak
soak.json's summary with the memory samples cut to each process's largest RSS at each count of
finished games. Every other line is one game: its match.json entry without the SGF name (it
follows from the game number), the date its SGF was written, and its moves as one string of
SGF points (column then row letter, `..` for a pass), black first and alternating, as every
match game is.

`unpack` writes the folder back (match.json, the SGFs, soak.json for a soak) so that
`python -m dosaku.tournament.match ... --out DIR` resumes it; a resumed soak samples memory afresh.
`index` rewrites the table of DIR/README.md, one line per record in DIR.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from sgfmill import sgf

from dosaku.engine.rules.constants import BLACK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import SGF_LETTERS, point_from_sgfmill, point_from_xy, sgf_text
from dosaku.tournament.match import CONFIG_KEYS, RESULT_FILE, config_dict, sgf_name
from dosaku.tournament.match_game import GameResult, MatchConfig, Move
from dosaku.tournament.match_report import sgf_bytes, write_json, write_sgf

PASS = ".."
SOAK_FILE = "soak.json"
SUFFIXES = (".jsonl.gz", ".jsonl")
TABLE_HEAD = ("| record | what it measured | board | clock | games | engine 1 W-L-D | "
              "date, commit | CPU |\n|---|---|---|---|---|---|---|---|\n")


class RecordError(Exception):
    """A match folder or record that cannot be packed or read."""


@dataclass
class Record:
    """A record in memory, as its file holds it."""

    header: dict
    games: list[dict]  # one per game: match.json's entry, `date`, `moves` as a string

    @property
    def config(self) -> MatchConfig:
        """The match's settings, defaults filled in for keys older records lack."""
        cfg = self.header["config"]
        return MatchConfig(games=len(self.games), out="",
                           **{k: cfg[k] for k in CONFIG_KEYS if k in cfg})


def encode_moves(moves: list[Move], size: int) -> str:
    """Moves as one string of SGF points; RecordError unless black first and alternating."""
    out = []
    for i, (color, point) in enumerate(moves):
        if color != (BLACK, WHITE)[i % 2]:
            raise RecordError(f"move {i + 1} is not the alternating colour")
        out.append(PASS if point == PASS_POINT else sgf_text(point, size))
    return "".join(out)


def decode_moves(text: str, size: int) -> list[Move]:
    """The moves of encode_moves' string."""
    moves = []
    for i in range(0, len(text), 2):
        pair = text[i:i + 2]
        point = PASS_POINT if pair == PASS else point_from_xy(
            SGF_LETTERS.index(pair[0]), SGF_LETTERS.index(pair[1]), size)
        moves.append(((BLACK, WHITE)[i // 2 % 2], point))
    return moves


def read_sgf(path: str, size: int) -> tuple[str | None, list[Move]]:
    """(DT, main-line moves) of a match game's SGF."""
    with open(path, "rb") as fh:
        game = sgf.Sgf_game.from_bytes(fh.read())
    if game.get_size() != size:
        raise RecordError(f"{path}: board {game.get_size()}, the match's is {size}")
    root = game.get_root()
    moves = []
    for node in game.get_main_sequence()[1:]:
        color, move = node.get_move()
        if color is not None:
            moves.append((BLACK if color == "b" else WHITE, point_from_sgfmill(move, size)))
    return (root.get("DT") if root.has_property("DT") else None), moves


def memory(samples: list[dict]) -> list[dict]:
    """Per engine process, its largest RSS (MB) at each count of finished games: enough to
    see whether memory stayed flat, at a fraction of the samples' size."""
    peaks: dict[tuple[int, int], dict[int, float]] = {}
    for s in samples:
        by_games = peaks.setdefault((s["engine"], s["pid"]), {})
        by_games[s["games"]] = max(s["rss_mb"], by_games.get(s["games"], 0.0))
    return [{"engine": engine, "pid": pid, "rss_mb": sorted(by_games.items())}
            for (engine, pid), by_games in sorted(peaks.items())]


def head_commit() -> str | None:
    """The commit of the checkout this code runs from, short; None outside git."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def pack(out_dir: str, name: str, about: str | None = None, commit: str | None = None,
         cpu: str | None = None) -> Record:
    """The record of a match's --out folder; RecordError if an SGF disagrees with match.json."""
    with open(os.path.join(out_dir, RESULT_FILE), encoding="utf-8") as fh:
        data = json.load(fh)
    cfg = data["config"]
    games = []
    for r in data["games"]:
        if r["sgf"] != sgf_name(r["game"]):
            raise RecordError(f"{out_dir}: game {r['game']} is in {r['sgf']}")
        path = os.path.join(out_dir, r["sgf"])
        date, moves = read_sgf(path, cfg["size"])
        if len(moves) != r["moves"]:
            raise RecordError(f"{path}: {len(moves)} moves, match.json says {r['moves']}")
        try:
            line = {k: v for k, v in r.items() if k not in ("sgf", "moves")}
            games.append({**line, "date": date, "moves": encode_moves(moves, cfg["size"])})
        except RecordError as exc:
            raise RecordError(f"{path}: {exc}") from None
    dates = [g["date"] for g in games if g["date"]]
    header = {"record": name, "about": about or " vs ".join(cfg["engines"]),
              "commit": commit, "cpu": cpu, "date": max(dates) if dates else None,
              "config": cfg, "summary": data["summary"]}
    soak_path = os.path.join(out_dir, SOAK_FILE)
    if os.path.exists(soak_path):
        with open(soak_path, encoding="utf-8") as fh:
            soak = json.load(fh)
        header["soak"] = {"summary": soak["summary"], "memory": memory(soak["samples"])}
    return Record(header, games)


@contextmanager
def _open(path: str | Path, mode: str, zipped: bool):
    """A text file, through gzip when `zipped`; no name or time in the gzip header, so that
    packing the same match twice gives the same bytes."""
    if not zipped:
        with open(path, mode, encoding="utf-8") as fh:
            yield fh
        return
    with open(path, mode + "b") as raw, \
            gzip.GzipFile(fileobj=raw, mode=mode + "b", filename="", mtime=0) as packed, \
            io.TextIOWrapper(packed, encoding="utf-8") as fh:
        yield fh


def write(path: str | Path, record: Record) -> None:
    """Write a record through a temporary file."""
    tmp = f"{path}.tmp"
    with _open(tmp, "w", str(path).endswith(".gz")) as fh:
        for line in (record.header, *record.games):
            fh.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    os.replace(tmp, path)


def read(path: str | Path, header_only: bool = False) -> Record:
    """The record at `path`; with `header_only` its first line alone, all an index needs."""
    with _open(path, "r", str(path).endswith(".gz")) as fh:
        header = json.loads(fh.readline())
        games = [] if header_only else [json.loads(line) for line in fh]
    return Record(header, games)


def games_of(record: Record) -> list[tuple[GameResult, list[Move], str | None]]:
    """(match.json entry, moves, SGF date) of every game."""
    size = record.config.size
    names = {f.name for f in fields(GameResult)}
    out = []
    for line in record.games:
        moves = decode_moves(line["moves"], size)
        entry = {k: v for k, v in line.items() if k in names and k != "moves"}
        out.append((GameResult(**entry, moves=len(moves), sgf=sgf_name(line["game"])), moves,
                    line.get("date")))
    return out


def unpack(path: str | Path, out_dir: str) -> None:
    """Write the match folder of a record: match.json, the SGFs, soak.json for a soak."""
    record = read(path)
    cfg = record.config
    os.makedirs(out_dir, exist_ok=True)
    entries = []
    for result, moves, date in games_of(record):
        write_sgf(os.path.join(out_dir, result.sgf), cfg, result, moves, date)
        entries.append(asdict(result))
    write_json(os.path.join(out_dir, RESULT_FILE), {"config": config_dict(cfg),
                                                    "games": entries,
                                                    "summary": record.header["summary"]})
    soak = record.header.get("soak")
    if soak and "summary" in soak:
        write_json(os.path.join(out_dir, SOAK_FILE), {**soak, "samples": []})


def game_files(path: str | Path, out_dir: str) -> list[Path]:
    """The SGFs of the record at `path`, written into `out_dir`: for tools that read games as
    SGF files (benchmarks, the review of a collection)."""
    unpack(path, out_dir)
    return sorted(Path(out_dir).glob("*.sgf"))


def record_name(path: str | Path) -> str:
    """A record's name: its file name without the suffix."""
    name = Path(path).name
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[:-len(suffix)]
    raise RecordError(f"{path}: a record's name ends in {' or '.join(SUFFIXES)}")


def index_line(path: Path, header: dict) -> str:
    """One line of the index: what a reader needs to pick the record."""
    cfg, s = header["config"], header["summary"]
    clock = (f"`{cfg['clock']}`" if cfg.get("clock")
             else f"{cfg['move_time']:g} s a move" if cfg.get("move_time")
             else f"{cfg['game_time']:g} s a game" if cfg.get("game_time") else "-")
    games = f"{s['games']}" + (f" (+{s['void']} void)" if s.get("void") else "")
    cells = [f"[{header['record']}]({path.name})", header["about"],
             f"{cfg['size']}x{cfg['size']}, komi {cfg['komi']:g}", clock, games,
             f"{s['engine1_wins']}-{s['engine2_wins']}-{s['draws']}",
             ", ".join(x for x in (header.get("date"), header.get("commit")) if x),
             header.get("cpu") or ""]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def index_table(directory: str | Path) -> str:
    """The index of every record in `directory`, by name."""
    paths = sorted(p for p in Path(directory).iterdir() if p.name.endswith(SUFFIXES))
    return TABLE_HEAD + "".join(index_line(p, read(p, header_only=True).header) + "\n"
                                for p in paths)


def write_index(directory: str | Path) -> None:
    """Replace the table at the end of DIR/README.md with the index of the records there."""
    readme = Path(directory) / "README.md"
    text = readme.read_text(encoding="utf-8")
    head = text.split(TABLE_HEAD, 1)[0] if TABLE_HEAD in text else text.rstrip("\n") + "\n\n"
    readme.write_text(head + index_table(directory), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dosaku.tournament.records",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="a match's --out folder into one record file")
    p.add_argument("out_dir", help="the match's --out folder")
    p.add_argument("record", help="the record to write: NAME.jsonl.gz (or .jsonl)")
    p.add_argument("--about", help="what the match measured, for the index (default: the "
                                   "engine commands)")
    p.add_argument("--commit", help="the engine's commit (default: this checkout's HEAD)")
    p.add_argument("--cpu", help="the CPU the match ran on")
    p = sub.add_parser("unpack", help="a record into a match folder a rerun resumes")
    p.add_argument("record")
    p.add_argument("out_dir")
    p = sub.add_parser("sgf", help="game N (as in game-000N.sgf) of a record, to stdout")
    p.add_argument("record")
    p.add_argument("n", type=int)
    p = sub.add_parser("index", help="rewrite the table of DIR/README.md from DIR's records")
    p.add_argument("directory")
    a = ap.parse_args(argv)
    try:
        if a.command == "pack":
            write(a.record, pack(a.out_dir, record_name(a.record), a.about,
                                 a.commit or head_commit(), a.cpu))
        elif a.command == "unpack":
            unpack(a.record, a.out_dir)
        elif a.command == "sgf":
            record = read(a.record)
            games = {g[0].game + 1: g for g in games_of(record)}
            if a.n not in games:
                raise RecordError(f"{a.record} has no game {a.n} (1 to {len(games)})")
            result, moves, date = games[a.n]
            sys.stdout.buffer.write(sgf_bytes(record.config, result, moves, date) + b"\n")
        else:
            write_index(a.directory)
    except (RecordError, OSError, ValueError, KeyError) as exc:
        print(f"records: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
