"""hypothesis properties of the board and the game record."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import point_from_action, point_from_xy
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import Rules
from tests.boards import assert_board_matches
from tests.reference_rules import RefBoard

SETTINGS = settings(max_examples=120, deadline=None)

sizes = st.tuples(st.integers(2, 7), st.integers(2, 7))
rules = st.builds(Rules, ko=st.sampled_from(["simple", "positional", "situational"]),
                  suicide=st.booleans())


def play_choices(gs, choices):
    """Play choice k as the k-th legal move of the side to move (mod count; pass when none)."""
    for k in choices:
        mask = gs.legal_mask(gs.to_move)
        legal = np.flatnonzero(mask[:-1])
        if len(legal) == 0 or k < 0:
            point = PASS_POINT
        else:
            point = point_from_action(int(legal[k % len(legal)]), gs.width, gs.height)
        assert gs.play(gs.to_move, point) == MOVE_OK


def record(gs):
    return (gs.board.copy(), list(gs.moves), gs.to_move, list(gs._keys), gs.stone_hash)


def same(a, b):
    return np.array_equal(a[0], b[0]) and a[1:] == b[1:]


@SETTINGS
@given(sizes, rules, st.lists(st.integers(-3, 1000), max_size=60),
       st.lists(st.integers(-3, 1000), min_size=1, max_size=8))
def test_play_then_undo_restores_everything(size, rule, prefix, extra):
    gs = GameState(*size, rules=rule)
    play_choices(gs, prefix)
    saved = record(gs)
    play_choices(gs, extra)
    for _ in extra:
        assert gs.undo()
    assert same(record(gs), saved)
    # and the restored game continues exactly like the original would
    again = GameState(*size, rules=rule)
    play_choices(again, prefix)
    play_choices(gs, extra)
    play_choices(again, extra)
    assert same(record(gs), record(again))


@SETTINGS
@given(sizes, st.data())
def test_transposed_move_orders_give_equal_hashes(size, data):
    w, h = size
    points = [(x, y) for y in range(h) for x in range(w)]
    chosen = data.draw(st.lists(st.sampled_from(points), unique=True, max_size=len(points)))
    colors = data.draw(st.lists(st.sampled_from([BLACK, WHITE]), min_size=len(chosen),
                                max_size=len(chosen)))
    order = data.draw(st.permutations(range(len(chosen))))
    boards = []
    for sequence in (range(len(chosen)), order):
        b = B.new_board(w, h)
        for i in sequence:
            B.play(b, point_from_xy(*chosen[i], w), colors[i], True)
        boards.append(b)
    b1, b2 = boards
    same_stones = np.array_equal(b1[B.ROW_COLOR], b2[B.ROW_COLOR])
    assert same_stones == (b1[B.ROW_HEADER, B.H_HASH] == b2[B.ROW_HEADER, B.H_HASH])
    if not any(b[B.ROW_HEADER, B.H_PRISONERS + c] for b in boards for c in (BLACK, WHITE)):
        assert same_stones  # nothing was captured: both orders hold every stone


@SETTINGS
@given(sizes, st.data())
def test_liberties_match_reference_for_random_positions(size, data):
    """Stones dropped in any order (captures and suicide carried out) agree with the reference."""
    w, h = size
    points = [(x, y) for y in range(h) for x in range(w)]
    drops = data.draw(st.lists(st.tuples(st.sampled_from(points), st.sampled_from([BLACK, WHITE])),
                               max_size=3 * len(points)))
    b = B.new_board(w, h)
    ref = RefBoard(w, h)
    prisoners = {BLACK: 0, WHITE: 0}
    for (x, y), c in drops:
        if ref.get(x, y) != 0:
            continue
        captured, suicided = ref.place(c, x, y)
        prisoners[c] += len(captured)
        prisoners[3 - c] += len(suicided)
        assert B.play_unchecked(b, point_from_xy(x, y, w), c) == len(captured)
    assert_board_matches(b, ref)
    assert b[B.ROW_HEADER, B.H_PRISONERS + BLACK] == prisoners[BLACK]
    assert b[B.ROW_HEADER, B.H_PRISONERS + WHITE] == prisoners[WHITE]
