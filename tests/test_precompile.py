"""The cold-start helper (engine/precompile.py): when it runs and what it compiles.

The start-up time it buys is measured by bench/startup.py (`--cold`), not here. The two tests
that compile into an empty cache are marked slow; the quick run checks the same kernels and the
--precompile flag in process, on the run's own cache."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dosaku.engine import precompile
from dosaku.engine.evaluators.evaluator import UniformEvaluator
from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator
from dosaku.engine.evaluators.rollout import RolloutEvaluator

ROOT = Path(__file__).resolve().parents[1]


class FakeModel:
    feature_set = "katago-v7"
    output_names = ("policy", "value", "score", "ownership")
    score_outputs = ("scoremean", "scorestdev", "lead", "vartime")


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


@pytest.mark.slow  # a cold compile; the quick run checks the same kernels in process
def test_helper_fills_an_empty_cache_with_every_kernel_a_genmove_calls(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PYTHONPATH", raising=False)  # started from anywhere, as an install is
    monkeypatch.chdir(tmp_path)
    helper = precompile.start_helper("rollout")
    assert helper is not None, "a cold cache and a second core start the helper"
    assert helper.wait(900) == 0
    stored = {p.name.split("-")[0] for p in tmp_path.rglob("*.nbi")}
    assert {"rollout.rollout_batch", "backup.expand_and_backup", "tree.copy_subtree",
            "tree.find_child", "limits.root_visit_gap", "board.play_unchecked",
            "board.legal_mask", "selection.select_batch"} <= stored
    assert not precompile.cache_is_cold()


def kernels_around_a_rollout_genmove():
    """The numba dispatchers the helper compiles for a rollout engine, by name."""
    from dosaku.engine.evaluators import rollout
    from dosaku.engine.rules import board
    from dosaku.engine.search import backup, limits, tree
    return {"rollout_batch": rollout.rollout_batch, "expand_and_backup": backup.expand_and_backup,
            "root_visit_gap": limits.root_visit_gap, "copy_subtree": tree.copy_subtree,
            "find_child": tree.find_child, "play_unchecked": board.play_unchecked,
            "legal_mask": board.legal_mask}


def test_in_process_compiles_the_very_kernels_a_genmove_calls():
    """What the helper compiles is what the engine then calls: a game of genmoves with reuse
    adds no new type specialisation to any of those kernels."""
    from dosaku.engine.config import EngineConfig
    from dosaku.engine.engine import Engine
    from dosaku.engine.rules.constants import BLACK, WHITE
    from dosaku.engine.search.config import SearchConfig
    precompile.compile_evaluator("rollout")
    precompile.compile_game_and_tree()
    kernels = kernels_around_a_rollout_genmove()
    compiled = {name: set(k.signatures) for name, k in kernels.items()}
    assert all(compiled.values()), compiled
    engine = Engine(9, 9, 7.5, evaluator=RolloutEvaluator(),
                    config=EngineConfig(search=SearchConfig(batch_size=8), playouts=64,
                                        seconds=0))
    for color in (BLACK, WHITE, BLACK):
        engine.genmove(color)
    assert {name: set(k.signatures) for name, k in kernels.items()} == compiled


def test_in_process_compiles_a_network_feature_set_it_knows():
    from dosaku.engine.evaluators.features import fill_batch
    precompile.compile_evaluator("katago-v7")
    assert fill_batch.signatures
    with pytest.raises(KeyError):
        precompile.compile_evaluator("no-such-feature-set")


def test_precompile_flag_builds_the_engine_and_exits_without_serving(monkeypatch, caplog):
    """`dosaku --precompile` builds the engine its flags describe, says so and returns: it
    never reads GTP from stdin (the cold cache it fills is the slow test below)."""
    import io
    import logging

    from dosaku import run_engine
    monkeypatch.setattr("sys.stdin", io.StringIO("name\n"))
    built = []
    real_build = run_engine.build_engine
    monkeypatch.setattr(run_engine, "build_engine",
                        lambda args, background=False: built.append(args) or
                        real_build(args, background))
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: None)  # keep pytest's handlers
    with caplog.at_level(logging.INFO, logger="dosaku"):
        run_engine.main(["--precompile", "--boardsize", "9", "--evaluator", "rollout"])
    assert [(a.boardsize, a.evaluator) for a in built] == [(9, "rollout")]
    assert any("kernels compiled and cached" in m for m in caplog.messages)
    assert sys.stdin.read() == "name\n"  # GTP was never served


@pytest.mark.slow  # a cold compile of everything the shipped net's genmove needs
def test_precompile_flag_fills_the_cache_a_later_start_needs_and_exits(tmp_path, monkeypatch):
    """`dosaku --precompile` (the one-time step after installing) compiles everything a genmove
    with the shipped net needs: afterwards the cache is warm, and a game's genmoves find every
    kernel there, storing nothing new."""
    cache = tmp_path / "numba"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
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
