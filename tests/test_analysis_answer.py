"""Answers as KataGo writes them, from a made-up snapshot: the perspective flips, the
rounding, the keys that repeat others, the policy's -1 on illegal points."""

import numpy as np
import pytest

from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.engine.search.analysis_snapshot import AnalysisSnapshot, MoveInfo, RootRawValues
from dosaku.kata_analysis.answer import answer, round_dynamic
from dosaku.kata_analysis.query import Query


def pt(v):
    return parse_vertex(v, 3, 3)


def query(perspective: str, **flags) -> Query:
    return Query("q", 3, 3, 7.5, PRESETS["chinese"], [], [], BLACK, [], [0], [0], 10, 0.0,
                 perspective, 15, 0.0, 1.0, **flags)


SNAP = AnalysisSnapshot(
    moves=[MoveInfo(pt("B2"), 7, 0.75, 0.5, 0.6, 3.25, [pt("B2"), pt("A1")], 2.5, 9.0, 0.4,
                    0.3, [7, 3], np.array([1.0, -0.5, 0, 0, 0, 0, 0, 0, 0.25])),
           MoveInfo(pt("A1"), 2, 0.25, 0.1, 0.1, -1.0, [pt("A1")], -1.5, 8.0, -0.3, -0.9, [2]),
           MoveInfo(pt("C3"), 0, 0.5, 0.01, 0.5)],
    root_visits=10, root_winrate=0.7, root_score_lead=2.0,
    ownership=np.array([0.5, -0.25, 0.1234567, 0, 0, 0, 0, 0, -1.0]), root_score_mean=1.5,
    root_score_stdev=9.5, root_utility=0.35,
    policy=np.array([0.5, -1, 0.25, 0, 0, 0, 0, 0.125, 0.125, 0.0]))

HASHES = ("0123456789ABCDEF0123456789ABCDEF", "00000000000000000000000000000001")


def test_side_to_move_view_is_the_snapshot():
    a = answer(query("SIDETOMOVE", ownership=True, policy=True, pv_visits=True), 4, WHITE,
               SNAP, False, HASHES)
    best = a["moveInfos"][0]
    assert (best["move"], best["winrate"], best["scoreLead"], best["lcb"]) == \
        ("B2", 0.75, 3.25, 0.6)
    assert best["scoreMean"] == best["scoreLead"]  # KataGo's layout: scoreMean is the lead
    assert best["scoreSelfplay"] == 2.5
    assert best["pv"] == ["B2", "A1"] and best["pvVisits"] == [7, 3]
    assert [m["order"] for m in a["moveInfos"]] == [0, 1]  # the unvisited C3 is left out
    assert a["rootInfo"] == {"visits": 10, "weight": 10.0, "winrate": 0.7, "scoreSelfplay": 1.5,
                             "scoreLead": 2.0, "scoreStdev": 9.5, "utility": 0.35,
                             "thisHash": HASHES[0], "symHash": HASHES[1],
                             "currentPlayer": "W"}
    assert a["ownership"][:3] == [0.5, -0.25, 0.123457]
    assert a["policy"] == [0.5, -1, 0.25, 0, 0, 0, 0, 0.125, 0.125, 0.0]
    assert (a["id"], a["turnNumber"], a["isDuringSearch"]) == ("q", 4, False)


@pytest.mark.parametrize("perspective,color,flipped", [
    ("BLACK", BLACK, False), ("BLACK", WHITE, True), ("WHITE", WHITE, False),
    ("WHITE", BLACK, True), ("SIDETOMOVE", WHITE, False), ("SIDETOMOVE", BLACK, False)])
def test_other_sides_view_flips_winrates_scores_utilities_ownership(perspective, color,
                                                                    flipped):
    a = answer(query(perspective, ownership=True, moves_ownership=True), 0, color, SNAP, True,
               HASHES)
    best, root = a["moveInfos"][0], a["rootInfo"]
    sign = -1 if flipped else 1
    assert best["winrate"] == (0.25 if flipped else 0.75)
    assert best["lcb"] == pytest.approx(0.4 if flipped else 0.6)
    assert (best["scoreLead"], best["scoreSelfplay"], best["utility"], best["utilityLcb"]) == \
        (sign * 3.25, sign * 2.5, sign * 0.4, sign * 0.3)
    assert best["scoreStdev"] == 9.0  # a spread has no side
    assert best["ownership"][:2] == [sign * 1.0, sign * -0.5]
    assert root["winrate"] == pytest.approx(0.3 if flipped else 0.7)
    assert (root["scoreLead"], root["utility"]) == (sign * 2.0, sign * 0.35)
    assert a["ownership"][0] == sign * 0.5
    assert root["currentPlayer"] == ("B" if color == BLACK else "W")


