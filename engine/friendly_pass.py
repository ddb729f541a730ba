"""Passing after the opponent passed, as a bot on a server with a stone-removal phase should.

OGS and KGS end a game after two passes and then remove the dead stones; capturing them one
move at a time first only spends the clock (KataGo's friendly passing). The engine passes
back when the score with its own dead-stone judgement (engine/dead_stones.py) applied is a
win for it, or when the search expects the same result from playing on. Rules that remove no
stones (Tromp-Taylor) keep cleanup play, and so does `--no-friendly-pass`.
"""

from dosaku.engine.rules.constants import BLACK, PASS_POINT, opponent
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import Rules


def removes_dead_stones(rules: Rules) -> bool:
    """Whether the game's rules take dead stones off before counting (all but Tromp-Taylor,
    which counts the board as it stands)."""
    return rules.friendly_pass_ok or rules.scoring == "territory"


def opponent_passed(game: GameState, color: int) -> bool:
    """Whether the last move was the opponent's pass, so a pass by `color` ends the game."""
    return bool(game.moves) and game.moves[-1] == (opponent(color), PASS_POINT)


def lead_for(color: int, black_minus_white: float) -> float:
    """A Black-minus-White score from `color`'s side."""
    return black_minus_white if color == BLACK else -black_minus_white


def pass_keeps_result(lead_after_pass: float, winrate_playing_on: float | None) -> bool:
    """Whether passing now gives `color` the result playing on would.

    lead_after_pass: the score from the mover's side with the dead stones removed;
    winrate_playing_on: the search's winrate of its best move (None: not searched yet).
    A won count is kept by passing; a lost or drawn one is what playing on gives too unless
    the search expects to win.
    """
    if lead_after_pass > 0:
        return True
    return winrate_playing_on is not None and winrate_playing_on <= 0.5
