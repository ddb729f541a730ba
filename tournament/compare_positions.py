"""The positions a comparison asks about: sampled from real games (SGF) or given as move lists.

From an SGF, K positions per game are drawn (seeded by the seed and the game's bytes, so a
rerun draws the same ones) among those after the first few moves, never a finished one (two
passes in a row) nor the final position. A JSON file is a list of positions, each a list of
GTP vertices (black first, alternating), a string of them, or an object with `moves` and,
optionally, `size`, `komi`, `rules` and `id`. Every move is replayed under the rules preset
here, so an engine is never asked about a position that cannot arise.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import asdict, dataclass

from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import format_vertex, parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import rules_by_name
from dosaku.tournament.match_game import color_letter, why_illegal
from dosaku.tournament.review import ReviewError, load_game


class PositionError(Exception):
    """A game or position file that cannot be used (unreadable, illegal move, set-up stones)."""


@dataclass(frozen=True)
class Position:
    """A position as GTP sets it up: board, komi, rules, handicap stones, then the moves."""

    id: str  # source and move count: "games/game-0001.sgf:23"
    size: int
    komi: float
    rules: str
    handicap: tuple[str, ...]  # black stones for set_free_handicap (White moves first)
    moves: tuple[tuple[str, str], ...]  # ("b" or "w", vertex)

    @property
    def to_move(self) -> str:
        """`b` or `w`: whose move is asked for."""
        if self.moves:
            return "w" if self.moves[-1][0] == "b" else "b"
        return "w" if self.handicap else "b"

    def game(self) -> GameState:
        """The position replayed on our rules code."""
        game = GameState(self.size, self.size, self.komi, rules_by_name(self.rules))
        if self.handicap:
            game.place_handicap([self.point(v) for v in self.handicap])
        for color, vertex in self.moves:
            game.play(BLACK if color == "b" else WHITE, self.point(vertex))
        return game

    def point(self, vertex: str) -> int | None:
        return parse_vertex(vertex, self.size, self.size)

    def to_dict(self) -> dict:
        """The position as JSON stores it (lists for tuples)."""
        return json.loads(json.dumps(asdict(self)))


def replay(pid: str, size: int, komi: float, rules: str, handicap: list[str],
           moves: list[tuple[str, str]]) -> Position:
    """A Position after checking every move is legal; PositionError names the first that is
    not."""
    try:
        rules_by_name(rules)
    except KeyError:
        raise PositionError(f"{pid}: unknown rules {rules!r}") from None
    if not 2 <= size <= 25:
        raise PositionError(f"{pid}: board size {size} is not supported")
    game = GameState(size, size, komi, rules_by_name(rules))
    if handicap and not game.place_handicap([parse_vertex(v, size, size) for v in handicap]):
        raise PositionError(f"{pid}: bad handicap stones {' '.join(handicap)}")
    for k, (color, vertex) in enumerate(moves):
        point = parse_vertex(vertex, size, size)
        why = "not a vertex" if point is None else \
            why_illegal(game, BLACK if color == "b" else WHITE, point)
        if why is not None:
            raise PositionError(f"{pid}: move {k + 1} {color.upper()} {vertex} is illegal "
                                f"({why})")
        game.play(BLACK if color == "b" else WHITE, point)
    return Position(pid, size, komi, rules, tuple(handicap), tuple(moves))


def sgf_positions(path: str, per_game: int, skip: int, seed: int) -> list[Position]:
    """`per_game` positions drawn from the game's main line (fewer if it is short)."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        game = load_game(data)
    except ReviewError as exc:
        raise PositionError(f"{path}: {exc}") from None
    if game.white or (game.black and game.first != WHITE):
        raise PositionError(f"{path}: set-up stones other than handicap are not supported")
    handicap = [game.vertex(p) for p in game.black]
    moves = [(color_letter(c), game.vertex(p)) for c, p in game.moves]
    full = replay(path, game.size, game.komi, game.rules, handicap, moves)
    candidates = [n for n in range(skip, len(moves))
                  if not (n >= 2 and moves[n - 1][1] == moves[n - 2][1] == "pass")]
    rng = random.Random(f"{seed}:{hashlib.sha256(data).hexdigest()}")
    chosen = sorted(rng.sample(candidates, min(per_game, len(candidates))))
    return [Position(f"{path}:{n}", full.size, full.komi, full.rules, full.handicap,
                     full.moves[:n]) for n in chosen]


def json_positions(path: str, size: int, komi: float, rules: str) -> list[Position]:
    """Every position of a JSON list (see the module's docstring); defaults for the board."""
    try:
        with open(path, encoding="utf-8") as fh:
            items = json.load(fh)
    except ValueError as exc:
        raise PositionError(f"{path}: not JSON ({exc})") from None
    if not isinstance(items, list):
        raise PositionError(f"{path}: expected a list of positions")
    out = []
    for k, item in enumerate(items):
        spec = item if isinstance(item, dict) else {"moves": item}
        vertices = spec.get("moves", [])
        if isinstance(vertices, str):
            vertices = vertices.split()
        if not isinstance(vertices, list) or not all(isinstance(v, str) for v in vertices):
            raise PositionError(f"{path}: position {k}: moves must be GTP vertices")
        n = spec.get("size", size)
        moves = [("b" if i % 2 == 0 else "w", normal_vertex(v, n)) for i, v in
                 enumerate(vertices)]
        out.append(replay(spec.get("id", f"{path}#{k}"), n, float(spec.get("komi", komi)),
                          spec.get("rules", rules), [], moves))
    return out


def normal_vertex(text: str, size: int) -> str:
    """The vertex as format_vertex writes it (`D4`, `pass`); the text itself if unreadable."""
    point = parse_vertex(text, size, size)
    return text if point is None else format_vertex(point, size, size)


def source_files(paths: list[str]) -> list[str]:
    """The files named, a directory standing for its .sgf files (recursively)."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(root, name) for root, _, names in os.walk(path)
                            for name in names if name.endswith(".sgf"))
        else:
            files.append(path)
    return files


def collect(paths: list[str], per_game: int, skip: int, seed: int, size: int | None,
            limit: int | None, defaults: tuple[int, float, str]) -> tuple[list[Position],
                                                                          list[str]]:
    """(positions, notes on skipped files): SGF games sampled, JSON files read whole; only
    boards of `size` when given; at most `limit`, a seeded draw when there are more."""
    positions, notes = [], []
    for path in source_files(paths):
        try:
            found = json_positions(path, *defaults) if path.endswith(".json") else \
                sgf_positions(path, per_game, skip, seed)
        except (OSError, PositionError) as exc:
            notes.append(str(exc))
            continue
        positions += [p for p in found if size is None or p.size == size]
    positions = list({p.id: p for p in reversed(positions)}.values())[::-1]  # a file named twice
    if limit is not None and len(positions) > limit:
        order = list(range(len(positions)))
        random.Random(f"{seed}:limit").shuffle(order)
        positions = [positions[i] for i in sorted(order[:limit])]
    return positions, notes
