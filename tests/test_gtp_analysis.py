"""Analysis output formats and streaming through the server loop (pipes, reader thread)."""

import os
import re
import threading

import pytest

from dosaku.engine.engine import Engine
from dosaku.engine.rules.constants import BLACK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.search.analysis_snapshot import AnalysisSnapshot, MoveInfo
from dosaku.engine.search.bans import MoveBan
from dosaku.gtp import analysis
from dosaku.gtp.analysis import Request, format_kata, format_lz, parse_request
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.protocol import GtpError
from dosaku.gtp.server import GtpServer


def pt(v: str) -> int:
    return parse_vertex(v, 19, 19)


SNAP = AnalysisSnapshot(
    moves=[MoveInfo(pt("D4"), 836, 0.46567, 0.08399, 0.46401, 1.25, [pt("D4"), pt("Q16")],
                    score_mean=1.5, score_stdev=11.25),
           MoveInfo(pt("Q16"), 12, 1.0, 0.5, -0.2, -3.0, [], score_mean=-2.0, score_stdev=0.0),
           MoveInfo(pt("C3"), 0, 0.5, 0.01, 0.5)],
    root_visits=848, root_winrate=0.47, root_score_lead=1.0, root_score_mean=1.25,
    root_score_stdev=12.0)


def test_lz_format_integers_truncated_and_clamped():
    line = format_lz(SNAP, Request(), 19, 19)
    assert line == ("info move D4 visits 836 winrate 4656 prior 839 lcb 4640 order 0 pv D4 Q16 "
                    "info move Q16 visits 12 winrate 10000 prior 5000 lcb 0 order 1 pv Q16")


def test_kata_format_floats_always_have_a_point_and_pv_is_last():
    line = format_kata(SNAP, Request(flags={"rootInfo": True}), 19, 19)
    segs = line.split("info ")[1:]
    assert len(segs) == 2
    assert segs[0].strip() == ("move D4 visits 836 winrate 0.46567 scoreMean 1.5 "
                               "scoreStdev 11.25 scoreLead 1.25 prior 0.08399 lcb 0.46401 "
                               "order 0 pv D4 Q16")
    assert segs[1].startswith("move Q16 visits 12 winrate 1.0 scoreMean -2.0 scoreStdev 0.0 "
                              "scoreLead -3.0 prior 0.5 lcb -0.2 order 1 pv Q16 rootInfo ")
    assert line.endswith("rootInfo visits 848 winrate 0.47 scoreMean 1.25 scoreStdev 12.0 "
                         "scoreLead 1.0")
    numbers = re.findall(r"(?:winrate|prior|lcb|score\w+) (\S+)", line)
    assert numbers and all("." in n for n in numbers)


def test_kata_leaves_out_scores_it_does_not_know():
    snap = AnalysisSnapshot([MoveInfo(pt("D4"), 5, 0.5, 0.2, 0.4, -0.5, [pt("D4")])], 5, 0.5, 0.5)
    line = format_kata(snap, Request(flags={"rootInfo": True}), 19, 19)
    assert line == ("info move D4 visits 5 winrate 0.5 scoreLead -0.5 prior 0.2 lcb 0.4 order 0 "
                    "pv D4 rootInfo visits 5 winrate 0.5 scoreLead 0.5")


def test_kata_ownership():
    import numpy as np
    snap = AnalysisSnapshot([], 1, 0.5, 0.0, ownership=np.array([1.0, -0.25, 0.0, 0.5]))
    assert format_kata(snap, Request(flags={"ownership": True}), 2, 2) == \
        "ownership 1.0 -0.25 0.0 0.5"
    assert format_kata(snap, Request(), 2, 2) == ""


def test_minmoves_maxmoves():
    assert format_lz(SNAP, Request(minmoves=3), 19, 19).count("info move") == 3
    assert format_lz(SNAP, Request(maxmoves=1), 19, 19).count("info move") == 1


def test_parse_request():
    req = parse_request(["B", "50"], 19, 19, kata=False)
    assert req.color == BLACK and req.interval == 0.5
    req = parse_request(["25"], 19, 19, kata=False)
    assert req.color is None and req.interval == 0.25
    req = parse_request(["w", "interval", "10", "minmoves", "3", "maxmoves", "5"], 19, 19, False)
    assert (req.color, req.interval, req.minmoves, req.maxmoves) == (WHITE, 0.1, 3, 5)
    req = parse_request(["b", "10", "avoid", "b", "d4,q16,a1:b2", "1", "allow", "w", "c3", "4",
                         "avoid", "b", "pass", "2"], 19, 19, kata=False)
    analysis.resolve_color(req, WHITE)
    assert req.color == BLACK
    assert req.bans == [  # every entry is kept, the other colour's too: it bans deeper down
        MoveBan(BLACK, frozenset(pt(v) for v in ("D4", "Q16", "A1", "A2", "B1", "B2")), 1),
        MoveBan(WHITE, frozenset({pt("C3")}), 4, allow=True),
        MoveBan(BLACK, frozenset({PASS_POINT}), 2)]
    req = parse_request(["b", "10", "rootInfo", "true", "ownership", "true"], 19, 19, kata=True)
    assert req.flags == {"rootInfo": True, "ownership": True}
    for bad, kata in ((["b", "x"], False), (["b", "10", "rootInfo", "true"], False),
                      (["b", "10", "ownership", "yes"], True), (["b", "-5"], False),
                      (["b", "10", "avoid", "b", "zz9", "1"], False), (["b", "interval"], False),
                      (["b", "avoid", "b", "d4", "0"], False),  # KataGo's: depth 1 or more
                      # KataGo's: an allow entry is a colour's only entry
                      (["b", "avoid", "w", "d4", "1", "allow", "w", "c3", "1"], True),
                      (["b", "allow", "w", "d4", "1", "allow", "w", "c3", "1"], True),
                      (["b", "allow", "w", "d4", "1", "avoid", "w", "c3", "1"], True)):
        with pytest.raises(GtpError, match="syntax error"):
            parse_request(bad, 19, 19, kata=kata)


