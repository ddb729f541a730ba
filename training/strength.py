"""Strength per generation: every net of one or more training runs against fixed opponents.

    python -m dosaku.training.strength RUN [RUN ...] --out DIR [--opponents rollout,gnugo1]
        [--last-opponents gnugo10] [--games 10] [--visits 100] [--every 1]

For each generation's net (RUN/nets/gen-NNN.onnx) and each opponent it plays a match of the
tournament kit (alternating colours, pairs of games sharing two random opening moves, GNU Go as
referee): Dosaku on the net at a fixed visit count with one evaluation in flight, so the result
does not depend on how loaded the machine is. Matches resume from DIR. It writes
DIR/strength.json (one record per run, generation and opponent, with the run's self-play CPU
time up to that generation for comparisons at equal compute), DIR/strength.md (the table) and
DIR/strength.png (score per generation against each opponent, one line per run).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

from dosaku.tournament.elo import estimate, format_elo
from dosaku.tournament.match import Match
from dosaku.tournament.match_game import MatchConfig
from dosaku.tournament.match_report import tally
from dosaku.training.chunks import read_manifest
from dosaku.training.gate import dosaku_command

GEN_NET = re.compile(r"gen-(\d+)\.onnx")


def opponent_command(name: str, visits: int, size: int, komi: float, gnugo: str) -> str:
    """`rollout` (Dosaku on random playouts at the same visits) or `gnugoL` (GNU Go level L,
    seeded)."""
    if name == "rollout":
        return dosaku_command(["--evaluator", "rollout"], visits, size, komi)
    level = re.fullmatch(r"gnugo(\d+)", name)
    if not level:
        raise ValueError(f"unknown opponent {name!r}: rollout or gnugoL (GNU Go level L)")
    return f"{gnugo} --mode gtp --level {level.group(1)} --chinese-rules --seed 1"


def generations(run: Path, every: int) -> list[tuple[int, Path]]:
    """(generation, net) of every `every`-th exported net of the run, and always the last."""
    nets = sorted((int(m.group(1)), p) for p in (run / "nets").glob("gen-*.onnx")
                  if (m := GEN_NET.fullmatch(p.name)))
    return [(g, p) for i, (g, p) in enumerate(nets) if g % every == 0 or i == len(nets) - 1]


def selfplay_cpu_minutes(run: Path, generation: int) -> float:
    """CPU minutes of the self-play games that made the data up to `generation`'s net."""
    seconds = 0.0
    for folder in sorted((run / "data").glob("gen-*")):
        if int(folder.name.split("-")[1]) <= generation and (folder / "manifest.json").exists():
            seconds += sum(c.get("game_cpu_seconds", 0.0)
                           for c in read_manifest(folder)["chunks"])
    return seconds / 60


def measure(runs: list[Path], out: Path, opponents: list[str], games: int, visits: int,
            every: int, size: int, komi: float, gnugo: str, last_opponents=(),
            log=print) -> list[dict]:
    """Play (or finish) every match, logging one line per match; the records, in run /
    generation / opponent order. `last_opponents` play each run's last net only."""
    records = []
    for run in runs:
        nets = generations(run, every)
        for gen, net in nets:
            for opp in opponents + (list(last_opponents) if gen == nets[-1][0] else []):
                folder = out / run.name / f"gen-{gen:03d}-vs-{opp}"
                cfg = MatchConfig(engines=[dosaku_command(["--model", str(net)], visits, size,
                                                          komi),
                                           opponent_command(opp, visits, size, komi, gnugo)],
                                  games=games, size=size, komi=komi, out=str(folder),
                                  openings=2, referee=f"{gnugo} --mode gtp --chinese-rules")
                summary = tally(Match(cfg).run(progress=False))
                wins, draws, losses = (summary["engine1_wins"], summary["draws"],
                                       summary["engine2_wins"])
                est = estimate(wins, draws, losses)
                records.append({"run": run.name, "generation": gen, "opponent": opp,
                                "wins": wins, "draws": draws, "losses": losses,
                                "score": est.score, "score_95": [est.score_low, est.score_high],
                                "elo": format_elo(est.elo),
                                "elo_95": [format_elo(est.elo_low), format_elo(est.elo_high)],
                                "selfplay_cpu_minutes": round(selfplay_cpu_minutes(run, gen), 1)})
                log(f"{run.name} gen {gen} vs {opp}: {wins} wins, {draws} draws, {losses} losses")
    return records


