"""The analysis server's settings, read from a KataGo analysis `.cfg` file and `-override-config`
under KataGo's names, so that a client's existing KataGo set-up (KaTrain passes its own config)
works unchanged. Keys we do not use are listed once on stderr, never refused: a KataGo config
holds many (logging, cache sizes, GPU settings) that mean nothing here.
"""

from dataclasses import dataclass, replace
from pathlib import Path

PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")


class SettingsError(ValueError):
    """A config value that cannot be read (the server does not start)."""


@dataclass(frozen=True)
class AnalysisSettings:
    """Defaults of every query and the shape of the server. Without a config file they are
    those of KataGo's analysis_example.cfg; a config file that leaves reportAnalysisWinratesAs
    out gets KataGo's own default for it, SIDETOMOVE."""
    max_visits: int = 500  # maxVisits: a query's visits unless it names its own
    max_time: float = 0.0  # maxTime: seconds a query turn may take (0: no limit)
    perspective: str = "BLACK"  # reportAnalysisWinratesAs
    analysis_threads: int = 16  # numAnalysisThreads: turns searched at once
    search_threads: int = 2  # numSearchThreadsPerAnalysisThread: leaves in flight per turn
    max_batch: int = 64  # nnMaxBatchSize: most rows in one network call
    pv_len: int = 15  # analysisPVLen: moves of a PV after the first
    wide_root_noise: float = 0.04  # wideRootNoise (KataGo's analysis default)
    root_policy_temperature: float = 1.0  # rootPolicyTemperature
    warn_unused_fields: bool = True  # warnUnusedFields


def _bool(text: str) -> bool:
    t = text.strip().lower()
    if t in ("true", "1", "yes"):
        return True
    if t in ("false", "0", "no"):
        return False
    raise ValueError(text)


def _perspective(text: str) -> str:
    """KataGo's spellings of reportAnalysisWinratesAs (b, black, w, white, sidetomove)."""
    t = text.strip().lower()
    found = {"b": "BLACK", "black": "BLACK", "w": "WHITE", "white": "WHITE",
             "sidetomove": "SIDETOMOVE"}.get(t)
    if found is None:
        raise ValueError(text)
    return found


# KataGo's key -> (our field, parser, lowest, highest)
KEYS = {
    "maxVisits": ("max_visits", int, 1, 1 << 50),
    "maxTime": ("max_time", float, 0.0, 1e9),
    "reportAnalysisWinratesAs": ("perspective", _perspective, None, None),
    "numAnalysisThreads": ("analysis_threads", int, 1, 1024),
    "numSearchThreadsPerAnalysisThread": ("search_threads", int, 1, 64),
    "nnMaxBatchSize": ("max_batch", int, 1, 4096),
    "analysisPVLen": ("pv_len", int, 1, 100),
    "wideRootNoise": ("wide_root_noise", float, 0.0, 5.0),
    "rootPolicyTemperature": ("root_policy_temperature", float, 0.01, 100.0),
    "warnUnusedFields": ("warn_unused_fields", _bool, None, None),
}
ENGINE_KEYS = {"numNNServerThreadsPerModel": "threads"}  # KataGo's key -> our engine flag


def parse_value(key: str, text: str):
    """The value of one of KEYS from its text; ValueError naming the key and range if bad."""
    _, parse, low, high = KEYS[key]
    try:
        value = parse(text)
    except ValueError:
        raise ValueError(f"{key}: cannot read {text!r}") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{key}: {text} is not between {low} and {high}")
    return value


def read_cfg(path: str) -> dict[str, str]:
    """`key = value` lines of a KataGo config file (`#` starts a comment)."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise SettingsError(f"cannot read config {path}: {err.strerror}") from None
    return key_values([raw.split("#", 1)[0] for raw in text.splitlines()], str(path),
                      "'key = value'")


def read_overrides(text: str) -> dict[str, str]:
    """KataGo's -override-config argument: `key=value,key=value`."""
    return key_values(text.split(","), "-override-config", "key=value")


def key_values(pieces: list[str], where: str, form: str) -> dict[str, str]:
    """`key=value` pieces (blank ones skipped) as a dict; SettingsError naming `where` on a
    piece without a key or an `=`."""
    entries = {}
    for piece in pieces:
        if not piece.strip():
            continue
        key, sep, value = (part.strip() for part in piece.partition("="))
        if not sep or not key:
            raise SettingsError(f"{where}: expected {form}, got {piece.strip()!r}")
        entries[key] = value
    return entries


def build_settings(entries: dict[str, str], from_file: bool) -> tuple[AnalysisSettings,
                                                                      dict[str, str],
                                                                      list[str]]:
    """(settings, engine flags by name, unused keys) from config entries (file first, then
    overrides). `from_file`: a config file was given, so an absent reportAnalysisWinratesAs
    means KataGo's SIDETOMOVE."""
    settings = AnalysisSettings()
    if from_file and "reportAnalysisWinratesAs" not in entries:
        settings = replace(settings, perspective="SIDETOMOVE")
    engine_flags, unused = {}, []
    for key, text in entries.items():
        if key in KEYS:
            try:
                settings = replace(settings, **{KEYS[key][0]: parse_value(key, text)})
            except ValueError as err:
                raise SettingsError(str(err)) from None
        elif key in ENGINE_KEYS:
            engine_flags[ENGINE_KEYS[key]] = text
        else:
            unused.append(key)
    return settings, engine_flags, unused

