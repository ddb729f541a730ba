"""The GTP command set: one `cmd_<name>` method per command, registered under its GTP name.

`list_commands` and `known_command` read the registry, so they list exactly what exists here.
A method gets the argument words and returns the answer text, or an analysis.Stream for the
streaming commands, or raises GtpError with the failure text. Failure texts (gtp/protocol.py):
the spec's wording: `syntax error` for malformed arguments (a missing argument, a colour or
vertex that does not parse or is off the board), `illegal move` for a well-formed move the rules
forbid, `cannot undo`, ... A command that fails changes nothing.
"""

import logging
import threading
import time

from dosaku.engine.rules.constants import BLACK, MAX_SIZE, MIN_SIZE, MOVE_OK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import COLUMNS, format_vertex, parse_vertex, point_from_xy
from dosaku.engine.rules.handicap import fixed_handicap_points, max_fixed_handicap
from dosaku.engine.timecontrol import TimeSettings
from dosaku.gtp import analysis, gogui, params
from dosaku.gtp.protocol import (
    BAD_VERTEX_LIST,
    BOARD_NOT_EMPTY,
    CANNOT_LOAD,
    CANNOT_SAVE,
    CANNOT_SCORE,
    CANNOT_UNDO,
    ILLEGAL_MOVE,
    INVALID_STATUS,
    INVALID_STONES,
    SYNTAX_ERROR,
    UNACCEPTABLE_SIZE,
    UNKNOWN_COMMAND,
    UNKNOWN_RULES,
    GtpError,
    color_name,
    format_float,
    parse_color,
    parse_float,
    parse_int,
)
from dosaku.gtp.sgf_game import game_sgf, replay_sgf

log = logging.getLogger(__name__)

NAME = "Dosaku"
VERSION = "0.1.0"  # same as setup.cfg (checked by a test)

# kgs-rules names -> our presets (KataGo maps KGS "chinese" to chinese-kgs too)
KGS_RULES = {"chinese": "chinese-kgs", "aga": "aga", "japanese": "japanese",
             "new_zealand": "new-zealand"}


NEEDS_NETWORK = "needs a network (--model)"  # failure text of network-only commands
MAX_CLOCK = 1e7  # seconds (16 weeks): time_left beyond this is clamped to it
CHAT_REPLY = (f"{NAME} {VERSION} is a Go program and cannot chat; "
              "it plays and scores, and answers nothing else. Have a good game.")
TIME_KINDS = ("none", "absolute", "byoyomi", "canadian", "fischer", "fischer-capped")


def command(name: str, needs_network: bool = False):
    """Register the decorated method under the GTP command `name`.

    A command that needs a network exists (is listed, known, runs) only for an engine whose
    evaluator is an ONNX network.
    """
    def mark(fn):
        fn.gtp_name = name
        fn.needs_network = needs_network
        return fn
    return mark


def _nargs(args: list[str], *allowed: int) -> None:
    if len(args) not in allowed:
        raise GtpError(SYNTAX_ERROR)