def table(records: list[dict], opponents: list[str]) -> str:
    """Markdown: one row per run and generation, wins/games and Elo against each opponent."""
    head = "| run | generation | self-play CPU min | " + " | ".join(opponents) + " |"
    lines = [head, "|" + "---|" * (3 + len(opponents))]
    by_key = {(r["run"], r["generation"], r["opponent"]): r for r in records}
    cpu = {(r["run"], r["generation"]): r["selfplay_cpu_minutes"] for r in records}
    for run, gen in sorted(cpu):
        cells = []
        for opp in opponents:
            r = by_key.get((run, gen, opp))
            if r is None:
                cells.append("")
                continue
            n = r["wins"] + r["draws"] + r["losses"]
            elo = f"{r['elo']} [{r['elo_95'][0]}, {r['elo_95'][1]}]"
            cells.append(f"{r['wins'] + r['draws'] / 2:g}/{n} ({elo})")
        lines.append(f"| {run} | {gen} | {cpu[run, gen]:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(records: list[dict], opponents: list[str], path: Path) -> None:
    """Score per generation against each opponent (one panel each), one line per run, with
    95 % intervals."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(opponents), figsize=(4.2 * len(opponents), 3.6),
                             squeeze=False, sharey=True)
    for ax, opp in zip(axes[0], opponents):
        for run in sorted({r["run"] for r in records}):
            rs = sorted((r for r in records if r["run"] == run and r["opponent"] == opp),
                        key=lambda r: r["generation"])
            if not rs:
                continue
            x = [r["generation"] for r in rs]
            y = [r["score"] for r in rs]
            err = [[r["score"] - r["score_95"][0] for r in rs],
                   [r["score_95"][1] - r["score"] for r in rs]]
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=run)
        ax.set_title(f"vs {opp}")
        ax.set_xlabel("generation")
        ax.set_ylim(-0.02, 1.02)
        ax.axhline(0.5, color="grey", lw=0.6, ls=":")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("score (wins + draws/2)")
    axes[0][-1].legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="training run folders (training.loop --out)")
    ap.add_argument("--out", required=True, help="folder of the matches and the report")
    ap.add_argument("--opponents", default="rollout,gnugo1,gnugo10",
                    help="rollout (random playouts at the same visits) or gnugoL, comma-separated")
    ap.add_argument("--last-opponents", default="",
                    help="opponents for each run's last net only (e.g. gnugo10)")
    ap.add_argument("--games", type=int, default=10, help="games per net and opponent")
    ap.add_argument("--visits", type=int, default=100, help="Dosaku's visits a move")
    ap.add_argument("--every", type=int, default=1, help="every k-th generation (and the last)")
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--komi", type=float, default=7.0)
    ap.add_argument("--gnugo", default=shutil.which("gnugo") or "/usr/games/gnugo")
    a = ap.parse_args(argv)
    opponents = a.opponents.split(",")
    last = [o for o in a.last_opponents.split(",") if o]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    records = measure([Path(r) for r in a.runs], out, opponents, a.games, a.visits, a.every,
                      a.size, a.komi, a.gnugo, last, log=lambda line: print(line, flush=True))
    everyone = opponents + [o for o in last if o not in opponents]
    (out / "strength.json").write_text(json.dumps(records, indent=1))
    (out / "strength.md").write_text(table(records, everyone))
    plot(records, everyone, out / "strength.png")
    print(table(records, everyone))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
