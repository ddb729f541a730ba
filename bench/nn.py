"""Network evaluations per second through onnxruntime, by board size, batch size and threads.

    python -m dosaku.bench.nn [--model M.onnx|M.bin.gz] [--seconds 1.0] [--variants]
    python -m dosaku.bench.nn --compare A.onnx B.onnx [--rounds 5] [--sizes 9 19]

Inputs are random 0/1 planes with the on-board mask plane set to 1. `--variants` also compares
session settings (graph optimization level, execution mode) on one configuration. `--compare`
runs ONNX files in turn, round after round, as the engine runs its net (two one-thread sessions,
batches of 16), and gives each one's median: on shared cores the load drifts, and interleaving
spreads it over all of them alike.
`measure_transformer` (python -m dosaku.bench) runs KataGo's transformer net
b10c384h6nbttflrs as the engine does: two one-thread sessions evaluating batches of 16 at once,
float32 and int8 (its int8 copy is made in the user's cache on the first run, about half a
minute).
"""

import argparse
import statistics
import threading
import time

import numpy as np

from dosaku.bench.runner import B6C96_MODEL, B10_MODEL, Skip
from dosaku.engine.evaluators.onnx_evaluator import GRAPH_OPTIMIZATION, OnnxModel, session_options
from dosaku.networks.cache import onnx_for
from dosaku.networks.int8_copy import int8_for


def inputs(model: OnnxModel, batch: int, size: int, rng):
    spatial = (rng.random((batch, model.num_spatial, size, size)) < 0.2).astype(np.float32)
    spatial[:, 0] = 1.0
    glob = rng.normal(0, 0.5, (batch, model.num_global)).astype(np.float32)
    return spatial, glob


def rates(model: OnnxModel, batch: int, size: int, seconds: float) -> tuple[float, float]:
    """(evaluations per wall second, per CPU second of this process), each the best of three
    slices of `seconds`/3: the cores are shared, so the best slice is the least disturbed one.
    The CPU-second rate hardly depends on other load; with 1 thread it is the speed on an idle
    core."""
    spatial, glob = inputs(model, batch, size, np.random.default_rng(0))
    for _ in range(2):
        model.run(spatial, glob)
    wall = cpu = 0.0
    for _ in range(3):
        runs, start, cpu_start = 0, time.perf_counter(), time.process_time()
        while runs < 2 or time.perf_counter() - start < seconds / 3:
            model.run(spatial, glob)
            runs += 1
        wall = max(wall, batch * runs / (time.perf_counter() - start))
        cpu = max(cpu, batch * runs / max(time.process_time() - cpu_start, 1e-9))
    return wall, cpu


def table(path, sizes, batches, threads, seconds):
    print(f"evaluations per wall second / per CPU second, best of 3 slices "
          f"(model {path.name}, {seconds:g} s per cell)")
    print("size  threads " + "".join(f"{'batch ' + str(b):>15}" for b in batches))
    for size in sizes:
        for t in threads:
            model = OnnxModel(path, threads=t)
            cells = [rates(model, b, size, seconds) for b in batches]
            print(f"{size:>2}x{size:<2} {t:>6} " + "".join(f"{w:8.0f} /{c:5.0f}" for w, c in cells))


def variants(path, size, batch, threads, seconds):
    print(f"\nsession variants at {size}x{size}, batch {batch}, {threads} thread(s)")
    for level in GRAPH_OPTIMIZATION:
        for parallel in (False, True):
            opts = session_options(threads, optimization=level, parallel=parallel)
            wall, cpu = rates(OnnxModel(path, options=opts), batch, size, seconds)
            mode = "parallel" if parallel else "sequential"
            print(f"  opt={level:<9} mode={mode:<10}   {wall:6.0f} /{cpu:5.0f} evals/s "
                  "(wall / CPU)")
    opts = session_options(threads, spinning=False)
    wall, cpu = rates(OnnxModel(path, options=opts), batch, size, seconds)
    print(f"  opt=all       no spinning       {wall:6.0f} /{cpu:5.0f} evals/s (wall / CPU)")


