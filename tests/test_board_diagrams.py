"""Known positions as ASCII diagrams: captures, snapback, ko, superko, suicide, handicap, scoring.

Diagram letters: X black, O white, . empty, a lowercase letter names an empty point. y = 0 is
the top row. Expected values are worked out by hand; every position is also checked against the
slow reference (tests/reference_rules.py) after each move.
"""

import numpy as np
import pytest

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import (
    BLACK,
    MOVE_KO,
    MOVE_OK,
    MOVE_SUICIDE,
    MOVE_SUPERKO,
    PASS_POINT,
    WHITE,
)
from dosaku.engine.rules.coords import action_from_point, parse_vertex, point_from_xy
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.handicap import fixed_handicap_points, max_fixed_handicap
from dosaku.engine.rules.rulesets import (
    PRESETS,
    Rules,
    result_string,
    score_position,
    territory_counts,
)
from tests.boards import assert_board_matches, parse_diagram
from tests.chains import chain_liberties, chain_size
from tests.reference_rules import RefGame


def setup(diagram, rules=PRESETS["chinese"], komi=7.5, first=WHITE):
    """GameState and reference game holding the diagram's stones, one colour after the other.

    White goes first by default so that the stones do not count as handicap stones (a leading
    run of black moves does); the last colour decides who is to move in the set-up position.
    """
    width, height, stones, marks = parse_diagram(diagram)
    gs = GameState(width, height, komi=komi, rules=rules)
    ref = RefGame(width, height, rules.ko, rules.suicide)
    for color in (first, 3 - first):
        for (x, y), c in sorted(stones.items()):
            if c == color:
                assert gs.play(c, point_from_xy(x, y, width)) == MOVE_OK
                ref.play(c, (x, y))
    assert gs.prisoners(BLACK) == gs.prisoners(WHITE) == 0, "diagram has a dead chain"
    pts = {k: point_from_xy(x, y, width) for k, (x, y) in marks.items()}
    return gs, ref, pts, marks


def play(gs, ref, color, mark_xy, point):
    """Play on both; check the engine against the reference; return captured stones."""
    before = gs.prisoners(color)
    assert gs.play(color, point) == MOVE_OK
    captured = ref.play(color, mark_xy)
    assert gs.prisoners(color) - before == captured
    assert_board_matches(gs.board, ref.board)
    return captured


def color_at(gs, x, y):
    return int(gs.board[B.ROW_COLOR, point_from_xy(x, y, gs.width)])


def libs_at(gs, x, y):
    return int(chain_liberties(gs.board, point_from_xy(x, y, gs.width)))


# ---- captures ---------------------------------------------------------------------------------

CORNER = """
O X . .
a . . .
. . . .
. . . .
"""


@pytest.mark.parametrize("turns", range(4))
def test_corner_capture_in_every_corner(turns):
    width, height, stones, marks = parse_diagram(CORNER)
    grid = [[0] * width for _ in range(height)]
    for (x, y), c in stones.items():
        grid[y][x] = c
    grid[1][0] = "a"
    for _ in range(turns):  # rotate the diagram a quarter turn
        grid = [list(row) for row in zip(*grid[::-1])]
    text = "\n".join(" ".join({0: ".", BLACK: "X", WHITE: "O"}.get(v, v) for v in row)
                     for row in grid)
    gs, ref, pts, marks = setup(text)
    assert play(gs, ref, BLACK, marks["a"], pts["a"]) == 1
    assert gs.prisoners(BLACK) == 1
    corner_empty = sum(color_at(gs, x, y) == 0 for x in (0, 3) for y in (0, 3))
    assert corner_empty == 4
    assert libs_at(gs, *marks["a"]) == 3  # the capturing stone gained the corner


def test_edge_capture_of_two_stones():
    gs, ref, pts, marks = setup("""
        . X O O a .
        . . X X . .
        . . . . . .
    """)
    assert libs_at(gs, 2, 0) == 1 and chain_size(gs.board, point_from_xy(2, 0, 6)) == 2
    assert play(gs, ref, BLACK, marks["a"], pts["a"]) == 2
    assert color_at(gs, 2, 0) == color_at(gs, 3, 0) == 0
    assert libs_at(gs, 4, 0) == 3  # (3,0), (5,0), (4,1)
    assert libs_at(gs, 2, 1) == 6  # 4 before, plus (2,0) and (3,0)


