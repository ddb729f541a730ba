"""run_engine's flags and config file map onto the evaluator and EngineConfig as documented."""

import pytest

import run_engine
from engine.config import EngineConfig
from engine.evaluator import UniformEvaluator
from engine.onnx_options import PROVIDERS, is_onnx_file
from engine.rollout import RolloutEvaluator


def test_defaults_without_a_network_use_rollouts_for_a_second(monkeypatch, tmp_path):
    monkeypatch.setattr(run_engine, "SHIPPED_MODEL", tmp_path / "absent.onnx")
    args = run_engine.parse_flags([])
    cfg = run_engine.engine_config(args)
    assert (args.evaluator, cfg.time_per_move, cfg.search.batch_size) == ("rollout", 1.0, 8)
    assert isinstance(run_engine.build_evaluator(args), RolloutEvaluator)
    assert cfg.time_per_move == 1.0 and cfg.visits == 0 and cfg.use_lcb


def test_visit_limit_drops_the_default_time_limit():
    args = run_engine.parse_flags(["--visits", "100", "--evaluator", "uniform", "--no-lcb"])
    cfg = run_engine.engine_config(args)
    assert (cfg.visits, cfg.time_per_move, cfg.use_lcb) == (100, 0.0, False)
    assert isinstance(run_engine.build_evaluator(args), UniformEvaluator)
    assert cfg.move_limits() == EngineConfig(visits=100).move_limits()  # the flag = the field


def test_config_file_is_overridden_by_the_command_line(tmp_path):
    cfg = tmp_path / "dosaku.cfg"
    cfg.write_text("# settings\nvisits = 50\nresign_threshold = 0.1  # lower\nlcb = false\n"
                   "komi = 6.5\n")
    args = run_engine.parse_flags(["--config", str(cfg), "--visits", "70"])
    assert (args.visits, args.resign_threshold, args.lcb, args.komi) == (70, 0.1, False, 6.5)


def test_bad_config_line_and_onnx_without_model_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(run_engine, "SHIPPED_MODEL", tmp_path / "absent.onnx")
    cfg = tmp_path / "bad.cfg"
    cfg.write_text("visits 50\n")
    with pytest.raises(SystemExit):
        run_engine.parse_flags(["--config", str(cfg)])
    with pytest.raises(SystemExit):
        run_engine.parse_flags(["--evaluator", "onnx"])


def test_provider_choices_and_onnx_suffix_come_from_the_engine(tmp_path, monkeypatch):
    monkeypatch.setattr(run_engine, "SHIPPED_MODEL", tmp_path / "absent.onnx")
    for name in PROVIDERS:
        assert run_engine.parse_flags(["--provider", name]).provider == name
    with pytest.raises(SystemExit):
        run_engine.parse_flags(["--provider", "tpu"])
    assert is_onnx_file("nets/b6.ONNX") and not is_onnx_file("nets/b6.bin.gz")
