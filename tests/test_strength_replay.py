"""The quick stand-in for the GNU Go matches (bench/strength.py, a benchmark of minutes):
positions of a game the shipped net `dosaku-b6c96` (the fast net the strength match names)
played against GNU Go level 10, replayed at the
match's settings (100 visits a move, one evaluation in flight, float32), each answered as it
was recorded.

tests/data/strength_replay.json holds, for every position, the moves that led to it, the move
the engine chose and its three most visited moves. A choice outside those three means that the
search, the features, the rules or the net changed what the engine plays; float differences
between CPUs can swap close candidates, so the test asks for the top three, not the very move.
The file names the net it was recorded with: after a change of that net, record again with
`python -m tests.test_strength_replay` (needs GNU Go).
"""

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE, opponent
from dosaku.engine.rules.coords import format_vertex, parse_vertex, point_from_action
from dosaku.launch.factory import engine_from_flags
from dosaku.weights import model_path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "data" / "strength_replay.json"
FLAGS = ["--visits", "100", "--threads", "1", "--no-int8", "--boardsize", "9", "--komi", "7",
         "--rules", "chinese"]  # the strength match's settings
GNUGO_10 = "--mode gtp --level 10 --chinese-rules --seed 1"
NET = "dosaku-b6c96"  # bench/strength.py's net
TOP = 3
COLOR = {"b": BLACK, "w": WHITE}
NAME = {BLACK: "b", WHITE: "w"}


def net_sha256() -> str:
    return hashlib.sha256(model_path(NET).read_bytes()).hexdigest()


def replay(engine, moves: list[list[str]]) -> None:
    """A new game on `engine` with `moves` ([color, vertex] pairs) played."""
    engine.clear()
    for color, vertex in moves:
        assert engine.play(COLOR[color], parse_vertex(vertex, 9, 9)) == MOVE_OK, vertex


def answer(engine, moves: list[list[str]], to_move: str) -> tuple[str, list[str]]:
    """(the move the engine chooses after `moves`, its TOP most visited moves)."""
    replay(engine, moves)
    move = engine.genmove(COLOR[to_move], commit=False)
    chosen = move if isinstance(move, str) else format_vertex(move, 9, 9)
    stats = engine.search.root_stats()
    order = np.argsort(-stats.visits, kind="stable")[:TOP]
    top = [format_vertex(point_from_action(int(stats.actions[i]), 9, 9), 9, 9) for i in order]
    return chosen.lower(), [v.lower() for v in top]


@pytest.fixture(scope="module")
def recorded() -> dict:
    data = json.loads(RECORD.read_text())
    assert data["net_sha256"] == net_sha256(), (
        f"{RECORD.name} was recorded with another default net: record it again "
        "(python -m tests.test_strength_replay)")
    assert data["flags"] == FLAGS
    return data


def test_the_record_is_a_game_with_many_positions(recorded):
    positions = recorded["positions"]
    assert len(positions) >= 8
    assert all(p["chosen"] in p["top"] and len(p["top"]) == TOP for p in positions)
    # each position continues the game of the one before
    for before, after in zip(positions, positions[1:]):
        assert after["moves"][:len(before["moves"])] == before["moves"]


def test_recorded_positions_get_their_recorded_moves(recorded):
    engine = engine_from_flags(FLAGS + ["--model", NET])
    off = []
    for p in recorded["positions"]:
        chosen, _ = answer(engine, p["moves"], p["to_move"])
        if chosen not in ("pass", "resign"):
            assert engine.play(COLOR[p["to_move"]], parse_vertex(chosen, 9, 9)) == MOVE_OK
        if chosen not in p["top"]:
            off.append((len(p["moves"]), chosen, p["top"]))
    assert off == [], "moves outside the recorded top three (ply, chosen, recorded top)"


def record(gnugo: str, every: int = 3, plies: int = 48) -> dict:
    """Play the default net (Black) against GNU Go level 10 and keep every `every`-th position
    where the engine is to move, answered as the test answers it."""
    from dosaku.tournament.controller import GtpController
    engine = engine_from_flags(FLAGS + ["--model", NET])
    moves: list[list[str]] = []
    wanted = []
    with GtpController(f"{gnugo} {GNUGO_10}") as peer:
        for cmd in ("boardsize 9", "clear_board", "komi 7"):
            peer.send(cmd)
        color = BLACK
        while len(moves) < plies:
            if color == BLACK:
                if len(moves) // 2 % every == 0:
                    wanted.append(list(moves))
                replay(engine, moves)
                move = engine.genmove(BLACK, commit=False)
                vertex = move if isinstance(move, str) else format_vertex(move, 9, 9)
                peer.send(f"play b {vertex}")
            else:
                vertex = peer.send("genmove w")
            if vertex.lower() in ("pass", "resign"):
                break
            moves.append([NAME[color], vertex.lower()])
            color = opponent(color)
    positions = []
    for before in wanted:
        chosen, top = answer(engine, before, "b")
        positions.append({"moves": before, "to_move": "b", "chosen": chosen, "top": top})
    return {"net_sha256": net_sha256(), "flags": FLAGS, "opponent": f"gnugo {GNUGO_10}",
            "positions": positions}


if __name__ == "__main__":
    RECORD.write_text(json.dumps(record(shutil.which("gnugo") or "/usr/games/gnugo"),
                                 indent=1) + "\n")