def test_one_move_captures_three_chains():
    gs, ref, pts, marks = setup("""
        . X O X .
        X O a O X
        . X . X .
        . . . . .
    """)
    assert play(gs, ref, BLACK, marks["a"], pts["a"]) == 3
    assert libs_at(gs, *marks["a"]) == 4
    assert chain_size(gs.board, pts["a"]) == 1
    # White may not play back into the hole: no liberty, nothing to capture
    assert B.move_error(gs.board, point_from_xy(1, 1, 5), WHITE, False) == MOVE_SUICIDE


def test_snapback():
    gs, ref, pts, marks = setup("""
        . . . . .
        . . . . .
        . O O O .
        O X X X O
        O X a c O
    """)
    assert play(gs, ref, WHITE, marks["a"], pts["a"]) == MOVE_OK  # throw-in, one liberty (c)
    assert libs_at(gs, *marks["a"]) == 1
    assert play(gs, ref, BLACK, marks["c"], pts["c"]) == 1  # black takes it...
    assert chain_size(gs.board, pts["c"]) == 5 and libs_at(gs, *marks["c"]) == 1
    assert gs.board[B.ROW_HEADER, B.H_KO_POINT] == 0  # 5-stone chain: no ko
    assert play(gs, ref, WHITE, marks["a"], pts["a"]) == 5  # ...and loses five stones


# ---- ko ---------------------------------------------------------------------------------------

KO = """
. X O . . .
X O a O . .
. X O . . .
. . . . . .
"""


@pytest.mark.parametrize("rules", ["chinese", "tromp-taylor", "aga"])
def test_ko_ban_and_its_lifting(rules):
    gs, ref, pts, marks = setup(KO, PRESETS[rules])
    retake = point_from_xy(1, 1, 6)
    assert play(gs, ref, BLACK, marks["a"], pts["a"]) == 1
    assert gs.board[B.ROW_HEADER, B.H_KO_POINT] == retake
    assert gs.play(WHITE, retake) in (MOVE_KO, MOVE_SUPERKO)
    assert B.move_error(gs.board, retake, WHITE, False) == MOVE_KO
    assert not gs.legal_mask(WHITE)[action_from_point(retake, gs.width, gs.height)]
    # the ban is on White only; Black may fill the ko
    assert B.is_legal(gs.board, retake, BLACK, False)
    # a move elsewhere by each side lifts the ban
    play(gs, ref, WHITE, (5, 3), point_from_xy(5, 3, 6))
    assert gs.board[B.ROW_HEADER, B.H_KO_POINT] == 0
    play(gs, ref, BLACK, (5, 0), point_from_xy(5, 0, 6))
    assert gs.legal_mask(WHITE)[action_from_point(retake, gs.width, gs.height)]
    assert play(gs, ref, WHITE, (1, 1), retake) == 1
    assert gs.board[B.ROW_HEADER, B.H_KO_POINT] == pts["a"]  # now Black is banned


def test_pass_lifts_simple_ko():
    gs, ref, pts, marks = setup(KO)
    play(gs, ref, BLACK, marks["a"], pts["a"])
    assert gs.play(WHITE, PASS_POINT) == MOVE_OK
    assert gs.play(BLACK, PASS_POINT) == MOVE_OK
    assert gs.play(WHITE, point_from_xy(1, 1, 6)) == MOVE_OK


TRIPLE_KO = """
. X O . . . X O .
X O . O . X . X O
. X O . . . X O .
. . . . . . . . .
. . . . . . . . .
. X O . . . . . .
X O . O . . . . .
. X O . . . . . .
. . . . . . . . .
"""
# Kos A (top left, White holds), B (top right, Black holds), C (bottom left, White holds).
TRIPLE_KO_CYCLE = [(BLACK, (2, 1)), (WHITE, (6, 1)), (BLACK, (2, 6)),
                   (WHITE, (1, 1)), (BLACK, (7, 1)), (WHITE, (1, 6))]


@pytest.mark.parametrize("rules,last_ok", [
    (Rules(ko="simple"), True), (Rules(ko="positional"), False), (Rules(ko="situational"), False)])
def test_triple_ko_cycle(rules, last_ok):
    # Black's stones first, so the set-up position has Black to move (situational superko)
    gs, ref, pts, marks = setup(TRIPLE_KO, rules, first=BLACK)
    start_hash = gs.stone_hash
    for color, (x, y) in TRIPLE_KO_CYCLE[:-1]:
        assert play(gs, ref, color, (x, y), point_from_xy(x, y, 9)) == 1
        assert gs.stone_hash != start_hash
    color, (x, y) = TRIPLE_KO_CYCLE[-1]
    p = point_from_xy(x, y, 9)
    assert B.move_error(gs.board, p, color, False) == MOVE_OK  # simple ko allows it
    assert gs.legal_mask(color)[action_from_point(p, gs.width, gs.height)] == last_ok
    if last_ok:
        assert play(gs, ref, color, (x, y), p) == 1
        assert gs.stone_hash == start_hash
    else:
        before = gs.board.copy()
        assert gs.play(color, p) == MOVE_SUPERKO
        assert np.array_equal(gs.board, before)


