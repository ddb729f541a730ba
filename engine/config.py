"""Search and engine settings as frozen dataclasses (one comment per field).

Objects receive these through their constructors; nothing reads a global config. run_engine.py
maps its flags onto these fields (see the table in `EngineConfig`'s docstring).
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SearchConfig:
    """How the tree search explores and how big it may grow."""
    batch_size: int = 16  # leaves selected per evaluator call (virtual loss spreads them)
    c_puct: float = 1.0  # exploration constant of PUCT: U = c * P * sqrt(N_parent) / (1 + N)
    c_puct_log: float = 0.45  # KataGo-style growth: c += c_puct_log * ln((N + base) / base)
    c_puct_base: float = 500.0  # visit scale of that growth
    fpu_reduction: float = 0.2  # unvisited child value = parent value - this * sqrt(visited mass)
    root_fpu_reduction: float = 0.1  # the same at the root (0 when Dirichlet noise is on)
    virtual_loss: int = 1  # losses added per in-flight visit so one batch spreads out
    ucb1: bool = False  # UCB1 selection (Q + C sqrt(ln N / n), unvisited first) ignoring priors
    ucb1_c: float = 1.0  # the C of UCB1 (values in [-1, 1])
    max_nodes: int = 200_000  # node capacity of the tree; the search stops when it is full
    max_edges: int = 4_000_000  # edge capacity (one per legal move of an expanded node; ~12 B)
    cache_size: int = 0  # NN result cache entries keyed by position (0 = off); for slow nets
    max_collisions: int = 4  # per batch: give up filling the batch after this many collisions


@dataclass(frozen=True)
class EngineConfig:
    """Limits, move choice, resignation and self-play options of genmove.

    run_engine.py flags -> fields: --visits -> visits, --playouts -> playouts, --time -> seconds,
    --batch -> search.batch_size, --seed -> seed, --resign-threshold -> resign_threshold,
    --lcb/--no-lcb -> use_lcb. (--evaluator and --threads choose and configure the evaluator.)
    """
    search: SearchConfig = field(default_factory=SearchConfig)
    visits: int = 0  # stop when the root has this many visits, reused ones included (0 = none)
    playouts: int = 0  # stop after this many new evaluations in this search (0 = none)
    seconds: float = 1.0  # time per move when no clock is set (0 = none)
    fallback_visits: int = 800  # limit used when visits, playouts and seconds are all 0
    early_stop: bool = True  # stop when no other move can overtake the most visited one
    max_seconds: float = 600.0  # hard cap per genmove whatever the clock says
    lag_buffer: float = 0.5  # seconds kept back per move for GTP/network lag
    use_lcb: bool = True  # choose the move with the best lower confidence bound, not most visits
    lcb_stdevs: float = 3.0  # width of that bound in standard errors
    lcb_min_visit_prop: float = 0.15  # only moves with this share of the best visits compete
    resign_threshold: float = 0.05  # resign if the best winrate stays below this (0 = never)
    resign_consecutive: int = 3  # ... for this many of our moves in a row
    resign_min_move: int = 20  # ... and never before this move number (scaled to board area)
    resign_handicap_moves: int = 20  # extra moves per handicap stone before White may resign
    dirichlet_noise: bool = False  # self-play: mix Dirichlet noise into the root priors
    noise_weight: float = 0.25  # share of the noise in the root priors
    noise_alpha_scale: float = 0.03 * 361  # alpha = this / number of legal moves
    temperature: float = 0.0  # self-play: sample moves with visits^(1/T) (0 = best move)
    temperature_moves: int = 30  # moves played with that temperature, then T -> 0
    report_reuse: bool = True  # log reused visits to stderr after tree reuse
    seed: int = 0  # seed of every random choice (noise, sampling, rollouts, symmetries)
