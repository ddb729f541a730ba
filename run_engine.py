"""Composition root: parse flags, start building the Engine, serve GTP on stdin/stdout.

The GTP loop starts at once; the Engine (numba kernels, later the network) is built on a
background thread and the first command that needs it waits. Only GTP answers reach the real
stdout: file descriptor 1 is pointed at stderr so that stray prints, from C libraries too,
cannot corrupt the protocol stream.
"""

import argparse
import logging
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from engine.config import EVALUATOR_KINDS, EngineConfig, SearchConfig
from engine.onnx_options import PROVIDERS, cpu_runs_int8_fast, is_onnx_file
from gtp.params import PARAMS
from weights import default_model_path, model_path

SHIPPED_MODEL = default_model_path()
log = logging.getLogger("dosaku")
SWITCHES = ("lcb", "ponder", "int8")  # on/off flags: --name / --no-name
# flags that are kata-set-param settings too: they accept what the setting accepts
PARAM_FLAGS = ("visits", "playouts", "time", "batch", "resign-threshold", "value-bias",
               "value-weight", "noise-prune")


def config_file_args(path: str) -> list[str]:
    """Flags from a config file: `key = value` lines (keys are the flag names without the
    leading dashes, as kata-set-param takes them; `#` starts a comment); `lcb = true|false`
    for the switches."""
    from gtp.params import parse_bool
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


def parse_flags(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="dosaku",
                                 description="Dosaku Go engine (GTP on stdin/stdout)")
    ap.add_argument("--config", help="config file of `key = value` lines (flag names); "
                                     "flags on the command line override it")
    ap.add_argument("--boardsize", type=int, default=19, help="initial board size (default 19)")
    ap.add_argument("--komi", type=float, default=7.5, help="initial komi (default 7.5)")
    ap.add_argument("--rules", default="chinese",
                    help="ruleset preset: chinese, japanese, tromp-taylor, aga, ... "
                         "(default chinese)")
    ap.add_argument("--model", help="network: .onnx, a KataGo .bin.gz (converted once, cached), "
                    "or the name of a net shipped in weights/ (e.g. zero-9x9)")
    ap.add_argument("--provider", default="cpu", choices=list(PROVIDERS),
                    help="onnxruntime execution provider (default cpu)")
    ap.add_argument("--evaluator", choices=EVALUATOR_KINDS,
                    help="leaf evaluator (default: onnx with a network, else rollout)")
    ap.add_argument("--visits", type=int, default=0, help="root visits per move (0 = no limit)")
    ap.add_argument("--playouts", type=int, default=0,
                    help="new evaluations per move (0 = no limit)")
    ap.add_argument("--time", type=float,
                    help="seconds per move when no clock is set (default 1, or none when "
                         "--visits/--playouts is given)")
    ap.add_argument("--batch", type=int,
                    help="most leaves per evaluator call; batches start at one leaf and grow "
                         "with the tree (default 16 onnx, 8 rollout)")
    ap.add_argument("--threads", type=int, default=2,
                    help="network evaluations run at once, one thread each, while the search "
                         "selects the next batch (default 2)")
    ap.add_argument("--int8", action=argparse.BooleanOptionalAction, default=None,
                    help="run the network quantized to int8 (quantized once and cached; about "
                         "3x the evaluations on CPUs with VNNI, 1.7x with AVX2 alone, outputs "
                         "within the net's own symmetry noise). Default: on when the network "
                         "runs on a CPU with AVX2")
    ap.add_argument("--rollout-mix", type=float, default=0.0, metavar="LAMBDA",
                    help="leaf value = (1 - LAMBDA) network + LAMBDA random playout (0..1; "
                         "default 0, the network alone; needs a network)")
    ap.add_argument("--value-bias", type=float, default=SearchConfig.value_bias_factor,
                    metavar="FACTOR",
                    help="subtree value-bias correction (KataGo's subtreeValueBiasFactor): a "
                         "new leaf's value moves by this share of what the search found its "
                         "local pattern misjudged (0..1, 0 = off; default "
                         f"{SearchConfig.value_bias_factor:g})")
    ap.add_argument("--value-weight", type=float, default=SearchConfig.value_weight_exponent,
                    metavar="EXPONENT",
                    help="KataGo's valueWeightExponent: a node's value for selection is "
                         "recomputed from its children's, the better ones weighing more (0..1, "
                         f"0 = plain backups; default {SearchConfig.value_weight_exponent:g})")
    ap.add_argument("--noise-prune", type=float, default=SearchConfig.noise_prune_scale,
                    metavar="SCALE",
                    help="KataGo's noise pruning (noisePruneUtilityScale): that recomputation "
                         "cuts the weight of worse children visited beyond their policy share, "
                         "on this utility scale (0..10, 0 = off; default "
                         f"{SearchConfig.noise_prune_scale:g})")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--resign-threshold", type=float, default=0.05,
                    help="resign below this winrate (0 = never; default 0.05)")
    ap.add_argument("--lcb", action=argparse.BooleanOptionalAction, default=True,
                    help="choose moves by lower confidence bound (default) or by visits")
    ap.add_argument("--ponder", action=argparse.BooleanOptionalAction, default=False,
                    help="think on the opponent's time after genmove until the next command "
                         "(default off)")
    ap.add_argument("--log-file", help="also write the log to this file")
    ap.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING (default INFO)")
    ap.add_argument("--precompile", action="store_true",
                    help="compile the engine's kernels for these flags into the cache and exit: "
                    "a one-time step after installing or updating, so that the first genmove of "
                    "every later start is quick")
    argv = list(sys.argv[1:] if argv is None else argv)
    pre, _ = ap.parse_known_args(argv)
    if pre.config:
        try:
            argv = config_file_args(pre.config) + argv
        except (OSError, ValueError) as err:
            ap.error(str(err))
    args = ap.parse_args(argv)
    if not 2 <= args.boardsize <= 25:
        ap.error("--boardsize must be between 2 and 25")
    if args.model is None and SHIPPED_MODEL.exists():
        args.model = str(SHIPPED_MODEL)
    elif args.model and not Path(args.model).exists() and model_path(args.model).is_file():
        args.model = str(model_path(args.model))  # a shipped net by name, e.g. zero-9x9
    if args.evaluator is None:
        args.evaluator = "onnx" if args.model else "rollout"
    if args.evaluator == "onnx" and not args.model:
        ap.error("--evaluator onnx needs --model")
    if not 0.0 <= args.rollout_mix <= 1.0:
        ap.error("--rollout-mix must be between 0 and 1")
    if args.int8 and args.evaluator != "onnx":
        ap.error("--int8 quantizes a network: it needs --model")
    if args.int8 is None:
        args.int8 = args.evaluator == "onnx" and args.provider == "cpu" and cpu_runs_int8_fast()
    for name in PARAM_FLAGS:
        value = getattr(args, name.replace("-", "_"))
        if value is not None and not PARAMS[name].valid(value):
            ap.error(f"--{name} {value:g} is out of range (see --help)")
    if args.rollout_mix and args.evaluator != "onnx":
        ap.error("--rollout-mix mixes playouts into a network's values: it needs --model")
    return args


