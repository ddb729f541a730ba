"""The Engine `dosaku FLAGS` plays with, built from parsed flags (launch/flags.py): its leaf
evaluator, its EngineConfig and the Engine itself. The review tool and the benchmarks build
their engines here, so they play exactly as the GTP engine does without importing it."""

import argparse
from concurrent.futures import ThreadPoolExecutor

from dosaku.engine.config import EngineConfig
from dosaku.engine.search.config import SearchConfig
from dosaku.launch.flags import parse_flags
from dosaku.launch.settings import SETTINGS


def build_evaluator(args: argparse.Namespace):
    """The leaf evaluator the flags ask for (loading and converting the network if needed)."""
    if args.evaluator == "onnx":  # kata-raw-nn reports the float32 net, as KataGo computes it
        from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator
        from dosaku.networks.loading import load_network
        if not args.rollout_mix:  # one thread per evaluation, --threads of them at once
            played, original = load_network(args.model, args.int8, 1, args.provider,
                                             args.int8_products)
            return OnnxEvaluator(played, seed=args.seed, parallel_calls=args.threads,
                                 float_model=original)
        from dosaku.engine.evaluators.rollout import (  # one call at a time
            MixedEvaluator,
            RolloutEvaluator,
        )
        played, original = load_network(args.model, args.int8, args.threads, args.provider,
                                         args.int8_products)
        net = OnnxEvaluator(played, seed=args.seed, float_model=original)
        return MixedEvaluator(net, RolloutEvaluator(), lam=args.rollout_mix)
    if args.evaluator == "uniform":
        from dosaku.engine.evaluators.evaluator import UniformEvaluator
        return UniformEvaluator()
    from dosaku.engine.evaluators.rollout import RolloutEvaluator
    return RolloutEvaluator()


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The EngineConfig the flags ask for: the evaluator's search defaults, then every flag
    with a config field that was given a value (engine/config.py resolves the rest)."""
    config = EngineConfig(search=SearchConfig.for_evaluator(args.evaluator, args.batch))
    for setting in SETTINGS:
        value = getattr(args, setting.dest)
        if setting.field is not None and value is not None:
            config = setting.store(config, value)
    return config


def build_engine(args: argparse.Namespace, background: bool = False, serving: bool = False):
    """Construct the Engine and warm up its kernels (the whole runs on the loader thread; with
    `background` the warm-up goes on after it returns, so that board commands are answered
    while the search kernels load). `serving`: for a protocol server, which on a cold cache
    plays on the kernels as plain Python while a helper compiles them (engine/precompile.py)."""
    from dosaku.engine import precompile
    from dosaku.engine.engine import Engine
    from dosaku.engine.evaluators.evaluator import capabilities_of
    from dosaku.engine.rules.rulesets import rules_by_name
    try:
        rules = rules_by_name(args.rules)
    except KeyError:
        raise ValueError(f"unknown --rules {args.rules!r}") from None
    config = engine_config(args)
    cold = serving and precompile.cache_is_cold()
    loading = None
    if serving and not cold:  # onnxruntime builds the net without the GIL meanwhile
        loading = ThreadPoolExecutor(1, "kernels").submit(
            precompile.load_search_kernels, config.search, args.boardsize, args.boardsize)
    evaluator = build_evaluator(args)
    if cold:
        precompile.compile_in_background(capabilities_of(evaluator).precompile_kind)
    engine = Engine(args.boardsize, args.boardsize, args.komi, rules, evaluator=evaluator,
                    config=config)
    engine.warm_up(background, loading)
    return engine


def engine_from_flags(argv: list[str]):
    """The engine `dosaku ARGV` would play with (kernels warmed up)."""
    return build_engine(parse_flags(argv))
