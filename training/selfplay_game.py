"""One self-play or teacher game played to its end and recorded as training rows.

One game: the engine's own search (engine.search.driver.Search, or the Gumbel root search of
engine.search.gumbel) plays both sides with one onnxruntime thread; with no network (generation 0)
it searches with random playouts (engine.evaluators.rollout.RolloutEvaluator: UCB1 over playout
results, so its policy targets are visit counts of a real if weak search). Per move it records the
input features (engine.evaluators.features, symmetry 0), the policy target and its weight; at the
end every row gets the outcome z, the final score and the final ownership from the side to move's
view, all by Tromp-Taylor area scoring of the final position (the game's area-scoring rules).

AlphaGo Zero / KataGo ingredients, each a SelfPlaySettings field:
- Dirichlet noise at the root of full searches, alpha = 10.83 / legal moves (KataGo's scaling);
- temperature 1 for the opening moves (30 on 19x19, scaled by board area), then the best move;
- playout cap randomization: a share of moves get full searches (policy_weight 1), the others
  fast ones that only choose the move (policy_weight 0);
- resignation, with a share of games played out to count false resignations; a resigned game
  is finished by fast searches (rows stop at the resignation), so z, score and ownership
  always come from a real final position;
- Gumbel root search with completed-Q policy targets for 8-32 simulations.

Teacher mode: the teacher network plays (or labels the games of `net`) and every row also
carries its raw outputs for the position (teacher_* soft targets). With visits <= 1 there is no
search: the network's raw policy is both the move choice (sampled in the opening) and the
policy target.

Branch rows (teacher mode, `branch_share`): a search spends its visits on positions a move off
the game line, which no game row shows. At that share of the recorded positions one of the
player's other top moves (drawn in proportion to its policy or visits) is played on the side,
the position after it is labelled by the teacher and the move taken back. A branch position has
no game to end it, so its row carries the teacher's outputs as its outcome targets too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.features import FEATURE_SET, NUM_GLOBAL, NUM_SPATIAL, fill_features
from dosaku.engine.evaluators.onnx_evaluator import (
    OnnxEvaluator,
    OnnxModel,
    net_outputs,
    no_result_possible,
    session_options,
)
from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.evaluators.rollout import RolloutEvaluator, area_owner
from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.rulesets import rules_by_name
from dosaku.engine.search.bans import root_only
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import root_moves
from dosaku.engine.search.gumbel import gumbel_search
from dosaku.engine.search.limits import SearchLimits
from dosaku.training.chunks import TEACHER_KEYS, Rows, pack_spatial

MAX_MOVES_PER_POINT = 3  # a game is stopped after 3 x area moves and scored as it stands
REFERENCE_AREA = 361  # move counts in the settings are for 19x19 and scale with the area
_ZERO_SYM = np.zeros(1, np.int64)


def default_komi(size: int) -> float:
    """7 up to 9x9, 7.5 on larger boards (the komi of the project's matches)."""
    return 7.0 if size <= 9 else 7.5


@dataclass(frozen=True)
class SelfPlaySettings:
    """How games are played and what they record (move counts are for 19x19, scaled by area)."""
    visits: int = 100  # full search: root visits (tree reuse included); <= 1: raw policy
    fast_visits: int = 20  # fast searches of playout cap randomization (capped at visits)
    full_search_prob: float = 0.25  # share of moves with a full search (1 = cap randomization off)
    noise_weight: float = 0.25  # Dirichlet noise share in the root prior of full searches
    noise_alpha_scale: float = 10.83  # Dirichlet alpha = this / number of legal moves (KataGo)
    temperature_moves: int = 30  # opening moves chosen with temperature 1, then the best move
    pass_from: float = 0.5  # no pass before this share of the board's points in moves, while
    # another move is legal (early random nets otherwise end games by passing around move 18)
    resign_threshold: float = 0.05  # resign when the mover's winrate stays below this (0 = never)
    resign_consecutive: int = 3  # ... on this many of its own moves in a row
    resign_min_move: int = 40  # ... and never before this move
    resign_playout_share: float = 0.1  # games that never resign, to count false resignations
    gumbel: bool = False  # Gumbel root search and completed-Q targets instead of PUCT visits
    gumbel_k: int = 16  # root moves sampled by Gumbel-top-k
    gumbel_simulations: int = 16  # simulations of a full Gumbel search (fast: fast_visits)
    komi: float | None = None  # None: 7 up to 9x9, 7.5 on larger boards
    rules: str = "chinese"  # an area-scoring rules preset of engine.rules.rulesets
    batch_size: int = 4  # leaves per evaluator call in PUCT searches (Gumbel uses 1)
    branch_share: float = 0.0  # teacher mode: share of positions that also give a branch row
    branch_top: int = 8  # ... its move drawn from the player's top moves other than the one played

    def __post_init__(self):
        rules = rules_by_name(self.rules)
        if rules.scoring != "area" or rules.tax != "none":
            raise ValueError(f"self-play needs area scoring without tax, not {self.rules!r}")
        if not all(0.0 <= share <= 1.0 for share in (
                self.full_search_prob, self.resign_playout_share, self.branch_share)):
            raise ValueError("full_search_prob, resign_playout_share and branch_share are "
                             "shares in [0, 1]")
        if self.branch_top < 1:
            raise ValueError("branch_top must be at least 1")

    def komi_for(self, size: int) -> float:
        return self.komi if self.komi is not None else default_komi(size)

    def budget(self, full: bool) -> int:
        """Visits (PUCT) or simulations (Gumbel) of a full or a fast search."""
        top = self.gumbel_simulations if self.gumbel else self.visits
        return top if full else min(self.fast_visits, top)


@dataclass
class GameResult:
    """One finished game: its rows and how it went."""
    size: int
    rows: Rows  # one per move up to the end or a resignation, in move order
    moves: list[tuple[int, int]]  # (colour, point) of every move played
    black_score: float  # Black minus White, komi included, of the final position
    resigned: int  # colour that resigned (0: none); the game was then finished unrecorded
    would_resign: int  # in a game without resignation, the first colour that would have
    seconds: float  # wall-clock time of the game
    cpu_seconds: float  # CPU time of this process during the game (1 thread: its real cost)
    branch_rows: Rows | None = None  # rows a move off the game line (branch_share), in order

    @property
    def winner(self) -> int:
        return BLACK if self.black_score > 0 else (WHITE if self.black_score < 0 else 0)

    @property
    def false_resign(self) -> bool:
        """The side that would have resigned won after all."""
        return self.would_resign != 0 and self.would_resign == self.winner


@dataclass(frozen=True)
class GameSpec:
    number: int  # game number in the output folder (seeds and sizes follow it)
    size: int
    seed: int


class Players:
    """The networks of one worker: `net` plays (None: the teacher, else random playouts) and
    the teacher labels every row. Paths are ONNX files; one onnxruntime thread each."""

    def __init__(self, net: str | None = None, teacher: str | None = None):
        self.net = _load(net) if net else None
        self.teacher = _load(teacher) if teacher else None

    @property
    def player(self) -> OnnxModel | None:
        return self.net if self.net is not None else self.teacher


def _load(path: str) -> OnnxModel:
    return OnnxModel(path, options=session_options(1, spinning=False))


@dataclass
class _Record:
    """Per-move arrays of a game in progress."""
    spatial: list = field(default_factory=list)
    global_in: list = field(default_factory=list)
    policy: list = field(default_factory=list)
    weight: list = field(default_factory=list)
    to_move: list = field(default_factory=list)
    teacher: dict = field(default_factory=lambda: {k: [] for k in TEACHER_KEYS})

    def add(self, spatial, glob, pi, full: bool, color: int, taught) -> None:
        self.spatial.append(pack_spatial(spatial)[0])
        self.global_in.append(glob[0].copy())
        self.policy.append(pi.astype(np.float32))
        self.weight.append(1.0 if full else 0.0)
        self.to_move.append(color)
        if taught is not None:
            for name, array in zip(TEACHER_KEYS, (taught.policy, taught.wdl, taught.lead,
                                                     taught.ownership)):
                self.teacher[name].append(array[0])


class _Resignation:
    """Who resigns, or in a game without resignation who would have: the first side whose
    winrate stays below the threshold for `resign_consecutive` of its moves, late enough."""

    def __init__(self, settings: SelfPlaySettings, area: int, allowed: bool):
        self.threshold = settings.resign_threshold
        self.consecutive = settings.resign_consecutive
        self.first_move = settings.resign_min_move * area / REFERENCE_AREA
        self.allowed = allowed
        self.low = {BLACK: 0, WHITE: 0}
        self.resigned = 0  # colour
        self.would_resign = 0  # colour

    def update(self, color: int, value: float, move_number: int) -> None:
        """After `color` chose its move with `value` (its view, in [-1, 1])."""
        self.low[color] = self.low[color] + 1 if (value + 1) / 2 < self.threshold else 0
        if self.low[color] >= self.consecutive and move_number >= self.first_move:
            if self.allowed:
                self.resigned = color
            elif not self.would_resign:
                self.would_resign = color


def play_game(players: Players, spec: GameSpec, settings: SelfPlaySettings) -> GameResult:
    """Play one game to the end and return its rows (see the module docstring)."""
    started, cpu_started = time.monotonic(), time.process_time()
    size, seed = spec.size, spec.seed
    rules = rules_by_name(settings.rules)
    komi = settings.komi_for(size)
    area = size * size
    model = players.player
    evaluator = OnnxEvaluator(model, seed=seed) if model is not None else RolloutEvaluator()
    nodes = 4 * max(settings.budget(True), 1) + 256
    search = SearchConfig(batch_size=1 if settings.gumbel else settings.batch_size,
                          max_nodes=nodes, max_edges=nodes * (area + 1))
    engine = Engine(size, size, komi, rules, evaluator,
                    EngineConfig(search=search, report_reuse=False, seed=seed),
                    log=lambda msg: None)
    game = engine.game
    rng = np.random.default_rng(seed)
    resign = _Resignation(settings, area, settings.resign_threshold > 0
                          and rng.random() >= settings.resign_playout_share)
    opening = round(settings.temperature_moves * area / REFERENCE_AREA)
    first_pass = round(settings.pass_from * area)
    spatial = np.zeros((1, NUM_SPATIAL, size, size), np.float32)
    glob = np.zeros((1, NUM_GLOBAL), np.float32)
    rec, branches = _Record(), _Record()
    while not game.is_over() and len(game.moves) < MAX_MOVES_PER_POINT * area:
        color = game.to_move
        recording = not resign.resigned  # after a resignation: fast searches to the end
        batch = position_batch(game)
        taught = None
        if recording:
            taught = _fill_row(game, batch, spatial, glob, players.teacher)
        full = recording and (settings.budget(True) <= 1
                              or rng.random() < settings.full_search_prob)
        sample = recording and len(game.moves) < opening
        allowed = _no_pass(area) if len(game.moves) < first_pass else None
        action, pi, value = _search_move(engine, allowed, evaluator, batch, taught, players,
                                         settings, full, sample, rng)
        if recording:
            rec.add(spatial, glob, pi, full, color, taught)
            resign.update(color, value, len(game.moves))
            if taught is not None and settings.branch_share > 0 \
                    and rng.random() < settings.branch_share:
                _add_branch_row(branches, game, players.teacher, pi, action,
                                settings.branch_top, rng, spatial, glob)
        engine.play(color, point_from_action(action, size, size))
    black_score = float(game.score())
    own_black = np.zeros(area)
    area_owner(game.board, own_black)
    return GameResult(size, _rows(rec, size, black_score, own_black), engine.moves,
                      black_score, resign.resigned, resign.would_resign,
                      time.monotonic() - started, time.process_time() - cpu_started,
                      _branch_rows(branches, size) if branches.to_move else None)


def top_board_moves(pi: np.ndarray, top: int, played: int = -1) -> np.ndarray:
    """The `top` board actions with the largest weight in `pi` (policy or visits over all
    actions), best first, leaving out those without weight, pass and `played`."""
    order = np.argsort(-pi[:-1], kind="stable")
    order = order[(order != played) & (pi[order] > 0)]
    return order[:top]


def _add_branch_row(rec: _Record, game, teacher: OnnxModel, pi, played: int, top: int,
                    rng, spatial, glob) -> None:
    """Play one of the player's other top moves (drawn by its weight in `pi`) on the game,
    record the position after it with the teacher's outputs, and take the move back (the game
    is left as it was). spatial and glob are scratch buffers."""
    candidates = top_board_moves(pi, top, played)
    if not len(candidates):
        return
    weights = pi[candidates]
    action = int(rng.choice(candidates, p=weights / weights.sum()))
    if game.play(game.to_move, point_from_action(action, game.width, game.height)) != MOVE_OK:
        return  # pi gives weight to legal moves only; kept as a guard
    try:
        taught = _fill_row(game, position_batch(game), spatial, glob, teacher)
        rec.add(spatial, glob, taught.policy[0], True, game.to_move, taught)
    finally:
        game.undo()


def _fill_row(game, batch, spatial, glob, teacher: OnnxModel | None):
    """Fill a row's features of the game's position (`batch`, symmetry 0) into spatial and
    glob; the teacher's outputs there, or None without a teacher."""
    fill_features(batch, spatial, glob, _ZERO_SYM)
    if teacher is None:
        return None
    raw = teacher.run(spatial, glob)
    return net_outputs(raw, batch.legal[:1], teacher, no_result_possible(batch.rules))


def _no_pass(area: int) -> np.ndarray:
    """The root moves before `pass_from`: every one but pass (the search still passes when
    nothing else is legal, engine.search.driver.root_moves)."""
    allowed = np.ones(area + 1, np.bool_)
    allowed[-1] = False
    return allowed


def _search_move(engine, allowed, evaluator, batch, taught, players, settings, full, sample, rng):
    """(action, policy target over all actions, mover's value in [-1, 1]) of one move in the
    engine's game, among the root moves `allowed` leaves (None: all)."""
    visits = settings.budget(full)
    game = engine.game
    if visits <= 1:
        return _raw_policy_move(evaluator, batch, taught if players.net is None else None,
                                root_moves(game.legal_mask(engine.to_move), allowed), sample,
                                rng)
    if settings.gumbel:
        res = gumbel_search(engine.search, game, engine.to_move, settings.gumbel_k, visits, rng,
                            allowed)
        return res.action, res.policy, res.value
    return _puct_move(engine, allowed, visits, settings.noise_weight if full else 0.0,
                      settings.noise_alpha_scale, sample, rng)


def _raw_policy_move(evaluator, batch, taught, legal, sample, rng):
    """No search: the player's policy (the teacher's outputs when it is the player), over the
    moves `legal` allows."""
    if taught is not None:
        policy = taught.policy[0].astype(np.float64)
        value = float(taught.wdl[0, 0] - taught.wdl[0, 1])
    else:
        batch.seed = int(rng.integers(1 << 31))  # a fresh random symmetry for this position
        ev = evaluator.evaluate(batch)
        policy, value = np.asarray(ev.policy[0], np.float64), float(ev.value[0])
    policy = np.where(legal, policy, 0.0)
    if policy.sum() <= 0:
        policy = legal.astype(np.float64)
    return _pick(policy, sample, rng), policy / policy.sum(), value


def _puct_move(engine, allowed, visits, noise, alpha_scale, sample, rng):
    """PUCT search of the engine's game among the root moves `allowed` leaves (tree reuse,
    root noise): visit counts are the target; the move is drawn from them (temperature 1) or
    the most visited."""
    engine.search.run(engine.game, engine.to_move, SearchLimits(visits=visits),
                      noise_weight=noise, noise_alpha_scale=alpha_scale,
                      bans=root_only(allowed, engine.to_move))
    stats = engine.search.root_stats()
    counts = stats.visits.astype(np.float64)
    pi = np.zeros(engine.size[0] * engine.size[1] + 1)
    if counts.sum() > 0:
        pi[stats.actions] = counts
        j = int(np.argmax(counts + 1e-6 * stats.value)) if not sample else \
            int(np.flatnonzero(stats.actions == _pick(pi, True, rng))[0])
        value = float(stats.value[j])
    else:  # nothing searched below the root (a full tree): fall back on the prior
        pi[stats.actions] = stats.prior
        j = int(np.argmax(stats.prior))
        value = stats.root_value
    return int(stats.actions[j]), pi / pi.sum(), value


def _pick(weights: np.ndarray, sample: bool, rng) -> int:
    """An action drawn in proportion to `weights` (temperature 1), or the largest."""
    if sample:
        return int(rng.choice(len(weights), p=weights / weights.sum()))
    return int(np.argmax(weights))


def _record_rows(rec: _Record, size: int, value, score, ownership) -> Rows:
    """The recorded rows with these outcome targets (value, score, ownership per row)."""
    n = len(rec.to_move)
    teacher = {k: np.array(v, np.float32) for k, v in rec.teacher.items() if v}
    return Rows(size, size, NUM_SPATIAL, FEATURE_SET,
                np.array(rec.spatial, np.uint8).reshape(n, -1),
                np.array(rec.global_in, np.float32).reshape(n, NUM_GLOBAL),
                np.array(rec.policy, np.float32).reshape(n, size * size + 1),
                np.array(rec.weight, np.float32), value, score, ownership, teacher)


def _branch_rows(rec: _Record, size: int) -> Rows:
    """Branch rows: the teacher's outputs are their outcome targets as well (its policy is
    already their policy target)."""
    n = len(rec.to_move)
    return _record_rows(rec, size, np.array(rec.teacher["teacher_value"], np.float32),
                        np.array(rec.teacher["teacher_score"], np.float32),
                        np.array(rec.teacher["teacher_ownership"], np.float32).reshape(n, -1))


def _rows(rec: _Record, size: int, black_score: float, own_black: np.ndarray) -> Rows:
    """The game's rows with z, score and ownership from each row's side to move."""
    sign = np.where(np.array(rec.to_move) == BLACK, 1.0, -1.0)
    margin = sign * black_score
    value = np.zeros((len(sign), 3), np.float32)
    value[:, 0] = np.where(margin > 0, 1.0, np.where(margin == 0, 0.5, 0.0))
    value[:, 1] = np.where(margin < 0, 1.0, np.where(margin == 0, 0.5, 0.0))
    return _record_rows(rec, size, value, margin.astype(np.float32),
                        (sign[:, None] * own_black[None, :]).astype(np.float32))
