"""Rulesets (ko rule, suicide, scoring, handicap bonus) and scoring of finished positions.

Preset settings follow KataGo's named rulesets, so `kata-set-rules chinese` here means what it
means to KataGo and to networks trained under its rules.
"""

import json
from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, EMPTY, WHITE

KO_RULES = ("simple", "positional", "situational")
SCORING_RULES = ("area", "territory")
TAX_RULES = ("none", "seki", "all")
HANDICAP_BONUS = ("0", "N", "N-1")


@dataclass(frozen=True)
class Rules:
    ko: str = "simple"  # simple ko, positional superko, or situational superko
    scoring: str = "area"  # area (stones + territory) or territory (territory + prisoners)
    suicide: bool = False  # whether (multi-stone) suicide is a legal move
    tax: str = "none"  # KataGo tax: "seki" = no points in seki, "all" = stone scoring
    white_handicap_bonus: str = "0"  # white gets N or N-1 extra points for N handicap stones
    friendly_pass_ok: bool = False  # KataGo's flag: passing with dead stones left is fine
    name: str = "custom"  # the preset name, or "custom"

    def __post_init__(self):
        if self.ko not in KO_RULES or self.scoring not in SCORING_RULES:
            raise ValueError("unknown ko or scoring rule")
        if self.tax not in TAX_RULES or self.white_handicap_bonus not in HANDICAP_BONUS:
            raise ValueError("unknown tax or handicap bonus rule")

    def handicap_bonus(self, handicap_stones: int) -> int:
        """Points white receives for black's handicap stones under these rules."""
        if handicap_stones <= 1 or self.white_handicap_bonus == "0":
            return 0
        return handicap_stones - (1 if self.white_handicap_bonus == "N-1" else 0)

    def to_kata_json(self) -> str:
        """The rules as KataGo's `kata-get-rules` JSON."""
        return json.dumps({
            "hasButton": False,
            "ko": self.ko.upper(),
            "scoring": self.scoring.upper(),
            "suicide": self.suicide,
            "tax": self.tax.upper(),
            "whiteHandicapBonus": self.white_handicap_bonus,
            "friendlyPassOk": self.friendly_pass_ok,
        }, separators=(",", ":"))


PRESETS = {
    "tromp-taylor": Rules("positional", "area", True, "none", "0"),
    "chinese": Rules("simple", "area", False, "none", "N"),
    "chinese-ogs": Rules("positional", "area", False, "none", "N"),
    "chinese-kgs": Rules("positional", "area", False, "none", "N"),
    "japanese": Rules("simple", "territory", False, "seki", "0"),
    "korean": Rules("simple", "territory", False, "seki", "0"),
    "aga": Rules("situational", "area", False, "none", "N-1"),
    "bga": Rules("situational", "area", False, "none", "N-1"),
    "new-zealand": Rules("situational", "area", True, "none", "0"),
    "stone-scoring": Rules("simple", "area", False, "all", "0"),
}
# KataGo's friendlyPassOk: on for its area-scoring presets except Tromp-Taylor.
PRESETS = {name: replace(r, name=name,
                         friendly_pass_ok=r.scoring == "area" and name != "tromp-taylor")
           for name, r in PRESETS.items()}
ALIASES = {"tromp_taylor": "tromp-taylor", "new_zealand": "new-zealand", "nz": "new-zealand",
           "tt": "tromp-taylor"}


def rules_by_name(name: str) -> Rules:
    """A preset by name (case-insensitive, `_` or `-`); KeyError if unknown."""
    key = name.strip().lower()
    return PRESETS[ALIASES.get(key, key)]


def rules_from_kata_json(text: str, base: Rules) -> Rules:
    """Rules from KataGo's JSON form; keys not given keep `base`'s values. ValueError if bad."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("rules JSON must be an object")
    ko = str(data.get("ko", base.ko)).lower()
    if ko == "spight":
        ko = "positional"
    return Rules(
        ko=ko,
        scoring=str(data.get("scoring", base.scoring)).lower(),
        suicide=bool(data.get("suicide", base.suicide)),
        tax=str(data.get("tax", base.tax)).lower(),
        white_handicap_bonus=str(data.get("whiteHandicapBonus", base.white_handicap_bonus)).upper(),
        friendly_pass_ok=bool(data.get("friendlyPassOk", False)),  # KataGo: false unless given
    )


@njit(cache=True)
def territory_counts(b, dead):
    """Territory scoring with a set of dead stones (bool per point).

    Dead stones are removed first; each empty region (dead stones' points included) bordered by
    one colour only is that colour's territory. Returns (black territory, white territory,
    dead black stones, dead white stones).
    """
    col = b[B.ROW_COLOR].copy()
    dead_black = 0
    dead_white = 0
    for p in range(col.shape[0]):
        if dead[p] and (col[p] == BLACK or col[p] == WHITE):
            if col[p] == BLACK:
                dead_black += 1
            else:
                dead_white += 1
            col[p] = EMPTY
    area_black, area_white = B.area_of_colors(col, b[B.ROW_HEADER, B.H_STRIDE])
    black = area_black - np.count_nonzero(col == BLACK)
    white = area_white - np.count_nonzero(col == WHITE)
    return black, white, dead_black, dead_white


def score_position(b: np.ndarray, rules: Rules, komi: float, handicap_stones: int,
                   dead: np.ndarray | None = None) -> float:
    """Black's score minus White's (komi and handicap bonus included): positive = Black wins.

    Area scoring is Tromp-Taylor on the position with `dead` stones removed; territory scoring
    counts territory plus prisoners (captures and dead stones).
    """
    if dead is None:
        dead = np.zeros(b.shape[1], dtype=np.bool_)
    tb, tw, dead_b, dead_w = territory_counts(b, dead)
    bonus = rules.handicap_bonus(handicap_stones)
    if rules.scoring == "area":
        col = b[B.ROW_COLOR]
        stones_b = int(np.count_nonzero((col == BLACK) & ~dead))
        stones_w = int(np.count_nonzero((col == WHITE) & ~dead))
        return (stones_b + tb) - (stones_w + tw) - komi - bonus
    prisoners_b = int(b[B.ROW_HEADER, B.H_PRISONERS + BLACK]) + dead_w
    prisoners_w = int(b[B.ROW_HEADER, B.H_PRISONERS + WHITE]) + dead_b
    return (tb + prisoners_b) - (tw + prisoners_w) - komi - bonus


def result_string(score: float) -> str:
    """GTP/SGF result text of Black's margin: 'B+3.5', 'W+0.5' or '0'."""
    if score > 0:
        return f"B+{score:g}"
    if score < 0:
        return f"W+{-score:g}"
    return "0"
