"""Review a game: analyse every position with the engine, write winrate, score lead and the best
continuation into the SGF, list each side's biggest mistakes, draw the winrate/score graph.

    python -m dosaku.tournament.review GAME.sgf --visits 200 --out REVIEWED.sgf --plot WINRATE.png

The engine runs in this process (built from the same flags as `dosaku`: --model, --evaluator,
--threads, --seed). Each position's result goes to a sidecar JSON (OUT + .json) as soon as it
is known, so a rerun with the same game and settings continues where the last one stopped.
Winrates and scores are kept from Black's view; a move's loss is the mover's winrate before it
minus the mover's winrate after it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import asdict, replace

from sgfmill import sgf
from tqdm import tqdm

from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import point_from_sgfmill
from dosaku.tournament.match_report import write_json
from dosaku.tournament.review_records import Game, Mistake, Position

RULE_NAMES = {"chinese": "chinese", "cn": "chinese", "japanese": "japanese", "jp": "japanese",
              "korean": "korean", "aga": "aga", "nz": "new-zealand",
              "new zealand": "new-zealand", "tromp-taylor": "tromp-taylor"}


class ReviewError(Exception):
    """The game cannot be reviewed (unreadable SGF, illegal move, unsupported set-up)."""


def load_game(data: bytes, rules: str | None = None) -> Game:
    """Read the SGF's main line; ReviewError if it cannot be replayed as a plain game."""
    try:
        game = sgf.Sgf_game.from_bytes(data)
    except ValueError as exc:
        raise ReviewError(f"unreadable SGF: {exc}") from None
    size = game.get_size()
    root = game.get_root()
    if rules is None:
        ru = root.get("RU").strip().lower() if root.has_property("RU") else "chinese"
        rules = RULE_NAMES.get(ru, "chinese")
    ab, aw, _ = root.get_setup_stones()
    first = WHITE if (root.has_property("PL") and root.get("PL") == "w") or \
        (ab and not aw and not root.has_property("PL")) else BLACK
    moves = []
    for node in game.get_main_sequence()[1:]:
        if any(node.get_setup_stones()):
            raise ReviewError("set-up stones after the first node are not supported")
        color, move = node.get_move()
        if color is not None:
            moves.append((BLACK if color == "b" else WHITE, point_from_sgfmill(move, size)))
    return Game(game, size, game.get_komi(), rules, sorted(point_from_sgfmill(m, size) for m in ab),
                sorted(point_from_sgfmill(m, size) for m in aw), first, moves)


def engine_flags(args: argparse.Namespace, game: Game) -> list[str]:
    """The `dosaku` flags of the review engine (never resigns: every position is searched)."""
    flags = ["--boardsize", str(game.size), "--komi", str(game.komi), "--rules", game.rules,
             "--visits", str(args.visits), "--seed", str(args.seed), "--threads",
             str(args.threads), "--resign-threshold", "0"]
    if args.model:
        flags += ["--model", args.model]
    if args.evaluator:
        flags += ["--evaluator", args.evaluator]
    return flags


def build_engine(flags: list[str]):
    """The engine `dosaku FLAGS` would play with, without its tree-reuse log lines."""
    from dosaku.launch.factory import engine_from_flags
    engine = engine_from_flags(flags)
    engine.config = replace(engine.config, report_reuse=False)
    return engine


def set_up(engine, game: Game) -> None:
    """The engine at the game's start (set-up stones placed, nothing played)."""
    engine.set_size(game.size, game.size)
    engine.set_komi(game.komi)
    if game.black and not game.white and game.first == WHITE:
        ok = engine.place_handicap(game.black)
    elif game.black or game.white:
        ok = engine.setup(game.black, game.white, game.first)
    else:
        ok = True
    if not ok:
        raise ReviewError("the set-up stones are not a legal position")


def analyse(engine, game: Game, color: int) -> Position:
    """One search as genmove would run it (nothing played)."""
    snap = engine.think(color)
    sign = 1.0 if color == BLACK else -1.0
    best = snap.moves[0] if snap.moves else None
    pv = [game.vertex(p) for p in (best.pv or [best.point])] if best else ["pass"]
    return Position("B" if color == BLACK else "W", int(snap.root_visits),
                    snap.root_winrate if color == BLACK else 1.0 - snap.root_winrate,
                    sign * snap.root_score_lead, pv[0], pv)


class Cache:
    """Per-position results in a JSON file, valid for one game (its bytes) and settings."""

    def __init__(self, path: str, key: dict):
        self.path = path
        self.key = key
        self.positions: dict[int, Position] = {}
        self.discarded = False
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            if data.get("key") == key:
                self.positions = {int(i): Position(**p) for i, p in data["positions"].items()}
            else:
                self.discarded = True

    def put(self, index: int, pos: Position) -> None:
        self.positions[index] = pos
        data = {"key": self.key,
                "positions": {str(i): asdict(p) for i, p in sorted(self.positions.items())}}
        write_json(self.path, data)


