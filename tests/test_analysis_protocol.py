"""`dosaku analysis` end to end with the shipped 9x9 net: KataGo's command line, the ready
line, actions, analyzeTurns, perspective, priorities, reports during search, terminate, bad
input, and the end of input."""

import pytest

from tests.analysis_client import AnalysisProc, config_file

GAME = [["B", "E5"], ["W", "C3"], ["B", "C4"], ["W", "D3"], ["B", "G3"]]
BASE = {"rules": "chinese", "komi": 7, "boardXSize": 9, "boardYSize": 9, "maxVisits": 12}
# Black has won: a wall across the board with White to move and nothing on the board
WALL = [["B", f"{c}5"] for c in "ABCDEFGHJ"] + [["B", f"{c}4"] for c in "ABCDEFGHJ"]
COLUMNS = "ABCDEFGHJ"


def index(vertex: str) -> int:
    """Row-major index from the top-left of a 9x9 vertex (KataGo's ownership and policy)."""
    return (9 - int(vertex[1:])) * 9 + COLUMNS.index(vertex[0])


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    cfg = config_file(tmp_path_factory.mktemp("cfg"), numAnalysisThreads=4, logDir="logs",
                      nnCacheSizePowerOfTwo=20, reportAnalysisWinratesAs="BLACK")
    proc = AnalysisProc("-model", "dosaku-zero-9x9", "-config", cfg,
                        "-override-config", "maxVisits=12,homeDataDir=/nowhere", "--seed", "3")
    yield proc
    assert proc.close() == 0


def test_katago_command_line_ready_line_and_unused_keys(engine):
    engine.send({"id": "v", "action": "query_version"})
    assert engine.answer() == {"id": "v", "action": "query_version", "version": "1.17.2",
                               "git_hash": "<omitted>"}
    engine.stderr_text("Started, ready to begin handling requests")  # KataGo's ready line
    unused = [line for line in engine.stderr if "does not use" in line]
    assert len(unused) == 1 and all(k in unused[0] for k in ("logDir", "nnCacheSizePowerOfTwo",
                                                             "homeDataDir"))


def test_actions_are_echoed(engine):
    engine.send({"id": "c", "action": "clear_cache", "extra": 1},
                {"id": "m", "action": "query_models"})
    assert engine.answer() == {"id": "c", "action": "clear_cache", "extra": 1}
    models = engine.answer()
    assert models["id"] == "m" and models["models"][0]["name"] == "dosaku-zero-9x9.onnx"
    assert set(models["models"][0]) == {"name", "internalName", "maxBatchSize",
                                        "usesHumanSLProfile", "version", "usingFP16"}


def test_every_analysed_turn_gets_one_answer(engine):
    engine.send(dict(BASE, id="turns", moves=GAME, analyzeTurns=[0, 2, 5], includePolicy=True,
                     includeOwnership=True, includeMovesOwnership=True, includePVVisits=True))
    answers = {a["turnNumber"]: a for a in engine.answers(3)}
    assert sorted(answers) == [0, 2, 5]
    for turn, a in answers.items():
        assert a["id"] == "turns" and a["isDuringSearch"] is False
        assert a["rootInfo"]["currentPlayer"] == "BW"[turn % 2]
        assert a["rootInfo"]["visits"] >= 12
        infos = a["moveInfos"]
        assert [m["order"] for m in infos] == list(range(len(infos)))
        assert sum(m["visits"] for m in infos) == a["rootInfo"]["visits"] - 1
        for m in infos:
            assert m["pv"][0] == m["move"] and m["pvVisits"][0] == m["visits"]
            assert m["pvVisits"] == sorted(m["pvVisits"], reverse=True)
            assert len(m["ownership"]) == 81
        played = {index(v) for _, v in GAME[:turn]}
        assert len(a["policy"]) == 82 and len(a["ownership"]) == 81
        assert {i for i, p in enumerate(a["policy"]) if p == -1} == played
        assert sum(p for p in a["policy"] if p > 0) == pytest.approx(1.0, abs=1e-5)