def test_rounding_keeps_nine_significant_digits():
    assert round_dynamic(0.123456789123) == 0.123456789
    assert round_dynamic(-45.4328972123) == -45.4328972
    assert round_dynamic(123456789012.7) == 123456789013.0
    assert round_dynamic(0.0) == 0.0


def test_pv_is_cut_to_the_pv_length_after_its_first_move():
    q = query("BLACK", pv_visits=True)
    q.pv_len = 2
    line = [pt(v) for v in ("B2", "A1", "C3", "A3")]
    snap = AnalysisSnapshot([MoveInfo(pt("B2"), 9, 0.5, 0.5, 0.5, 0.0, line,
                                      pv_visits=[9, 5, 2, 1])], 9, 0.5, 0.0)
    best = answer(q, 0, BLACK, snap, False, HASHES)["moveInfos"][0]
    assert best["pv"] == ["B2", "A1", "C3"] and best["pvVisits"] == [9, 5, 2]


RAW = RootRawValues(winrate=0.8, lead=4.25, score_mean=3.5, score_stdev=11.0,
                    no_result=0.001, value_error=0.3, score_error=5.5, var_time_left=12.0)


@pytest.mark.parametrize("perspective,color,flipped", [
    ("BLACK", WHITE, True), ("WHITE", WHITE, False), ("SIDETOMOVE", BLACK, False)])
def test_raw_values_turn_with_the_perspective_and_halve_the_value_error(perspective, color,
                                                                       flipped):
    snap = AnalysisSnapshot([], 10, 0.7, 2.0, root_raw=RAW)
    root = answer(query(perspective), 0, color, snap, False, HASHES)["rootInfo"]
    sign = -1 if flipped else 1
    assert root["rawWinrate"] == pytest.approx(0.2 if flipped else 0.8)
    assert (root["rawLead"], root["rawScoreSelfplay"]) == (sign * 4.25, sign * 3.5)
    # spreads, errors and the no-result chance have no side; KataGo halves the value's
    # error (win - loss in -1..1) into the winrate's
    assert (root["rawScoreSelfplayStdev"], root["rawNoResultProb"], root["rawStWrError"],
            root["rawStScoreError"], root["rawVarTimeLeft"]) == (11.0, 0.001, 0.15, 5.5, 12.0)


def test_a_net_without_error_heads_gets_katagos_placeholders():
    raw = RootRawValues(0.5, 0.0, 0.0, 1.0, 0.0, None, None, None)
    root = answer(query("BLACK"), 0, BLACK, AnalysisSnapshot([], 3, 0.5, 0.0, root_raw=raw),
                  False, HASHES)["rootInfo"]
    assert (root["rawStWrError"], root["rawStScoreError"], root["rawVarTimeLeft"]) == \
        (-0.5, -1.0, -1.0)  # what KataGo 1.17.2 wrote for the g170 b6c96 net


def test_no_raw_values_without_a_network():
    root = answer(query("BLACK"), 0, BLACK, AnalysisSnapshot([], 3, 0.5, 0.0), False,
                  HASHES)["rootInfo"]
    assert not [k for k in root if k.startswith("raw")]


def test_ownership_stdev_is_rounded_and_has_no_side():
    stdev = np.array([0.1234567, 0.5, 0, 0, 0, 0, 0, 0, 0.25])
    snap = AnalysisSnapshot([MoveInfo(pt("B2"), 7, 0.75, 0.5, 0.6, ownership_stdev=stdev / 2),
                             MoveInfo(pt("A1"), 1, 0.5, 0.1, 0.1)], 9, 0.7, 2.0,
                            ownership_stdev=stdev)
    for color in (BLACK, WHITE):
        a = answer(query("BLACK", ownership_stdev=True, moves_ownership_stdev=True), 0, color,
                   snap, False, HASHES)
        assert a["ownershipStdev"] == [0.123457, 0.5, 0, 0, 0, 0, 0, 0, 0.25]
        assert a["moveInfos"][0]["ownershipStdev"][:2] == [0.061728, 0.25]
        assert a["moveInfos"][1]["ownershipStdev"] == [0.0] * 9  # no leaf counted under it
    assert "ownershipStdev" not in answer(query("BLACK"), 0, BLACK, snap, False, HASHES)