class Commands:
    """Every GTP command, run against the Engine held by `loader`."""

    def __init__(self, loader, net: str | None = None):
        self.loader = loader
        self.net = net  # the network's name, which `name` and `version` report
        self.quit_requested = False
        self.received: float | None = None  # when the command in hand was read (monotonic)
        self.interrupt = threading.Event()  # set by GoGui's `# interrupt` during a command
        self.ponder_now = False  # set by a command after which the engine should ponder
        self.registry = {}
        self._network_only = set()
        for attr in dir(type(self)):
            fn = getattr(type(self), attr)
            if attr.startswith("cmd_") and hasattr(fn, "gtp_name"):
                self.registry[fn.gtp_name] = getattr(self, attr)
                if fn.needs_network:
                    self._network_only.add(fn.gtp_name)

    @property
    def engine(self):
        return self.loader.get()

    def available(self) -> set[str]:
        """The commands this engine has: all, minus network-only ones without a network.

        While the engine is still being built the loader's hint decides, so the admin commands
        answer at once.
        """
        if not self._network_only:
            return set(self.registry)
        network = self.loader.has_network()
        return set(self.registry) - (set() if network else self._network_only)

    def execute(self, name: str, args: list[str], interrupt: threading.Event | None = None,
                received: float | None = None):
        """Answer text or analysis.Stream; GtpError on failure.

        `interrupt` ends a running genmove search early (GoGui's `# interrupt` line, `quit`);
        `received` is the monotonic time the line was read (time_left counts from it).
        """
        self.ponder_now = False
        self.received = received
        self.interrupt = interrupt if interrupt is not None else threading.Event()
        fn = self.registry.get(name)
        if fn is None:
            raise GtpError(UNKNOWN_COMMAND)
        if name in self._network_only and not self.engine.has_network:
            raise GtpError(f"{name} {NEEDS_NETWORK}")
        return fn(args)

    def _genmove(self, color: int, **kwargs):
        """engine.genmove, stoppable by an interrupt; the engine ponders afterwards if it
        is configured to."""
        move = self.engine.genmove(color, stop=self.interrupt, **kwargs)
        self.ponder_now = self.engine.config.ponder and kwargs.get("commit", True)
        return move

    # ---- argument helpers ----------------------------------------------------------------
    def _color(self, text: str) -> int:
        color = parse_color(text)
        if color is None:
            raise GtpError(SYNTAX_ERROR)
        return color

    def _vertex(self, text: str) -> int:
        w, h = self.engine.size
        point = parse_vertex(text, w, h)
        if point is None:
            raise GtpError(SYNTAX_ERROR)
        return point

    def _fmt(self, point) -> str:
        if isinstance(point, str):  # "resign"
            return point
        return format_vertex(point, *self.engine.size)

    # ---- administration ------------------------------------------------------------------
    @command("protocol_version")
    def cmd_protocol_version(self, args):
        _nargs(args, 0)
        return "2"

    @command("name")
    def cmd_name(self, args):
        _nargs(args, 0)
        return NAME if self.net is None else f"{NAME} ({self.net})"

    @command("version")
    def cmd_version(self, args):
        _nargs(args, 0)
        return VERSION if self.net is None else f"{VERSION}+{self.net}"

    @command("known_command")
    def cmd_known_command(self, args):
        _nargs(args, 1)
        return "true" if args[0] in self.available() else "false"

    @command("list_commands")
    def cmd_list_commands(self, args):
        _nargs(args, 0)
        return "\n".join(sorted(self.available()))

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
        return format_float(self.engine.komi)

    @command("fixed_handicap")
    def cmd_fixed_handicap(self, args):
        _nargs(args, 1)
        n = parse_int(args[0])
        w, h = self.engine.size
        if w != h or not 2 <= n <= max_fixed_handicap(w, h):
            raise GtpError(INVALID_STONES)
        return self._place_handicap(fixed_handicap_points(n, w), BOARD_NOT_EMPTY)

    @command("place_free_handicap")
    def cmd_place_free_handicap(self, args):
        _nargs(args, 1)
        n = parse_int(args[0])
        if not 2 <= n:
            raise GtpError(INVALID_STONES)
        return self._place_handicap(self.engine.choose_handicap(n), BOARD_NOT_EMPTY)

    @command("set_free_handicap")
    def cmd_set_free_handicap(self, args):
        w, h = self.engine.size
        if not self.engine.is_empty():
            raise GtpError(BOARD_NOT_EMPTY)
        points = [parse_vertex(a, w, h) for a in args]
        if (not 2 <= len(points) < w * h or None in points or PASS_POINT in points
                or len(set(points)) != len(points)):
            raise GtpError(BAD_VERTEX_LIST)
        self._place_handicap(points, BAD_VERTEX_LIST)
        return ""

    def _place_handicap(self, points: list[int], error: str) -> str:
        if not self.engine.is_empty():
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
        if self.engine.play(color, point) != MOVE_OK:
            raise GtpError(ILLEGAL_MOVE)
        return ""

    @command("genmove")
    def cmd_genmove(self, args):
        _nargs(args, 1)
        color = self._color(args[0])
        return self._fmt(self._genmove(color))

    @command("kgs-genmove_cleanup")
    def cmd_kgs_genmove_cleanup(self, args):
        """genmove that does not pass while opponent stones judged dead remain (KGS sends it
        after a dead-stone dispute under area rules); it may still resign."""
        _nargs(args, 1)
        color = self._color(args[0])
        return self._fmt(self._genmove(color, cleanup=True))

    @command("reg_genmove")
    def cmd_reg_genmove(self, args):
        """The move genmove would choose, without playing it."""
        _nargs(args, 1)
        color = self._color(args[0])
        return self._fmt(self._genmove(color, commit=False))

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
        if n > len(self.engine.moves):
            raise GtpError(CANNOT_UNDO)
        for _ in range(n):
            self.engine.undo()
        return ""

    # ---- inspection and scoring ----------------------------------------------------------
    @command("showboard")
    def cmd_showboard(self, args):
        _nargs(args, 0)
        e = self.engine
        w, h = e.size
        stones = e.stones()
        letters = "   " + " ".join(COLUMNS[:w])
        rows = [letters]
        for y in range(h):
            cells = []
            for x in range(w):
                c = stones.get(point_from_xy(x, y, w))
                cells.append("X" if c == BLACK else "O" if c == WHITE else ".")
            rows.append(f"{h - y:2d} " + " ".join(cells) + f" {h - y}")
        rows.append(letters)
        rows.append(f"Black (X) captured {e.prisoners(BLACK)}, "
                    f"White (O) captured {e.prisoners(WHITE)}, "
                    f"komi {format_float(e.komi)}, {color_name(e.to_move)} to move")
        return "\n" + "\n".join(rows)

    @command("final_score")
    def cmd_final_score(self, args):
        _nargs(args, 0)
        from dosaku.engine.rules.rulesets import result_string
        try:
            margin = self.engine.final_score()
        except Exception:
            log.exception("scoring failed")
            raise GtpError(CANNOT_SCORE) from None
        return result_string(margin)

    @command("final_status_list")
    def cmd_final_status_list(self, args):
        """Stones by status (alive, seki or dead; each stone has one), one chain per line."""
        _nargs(args, 1)
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GtpError(INVALID_STATUS)
        e = self.engine
        dead, seki = set(e.dead_stones()), set(e.seki_stones())
        if status == "alive":
            chosen = sorted(p for p in e.stones() if p not in dead and p not in seki)
        else:
            chosen = sorted(dead if status == "dead" else seki)
        chains: dict[int, list[int]] = {}
        for p in chosen:
            chains.setdefault(e.chain_of(p), []).append(p)
        return "\n".join(" ".join(self._fmt(p) for p in chain) for chain in chains.values())

    # ---- KGS ------------------------------------------------------------------------------
    @command("kgs-game_over")
    def cmd_kgs_game_over(self, args):
        """kgsGtp's notice that the game ended: acknowledged and logged, nothing changes."""
        log.info("kgs-game_over: the game has ended")
        return ""

    @command("kgs-chat")
    def cmd_kgs_chat(self, args):
        """`kgs-chat game|private NAME MESSAGE...`: a fixed reply, whatever arrives."""
        log.info("kgs-chat: %s", " ".join(args)[:200])
        return CHAT_REPLY

    # ---- GoGui analyze commands --------------------------------------------------------
    @command("gogui-analyze_commands")
    def cmd_gogui_analyze_commands(self, args):
        _nargs(args, 0)
        return "\n".join(gogui.ANALYZE_COMMANDS)

    def _optional_color(self, args) -> int:
        _nargs(args, 0, 1)
        return self._color(args[0]) if args else self.engine.to_move

    @command("dosaku-policy")
    def cmd_dosaku_policy(self, args):
        """[COLOR]: the evaluator's prior of every point as a GoGui dboard."""
        color = self._optional_color(args)
        e = self.engine
        return gogui.double_board(e.policy(color)[:-1], *e.size)

    @command("dosaku-ownership")
    def cmd_dosaku_ownership(self, args):
        """Ownership of every point as a GoGui dboard: +1 Black .. -1 White."""
        _nargs(args, 0)
        e = self.engine
        return gogui.double_board(e.black_ownership(), *e.size, fmt="%.2f")

    @command("dosaku-territory")
    def cmd_dosaku_territory(self, args):
        """Points owned by one side (|ownership| >= gogui.TERRITORY) as a GoGui cboard."""
        _nargs(args, 0)
        e = self.engine
        return gogui.word_board(gogui.territory_words(e.black_ownership(), *e.size), *e.size)

    @command("dosaku-winrates")
    def cmd_dosaku_winrates(self, args):
        """[COLOR]: winrate percent of the searched moves after a genmove-length search as a
        GoGui sboard (nothing is played)."""
        color = self._optional_color(args)
        e = self.engine
        return gogui.word_board(gogui.winrate_words(e.think(color).moves), *e.size)

    @command("dosaku-gfx")
    def cmd_dosaku_gfx(self, args):
        """[COLOR]: a genmove-length search drawn for GoGui (gfx): best line, visits,
        ownership, winrate and score (nothing is played)."""
        color = self._optional_color(args)
        e = self.engine
        snap = e.think(color)
        own = None
        if snap.ownership is not None:
            own = snap.ownership * (1.0 if color == BLACK else -1.0)
        return gogui.search_gfx(snap, color, own, *e.size)

    @command("dosaku-visits")
    def cmd_dosaku_visits(self, args):
        """[COLOR]: `point visits` pairs after a genmove-length search (nothing is played)."""
        color = self._optional_color(args)
        e = self.engine
        return gogui.visit_pairs(e.think(color).moves, *e.size)

    @command("dosaku-pv")
    def cmd_dosaku_pv(self, args):
        """[COLOR]: the principal variation of a genmove-length search, colours written out."""
        color = self._optional_color(args)
        e = self.engine
        moves = e.think(color).moves
        return gogui.variation(moves[0].pv if moves else [], color, *e.size)

    @command("gogui-interrupt")
    def cmd_gogui_interrupt(self, args):
        """Tells GoGui that a `# interrupt` line is understood: it ends a running genmove
        search (the best move so far is played) or analysis."""
        _nargs(args, 0)
        return ""

    # ---- settings ------------------------------------------------------------------------
    @command("kata-get-param")
    def cmd_kata_get_param(self, args):
        """NAME: a setting's value (names as the command-line flags; see gtp/params.py)."""
        _nargs(args, 1)
        return params.get(self.engine.config, args[0])

    @command("kata-set-param")
    def cmd_kata_set_param(self, args):
        """NAME VALUE: change a setting from the next search on."""
        _nargs(args, 2)
        self.engine.set_config(params.set_value(self.engine.config, *args))
        return ""

    @command("dosaku-param")
    def cmd_dosaku_param(self, args):
        """GoGui's param command: without arguments every setting as `[type] key value`
        lines, with `KEY VALUE` a change."""
        _nargs(args, 0, 2)
        if not args:
            return params.gogui_lines(self.engine.config)
        return self.cmd_kata_set_param(args)

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
        before = e.record()
        try:
            return color_name(replay_sgf(e, game, size, limit))
        except (ValueError, KeyError) as exc:
            log.warning("loadsgf %s: %s", args[0], exc)
            e.restore(before)
            raise GtpError(CANNOT_LOAD) from None

    @command("printsgf")
    def cmd_printsgf(self, args):
        """The game as SGF in the answer, or written to FILE."""
        _nargs(args, 0, 1)
        text = game_sgf(self.engine, f"{NAME}:{VERSION}")
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
        if byo > 0 and stones == 0:
            settings = TimeSettings()  # no time limit
        elif byo == 0:
            settings = TimeSettings(main_time=main)
        else:
            settings = TimeSettings(main_time=main, byo_time=byo, byo_stones=stones)
        self.engine.set_time_settings(settings)
        return ""

    @command("kgs-time_settings")
    def cmd_kgs_time_settings(self, args):
        """none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN TIME STONES."""
        self.engine.set_time_settings(time_settings_from(args, TIME_KINDS[:4]))
        return ""

    @command("kata-time_settings")
    def cmd_kata_time_settings(self, args):
        """kgs-time_settings plus `fischer MAIN INCREMENT` and
        `fischer-capped MAIN INCREMENT MAIN_CAP MAX_PER_MOVE` (-1 = no cap)."""
        self.engine.set_time_settings(time_settings_from(args, TIME_KINDS))
        return ""

    @command("kata-list_time_settings")
    def cmd_kata_list_time_settings(self, args):
        _nargs(args, 0)
        return " ".join(TIME_KINDS)

    @command("time_left")
    def cmd_time_left(self, args):
        """COLOR SECONDS STONES (under KGS byo-yomi STONES carries the periods left)."""
        _nargs(args, 3)
        color = self._color(args[0])
        seconds = min(max(parse_float(args[1]), 0.0), MAX_CLOCK)  # late or absurd: clamp
        stones = parse_int(args[2])
        self.engine.set_time_left(color, seconds, stones, self.received)
        return ""

    # ---- rules ---------------------------------------------------------------------------
    @command("kgs-rules")
    def cmd_kgs_rules(self, args):
        _nargs(args, 1)
        from dosaku.engine.rules.rulesets import rules_by_name
        name = KGS_RULES.get(args[0].lower())
        if name is None:
            raise GtpError(UNKNOWN_RULES)
        self.engine.set_rules(rules_by_name(name))
        return ""

    @command("kata-get-rules")
    def cmd_kata_get_rules(self, args):
        _nargs(args, 0)
        return self.engine.rules.to_kata_json()

    @command("kata-set-rules")
    def cmd_kata_set_rules(self, args):
        """A KataGo rules JSON object (keys not given are kept) or a preset name."""
        if not args:
            raise GtpError(SYNTAX_ERROR)
        from dosaku.engine.rules.rulesets import rules_by_name, rules_from_kata_json
        text = " ".join(args)
        try:
            if text.startswith("{"):
                rules = rules_from_kata_json(text, self.engine.rules)
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

    # ---- network -------------------------------------------------------------------------
    @command("kata-raw-nn", needs_network=True)
    def cmd_kata_raw_nn(self, args):
        """SYMMETRY 0-7, or `all`: the 8 evaluations one after the other, as KataGo prints."""
        _nargs(args, 1)
        if args[0].lower() == "all":
            symmetries = list(range(8))
        else:
            symmetries = [parse_int(args[0])]
            if symmetries[0] > 7:
                raise GtpError(SYNTAX_ERROR)
        return "\n".join(format_raw_nn(r) for r in self.engine.raw_nn(symmetries))

    # ---- analysis (streaming) ------------------------------------------------------------
    def _request(self, args, kata: bool) -> analysis.Request:
        e = self.engine
        req = analysis.parse_request(args, *e.size, kata=kata)
        analysis.resolve_color(req, e.to_move)
        return req

    @command("lz-analyze")
    def cmd_lz_analyze(self, args):
        return analysis.analyze_stream(self.engine, self._request(args, False), kata=False)

    @command("kata-analyze")
    def cmd_kata_analyze(self, args):
        return analysis.analyze_stream(self.engine, self._request(args, True), kata=True)

    @command("lz-genmove_analyze")
    def cmd_lz_genmove_analyze(self, args):
        return analysis.genmove_analyze_stream(self._request(args, False), self._genmove,
                                               self.engine.size, kata=False)

    @command("kata-genmove_analyze")
    def cmd_kata_genmove_analyze(self, args):
        return analysis.genmove_analyze_stream(self._request(args, True), self._genmove,
                                               self.engine.size, kata=True)


