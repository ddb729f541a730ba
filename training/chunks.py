"""Training rows on disk: compressed chunk files plus a manifest, and their validation.

One chunk holds the rows of some games on one board size. Every array is row-aligned:

  spatial_bits      uint8 [N, ceil(C*H*W/8)]  np.packbits of the binary input planes [C, H, W]
                                              (engine.evaluators.features, the model's feature set)
  global            float32 [N, G]            global inputs (komi, rules, passes ...)
  policy            float32 [N, H*W+1]        search policy target π (pass last), sums to 1
  policy_weight     float32 [N]               0 for moves whose search is not a policy target
                                              (fast searches of playout cap randomization)
  value             float32 [N, 3]            outcome z as (win, loss, no-result) of the side to
                                              move; a draw is (0.5, 0.5, 0)
  score             float32 [N]               final score lead of the side to move (points)
  ownership         float32 [N, H*W]          final ownership: +1 side to move, -1 opponent, 0
  teacher_policy    float32 [N, H*W+1]        teacher mode only: the teacher's raw policy
  teacher_value     float32 [N, 3]            ... its (win, loss, no-result) probabilities
  teacher_score     float32 [N]               ... its score lead
  teacher_ownership float32 [N, H*W]          ... its ownership in [-1, 1]

plus the scalars `board_size` (H, W), `feature_set` and `version`. The manifest
(`manifest.json` in the same folder) lists every chunk with its row count, board size, source
and sha256, so a reader can refuse a chunk that was truncated or changed after writing.

Branch rows (source "branch", training.selfplay --branch-out) are positions a move off a game
line: no game ends them, so policy, value, score and ownership hold the teacher's own outputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
TEACHER_KEYS = ("teacher_policy", "teacher_value", "teacher_score", "teacher_ownership")


class ChunkError(ValueError):
    """A chunk that must not be trained on: unreadable, truncated, altered or inconsistent."""


@dataclass
class Rows:
    """The rows of one chunk in memory (see the module docstring for shapes)."""
    height: int
    width: int
    num_spatial: int
    feature_set: str
    spatial_bits: np.ndarray
    global_in: np.ndarray
    policy: np.ndarray
    policy_weight: np.ndarray
    value: np.ndarray
    score: np.ndarray
    ownership: np.ndarray
    teacher: dict[str, np.ndarray] = field(default_factory=dict)  # TEACHER_KEYS, or empty

    def __len__(self) -> int:
        return len(self.policy)

    def spatial(self, rows=slice(None)) -> np.ndarray:
        """Unpacked input planes float32 [n, C, H, W] of the chosen rows."""
        bits = self.spatial_bits[rows]
        n_values = self.num_spatial * self.height * self.width
        planes = np.unpackbits(bits, axis=1, count=n_values)
        shape = (len(bits), self.num_spatial, self.height, self.width)
        return planes.reshape(shape).astype(np.float32)


def pack_spatial(spatial: np.ndarray) -> np.ndarray:
    """Pack binary planes [N, C, H, W] into bits; refuses planes that are not 0/1."""
    flat = spatial.reshape(len(spatial), -1)
    if not np.all((flat == 0) | (flat == 1)):
        raise ValueError("input planes must be binary (0/1) to be packed")
    return np.packbits(flat.astype(np.uint8), axis=1)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check(rows: Rows, where: str) -> None:
    """Shapes, finiteness and probability sums: everything a trainer relies on."""
    n, area = len(rows.policy), rows.height * rows.width
    expect = {
        "spatial_bits": (n, -(-rows.num_spatial * area // 8)),
        "policy": (n, area + 1), "policy_weight": (n,), "value": (n, 3), "score": (n,),
        "ownership": (n, area),
        "teacher_policy": (n, area + 1), "teacher_value": (n, 3), "teacher_score": (n,),
        "teacher_ownership": (n, area),
    }
    arrays = {"spatial_bits": rows.spatial_bits, "policy": rows.policy,
              "policy_weight": rows.policy_weight, "value": rows.value, "score": rows.score,
              "ownership": rows.ownership, **rows.teacher}
    if rows.teacher and set(rows.teacher) != set(TEACHER_KEYS):
        raise ChunkError(f"{where}: teacher targets incomplete: {sorted(rows.teacher)}")
    for name, array in arrays.items():
        if array.shape != expect[name]:
            raise ChunkError(f"{where}: {name} has shape {array.shape}, expected {expect[name]}")
        if array.dtype != np.uint8 and not np.all(np.isfinite(array)):
            raise ChunkError(f"{where}: {name} holds NaN or infinite values")
    if rows.global_in.shape[0] != n or rows.global_in.ndim != 2:
        raise ChunkError(f"{where}: global has shape {rows.global_in.shape} for {n} rows")
    for name in ("policy", "value", "teacher_policy", "teacher_value"):
        array = arrays.get(name)
        if array is None:
            continue
        weighted = rows.policy_weight > 0 if name == "policy" else slice(None)
        sums = array[weighted].sum(axis=1)
        if np.any(array < -1e-6) or not np.allclose(sums, 1.0, atol=1e-3):
            raise ChunkError(f"{where}: {name} rows are not probability distributions")


def write_chunk(folder: str | Path, name: str, rows: Rows, source: str, **info) -> dict:
    """Write `rows` as folder/name (.npz) atomically and add it to the manifest.

    `source` says how the rows were made ("selfplay", "teacher"); `info` (games, network,
    generation ...) is kept in the manifest entry, which is returned.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    _check(rows, name)
    path = folder / name
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(
        tmp, version=FORMAT_VERSION, feature_set=rows.feature_set,
        board_size=np.array([rows.height, rows.width]), num_spatial=rows.num_spatial,
        spatial_bits=rows.spatial_bits, **{"global": rows.global_in}, policy=rows.policy,
        policy_weight=rows.policy_weight, value=rows.value, score=rows.score,
        ownership=rows.ownership, **rows.teacher)
    os.replace(tmp, path)
    entry = {"file": name, "rows": len(rows), "size": [rows.height, rows.width],
             "feature_set": rows.feature_set, "teacher": bool(rows.teacher), "source": source,
             "sha256": _sha256(path), **info}
    manifest = read_manifest(folder)
    manifest["chunks"] = [c for c in manifest["chunks"] if c["file"] != name] + [entry]
    _write_manifest(folder, manifest)
    return entry


