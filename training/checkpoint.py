"""Training checkpoints: one file per saved step under RUN_DIR/checkpoints, written atomically.

A checkpoint holds everything a resumed run needs to continue as if never stopped: the net's
size and weights, the optimizer state, the step, and the states of the random generators
(batch sampling and augmentation). Only plain containers and tensors, so it loads with
torch.load(weights_only=True).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import torch

FORMAT = 1
_FILE = re.compile(r"^step-(\d+)\.pt$")


class CheckpointError(ValueError):
    """No usable checkpoint where one was expected."""


def checkpoint_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / "checkpoints"


def checkpoints(run_dir: str | Path) -> list[Path]:
    """The run's checkpoint files, oldest step first."""
    folder = checkpoint_dir(run_dir)
    found = [(int(m[1]), p) for p in folder.glob("step-*.pt") if (m := _FILE.match(p.name))]
    return [p for _, p in sorted(found)]


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    found = checkpoints(run_dir)
    return found[-1] if found else None


def resolve_checkpoint(path: str | Path) -> Path:
    """A checkpoint file as given, or the latest one of a run directory."""
    path = Path(path)
    if path.is_dir():
        latest = latest_checkpoint(path)
        if latest is None:
            raise CheckpointError(f"{path}: no checkpoints under {checkpoint_dir(path)}")
        return latest
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint")
    return path


def save_checkpoint(run_dir: str | Path, state: dict, keep: int = 3) -> Path:
    """Write state as checkpoints/step-<step>.pt via a temporary file and a rename (a crash
    never leaves a partial checkpoint), then delete all but the newest `keep`."""
    folder = checkpoint_dir(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"step-{state['step']:09d}.pt"
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".pt.tmp")
    os.close(fd)
    try:
        torch.save({"format": FORMAT, **state}, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    for old in checkpoints(run_dir)[:-keep]:
        old.unlink()
    return path


def load_checkpoint(path: str | Path) -> dict:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many kinds for a damaged file
        raise CheckpointError(f"{path}: unreadable checkpoint ({err})") from err
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a Dosaku training checkpoint (format {FORMAT})")
    return state

