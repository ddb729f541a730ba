"""The GTP command set: one `cmd_<name>` method per command, registered under its GTP name.

`list_commands` and `known_command` read the registry, so they list exactly what exists here.
A method gets the argument words and returns the answer text, or an analysis.Stream for the
streaming commands, or raises GtpError with the failure text. Failure texts (gtp/protocol.py):
the spec's wording (`syntax error` for malformed arguments, `illegal move`, `cannot undo`, ...)
and GNU Go's `invalid color or coordinate` for a colour or vertex that does not parse. A command
that fails changes nothing.
"""

import logging
import time

from engine.constants import BLACK, MAX_SIZE, MIN_SIZE, PASS_POINT, WHITE
from engine.coords import COLUMNS, format_vertex, parse_vertex, point_from_xy, xy_from_point
from engine.handicap import fixed_handicap_points, max_fixed_handicap
from gtp import analysis
from gtp import engine_view as view
from gtp.protocol import (BAD_COLOR_OR_VERTEX, BAD_VERTEX_LIST, BOARD_NOT_EMPTY, CANNOT_LOAD,
                          CANNOT_SAVE, CANNOT_SCORE, CANNOT_UNDO, ILLEGAL_MOVE, INVALID_STATUS,
                          INVALID_STONES, SYNTAX_ERROR, UNACCEPTABLE_SIZE, UNKNOWN_COMMAND,
                          UNKNOWN_RULES, GtpError, color_name, format_float, parse_color,
                          parse_float, parse_int)

log = logging.getLogger(__name__)

NAME = "Dosaku"
VERSION = "0.1.0"  # same as setup.cfg (checked by a test)

# kgs-rules names -> our presets (KataGo maps KGS "chinese" to chinese-kgs too)
KGS_RULES = {"chinese": "chinese-kgs", "aga": "aga", "japanese": "japanese",
             "new_zealand": "new-zealand"}


def command(name: str):
    """Register the decorated method under the GTP command `name`."""
    def mark(fn):
        fn.gtp_name = name
        return fn
    return mark


def _nargs(args: list[str], *allowed: int) -> None:
    if len(args) not in allowed:
        raise GtpError(SYNTAX_ERROR)


