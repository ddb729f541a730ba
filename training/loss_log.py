"""The run's loss record: one CSV row per training step, and a PNG of the curves per term.

A resumed run first drops the rows after its checkpoint's step (they are trained again), so
the file always describes one uninterrupted history.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from dosaku.training.losses import TERMS

COLUMNS = ("step", "lr", "samples_per_s", *TERMS, "total")


class LossLog:
    """Appends rows to `path`, keeping earlier rows up to `resume_step`."""

    def __init__(self, path: str | Path, resume_step: int = 0):
        self.path = Path(path)
        kept = [r for r in read_log(self.path) if int(r["step"]) <= resume_step] \
            if self.path.exists() else []
        tmp = self.path.with_suffix(".csv.tmp")
        with open(tmp, "w", newline="") as f:
            writer = csv.DictWriter(f, COLUMNS)
            writer.writeheader()
            writer.writerows(kept)
        os.replace(tmp, self.path)
        self._file = open(self.path, "a", newline="")
        self._writer = csv.DictWriter(self._file, COLUMNS)

    def append(self, row: dict) -> None:
        self._writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                               for k, v in row.items()})
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_log(path: str | Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def plot_losses(csv_path: str | Path, png_path: str | Path) -> Path | None:
    """One panel per term that is ever nonzero (total first): each step faint, a moving average
    over about 2% of the run on top. Returns the PNG path, or None before the first row."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    rows = read_log(csv_path)
    if not rows:
        return None
    steps = np.array([int(r["step"]) for r in rows])
    names = [n for n in ("total", *TERMS)
             if any(float(r[n]) != 0.0 for r in rows)]
    cols = 3
    nrows = -(-len(names) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 2.6 * nrows), squeeze=False)
    width = max(1, len(rows) // 50)
    for ax, name in zip(axes.flat, names):
        values = np.array([float(r[name]) for r in rows])
        ax.plot(steps, values, color="tab:blue", alpha=0.25, linewidth=0.8)
        if len(values) >= width > 1:
            smooth = np.convolve(values, np.ones(width) / width, mode="valid")
            ax.plot(steps[width - 1:], smooth, color="tab:blue", linewidth=1.5)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=8)
    for ax in axes.flat[len(names):]:
        ax.axis("off")
    fig.tight_layout()
    png_path = Path(png_path)
    tmp = png_path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    os.replace(tmp, png_path)
    return png_path
