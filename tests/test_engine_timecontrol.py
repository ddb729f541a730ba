"""Time budget per move from the clock (hand-computed expectations)."""

import pytest

from engine.timecontrol import expected_moves_left, move_budget, spend


def test_untimed_game_has_no_budget():
    assert move_budget(-1, 0, 0, 0, 0, 0, 361, 0) is None


def test_absolute_time_is_spread_over_the_expected_game():
    # 19x19, move 0: 0.8 * 361 = 288.8 moves left in the game, 144.4 of them ours.
    assert expected_moves_left(361, 0) == pytest.approx(144.4)
    assert move_budget(600, 0, 0, 0, 600, 0, 361, 0, 0.5) == pytest.approx(600 / 144.4)
    # late in the game the horizon never drops below a fifth of the board: 36.1 moves of ours
    assert move_budget(600, 0, 0, 0, 60, 0, 361, 400, 0.5) == pytest.approx(60 / 36.1)


def test_canadian_byoyomi():
    # in byo-yomi: 60 s for 10 stones -> 6 s a move (minus nothing, 59.5 available)
    assert move_budget(0, 60, 10, 0, 60, 10, 361, 100, 0.5) == pytest.approx(6.0)
    # last stone of the period: all that is left minus the lag buffer
    assert move_budget(0, 60, 10, 0, 3.0, 1, 361, 100, 0.5) == pytest.approx(2.5)
    # main time left: main share plus one byo-yomi stone
    assert move_budget(300, 60, 10, 0, 144.4, 0, 361, 0, 0.5) == pytest.approx(1.0 + 6.0)


def test_japanese_byoyomi_uses_one_period():
    assert move_budget(0, 30, 0, 5, 30, 5, 361, 100, 1.0) == pytest.approx(29.0)
    assert move_budget(100, 30, 0, 5, 144.4, 0, 361, 0, 1.0) == pytest.approx(31.0)


def test_budget_never_negative():
    assert move_budget(10, 0, 0, 0, 0.1, 0, 81, 10, 0.5) == pytest.approx(0.05)


def test_spend_tracks_the_clock():
    assert spend(100, 0, 0, 0, 0, 30) == (70, 0)
    # Canadian: main time runs out 5 s into the move -> first period, one stone used
    assert spend(10, 60, 10, 0, 0, 15) == (55, 9)
    assert spend(30, 60, 10, 0, 3, 10) == (20, 2)
    assert spend(30, 60, 10, 0, 1, 10) == (60, 10)  # period completed: a fresh one
    # Japanese: a move within the period keeps all periods; overrunning loses one
    assert spend(30, 30, 0, 5, 5, 20) == (30, 5)
    assert spend(30, 30, 0, 5, 5, 40) == (30, 4)
    assert spend(10, 30, 0, 5, 0, 25) == (30, 5)
