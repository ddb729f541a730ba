"""`dosaku`'s command line and config file, generated from the settings table, and the choices
the flags leave open (which network, which evaluator, int8 or not) resolved."""

import argparse
import logging
import sys
from pathlib import Path

from dosaku.engine.evaluators.onnx_options import cpu_runs_int8_fast, int8_products_for_cpu
from dosaku.launch.settings import SETTINGS, SWITCHES, Setting, parse_bool
from dosaku.weights import (
    DEFAULT_ALIAS,
    DEFAULT_NAME,
    FORMER_NAMES,
    default_model_path,
    model_path,
    net_name,
    shipped_names,
)

SHIPPED_MODEL = default_model_path()
log = logging.getLogger("dosaku")


def config_file_args(path: str) -> list[str]:
    """Flags from a config file: `key = value` lines (keys are the flag names without the
    leading dashes, as kata-set-param takes them; `#` starts a comment); `lcb = true|false`
    for the switches."""
    args = []
    for raw in Path(path).read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = (part.strip() for part in line.partition("="))
        if not sep or not key:
            raise ValueError(f"{path}: expected 'key = value', got {raw!r}")
        key = key.replace("_", "-")
        if key in SWITCHES:
            try:
                args.append(f"--{key}" if parse_bool(value) else f"--no-{key}")
            except ValueError:
                raise ValueError(f"{path}: {key} must be true or false, got {value!r}") from None
        else:
            args += [f"--{key}", value]
    return args


def add_flag(ap: argparse.ArgumentParser, setting: Setting) -> None:
    """The argparse option of one row of the table."""
    options = {"default": setting.default, "help": setting.help}
    if setting.store_true:
        options["action"] = "store_true"
    elif setting.kind is bool:
        options["action"] = argparse.BooleanOptionalAction
    elif setting.kind is not str:
        options["type"] = setting.kind
    if setting.choices is not None:
        options["choices"] = list(setting.choices)
    if setting.metavar is not None:
        options["metavar"] = setting.metavar
    ap.add_argument(setting.flag, **options)


def flag_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="dosaku",
                                 description="Dosaku Go engine (GTP on stdin/stdout)")
    for setting in SETTINGS:
        add_flag(ap, setting)
    return ap


def parse_flags(argv: list[str] | None = None) -> argparse.Namespace:
    """The flags of `argv` (default sys.argv), a --config file's under them, every value in its
    setting's range, and the network, evaluator and int8 choice resolved."""
    ap = flag_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    pre, _ = ap.parse_known_args(argv)
    if pre.config:
        try:
            argv = config_file_args(pre.config) + argv
        except (OSError, ValueError) as err:
            ap.error(str(err))
    args = ap.parse_args(argv)
    for setting in SETTINGS:
        value = getattr(args, setting.dest)
        if setting.has_range and value is not None and not setting.accepts(value):
            ap.error(setting.range_message(value))
    if args.model is None and SHIPPED_MODEL.exists():
        args.model = str(SHIPPED_MODEL)
    elif args.model and not Path(args.model).exists():
        args.model = shipped_model(args.model, ap)
    if args.evaluator is None:
        args.evaluator = "onnx" if args.model else "rollout"
    if args.evaluator == "onnx" and not args.model:
        ap.error("--evaluator onnx needs --model")
    if args.int8 and args.evaluator != "onnx":
        ap.error("--int8 quantizes a network: it needs --model")
    if args.int8 is None and not (args.evaluator == "onnx" and args.provider == "cpu"
                                  and cpu_runs_int8_fast()):
        args.int8 = False  # else None: the net decides (networks/loading.py)
    if args.int8_products is None:
        args.int8_products = int8_products_for_cpu()
    if args.rollout_mix and args.evaluator != "onnx":
        ap.error("--rollout-mix mixes playouts into a network's values: it needs --model")
    return args


def shipped_model(name: str, ap: argparse.ArgumentParser) -> str:
    """The file of the shipped net `--model NAME` names (a former name too, with a note); an
    unknown name that is no file either is a usage error listing the shipped names."""
    if name == DEFAULT_ALIAS:
        name = DEFAULT_NAME
    renamed = FORMER_NAMES.get(name)
    if renamed is not None and model_path(renamed).is_file():
        log.warning("--model %s: that net is now named %s", name, renamed)
        name = renamed
    if model_path(name).is_file():
        return str(model_path(name))
    if Path(name).suffix or "/" in name:
        return name  # a file path: the loader says that it is missing
    ap.error(f"--model {name}: no such file, and no shipped net of that name (shipped: "
             f"{', '.join(shipped_names())})")


def announce_evaluator(args: argparse.Namespace) -> None:
    """Say on stderr which network plays, and say clearly when the shipped one is missing."""
    if args.evaluator == "onnx":
        origin = "shipped default" if Path(args.model) == SHIPPED_MODEL else "--model"
        precision = {True: "int8 (--no-int8 for float32)", False: "float32",
                     None: "int8 where it pays"}[args.int8]
        log.info("network %s: %s (%s), %s", net_name(args.model), args.model, origin,
                 precision)
    elif not SHIPPED_MODEL.exists():
        log.warning("no network: the shipped %s is missing, so the %s evaluator plays "
                    "(pass --model NET to use a network)", SHIPPED_MODEL, args.evaluator)
    else:
        log.info("no network: the %s evaluator plays", args.evaluator)