def to_move(game: Game, index: int) -> int:
    """The colour to move in position `index` (before move index + 1)."""
    if index < len(game.moves):
        return game.moves[index][0]
    if game.moves:
        return WHITE if game.moves[-1][0] == BLACK else BLACK
    return game.first


def review_positions(game: Game, cache: Cache, make_engine, progress: bool = True) -> int:
    """Analyse the positions 0..len(moves) missing from the cache; returns how many were."""
    count = len(game.moves) + 1
    todo = [i for i in range(count) if i not in cache.positions]
    if not todo:
        return 0
    engine = make_engine()
    set_up(engine, game)
    with tqdm(total=count, initial=count - len(todo), unit="pos", disable=not progress,
              file=sys.stderr) as bar:
        for i in range(todo[-1] + 1):
            if i not in cache.positions:
                cache.put(i, analyse(engine, game, to_move(game, i)))
                bar.update(1)
            if i < len(game.moves) and engine.play(*game.moves[i]) != MOVE_OK:
                raise ReviewError(f"move {i + 1} ({game.vertex(game.moves[i][1])}) is illegal")
    return len(todo)


def mistakes(game: Game, positions: dict[int, Position]) -> dict[str, list[Mistake]]:
    """Every move that lost winrate, per colour, the biggest loss first."""
    out: dict[str, list[Mistake]] = {"B": [], "W": []}
    for k, (color, point) in enumerate(game.moves):
        before, after = positions[k], positions[k + 1]
        sign = 1.0 if color == BLACK else -1.0
        loss = sign * (before.winrate - after.winrate)
        if loss > 0:
            c = "B" if color == BLACK else "W"
            out[c].append(Mistake(k + 1, c, game.vertex(point), loss,
                                  sign * (before.score - after.score), before.best))
    for c in out:
        out[c].sort(key=lambda m: (-m.loss, m.move))
    return out


def add_engine_arguments(ap: argparse.ArgumentParser, threads: int) -> None:
    """The options a review of one game shares with `dosaku review` of many: the engine that
    searches each position, and the report."""
    ap.add_argument("--model", help="network (.onnx or KataGo .bin.gz), as for dosaku")
    ap.add_argument("--evaluator", choices=["onnx", "rollout", "uniform"],
                    help="leaf evaluator (default: onnx with a network, else rollout)")
    ap.add_argument("--threads", type=int, default=threads,
                    help=f"network threads of an engine (default {threads})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rules", help="ruleset preset (default: the SGF's RU, else chinese)")
    ap.add_argument("--mistakes", type=int, default=5, help="mistakes listed per side")
    ap.add_argument("--no-progress", action="store_true")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dosaku.tournament.review",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("game", help="SGF file to review (its main line)")
    ap.add_argument("--out", required=True, help="reviewed SGF to write")
    ap.add_argument("--visits", type=int, default=200, help="visits per position (default 200)")
    ap.add_argument("--plot", help="PNG of Black's winrate and score lead over the game")
    add_engine_arguments(ap, threads=2)
    a = ap.parse_args(argv)
    if a.visits < 1:
        ap.error("--visits must be at least 1")
    from dosaku.tournament.review_output import annotate, plot
    try:
        with open(a.game, "rb") as fh:
            data = fh.read()
        game = load_game(data, a.rules)
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        flags = engine_flags(a, game)
        key = {"game": hashlib.sha256(data).hexdigest(), "engine": flags}
        cache = Cache(a.out + ".json", key)
        if cache.discarded:
            print(f"{cache.path}: other game or settings; analysing afresh", file=sys.stderr)
        done = review_positions(game, cache, lambda: build_engine(flags),
                                progress=not a.no_progress)
    except (OSError, ValueError, ReviewError) as exc:
        print(f"review: {exc}", file=sys.stderr)
        return 2
    found = mistakes(game, cache.positions)
    annotate(game, cache.positions, found, a.visits, a.mistakes)
    with open(a.out, "wb") as fh:
        fh.write(game.sgf.serialise())
    print(f"analysed {done} positions ({len(game.moves) + 1 - done} from {cache.path})")
    for color, name in (("B", "Black"), ("W", "White")):
        listed = found[color][:a.mistakes]
        print(f"{name}'s biggest mistakes: " + (", ".join(
            f"move {m.move} {m.vertex} -{100 * m.loss:.1f}% (best {m.best})" for m in listed)
            or "none"))
    print(f"reviewed SGF: {a.out}")
    if a.plot:
        plot(game, cache.positions, found, a.mistakes, a.plot)
        print(f"plot: {a.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
