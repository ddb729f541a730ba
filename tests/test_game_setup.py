"""GameState.set_position: a set-up position (SGF AB/AW/PL) replaces the game."""

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, EMPTY, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import rules_by_name


def pts(*vertices):
    return [parse_vertex(v, 5, 5) for v in vertices]


def test_set_position_places_stones_without_history():
    g = GameState(5, 5, 0.5, rules_by_name("tromp-taylor"))
    g.play(BLACK, pts("C3")[0])
    assert g.set_position(pts("A1", "B2"), pts("E5"), WHITE)
    col = g.board[B.ROW_COLOR]
    assert [col[p] for p in pts("A1", "B2", "E5", "C3")] == [BLACK, BLACK, WHITE, EMPTY]
    assert g.to_move == WHITE and g.moves == [] and not g.undo()
    assert g.handicap == 0 and g.stone_hash != 0
    # The set-up position starts the superko history.
    assert g._repeats(g.stone_hash, WHITE)


def test_bad_set_up_changes_nothing():
    g = GameState(5, 5, 0.5, rules_by_name("chinese"))
    g.play(BLACK, pts("C3")[0])
    before = g.board.copy()
    assert not g.set_position(pts("A1", "A1"), [], BLACK)  # repeated point
    assert not g.set_position(pts("A1"), pts("A2", "B1"), BLACK)  # A1 has no liberty
    assert (g.board == before).all() and len(g.moves) == 1
