"""One line of KataGo's analysis protocol read into a `Query` (positions to search) or an
`Action`, with KataGo's error and warning answers for whatever is wrong in it.

A query that fails any check yields one `{"id", "field", "error"}` answer and no turn is
searched; fields we read but do not honour fully, and fields we do not know, yield `warning`
answers and the query goes on (KataGo's behaviour). Move legality is checked later, when the
game is replayed (kata_analysis/position.py), before any turn is queued.
"""

import json
import math
import re
from dataclasses import dataclass, field

from dosaku.engine.rules.constants import BLACK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import parse_vertex, point_from_xy
from dosaku.engine.rules.rulesets import PRESETS, Rules, rules_by_name, rules_from_kata_json
from dosaku.engine.search.bans import MoveBan
from dosaku.kata_analysis.settings import KEYS, AnalysisSettings, parse_value

MAX_SIZE = 25  # the engine's largest board
ACTIONS = ("query_version", "clear_cache", "terminate", "terminate_all", "query_models")
QUERY_FIELDS = {"id", "moves", "initialStones", "initialPlayer", "analyzeTurns", "priorities",
                "rules", "komi", "whiteHandicapBonus", "overrideSettings", "maxVisits",
                "analysisPVLen", "rootFpuReductionMax", "rootPolicyTemperature",
                "includeMovesOwnership", "includeMovesOwnershipStdev", "includeOwnership",
                "includeOwnershipStdev", "includePolicy", "includePVVisits",
                "includeNoResultValue", "reportDuringSearchEvery",
                "firstReportDuringSearchAfter", "priority", "allowMoves", "avoidMoves",
                "boardXSize", "boardYSize"}
NOT_HONOURED = {  # fields read but only partly honoured: a warning says how
    "includeNoResultValue": "no-result values are not reported",
    "rootFpuReductionMax": "not supported; ignored",
}
OVERRIDABLE = {"maxVisits", "maxTime", "reportAnalysisWinratesAs", "wideRootNoise",
               "rootPolicyTemperature", "analysisPVLen"}
PRIORITY_LIMIT = 1 << 62
MAX_UNTIL_DEPTH = 1_000_000_000  # KataGo's bound on avoidMoves / allowMoves' untilDepth
COLORS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


class QueryError(Exception):
    """A field that cannot be accepted: answered as KataGo's error for that field."""

    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field = field_name
        self.message = message


@dataclass
class Action:
    """A special action line (query_version, terminate, ...), as sent."""
    id: str
    name: str
    raw: dict
    terminate_id: str | None = None
    turns: list[int] | None = None


@dataclass
class Query:
    """A validated analysis query: the game and what to report for each analysed turn."""
    id: str
    width: int
    height: int
    komi: float
    rules: Rules
    black_stones: list[int]
    white_stones: list[int]
    initial_player: int
    moves: list[tuple[int, int]]
    turns: list[int]
    priorities: list[int]
    max_visits: int
    max_time: float
    perspective: str
    pv_len: int
    wide_root_noise: float
    root_policy_temperature: float
    ownership: bool = False
    ownership_stdev: bool = False
    moves_ownership: bool = False
    moves_ownership_stdev: bool = False
    policy: bool = False
    pv_visits: bool = False
    report_every: float | None = None
    first_report_after: float | None = None
    bans: list[MoveBan] = field(default_factory=list)  # avoidMoves / allowMoves, in order

    @property
    def root_temperature(self) -> float:
        """The temperature the root's priors are raised by: rootPolicyTemperature times the
        flattening KataGo's wideRootNoise applies to the policy (its other half, the random
        bonus to the root children's utilities, is the search's wide_root_noise)."""
        return self.root_policy_temperature * (4.0 * self.wide_root_noise + 1.0)