def announce_evaluator(args: argparse.Namespace) -> None:
    """Say on stderr which network plays, and say clearly when the shipped one is missing."""
    if args.evaluator == "onnx":
        origin = "shipped default" if Path(args.model) == SHIPPED_MODEL else "--model"
        precision = "int8 (--no-int8 for float32)" if args.int8 else "float32"
        log.info("network %s (%s), %s", args.model, origin, precision)
    elif not SHIPPED_MODEL.exists():
        log.warning("no network: the shipped %s is missing, so the %s evaluator plays "
                    "(pass --model NET to use a network)", SHIPPED_MODEL, args.evaluator)
    else:
        log.info("no network: the %s evaluator plays", args.evaluator)


def build_evaluator(args: argparse.Namespace):
    """The leaf evaluator the flags ask for (loading and converting the network if needed)."""
    if args.evaluator == "onnx":  # kata-raw-nn reports the float32 net, as KataGo computes it
        from engine.onnx_evaluator import OnnxEvaluator
        from networks.loading import load_network
        if not args.rollout_mix:  # one thread per evaluation, --threads of them at once
            played, original = load_network(args.model, args.int8, 1, args.provider)
            return OnnxEvaluator(played, seed=args.seed, parallel_calls=args.threads,
                                 float_model=original)
        from engine.rollout import MixedEvaluator, RolloutEvaluator  # one call at a time
        played, original = load_network(args.model, args.int8, args.threads, args.provider)
        net = OnnxEvaluator(played, seed=args.seed, float_model=original)
        return MixedEvaluator(net, RolloutEvaluator(), lam=args.rollout_mix)
    if args.evaluator == "uniform":
        from engine.evaluator import UniformEvaluator
        return UniformEvaluator()
    from engine.rollout import RolloutEvaluator
    return RolloutEvaluator()


def engine_config(args: argparse.Namespace):
    """The EngineConfig the flags ask for (engine/config.py resolves what they leave unset)."""
    search = replace(SearchConfig.for_evaluator(args.evaluator, args.batch),
                     value_bias_factor=args.value_bias,
                     value_weight_exponent=args.value_weight,
                     noise_prune_scale=args.noise_prune)
    return EngineConfig(search=search,
                        visits=args.visits, playouts=args.playouts, seconds=args.time,
                        seed=args.seed, resign_threshold=args.resign_threshold,
                        use_lcb=args.lcb, ponder=args.ponder)


def build_engine(args: argparse.Namespace, background: bool = False):
    """Construct the Engine and warm up its kernels (the whole runs on the loader thread; with
    `background` the warm-up goes on after it returns, so that board commands are answered
    while the search kernels compile)."""
    from engine.engine import Engine
    from engine.rules import rules_by_name
    try:
        rules = rules_by_name(args.rules)
    except KeyError:
        raise ValueError(f"unknown --rules {args.rules!r}") from None
    engine = Engine(args.boardsize, args.boardsize, args.komi, rules,
                    evaluator=build_evaluator(args), config=engine_config(args))
    engine.warm_up(background)
    return engine


def _protocol_stream():
    """A private binary handle on the real stdout; fd 1 and sys.stdout then go to stderr."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse_flags(argv)
    handlers = [logging.StreamHandler(sys.stderr)]
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file))
    logging.basicConfig(level=args.log_level.upper(), handlers=handlers,
                        format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    announce_evaluator(args)
    if args.precompile:
        started = time.monotonic()
        build_engine(args)
        log.info("kernels compiled and cached in %.1f s", time.monotonic() - started)
        return
    from gtp.commands import Commands
    from gtp.loader import EngineLoader
    from gtp.server import GtpServer
    out = _protocol_stream()
    loader = EngineLoader.start(lambda: build_engine(args, background=True),
                                network=args.evaluator == "onnx")
    server = GtpServer(Commands(loader))
    server.serve(sys.stdin.buffer, out)
    # The reader and loader threads may still be blocked in I/O or compiling: leave without
    # waiting for them (interpreter shutdown would abort on the reader's stdin lock).
    logging.shutdown()
    os._exit(0)


if __name__ == "__main__":
    main()
