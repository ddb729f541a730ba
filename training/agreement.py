"""Raw-network quality against a teacher on held-out rows: how close a student's outputs are.

For every board size in a folder of teacher chunks (training.chunks with teacher_* targets),
runs the network on the stored inputs and reports, from the side to move's view:
policy top-1 agreement with the teacher, policy cross-entropy to the teacher's distribution,
mean absolute error of the winrate (win + no-result/2) and of the score lead, and of ownership.
With --lead-bands the same measures also come per band of the teacher's |score lead| (a student
that cannot count a decided game shows there, where the all-rows means hide it).

    python -m dosaku.training.agreement NET.onnx HELDOUT_DIR [--rows 4000] [--lead-bands 5,15,40]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np

from dosaku.engine.evaluators.onnx_evaluator import (
    OnnxModel,
    ownership,
    policy_probs,
    score_stats,
    wdl,
)
from dosaku.training.chunks import Rows, load_chunks

BATCH = 64


def on_board_empty(rows: Rows, sel) -> np.ndarray:
    """Actions [n, H*W+1] a move may go to: empty points on the board (plane 0 on-board,
    planes 1 and 2 the stones) and pass."""
    planes = rows.spatial(sel)
    empty = (planes[:, 0] > 0) & (planes[:, 1] == 0) & (planes[:, 2] == 0)
    n = len(planes)
    return np.concatenate([empty.reshape(n, -1), np.ones((n, 1), bool)], axis=1)


def winrate(value_probs: np.ndarray) -> np.ndarray:
    return value_probs[:, 0] + 0.5 * value_probs[:, 2]


def compare(model: OnnxModel, rows: Rows, sel) -> dict[str, np.ndarray]:
    """Per-row errors of the model against the teacher targets of rows[sel]."""
    raw = model.run(rows.spatial(sel), rows.global_in[sel])
    n = len(raw["policy"])
    legal = on_board_empty(rows, sel)
    mine = policy_probs(raw["policy"], legal)
    theirs = rows.teacher["teacher_policy"][sel]
    probs = wdl(raw["value"])
    lead = score_stats(raw["score"], probs, model.score_outputs, model.multipliers)["lead"]
    own = ownership(raw["ownership"]).reshape(n, -1)
    return {
        "policy_top1": (mine.argmax(1) == theirs.argmax(1)).astype(np.float64),
        "policy_xent": -(theirs * np.log(np.maximum(mine, 1e-12))).sum(1),
        "teacher_entropy": -(theirs * np.log(np.maximum(theirs, 1e-12))).sum(1),
        "winrate_mae": np.abs(winrate(probs) - winrate(rows.teacher["teacher_value"][sel])),
        "score_mae": np.abs(lead - rows.teacher["teacher_score"][sel]),
        "ownership_mae": np.abs(own - rows.teacher["teacher_ownership"][sel]).mean(1),
    }


def band_names(bounds) -> list[str]:
    """Names of the |lead| bands that `bounds` (points, increasing) cut: "0-5", ..., "40+"."""
    edges = [0, *bounds]
    return [f"{lo:g}-{hi:g}" for lo, hi in zip(edges, edges[1:])] + [f"{edges[-1]:g}+"]


def agreement(model: OnnxModel, folder, max_rows: int = 4000,
              lead_bands=()) -> dict[str, dict[str, float]]:
    """Mean of each measure per board size ("9x9" ...), over at most max_rows rows a size;
    with lead_bands (points, increasing) also per size and band of the teacher's |score lead|
    ("19x19 lead 15-40", empty bands left out)."""
    groups: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    counts: dict[str, int] = defaultdict(int)
    names = band_names(lead_bands)
    for rows in load_chunks(folder):
        if not rows.teacher:
            continue
        size = f"{rows.height}x{rows.width}"
        for start in range(0, len(rows), BATCH):
            if counts[size] >= max_rows:
                break
            sel = slice(start, min(start + BATCH, len(rows), start + max_rows - counts[size]))
            errors = compare(model, rows, sel)
            for key, values in errors.items():
                groups[size][key].append(values)
            if lead_bands:
                band = np.searchsorted(lead_bands, np.abs(rows.teacher["teacher_score"][sel]),
                                       side="right")
                for b, name in enumerate(names):
                    for key, values in errors.items():
                        groups[f"{size} lead {name}"][key].append(values[band == b])
            counts[size] += sel.stop - sel.start
    report = {}
    for group, measures in groups.items():
        values = {k: np.concatenate(v) for k, v in measures.items()}
        n = len(values["policy_top1"])
        if n:
            report[group] = {"rows": n, **{k: float(v.mean()) for k, v in values.items()}}

    def order(group):  # each size, then its bands from the smallest lead up
        size, _, band = group.partition(" lead ")
        return size, names.index(band) + 1 if band else 0
    return {group: report[group] for group in sorted(report, key=order)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="ONNX network (ours or a converted KataGo net)")
    ap.add_argument("data",
                    help="folder of teacher chunks with a manifest (held out from training)")
    ap.add_argument("--rows", type=int, default=4000, help="rows per board size (default 4000)")
    ap.add_argument("--lead-bands", default="",
                    help="also per band of the teacher's |score lead|, e.g. 5,15,40 (points)")
    args = ap.parse_args(argv)
    try:
        bands = [float(x) for x in args.lead_bands.split(",") if x]
    except ValueError:
        ap.error(f"--lead-bands {args.lead_bands!r}: comma-separated points expected")
    if bands != sorted(bands) or any(b <= 0 for b in bands):
        ap.error("--lead-bands must be positive and increase")
    print(json.dumps(agreement(OnnxModel(args.model), args.data, args.rows, bands), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
