"""A search's AnalysisSnapshot written as KataGo's analysis answer: its keys, its perspective
(reportAnalysisWinratesAs: BLACK, WHITE, or SIDETOMOVE), its rounding.

The snapshot holds values from the side to move's view; answers from the other side's flip
winrate and lcb (1 - x), score, utility and ownership (-x), as KataGo does. Floats are rounded
to 9 significant digits and ownership to 6 decimals, KataGo's precision. `scoreMean` repeats
`scoreLead` and `scoreSelfplay` holds the expected final score, KataGo's (historical) layout.
Every visit of a move goes through its one edge (no transpositions) with weight 1, so
`edgeVisits`, `weight`, `edgeWeight` and `playSelectionValue` equal `visits`; `order` is the
engine's own choice first (as genmove would choose it), then by visits. rootInfo's raw values
(`rawWinrate`, ...) are the network's own evaluation of the root, turned like the search's;
a net without short-term error and varTimeLeft heads gets KataGo's placeholders for them (-1,
so `rawStWrError` -0.5, as KataGo's half of the error). `ownershipStdev` is the spread of the
ownership its mean is taken over (the evaluated leaves), which has no side.
"""

import math

from dosaku.engine.rules.constants import BLACK
from dosaku.engine.rules.coords import format_vertex
from dosaku.kata_analysis.query import Query

PRECISION = 8  # KataGo's: digits after the leading one


def round_dynamic(x: float, precision: int = PRECISION) -> float:
    """x rounded to precision + 1 significant digits."""
    x = float(x)
    if not math.isfinite(x) or abs(x) <= 1e-60:
        return x
    magnitude = math.floor(math.log10(abs(x))) - precision
    if magnitude >= 0:
        return float(round(x))
    return round(x, -magnitude)


def round_ownership(values) -> list[float]:
    return [round(float(v), 6) + 0.0 for v in values]


def flips(query: Query, color: int) -> bool:
    """Whether values from `color`'s view are shown from the other side's."""
    if query.perspective == "SIDETOMOVE":
        return False
    return (query.perspective == "BLACK") != (color == BLACK)


def move_info(m, order: int, query: Query, flip: bool) -> dict:
    sign = -1.0 if flip else 1.0
    w, h = query.width, query.height
    pv = (m.pv or [m.point])[:query.pv_len + 1]
    info = {
        "move": format_vertex(m.point, w, h),
        "visits": m.visits,
        "edgeVisits": m.visits,
        "weight": float(m.visits),
        "edgeWeight": float(m.visits),
        "winrate": round_dynamic(1.0 - m.winrate if flip else m.winrate),
        "scoreMean": round_dynamic(sign * m.score_lead),
        "scoreSelfplay": round_dynamic(sign * (m.score_mean if m.score_mean is not None
                                               else m.score_lead)),
        "scoreLead": round_dynamic(sign * m.score_lead),
        "scoreStdev": round_dynamic(m.score_stdev or 0.0),
        "prior": round_dynamic(m.prior),
        "utility": round_dynamic(sign * m.utility),
        "lcb": round_dynamic(1.0 - m.lcb if flip else m.lcb),
        "utilityLcb": round_dynamic(sign * m.utility_lcb),
        "order": order,
        "playSelectionValue": float(m.visits),
        "pv": [format_vertex(p, w, h) for p in pv],
    }
    if query.pv_visits:
        visits = (m.pv_visits or [m.visits])[:len(pv)]
        info["pvVisits"] = visits
        info["pvEdgeVisits"] = visits
    if query.moves_ownership:
        own = m.ownership
        info["ownership"] = round_ownership([] if own is None else sign * own) or \
            [0.0] * (w * h)
    if query.moves_ownership_stdev:
        info["ownershipStdev"] = stdev_list(m.ownership_stdev, w * h)
    return info


def stdev_list(stdev, size: int) -> list[float]:
    """An ownership stdev as KataGo writes it; zeros where no leaf was counted (as KataGo's
    walk of a node without an evaluation gives)."""
    return round_ownership(stdev) if stdev is not None else [0.0] * size


def raw_values(raw, flip: bool) -> dict:
    """rootInfo's raw network values (an engine RootRawValues) in KataGo's keys."""
    sign = -1.0 if flip else 1.0
    missing = -1.0  # KataGo's value of a head the net does not have

    def head(x):
        return missing if x is None else x
    return {"rawWinrate": round_dynamic(1.0 - raw.winrate if flip else raw.winrate),
            "rawLead": round_dynamic(sign * raw.lead),
            "rawScoreSelfplay": round_dynamic(sign * raw.score_mean),
            "rawScoreSelfplayStdev": round_dynamic(raw.score_stdev),
            "rawNoResultProb": round_dynamic(raw.no_result),
            "rawStWrError": round_dynamic(head(raw.value_error) * 0.5),
            "rawStScoreError": round_dynamic(head(raw.score_error)),
            "rawVarTimeLeft": round_dynamic(head(raw.var_time_left))}


def answer(query: Query, turn: int, color: int, snap, during: bool,
           hashes: tuple[str, str]) -> dict:
    """The answer for one turn: `snap` (an AnalysisSnapshot) of a search with `color` to
    move; `during`: a report while the search goes on; `hashes`: the position's thisHash and
    symHash (kata_analysis/position_hash.py)."""
    flip = flips(query, color)
    sign = -1.0 if flip else 1.0
    searched = [m for m in snap.moves if m.visits > 0]
    infos = [move_info(m, k, query, flip) for k, m in enumerate(searched)]
    root = {
        "visits": snap.root_visits,
        "weight": float(snap.root_visits),
        "winrate": round_dynamic(1.0 - snap.root_winrate if flip else snap.root_winrate),
        "scoreSelfplay": round_dynamic(sign * (snap.root_score_mean or 0.0)),
        "scoreLead": round_dynamic(sign * snap.root_score_lead),
        "scoreStdev": round_dynamic(snap.root_score_stdev or 0.0),
        "utility": round_dynamic(sign * snap.root_utility),
        **(raw_values(snap.root_raw, flip) if snap.root_raw is not None else {}),
        "thisHash": hashes[0],
        "symHash": hashes[1],
        "currentPlayer": "B" if color == BLACK else "W",
    }
    out = {"id": query.id, "isDuringSearch": during, "moveInfos": infos, "rootInfo": root,
           "turnNumber": turn}
    if query.ownership:
        own = snap.ownership
        out["ownership"] = round_ownership(sign * own) if own is not None \
            else [0.0] * (query.width * query.height)
    if query.ownership_stdev:
        out["ownershipStdev"] = stdev_list(snap.ownership_stdev, query.width * query.height)
    if query.policy:
        policy = snap.policy
        out["policy"] = [round_dynamic(p) if p >= 0 else -1 for p in policy.tolist()] \
            if policy is not None else [-1] * (query.width * query.height + 1)
    return out


def no_result(query_id: str, turn: int) -> dict:
    """A turn terminated before any visit (KataGo's answer for it)."""
    return {"id": query_id, "isDuringSearch": False, "noResults": True, "turnNumber": turn}