def read_manifest(folder: str | Path) -> dict:
    path = Path(folder) / MANIFEST
    if not path.exists():
        return {"version": FORMAT_VERSION, "chunks": []}
    return json.loads(path.read_text())


def _write_manifest(folder: Path, manifest: dict) -> None:
    tmp = folder / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, folder / MANIFEST)


def read_chunk(path: str | Path, sha256: str | None = None) -> Rows:
    """Load and validate one chunk; ChunkError says what is wrong with a bad one.

    With `sha256` (from the manifest) a chunk changed or truncated after writing is refused.
    """
    path = Path(path)
    if sha256 is not None and _sha256(path) != sha256:
        raise ChunkError(f"{path}: sha256 differs from the manifest (truncated or altered)")
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise ChunkError(f"{path}: unreadable chunk ({err})") from err
    try:
        if int(data["version"]) != FORMAT_VERSION:
            raise ChunkError(f"{path}: format version {int(data['version'])}, "
                             f"this reader knows {FORMAT_VERSION}")
        height, width = (int(v) for v in data["board_size"])
        rows = Rows(height, width, int(data["num_spatial"]), str(data["feature_set"]),
                    data["spatial_bits"], data["global"], data["policy"], data["policy_weight"],
                    data["value"], data["score"], data["ownership"],
                    {k: data[k] for k in TEACHER_KEYS if k in data})
    except KeyError as err:
        raise ChunkError(f"{path}: missing array {err}") from None
    _check(rows, str(path))
    return rows


def load_chunks(folder: str | Path, newest_rows: int | None = None, log=print) -> list[Rows]:
    """The valid chunks of a folder's manifest, newest last, keeping about the newest
    `newest_rows` rows (a replay window). Bad chunks are reported through `log` and skipped."""
    folder = Path(folder)
    entries = read_manifest(folder)["chunks"]
    kept, total = [], 0
    for entry in reversed(entries):
        if newest_rows is not None and total >= newest_rows:
            break
        try:
            rows = read_chunk(folder / entry["file"], entry.get("sha256"))
        except (ChunkError, FileNotFoundError) as err:
            log(f"skipping chunk: {err}")
            continue
        kept.append(rows)
        total += len(rows)
    return kept[::-1]
