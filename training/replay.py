"""The replay window: the newest training rows, pooled by board size, sampled into batches.

Each `--data` folder contributes its newest `window` rows (training.chunks.load_chunks; bad
chunks are reported and skipped there, chunks of another feature set here). A batch holds rows
of one board size, the size drawn in proportion to its rows, the rows drawn uniformly; each row
gets a random symmetry of the board (one of 8, or of the 4 without a transpose on a rectangular
board) applied to its input planes, policy and ownership targets alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from dosaku.engine.evaluators.features import FEATURE_SET, NUM_GLOBAL, NUM_SPATIAL
from dosaku.engine.evaluators.onnx_evaluator import apply_symmetry
from dosaku.training.chunks import TEACHER_KEYS, Rows, load_chunks


@dataclass
class Pool:
    """All rows of one board size; teacher arrays are zero where `has_teacher` is 0."""
    rows: Rows
    has_teacher: np.ndarray  # float32 [N]


@dataclass
class Batch:
    """Tensors of one batch (chunks.py names; teacher_* zero where has_teacher is 0)."""
    spatial: torch.Tensor
    global_in: torch.Tensor
    policy: torch.Tensor
    policy_weight: torch.Tensor
    value: torch.Tensor
    score: torch.Tensor
    ownership: torch.Tensor  # [n, H, W]
    has_teacher: torch.Tensor
    teacher_policy: torch.Tensor
    teacher_value: torch.Tensor
    teacher_score: torch.Tensor
    teacher_ownership: torch.Tensor  # [n, H, W]


def usable(rows: Rows) -> str | None:
    """Why a chunk's rows cannot feed this net, or None."""
    if rows.feature_set != FEATURE_SET or rows.num_spatial != NUM_SPATIAL \
            or rows.global_in.shape[1] != NUM_GLOBAL:
        return (f"feature set {rows.feature_set!r} with {rows.num_spatial} planes and "
                f"{rows.global_in.shape[1]} globals, the net takes {FEATURE_SET} "
                f"({NUM_SPATIAL}, {NUM_GLOBAL})")
    return None


def _pool(parts: list[Rows]) -> Pool:
    """Concatenate the rows of one board size (zero teacher targets for rows without)."""
    first = parts[0]

    def cat(get):
        return np.concatenate([get(p) for p in parts])

    def teacher_rows(p: Rows, key: str) -> np.ndarray:  # zeros where a part has no teacher
        return p.teacher[key] if p.teacher else \
            np.zeros_like(getattr(p, key.removeprefix("teacher_")))

    teacher = {}
    if any(p.teacher for p in parts):
        teacher = {key: np.concatenate([teacher_rows(p, key) for p in parts])
                   for key in TEACHER_KEYS}
    rows = Rows(first.height, first.width, first.num_spatial, first.feature_set,
                cat(lambda p: p.spatial_bits), cat(lambda p: p.global_in),
                cat(lambda p: p.policy), cat(lambda p: p.policy_weight),
                cat(lambda p: p.value), cat(lambda p: p.score), cat(lambda p: p.ownership),
                teacher)
    return Pool(rows, cat(lambda p: np.full(len(p), float(bool(p.teacher)), np.float32)))


class ReplayWindow:
    """Rows by board size (height, width) and batch sampling with symmetry augmentation."""

    def __init__(self, chunks: list[Rows], log=print):
        by_size: dict[tuple[int, int], list[Rows]] = {}
        for rows in chunks:
            reason = usable(rows)
            if reason:
                log(f"skipping chunk of {len(rows)} rows: {reason}")
                continue
            by_size.setdefault((rows.height, rows.width), []).append(rows)
        self.pools = {size: _pool(parts) for size, parts in sorted(by_size.items())}
        self.sizes = list(self.pools)
        counts = np.array([len(p.rows) for p in self.pools.values()], np.float64)
        self.size_probs = counts / counts.sum() if len(counts) else counts

    @classmethod
    def load(cls, folders, window: int | None, log=print) -> ReplayWindow:
        """The newest `window` rows of each folder (all rows when window is None)."""
        chunks = []
        for folder in folders:
            chunks += load_chunks(folder, window, log)
        return cls(chunks, log)

    def __len__(self) -> int:
        return sum(len(p.rows) for p in self.pools.values())

    def describe(self) -> str:
        parts = [f"{len(p.rows)} rows {h}x{w}" + (f" ({int(p.has_teacher.sum())} with teacher)"
                                                  if p.has_teacher.any() else "")
                 for (h, w), p in self.pools.items()]
        return ", ".join(parts) or "no rows"

    def sample(self, rng: np.random.Generator, batch_size: int) -> Batch:
        """A batch of one board size: the size by row count, rows uniformly (with replacement),
        a random symmetry per row."""
        size = self.sizes[rng.choice(len(self.sizes), p=self.size_probs)]
        pool = self.pools[size]
        idx = rng.integers(0, len(pool.rows), batch_size)
        syms = rng.integers(0, 8 if size[0] == size[1] else 4, batch_size)
        return rows_batch(pool, idx, syms)


def rows_batch(pool: Pool, idx: np.ndarray, syms: np.ndarray | None = None) -> Batch:
    """The chosen rows of a pool as tensors, row i moved by symmetry syms[i] (none if None)."""
    rows, n = pool.rows, len(idx)
    h, w = rows.height, rows.width
    t = rows.teacher
    arrays = {
        "spatial": rows.spatial(idx), "global_in": rows.global_in[idx],
        "policy": rows.policy[idx], "policy_weight": rows.policy_weight[idx],
        "value": rows.value[idx], "score": rows.score[idx],
        "ownership": rows.ownership[idx].reshape(n, h, w), "has_teacher": pool.has_teacher[idx],
        "teacher_policy": t["teacher_policy"][idx] if t else np.zeros((n, h * w + 1)),
        "teacher_value": t["teacher_value"][idx] if t else np.zeros((n, 3)),
        "teacher_score": t["teacher_score"][idx] if t else np.zeros(n),
        "teacher_ownership": t["teacher_ownership"][idx].reshape(n, h, w) if t else
        np.zeros((n, h, w)),
    }
    if syms is not None:
        _augment(arrays, syms, h, w)
    return Batch(**{key: torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))
                    for key, a in arrays.items()})


def _augment(arrays: dict, syms: np.ndarray, h: int, w: int) -> None:
    """Move every board-shaped array of row i by symmetry syms[i], in place (pass unchanged)."""
    for s in np.unique(syms[syms != 0]):
        sel = syms == s
        for key in ("spatial", "ownership", "teacher_ownership"):
            arrays[key][sel] = apply_symmetry(arrays[key][sel], int(s))
        for key in ("policy", "teacher_policy"):
            board = arrays[key][sel, :-1].reshape(-1, h, w)
            arrays[key][sel, :-1] = apply_symmetry(board, int(s)).reshape(len(board), -1)
