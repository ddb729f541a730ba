"""The arithmetic of a comparison: each move's loss, the means with their 95 % intervals.

A move's loss is the judge's winrate (or score lead) for the mover after the better of the two
engines' moves minus that after this one: 0 for the better move and for both when the engines
agree. A and B are compared on the same positions, so their difference is taken per position
(loss A - loss B, the judge's value of B's move minus A's) before it is averaged; its interval
is much narrower than the two separate ones would suggest. Intervals are the normal
approximation, mean +- 1.96 standard errors (sample standard deviation over the positions):
with hundreds of positions the mean of these bounded losses is close to normal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dosaku.tournament.elo import Z95


@dataclass
class Interval:
    """A mean over n positions with its 95 % interval (nan bounds below two positions)."""

    mean: float
    low: float
    high: float
    n: int


def mean_interval(values: list[float]) -> Interval:
    """Mean +- Z95 standard errors of `values`."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else math.nan
    return Interval(mean, mean - half, mean + half, len(x))


def losses(a: float, b: float) -> tuple[float, float]:
    """(loss of A, loss of B) when A's move is worth `a` and B's `b` to the mover."""
    best = max(a, b)
    return best - a, best - b


def judged_losses(record: dict) -> None:
    """Fill in the loss fields of a finished record (0 when the engines agreed)."""
    if record["same"]:
        record.update(loss_a=0.0, loss_b=0.0, score_loss_a=0.0, score_loss_b=0.0)
        return
    record["loss_a"], record["loss_b"] = losses(record["value_a"], record["value_b"])
    scores = record["score_a"], record["score_b"]
    record["score_loss_a"], record["score_loss_b"] = \
        losses(*scores) if None not in scores else (None, None)


def summarize(records: list[dict]) -> dict:
    """Counts and intervals over the records without an error."""
    ok = [r for r in records if not r.get("error")]
    judged = [r for r in ok if not r["same"]]
    scored = [r for r in ok if r["score_loss_a"] is not None]
    return {
        "positions": len(records), "failed": len(records) - len(ok),
        "same": len(ok) - len(judged), "judged": len(judged),
        "a_better": sum(r["value_a"] > r["value_b"] for r in judged),
        "b_better": sum(r["value_b"] > r["value_a"] for r in judged),
        "loss_a": mean_interval([r["loss_a"] for r in ok]),
        "loss_b": mean_interval([r["loss_b"] for r in ok]),
        "diff": mean_interval([r["loss_a"] - r["loss_b"] for r in ok]),
        "score_loss_a": mean_interval([r["score_loss_a"] for r in scored]),
        "score_loss_b": mean_interval([r["score_loss_b"] for r in scored]),
        "score_diff": mean_interval([r["score_loss_a"] - r["score_loss_b"] for r in scored]),
    }


def _cell(iv: Interval, scale: float, signed: bool) -> str:
    if iv.n == 0:
        return "-"
    sign = "+" if signed else ""
    text = f"{scale * iv.mean:{sign}.2f}"
    if not math.isnan(iv.low):
        text += f" [{scale * iv.low:{sign}.2f}, {scale * iv.high:{sign}.2f}]"
    return text


def table(summary: dict) -> str:
    """The summary as the lines printed at the end of a run."""
    s = summary
    lines = [f"positions {s['positions']}: same move {s['same']}, judged {s['judged']} "
             f"(A's move better {s['a_better']}, B's better {s['b_better']}), "
             f"failed {s['failed']}",
             f"{'':8}{'winrate loss per move (%)':>30}{'score loss per move (points)':>34}"]
    for name, key, signed in (("A", "", False), ("B", "", False), ("A - B", "diff", True)):
        wr = s[key or f"loss_{name.lower()}"]
        sc = s[f"score_{key}" if key else f"score_loss_{name.lower()}"]
        lines.append(f"{name:8}{_cell(wr, 100.0, signed):>30}{_cell(sc, 1.0, signed):>34}")
    lines.append("[95% interval: mean +- 1.96 standard errors over the positions; "
                 f"score columns over {s['score_loss_a'].n} positions]")
    return "\n".join(lines)
