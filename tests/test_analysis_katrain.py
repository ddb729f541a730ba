"""KaTrain's own engine class (PyPI `katrain` 1.20, `katrain.core.engine.KataGoEngine`, run
without a window) analyses a real game through `dosaku analysis`, with KaTrain's packaged
analysis config, as its local engine setting does when the KataGo executable is `dosaku`.
KaTrain's game report must come out with sensible numbers: every move analysed, the winner of
the game ahead at its end, accuracies and point losses in range, every move counted once."""

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("KIVY_NO_WINDOW", "1")  # before kivy is first imported
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_HOME", tempfile.mkdtemp(prefix="kivy-"))

import pytest  # noqa: E402
from katrain.core.ai import game_report  # noqa: E402
from katrain.core.base_katrain import KaTrainBase  # noqa: E402
from katrain.core.engine import KataGoEngine  # noqa: E402
from katrain.core.game import Game, KaTrainSGF  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GAME = ROOT / "tests" / "data" / "gnugo-match-game-1.sgf"  # B+22
VISITS = 24


def dosaku_executable(folder: Path) -> str:
    """What `dosaku` is once installed: a program that runs run_engine.py's main."""
    exe = folder / "dosaku"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'run_engine.py'} \"$@\"\n")
    exe.chmod(0o755)
    return str(exe)


@pytest.mark.slow  # 45 s alone on two loaded cores; test_analysis_protocol.py is the quick check
def test_katrain_reviews_a_game_through_dosaku(tmp_path):
    katrain = KaTrainBase(force_package_config=True, debug_level=0)
    config = dict(katrain.config("engine"), katago=dosaku_executable(tmp_path),
                  model=str(ROOT / "weights" / "dosaku-b6c96-g170.onnx"), max_visits=VISITS,
                  fast_visits=VISITS)
    engine = KataGoEngine(katrain, config)
    try:
        game = Game(katrain, engine, move_tree=KaTrainSGF.parse_sgf(GAME.read_text()))
        nodes = game.root.nodes_in_tree
        deadline = time.monotonic() + 300
        while not all(n.analysis_complete for n in nodes):
            assert time.monotonic() < deadline, "KaTrain's queries were not all answered"
            assert engine.check_alive(), "dosaku analysis died"
            time.sleep(0.2)
    finally:
        engine.shutdown(finish=False)
    moves = [n for n in nodes if n.move and not n.move.is_pass]
    assert len(moves) >= 30
    for n in nodes:
        assert n.root_visits >= VISITS
        assert 0.0 <= n.winrate <= 1.0 and abs(n.score) < 81
        assert n.candidate_moves and n.policy is not None and n.ownership is not None
    assert nodes[-1].score > 5 and nodes[-1].winrate > 0.8  # Black won by 22
    report, histogram, _ = game_report(game, thresholds=katrain.config("trainer/eval_thresholds"))
    for player in "BW":
        assert 0 < report[player]["accuracy"] <= 100
        assert report[player]["mean_ptloss"] >= 0
        assert 0 <= report[player]["ai_top5_move"] <= 1
        counted = sum(bucket[player] for bucket in histogram)
        assert counted == sum(1 for n in nodes[1:] if n.move and n.player == player)
