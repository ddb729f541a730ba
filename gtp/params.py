"""Engine settings readable and settable while the engine runs (kata-get-param,
kata-set-param, GoGui's dosaku-param), under the names of run_engine.py's flags, which are
also the keys of a --config file. A bad name or value changes nothing."""

from dataclasses import dataclass, replace
from typing import Callable

from engine.config import EngineConfig
from gtp.protocol import GtpError, format_float

UNKNOWN_PARAM = "unknown parameter"
INVALID_VALUE = "invalid value"
TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
KATAGO_NAMES = {"maxvisits": "visits", "maxplayouts": "playouts", "maxtime": "time",
                "subtreevaluebiasfactor": "value-bias", "valueweightexponent": "value-weight",
                "noisepruneutilityscale": "noise-prune"}


def parse_bool(text: str) -> bool:
    """true/1/yes/on or false/0/no/off in any case; ValueError otherwise."""
    t = text.lower()
    if t in TRUE_WORDS or t in FALSE_WORDS:
        return t in TRUE_WORDS
    raise ValueError(f"not a boolean: {text!r}")


@dataclass(frozen=True)
class Param:
    """One setting: its value type, where it lives in EngineConfig and what it accepts."""
    kind: type  # int, float or bool
    field: str  # EngineConfig field, or "search.<field>" for a SearchConfig one
    valid: Callable[[object], bool]
    help: str
    read: Callable[[EngineConfig], object] | None = None  # the value in effect, if derived

    def get(self, config: EngineConfig):
        if self.read is not None:
            return self.read(config)
        owner, name = self._owner(config)
        return getattr(owner, name)

    def set(self, config: EngineConfig, value) -> EngineConfig:
        if self.field.startswith("search."):
            return replace(config, search=replace(config.search, **{self.field[7:]: value}))
        return replace(config, **{self.field: value})

    def _owner(self, config: EngineConfig):
        if self.field.startswith("search."):
            return config.search, self.field[7:]
        return config, self.field

    def parse(self, text: str):
        """The value of `text`; GtpError(invalid value) if it is not one this setting takes."""
        try:
            value = parse_bool(text) if self.kind is bool else self.kind(text)
        except ValueError:
            raise GtpError(INVALID_VALUE) from None
        if self.kind is float and value != value or not self.valid(value):
            raise GtpError(INVALID_VALUE)
        return value

    def show(self, value) -> str:
        if self.kind is bool:
            return "true" if value else "false"
        return format_float(value) if self.kind is float else str(value)


PARAMS = {
    "visits": Param(int, "visits", lambda v: v >= 0,
                    "root visits per move, reused ones included (0 = no limit)"),
    "playouts": Param(int, "playouts", lambda v: v >= 0, "new evaluations per move (0 = no limit)"),
    "time": Param(float, "seconds", lambda v: 0 <= v <= 1e6,
                  "seconds per move when no clock is set (0 = no limit)",
                  read=lambda config: config.time_per_move),
    "lcb": Param(bool, "use_lcb", lambda v: True, "choose moves by lower confidence bound"),
    "resign-threshold": Param(float, "resign_threshold", lambda v: 0 <= v < 1,
                              "resign below this winrate (0 = never)"),
    "batch": Param(int, "search.batch_size", lambda v: 1 <= v <= 1024,
                   "leaves per evaluator call"),
    "ponder": Param(bool, "ponder", lambda v: True, "think on the opponent's time"),
    "value-bias": Param(float, "search.value_bias_factor", lambda v: 0 <= v <= 1,
                        "subtree value-bias correction factor (0 = off)"),
    "value-weight": Param(float, "search.value_weight_exponent", lambda v: 0 <= v <= 1,
                          "exponent of the child value weighting (0 = plain backups)"),
    "noise-prune": Param(float, "search.noise_prune_scale", lambda v: 0 <= v <= 10,
                         "utility scale of noise pruning (0 = off)"),
}


def lookup(name: str) -> tuple[str, Param]:
    """The canonical name and Param of `name` (flag names with - or _, KataGo's maxVisits,
    maxPlayouts, maxTime); GtpError(unknown parameter) otherwise."""
    key = name.lower().replace("_", "-")
    key = KATAGO_NAMES.get(key, key)
    if key not in PARAMS:
        raise GtpError(UNKNOWN_PARAM)
    return key, PARAMS[key]


def get(config: EngineConfig, name: str) -> str:
    _, param = lookup(name)
    return param.show(param.get(config))


def set_value(config: EngineConfig, name: str, text: str) -> EngineConfig:
    """`config` with the setting changed; GtpError (and no change) for a bad name or value."""
    _, param = lookup(name)
    return param.set(config, param.parse(text))


def gogui_lines(config: EngineConfig) -> str:
    """Every setting as GoGui's param lines: `[bool] key 0|1` or `[string] key value`."""
    lines = []
    for name, param in PARAMS.items():
        value = param.get(config)
        if param.kind is bool:
            lines.append(f"[bool] {name} {int(value)}")
        else:
            lines.append(f"[string] {name} {param.show(value)}")
    return "\n".join(lines)
