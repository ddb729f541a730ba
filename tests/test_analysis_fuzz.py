"""Thousands of random and malformed lines into one `dosaku analysis` process: every answer
is one JSON object on one line that carries an `id` or an `error`, every query gets its
answers (an error, or one final answer per analysed turn), and the process is alive after."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.analysis_client import HANG, AnalysisProc

VERTICES = [f"{c}{r}" for c in "ABCDEFGHJ" for r in range(1, 10)] + ["pass", "Z9", "(3,4)",
                                                                      "(9,9)", "", "a0"]
KEYS = ["id", "moves", "initialStones", "initialPlayer", "analyzeTurns", "rules", "komi",
        "boardXSize", "boardYSize", "maxVisits", "includeOwnership", "includePolicy",
        "includePVVisits", "includeMovesOwnership", "avoidMoves", "allowMoves", "priority",
        "priorities", "overrideSettings", "reportDuringSearchEvery", "action", "terminateId",
        "turnNumbers", "whiteHandicapBonus", "analysisPVLen", "bogus"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 12), st.sampled_from(
    [10 ** 30, -1, 0.5, 7.5, 1e308]), st.text(max_size=6),
    st.sampled_from(["B", "W", "chinese", "japanese", "tromp-taylor", "query_version",
                     "terminate", "terminate_all", "clear_cache", "query_models", "x"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS + ["player", "moves",
                                                                         "untilDepth"]),
                                                 inner, max_size=3)), max_leaves=8)
moves = st.lists(st.tuples(st.sampled_from(["B", "W", "b", "X"]), st.sampled_from(VERTICES))
                 .map(list), max_size=6)
REQUIRED = {"id", "moves", "rules", "boardXSize", "boardYSize"}
queries = st.fixed_dictionaries(
    {"id": st.one_of(st.text(max_size=4), st.integers()), "moves": moves,
     "rules": st.sampled_from(["chinese", "japanese", "nonsense", {"ko": "SIMPLE"}]),
     "boardXSize": st.sampled_from([9, 9, 9, 1, 26, "9"]),
     "boardYSize": st.sampled_from([9, 9, 9, 0, 30])},
    optional={k: values for k in KEYS if k not in REQUIRED} | {"maxVisits": st.integers(1, 4),
                                          "analyzeTurns": st.lists(st.integers(-1, 7),
                                                                   max_size=3)})
lines = st.one_of(
    queries.map(json.dumps),
    st.dictionaries(st.sampled_from(KEYS), values, max_size=6).map(json.dumps),
    st.text(max_size=40).map(lambda t: t.replace("\n", " ").replace("\r", " ")),
    st.binary(max_size=30).map(lambda b: b.replace(b"\n", b" ").decode("latin-1")),
    queries.map(lambda q: json.dumps(q)[:-3]),  # cut short
)


def test_random_lines_get_json_answers_and_the_engine_survives(tmp_path):
    cfg = tmp_path / "analysis.cfg"
    cfg.write_text("maxVisits = 3\nnumAnalysisThreads = 4\n")
    proc = AnalysisProc("-model", "dosaku-zero-9x9", "-config", str(cfg))
    sent = []

    @settings(max_examples=35, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(lines, min_size=60, max_size=60))
    def send(batch):
        proc.send(*batch)
        sent.extend(batch)

    try:
        send()
        proc.send({"id": "last", "action": "query_version"})
        assert len(sent) >= 2000
        answers = []
        while not answers or answers[-1].get("id") != "last":
            answers.append(proc.answer())
        assert proc.p.poll() is None  # alive
        for a in answers:
            assert "error" in a or isinstance(a.get("id"), str), a
        # once stdin closes every queued turn still gets its final answer, then a clean exit
        assert proc.close() == 0
        while (raw := proc.lines.get(timeout=HANG)) is not None:
            answers.append(json.loads(raw))
            assert "error" in answers[-1] or isinstance(answers[-1].get("id"), str)
        finals = [a for a in answers if a.get("isDuringSearch") is False]
        errors = [a for a in answers if "error" in a]
        assert finals and errors  # both kinds were exercised
        assert not any("internal error" in a.get("error", "") for a in answers)
    finally:
        proc.p.kill()