def parse_line(line: str, defaults: AnalysisSettings, visit_capacity: int):
    """(Query, Action or None; answers): the answers are error or warning dicts to print.
    `visit_capacity`: about the most visits a search tree holds (more draws a warning)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as err:
        return None, [{"error": f"could not parse input line as json request: {err}"}]
    if not isinstance(data, dict):
        return None, [{"error": "request line was valid json but was not an object"}]
    qid = data.get("id")
    if not isinstance(qid, str):
        return None, [{"error": "request must have a string \"id\" field"}]
    try:
        if "action" in data:
            return parse_action(qid, data), []
        warnings = []
        query = parse_query(qid, data, defaults, warnings, visit_capacity)
        return query, [{"id": qid, "field": f, "warning": w} for f, w in warnings]
    except QueryError as err:
        return None, [{"id": qid, "field": err.field, "error": err.message}]


def parse_action(qid: str, data: dict) -> Action:
    name = data["action"]
    if name not in ACTIONS:
        raise QueryError("action", "'action' must be one of " + ", ".join(ACTIONS))
    action = Action(qid, name, data)
    if name == "terminate":
        if not isinstance(data.get("terminateId"), str):
            raise QueryError("terminateId", "terminate needs a string \"terminateId\" field")
        action.terminate_id = data["terminateId"]
    if name in ("terminate", "terminate_all") and "turnNumbers" in data:
        turns = data["turnNumbers"]
        if not isinstance(turns, list) or not all(_is_int(t) for t in turns):
            raise QueryError("turnNumbers", "if provided, must be an array of integers")
        action.turns = turns
    return action


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _integer(data: dict, key: str, low: int, high: int, default=None) -> int:
    if key not in data:
        return default
    x = data[key]
    if not _is_int(x) or not low <= x <= high:
        raise QueryError(key, f"must be an integer from {low} to {high}")
    return x


def _number(data: dict, key: str, low: float, high: float, default=None) -> float:
    if key not in data:
        return default
    x = data[key]
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) \
            or not low <= x <= high:
        raise QueryError(key, f"must be a number from {low} to {high}")
    return float(x)


def _boolean(data: dict, key: str) -> bool:
    x = data.get(key, False)
    if not isinstance(x, bool):
        raise QueryError(key, "must be a boolean")
    return x


def _player(text, key: str) -> int:
    color = COLORS.get(text.lower()) if isinstance(text, str) else None
    if color is None:
        raise QueryError(key, "must be \"B\" or \"W\"")
    return color


def parse_location(text, width: int, height: int, key: str) -> int:
    """A point from a GTP vertex, "pass", or KataGo's "(x,y)" (y = 0 the top row)."""
    if isinstance(text, str):
        m = re.fullmatch(r"\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*", text)
        if m and int(m[1]) < width and int(m[2]) < height:
            return point_from_xy(int(m[1]), int(m[2]), width)
        point = None if m else parse_vertex(text, width, height)
        if point is not None:
            return point
    raise QueryError(key, f"could not parse board location: {text!r}")


def _moves(data: dict, key: str, width: int, height: int) -> list[tuple[int, int]]:
    items = data.get(key, [])
    shape = "must be an array of [\"B\" or \"W\", GTP vertex] pairs"
    if not isinstance(items, list):
        raise QueryError(key, shape)
    out = []
    for item in items:
        if not isinstance(item, list) or len(item) != 2:
            raise QueryError(key, shape)
        out.append((_player(item[0], key), parse_location(item[1], width, height, key)))
    return out


def _rules(data: dict) -> Rules:
    if "rules" not in data:
        raise QueryError("rules", "must give rules: a name such as \"chinese\" or a JSON object")
    spec = data["rules"]
    try:
        if isinstance(spec, str):
            return rules_by_name(spec.strip().replace(" ", "-").replace("_", "-"))
        if isinstance(spec, dict):
            return rules_from_kata_json(json.dumps(spec), PRESETS["tromp-taylor"])
    except (KeyError, ValueError, TypeError):
        pass
    raise QueryError("rules", f"could not parse rules: {json.dumps(spec)[:200]}")


def _bans(data: dict, key: str, width: int, height: int) -> list[MoveBan]:
    """avoidMoves / allowMoves: the points a player may not (or only) play, at every node of
    the search less than untilDepth plies below the root where that player is to move."""
    items = data.get(key, [])
    shape = "must be a list of dicts with subfields 'player', 'moves', 'untilDepth'"
    if not isinstance(items, list):
        raise QueryError(key, shape)
    out: list[MoveBan] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("moves"), list) \
                or not _is_int(item.get("untilDepth")) \
                or not 1 <= item["untilDepth"] <= MAX_UNTIL_DEPTH:
            raise QueryError(key, shape)
        color = _player(item.get("player"), key)
        allow = key == "allowMoves"
        if allow and any(b.color == color for b in out):
            raise QueryError(key, "allowMoves takes at most one entry per player")
        points = frozenset(parse_location(m, width, height, key) for m in item["moves"])
        out.append(MoveBan(color, points, item["untilDepth"], allow))
    return out


def _overrides(data: dict, query: Query, warnings: list) -> None:
    """overrideSettings: the settings a query may change; the rest draw a warning."""
    spec = data.get("overrideSettings", {})
    if not isinstance(spec, dict):
        raise QueryError("overrideSettings", "must be an object")
    unknown = []
    for key, value in spec.items():
        if key not in OVERRIDABLE:
            unknown.append(key)
            continue
        try:
            parsed = parse_value(key, value if isinstance(value, str) else json.dumps(value))
        except ValueError as err:
            raise QueryError("overrideSettings", f"could not set settings: {err}") from None
        setattr(query, KEYS[key][0], parsed)
    if unknown:
        warnings.append(("overrideSettings", "unknown or unsupported config params, ignored: "
                         + ",".join(sorted(unknown))))