class Commands:
    """Every GTP command, run against the Engine held by `loader`."""

    def __init__(self, loader):
        self.loader = loader
        self.quit_requested = False
        self.registry = {}
        for attr in dir(type(self)):
            fn = getattr(type(self), attr)
            if attr.startswith("cmd_") and hasattr(fn, "gtp_name"):
                self.registry[fn.gtp_name] = getattr(self, attr)

    @property
    def engine(self):
        return self.loader.get()

    def execute(self, name: str, args: list[str]):
        """Answer text or analysis.Stream; GtpError on failure."""
        fn = self.registry.get(name)
        if fn is None:
            raise GtpError(UNKNOWN_COMMAND)
        return fn(args)

    # ---- argument helpers ----------------------------------------------------------------
    def _color(self, text: str) -> int:
        color = parse_color(text)
        if color is None:
            raise GtpError(BAD_COLOR_OR_VERTEX)
        return color

    def _vertex(self, text: str) -> int:
        w, h = view.size(self.engine)
        point = parse_vertex(text, w, h)
        if point is None:
            raise GtpError(BAD_COLOR_OR_VERTEX)
        return point

    def _fmt(self, point) -> str:
        if isinstance(point, str):  # "resign"
            return point
        return format_vertex(point, *view.size(self.engine))

    # ---- administration ------------------------------------------------------------------
    @command("protocol_version")
    def cmd_protocol_version(self, args):
        _nargs(args, 0)
        return "2"

    @command("name")
    def cmd_name(self, args):
        _nargs(args, 0)
        return NAME

    @command("version")
    def cmd_version(self, args):
        _nargs(args, 0)
        return VERSION

    @command("known_command")
    def cmd_known_command(self, args):
        _nargs(args, 1)
        return "true" if args[0] in self.registry else "false"

    @command("list_commands")
    def cmd_list_commands(self, args):
        _nargs(args, 0)
        return "\n".join(sorted(self.registry))

    @command("quit")
    def cmd_quit(self, args):
        self.quit_requested = True
        return ""

    # ---- board set-up --------------------------------------------------------------------
    @command("boardsize")
    def cmd_boardsize(self, args):
        """`boardsize N` (or `boardsize W H` as gtp2ogs sends for rectangular boards)."""
        _nargs(args, 1, 2)
        dims = [parse_int(a) for a in args]
        if any(not MIN_SIZE <= d <= MAX_SIZE for d in dims):
            raise GtpError(UNACCEPTABLE_SIZE)
        self.engine.set_size(dims[0], dims[-1])
        return ""

    @command("clear_board")
    def cmd_clear_board(self, args):
        _nargs(args, 0)
        self.engine.clear()
        return ""

    @command("komi")
    def cmd_komi(self, args):
        _nargs(args, 1)
        self.engine.set_komi(parse_float(args[0]))
        return ""

    @command("get_komi")
    def cmd_get_komi(self, args):
        _nargs(args, 0)
        return format_float(view.komi(self.engine))

    @command("fixed_handicap")
    def cmd_fixed_handicap(self, args):
        _nargs(args, 1)
        n = parse_int(args[0])
        w, h = view.size(self.engine)
        if w != h or not 2 <= n <= max_fixed_handicap(w, h):
            raise GtpError(INVALID_STONES)
        return self._place_handicap(fixed_handicap_points(n, w), BOARD_NOT_EMPTY)

    @command("place_free_handicap")
    def cmd_place_free_handicap(self, args):
        _nargs(args, 1)
        n = parse_int(args[0])
        w, h = view.size(self.engine)
        if not 2 <= n:
            raise GtpError(INVALID_STONES)
        return self._place_handicap(free_handicap_points(min(n, w * h - 1), w, h),
                                    BOARD_NOT_EMPTY)

    @command("set_free_handicap")
    def cmd_set_free_handicap(self, args):
        w, h = view.size(self.engine)
        if not view.is_empty(self.engine):
            raise GtpError(BOARD_NOT_EMPTY)
        points = [parse_vertex(a, w, h) for a in args]
        if (not 2 <= len(points) < w * h or None in points or PASS_POINT in points
                or len(set(points)) != len(points)):
            raise GtpError(BAD_VERTEX_LIST)
        self._place_handicap(points, BAD_VERTEX_LIST)
        return ""

    def _place_handicap(self, points: list[int], error: str) -> str:
        if not view.is_empty(self.engine):
            raise GtpError(BOARD_NOT_EMPTY)
        if not self.engine.place_handicap(points):
            raise GtpError(error)
        return " ".join(self._fmt(p) for p in points)

    # ---- moves ---------------------------------------------------------------------------
    @command("play")
    def cmd_play(self, args):
        _nargs(args, 2)
        color = self._color(args[0])
        point = self._vertex(args[1])
        if self.engine.play(color, point) != 0:  # board.MOVE_OK
            raise GtpError(ILLEGAL_MOVE)
        return ""

    @command("genmove")
    def cmd_genmove(self, args):
        _nargs(args, 1)
        color = self._color(args[0])
        return self._fmt(self.engine.genmove(color))

    @command("reg_genmove")
    def cmd_reg_genmove(self, args):
        """The move genmove would choose, without playing it."""
        _nargs(args, 1)
        color = self._color(args[0])
        return self._fmt(self.engine.genmove(color, commit=False))

    @command("undo")
    def cmd_undo(self, args):
        _nargs(args, 0)
        if not self.engine.undo():
            raise GtpError(CANNOT_UNDO)
        return ""

    @command("gg-undo")
    def cmd_gg_undo(self, args):
        """Undo N moves (default 1): all of them or, if there are fewer, none."""
        _nargs(args, 0, 1)
        n = parse_int(args[0]) if args else 1
        if n > len(view.moves(self.engine)):
            raise GtpError(CANNOT_UNDO)
        for _ in range(n):
            self.engine.undo()
        return ""

    # ---- inspection and scoring ----------------------------------------------------------
    @command("showboard")
    def cmd_showboard(self, args):
        _nargs(args, 0)
        e = self.engine
        w, h = view.size(e)
        stones = view.stones(e)
        letters = "   " + " ".join(COLUMNS[:w])
        rows = [letters]
        for y in range(h):
            cells = []
            for x in range(w):
                c = stones.get(point_from_xy(x, y, w))
                cells.append("X" if c == BLACK else "O" if c == WHITE else ".")
            rows.append(f"{h - y:2d} " + " ".join(cells) + f" {h - y}")
        rows.append(letters)
        rows.append(f"Black (X) captured {view.prisoners(e, BLACK)}, "
                    f"White (O) captured {view.prisoners(e, WHITE)}, "
                    f"komi {format_float(view.komi(e))}, {color_name(view.to_move(e))} to move")
        return "\n" + "\n".join(rows)

    @command("final_score")
    def cmd_final_score(self, args):
        _nargs(args, 0)
        from engine.rules import result_string
        try:
            margin = view.score(self.engine, self.engine.dead_stones())
        except Exception:
            log.exception("scoring failed")
            raise GtpError(CANNOT_SCORE) from None
        return result_string(margin)

    @command("final_status_list")
    def cmd_final_status_list(self, args):
        """Stones by status, one chain per line."""
        _nargs(args, 1)
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GtpError(INVALID_STATUS)
        e = self.engine
        dead = set(e.dead_stones())
        if status == "seki":
            chosen = []
        else:
            chosen = sorted(p for p in view.stones(e) if (p in dead) == (status == "dead"))
        chains: dict[int, list[int]] = {}
        for p in chosen:
            chains.setdefault(view.chain_of(e, p), []).append(p)
        return "\n".join(" ".join(self._fmt(p) for p in chain) for chain in chains.values())

    @command("cputime")
    def cmd_cputime(self, args):
        _nargs(args, 0)
        return f"{time.process_time():.3f}"

    # ---- SGF ---------------------------------------------------------------------------------
    @command("loadsgf")
    def cmd_loadsgf(self, args):
        """Load FILE's main line up to before move MOVE (all of it by default)."""
        _nargs(args, 1, 2)
        limit = parse_int(args[1]) - 1 if len(args) == 2 else None
        if limit is not None and limit < 0:
            raise GtpError(SYNTAX_ERROR)
        from sgfmill import sgf
        try:
            with open(args[0], "rb") as fh:
                game = sgf.Sgf_game.from_bytes(fh.read())
            size = game.get_size()
        except (OSError, ValueError) as exc:
            log.warning("loadsgf %s: %s", args[0], exc)
            raise GtpError(CANNOT_LOAD) from None
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise GtpError(CANNOT_LOAD)
        e = self.engine
        before = view.record(e)
        try:
            return color_name(_replay_sgf(e, game, size, limit))
        except (ValueError, KeyError) as exc:
            log.warning("loadsgf %s: %s", args[0], exc)
            view.restore(e, before)
            raise GtpError(CANNOT_LOAD) from None

    @command("printsgf")
    def cmd_printsgf(self, args):
        """The game as SGF in the answer, or written to FILE."""
        _nargs(args, 0, 1)
        text = game_sgf(self.engine)
        if not args:
            return text
        try:
            with open(args[0], "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError as exc:
            log.warning("printsgf %s: %s", args[0], exc)
            raise GtpError(CANNOT_SAVE) from None
        return ""

    # ---- time ----------------------------------------------------------------------------
    @command("time_settings")
    def cmd_time_settings(self, args):
        """MAIN BYO_TIME BYO_STONES; changes the clock only, never the game."""
        _nargs(args, 3)
        main, byo = parse_float(args[0]), parse_float(args[1])
        stones = parse_int(args[2])
        if main < 0 or byo < 0:
            raise GtpError(SYNTAX_ERROR)
        ts = view.time_settings_class()
        if byo > 0 and stones == 0:
            settings = ts()  # no time limit
        elif byo == 0:
            settings = ts(main_time=main)
        else:
            settings = ts(main_time=main, byo_time=byo, byo_stones=stones)
        view.set_time_settings(self.engine, settings)
        return ""

    @command("kgs-time_settings")
    def cmd_kgs_time_settings(self, args):
        """none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN TIME STONES."""
        if not args:
            raise GtpError(SYNTAX_ERROR)
        kind, rest = args[0].lower(), args[1:]
        counts = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if kind not in counts or len(rest) != counts[kind]:
            raise GtpError(SYNTAX_ERROR)
        ts = view.time_settings_class()
        if kind == "none":
            settings = ts()
        else:
            main = parse_float(rest[0])
            if main < 0:
                raise GtpError(SYNTAX_ERROR)
            if kind == "absolute":
                settings = ts(main_time=main)
            else:
                period, count = parse_float(rest[1]), parse_int(rest[2])
                if period <= 0 or count < 1:
                    raise GtpError(SYNTAX_ERROR)
                if kind == "byoyomi":
                    settings = ts(main_time=main, byo_time=period, byo_stones=1,
                                  byo_periods=count)
                else:
                    settings = ts(main_time=main, byo_time=period, byo_stones=count)
        view.set_time_settings(self.engine, settings)
        return ""

    @command("time_left")
    def cmd_time_left(self, args):
        """COLOR SECONDS STONES (under KGS byo-yomi STONES carries the periods left)."""
        _nargs(args, 3)
        color = self._color(args[0])
        seconds = parse_float(args[1])
        stones = parse_int(args[2])
        view.set_time_left(self.engine, color, seconds, stones)
        return ""

    # ---- rules ---------------------------------------------------------------------------
    @command("kgs-rules")
    def cmd_kgs_rules(self, args):
        _nargs(args, 1)
        from engine.rules import rules_by_name
        name = KGS_RULES.get(args[0].lower())
        if name is None:
            raise GtpError(UNKNOWN_RULES)
        self.engine.set_rules(rules_by_name(name))
        return ""

    @command("kata-get-rules")
    def cmd_kata_get_rules(self, args):
        _nargs(args, 0)
        return view.rules(self.engine).to_kata_json()

    @command("kata-set-rules")
    def cmd_kata_set_rules(self, args):
        """A KataGo rules JSON object (keys not given are kept) or a preset name."""
        if not args:
            raise GtpError(SYNTAX_ERROR)
        from engine.rules import rules_by_name, rules_from_kata_json
        text = " ".join(args)
        try:
            if text.startswith("{"):
                rules = rules_from_kata_json(text, view.rules(self.engine))
            else:
                _nargs(args, 1)
                rules = rules_by_name(text)
        except (ValueError, KeyError, TypeError, AttributeError):
            raise GtpError(UNKNOWN_RULES) from None
        self.engine.set_rules(rules)
        return ""

    @command("clear_cache")
    def cmd_clear_cache(self, args):
        _nargs(args, 0)
        self.engine.clear_cache()
        return ""

    # ---- analysis (streaming) ------------------------------------------------------------
    def _request(self, args, kata: bool) -> analysis.Request:
        e = self.engine
        req = analysis.parse_request(args, *view.size(e), kata=kata)
        analysis.resolve_color(req, view.to_move(e))
        return req

    @command("lz-analyze")
    def cmd_lz_analyze(self, args):
        return analysis.analyze_stream(self.engine, self._request(args, False), kata=False)

    @command("kata-analyze")
    def cmd_kata_analyze(self, args):
        return analysis.analyze_stream(self.engine, self._request(args, True), kata=True)

    @command("lz-genmove_analyze")
    def cmd_lz_genmove_analyze(self, args):
        return analysis.genmove_analyze_stream(self.engine, self._request(args, False),
                                               kata=False)

    @command("kata-genmove_analyze")
    def cmd_kata_genmove_analyze(self, args):
        return analysis.genmove_analyze_stream(self.engine, self._request(args, True),
                                               kata=True)


# ---- helpers with no GTP state -------------------------------------------------------------
def free_handicap_points(n: int, width: int, height: int) -> list[int]:
    """Engine-chosen handicap: the fixed layout when there is one, else spread-out points.

    Points beyond the fixed layout are added greedily, each as far as possible from the stones
    already chosen; points off the first two lines (one on small boards) come first.
    """
    if width == height and n <= max_fixed_handicap(width, height):
        return fixed_handicap_points(n, width)
    chosen: list[tuple[int, int]] = []
    if width == height and max_fixed_handicap(width, height):
        base = fixed_handicap_points(max_fixed_handicap(width, height), width)
        chosen = [xy_from_point(p, width) for p in base]
    cells = [(x, y) for y in range(height) for x in range(width)]
    inner = 2 if min(width, height) >= 7 else 1 if min(width, height) >= 3 else 0
    zone = {(x, y): min(x, y, width - 1 - x, height - 1 - y) >= inner for x, y in cells}
    centre = {(x, y): -abs(2 * x - width + 1) - abs(2 * y - height + 1) for x, y in cells}
    far = {c: min(((c[0] - a) ** 2 + (c[1] - b) ** 2 for a, b in chosen), default=10 ** 9)
           for c in cells}
    for c in chosen:
        far.pop(c, None)
    while len(chosen) < n and far:
        best = max(far, key=lambda c: (zone[c], far[c], centre[c]))
        chosen.append(best)
        del far[best]
        for c in far:
            far[c] = min(far[c], (c[0] - best[0]) ** 2 + (c[1] - best[1]) ** 2)
    return [point_from_xy(x, y, width) for x, y in chosen]


def _sgf_point(move, size: int) -> int:
    """Point of an sgfmill (row, col) move with row 0 at the bottom; pass for None."""
    if move is None:
        return PASS_POINT
    row, col = move
    return point_from_xy(col, size - 1 - row, size)


def _replay_sgf(engine, game, size: int, limit: int | None) -> int:
    """Set up `engine` from an sgfmill game; returns the colour to move. ValueError if bad."""
    engine.set_size(size, size)
    root = game.get_root()
    if root.has_property("KM"):
        engine.set_komi(float(root.get("KM")))
    played = 0
    for node in game.get_main_sequence():
        color_text, move = node.get_move()
        if color_text is not None and limit is not None and played >= limit:
            return BLACK if color_text == "b" else WHITE
        ab, aw, ae = node.get_setup_stones()
        if ab or aw or ae:
            _apply_setup(engine, size, ab, aw, ae)
        if color_text is None:
            continue
        color = BLACK if color_text == "b" else WHITE
        if engine.play(color, _sgf_point(move, size)) != 0:
            raise ValueError(f"illegal move {color_text} {move} in the main line")
        played += 1
    if not view.moves(engine) and root.has_property("PL"):
        return BLACK if root.get("PL") == "b" else WHITE
    return view.to_move(engine)


def _apply_setup(engine, size, ab, aw, ae) -> None:
    """AB/AW/AE: black-only stones on an empty board are handicap; otherwise the resulting
    position is rebuilt by playing its stones (no captures can happen: stones only add up)."""
    black = {_sgf_point(m, size) for m in ab}
    white = {_sgf_point(m, size) for m in aw}
    empty = {_sgf_point(m, size) for m in ae}
    if view.is_empty(engine) and not white and len(black) >= 2:
        if not engine.place_handicap(sorted(black)):
            raise ValueError("bad handicap stones")
        return
    position = view.stones(engine)
    for p in empty:
        position.pop(p, None)
    position.update({p: BLACK for p in black})
    position.update({p: WHITE for p in white})
    engine.clear()
    for color in (BLACK, WHITE):
        for p in sorted(q for q, c in position.items() if c == color):
            if engine.play(color, p) != 0:
                raise ValueError("illegal setup position")


def game_sgf(engine) -> str:
    """SGF of the current game: size, komi, rules, handicap stones as AB, then the moves."""
    w, h = view.size(engine)
    size = str(w) if w == h else f"{w}:{h}"

    def coord(point: int) -> str:
        if point == PASS_POINT:
            return ""
        x, y = xy_from_point(point, w)
        return "abcdefghijklmnopqrstuvwxy"[x] + "abcdefghijklmnopqrstuvwxy"[y]

    head = (f"(;GM[1]FF[4]CA[UTF-8]AP[{NAME}:{VERSION}]SZ[{size}]"
            f"KM[{format_float(view.komi(engine))}]RU[{view.rules(engine).name}]")
    hcp = view.handicap_points(engine)
    if hcp:
        head += f"HA[{len(hcp)}]AB" + "".join(f"[{coord(p)}]" for p in hcp)
    lines = [head]
    moves = view.moves(engine)
    for k in range(0, len(moves), 10):
        lines.append("".join(f";{'B' if c == BLACK else 'W'}[{coord(p)}]"
                             for c, p in moves[k:k + 10]))
    lines[-1] += ")"
    return "\n".join(lines)

