"""Record KataGo's own analysis engine answering the fixed queries of
tests/data/katago_analysis_exchange.json, which tests/test_analysis_katago_exchange.py compares
Dosaku's answers with (fields, types, perspective, orderings; not the numbers).

Re-record (KataGo 1.17.2 built from a snapshot outside the repository, its analysis config and
the g170 b6c96 net):

    python -m tests.record_katago_analysis /usr/local/bin/katago /work/katago/analysis.cfg \
        ../shared/models/g170-b6c96-s175395328-d26788732.bin.gz

The queries are sent one at a time and all answers to one are collected before the next
(KataGo answers a query's turns in any order; they are stored sorted by turn). Arrays longer
than a board row are kept whole: the test reads their lengths and signs.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "katago_analysis_exchange.json"
GAME = [["B", "E5"], ["W", "C3"], ["B", "C4"], ["W", "D3"], ["B", "G3"], ["W", "E3"]]
BASE = {"rules": "chinese", "komi": 7, "boardXSize": 9, "boardYSize": 9, "maxVisits": 16}
# A position Black has won on a 9x9 board (a wall across the middle of White's side)
WON = [["B", v] for v in ("A5", "B5", "C5", "D5", "E5", "F5", "G5", "H5", "J5", "E4", "E3")]
# (name, the line sent, answers expected before moving on)
QUERIES = [
    ("version", {"id": "v", "action": "query_version"}, 1),
    ("turns", dict(BASE, id="turns", moves=GAME, analyzeTurns=[0, 3, 6], includePolicy=True,
                   includeOwnership=True, includePVVisits=True, includeMovesOwnership=True), 3),
    ("won-black", dict(BASE, id="won-b", moves=[], initialStones=WON, initialPlayer="W",
                       overrideSettings={"reportAnalysisWinratesAs": "BLACK"}), 1),
    ("won-white", dict(BASE, id="won-w", moves=[], initialStones=WON, initialPlayer="W",
                       overrideSettings={"reportAnalysisWinratesAs": "WHITE"}), 1),
    ("won-side", dict(BASE, id="won-s", moves=[], initialStones=WON, initialPlayer="W",
                      overrideSettings={"reportAnalysisWinratesAs": "SIDETOMOVE"}), 1),
    ("avoid", dict(BASE, id="avoid", moves=GAME[:2],
                   avoidMoves=[{"player": "B", "moves": ["C4", "D4", "E4"], "untilDepth": 1}]),
     1),
    ("19x19", dict(BASE, id="big", moves=[["B", "Q16"], ["W", "D4"]], boardXSize=19,
                   boardYSize=19, includePolicy=True), 1),
    ("illegal", dict(BASE, id="bad-move", moves=[["B", "E5"], ["W", "E5"]]), 1),
    ("size", dict(BASE, id="bad-size", moves=[], boardXSize=1), 1),
    ("unknown-field", dict(BASE, id="typo", moves=[], maxVisit=5), 2),
    ("not-json", "{this is not json", 1),
    ("no-id", {"moves": []}, 1),
    ("models", {"id": "m", "action": "query_models"}, 1),
]


def exchange(command: list[str]) -> list[dict]:
    """Send each query to the engine `command` starts; the answers of each, in order."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=tempfile.mkdtemp())
    records = []
    for name, query, count in QUERIES:
        line = query if isinstance(query, str) else json.dumps(query)
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(count)]
        answers.sort(key=lambda a: (a.get("turnNumber", -1), "error" in a, "warning" in a))
        records.append({"name": name, "query": line, "answers": answers})
    proc.stdin.close()
    proc.wait(60)
    return records


def main(katago: str, config: str, model: str) -> None:
    command = [katago, "analysis", "-config", config, "-model", model,
               "-override-config", "logToStderr=false,numAnalysisThreads=2"]
    version = subprocess.run([katago, "version"], capture_output=True, text=True).stdout
    data = {"katago": version.splitlines()[0], "model": Path(model).name,
            "exchange": exchange(command)}
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
