"""bench/strength.py, the GNU Go matches that left the test suite: it reads the card's figures,
sets the pass mark from them, and plays at the settings the quick replay test checks
(tests/test_strength_replay.py), so the replay stands for the match."""

import shlex

import pytest

from dosaku.bench import strength
from dosaku.launch import flags as launch_flags
from dosaku.weights import card_path, model_path
from tests.test_strength_replay import FLAGS as REPLAY_FLAGS
from tests.test_strength_replay import NET as REPLAY_NET


def test_the_card_states_three_20_game_results_and_sets_the_pass_mark():
    figures = strength.card_figures(card_path(strength.CARD_NET).read_text())
    assert len(figures) == 3 and all(games == strength.GAMES for _, games in figures)
    assert strength.wins_needed(figures) == min(w for w, _ in figures) - strength.SLACK


def test_card_line_must_be_there_once_with_20_game_figures():
    line = "gnugo10_9x9_100visits: 20/20 19/20 18/20\n"
    assert strength.card_figures("x\n" + line) == [(20, 20), (19, 20), (18, 20)]
    assert strength.wins_needed([(20, 20), (19, 20), (18, 20)]) == 16
    for text in ("no figures\n", line + line, "gnugo10_9x9_100visits: 20/20 19/20\n"):
        with pytest.raises(ValueError):
            strength.card_figures(text)
    with pytest.raises(ValueError):
        strength.wins_needed([(10, 10), (9, 10), (9, 10)])


def test_verdict_passes_at_the_mark_and_fails_below_it():
    assert strength.verdict("net", 17, 17) == (True, "net: 17/20 wins, 17 needed: pass")
    assert strength.verdict("net", 16, 17) == (False, "net: 16/20 wins, 17 needed: FAIL")


def test_the_match_plays_the_net_and_settings_the_replay_test_checks():
    assert strength.CARD_NET == REPLAY_NET
    args = shlex.split(strength.dosaku_command(model_path(strength.CARD_NET)))[2:]
    parsed = launch_flags.parse_flags(args)
    replay = launch_flags.parse_flags(REPLAY_FLAGS + ["--model", REPLAY_NET])
    for name in ("visits", "threads", "int8", "boardsize"):
        assert getattr(parsed, name) == getattr(replay, name), name
    assert parsed.int8 is False and parsed.visits == 100
