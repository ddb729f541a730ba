"""The search with the b6c96 net at an equal budget, configured by dosaku's default flags.

    python -m dosaku.bench.budget [--quick]

measure_time: a self-play game at a fixed time per move (0.5 s on 9x9, 1 s on 19x19), with the
network in float32 (--no-int8) and in int8 (--int8, the default on CPUs with AVX2): new visits
per second of thinking, and the time a genmove takes over the time asked (1.0 = all of it, as
KataGo's maxTime does).

measure_selfcheck: the default search against a search that evaluates one leaf at a time
(batch 1, one evaluation in flight, so no virtual loss) at the same visits per move on 9x9
(komi 7), a few games with fixed seeds and the float32 net: the result is deterministic, so a
change in it means the search's choices changed; a drop means the default search wastes visits.

Both run in this process through the Engine API (no GTP), so the figures are the search's, not
the protocol's.
"""

import argparse
import time

from dosaku.bench.runner import B6C96_MODEL, Figures, Skip, print_figures

KOMI = {9: 7.0, 19: 7.5}  # as in the matches against KataGo


def _flags(size: int, *extra: str):
    """dosaku's parsed flags for the net on a size x size board (defaults otherwise)."""
    if not B6C96_MODEL.exists():
        raise Skip(f"no network at {B6C96_MODEL}")
    from dosaku.launch.flags import parse_flags
    return parse_flags(["--model", str(B6C96_MODEL), "--boardsize", str(size),
                                   "--komi", str(KOMI[size]), *extra])


def timed_selfplay(size: int, seconds: float, moves: int, *flags: str) -> tuple[float, float]:
    """(new visits per second of genmove, genmove seconds / seconds asked) over `moves` moves
    of a game the engine plays against itself at `seconds` a move (tree reuse included)."""
    from dosaku.engine.rules.constants import MOVE_OK
    from dosaku.launch.factory import build_engine
    e = build_engine(_flags(size, "--time", str(seconds), *flags))
    e.genmove(e.to_move, commit=False)  # first touch of the tree and network buffers
    e.clear_cache()
    visits = 0
    spent = 0.0
    for _ in range(moves):
        search = e.search
        before = int(search.tree.node_visits[search.root]) if search.has_tree else 0
        start = time.monotonic()
        move = e.genmove(e.to_move, commit=False)
        spent += time.monotonic() - start
        visits += int(search.tree.node_visits[search.root]) - before
        if not isinstance(move, int) or e.play(e.to_move, move) != MOVE_OK:
            break
    return visits / spent, spent / (moves * seconds)


def measure_time(quick: bool) -> Figures:
    """Visits/s and time used over time asked at a fixed time per move, 9x9 and 19x19, with
    the network in float32 and in int8."""
    moves = 4 if quick else 12
    figures = {}
    for size, seconds in ((9, 0.5), (19, 1.0)):
        for name, flags in (("--no-int8", ("--no-int8",)), ("--int8", ("--int8",))):
            rate, used = timed_selfplay(size, seconds, moves, *flags)
            what = f"b6c96 {size}x{size} at {seconds:g} s/move, {name}"
            figures[what] = (rate, "visits/s")
            figures[f"{what}: time used / asked"] = (used, "ratio")
    return figures


def play_game(black, white, max_moves: int) -> float:
    """Play a game between two engines on their own copies of the board; Black's result
    (1 win, 0.5 draw, 0 loss) by resignation or by final_score after two passes."""
    from dosaku.engine.engine import RESIGN
    from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE
    engines = {BLACK: black, WHITE: white}
    passes = 0
    color = BLACK
    for _ in range(max_moves):
        move = engines[color].genmove(color)
        if move == RESIGN:
            return 0.0 if color == BLACK else 1.0
        other = engines[3 - color]
        if other.play(color, move) != MOVE_OK:
            raise RuntimeError(f"the engines disagree on the position: {move} refused")
        passes = passes + 1 if move == PASS_POINT else 0
        if passes == 2:
            break
        color = 3 - color
    margin = black.final_score()
    return 1.0 if margin > 0 else (0.0 if margin < 0 else 0.5)


def selfcheck(visits: int, games: int) -> float:
    """Score of the default search against the batch-1 search at `visits` a move on 9x9,
    colours alternating; game g uses seed g for both engines."""
    from dosaku.launch.factory import build_engine
    score = 0.0
    for g in range(games):
        seed = str(g)
        flags = ("--visits", str(visits), "--seed", seed, "--no-int8")
        a = build_engine(_flags(9, *flags))
        b = build_engine(_flags(9, *flags, "--batch", "1", "--threads", "1"))
        if g % 2 == 0:
            score += play_game(a, b, 2 * 81)
        else:
            score += 1.0 - play_game(b, a, 2 * 81)
    return score / games


def measure_selfcheck(quick: bool) -> Figures:
    """The default search's score against the batch-1 search at equal visits (9x9, komi 7)."""
    visits, games = (32, 2) if quick else (100, 4)
    return {f"default vs batch-1 search, {visits} visits, 9x9, {games} games":
            (selfcheck(visits, games), "score")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    print_figures({**measure_time(a.quick), **measure_selfcheck(a.quick)})


if __name__ == "__main__":
    main()
