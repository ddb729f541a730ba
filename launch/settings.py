"""Every setting of `dosaku` in one table: its flag, help, default, the range it accepts, the
EngineConfig field it sets, and whether kata-set-param changes it while the engine runs (under
the flag's name or KataGo's). The command line (launch/flags.py), the config file, the flags ->
EngineConfig mapping (launch/factory.py) and the GTP settings (gtp/params.py) are all generated
from it, so a setting is added or changed here alone. Importing it loads nothing heavy.
"""

from dataclasses import dataclass, replace

from dosaku.engine.config import EngineConfig
from dosaku.engine.evaluators.onnx_options import INT8_PRODUCTS, PROVIDERS
from dosaku.engine.search.config import EVALUATOR_KINDS, SearchConfig

OUT_OF_RANGE = "{flag} {value:g} is out of range (see --help)"
BETWEEN = "{flag} must be between {low:g} and {high:g}"
TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def parse_bool(text: str) -> bool:
    """A switch's value in a config file or kata-set-param: true/1/yes/on or false/0/no/off in
    any case; ValueError otherwise."""
    t = text.lower()
    if t in TRUE_WORDS or t in FALSE_WORDS:
        return t in TRUE_WORDS
    raise ValueError(f"not a boolean: {text!r}")


@dataclass(frozen=True)
class Setting:
    """One flag. `field` is the EngineConfig field it sets ("search.<name>" for a SearchConfig
    field); with `live` kata-set-param changes it too. A value outside low..high (high itself
    excluded with `below_high`) is refused with `range_error`."""
    name: str  # flag without its dashes; also the config-file key and the GTP name
    help: str
    kind: type = str  # int, float, str; bool for an on/off switch (--name / --no-name)
    default: object = None
    choices: tuple | None = None
    metavar: str | None = None
    store_true: bool = False  # a bare flag (--precompile) rather than a switch
    low: float | None = None
    high: float | None = None
    below_high: bool = False
    range_error: str = OUT_OF_RANGE
    field: str | None = None
    live: bool = False
    katago: str | None = None  # KataGo's name for it (kata-set-param), lower case
    shown: str | None = None  # EngineConfig property kata-get-param reports instead of `field`

    @property
    def flag(self) -> str:
        return f"--{self.name}"

    @property
    def dest(self) -> str:
        """The attribute argparse stores it under."""
        return self.name.replace("-", "_")

    @property
    def has_range(self) -> bool:
        return self.low is not None or self.high is not None

    def accepts(self, value) -> bool:
        """Whether `value` is in range (NaN never is: every float setting has a lower bound)."""
        if self.low is not None and not self.low <= value:
            return False
        if self.high is not None and not (value < self.high if self.below_high
                                          else value <= self.high):
            return False
        return True

    def range_message(self, value) -> str:
        return self.range_error.format(flag=self.flag, value=value, low=self.low, high=self.high)

    def read(self, config: EngineConfig):
        """The value in effect in `config`."""
        if self.shown is not None:
            return getattr(config, self.shown)
        owner, name = self._owner(config)
        return getattr(owner, name)

    def store(self, config: EngineConfig, value) -> EngineConfig:
        """`config` with this setting's field set to `value`."""
        owner, name = self._owner(config)
        if owner is config.search:
            return replace(config, search=replace(config.search, **{name: value}))
        return replace(config, **{name: value})

    def _owner(self, config: EngineConfig):
        if self.field.startswith("search."):
            return config.search, self.field.removeprefix("search.")
        return config, self.field


