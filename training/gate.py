"""Gate: a candidate network replaces the current one only if it wins a match against it.

Both nets play through the engine's own GTP front-end (run_engine.py) with the same visit
budget, one network thread each, in a match of the tournament kit (alternating colours, games
2k and 2k+1 sharing a random opening). The candidate passes when its score (wins + draws / 2)
reaches the threshold.

    python -m dosaku.training.gate CANDIDATE.onnx CURRENT.onnx --out DIR [--games 40] [--size 9]
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from dosaku.tournament.match import Match
from dosaku.tournament.match_game import MatchConfig
from dosaku.tournament.match_report import tally

RUN_ENGINE = Path(__file__).resolve().parents[1] / "run_engine.py"


@dataclass(frozen=True)
class GateConfig:
    """The match that decides a promotion."""
    games: int = 40  # games in the match (pairs with colours swapped)
    threshold: float = 0.55  # the candidate's score needed to replace the current net
    size: int = 9  # board size of the match
    komi: float = 7.0  # komi of the match
    visits: int = 32  # root visits per move for both nets
    openings: int = 2  # random opening moves shared by each pair of games (variety)
    parallel: int = 1  # games at the same time (each engine uses one network thread)
    seed: int = 0  # seed of the openings and of both engines


@dataclass(frozen=True)
class GateResult:
    games: int
    wins: int
    draws: int
    score: float  # the candidate's wins + draws / 2, over games
    passed: bool


def dosaku_command(player: list[str], visits: int, size: int, komi: float,
                   seed: int = 0) -> str:
    """The GTP command line of our engine with `player` flags (`--model NET`, `--evaluator
    rollout`) at `visits` a move with one evaluation in flight, on the float32 net: a result
    that depends neither on the machine's load nor on its CPU (an int8 copy, the default for a
    convolution net on AVX2, would be quantized and calibrated first, per machine)."""
    return shlex.join([sys.executable, str(RUN_ENGINE), *player, "--visits", str(visits),
                       "--threads", "1", "--no-int8", "--seed", str(seed), "--boardsize",
                       str(size), "--komi", str(komi)])


def engine_command(net: str | Path, cfg: GateConfig) -> str:
    """The GTP command line of one side: our engine on `net` with the gate's budget."""
    return dosaku_command(["--model", str(net)], cfg.visits, cfg.size, cfg.komi, cfg.seed)


def gate(candidate: str | Path, current: str | Path, out: str | Path,
         cfg: GateConfig = GateConfig(), progress: bool = False) -> GateResult:
    """Play (or finish, when `out` holds an interrupted match) the gate match."""
    match = Match(MatchConfig(engines=[engine_command(candidate, cfg),
                                       engine_command(current, cfg)],
                              games=cfg.games, size=cfg.size, komi=cfg.komi, out=str(out),
                              openings=cfg.openings, seed=cfg.seed, parallel=cfg.parallel))
    summary = tally(match.run(progress=progress))
    games = summary["games"]
    wins, draws = summary["engine1_wins"], summary["draws"]
    score = (wins + draws / 2) / games if games else 0.0
    return GateResult(games, wins, draws, score, games > 0 and score >= cfg.threshold)


def main(argv=None) -> int:
    d = GateConfig()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("candidate", help="the new network (ONNX)")
    ap.add_argument("current", help="the network it must beat (ONNX)")
    ap.add_argument("--out", required=True, help="match folder (SGFs, match.json; resumable)")
    ap.add_argument("--games", type=int, default=d.games)
    ap.add_argument("--threshold", type=float, default=d.threshold)
    ap.add_argument("--size", type=int, default=d.size)
    ap.add_argument("--komi", type=float, default=d.komi)
    ap.add_argument("--visits", type=int, default=d.visits)
    ap.add_argument("--parallel", type=int, default=d.parallel)
    ap.add_argument("--seed", type=int, default=d.seed)
    a = ap.parse_args(argv)
    cfg = GateConfig(a.games, a.threshold, a.size, a.komi, a.visits, d.openings, a.parallel,
                     a.seed)
    result = gate(a.candidate, a.current, a.out, cfg, progress=True)
    verdict = "passes" if result.passed else "fails"
    print(f"candidate {verdict}: score {result.score:.3f} ({result.wins} wins, {result.draws} "
          f"draws in {result.games} games; threshold {cfg.threshold})")
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