# ---- helpers with no GTP state -------------------------------------------------------------
def time_settings_from(args: list[str], kinds: tuple[str, ...]) -> TimeSettings:
    """The TimeSettings of a kgs-/kata-time_settings argument list (`kinds` allowed)."""
    counts = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3, "fischer": 2,
              "fischer-capped": 4}
    if not args:
        raise GtpError(SYNTAX_ERROR)
    kind, rest = args[0].lower(), args[1:]
    if kind not in kinds or len(rest) != counts[kind]:
        raise GtpError(SYNTAX_ERROR)
    if kind == "none":
        return TimeSettings()
    main = parse_float(rest[0])
    if main < 0:
        raise GtpError(SYNTAX_ERROR)
    if kind == "absolute":
        return TimeSettings(main_time=main)
    if kind.startswith("fischer"):
        increment = parse_float(rest[1])
        if increment < 0:
            raise GtpError(SYNTAX_ERROR)
        if kind == "fischer":
            return TimeSettings(main_time=main, increment=increment)
        cap, per_move = parse_float(rest[2]), parse_float(rest[3])
        cap, per_move = max(cap, -1.0), max(per_move, -1.0)  # negative: no cap
        if 0 <= cap < main:
            raise GtpError(SYNTAX_ERROR)  # the cap is below the starting clock
        return TimeSettings(main_time=main, increment=increment, main_time_cap=cap,
                            max_per_move=per_move)
    period, count = parse_float(rest[1]), parse_int(rest[2])
    if period <= 0 or count < 1:
        raise GtpError(SYNTAX_ERROR)
    if kind == "byoyomi":
        return TimeSettings(main_time=main, byo_time=period, byo_stones=1, byo_periods=count)
    return TimeSettings(main_time=main, byo_time=period, byo_stones=count)


def format_raw_nn(r) -> str:
    """One engine.evaluators.raw_nn.RawNN in KataGo's kata-raw-nn layout (gtp.cpp rawNN): White's
    view except the policy; NAN for illegal points; rows from the top of the board."""
    def rows(grid, fmt):
        return ["".join("    NAN " if v != v else fmt % v + " " for v in row).rstrip()
                for row in grid]
    lines = [f"symmetry {r.symmetry}",
             f"whiteWin {r.white_win:.6f}", f"whiteLoss {r.white_loss:.6f}",
             f"noResult {r.no_result:.6f}", f"whiteLead {r.white_lead:.3f}",
             f"whiteScoreSelfplay {r.white_score_selfplay:.3f}",
             f"whiteScoreSelfplaySq {r.white_score_selfplay_sq:.3f}",
             f"varTimeLeft {r.var_time_left:.3f}",
             f"shorttermWinlossError {r.shortterm_winloss_error:.3f}",
             f"shorttermScoreError {r.shortterm_score_error:.3f}",
             "policy", *rows(r.policy, "%8.6f"),
             f"policyPass {r.policy_pass:8.6f}",
             "whiteOwnership", *rows(r.white_ownership, "%9.7f")]
    return "\n".join(lines)
