"""Where a start's seconds go, phase by phase, in one process as the GTP engine builds itself.

    python -m dosaku.bench.startup_phases [--cold] [--model NET]

Imports, the network (its conversion on a first start, the cache lookup and hashes, the
onnxruntime session), each numba kernel's first call (a load from numba's cache; with
`--cold`, a compile into an empty one, as `--precompile` or the helper does it) and the
helper process's whole compile. bench/startup.py measures the same starts from a client's side.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PHASES = r"""
import sys, time
t0 = time.perf_counter()
def lap(name, since):
    now = time.perf_counter()
    print(f"{name:<58} {now - since:6.2f} s", flush=True)
    return now
import numpy, numba
t = lap("import numpy and numba", t0)
import onnxruntime
from dosaku.engine.engine import Engine
from dosaku.launch.flags import parse_flags
t = lap("import onnxruntime and the engine", t)
from numba.core.dispatcher import Dispatcher
first_calls = []
original = Dispatcher._compile_for_args
def timed(self, *args, **kws):
    s = time.perf_counter()
    try:
        return original(self, *args, **kws)
    finally:
        first_calls.append((time.perf_counter() - s, self.py_func.__name__))
Dispatcher._compile_for_args = timed
from dosaku.engine import precompile
from dosaku.engine.rules.rulesets import rules_by_name
from dosaku.launch.factory import engine_config
from dosaku.networks.cache import onnx_for
from dosaku.networks.loading import load_network
args = parse_flags(sys.argv[1:])
onnx_for(args.model)
t = lap("network: find (or convert) its ONNX in the cache", t)
played, original_model = load_network(args.model, args.int8, 1, products=args.int8_products)
t = lap("network: int8 choice and onnxruntime session", t)
config = engine_config(args)
precompile.load_search_kernels(config.search, args.boardsize, args.boardsize)
precompile.compile_evaluator(played.feature_set)
t = lap(f"kernels: first calls of {len(first_calls)} (nested ones inside)", t)
for seconds, name in sorted(first_calls, reverse=True)[:8]:
    print(f"  {name:<56} {seconds:6.3f} s")
lap("in all", t0)
print(f"kind {played.feature_set}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cold", action="store_true", help="empty home, network and numba caches")
    ap.add_argument("--model", help="the network (default: the shipped default)")
    a = ap.parse_args()
    flags = ["--model", a.model] if a.model else []
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ)
        if a.cold:
            env.update(HOME=home, XDG_CACHE_HOME=f"{home}/.cache", NUMBA_CACHE_DIR=f"{home}/nb")
        run = subprocess.run([sys.executable, "-c", PHASES, *flags], cwd=ROOT, env=env,
                             check=True, stdout=subprocess.PIPE, text=True)
        *lines, kind = run.stdout.splitlines()
        print("\n".join(lines))
        if a.cold:  # the helper's compile, into another empty cache
            env["NUMBA_CACHE_DIR"] = f"{home}/helper"
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "dosaku.engine.precompile", kind.split()[1]],
                           cwd=ROOT, env=env, check=True)
            print(f"{'helper: every kernel compiled (dosaku.engine.precompile)':<58} "
                  f"{time.perf_counter() - start:6.2f} s")


if __name__ == "__main__":
    main()
