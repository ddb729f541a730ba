"""Search and engine settings as frozen dataclasses (one comment per field), and their defaults.

Objects receive these through their constructors; nothing reads a global config. Every default
that depends on other settings (time per move, limits, batch size per evaluator) is resolved
here, so `EngineConfig(visits=100)` from Python means what `--visits 100` means on the command
line. The settings table, launch/settings.py, maps the flags onto these fields. Importing this
module loads nothing heavy (the flag parser reads the choices before GTP answers).
"""

from dataclasses import dataclass, field, fields
from enum import IntEnum, auto

EVALUATOR_KINDS = ("onnx", "rollout", "uniform")  # leaf evaluators launch/factory.py builds
DEFAULT_SECONDS = 1.0  # time per move when nothing else limits a move


class _Index(IntEnum):
    """Members number themselves 0, 1, 2, ... in the order they are written."""

    @staticmethod
    def _generate_next_value_(name, start, count, last_values):
        return count


class FloatParam(_Index):
    """Entries of the float64 parameter vector of the search kernels (engine/search.py).

    SearchConfig.kernel_params fills entry `name` from the SearchConfig field of that name or
    from a per-search value; adding a parameter means adding a member here.
    """
    c_puct = auto()
    c_puct_log = auto()
    c_puct_base = auto()
    fpu_reduction = auto()
    root_fpu_reduction = auto()  # per search: 0 when Dirichlet noise is on
    ucb1_c = auto()
    komi = auto()  # per search: the effective komi (handicap bonus included)
    utility_stdev_prior = auto()
    utility_stdev_prior_weight = auto()
    utility_stdev_scale = auto()
    fpu_parent_weight_pow = auto()
    static_score_utility = auto()
    dynamic_score_utility = auto()
    score_center = auto()  # per search: centre of the dynamic score utility (moves while searching)
    sqrt_area = auto()  # per search: sqrt(W * H), the scale of the score utility


class IntParam(_Index):
    """Entries of the int64 parameter vector of the search kernels (as FloatParam; flags 0/1)."""
    batch_size = auto()
    virtual_loss = auto()
    ucb1 = auto()  # per search: UCB1 selection (configured, or the evaluator has no priors)
    suicide = auto()  # per search: the rules allow suicide
    max_collisions = auto()  # at least 1
    max_depth = auto()  # per search: deepest path recorded (engine.tree.max_depth_for)
    history = auto()  # per search: the evaluator reads history boards
    exact_end = auto()  # per search: two passes are scored as the board stands (the rules
    #                     make dead stones be captured, as Tromp-Taylor's do); else the
    #                     search plays on from it until the dead stones are gone


@dataclass(frozen=True)
class SearchConfig:
    """How the tree search explores and how big it may grow."""
    batch_size: int = 16  # most leaves selected per evaluator call (virtual loss spreads them)
    batch_growth: int = 32  # root visits per leaf in flight: small batches while the tree is
    #                         small (0 = always batch_size leaves)
    # under a visit or playout limit, one leaf in flight per evaluation thread and per this
    # many new playouts the limit allows (KataGo's search threads and minPlayoutsPerThread):
    # each selection sees every result but those of the other threads' leaves, as in
    # KataGo's search; batches of several leaves only on a time limit (0 = no such cap)
    playouts_per_leaf_in_flight: int = 8
    c_puct: float = 1.0  # exploration constant of PUCT: U = c * P * sqrt(N_parent) / (1 + N)
    c_puct_log: float = 0.45  # KataGo-style growth: c += c_puct_log * ln((N + base) / base)
    c_puct_base: float = 500.0  # visit scale of that growth
    static_score_utility: float = 0.1  # weight of the score utility centred on 0 (KataGo's)
    dynamic_score_utility: float = 0.3  # weight of the one centred on the root's expected score
    # KataGo's exploration scaled by the parent's utility spread: c_puct is multiplied by
    # 1 + scale * (stdev / prior - 1), the stdev of the utilities backed up through the parent
    # shrunk toward `prior` with `prior_weight` pseudo-visits (0 scale = plain c_puct)
    utility_stdev_prior: float = 0.40
    utility_stdev_prior_weight: float = 2.0
    utility_stdev_scale: float = 0.85
    fpu_reduction: float = 0.2  # unvisited child value = parent value - this * sqrt(visited mass)
    # ... where the parent value mixes the parent's own evaluation in while few children are
    # visited: weight min(1, visited mass ** this) on the mean (KataGo's; 0 = the mean alone)
    fpu_parent_weight_pow: float = 2.0
    root_fpu_reduction: float = 0.1  # the same at the root (0 when Dirichlet noise is on)
    # KataGo's policy optimism, for nets with an optimistic policy head (KataGo's GTP: 1.0 in
    # the tree, 0.2 at the root, whose prior then comes from an evaluation of its own once it
    # is the root): the share of that head's logits mixed into the policy's (0 = the plain head)
    policy_optimism: float = 0.0
    root_policy_optimism: float = 0.0
    virtual_loss: int = 1  # losses added per in-flight visit so one batch spreads out
    ucb1: bool = False  # UCB1 selection (Q + C sqrt(ln N / n), unvisited first) ignoring priors
    ucb1_c: float = 1.0  # the C of UCB1 (values in [-1, 1])
    max_nodes: int = 200_000  # node capacity of the tree; the search stops when it is full
    max_edges: int = 4_000_000  # edge capacity (one per legal move of an expanded node; ~12 B)
    cache_size: int = 0  # NN result cache entries keyed by position (0 = off); for slow nets
    max_collisions: int = 4  # per batch: give up filling the batch after this many collisions

    @classmethod
    def for_evaluator(cls, kind: str, batch_size: int | None = None) -> "SearchConfig":
        """Defaults for a leaf evaluator kind (EVALUATOR_KINDS): a network evaluates bigger
        batches faster and caches its slow results; playouts want small batches."""
        if kind not in EVALUATOR_KINDS:
            raise ValueError(f"unknown evaluator {kind!r} "
                             f"(choose from {', '.join(EVALUATOR_KINDS)})")
        network = kind == "onnx"
        default_batch = 16 if network else 8
        return cls(batch_size=default_batch if batch_size is None else batch_size,
                   cache_size=16384 if network else 0)

    def kernel_params(self, **per_search) -> tuple[list[float], list[int]]:
        """Values of the kernels' float and int parameter vectors, in FloatParam / IntParam
        order: the field of the same name, or the per-search value given by keyword."""
        unknown = per_search.keys() - FloatParam.__members__.keys() - IntParam.__members__.keys()
        if unknown:
            raise ValueError(f"not kernel parameters: {', '.join(sorted(unknown))}")
        values = {f.name: getattr(self, f.name) for f in fields(self)} | per_search
        values["max_collisions"] = max(values["max_collisions"], 1)
        return ([float(values[p.name]) for p in FloatParam],
                [int(values[p.name]) for p in IntParam])