def test_ownership_stdev_and_raw_values_of_a_real_search(engine):
    engine.send(dict(BASE, id="spread", moves=GAME, maxVisits=40, includeOwnership=True,
                     includeOwnershipStdev=True, includeMovesOwnershipStdev=True))
    answers = engine.final("spread")
    assert [a for a in answers if "warning" in a] == []  # computed, nothing to warn of
    a = answers[-1]
    stdev = a["ownershipStdev"]
    assert len(stdev) == 81 and min(stdev) >= 0 and max(stdev) > 0.01
    assert len(a["moveInfos"][0]["ownershipStdev"]) == 81
    assert "ownership" not in a["moveInfos"][0]  # not asked for
    root = a["rootInfo"]
    assert 0 < root["rawWinrate"] < 1 and root["rawScoreSelfplayStdev"] > 0
    assert (root["rawStWrError"], root["rawVarTimeLeft"]) == (-0.5, -1.0)  # no such heads
    assert len(root["thisHash"]) == len(root["symHash"]) == 32


def test_winrates_from_the_perspective_asked(engine):
    """White to move in a position Black has won: Black's view high, White's (the side to
    move's) low."""
    seen = {}
    for view in ("BLACK", "WHITE", "SIDETOMOVE"):
        engine.send(dict(BASE, id=view, moves=[], initialStones=WALL, initialPlayer="W",
                         includeOwnership=True,
                         overrideSettings={"reportAnalysisWinratesAs": view}))
        seen[view] = engine.final(view)[-1]
    assert seen["BLACK"]["rootInfo"]["winrate"] > 0.7  # a weak net: not sure how far ahead
    assert seen["BLACK"]["rootInfo"]["scoreLead"] > 5
    assert sum(seen["BLACK"]["ownership"]) > 10  # most of the board is Black's
    for view in ("WHITE", "SIDETOMOVE"):
        root = seen[view]["rootInfo"]
        assert root["winrate"] < 0.3 and root["scoreLead"] < -5
        assert sum(seen[view]["ownership"]) < -10
        assert all(m["winrate"] < 0.5 for m in seen[view]["moveInfos"])


def test_avoided_moves_are_not_searched(engine):
    avoid = ["D4", "D5", "D6", "E4", "E6", "F4", "F5", "F6", "C3", "G7"]
    engine.send(dict(BASE, id="avoid", moves=[["B", "E5"], ["W", "C3"]], maxVisits=30,
                     avoidMoves=[{"player": "B", "moves": avoid, "untilDepth": 1},
                                 {"player": "W", "moves": ["A1"], "untilDepth": 1}]))
    infos = engine.final("avoid")[-1]["moveInfos"]
    assert infos and not {m["move"] for m in infos} & set(avoid)


@pytest.mark.parametrize("line,field,text", [
    ("{not json", None, "could not parse input line as json"),
    ("[1, 2]", None, "was not an object"),
    ('{"moves": []}', None, "string \"id\""),
    ('{"id": 5, "moves": []}', None, "string \"id\""),
    ('{"id": "a", "action": "explode"}', "action", "must be one of"),
    ('{"id": "a", "action": "terminate"}', "terminateId", "terminateId"),
    ('{"id": "a", "moves": [], "rules": "chinese", "boardXSize": 9}', "boardYSize", "from 2 to"),
    ('{"id": "a", "moves": [], "rules": "chinese", "boardXSize": 26, "boardYSize": 9}',
     "boardXSize", "from 2 to 25"),
    ('{"id": "a", "moves": [["B", "E5"], ["W", "E5"]], "rules": "chinese", "boardXSize": 9, '
     '"boardYSize": 9}', "moves", "Illegal move 1: E5"),
    ('{"id": "a", "moves": [["B", "Z9"]], "rules": "chinese", "boardXSize": 9, '
     '"boardYSize": 9}', "moves", "could not parse board location"),
    ('{"id": "a", "moves": [["X", "E5"]], "rules": "chinese", "boardXSize": 9, '
     '"boardYSize": 9}', "moves", "\"B\" or \"W\""),
    ('{"id": "a", "moves": [], "rules": "unheard-of", "boardXSize": 9, "boardYSize": 9}',
     "rules", "could not parse rules"),
    ('{"id": "a", "moves": [], "rules": "chinese", "boardXSize": 9, "boardYSize": 9, '
     '"maxVisits": 0}', "maxVisits", "from 1"),
    ('{"id": "a", "moves": [], "rules": "chinese", "boardXSize": 9, "boardYSize": 9, '
     '"maxVisits": 1e400}', "maxVisits", "from 1"),
    ('{"id": "a", "moves": [], "rules": "chinese", "boardXSize": 9, "boardYSize": 9, '
     '"analyzeTurns": [2]}', "analyzeTurns", "invalid turn number: 2"),
    ('{"id": "a", "moves": [], "rules": "chinese", "boardXSize": 9, "boardYSize": 9, '
     '"komi": 7.3}', "komi", "half-integer"),
    ('{"id": "a", "moves": [], "rules": "chinese", "boardXSize": 9, "boardYSize": 9, '
     '"includePolicy": "yes"}', "includePolicy", "boolean"),
    ('{"id": "a", "moves": [], "rules": "chinese", "boardXSize": 9, "boardYSize": 9, '
     '"initialStones": [["B", "E5"], ["W", "E5"]]}', "initialStones", "not a legal position"),
])
def test_bad_input_gets_one_error_and_nothing_else(engine, line, field, text):
    engine.send(line, {"id": "probe", "action": "query_version"})
    error = engine.answer()
    assert text in error["error"] and error.get("field") == field
    assert engine.answer()["id"] == "probe"  # nothing was searched, nothing else answered


