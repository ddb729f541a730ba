"""Dosaku's analysis engine against a recorded exchange with KataGo 1.17.2's own
(tests/data/katago_analysis_exchange.json, tests/record_katago_analysis.py): the same queries,
sent the same way, to the same net (the shipped copy of the g170 b6c96 net KataGo ran), must
get the same answers in kind (results, errors, warnings, echoes, each with the same field),
with KataGo's keys and value types, from the same perspective, in the same orderings. The
numbers are not compared, except for their side of even (who is ahead, from whose view).
"""

import json
from pathlib import Path

import pytest

from tests.analysis_client import AnalysisProc, config_file
from tests.record_katago_analysis import QUERIES

RECORD = Path(__file__).resolve().parent / "data" / "katago_analysis_exchange.json"


def kind(answer: dict) -> tuple:
    """What an answer is, leaving its numbers aside."""
    if "error" in answer:
        return ("error", answer.get("id"), answer.get("field"))
    if "warning" in answer:
        return ("warning", answer.get("id"), answer.get("field"))
    if "action" in answer:
        return ("echo", answer["id"], answer["action"])
    return ("result", answer["id"], answer["turnNumber"])


def type_name(x) -> str:
    """JSON's types, an integer-valued float counted as a number like any float."""
    return {bool: "bool", int: "int", float: "number", str: "str", list: "list",
            dict: "dict"}[type(x)]


def same_types(ours: dict, theirs: dict, keys) -> None:
    for key in keys:
        a, b = type_name(ours[key]), type_name(theirs[key])
        assert a == b or {a, b} == {"int", "number"} and key in ("weight", "edgeWeight",
                                                                 "playSelectionValue"), key


@pytest.fixture(scope="module")
def exchange(tmp_path_factory):
    """Our answers to the recorded queries, beside KataGo's, one query at a time."""
    recorded = json.loads(RECORD.read_text())["exchange"]
    cfg = config_file(tmp_path_factory.mktemp("cfg"), reportAnalysisWinratesAs="BLACK",
                      numAnalysisThreads=2, maxVisits=500)
    proc = AnalysisProc("-model", "dosaku-b6c96-g170", "-config", cfg)
    pairs = []
    try:
        for (name, _, count), record in zip(QUERIES, recorded):
            assert record["name"] == name
            proc.send(record["query"])
            ours = proc.answers(count)
            ours.sort(key=lambda a: (a.get("turnNumber", -1), "error" in a, "warning" in a))
            pairs.append((name, ours, record["answers"]))
        proc.send({"id": "probe", "action": "query_version"})
        assert proc.answer()["id"] == "probe"  # nothing more came for any query
    finally:
        assert proc.close() == 0
    return pairs


def results(exchange):
    for name, ours, theirs in exchange:
        for a, b in zip(ours, theirs):
            if kind(b)[0] == "result":
                yield name, a, b


def test_same_answers_in_kind(exchange):
    for name, ours, theirs in exchange:
        assert [kind(a) for a in ours] == [kind(b) for b in theirs], name


def test_errors_name_the_same_field_and_the_illegal_move(exchange):
    answers = {name: (ours, theirs) for name, ours, theirs in exchange}
    ours, theirs = answers["illegal"]
    assert ours[0]["error"] == theirs[0]["error"] == "Illegal move 1: E5"
    for name in ("not-json", "no-id", "size"):
        assert answers[name][0][0]["error"] and answers[name][1][0]["error"]


def test_echoes_keep_the_query_and_add_katagos_keys(exchange):
    for name, ours, theirs in exchange:
        for a, b in zip(ours, theirs):
            if kind(b)[0] == "echo":
                assert set(a) == set(b), name
                same_types(a, b, set(b))
                if "models" in b:
                    assert set(a["models"][0]) == set(b["models"][0])


def test_results_have_katagos_keys_and_types(exchange):
    checked = 0
    for name, a, b in results(exchange):
        assert set(a) == set(b), name
        assert set(b["rootInfo"]) == set(a["rootInfo"]), name
        same_types(a["rootInfo"], b["rootInfo"], set(a["rootInfo"]))
        for key in ("rawStWrError", "rawStScoreError", "rawVarTimeLeft"):  # no such heads:
            assert a["rootInfo"][key] == b["rootInfo"][key], (name, key)  # the placeholders
        # isSymmetryOf marks moves KataGo copied from a symmetric one instead of searching
        always = set.intersection(*(set(m) for m in b["moveInfos"])) - {"isSymmetryOf"}
        for mine, theirs in zip(a["moveInfos"], b["moveInfos"]):
            assert set(mine) == always, name
            same_types(mine, theirs, always)
        checked += 1
    assert checked == 9


def test_the_same_side_is_ahead_from_each_perspective(exchange):
    won = {name: (a, b) for name, a, b in results(exchange) if name.startswith("won")}
    assert set(won) == {"won-black", "won-white", "won-side"}
    for name, (a, b) in won.items():
        for key in ("winrate", "scoreLead", "scoreSelfplay", "utility", "rawWinrate",
                    "rawLead", "rawScoreSelfplay"):
            even = 0.5 if key.endswith(("winrate", "Winrate")) else 0.0
            assert (a["rootInfo"][key] > even) == (b["rootInfo"][key] > even), (name, key)
        assert (a["moveInfos"][0]["winrate"] > 0.5) == (b["moveInfos"][0]["winrate"] > 0.5)
        assert a["rootInfo"]["currentPlayer"] == b["rootInfo"]["currentPlayer"] == "W"


def test_orderings_lengths_and_illegal_points(exchange):
    for name, a, b in results(exchange):
        for answer in (a, b):
            infos = answer["moveInfos"]
            assert [m["order"] for m in infos] == list(range(len(infos))), name
            assert all(m["pv"][0] == m["move"] for m in infos)
            for m in infos:
                if "pvVisits" in m:
                    assert m["pvVisits"][0] == m["visits"]
                    assert m["pvVisits"] == sorted(m["pvVisits"], reverse=True)
                    assert len(m["pvVisits"]) == len(m["pv"])
        assert a["turnNumber"] == b["turnNumber"]
        assert a["rootInfo"]["currentPlayer"] == b["rootInfo"]["currentPlayer"]
        for key in ("policy", "ownership"):
            if key in b:
                assert len(a[key]) == len(b[key]), name
        if "policy" in b:
            assert [p == -1 for p in a["policy"]] == [p == -1 for p in b["policy"]], name
        if b["moveInfos"] and "ownership" in b["moveInfos"][0]:
            assert all(len(m["ownership"]) == len(b["ownership"]) for m in a["moveInfos"])


def test_avoided_moves_are_left_out_by_both(exchange):
    avoid = {"C4", "D4", "E4"}
    for name, a, b in results(exchange):
        if name == "avoid":
            assert not {m["move"] for m in a["moveInfos"]} & avoid
            assert not {m["move"] for m in b["moveInfos"]} & avoid


def test_positions_share_hashes_where_katagos_do(exchange):
    """The numbers differ from KataGo's; which answers share a thisHash or a symHash does
    not (the same position in two queries, mirror images, the side to move)."""
    roots = [(a["rootInfo"], b["rootInfo"]) for _, a, b in results(exchange)]
    for key in ("thisHash", "symHash"):
        for ours, theirs in roots:
            assert [o[key] == ours[key] for o, _ in roots] == \
                [t[key] == theirs[key] for _, t in roots], key
    assert len({b["thisHash"] for _, b in roots}) > 2  # something to tell apart
