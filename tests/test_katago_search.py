"""Our search against KataGo's own: the same net, the same positions, a fresh tree, one
thread, no random symmetry; each root move must get the visits KataGo 1.17.2 gave it.

tests/data/katago_search_visits.json holds positions from games of the match records and, for
each, the visits KataGo gave every root move (the g170 b6c96 net, one search thread,
`nnRandomize = false`): at 16 and at 100 visits with the refinements our search lacks turned
off (noise pruning, value weighting, subtree value bias, graph search).
Every formula of the search takes part: PUCT with its growing constant and utility-scaled
exploration, the FPU, the score utility over the score's spread and its centre, one leaf in
flight per thread.
Float differences between CPUs can swap a visit between moves of nearly equal value, so a
few positions may differ slightly; a formula that differs moves most of them. Record again
with KataGo: `python -m tests.test_katago_search KATAGO_BINARY KATAGO_GTP_CONFIG B6C96_BIN_GZ`.
"""

import json
import sys
import tempfile
from pathlib import Path

import pytest

from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import (
    format_vertex,
    parse_vertex,
    point_from_action,
    point_from_sgfmill,
)
from dosaku.launch.factory import engine_from_flags

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "data" / "katago_search_visits.json"
GAMES = ROOT / "records" / "vs-katago-19x19-16v-one-thread-18224e9.jsonl.gz"
# (name, visits, our flags, KataGo's overrides besides COMMON)
SETTINGS = (
    ("plain-16", 16, [], "useNoisePruning=false,valueWeightExponent=0,subtreeValueBiasFactor=0"),
    ("plain-100", 100, [], "useNoisePruning=false,valueWeightExponent=0,subtreeValueBiasFactor=0"),
)
COMMON = "numSearchThreads=1,nnRandomize=false,useGraphSearch=false,logToStderr=false"
COLOR = {"b": BLACK, "w": WHITE}


def search_visits(engine, moves: list[list[str]], to_move: str) -> dict[str, int]:
    """Visits of each root move after a fresh search of the position after `moves`."""
    engine.clear()
    engine.clear_cache()
    for color, vertex in moves:
        assert engine.play(COLOR[color], parse_vertex(vertex, 19, 19)) == MOVE_OK, vertex
    engine.genmove(COLOR[to_move], commit=False)
    stats = engine.search.root_stats()
    return {format_vertex(point_from_action(int(a), 19, 19), 19, 19).lower(): int(v)
            for a, v in zip(stats.actions, stats.visits) if v > 0}


def dosaku(model: Path, visits: int, flags: list[str]):
    """The engine at the record's settings: float32, one thread, the identity symmetry
    (KataGo's nnRandomize = false)."""
    engine = engine_from_flags(["--model", str(model), "--boardsize", "19", "--komi", "7.5",
                                "--rules", "chinese", "--visits", str(visits), "--threads", "1",
                                "--no-int8", "--resign-threshold", "0"] + flags)
    engine.evaluator.symmetry = 0
    return engine


@pytest.mark.parametrize("name, visits, flags", [s[:3] for s in SETTINGS])
def test_each_root_move_gets_katagos_visits(name, visits, flags, b6c96_file):
    record = json.loads(RECORD.read_text())
    engine = dosaku(b6c96_file, visits, flags)
    positions = [p for p in record["positions"] if p["setting"] == name]
    assert len(positions) >= 12
    off = []
    for p in positions:
        ours = search_visits(engine, p["moves"], p["to_move"])
        if ours != p["katago"]:
            moves = set(ours) | set(p["katago"])
            off.append((len(p["moves"]), sum(abs(ours.get(m, 0) - p["katago"].get(m, 0))
                                             for m in moves)))
    # at most one position a tenth with a visit or two moved (float rounding near a tie)
    assert len(off) <= len(positions) // 10 and all(d <= 4 for _, d in off), off


def record(katago: str, config: str, model: str, per_visits: int = 12) -> dict:
    """Ask KataGo for its root visits in positions drawn from the match records' games."""
    import random

    from sgfmill import sgf

    from dosaku.tournament.controller import GtpController
    rng = random.Random(5)
    from dosaku.tournament.records import game_files
    games = game_files(GAMES, tempfile.mkdtemp())
    logs = tempfile.mkdtemp()
    positions = []
    version = None
    for name, visits, _, overrides in SETTINGS:
        command = (f"{katago} gtp -model {model} -config {config} -override-config "
                   f"maxVisits={visits},logDir={logs},{COMMON},{overrides}")
        with GtpController(command) as kg:
            for cmd in ("boardsize 19", "komi 7.5", "kata-set-rules chinese"):
                kg.send(cmd)
            version = kg.send("version")
            for path in rng.sample(games, per_visits):
                game = sgf.Sgf_game.from_bytes(path.read_bytes())
                played = [n.get_move() for n in game.get_main_sequence()[1:]]
                played = [(c, m) for c, m in played if c]
                k = rng.randrange(20, min(len(played) - 1, 200))
                moves = [[c, format_vertex(point_from_sgfmill(m, 19), 19, 19).lower()]
                         for c, m in played[:k]]
                kg.send("clear_board")
                kg.send("clear_cache")
                for c, v in moves:
                    kg.send(f"play {c} {v}")
                answer = kg.send(f"kata-search_analyze {played[k][0]}")
                counts = {}
                for chunk in answer.split("info move ")[1:]:
                    words = chunk.split()
                    counts[words[0].lower()] = int(words[words.index("visits") + 1])
                positions.append({"moves": moves, "to_move": played[k][0], "setting": name,
                                  "katago": counts})
    return {"katago_version": version, "model": Path(model).name, "common_overrides": COMMON,
            "settings": {name: {"visits": visits, "flags": flags, "overrides": overrides}
                         for name, visits, flags, overrides in SETTINGS},
            "positions": positions}


def write(data: dict) -> None:
    """The record with one position a line."""
    head = {k: v for k, v in data.items() if k != "positions"}
    lines = ",\n".join(json.dumps(p) for p in data["positions"])
    RECORD.write_text(json.dumps(head, indent=1)[:-2] + ',\n "positions": [\n' + lines + "\n]}\n")


if __name__ == "__main__":
    write(record(sys.argv[1], sys.argv[2], sys.argv[3]))