@dataclass(frozen=True)
class EngineConfig:
    """Limits, move choice, resignation and self-play options of genmove (the flags that set
    them: launch/settings.py)."""
    search: SearchConfig = field(default_factory=SearchConfig)
    visits: int = 0  # stop when the root has this many visits, reused ones included (0 = none)
    playouts: int = 0  # stop after this many new evaluations in this search (0 = none)
    seconds: float | None = None  # time per move when no clock is set; None = DEFAULT_SECONDS
    #                               unless visits or playouts is set, 0 = no time limit
    fallback_visits: int = 800  # visit limit when nothing else limits a move
    early_stop: bool = True  # stop when no other move can overtake the most visited one, where
    #                          the clock keeps the time saved; a visit or playout limit is
    #                          always spent in full (the visits grow the subtree the next
    #                          move reuses and decide the LCB choice)
    max_seconds: float = 600.0  # hard cap per genmove whatever the clock says
    lag_buffer: float = 0.5  # seconds kept back per move for GTP/network lag
    use_lcb: bool = True  # choose the move with the best lower confidence bound, not most visits
    lcb_stdevs: float = 3.0  # width of that bound in standard errors
    lcb_min_visit_prop: float = 0.15  # only moves with this share of the best visits compete
    katago_choice: bool = False  # choose as KataGo does instead (engine/move_choice.py): trim
    #                              visits spent beyond a move's worth, LCB of the utility
    resign_threshold: float = 0.05  # resign if the best winrate stays below this (0 = never)
    resign_consecutive: int = 3  # ... for this many of our moves in a row
    resign_min_move: int = 20  # ... and never before this move number (scaled to board area)
    resign_handicap_moves: int = 20  # extra moves per handicap stone before White may resign
    dirichlet_noise: bool = False  # self-play: mix Dirichlet noise into the root priors
    noise_weight: float = 0.25  # share of the noise in the root priors
    noise_alpha_scale: float = 0.03 * 361  # alpha = this / number of legal moves
    temperature: float = 0.0  # self-play: sample moves with visits^(1/T) (0 = best move)
    temperature_moves: int = 30  # moves played with that temperature, then T -> 0
    tree_reuse: bool = True  # keep the subtree of each move played for the next search
    #                          (off: every search starts fresh, KataGo's clearBotBeforeSearch)
    report_reuse: bool = True  # log reused visits to stderr after tree reuse
    report_moves: bool = True  # log one line per genmove: visits, speed, winrate, lead, PV
    ponder: bool = False  # think on the opponent's time after genmove (the GTP server runs it)
    seed: int = 0  # seed of every random choice (noise, sampling, rollouts, symmetries)

    @property
    def time_per_move(self) -> float:
        """Seconds per move without a clock (0 = no time limit): `seconds` resolved."""
        if self.seconds is None:
            return 0.0 if self.visits or self.playouts else DEFAULT_SECONDS
        return self.seconds

    def move_limits(self, clock_budget: float | None = None) -> tuple[int, int, float]:
        """(visits, playouts, seconds) for one move, 0 = not limited; `clock_budget` is what
        the game clock allows (None without a clock). Something always limits the move."""
        seconds = self.time_per_move if clock_budget is None else clock_budget
        seconds = min(seconds, self.max_seconds)
        visits = self.visits
        if not (visits or self.playouts or seconds):
            visits = self.fallback_visits
        return visits, self.playouts, seconds
