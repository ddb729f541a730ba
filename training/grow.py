"""Deepen a trained net: a checkpoint of bXcY becomes one of bZcY (Z > X) computing the same
function, so a deeper student starts where the shallower one stands instead of from scratch.

The old blocks keep their places and weights. Block types depend only on the index (every
third block from the second pools globally), so the first X blocks of bZcY have the types of
bXcY's; the added blocks come after them with their residual branch's last convolution at
zero, as a fresh net's do (training/model.py), and are the identity until trained. Heads, tip
and input layers are copied.

The new checkpoint keeps the step and the sampling generators and starts the trainer's optimizer
afresh (there is no momentum for the new weights), in the trainer's own checkpoint layout:

    python -m dosaku.training.grow CHECKPOINT|RUN_DIR --net b10c96 OUT_RUN_DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from dosaku.training.checkpoint import (
    CheckpointError,
    latest_checkpoint,
    load_checkpoint,
    resolve_checkpoint,
    save_checkpoint,
)
from dosaku.training.model import DosakuNet, build_net, net_config
from dosaku.training.train import TrainConfig, Trainer


def deepen(net: DosakuNet, name: str, seed: int = 0) -> DosakuNet:
    """A net of size `name` (more blocks, same channels) that computes what `net` computes."""
    old, new = net.config, net_config(name)
    if new.channels != old.channels or new.blocks <= old.blocks:
        raise ValueError(f"{old.name} grows into more blocks of {old.channels} channels, "
                         f"not into {name}")
    grown = build_net(name, seed)
    missing, unexpected = grown.load_state_dict(net.state_dict(), strict=False)
    added = tuple(f"blocks.{i}." for i in range(old.blocks, new.blocks))
    if unexpected or any(not key.startswith(added) for key in missing):
        raise ValueError(f"{old.name} and {name} differ beyond the added blocks")
    return grown


def grow_checkpoint(source: str | Path, name: str, out_run: str | Path) -> Path:
    """Write OUT_RUN/checkpoints/step-<step>.pt holding the deepened net of `source`."""
    state = load_checkpoint(resolve_checkpoint(source))
    if latest_checkpoint(out_run) is not None:
        raise CheckpointError(f"{out_run} already has checkpoints; choose another run folder")
    net = build_net(state["net"])
    net.load_state_dict(state["model"])
    grown = deepen(net, name, seed=int(state["step"]))
    trainer = Trainer(grown, TrainConfig(data=[], out=str(out_run), net=name),
                      torch.device("cpu"))
    rng = np.random.default_rng()
    rng.bit_generator.state = state["rng"]
    return save_checkpoint(out_run, {
        **trainer.state(int(state["step"]), rng), "torch_rng": state["torch_rng"],
        "config": dict(state.get("config", {}), net=name)})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dosaku.training.grow",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("source", help="checkpoint file, or a run folder (its latest)")
    ap.add_argument("--net", required=True, help="the deeper size, e.g. b10c96")
    ap.add_argument("out", help="run folder for the grown checkpoint (new)")
    a = ap.parse_args(argv)
    try:
        path = grow_checkpoint(a.source, a.net, a.out)
    except (CheckpointError, ValueError) as err:
        print(f"grow failed: {err}", file=sys.stderr)
        return 1
    print(f"{path}: {a.net}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