SETTINGS = (  # in --help order
    Setting("config", "config file of `key = value` lines (flag names); flags on the command "
            "line override it"),
    Setting("boardsize", "initial board size (default 19)", int, 19, low=2, high=25,
            range_error=BETWEEN),
    Setting("komi", "initial komi (default 7.5)", float, 7.5),
    Setting("rules", "ruleset preset: chinese, japanese, tromp-taylor, aga, ... (default chinese)",
            default="chinese"),
    Setting("model", "network: .onnx, a KataGo .bin.gz (converted once, cached), or the name of "
            "a net shipped in weights/ (default b10c384h6nbttflrs, KataGo's; ours: dosaku-b6c96, "
            "dosaku-b6c96-g170, dosaku-b4c64, dosaku-zero-9x9)"),
    Setting("provider", "onnxruntime execution provider (default cpu)", default="cpu",
            choices=tuple(PROVIDERS)),
    Setting("evaluator", "leaf evaluator (default: onnx with a network, else rollout)",
            choices=EVALUATOR_KINDS),
    Setting("visits", "root visits per move (0 = no limit)", int, 0, low=0, field="visits",
            live=True, katago="maxvisits"),
    Setting("playouts", "new evaluations per move (0 = no limit)", int, 0, low=0,
            field="playouts", live=True, katago="maxplayouts"),
    Setting("time", "seconds per move when no clock is set (default 1, or none when "
            "--visits/--playouts is given)", float, low=0, high=1e6, field="seconds", live=True,
            katago="maxtime", shown="time_per_move"),
    Setting("batch", "most leaves per evaluator call on a time limit; batches start at one "
            "leaf and grow with the tree (default 16 onnx, 8 rollout). Under --visits or "
            "--playouts each thread has one leaf in flight, as KataGo's search threads",
            int, low=1, high=1024,
            field="search.batch_size", live=True),
    Setting("threads", "network evaluations run at once, one thread each, while the search "
            "selects the next batch (default 2)", int, 2),
    Setting("int8", "run the network quantized to int8 (quantized once and cached). Default: "
            "on for convolution nets on a CPU with AVX2, and for transformer nets on one with "
            "AVX2 and no VNNI, where their copy won at equal time (a first start plays float32 "
            "while it is made in the background); off elsewhere (docs/networks.md#int8)", bool),
    Setting("int8-products", "a transformer net's matrix products that its int8 copy "
            "quantizes: ffn (the feed-forward up and gate products and the attention output) "
            "or all (every product, weights in 7 bits: faster, further from the float net). "
            "Default: all on a CPU with AVX2 and no VNNI, where transformer nets play int8 by "
            "default, ffn elsewhere", str, choices=INT8_PRODUCTS),
    Setting("rollout-mix", "leaf value = (1 - LAMBDA) network + LAMBDA random playout (0..1; "
            "default 0, the network alone; needs a network)", float, 0.0, metavar="LAMBDA",
            low=0.0, high=1.0, range_error=BETWEEN),
    Setting("policy-optimism", "KataGo's policyOptimism, for nets with an optimistic policy "
            "head (KataGo's transformer nets): the share of its logits mixed into the policy "
            "inside the tree (0..1, 0 = the plain head; KataGo's GTP uses 1; default "
            f"{SearchConfig.policy_optimism:g})", float, SearchConfig.policy_optimism,
            metavar="SHARE", low=0, high=1, field="search.policy_optimism", live=True,
            katago="policyoptimism"),
    Setting("root-policy-optimism", "the same at the root, whose prior then comes from an "
            "evaluation of its own once it is the root (0..1; KataGo's GTP uses 0.2; default "
            f"{SearchConfig.root_policy_optimism:g})", float, SearchConfig.root_policy_optimism,
            metavar="SHARE", low=0, high=1, field="search.root_policy_optimism", live=True,
            katago="rootpolicyoptimism"),
    Setting("uncertainty", "KataGo's useUncertainty, for nets with short-term error heads "
            "(KataGo's transformer nets; others ignore it): each evaluation counts in the "
            "averages and PUCT's counts with a weight that falls as the net's predicted error "
            "of its value and score grows, a finished game with the most weight (KataGo's GTP "
            f"uses it; default {'on' if SearchConfig.uncertainty else 'off'})", bool,
            SearchConfig.uncertainty, field="search.uncertainty"),
    Setting("uncertainty-coeff", "its uncertaintyCoeff: weight = COEFF / (error ** exponent "
            "+ COEFF / max weight), the error in units of utility (0.0001..1; default "
            f"{SearchConfig.uncertainty_coeff:g})", float, SearchConfig.uncertainty_coeff,
            metavar="COEFF", low=0.0001, high=1, field="search.uncertainty_coeff"),
    Setting("uncertainty-exponent", "its uncertaintyExponent, the power of the error (0..2; "
            f"default {SearchConfig.uncertainty_exponent:g})", float,
            SearchConfig.uncertainty_exponent, metavar="POWER", low=0, high=2,
            field="search.uncertainty_exponent"),
    Setting("uncertainty-max-weight", "its uncertaintyMaxWeight, the weight of an evaluation "
            "the net is sure of and of a finished game (1..100; default "
            f"{SearchConfig.uncertainty_max_weight:g})", float,
            SearchConfig.uncertainty_max_weight, metavar="WEIGHT", low=1, high=100,
            field="search.uncertainty_max_weight"),
    Setting("cpuct-utility-stdev-scale", "KataGo's cpuctUtilityStdevScale: PUCT's exploration "
            "constant times 1 + SCALE (stdev / prior - 1), stdev the spread of the utilities "
            "backed up through the node: more exploration where evaluations disagree (0..1, "
            f"0 = a plain constant; default {SearchConfig.utility_stdev_scale:g}, KataGo's)",
            float, SearchConfig.utility_stdev_scale, metavar="SCALE", low=0, high=1,
            field="search.utility_stdev_scale"),
    Setting("cpuct-utility-stdev-prior", "its cpuctUtilityStdevPrior, the spread assumed "
            "before visits (1e-8..10; default "
            f"{SearchConfig.utility_stdev_prior:g})", float, SearchConfig.utility_stdev_prior,
            metavar="STDEV", low=1e-8, high=10, field="search.utility_stdev_prior"),
    Setting("cpuct-utility-stdev-prior-weight", "its cpuctUtilityStdevPriorWeight, the "
            "pseudo-visits of that prior (0..100; default "
            f"{SearchConfig.utility_stdev_prior_weight:g})", float,
            SearchConfig.utility_stdev_prior_weight, metavar="VISITS", low=0, high=100,
            field="search.utility_stdev_prior_weight"),
    Setting("seed", "random seed (default 0)", int, 0, field="seed"),
    Setting("resign-threshold", "resign below this winrate (0 = never; default 0.05)", float,
            0.05, low=0, high=1, below_high=True, field="resign_threshold", live=True),
    Setting("lcb", "choose moves by lower confidence bound (default) or by visits", bool, True,
            field="use_lcb", live=True),
    Setting("katago-choice", "choose moves as KataGo does instead: visits a move got beyond "
            "its worth in hindsight trimmed, then the best lower confidence bound of the utility "
            "(value and score) with 5 standard errors (default off)", bool, False,
            field="katago_choice", live=True),
    Setting("tree-reuse", "keep the searched subtree of each move played for the next search "
            "(default on; off: every search starts fresh, as KataGo's clearBotBeforeSearch)",
            bool, True, field="tree_reuse"),
    Setting("ponder", "think on the opponent's time after genmove until the next command "
            "(default off)", bool, False, field="ponder", live=True),
    Setting("friendly-pass", "after the opponent passes, pass too when the score with the dead "
            "stones removed is a win, or the result playing on would give (default on, for "
            "servers that remove dead stones: OGS, KGS); --no-friendly-pass captures them "
            "first", bool, True, field="friendly_pass", live=True),
    Setting("log-file", "also write the log to this file"),
    Setting("log-level", "DEBUG, INFO, WARNING (default INFO)", default="INFO"),
    Setting("precompile", "compile the engine's kernels for these flags into the cache and exit: "
            "a one-time step after installing or updating, so that the first genmove of every "
            "later start is quick", bool, False, store_true=True),
)
BY_NAME = {s.name: s for s in SETTINGS}
SWITCHES = tuple(s.name for s in SETTINGS if s.kind is bool and not s.store_true)