def test_warnings_then_the_analysis(engine):
    engine.send(dict(BASE, id="w", moves=[], maxVisit=5, maxVisits=4, includeNoResultValue=True,
                     overrideSettings={"maxTime": 5, "cpuctExploration": 2}))
    answers = engine.final("w")
    warned = {a["field"] for a in answers if "warning" in a}
    assert warned == {"maxVisit", "includeNoResultValue", "overrideSettings"}
    assert answers[-1]["rootInfo"]["visits"] >= 4


def test_huge_visit_counts_draw_a_warning_and_terminate_still_answers(engine):
    engine.send(dict(BASE, id="long", moves=[], maxVisits=10 ** 12,
                     reportDuringSearchEvery=0.1))
    warning = engine.answer()
    assert warning["field"] == "maxVisits" and "tree is full" in warning["warning"]
    report = engine.answer()
    assert report["id"] == "long" and report["isDuringSearch"] is True
    engine.send({"id": "stop", "action": "terminate", "terminateId": "long"})
    answers = engine.final("long")  # the echo may come before the final answer or after it
    echo = {"id": "stop", "action": "terminate", "terminateId": "long"}
    if echo not in answers:
        assert engine.answer() == echo
    assert 0 < answers[-1]["rootInfo"]["visits"] < 10 ** 12


def test_priorities_order_the_queue_and_terminate_drops_queued_turns(tmp_path):
    """One analysis thread: while a long turn runs, the queue is served by priority, ties
    to the earliest, and a terminated turn that never started is answered at once."""
    cfg = config_file(tmp_path, numAnalysisThreads=1)
    proc = AnalysisProc("--model", "dosaku-zero-9x9", "--config", cfg)
    try:
        proc.send(dict(BASE, id="busy", moves=[], maxVisits=10 ** 5,
                       reportDuringSearchEvery=0.1))
        assert proc.answer()["isDuringSearch"] is True  # busy is running
        proc.send(dict(BASE, id="low", moves=[], priority=-5),
                  dict(BASE, id="mid", moves=GAME, analyzeTurns=[1, 2]),
                  dict(BASE, id="high", moves=[], priority=5),
                  dict(BASE, id="mid2", moves=[]),
                  {"id": "t1", "action": "terminate", "terminateId": "mid", "turnNumbers": [2]})
        answers = []
        while not any(a.get("id") == "t1" for a in answers):
            answers.append(proc.answer())
        assert {"id": "mid", "isDuringSearch": False, "noResults": True,
                "turnNumber": 2} in answers
        proc.send({"id": "t2", "action": "terminate", "terminateId": "busy"})
        finals = []
        while len(finals) < 5:
            a = proc.answer()
            if a.get("isDuringSearch") is False:
                finals.append((a["id"], a["turnNumber"]))
        assert finals == [("busy", 0), ("high", 0), ("mid", 1), ("mid2", 0), ("low", 0)]
    finally:
        proc.p.kill()


def test_end_of_input_finishes_the_queued_turns():
    proc = AnalysisProc("--model", "dosaku-zero-9x9")
    proc.send(dict(BASE, id="last", moves=GAME, analyzeTurns=[3, 4]))
    assert proc.close() == 0
    assert sorted(a["turnNumber"] for a in proc.answers(2)) == [3, 4]
