"""Moves a search may not take, by player and depth: KataGo's avoidMoves / allowMoves (its
analysis queries, and `avoid` / `allow` of GTP's analysis commands) as one table the
selection kernel reads (engine/search/selection.py).

The table is int64 [3, A] (A = W*H+1 actions, pass last), a row per colour (BLACK, WHITE; row 0
unused): entry [c, a] = d means colour c may not play action a at any node less than d plies
below the root (the root's own moves are depth 0); 0 never bans. A player is banned only where
it is to move, so a ban on the player not to move at the root starts one ply down. The root's
row is applied with its legality (Search.run's root_moves), so that a root with every move
banned still has pass; deeper, a node with every move banned is valued by its own evaluation,
as KataGo's search does.
"""

from dataclasses import dataclass

import numpy as np

from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import action_from_point


@dataclass(frozen=True)
class MoveBan:
    """One avoid or allow entry: `points` of `color` (pass is PASS_POINT) are banned, or with
    `allow` every point but those (pass too, unless listed), down to `until_depth` plies."""
    color: int
    points: frozenset[int]
    until_depth: int
    allow: bool = False

    def __post_init__(self):
        if self.color not in (BLACK, WHITE):
            raise ValueError(f"a ban is for BLACK or WHITE, not {self.color}")
        if self.until_depth < 1:
            raise ValueError(f"untilDepth must be at least 1, not {self.until_depth}")


def ban_table(bans, width: int, height: int) -> np.ndarray | None:
    """The table of `bans` (MoveBan entries, in order), None when there are none. An avoid
    entry sets its points' depth (a later entry for the same point replaces an earlier one);
    an allow entry sets every action of its colour to its depth and its points to 0, as
    KataGo fills its per-player arrays."""
    bans = list(bans)
    if not bans:
        return None
    table = np.zeros((3, width * height + 1), np.int64)
    for ban in bans:
        actions = [action_from_point(p, width, height) for p in ban.points]
        row = table[ban.color]
        if ban.allow:
            row[:] = ban.until_depth
            row[actions] = 0
        else:
            row[actions] = ban.until_depth
    return table


def root_only(allowed: np.ndarray | None, color: int) -> np.ndarray | None:
    """The table that keeps `color` to the root moves `allowed` (bool per action, pass last;
    None: all) and bans nothing below the root."""
    if allowed is None:
        return None
    table = np.zeros((3, len(allowed)), np.int64)
    table[color] = ~allowed
    return table


def allowed_at_root(table: np.ndarray | None, color: int) -> np.ndarray | None:
    """The root moves the table leaves `color` to move there (None: all)."""
    return None if table is None else table[color] == 0