# ---- streaming through the server loop ---------------------------------------------------------
class ScriptedEngine(Engine):
    """A real game record with a scripted search: one more visit per report."""

    def analyze(self, color, on_update, interval, stop, bans=()):
        n = 0
        while True:
            n += 1
            move = MoveInfo(pt("D4") if self.game.width == 19 else 10, n, 0.5, 0.3, 0.45)
            on_update(AnalysisSnapshot([move], n, 0.5, 0.0))
            if stop.wait(interval):
                return

    def genmove(self, color, commit=True, on_update=None, interval=1.0, stop=None):
        for n in range(1, 4):
            if on_update is not None:
                on_update(AnalysisSnapshot([MoveInfo(pt("Q16"), n, 0.6, 0.3, 0.55)], n, 0.6, 0.0))
        self.play(color, pt("Q16"))
        return pt("Q16")


@pytest.fixture
def loop():
    """A server serving a pipe pair in a thread; yields (send, readline)."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    server = GtpServer(Commands(EngineLoader.of(ScriptedEngine(19, 19))))
    infile, outfile = os.fdopen(in_r, "rb"), os.fdopen(out_w, "wb")
    thread = threading.Thread(target=server.serve, args=(infile, outfile), daemon=True)
    thread.start()
    writer = os.fdopen(in_w, "wb", buffering=0)
    reader = os.fdopen(out_r, "rb")

    def send(text: str) -> None:
        writer.write(text.encode())

    def readline() -> str:
        return reader.readline().decode()
    yield send, readline
    send("quit\n")
    thread.join(5)
    assert not thread.is_alive()
    writer.close()
    reader.close()


def test_lz_analyze_streams_until_next_line(loop):
    send, readline = loop
    send("7 lz-analyze b 2\n")
    assert readline() == "=7 \n"
    infos = [readline() for _ in range(4)]
    for k, line in enumerate(infos, start=1):
        assert line == f"info move D4 visits {k} winrate 5000 prior 3000 lcb 4500 order 0 pv D4\n"
    send("8 name\n")  # any line stops the analysis
    rest = []
    while True:
        line = readline()
        if line == "\n":
            break
        rest.append(line)
    assert all(line.startswith("info move D4") for line in rest)
    assert readline() == "=8 Dosaku\n"
    assert readline() == "\n"


def test_bare_newline_stops_kata_analyze(loop):
    send, readline = loop
    send("kata-analyze w 1 rootInfo true\n")
    assert readline() == "= \n"
    first = readline()
    assert first.startswith("info move D4 visits 1 winrate 0.5 scoreLead 0.0 ")
    assert " pv D4 rootInfo visits 1 winrate 0.5" in first
    send("\n")
    while readline() != "\n":
        pass
    send("protocol_version\n")
    assert readline() == "= 2\n"


def test_analysis_syntax_error_is_an_ordinary_failure(loop):
    send, readline = loop
    send("3 lz-analyze b bogus\n")
    assert readline() == "?3 syntax error\n"
    assert readline() == "\n"


def test_genmove_analyze_plays_and_ends_with_play_line(loop):
    send, readline = loop
    send("5 lz-genmove_analyze b 10\n")
    lines = []
    while True:
        line = readline()
        if line == "\n":
            break
        lines.append(line)
    assert lines[0] == "=5 \n"
    assert [ln.split()[4] for ln in lines[1:-1]] == ["1", "2", "3"]  # visits per report
    assert lines[-1] == "play Q16\n"
    send("play b q16\n")
    assert readline() == "? illegal move\n"  # the move was played on the engine's board
    assert readline() == "\n"


def test_handle_line_runs_a_stream_once_without_a_loop():
    server = GtpServer(Commands(EngineLoader.of(ScriptedEngine(19, 19))))
    text = server.handle_line("kata-analyze b 50")
    assert text.startswith("= \ninfo move D4 visits 1 ") and text.endswith(" pv D4\n\n")
    assert text.count("\n\n") == 1
