"""Time budget per move from the clock (hand-computed expectations)."""

import pytest

from dosaku.engine.timecontrol import (
    expected_moves_left,
    move_budget,
    saved_time_carries_over,
    spend,
)


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


def test_fischer_spends_the_increment_too():
    # 19x19, move 0: 600 s over 144.4 expected moves of ours, plus the 10 s that come back
    assert move_budget(600, 0, 0, 0, 600, 0, 361, 0, 0.5, increment=10) == \
        pytest.approx(600 / 144.4 + 10)
    # nearly flagged: never more than the clock minus the lag buffer
    assert move_budget(600, 0, 0, 0, 3, 0, 361, 0, 0.5, increment=10) == pytest.approx(2.5)
    # fischer-capped: a move may take at most max_per_move (minus the lag buffer)
    assert move_budget(600, 0, 0, 0, 600, 0, 361, 0, 0.5, increment=10,
                       max_per_move=5) == pytest.approx(4.5)


def test_fischer_clock_gains_the_increment_up_to_the_cap():
    assert spend(100, 0, 0, 0, 0, 30, increment=5) == (75, 0)
    assert spend(100, 0, 0, 0, 0, 2, increment=5, main_cap=101) == (101, 0)
    assert spend(100, 0, 0, 0, 0, 2, increment=5, main_cap=-1) == (103, 0)


def test_saved_time_carries_over_only_where_the_clock_keeps_it():
    # arguments: byo_stones, byo_periods, time_left, stones_left, increment
    assert saved_time_carries_over(0, 0, 300, 0)  # absolute time
    assert saved_time_carries_over(0, 0, 3, 0, increment=5)  # Fischer
    assert saved_time_carries_over(10, 0, 100, 0)  # main time before Canadian byo-yomi
    assert saved_time_carries_over(10, 0, 30, 4)  # Canadian: 3 more stones share the period
    assert not saved_time_carries_over(10, 0, 30, 1)  # last stone: the period resets
    assert not saved_time_carries_over(1, 0, 0, 0)  # 1 stone a period, no main time
    assert saved_time_carries_over(5, 0, 0, 0)  # no main time: a fresh 5-stone period
    assert saved_time_carries_over(0, 5, 100, 0)  # main time before Japanese periods
    assert not saved_time_carries_over(0, 5, 30, 5)  # in a Japanese period
