"""Streaming analysis: lz-analyze / kata-analyze and the *-genmove_analyze variants.

An analysis command answers `=` at once, then one `info ...` line per interval built from the
Engine's AnalysisSnapshot callbacks, and ends with the empty line. `*-analyze` runs until the
server sees any new input line (its `stop` event); `*-genmove_analyze` runs until the move is
chosen and prints `play <vertex>` last. Two dialects (docs/gtp.md#analysis-streams): Leela
Zero's with winrate/prior/lcb as integers x10000, KataGo's with floats that always carry a
decimal point; in both `pv` is the last key of each move segment.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from dosaku.engine.rules.constants import PASS_POINT
from dosaku.engine.rules.coords import format_vertex, parse_vertex, point_from_xy, xy_from_point
from dosaku.gtp.protocol import SYNTAX_ERROR, GtpError, parse_color, parse_float, parse_int

if TYPE_CHECKING:  # bans.py brings numpy, which GTP start-up leaves to the loader thread
    from dosaku.engine.search.bans import MoveBan

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 1.0  # seconds between reports when the command names none
MIN_INTERVAL = 0.01  # 1 centisecond, the unit of the interval argument
_KATA_FLAGS = ("rootInfo", "ownership", "ownershipStdev", "movesOwnership",
               "movesOwnershipStdev", "pvVisits", "pvEdgeVisits", "noResultValue")
_SUPPORTED_FLAGS = ("rootInfo", "ownership")


@dataclass
class Request:
    """The arguments of one analysis command."""
    color: int | None = None
    interval: float = DEFAULT_INTERVAL
    minmoves: int = 0
    maxmoves: int | None = None
    flags: dict[str, bool] = field(default_factory=dict)
    bans: list[MoveBan] = field(default_factory=list)  # the avoid / allow entries, in order


@dataclass
class Stream:
    """A streaming answer: `run(emit, stop)` prints body lines with `emit` until done."""
    run: Callable[[Callable[[str], None], threading.Event], None]


def parse_request(args: list[str], width: int, height: int, kata: bool) -> Request:
    """Parse `[color] [interval] [key value]...`; GtpError(syntax error) on anything else."""
    req = Request()
    i = 0
    if i < len(args) and parse_color(args[i]) is not None:
        req.color = parse_color(args[i])
        i += 1
    while i < len(args):
        key = args[i]
        if key[0].isdigit():
            req.interval = _interval(key)
            i += 1
            continue
        if key in ("avoid", "allow"):
            if i + 3 >= len(args):
                raise GtpError(SYNTAX_ERROR)
            req.bans.append(_ban(key, args[i + 1:i + 4], req.bans, width, height))
            i += 4
            continue
        if i + 1 >= len(args):
            raise GtpError(SYNTAX_ERROR)
        value = args[i + 1]
        if key == "interval":
            req.interval = _interval(value)
        elif key == "minmoves":
            req.minmoves = parse_int(value)
        elif key == "maxmoves":
            req.maxmoves = parse_int(value)
        elif kata and key in _KATA_FLAGS:
            if value not in ("true", "false"):
                raise GtpError(SYNTAX_ERROR)
            req.flags[key] = value == "true"
            if key not in _SUPPORTED_FLAGS and value == "true":
                log.warning("%s is not supported; ignored", key)
        else:
            raise GtpError(SYNTAX_ERROR)
        i += 2
    return req


def _ban(key: str, args: list[str], earlier: list[MoveBan], width: int,
         height: int) -> MoveBan:
    """`avoid|allow COLOR VERTICES UNTILDEPTH` as a MoveBan; a syntax error, as in KataGo, for
    a depth below 1 and for an allow entry of a colour that has another entry."""
    color = parse_color(args[0])
    until_depth = parse_int(args[2])
    if color is None or until_depth < 1:
        raise GtpError(SYNTAX_ERROR)
    allow = key == "allow"
    if any(b.color == color and (allow or b.allow) for b in earlier):
        raise GtpError(SYNTAX_ERROR)
    from dosaku.engine.search.bans import MoveBan
    return MoveBan(color, frozenset(_vertex_set(args[1], width, height)), until_depth, allow)


def resolve_color(req: Request, default: int) -> None:
    """Fix the analysed colour: the side to move when the command names none."""
    if req.color is None:
        req.color = default


def _interval(text: str) -> float:
    centiseconds = parse_float(text)
    if centiseconds < 0:
        raise GtpError(SYNTAX_ERROR)
    return max(centiseconds / 100.0, MIN_INTERVAL)


def _vertex_set(text: str, width: int, height: int) -> set[int]:
    """Comma-separated vertices or rectangles `a1:c3`."""
    points: set[int] = set()
    for item in text.split(","):
        ends = [parse_vertex(v, width, height) for v in item.split(":")]
        if not 1 <= len(ends) <= 2 or any(p is None for p in ends):
            raise GtpError(SYNTAX_ERROR)
        if len(ends) == 1 or PASS_POINT in ends:
            points.update(ends)
            continue
        (x0, y0), (x1, y1) = (xy_from_point(p, width) for p in ends)
        for y in range(min(y0, y1), max(y0, y1) + 1):
            for x in range(min(x0, x1), max(x0, x1) + 1):
                points.add(point_from_xy(x, y, width))
    return points


# ---- formatting --------------------------------------------------------------------------------
def kata_float(x: float) -> str:
    """A float with at most 6 decimals that always shows a decimal point ("1.0", "-0.61")."""
    s = f"{float(x):.6f}".rstrip("0")
    s = s + "0" if s.endswith(".") else s
    return "0.0" if s == "-0.0" else s


def lz_int(x: float) -> int:
    """A probability as Leela Zero prints it: truncated x10000, clamped to [0, 10000]."""
    return min(10000, max(0, int(x * 10000)))


def shown_moves(snapshot, req: Request) -> list:
    """Candidates to print: searched ones (plus up to minmoves), capped, best first (a snapshot
    holds no root move the bans leave out)."""
    out = []
    for m in snapshot.moves:
        if m.visits <= 0 and len(out) >= req.minmoves:
            continue
        out.append(m)
        if req.maxmoves is not None and len(out) >= req.maxmoves:
            break
    return out


def _pv(m, width: int, height: int) -> str:
    pv = m.pv if m.pv else [m.point]
    return " ".join(format_vertex(p, width, height) for p in pv)


def format_lz(snapshot, req: Request, width: int, height: int) -> str:
    segs = []
    for order, m in enumerate(shown_moves(snapshot, req)):
        segs.append(f"info move {format_vertex(m.point, width, height)} visits {m.visits} "
                    f"winrate {lz_int(m.winrate)} prior {lz_int(m.prior)} lcb {lz_int(m.lcb)} "
                    f"order {order} pv {_pv(m, width, height)}")
    return " ".join(segs)


def _score_fields(mean: float | None, stdev: float | None, lead: float) -> str:
    """scoreMean and scoreStdev (left out when the search does not know them), scoreLead."""
    known = "" if mean is None else f"scoreMean {kata_float(mean)} "
    known += "" if stdev is None else f"scoreStdev {kata_float(stdev)} "
    return known + f"scoreLead {kata_float(lead)}"


def format_kata(snapshot, req: Request, width: int, height: int) -> str:
    """KataGo's keys in its order. No edgeVisits: a tree without transpositions sends every
    visit of a move through its one edge, so the count would only repeat `visits`."""
    segs = []
    for order, m in enumerate(shown_moves(snapshot, req)):
        segs.append(f"info move {format_vertex(m.point, width, height)} visits {m.visits} "
                    f"winrate {kata_float(m.winrate)} "
                    f"{_score_fields(m.score_mean, m.score_stdev, m.score_lead)} "
                    f"prior {kata_float(m.prior)} lcb {kata_float(m.lcb)} "
                    f"order {order} pv {_pv(m, width, height)}")
    if req.flags.get("rootInfo"):
        scores = _score_fields(snapshot.root_score_mean, snapshot.root_score_stdev,
                               snapshot.root_score_lead)
        segs.append(f"rootInfo visits {snapshot.root_visits} winrate "
                    f"{kata_float(snapshot.root_winrate)} {scores}")
    if req.flags.get("ownership") and snapshot.ownership is not None:
        segs.append("ownership " + " ".join(kata_float(v) for v in snapshot.ownership.tolist()))
    return " ".join(segs)


# ---- streams -----------------------------------------------------------------------------------
class _Reporter:
    """Turns snapshots into emitted lines; silent once closed (late callbacks are dropped)."""

    def __init__(self, emit, formatter, req, width, height):
        self._emit, self._fmt, self._req = emit, formatter, req
        self._size = (width, height)
        self._lock = threading.Lock()
        self._open = True

    def __call__(self, snapshot) -> None:
        line = self._fmt(snapshot, self._req, *self._size)
        with self._lock:
            if self._open and line:
                self._emit(line)

    def close(self) -> None:
        with self._lock:
            self._open = False


def _stream(size: tuple[int, int], req: Request, kata: bool, search) -> Stream:
    """A Stream running `search(reporter, stop)`; a line it returns is printed last."""
    width, height = size
    formatter = format_kata if kata else format_lz

    def run(emit, stop):
        reporter = _Reporter(emit, formatter, req, width, height)
        try:
            last = search(reporter, stop)
        finally:
            reporter.close()
        if last is not None:
            emit(last)
    return Stream(run)


def analyze_stream(engine, req: Request, kata: bool) -> Stream:
    """`*-analyze`: report until stopped by the next input line."""
    def search(reporter, stop):
        engine.analyze(req.color, reporter, req.interval, stop, bans=tuple(req.bans))
    return _stream(engine.size, req, kata, search)


def genmove_analyze_stream(req: Request, genmove, size: tuple[int, int], kata: bool) -> Stream:
    """`*-genmove_analyze`: report while the move is searched, play it, print `play <v>`.

    `genmove(color, on_update=..., interval=...)` plays the move; new input lines do not stop
    it (as in KataGo), only what stops a genmove does.
    """
    def search(reporter, stop):
        move = genmove(req.color, on_update=reporter, interval=req.interval)
        return "play " + (move if isinstance(move, str) else format_vertex(move, *size))
    return _stream(size, req, kata, search)