def parse_query(qid: str, data: dict, defaults: AnalysisSettings, warnings: list,
                visit_capacity: int) -> Query:
    size_error = f"must provide an integer from 2 to {MAX_SIZE}"
    if "boardXSize" not in data:
        raise QueryError("boardXSize", size_error)
    if "boardYSize" not in data:
        raise QueryError("boardYSize", size_error)
    width = _integer(data, "boardXSize", 2, MAX_SIZE)
    height = _integer(data, "boardYSize", 2, MAX_SIZE)
    if "moves" not in data:
        raise QueryError("moves", "must specify an array of [player, location] pairs")
    moves = _moves(data, "moves", width, height)
    stones = _moves(data, "initialStones", width, height)
    if "initialPlayer" in data:
        initial_player = _player(data["initialPlayer"], "initialPlayer")
    else:
        initial_player = moves[0][0] if moves else BLACK
    if any(p == PASS_POINT for _, p in stones):
        raise QueryError("initialStones", "initial stones cannot be passes")
    turns = data.get("analyzeTurns", [len(moves)])
    if not isinstance(turns, list) or not all(_is_int(t) for t in turns):
        raise QueryError("analyzeTurns", "must specify an array of integers indicating turns")
    for t in turns:
        if not 0 <= t <= len(moves):
            raise QueryError("analyzeTurns", f"invalid turn number: {t}")
    turns = sorted(set(turns))
    priority = _integer(data, "priority", -PRIORITY_LIMIT, PRIORITY_LIMIT, 0)
    priorities = [priority] * len(turns)
    if "priorities" in data:
        if "priority" in data:
            raise QueryError("priority", "cannot specify both priority and priorities")
        given = data["priorities"]
        if "analyzeTurns" not in data:
            raise QueryError("priorities", "can only be given with analyzeTurns")
        if not isinstance(given, list) or len(given) != len(data["analyzeTurns"]) or \
                not all(_is_int(p) and abs(p) <= PRIORITY_LIMIT for p in given):
            raise QueryError("priorities", "must be integers, one per analyzeTurns entry")
        by_turn = dict(zip(data["analyzeTurns"], given))
        priorities = [by_turn[t] for t in turns]
    rules = _rules(data)
    if "whiteHandicapBonus" in data:
        bonus = data["whiteHandicapBonus"]
        if bonus not in ("0", "N", "N-1"):
            raise QueryError("whiteHandicapBonus", "must be \"0\", \"N\" or \"N-1\"")
        rules = Rules(rules.ko, rules.scoring, rules.suicide, rules.tax, bonus,
                      rules.friendly_pass_ok)
    default_komi = 6.5 if rules.scoring == "territory" else 7.5
    komi = _number(data, "komi", -400.0, 400.0, default_komi)
    if komi * 2 != round(komi * 2):
        raise QueryError("komi", "must be an integer or half-integer")
    query = Query(qid, width, height, komi, rules, [p for c, p in stones if c == BLACK],
                  [p for c, p in stones if c == WHITE], initial_player, moves, turns,
                  priorities, defaults.max_visits, defaults.max_time, defaults.perspective,
                  defaults.pv_len, defaults.wide_root_noise, defaults.root_policy_temperature)
    query.max_visits = _integer(data, "maxVisits", 1, 1 << 50, query.max_visits)
    query.pv_len = _integer(data, "analysisPVLen", 1, 1000, query.pv_len)
    query.root_policy_temperature = _number(data, "rootPolicyTemperature", 0.01, 100.0,
                                            query.root_policy_temperature)
    _number(data, "rootFpuReductionMax", 0.0, 2.0)
    for key in ("includeOwnership", "includeOwnershipStdev", "includeMovesOwnership",
                "includeMovesOwnershipStdev", "includePolicy", "includePVVisits",
                "includeNoResultValue"):
        value = _boolean(data, key)
        if value and key in NOT_HONOURED:
            warnings.append((key, NOT_HONOURED[key]))
    query.ownership = _boolean(data, "includeOwnership")
    query.ownership_stdev = _boolean(data, "includeOwnershipStdev")
    query.moves_ownership = _boolean(data, "includeMovesOwnership")
    query.moves_ownership_stdev = _boolean(data, "includeMovesOwnershipStdev")
    query.policy = _boolean(data, "includePolicy")
    query.pv_visits = _boolean(data, "includePVVisits")
    if "rootFpuReductionMax" in data:
        warnings.append(("rootFpuReductionMax", NOT_HONOURED["rootFpuReductionMax"]))
    query.report_every = _number(data, "reportDuringSearchEvery", 0.001, 1e6)
    query.first_report_after = _number(data, "firstReportDuringSearchAfter", 0.001, 1e6,
                                       query.report_every)
    if "avoidMoves" in data and "allowMoves" in data:
        raise QueryError("allowMoves", "cannot specify both allowMoves and avoidMoves")
    query.bans = _bans(data, "avoidMoves" if "avoidMoves" in data else "allowMoves", width,
                       height)
    _overrides(data, query, warnings)
    if query.max_visits > visit_capacity:
        warnings.append(("maxVisits", f"the search stops when its tree is full, at about "
                         f"{visit_capacity} visits"))
    if defaults.warn_unused_fields:
        warnings += [(key, "unexpected or unused field, do you have a typo?")
                     for key in data if key not in QUERY_FIELDS]
    return query
