"""tournament.clock: server-style clocks worked through by hand, move by move."""

import pytest

from dosaku.tournament.clock import ClockSpec, PlayerClock


def test_parse_and_announce():
    byo = ClockSpec.parse("byoyomi 30 2 3")
    assert (byo.kind, byo.main, byo.period, byo.count) == ("byoyomi", 30.0, 2.0, 3)
    assert byo.settings_command("kgs-time_settings") == "kgs-time_settings byoyomi 30 2 3"
    assert byo.settings_command("time_settings") == "time_settings 30 2 1"
    can = ClockSpec.parse("canadian 0 10 10")
    assert can.settings_command("kgs-time_settings") == "kgs-time_settings canadian 0 10 10"
    assert can.settings_command("time_settings") == "time_settings 0 10 10"
    assert ClockSpec.parse("absolute 60.5").settings_command("time_settings") == \
        "time_settings 61 0 0"
    for bad in ("", "fischer 10 5", "fischer 60 0 120", "fischer 60 5 30", "byoyomi 30 2",
                "canadian 10 0 5", "byoyomi 30 2 0", "absolute 0", "absolute -3", "absolute nan",
                "byoyomi -1 2 3"):
        with pytest.raises(ValueError):
            ClockSpec.parse(bad)
    assert byo.settings_command("kata-time_settings") == "kata-time_settings byoyomi 30 2 3"
    with pytest.raises(ValueError):
        byo.settings_command("time-settings")


def test_fischer_announced_as_gtp2ogs_does():
    """fischer-capped with no limit a move to engines that take it; else the main time less
    one increment, then a Canadian period of one stone per increment."""
    fischer = ClockSpec.parse("fischer 60 5 120")
    assert (fischer.main, fischer.period, fischer.cap) == (60, 5, 120)
    assert fischer.settings_command("kata-time_settings") == \
        "kata-time_settings fischer-capped 60 5 120 -1"
    assert fischer.settings_command("kgs-time_settings") == "kgs-time_settings canadian 55 5 1"
    assert fischer.settings_command("time_settings") == "time_settings 55 5 1"


def test_fischer_60s_plus_5s_capped_at_70s():
    clock = PlayerClock(ClockSpec.parse("fischer 60 5 70"))
    assert clock.time_left() == (60, 0) and clock.allowance() == 60
    assert clock.spend(2)  # 60 - 2 + 5
    assert clock.time_left() == (63, 0)
    assert clock.spend(1) and clock.spend(1)  # 67, then 71 capped at 70
    assert clock.allowance() == 70
    assert clock.spend(69.5)  # half a second left, then the increment
    assert clock.allowance() == pytest.approx(5.5) and clock.time_left() == (5, 0)
    assert not clock.spend(5.6)


def test_japanese_byoyomi_30s_plus_3x2s():
    clock = PlayerClock(ClockSpec.parse("byoyomi 30 2 3"))
    assert clock.time_left() == (30, 0) and clock.allowance() == 36
    assert clock.spend(29.5)
    assert clock.time_left() == (0, 0) and clock.allowance() == pytest.approx(6.5)
    assert clock.spend(1.5)  # 0.5 s of main time, then 1 s of the first period: no period lost
    assert clock.time_left() == (2, 3) and clock.allowance() == 6
    assert clock.spend(1.9)  # within the period
    assert clock.time_left() == (2, 3)
    assert clock.spend(2.5)  # one period used up
    assert clock.time_left() == (2, 2)
    assert clock.allowance() == 4 and not PlayerClock(clock.spec).spend(36.01)
    assert clock.spend(3.9)  # one more period used up: the last one remains
    assert clock.time_left() == (2, 1) and clock.allowance() == 2
    assert not clock.spend(2.01)
    assert clock.allowance() == 0  # lost: any further move loses too


def test_japanese_byoyomi_last_period_survives_a_fast_move():
    clock = PlayerClock(ClockSpec.parse("byoyomi 0 2 1"))
    assert clock.time_left() == (2, 1)
    for _ in range(50):
        assert clock.spend(1.99)
    assert clock.time_left() == (2, 1)
    assert not clock.spend(2.01)


def test_canadian_10_moves_in_10s():
    clock = PlayerClock(ClockSpec.parse("canadian 5 10 10"))
    assert clock.time_left() == (5, 0) and clock.allowance() == 15
    assert clock.spend(6)  # 5 s main, 1 s of the period: the first of its 10 stones
    assert clock.time_left() == (9, 9)
    for _ in range(8):
        assert clock.spend(1)
    assert clock.time_left() == (1, 1) and clock.allowance() == 1
    assert clock.spend(0.5)  # the tenth stone: a fresh period
    assert clock.time_left() == (10, 10)
    for _ in range(9):
        assert clock.spend(1.05)
    assert clock.allowance() == pytest.approx(0.55)
    assert not clock.spend(0.6)  # the period ran out before the tenth stone


def test_canadian_entered_exactly_at_the_end_of_main_time():
    clock = PlayerClock(ClockSpec.parse("canadian 3 10 5"))
    assert clock.spend(3.0)
    assert clock.time_left() == (10, 5)  # no stone of the period used yet


def test_absolute():
    clock = PlayerClock(ClockSpec.parse("absolute 10"))
    assert clock.spend(4) and clock.spend(5.5)
    assert clock.time_left() == (0, 0) and clock.allowance() == pytest.approx(0.5)
    assert not clock.spend(0.6)
