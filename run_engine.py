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


def parse_flags(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="dosaku",
                                 description="Dosaku Go engine (GTP on stdin/stdout)")
    ap.add_argument("--boardsize", type=int, default=19, help="initial board size (default 19)")
    ap.add_argument("--komi", type=float, default=7.5, help="initial komi (default 7.5)")
    ap.add_argument("--rules", default="chinese",
                    help="ruleset preset: chinese, japanese, tromp-taylor, aga, ... "
                         "(default chinese)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--log-file", help="also write the log to this file")
    ap.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING (default INFO)")
    args = ap.parse_args(argv)
    if not 2 <= args.boardsize <= 25:
        ap.error("--boardsize must be between 2 and 25")
    return args


def build_engine(args: argparse.Namespace):
    """Import and construct the Engine, then warm up the numba kernels (runs in the background)."""
    from engine.engine import Engine
    from engine.rules import rules_by_name
    try:
        rules = rules_by_name(args.rules)
    except KeyError:
        raise ValueError(f"unknown --rules {args.rules!r}") from None
    _warm_up(Engine)
    return Engine(args.boardsize, args.boardsize, args.komi, rules, args.seed)


def _warm_up(engine_class) -> None:
    """Compile (or load from the cache) the kernels a game uses, on a throwaway 5x5 engine."""
    from engine.constants import BLACK, WHITE
    from engine.coords import point_from_xy
    e = engine_class(5, 5, 0.5)
    e.play(BLACK, point_from_xy(2, 2, 5))
    e.play(WHITE, point_from_xy(1, 2, 5))
    e.genmove(BLACK, commit=False)
    e.undo()
    e.game.score()


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
    from gtp.commands import Commands
    from gtp.loader import EngineLoader
    from gtp.server import GtpServer
    out = _protocol_stream()
    server = GtpServer(Commands(EngineLoader.start(lambda: build_engine(args))))
    server.serve(sys.stdin.buffer, out)
    # The reader and loader threads may still be blocked in I/O or compiling: leave without
    # waiting for them (interpreter shutdown would abort on the reader's stdin lock).
    logging.shutdown()
    os._exit(0)


if __name__ == "__main__":
    main()
