"""Composition root: parse flags, start building the Engine, serve GTP on stdin/stdout; or,
as `dosaku analysis ...`, KataGo's JSON analysis engine (kata_analysis/); or, as
`dosaku review GAMES...`, the review of a game collection (tournament/review_batch.py).

The flags come from the settings table (launch/settings.py) and the Engine from launch/factory.py.
The GTP loop starts at once; the Engine (numba kernels, later the network) is built on a
background thread and the first command that needs it waits. Only GTP answers reach the real
stdout (launch/stdio.py).

This file is dosaku.run_engine, the `dosaku` command's module; `python run_engine.py` from a
checkout runs it as a script, whose imports too go through the installed package `dosaku`.
"""

import logging
import os
import sys
import time

from dosaku.launch.factory import build_engine
from dosaku.launch.flags import announce_evaluator, parse_flags
from dosaku.launch.stdio import protocol_stream
from dosaku.weights import net_name

log = logging.getLogger("dosaku")


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["analysis"]:  # KataGo's JSON analysis engine, as `katago analysis`
        from dosaku.kata_analysis.cli import main as analysis_main
        analysis_main(argv[1:])
        return
    if argv[:1] == ["review"]:  # a collection of games, on local workers or a Ray cluster
        from dosaku.tournament.review_batch import main as review_main
        ray_runner = None
        if any(a.startswith("--ray-address") for a in argv):
            from dosaku.training.review_ray import run_on_ray as ray_runner
        sys.exit(review_main(argv[1:], ray_runner))
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
    from dosaku.gtp.commands import Commands
    from dosaku.gtp.loader import EngineLoader
    from dosaku.gtp.server import GtpServer
    out = protocol_stream()
    loader = EngineLoader.start(lambda: build_engine(args, background=True, serving=True),
                                network=args.evaluator == "onnx")
    net = net_name(args.model) if args.evaluator == "onnx" else None
    server = GtpServer(Commands(loader, net))
    server.serve(sys.stdin.buffer, out)
    _leave()


def _leave() -> None:
    """Exit now. The reader and loader threads may still be blocked in I/O or compiling: leave
    without waiting for them (interpreter shutdown would abort on the reader's stdin lock)."""
    logging.shutdown()
    os._exit(0)


if __name__ == "__main__":
    main()
