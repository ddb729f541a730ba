"""Train a DosakuNet on the replay window of one or more chunk folders.

    python -m dosaku.training.train --data DIR [--data DIR2 ...] --net b4c64 --out RUN_DIR --steps N
                             [--batch 128] [--lr 0.02] [--teacher 0.5] [--resume]

RUN_DIR receives checkpoints/step-*.pt (every --checkpoint-every steps and at the end, written
atomically, the newest --keep kept), losses.csv (one row per step) and losses.png. With
--resume the run continues from its latest checkpoint: weights, optimizer state, step and the
sampling generator, so an interrupted run ends where an uninterrupted one would (on the same
data and thread count). --steps is the run's total, so a training loop calls the same RUN_DIR
with a larger --steps and --resume each generation, on a freshly loaded window.

SGD with Nesterov momentum, a linear learning-rate warm-up, the loss of training/losses.py.
CPU by default with all cores (--threads), CUDA when available.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from dosaku.training.checkpoint import (
    CheckpointError,
    latest_checkpoint,
    load_checkpoint,
    save_checkpoint,
)
from dosaku.training.loss_log import LossLog, plot_losses
from dosaku.training.losses import LossWeights, loss_terms, total_loss
from dosaku.training.model import DosakuNet, build_net, decayed_parameters, parameter_count
from dosaku.training.replay import Batch, ReplayWindow


class TrainError(RuntimeError):
    """The run cannot start or continue (no data, wrong checkpoint, diverged)."""


@dataclass
class TrainConfig:
    data: list[str]  # chunk folders (training/chunks.py), each with its manifest
    out: str  # run directory
    net: str = "b4c64"  # net size by name (training/model.py)
    steps: int = 1000  # total steps of the run (a resumed run trains up to this)
    batch: int = 128
    lr: float = 0.02
    momentum: float = 0.9
    warmup: int = 200  # steps of linear learning-rate warm-up from 0
    window: int | None = 250_000  # newest rows per data folder (None: all)
    checkpoint_every: int = 500
    keep: int = 3  # checkpoints kept
    threads: int = 0  # torch CPU threads; 0 = all cores
    seed: int = 0  # initial weights, batch sampling and symmetries
    resume: bool = False
    device: str = "auto"  # auto (cuda when available), cpu, cuda
    bf16: bool = False  # forward pass under bfloat16 autocast (weights and loss stay float32)
    weights: LossWeights = field(default_factory=LossWeights)
    progress: bool = True  # tqdm bar on stderr


@dataclass
class TrainResult:
    step: int
    checkpoint: Path
    losses: dict[str, float]  # the last step's terms and total


def set_threads(threads: int) -> int:
    """Use `threads` CPU threads in torch (0 = all cores); returns the number set."""
    torch.set_num_threads(threads or os.cpu_count() or 1)
    return torch.get_num_threads()


def choose_device(name: str) -> torch.device:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


class Trainer:
    """The net, its optimizer and one training step."""

    def __init__(self, net: DosakuNet, config: TrainConfig, device: torch.device):
        self.net = net.to(device)
        self.config = config
        self.device = device
        self.decayed = decayed_parameters(net)
        self.optimizer = torch.optim.SGD(net.parameters(), lr=config.lr,
                                         momentum=config.momentum, nesterov=True)

    def learning_rate(self, step: int) -> float:
        """The rate for step number `step` (0-based): linear warm-up, then constant."""
        return self.config.lr * min(1.0, (step + 1) / max(1, self.config.warmup))

    def _losses(self, batch: Batch) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        batch = Batch(**{k: v.to(self.device) for k, v in vars(batch).items()})
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.config.bf16):
            outputs = self.net(batch.spatial, batch.global_in)
        terms = loss_terms([o.float() for o in outputs], batch, self.config.weights,
                           self.decayed)
        return terms, total_loss(terms, self.config.weights)

    def step(self, batch: Batch, step: int) -> dict[str, float]:
        """One SGD step on `batch`; returns each loss term and the total (before the update)."""
        for group in self.optimizer.param_groups:
            group["lr"] = self.learning_rate(step)
        self.net.train()
        terms, total = self._losses(batch)
        if not torch.isfinite(total):
            raise TrainError(f"the loss is {total.item()} at step {step + 1}; the checkpoints "
                             f"written so far are intact (try a lower --lr)")
        self.optimizer.zero_grad(set_to_none=True)
        total.backward()
        self.optimizer.step()
        return _values(terms, total)

    def evaluate(self, batch: Batch) -> dict[str, float]:
        """The loss terms and total on `batch`, without training."""
        self.net.eval()
        with torch.no_grad():
            return _values(*self._losses(batch))

    def state(self, step: int, rng: np.random.Generator) -> dict:
        return {"net": self.net.config.name, "step": step, "model": self.net.state_dict(),
                "optimizer": self.optimizer.state_dict(), "rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "config": json.loads(json.dumps(asdict(self.config), default=str))}

    def restore(self, state: dict, rng: np.random.Generator) -> int:
        """Load a checkpoint's weights, optimizer state and generators; returns its step."""
        self.net.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        return int(state["step"])


def _values(terms: dict[str, torch.Tensor], total: torch.Tensor) -> dict[str, float]:
    return {**{k: v.item() for k, v in terms.items()}, "total": total.item()}


