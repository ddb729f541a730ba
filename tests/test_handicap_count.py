"""How many handicap stones a game has, whichever way they arrived (KataGo's rule)."""

import pytest

from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.handicap import fixed_handicap_points

COLORS = {"b": BLACK, "w": WHITE}


def game_after(moves: str, handicap: list[str] = (), setup_white: str = "") -> GameState:
    g = GameState(9, 9, 0.5)
    if handicap:
        assert g.place_handicap([parse_vertex(v, 9, 9) for v in handicap])
    if setup_white:
        assert g.set_position([], [parse_vertex(setup_white, 9, 9)], BLACK)
    words = moves.split()
    for c, v in zip(words[::2], words[1::2]):
        assert g.play(COLORS[c], parse_vertex(v, 9, 9)) == MOVE_OK, v
    return g


# (moves, handicap stones, moves spent on them): the cases of KataGo's handicap test and the
# set-up position of the bug report (a black run answered by several white moves)
CASES = [
    ("", 0, 0),
    ("b D4", 0, 0),  # one extra black move is an ordinary game
    ("b D4 w E5", 0, 0),
    ("b C3 b G7", 2, 2),
    ("b C3 b G7 b E5 w D4", 3, 3),
    ("b C3 b G7 w E5 b D4", 2, 2),  # black moves after White's first real move are moves
    ("b C3 b G7 w pass b E5 w D4", 3, 4),  # a lone white pass between them is skipped
    ("b C3 b pass b G7 w D4", 2, 3),  # black passes are not stones
    ("b C3 b G7 w E5 w D4", 0, 0),  # two white moves in a row: a set-up, not handicap
    ("b C3 b G7 w pass w D4", 0, 0),
    ("b D1 b D2 b D3 b D4 b D5 b D6 b D7 b D8 b D9 "
     "w E1 w E2 w E3 w E4 w E5 w E6 w E7 w E8 w E9", 0, 0),
]


@pytest.mark.parametrize("moves,stones,spent", CASES)
def test_leading_black_moves(moves, stones, spent):
    g = game_after(moves)
    assert (g.handicap, g.moves_after_handicap) == (stones, len(g.moves) - spent)


def test_placed_stones_count_and_stay_counted():
    points = ["G7", "C3"]
    assert fixed_handicap_points(2, 9) == [parse_vertex(v, 9, 9) for v in points]
    g = game_after("w E5 w D4", handicap=points)  # white moves in a row keep placed stones
    assert (g.handicap, g.moves_after_handicap) == (2, 2)
    g = game_after("b E5 w D4", handicap=points)  # Black's extra move before White's adds one
    assert (g.handicap, g.moves_after_handicap) == (3, 1)


def test_a_start_holding_white_stones_is_no_handicap():
    g = game_after("b C3 b G7 w D4", setup_white="E5")
    assert g.handicap == 0


def test_undo_recounts():
    g = game_after("b C3 b G7 w E5 w D4")
    assert g.handicap == 0
    g.undo()
    assert g.handicap == 2
    g.play(BLACK, PASS_POINT)
    assert g.handicap == 2
