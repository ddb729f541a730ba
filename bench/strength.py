"""The strength benchmark: seeded 20-game matches against GNU Go 3.8 level 10 on 9x9 (Chinese
rules, komi 7, alternating colours, GNU Go as the referee) at 100 visits a move, each with a
verdict. They ran as tests until they took minutes of every full test run; their results are
kept as records (records/, docs/strength.md), and the test suite replays positions of such a
game instead (tests/test_strength_replay.py), which fails when the engine's play changes.

    python -m dosaku.bench.strength --out matches/strength [--only card katago]

- `card`: our fast net `dosaku-b6c96`, whose model card states this match against GNU Go
  `--seed 1`, `2` and `3` (the line `gnugo10_9x9_100visits: W1/20 W2/20 W3/20`). The match
  replays seed 1 and passes at the least of the three less SLACK: float differences between
  CPUs can tip a close search, and the other seeds show how far another 20 games can fall.
- `katago`: KataGo's g170 b6c96 net (../shared/models), converted and played by Dosaku, must
  win 19 of 20; KataGo with the same net wins 20 of 20 even at one visit a move, so a loss
  points at a bug in search, features or rules.

Both engines are seeded and Dosaku searches by visits with one evaluation in flight on the
float32 net (`--no-int8`: an int8 copy is calibrated per machine), so a match does not depend
on timing. A rerun with the same --out resumes. Exit status 0 when every match passed. Not in
`python -m dosaku.bench`'s registry: its figures are wins, not timings worth repeating.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import sys
from pathlib import Path

from dosaku.tournament.match import main as match_main
from dosaku.weights import card_path, model_path

ROOT = Path(__file__).resolve().parents[1]
GAMES = 20
SLACK = 2  # wins the card's net may drop below the least of its card's figures (docstring)
CARD_NET = "dosaku-b6c96"
KATAGO_B6C96 = ROOT.parent / "shared" / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
KATAGO_WINS = 19
CARD_LINE = re.compile(r"^gnugo10_9x9_100visits:((?:[ \t]+\d+/\d+){3})[ \t]*$", re.MULTILINE)


def card_figures(card_text: str) -> list[tuple[int, int]]:
    """(wins, games) of the card's `gnugo10_9x9_100visits` line against GNU Go seeds 1-3."""
    found = CARD_LINE.findall(card_text)
    if len(found) != 1:
        raise ValueError("the card must state the match once, as a line "
                         "`gnugo10_9x9_100visits: W1/20 W2/20 W3/20` (GNU Go seeds 1-3)")
    return [tuple(map(int, r.split("/"))) for r in found[0].split()]


def wins_needed(figures: list[tuple[int, int]]) -> int:
    """The card's net passes at the least of its three results less SLACK."""
    if any(games != GAMES for _, games in figures):
        raise ValueError(f"the card's figures must be of {GAMES} games: {figures}")
    return min(wins for wins, _ in figures) - SLACK


def dosaku_command(model: Path) -> str:
    """Dosaku on `model` at the match's settings (the card's command)."""
    return shlex.join([sys.executable, str(ROOT / "run_engine.py"), "--model", str(model),
                       "--visits", "100", "--threads", "1", "--no-int8", "--boardsize", "9"])


def play(gnugo: str, model: Path, out: Path) -> dict:
    """The seeded match of `model` against GNU Go level 10 (seed 1): its summary."""
    match_main([dosaku_command(model), f"{gnugo} --mode gtp --level 10 --chinese-rules --seed 1",
                "--games", str(GAMES), "--size", "9", "--komi", "7", "--rules", "chinese",
                "--parallel", "1", "--referee", f"{gnugo} --mode gtp --chinese-rules",
                "--no-progress", "--out", str(out)])
    summary = json.loads((out / "match.json").read_text())["summary"]
    if summary["games"] != GAMES or summary["void"]:
        raise RuntimeError(f"{out}: the match did not finish cleanly: {summary}")
    return summary


def verdict(name: str, wins: int, needed: int) -> tuple[bool, str]:
    """Whether `wins` of GAMES reach `needed`, and one line saying so."""
    ok = wins >= needed
    return ok, f"{name}: {wins}/{GAMES} wins, {needed} needed: {'pass' if ok else 'FAIL'}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dosaku.bench.strength",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for the matches")
    ap.add_argument("--only", nargs="+", choices=("card", "katago"), default=["card", "katago"])
    ap.add_argument("--gnugo", default=shutil.which("gnugo") or "/usr/games/gnugo")
    a = ap.parse_args(argv)
    if not Path(a.gnugo).exists() and not shutil.which(a.gnugo):
        ap.error(f"no GNU Go at {a.gnugo} (apt-get install gnugo)")
    results = []
    if "card" in a.only:
        needed = wins_needed(card_figures(card_path(CARD_NET).read_text()))
        summary = play(a.gnugo, model_path(CARD_NET), a.out / CARD_NET)
        results.append(verdict(CARD_NET, summary["engine1_wins"], needed))
    if "katago" in a.only:
        if not KATAGO_B6C96.exists():
            ap.error(f"{KATAGO_B6C96} is absent (../shared not available)")
        summary = play(a.gnugo, KATAGO_B6C96, a.out / "katago-b6c96")
        results.append(verdict("katago-b6c96", summary["engine1_wins"], KATAGO_WINS))
    for _, line in results:
        print(line)
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
