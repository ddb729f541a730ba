"""Seki: the detector on known positions, and final_status_list / final_score over GTP."""

import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.rules.coords import format_vertex, point_from_xy
from dosaku.engine.rules.seki import seki_chains
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.server import GtpServer
from tests.boards import board_from_diagram
from tests.gtp_answers import ok

# 7x7: the lone black stone A1 and White's six stones share their only liberties A2 and B1;
# whoever fills one is captured. Outside: a black wall with a 9-point area, a white wall with
# 14 points. Area: Black 11 stones + 9 = 20, White 13 stones + 14 = 27, A2 and B1 neutral.
NO_EYES = """
...XO..
...XO..
...XO..
XXXXO..
OOOXO..
.OOXO..
X.OXO..
"""

# 9x9: Black (A2 B2 B1) has the eye A1, White (nine stones) the eye E1, and they share C1.
# Area: Black 19 stones + 20 + A1 = 40, White 20 stones + 19 + E1 = 40, C1 neutral.
EYE_AND_EYE = """
....XO...
....XO...
....XO...
....XO...
....XO...
XXXXXOOO.
OOOXXXXO.
XXOOOOXO.
.X.O.OXO.
"""

# The same 9x9 walls as a normal game: Black C, White D, nothing shared.
WALLS = """
..XO.....
..XO.....
..XO.....
..XO.....
..XO.....
..XO.....
..XO.....
..XO.....
..XO.....
"""

# A dame column between two living walls: either side may fill it safely (not seki).
DAME = """
..X.O....
..X.O....
..X.O....
..X.O....
..X.O....
..X.O....
..X.O....
..X.O....
..X.O....
"""

# NO_EYES with White's chain short of B1 (black B1): White is in atari, so Black's capture
# at A2 is a move worth playing and nothing is seki.
IN_ATARI = """
...XO..
...XO..
...XO..
XXXXO..
OOOXO..
.OOXO..
XXOXO..
"""


def vertices(points, size):
    return sorted(format_vertex(p, size, size) for p in points)


def stones_of(diagram: str, mark: str) -> list[str]:
    rows = diagram.split()
    n = len(rows)
    return sorted(format_vertex(point_from_xy(x, y, n), n, n)
                  for y, row in enumerate(rows) for x, ch in enumerate(row) if ch == mark)


SEKI_CHAINS = {
    NO_EYES: [["A1"], ["A3", "B2", "B3", "C1", "C2", "C3"]],
    EYE_AND_EYE: [["A2", "B1", "B2"], ["A3", "B3", "C2", "C3", "D1", "D2", "E2", "F1", "F2"]],
    WALLS: [], DAME: [], IN_ATARI: [],
}


@pytest.mark.parametrize("diagram,expected", SEKI_CHAINS.items())
def test_detector(diagram, expected):
    rows = diagram.split()
    b = board_from_diagram(rows)
    got = sorted(vertices(chain, len(rows)) for chain in seki_chains(b, suicide=False))
    assert got == expected


def server_with(diagram: str, komi: float, seed: int) -> GtpServer:
    """The position as GTP sends a set-up (all black stones, then all white), two passes."""
    n = len(diagram.split())
    engine = Engine(n, n, komi, config=EngineConfig(seed=seed), log=lambda m: None)
    srv = GtpServer(Commands(EngineLoader.of(engine)))
    for color, mark in (("b", "X"), ("w", "O")):
        for v in stones_of(diagram, mark):
            ok(srv, f"play {color} {v}")
    ok(srv, "play b pass")
    ok(srv, "play w pass")
    return srv


def status(srv, which: str) -> list[str]:
    return sorted(ok(srv, f"final_status_list {which}").split())


@pytest.mark.parametrize("diagram,komi,result", [(NO_EYES, 0.5, "W+7.5"),
                                                 (EYE_AND_EYE, 6.5, "W+6.5")])
@pytest.mark.parametrize("seed", [0, 7])
def test_final_status_list_and_score(diagram, komi, result, seed):
    srv = server_with(diagram, komi, seed)
    seki = [v for chain in SEKI_CHAINS[diagram] for v in chain]
    assert status(srv, "seki") == sorted(seki)
    # random playouts fill shared liberties blindly and see the seki captured; not dead here
    assert status(srv, "dead") == []
    everything = stones_of(diagram, "X") + stones_of(diagram, "O")
    assert status(srv, "alive") == sorted(set(everything) - set(seki))
    assert ok(srv, "final_score") == result  # the shared liberties belong to no one


def test_one_chain_per_line():
    srv = server_with(NO_EYES, 0.5, 0)
    lines = sorted(ok(srv, "final_status_list seki").split("\n"))
    assert lines == ["A1", "A3 B3 C3 B2 C2 C1"]


def test_no_seki_between_living_walls():
    srv = server_with(DAME, 0.5, 0)
    assert status(srv, "seki") == []
    assert len(status(srv, "alive")) == 18