# ---- suicide ----------------------------------------------------------------------------------

SINGLE_SUICIDE = """
. X . .
X a X .
. X . .
. . . .
"""
MULTI_SUICIDE = """
. X X . .
X O a X .
. X X . .
. . . . .
"""


def test_suicide_illegal_by_default():
    for diagram in (SINGLE_SUICIDE, MULTI_SUICIDE):
        gs, ref, pts, marks = setup(diagram)
        before = gs.board.copy()
        assert B.move_error(gs.board, pts["a"], WHITE, False) == MOVE_SUICIDE
        assert gs.play(WHITE, pts["a"]) == MOVE_SUICIDE
        assert np.array_equal(gs.board, before)
        assert not gs.legal_mask(WHITE)[action_from_point(pts["a"], gs.width, gs.height)]
        assert B.is_legal(gs.board, pts["a"], BLACK, False)


@pytest.mark.parametrize("diagram,removed", [(SINGLE_SUICIDE, 1), (MULTI_SUICIDE, 2)])
def test_suicide_with_the_option_removes_own_chain(diagram, removed):
    gs, ref, pts, marks = setup(diagram, Rules(ko="simple", suicide=True))
    before_hash = gs.stone_hash
    assert play(gs, ref, WHITE, marks["a"], pts["a"]) == MOVE_OK
    assert color_at(gs, *marks["a"]) == 0
    assert gs.prisoners(BLACK) == removed  # the opponent is credited with the stones
    assert (gs.stone_hash == before_hash) == (removed == 1)


def test_single_stone_suicide_repeats_the_position_under_tromp_taylor():
    gs, ref, pts, marks = setup(SINGLE_SUICIDE, PRESETS["tromp-taylor"])
    assert B.move_error(gs.board, pts["a"], WHITE, True) == MOVE_OK
    assert gs.play(WHITE, pts["a"]) == MOVE_SUPERKO
    gs, ref, pts, marks = setup(MULTI_SUICIDE, PRESETS["tromp-taylor"])
    assert play(gs, ref, WHITE, marks["a"], pts["a"]) == MOVE_OK
    assert gs.prisoners(BLACK) == 2


# ---- handicap ---------------------------------------------------------------------------------

# GNU Go 3.8 `fixed_handicap n` answers (recorded with `gnugo --mode gtp`).
GNUGO_HANDICAP = {
    9: {2: "G7 C3", 3: "C7 G7 C3", 4: "C7 G7 C3 G3", 5: "C7 G7 E5 C3 G3",
        6: "C7 G7 C5 G5 C3 G3", 7: "C7 G7 C5 E5 G5 C3 G3", 8: "C7 E7 G7 C5 G5 C3 E3 G3",
        9: "C7 E7 G7 C5 E5 G5 C3 E3 G3"},
    13: {2: "K10 D4", 3: "D10 K10 D4", 4: "D10 K10 D4 K4", 5: "D10 K10 G7 D4 K4",
         6: "D10 K10 D7 K7 D4 K4", 7: "D10 K10 D7 G7 K7 D4 K4",
         8: "D10 G10 K10 D7 K7 D4 G4 K4", 9: "D10 G10 K10 D7 G7 K7 D4 G4 K4"},
    19: {2: "Q16 D4", 3: "D16 Q16 D4", 4: "D16 Q16 D4 Q4", 5: "D16 Q16 K10 D4 Q4",
         6: "D16 Q16 D10 Q10 D4 Q4", 7: "D16 Q16 D10 K10 Q10 D4 Q4",
         8: "D16 K16 Q16 D10 Q10 D4 K4 Q4", 9: "D16 K16 Q16 D10 K10 Q10 D4 K4 Q4"},
    7: {2: "E5 C3", 3: "C5 E5 C3", 4: "C5 E5 C3 E3"},
    8: {2: "F6 C3", 3: "C6 F6 C3", 4: "C6 F6 C3 F3"},
}
# GNU Go answers "invalid handicap" for these (size, n).
GNUGO_INVALID = [(9, 1), (9, 10), (19, 1), (19, 10), (13, 0), (7, 5), (8, 5), (10, 5), (14, 6),
                 (6, 2), (5, 4)]


