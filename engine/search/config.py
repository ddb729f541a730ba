"""The search's settings (SearchConfig) and the parameter vectors its numba kernels read.

Frozen and passed through constructors: nothing reads a global config. The engine's settings
(engine/config.py) hold one of these; the settings table (launch/settings.py) maps the flags onto
both. Importing this module loads nothing heavy (the flag parser reads it before GTP answers).
"""

from dataclasses import dataclass, fields
from enum import IntEnum, auto

EVALUATOR_KINDS = ("onnx", "rollout", "uniform")  # leaf evaluators launch/factory.py builds


class _Index(IntEnum):
    """Members number themselves 0, 1, 2, ... in the order they are written."""

    @staticmethod
    def _generate_next_value_(name, start, count, last_values):
        return count


class FloatParam(_Index):
    """Entries of the float64 parameter vector of the search kernels (engine/search/driver.py).

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
    wide_root_noise = auto()  # per search: KataGo's wideRootNoise, a random utility bonus
    #                           for root children in the root player's favour (0: none)
    uncertainty_coeff = auto()  # the weight of an evaluation (engine/search/uncertainty.py)
    uncertainty_exponent = auto()
    uncertainty_max_weight = auto()


class IntParam(_Index):
    """Entries of the int64 parameter vector of the search kernels (as FloatParam; flags 0/1)."""
    batch_size = auto()
    virtual_loss = auto()
    ucb1 = auto()  # per search: UCB1 selection (configured, or the evaluator has no priors)
    suicide = auto()  # per search: the rules allow suicide
    max_collisions = auto()  # at least 1
    max_depth = auto()  # per search: deepest path recorded (engine.search.tree.max_depth_for)
    history = auto()  # per search: the evaluator reads history boards
    exact_end = auto()  # per search: two passes are scored as the board stands (the rules
    #                     make dead stones be captured, as Tromp-Taylor's do); else the
    #                     search plays on from it until the dead stones are gone
    ban_depth = auto()  # per search: the deepest ban of the move-ban table (engine/search/
    #                     bans.py): below the root, nodes this shallow check it (0: none)
    uncertainty = auto()  # per search: uncertainty weighting configured and the evaluator
    #                       reports short-term errors (engine/search/uncertainty.py)


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
    # KataGo's uncertainty-weighted playouts (useUncertainty), for nets with short-term error
    # heads: each evaluation counts in every average and in PUCT's counts with weight
    # coeff / (u ** exponent + coeff / max_weight), u its predicted utility error; a finished
    # game with max_weight. Without the heads, or off, every evaluation weighs 1
    uncertainty: bool = False
    uncertainty_coeff: float = 0.25
    uncertainty_exponent: float = 1.0
    uncertainty_max_weight: float = 8.0
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
