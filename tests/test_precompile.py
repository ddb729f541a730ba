"""The cold-start helper (engine/precompile.py): when it runs and what it compiles.

The start-up time it buys is measured by bench/startup.py (`--cold`), not here."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import precompile
from engine.evaluator import UniformEvaluator
from engine.onnx_evaluator import OnnxEvaluator
from engine.rollout import RolloutEvaluator

ROOT = Path(__file__).resolve().parents[1]


class FakeModel:
    feature_set = "katago-v7"


def test_each_evaluator_declares_the_kernels_to_precompile():
    assert RolloutEvaluator().capabilities.precompile_kind == "rollout"
    assert OnnxEvaluator(FakeModel()).capabilities.precompile_kind == "katago-v7"
    assert UniformEvaluator().capabilities.precompile_kind is None


def test_cold_means_no_search_kernel_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "absent"))
    assert precompile.cache_is_cold()
    folder = tmp_path / "cache" / "engine_0123"
    folder.mkdir(parents=True)
    (folder / "board.seed_rng-496.py311.nbi").write_bytes(b"")  # a small kernel only
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert precompile.cache_is_cold()
    (folder / "selection.select_batch-180.py311.nbi").write_bytes(b"")
    assert not precompile.cache_is_cold()
    assert precompile.start_helper("rollout") is None  # warm: no helper


def test_helper_fills_an_empty_cache_with_the_evaluator_and_tree_kernels(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-m", "engine.precompile", "rollout"], env=env, check=True,
                   timeout=900)
    stored = {p.name.split("-")[0] for p in tmp_path.rglob("*.nbi")}
    assert {"rollout.rollout_batch", "backup.expand_and_backup", "tree.copy_subtree",
            "tree.find_child", "search_limits.root_visit_gap", "board.play_unchecked",
            "board.legal_mask"} <= stored
    assert "selection.select_batch" not in stored  # the engine's own share


@pytest.mark.parametrize("kind", [None, "rollout", "katago-v7"])
def test_compiling_in_process_runs(kind):
    precompile.compile_evaluator(kind)
    precompile.compile_game_and_tree()


def test_precompile_flag_fills_the_cache_a_later_start_needs_and_exits(tmp_path, monkeypatch):
    """`dosaku --precompile` (the one-time step after installing) compiles everything a genmove
    with the shipped net needs: afterwards the cache is warm, and a game's genmoves find every
    kernel there, storing nothing new."""
    cache = tmp_path / "numba"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    run = [sys.executable, str(ROOT / "run_engine.py"), "--precompile"]
    first = subprocess.run(run, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=900)
    assert first.returncode == 0 and first.stdout == "", first.stderr
    assert "kernels compiled and cached" in first.stderr
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    assert not precompile.cache_is_cold()
    stored = {p: p.stat().st_mtime_ns for p in cache.rglob("*.nbi")}
    assert {p.name.split("-")[0] for p in stored} >= {
        "selection.select_batch", "backup.expand_and_backup", "features.fill_batch"}
    game = subprocess.run([sys.executable, str(ROOT / "run_engine.py"), "--visits", "50"],
                          input="boardsize 9\ngenmove b\ngenmove w\nquit\n", env=env,
                          capture_output=True, text=True, timeout=900)
    assert game.returncode == 0 and game.stdout.count("=") == 4, (game.stdout, game.stderr)
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.nbi")} == stored