def train(config: TrainConfig, log=print) -> TrainResult:
    """Run (or resume) training up to config.steps; returns the final step and checkpoint."""
    set_threads(config.threads)
    run_dir = Path(config.out)
    run_dir.mkdir(parents=True, exist_ok=True)
    latest = latest_checkpoint(run_dir)
    if latest is not None and not config.resume:
        raise TrainError(f"{run_dir} already has checkpoints (latest {latest.name}); pass "
                         f"--resume to continue that run or choose another --out")
    window = ReplayWindow.load(config.data, config.window, log)
    if not len(window):
        raise TrainError(f"no usable training rows in {', '.join(map(str, config.data))}")
    log(f"replay window: {window.describe()}")
    device = choose_device(config.device)
    trainer = Trainer(build_net(config.net, config.seed), config, device)
    log(f"{config.net}: {parameter_count(trainer.net):,} parameters, on {device.type} with "
        f"{torch.get_num_threads()} thread(s)")
    rng = np.random.default_rng(config.seed)
    step = 0
    if latest is not None:
        state = load_checkpoint(latest)
        if state["net"] != config.net:
            raise CheckpointError(f"{latest} holds a {state['net']} net, not {config.net}")
        step = trainer.restore(state, rng)
        log(f"resuming from {latest} at step {step}")
    losses_csv = run_dir / "losses.csv"
    record = LossLog(losses_csv, resume_step=step)
    checkpoint = latest
    last: dict[str, float] = {}
    bar = tqdm(total=config.steps, initial=step, unit="step", disable=not config.progress,
               desc=f"{config.net} on {device.type}", file=sys.stderr)
    try:
        while step < config.steps:
            start = time.perf_counter()
            last = trainer.step(window.sample(rng, config.batch), step)
            rate = config.batch / (time.perf_counter() - start)
            lr = trainer.learning_rate(step)
            step += 1
            record.append({"step": step, "lr": lr, "samples_per_s": rate, **last})
            bar.update(1)
            bar.set_postfix(loss=f"{last['total']:.3f}", samples_s=f"{rate:.0f}")
            if step % config.checkpoint_every == 0 or step == config.steps:
                checkpoint = save_checkpoint(run_dir, trainer.state(step, rng), config.keep)
                plot_losses(losses_csv, run_dir / "losses.png")
    finally:
        bar.close()
        record.close()
    if checkpoint is None:
        raise TrainError(f"{run_dir}: nothing to train (--steps {config.steps})")
    return TrainResult(step, checkpoint, last)


def parse_args(argv=None) -> TrainConfig:
    d = TrainConfig(data=[], out="")
    w = LossWeights()
    ap = argparse.ArgumentParser(prog="python -m dosaku.training.train",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--data", action="append", required=True, metavar="DIR",
                    help="chunk folder (repeat for several)")
    ap.add_argument("--out", required=True, metavar="RUN_DIR", help="run directory")
    ap.add_argument("--net", default=d.net, help=f"net size bXcY (default {d.net})")
    ap.add_argument("--steps", type=int, default=d.steps, help="total steps of the run")
    ap.add_argument("--batch", type=int, default=d.batch)
    ap.add_argument("--lr", type=float, default=d.lr)
    ap.add_argument("--momentum", type=float, default=d.momentum)
    ap.add_argument("--warmup", type=int, default=d.warmup, help="warm-up steps")
    ap.add_argument("--window", type=int, default=d.window,
                    help=f"newest rows per data folder, 0 = all (default {d.window})")
    ap.add_argument("--checkpoint-every", type=int, default=d.checkpoint_every)
    ap.add_argument("--keep", type=int, default=d.keep, help="checkpoints kept")
    ap.add_argument("--threads", type=int, default=d.threads, help="CPU threads (0 = all)")
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--device", default=d.device, choices=["auto", "cpu", "cuda"])
    ap.add_argument("--bf16", action="store_true",
                    help="bfloat16 autocast for the forward pass (faster on CPUs with "
                         "AVX512-BF16 and on GPUs)")
    ap.add_argument("--teacher", type=float, default=w.teacher,
                    help="mixing weight of teacher targets on rows that have them (0-1)")
    ap.add_argument("--l2", type=float, default=w.l2, help="c in c*||theta||^2")
    ap.add_argument("--value-loss", type=float, default=w.value,
                    help=f"weight of the value terms, the teacher's included (default {w.value:g})")
    ap.add_argument("--lead-loss", type=float, default=w.lead,
                    help=f"weight of the score-lead terms, the teacher's included "
                         f"(default {w.lead:g})")
    ap.add_argument("--teacher-score-mean", action="store_true",
                    help="the score-mean column learns the teacher's lead at the --teacher "
                         "weight too (default: the final score alone)")
    ap.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    a = ap.parse_args(argv)
    for name in ("steps", "batch", "checkpoint_every", "keep"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("value_loss", "lead_loss"):
        if getattr(a, name) < 0:
            ap.error(f"--{name.replace('_', '-')} must not be negative")
    try:
        weights = LossWeights(teacher=a.teacher, l2=a.l2, value=a.value_loss, lead=a.lead_loss,
                              teacher_score_mean=a.teacher_score_mean)
    except ValueError as err:
        ap.error(str(err))
    return TrainConfig(a.data, a.out, a.net, a.steps, a.batch, a.lr, a.momentum, a.warmup,
                       a.window or None, a.checkpoint_every, a.keep, a.threads, a.seed,
                       a.resume, a.device, a.bf16, weights, not a.no_progress)


def main(argv=None) -> int:
    config = parse_args(argv)
    try:
        result = train(config)
    except (TrainError, CheckpointError, ValueError) as err:
        print(f"training failed: {err}", file=sys.stderr)
        return 1
    print(f"step {result.step}: loss {result.losses.get('total', math.nan):.4f}, "
          f"checkpoint {result.checkpoint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
