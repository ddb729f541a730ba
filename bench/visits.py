"""Visits a second of Dosaku and KataGo's GTP engine on the same net and the same positions.

    python -m dosaku.bench.visits --katago BIN --katago-config GTP_EXAMPLE.cfg [--size 19]
        [--seconds 1] [--positions 8] [--model NET] [--katago-threads 2,8] [-- DOSAKU_FLAGS...]

Positions: turns spread evenly over a game of a match record in records/ (19x19 or 9x9). Each
engine, alone on the machine and one after the other, is given each position afresh
(`clear_board`, the game's moves up to that turn, one `genmove` at a fixed time a move), so no
visit is reused from a previous search; Dosaku searches after a pass too (no friendly pass).
Dosaku's new playouts and seconds are read from the line it writes to stderr after each
genmove; KataGo's from its search log (`New playouts`, `Time taken`), run on the config given
(KataGo's `gtp_example.cfg`) with its threads, time, visits, pondering, resignation and
logging overridden. The figure is new visits over seconds searched, summed over the
positions; the first position of each engine is a warm-up and left out. KataGo runs with each
numSearchThreads asked (its Eigen backend then uses that many threads at most); the ratio is
against its best. The CPU's model and vector flags are printed
with the figures, since the ratio depends on them.
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from sgfmill import sgf

from dosaku.bench.analysis import main_line
from dosaku.bench.budget import KOMI
from dosaku.bench.runner import B10_MODEL, Figures, Skip, cpu_kind, print_figures
from dosaku.tournament.records import game_files

ROOT = Path(__file__).resolve().parents[1]
GAMES = {19: ROOT / "records" / "b6c96-1s-vs-gnugo10-19x19.jsonl.gz",
         9: ROOT / "records" / "b6c96-100visits-vs-gnugo10-9x9.jsonl.gz"}
DOSAKU_LINE = re.compile(rb"^genmove \w [^:]+: \d+ visits, (\d+) playouts, ([\d.]+) s,")
KATAGO_PLAYOUTS = re.compile(rb"^New playouts: (\d+)")
KATAGO_TIME = re.compile(rb"^Time taken: ([\d.e+-]+)")


def positions(size: int, count: int) -> list[list[tuple[str, str]]]:
    """`count` move sequences: the first game's first n moves for n spread over the game."""
    path = game_files(GAMES[size], tempfile.mkdtemp())[0]
    moves = main_line(sgf.Sgf_game.from_bytes(path.read_bytes()))
    ends = [round(k * (len(moves) - 1) / max(count - 1, 1)) for k in range(count)]
    return [moves[:n] for n in ends]


def commands(size: int, moves: list[tuple[str, str]]) -> bytes:
    """The GTP lines that set up one position and search it once."""
    lines = ["clear_board", *(f"play {c} {v}" for c, v in moves)]
    to_move = "w" if moves and moves[-1][0] == "b" else "b"
    lines.append(f"genmove {to_move}")
    return "".join(line + "\n" for line in lines).encode()


def search_figures(command: list[str], size: int, games: list, rate_of) -> float:
    """New visits a second over `games` (the first left out), read from stderr by `rate_of`,
    which yields (playouts, seconds) pairs from the stderr lines."""
    setup = f"boardsize {size}\nkomi {KOMI[size]}\n".encode()
    body = b"".join(commands(size, moves) for moves in games)
    proc = subprocess.run(command, input=setup + body + b"quit\n", capture_output=True,
                          cwd=tempfile.mkdtemp(), timeout=3600)
    pairs = list(rate_of(proc.stderr.splitlines()))
    if len(pairs) != len(games):
        tail = proc.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"{command[0]}: {len(pairs)} searches logged of {len(games)}\n{tail}")
    pairs = pairs[1:]
    return sum(p for p, _ in pairs) / sum(s for _, s in pairs)


def dosaku_pairs(lines):
    for line in lines:
        m = DOSAKU_LINE.match(line)
        if m:
            yield int(m.group(1)), float(m.group(2))


def katago_pairs(lines):
    seconds = None
    for line in lines:
        line = re.sub(rb"^\S+ \S+[+-]\d+: ", b"", line)  # the logger's time stamp
        m = KATAGO_TIME.match(line)
        if m:
            seconds = float(m.group(1))
        m = KATAGO_PLAYOUTS.match(line)
        if m and seconds is not None:
            yield int(m.group(1)), seconds
            seconds = None


def katago_overrides(threads: int, seconds: float) -> str:
    return (f"numSearchThreads={threads},nnMaxBatchSize={threads},maxVisits=100000000,"
            f"maxTime={seconds},ponderingEnabled=false,allowResignation=false,"
            "logSearchInfo=true,logToStderr=true,logDir=logs,rules=chinese")


def measure(katago: str | None, katago_config: str | None, size: int, seconds: float,
            count: int, model: Path, threads: list[int], flags: tuple[str, ...]) -> Figures:
    if not model.exists():
        raise Skip(f"no network at {model}")
    games = positions(size, count + 1)
    dosaku = [sys.executable, str(ROOT / "run_engine.py"), "--model", str(model),
              "--time", str(seconds), "--resign-threshold", "0", "--no-friendly-pass", *flags]
    figures = {}
    ours = search_figures(dosaku, size, games, dosaku_pairs)
    figures[" ".join(["dosaku", *flags]) + f" {size}x{size}"] = (ours, "visits/s")
    best = 0.0
    for t in threads if katago else ():
        command = [katago, "gtp", "-model", str(model), "-config", katago_config,
                   "-override-config", katago_overrides(t, seconds)]
        rate = search_figures(command, size, games, katago_pairs)
        figures[f"KataGo numSearchThreads={t} {size}x{size}"] = (rate, "visits/s")
        best = max(best, rate)
    if best:
        figures[f"dosaku / KataGo's best {size}x{size}"] = (ours / best, "ratio")
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--katago", help="KataGo binary to compare with")
    ap.add_argument("--katago-config", help="KataGo's GTP config to start from (its "
                    "gtp_example.cfg)")
    ap.add_argument("--katago-threads", default="2,8",
                    help="numSearchThreads values to run KataGo with (default 2,8)")
    ap.add_argument("--size", type=int, choices=sorted(GAMES), default=19)
    ap.add_argument("--seconds", type=float, default=1.0, help="time a move (default 1)")
    ap.add_argument("--positions", type=int, default=8, help="positions timed (default 8)")
    ap.add_argument("--model", type=Path, default=B10_MODEL, help="net file (default: "
                    "KataGo's transformer in weights/, Dosaku's default)")
    ap.add_argument("flags", nargs="*", help="dosaku's own flags (after --), e.g. --int8")
    a = ap.parse_args()
    if a.katago and not a.katago_config:
        ap.error("--katago needs --katago-config")
    threads = [int(t) for t in a.katago_threads.split(",")]
    print_figures(measure(a.katago, a.katago_config, a.size, a.seconds, a.positions, a.model,
                          threads, tuple(a.flags)))
    print(f"CPU: {cpu_kind()}")


if __name__ == "__main__":
    main()
