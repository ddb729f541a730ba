"""Engine settings readable and settable while the engine runs (kata-get-param,
kata-set-param, GoGui's dosaku-param): the `live` rows of the settings table
(launch/settings.py), under their flag names, which are also the keys of a --config file, or
KataGo's names. A bad name or value changes nothing."""

from dosaku.engine.config import EngineConfig
from dosaku.gtp.protocol import GtpError, format_float
from dosaku.launch.settings import BY_NAME, SETTINGS, Setting, parse_bool

UNKNOWN_PARAM = "unknown parameter"
INVALID_VALUE = "invalid value"
LISTED = ("visits", "playouts", "time", "lcb", "katago-choice", "resign-threshold", "batch",
          "ponder", "friendly-pass", "policy-optimism",
          "root-policy-optimism")  # dosaku-param's order (GoGui's)
PARAMS = {name: BY_NAME[name] for name in LISTED}
KATAGO_NAMES = {s.katago: s.name for s in SETTINGS if s.live and s.katago}


def parse(setting: Setting, text: str):
    """The value of `text`; GtpError(invalid value) if it is not one this setting takes."""
    try:
        value = parse_bool(text) if setting.kind is bool else setting.kind(text)
    except ValueError:
        raise GtpError(INVALID_VALUE) from None
    if not setting.accepts(value):
        raise GtpError(INVALID_VALUE)
    return value


def show(setting: Setting, value) -> str:
    if setting.kind is bool:
        return "true" if value else "false"
    return format_float(value) if setting.kind is float else str(value)


def lookup(name: str) -> tuple[str, Setting]:
    """The canonical name and Setting of `name` (flag names with - or _, KataGo's maxVisits,
    maxPlayouts, maxTime, ...); GtpError(unknown parameter) otherwise."""
    key = name.lower().replace("_", "-")
    key = KATAGO_NAMES.get(key, key)
    if key not in PARAMS:
        raise GtpError(UNKNOWN_PARAM)
    return key, PARAMS[key]


def get(config: EngineConfig, name: str) -> str:
    _, setting = lookup(name)
    return show(setting, setting.read(config))


def set_value(config: EngineConfig, name: str, text: str) -> EngineConfig:
    """`config` with the setting changed; GtpError (and no change) for a bad name or value."""
    _, setting = lookup(name)
    return setting.store(config, parse(setting, text))


def gogui_lines(config: EngineConfig) -> str:
    """Every setting as GoGui's param lines: `[bool] key 0|1` or `[string] key value`."""
    lines = []
    for name, setting in PARAMS.items():
        value = setting.read(config)
        if setting.kind is bool:
            lines.append(f"[bool] {name} {int(value)}")
        else:
            lines.append(f"[string] {name} {show(setting, value)}")
    return "\n".join(lines)