@pytest.mark.parametrize("size", sorted(GNUGO_HANDICAP))
def test_fixed_handicap_matches_gnugo(size):
    for n, answer in GNUGO_HANDICAP[size].items():
        expect = [parse_vertex(v, size, size) for v in answer.split()]
        assert fixed_handicap_points(n, size) == expect, (size, n)
    assert max_fixed_handicap(size, size) == max(GNUGO_HANDICAP[size])


def test_fixed_handicap_invalid_cases():
    for size, n in GNUGO_INVALID:
        assert fixed_handicap_points(n, size) is None, (size, n)


def test_fixed_handicap_12x12_follows_katago():
    # GNU Go puts 12x12 handicap stones on the 4-4 points; KataGo and the GTP spec's table
    # (which our networks were trained with) use the 3-3 points below 13x13.
    assert fixed_handicap_points(2, 12) == [parse_vertex("K10", 12, 12), parse_vertex("C3", 12, 12)]


def test_place_handicap_on_game():
    gs = GameState(19, 19, komi=0.5, rules=PRESETS["chinese"])
    pts = fixed_handicap_points(4, 19)
    assert gs.place_handicap(pts)
    assert gs.to_move == WHITE and gs.handicap == 4 and not gs.moves
    assert int(gs.board[B.ROW_HEADER, B.H_NUM_EMPTY]) == 361 - 4
    assert not gs.place_handicap(pts)  # only on an empty board
    # area scoring on an otherwise empty board: 361 black points, komi, bonus N = 4
    assert gs.score() == pytest.approx(361 - 0.5 - 4)


# ---- scoring ----------------------------------------------------------------------------------

FINISHED = """
. X O . .
X X O . .
. X O O O
X X O . O
. X O O .
"""


def test_area_score_of_finished_position():
    gs, ref, pts, marks = setup(FINISHED, PRESETS["chinese"], komi=0.5)
    # black: 7 stones + 3 territory; white: 9 stones + 6 territory
    assert B.area_counts(gs.board) == (10, 15) == ref.area()
    assert gs.score() == pytest.approx(10 - 15 - 0.5)
    assert result_string(gs.score()) == "W+5.5"


def test_dame_counts_for_nobody():
    gs, ref, pts, marks = setup("""
        X . O
        X . O
        X . O
    """, komi=0.0)
    assert B.area_counts(gs.board) == (3, 3)
    assert result_string(gs.score()) == "0"


DEAD = """
. . X O . X
. . X O . .
. O X O O O
. . X O . O
. . X O O .
"""


def test_territory_and_area_score_with_dead_stones():
    gs, ref, pts, marks = setup(DEAD, PRESETS["japanese"], komi=6.5)
    dead = np.zeros(gs.board.shape[1], dtype=np.bool_)
    dead_xy = [(5, 0), (1, 2)]  # a black stone in White's area, a white one in Black's
    for x, y in dead_xy:
        dead[point_from_xy(x, y, 6)] = True
    # territory: black the 10 points left of its wall (the dead white stone's included), white
    # 4 top right (the dead black stone's included) + 1 + 1; one dead stone of each colour
    assert territory_counts(gs.board, dead) == (10, 6, 1, 1)
    expect = (10 + 1) - (6 + 1) - 6.5
    assert gs.score(dead) == pytest.approx(expect)
    assert ref.territory_score(dead_xy, 6.5) == pytest.approx(expect)
    assert result_string(gs.score(dead)) == "W+2.5"
    # area scoring of the same position: 5 + 10 for Black, 9 + 6 for White
    area = score_position(gs.board, PRESETS["chinese"], 6.5, 0, dead)
    assert area == pytest.approx(15 - 15 - 6.5) == pytest.approx(ref.area_score(6.5, dead_xy))
    # without dead stones the white stone makes Black's area neutral... except its own point
    assert B.area_counts(gs.board) == ref.area()


def test_territory_score_counts_captures():
    gs, ref, pts, marks = setup(KO, PRESETS["japanese"], komi=0.0)
    play(gs, ref, BLACK, marks["a"], pts["a"])
    dead = np.zeros(gs.board.shape[1], dtype=np.bool_)
    assert gs.score(dead) == pytest.approx(ref.territory_score([], 0.0))
    assert gs.prisoners(BLACK) == 1


@pytest.mark.parametrize("score,text", [(3.5, "B+3.5"), (-0.5, "W+0.5"), (0.0, "0"),
                                        (12.0, "B+12"), (-361.0, "W+361")])
def test_result_strings(score, text):
    assert result_string(score) == text
