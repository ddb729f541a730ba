"""python -m dosaku.bench: run the benchmark suite and write a markdown and a JSON report.

    python -m dosaku.bench [--repeat 3] [--quick] [--out DIR] [--only NAME ...]

Each figure is the median of --repeat runs with the min-max spread; a benchmark whose module
or requirements are missing is listed as skipped with the reason (conventions: bench/runner.py).
"""

import argparse
import sys

from dosaku.bench.runner import run_all

# Registry, in report order: "module" calls bench/module.py's measure(quick), "module:function"
# another function of the same signature.
BENCHES = [
    "board",
    "features",
    "nn",
    "nn:measure_transformer",
    "search:measure_uniform",
    "search:measure_onnx",
    "budget:measure_time",
    "budget:measure_selfcheck",
    "selfplay:measure_teacher",
    "selfplay:measure_selfplay",
    "selfplay:measure_ray",
    "analysis",
    "review",
    "startup",
    "startup:measure_cold",
    "startup:measure_cold_network",
    "train",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dosaku.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per benchmark (default 3)")
    ap.add_argument("--quick", action="store_true", help="short runs (smoke test, CI)")
    ap.add_argument("--out", help="directory for bench.md and bench.json")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help=f"run only these entries or modules (from: {', '.join(BENCHES)})")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    entries = BENCHES
    if a.only:
        unknown = [n for n in a.only if not any(n in (e, e.split(":")[0]) for e in BENCHES)]
        if unknown:
            ap.error(f"unknown benchmark(s): {', '.join(unknown)}")
        entries = [e for e in BENCHES if e in a.only or e.split(":")[0] in a.only]
    results = run_all(entries, a.repeat, a.quick, a.out)
    return 1 if any(r.status == "error" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
