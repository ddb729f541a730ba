"""How many network evaluations the evaluation cache and tree reuse save with the default net
(KataGo's transformer) on 9x9, in three ways of using the engine:

    python -m dosaku.bench.cache [--moves 30] [--visits 50] [--ponder 1.0] [-- FLAGS...]

genmove: a self-play game of --moves moves at --visits, the path of GTP's genmove (in this
process); ponder: the engine plays Black at --visits and thinks --ponder seconds on White's time
after each of its moves, White playing the net's first choice; analysis: `dosaku analysis`
reviewing the genmove game with every turn in one query (analyzeTurns, as KaTrain does) at
maxVisits --visits, its figures read from its log line at exit. Each prints evaluations made,
cache hits over lookups (evaluations saved) and root visits kept from earlier searches over all
root visits (engine/search/driver.py's SearchCounters).
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from dosaku.bench.runner import B10_MODEL, Skip

ROOT = Path(__file__).resolve().parents[1]
SIZE, KOMI = 9, 7.0
READY = b"Started, ready to begin handling requests"


def engine(visits: int, flags: tuple[str, ...]):
    if not B10_MODEL.exists():
        raise Skip(f"no transformer net at {B10_MODEL}")
    from dosaku.launch.factory import engine_from_flags
    return engine_from_flags(["--model", str(B10_MODEL), "--boardsize", str(SIZE), "--komi",
                              str(KOMI), "--visits", str(visits), "--seed", "1", *flags])


def report(what: str, counters) -> None:
    c = counters
    print(f"{what}: {c.searches} searches, {c.evaluations} evaluations; cache {c.hits} hits of "
          f"{c.lookups} lookups ({100 * c.hits / max(c.lookups, 1):.1f}%); "
          f"{c.visits_reused} of {c.visits} root visits kept from earlier searches "
          f"({100 * c.visits_reused / max(c.visits, 1):.1f}%)")


def selfplay(moves: int, visits: int, flags) -> list[tuple[int, int]]:
    """The genmove game's moves (colour, point), after printing its figures."""
    from dosaku.engine.engine import RESIGN
    e = engine(visits, flags)
    e.search.counters.clear()
    for _ in range(moves):
        if e.game.is_over() or e.genmove(e.to_move) == RESIGN:
            break
    report(f"genmove, {SIZE}x{SIZE} self-play, {len(e.moves)} moves at --visits {visits}",
           e.search.counters)
    return list(e.moves)


def pondering(moves: int, visits: int, seconds: float, flags) -> None:
    from dosaku.engine.engine import RESIGN
    from dosaku.engine.rules.constants import BLACK
    from dosaku.engine.rules.coords import point_from_action
    e = engine(visits, flags)
    e.search.counters.clear()
    while len(e.moves) < moves and not e.game.is_over():
        if e.to_move == BLACK:
            if e.genmove(BLACK) == RESIGN:
                break
            stop = threading.Event()
            thinker = threading.Thread(target=e.ponder, args=(stop,))
            thinker.start()
            thinker.join(seconds)
            stop.set()
            thinker.join()
        else:
            prior = e.policy(e.to_move)  # one evaluation, not the search's
            action = int(np.argmax(np.where(e.game.legal_mask(e.to_move), prior, -1)))
            e.play(e.to_move, point_from_action(action, SIZE, SIZE))
    report(f"ponder, Black at --visits {visits} pondering {seconds:g} s on White's time "
           f"(ponder searches included), {len(e.moves)} moves", e.search.counters)


def analysis(game: list[tuple[int, int]], visits: int, flags) -> None:
    from dosaku.engine.rules.constants import BLACK
    from dosaku.engine.rules.coords import format_vertex
    moves = [["B" if c == BLACK else "W", format_vertex(p, SIZE, SIZE)] for c, p in game]
    query = {"id": "review", "moves": moves, "rules": "chinese", "komi": KOMI,
             "boardXSize": SIZE, "boardYSize": SIZE, "maxVisits": visits,
             "analyzeTurns": list(range(len(moves) + 1))}
    command = [sys.executable, str(ROOT / "run_engine.py"), "analysis", "-model",
               str(B10_MODEL), "--seed", "1", *flags]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tempfile.mkdtemp())
    log = []
    for line in proc.stderr:
        log.append(line.decode())
        if READY in line:
            break
    proc.stdin.write(json.dumps(query).encode() + b"\n")
    proc.stdin.flush()
    answered = 0
    while answered < len(query["analyzeTurns"]):
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("dosaku analysis stopped:\n" + "".join(log))
        answered += json.loads(line).get("isDuringSearch") is False
    proc.stdin.close()
    log += [line.decode() for line in proc.stderr]
    proc.wait()
    text = "".join(log)
    evaluated = re.search(r"(\d+) positions evaluated in (\d+) network calls", text)
    saved = re.search(r"\d+ searches: evaluation cache .*", text)
    shared = re.search(r"shared evaluation cache: .*", text)
    if not evaluated or not saved or not shared:
        raise RuntimeError("no figures in dosaku analysis's log:\n" + text)
    print(f"analysis, one query of {answered} turns at maxVisits {visits}: "
          f"{evaluated.group(1)} evaluations in {evaluated.group(2)} network calls; "
          f"{saved.group(0)}; {shared.group(0)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moves", type=int, default=30)
    ap.add_argument("--visits", type=int, default=50)
    ap.add_argument("--ponder", type=float, default=1.0, help="seconds of pondering a move")
    ap.add_argument("--only", nargs="+", choices=("genmove", "ponder", "analysis"),
                    default=("genmove", "ponder", "analysis"))
    ap.add_argument("flags", nargs="*", help="dosaku's own flags (after --)")
    a = ap.parse_args()
    flags = tuple(a.flags)
    game = selfplay(a.moves, a.visits, flags)
    if "ponder" in a.only:
        pondering(a.moves, a.visits, a.ponder, flags)
    if "analysis" in a.only:
        analysis(game, a.visits, flags)


if __name__ == "__main__":
    main()