def measure(quick: bool) -> dict[str, tuple[float, str]]:
    """Figures for `python -m dosaku.bench`: b6c96 evaluations/s by size, batch and threads."""
    if not B6C96_MODEL.exists():
        raise Skip(f"no network at {B6C96_MODEL}")
    path = onnx_for(B6C96_MODEL)
    seconds = 0.6 if quick else 1.5
    figures = {}
    for threads in (1, 2):
        model = OnnxModel(path, threads=threads)
        for size in (9, 19):
            for batch in (1, 16):
                wall, _ = rates(model, batch, size, seconds)
                name = f"b6c96 {size}x{size} batch {batch}, {threads} thread(s)"
                figures[name] = (wall, "evals/s")
    return figures


def parallel_rate(models: list[OnnxModel], batch: int, size: int, seconds: float) -> float:
    """Evaluations per wall second of the models running side by side, one thread each, as
    the engine's evaluator keeps two calls in flight."""
    evaluations, wall, _ = parallel_runs(models, batch, size, seconds)
    return evaluations / wall


def parallel_runs(models: list[OnnxModel], batch: int, size: int,
                  seconds: float) -> tuple[int, float, float]:
    """(evaluations, wall seconds, CPU seconds of this process) of the models running side by
    side for about `seconds`, one thread each, after one warm-up call each."""
    spatial, glob = inputs(models[0], batch, size, np.random.default_rng(0))
    for model in models:
        model.run(spatial, glob)
    runs = [0] * len(models)
    stop = time.perf_counter() + seconds

    def work(k):
        while time.perf_counter() < stop:
            models[k].run(spatial, glob)
            runs[k] += 1
    start, cpu_start = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(models))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return batch * sum(runs), time.perf_counter() - start, time.process_time() - cpu_start


def measure_transformer(quick: bool) -> dict[str, tuple[float, str]]:
    """Figures for `python -m dosaku.bench`: b10c384h6nbttflrs evaluations/s by size, float32 and
    int8, two one-thread sessions at once, batches of 16."""
    if not B10_MODEL.exists():
        raise Skip(f"no transformer net at {B10_MODEL} (weights/ is incomplete)")
    path = onnx_for(B10_MODEL)
    copies = {"float32": path, "int8": int8_for(path)}
    seconds = 3.0 if quick else 12.0
    figures = {}
    for kind, model in copies.items():
        if model is None:
            continue  # int8_for said why on stderr
        sessions = [OnnxModel(model, threads=1) for _ in range(2)]
        for size in (9, 19):
            rate = parallel_rate(sessions, 16, size, seconds)
            figures[f"b10c384h6 transformer {size}x{size} batch 16, 2 x 1 thread, {kind}"] = (
                rate, "evals/s")
    return figures


def compare(paths: list[str], sizes, rounds: int, seconds: float) -> None:
    """Evaluations of each ONNX file per wall second and per CPU second of this process,
    interleaved round by round; medians with the spread. On busy cores the CPU-second rate is
    the steadier one: it counts only the time the sessions ran."""
    sessions = {p: [OnnxModel(p, threads=1) for _ in range(2)] for p in paths}
    for size in sizes:
        wall, cpu = ({p: [] for p in paths} for _ in range(2))
        for _ in range(rounds):
            for p in paths:
                evaluations, wall_s, cpu_s = parallel_runs(sessions[p], 16, size, seconds)
                wall[p].append(evaluations / wall_s)
                cpu[p].append(evaluations / cpu_s)
        print(f"{size}x{size}, batch 16, 2 x 1 thread, {rounds} rounds of {seconds:g} s, "
              "evaluations per wall second | per CPU second (median, min-max, against the first):")
        firsts = statistics.median(wall[paths[0]]), statistics.median(cpu[paths[0]])
        for p in paths:
            cells = []
            for got, first in zip((wall[p], cpu[p]), firsts):
                median = statistics.median(got)
                cells.append(f"{median:7.2f} ({min(got):.2f}-{max(got):.2f}, "
                             f"{median / first:.3f}x)")
            print(f"  {' | '.join(cells)}  {p}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(B6C96_MODEL))
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8, 16, 32])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--compare", nargs="+", metavar="ONNX", help="ONNX files to compare")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of --compare")
    args = ap.parse_args()
    if args.compare:
        compare(args.compare, args.sizes, args.rounds, args.seconds)
        return
    path = onnx_for(args.model)
    table(path, args.sizes, args.batches, args.threads, args.seconds)
    if args.variants:
        variants(path, 19, 16, 1, args.seconds)


if __name__ == "__main__":
    main()
