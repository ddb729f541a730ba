"""Training speed: samples per second of full training steps (batch sampling with symmetry
augmentation, forward, loss, backward, SGD update) by net size and board size.

    python -m dosaku.bench.train [--nets b4c64 b6c96] [--sizes 9 19] [--batch 128]
                                       [--steps 4] [--threads 1 0] [--bf16]

Rows are random (binary planes on a full board, random targets): the speed of a step does not
depend on their content. Each figure is the best step after a warm-up step (the cores are
shared, so the best step is the least disturbed one), per wall second and per CPU second of
this process; threads 0 = all cores. With one thread the CPU-second rate is the speed on an
idle core whatever the load; several threads suffer badly when other processes load the cores
(OpenMP workers wait for each other, spinning), so their figures need a quiet machine.
"""

import argparse
import time

import numpy as np

from dosaku.engine.evaluators.features import FEATURE_SET, NUM_GLOBAL, NUM_SPATIAL
from dosaku.training.chunks import Rows, pack_spatial
from dosaku.training.model import build_net
from dosaku.training.replay import ReplayWindow
from dosaku.training.train import TrainConfig, Trainer, choose_device, set_threads


def random_rows(size: int, n: int, rng: np.random.Generator) -> Rows:
    area = size * size
    spatial = (rng.random((n, NUM_SPATIAL, size, size)) < 0.2).astype(np.float32)
    spatial[:, 0] = 1.0
    value = np.zeros((n, 3), np.float32)
    value[np.arange(n), rng.integers(0, 2, n)] = 1.0
    return Rows(size, size, NUM_SPATIAL, FEATURE_SET, pack_spatial(spatial),
                rng.normal(0, 0.5, (n, NUM_GLOBAL)).astype(np.float32),
                rng.dirichlet(np.ones(area + 1), n).astype(np.float32), np.ones(n, np.float32),
                value, rng.normal(0, 10, n).astype(np.float32),
                rng.choice([-1.0, 1.0], (n, area)).astype(np.float32))


def samples_per_second(net_name: str, size: int, batch: int, steps: int,
                       bf16: bool = False) -> tuple[float, float]:
    """(samples per wall second, per CPU second), each the best of `steps` steps."""
    rng = np.random.default_rng(0)
    window = ReplayWindow([random_rows(size, 4 * batch, rng)], log=lambda _: None)
    config = TrainConfig(data=[], out="", net=net_name, batch=batch, bf16=bf16)
    trainer = Trainer(build_net(net_name, 0), config, choose_device(config.device))
    trainer.step(window.sample(rng, batch), 0)  # warm-up
    wall = cpu = 0.0
    for step in range(1, steps + 1):
        start, cpu_start = time.perf_counter(), time.process_time()
        trainer.step(window.sample(rng, batch), step)
        wall = max(wall, batch / (time.perf_counter() - start))
        cpu = max(cpu, batch / max(time.process_time() - cpu_start, 1e-9))
    return wall, cpu


def measure(quick: bool) -> dict[str, tuple[float, str]]:
    """Figures for `python -m dosaku.bench`: b4c64 and b6c96 on 9x9 and 19x19, batch 128, on one
    thread (per wall and per CPU second) and on all cores (per wall second)."""
    steps = 1 if quick else 3
    figures = {}
    for threads in (1, 0):
        n = set_threads(threads)
        for net in ("b4c64", "b6c96"):
            for size in (9, 19):
                wall, cpu = samples_per_second(net, size, 128, steps)
                figures[f"{net} {size}x{size} batch 128, {n} thread(s)"] = (wall, "samples/s")
                if threads == 1:
                    figures[f"{net} {size}x{size} batch 128, per CPU second"] = (cpu, "samples/s")
    return figures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nets", nargs="+", default=["b4c64", "b6c96"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=4, help="timed steps per cell")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 0],
                    help="torch thread counts (0 = all cores)")
    ap.add_argument("--bf16", action="store_true", help="bfloat16 autocast forward pass")
    args = ap.parse_args()
    print(f"training samples/s (per wall second / per CPU second), best of {args.steps} steps, "
          f"batch {args.batch}, device {choose_device('auto')}{', bf16' if args.bf16 else ''}")
    for threads in args.threads:
        n = set_threads(threads)
        for net in args.nets:
            for size in args.sizes:
                wall, cpu = samples_per_second(net, size, args.batch, args.steps, args.bf16)
                print(f"{net:>8} {size:>2}x{size:<2} {n} thread(s) {wall:8.1f} / {cpu:6.1f}")


if __name__ == "__main__":
    main()
