"""Match output: SGF per game, standings with Elo, optional plot of the running estimate."""

from __future__ import annotations

import json
import math
import os
import sys
import time

from sgfmill import common, sgf

from dosaku.engine.rules.coords import format_vertex
from dosaku.tournament.elo import estimate, format_elo
from dosaku.tournament.match_game import GameResult, MatchConfig, Move, color_letter


def sgf_bytes(cfg: MatchConfig, rec: GameResult, moves: list[Move],
              date: str | None = None) -> bytes:
    """One game as sgfmill serialises it; `date` (DT) defaults to today."""
    game = sgf.Sgf_game(size=cfg.size)
    root = game.get_root()
    root.set("KM", cfg.komi)
    root.set("PB", rec.black_name)
    root.set("PW", rec.white_name)
    root.set("RE", rec.result)
    root.set("GN", f"game {rec.game}")
    root.set("DT", date or time.strftime("%Y-%m-%d"))
    root.set("RU", cfg.rules)
    if cfg.clock is not None:
        spec = cfg.clock_spec()
        root.set("TM", spec.main)
        if spec.kind != "absolute":
            root.set("OT", f"{spec.count}x{spec.period:g} byo-yomi" if spec.kind == "byoyomi"
                     else f"{spec.count}/{spec.period:g} Canadian")
    root.set("C", f"engine {rec.black} black, engine {rec.white} white; "
                  f"end: {rec.reason} {rec.detail}".strip())
    for i, (color, p) in enumerate(moves):
        node = game.extend_main_sequence()
        vertex = format_vertex(p, cfg.size, cfg.size)
        node.set_move(color_letter(color), common.move_from_vertex(vertex, cfg.size))
        if i + 1 == rec.opening:
            node.set("C", "end of opening")
    return game.serialise()


def write_sgf(path: str, cfg: MatchConfig, rec: GameResult, moves: list[Move],
              date: str | None = None) -> None:
    """Save one game (sgf_bytes) through a temporary file."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(sgf_bytes(cfg, rec, moves, date))
    os.replace(tmp, path)


def write_json(path: str, data) -> None:
    """Write `data` to `path` as indented JSON through a temporary file: a reader, or a run
    stopped half-way, never finds half a file."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    os.replace(tmp, path)


def tally(records: list[dict]) -> dict:
    """Counts by engine and colour plus the Elo estimate of engine 1 (voids left out)."""
    played = [r for r in records if r["reason"] != "void"]
    wins = {1: 0, 2: 0}
    by_color = {1: {"B": 0, "W": 0}, 2: {"B": 0, "W": 0}}
    color_wins = {"B": 0, "W": 0}
    reasons: dict[str, int] = {}
    scorers: dict[str, int] = {}  # who scored the games that were scored
    for r in played:
        reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
        if r.get("scorer"):
            scorers[r["scorer"]] = scorers.get(r["scorer"], 0) + 1
        if r["winner_engine"] is not None:
            wins[r["winner_engine"]] += 1
            by_color[r["winner_engine"]][r["winner"]] += 1
            color_wins[r["winner"]] += 1
    draws = len(played) - wins[1] - wins[2]
    est = estimate(wins[1], draws, wins[2])

    def elo_value(x: float) -> float | str:
        return format_elo(x) if math.isinf(x) else round(x, 1)

    return {
        "games": len(played), "void": len(records) - len(played),
        "engine1_wins": wins[1], "engine2_wins": wins[2], "draws": draws,
        "engine1_wins_by_colour": by_color[1], "engine2_wins_by_colour": by_color[2],
        "black_wins": color_wins["B"], "white_wins": color_wins["W"], "reasons": reasons,
        "scorers": scorers,
        "engine1_score": round(est.score, 4),
        "engine1_score_95": [round(est.score_low, 4), round(est.score_high, 4)],
        "elo": elo_value(est.elo), "elo_95": [elo_value(est.elo_low), elo_value(est.elo_high)],
        "elo_method": "Wilson score interval on engine 1's score (draws = half), "
                      "mapped through elo = 400 log10(p / (1 - p))",
    }


def report(cfg: MatchConfig, records: list[dict], out=None) -> None:
    """Print the standings."""
    out = out or sys.stdout
    t = tally(records)
    est = estimate(t["engine1_wins"], t["draws"], t["engine2_wins"])
    w1, w2 = t["engine1_wins_by_colour"], t["engine2_wins_by_colour"]
    print(f"engine 1: {cfg.engines[0]}\nengine 2: {cfg.engines[1]}", file=out)
    print(f"games {t['games']} (void {t['void']}): engine 1 wins {t['engine1_wins']} "
          f"(as black {w1['B']}, as white {w1['W']}), engine 2 wins {t['engine2_wins']} "
          f"(as black {w2['B']}, as white {w2['W']}), draws {t['draws']}", file=out)
    print(f"by colour: black {t['black_wins']}, white {t['white_wins']}; endings: "
          + ", ".join(f"{k} {v}" for k, v in sorted(t["reasons"].items()))
          + ("; scored by: " + ", ".join(f"{k} {v}" for k, v in sorted(t["scorers"].items()))
             if t["scorers"] else ""), file=out)
    print(f"engine 1 score {100 * est.score:.1f}% [95% {100 * est.score_low:.1f}%, "
          f"{100 * est.score_high:.1f}%], Elo difference {format_elo(est.elo)} "
          f"[{format_elo(est.elo_low)}, {format_elo(est.elo_high)}] "
          "(Wilson interval on the score, draws count half)", file=out)


def _clip(x: float) -> float:
    """Keep infinite estimates on the plot's axes."""
    return max(-800.0, min(800.0, x))


def plot_elo(records: list[dict], path: str) -> bool:
    """Running Elo estimate of engine 1 with its 95 % band; False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    wins = draws = losses = 0
    xs, ys, los, his = [], [], [], []
    for r in sorted(records, key=lambda r: r["game"]):
        if r["reason"] == "void":
            continue
        wins += r["winner_engine"] == 1
        losses += r["winner_engine"] == 2
        draws += r["winner_engine"] is None
        e = estimate(wins, draws, losses)
        xs.append(wins + draws + losses)
        ys.append(_clip(e.elo))
        los.append(_clip(e.elo_low))
        his.append(_clip(e.elo_high))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between(xs, los, his, alpha=0.3, label="95% interval")
    ax.plot(xs, ys, label="Elo (engine 1 - engine 2)")
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("games")
    ax.set_ylabel("Elo difference (clipped to ±800)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
