"""Defaults resolved in engine/config.py: move limits, batch size per evaluator, kernel params."""

import pytest

from dosaku.engine.config import DEFAULT_SECONDS, EngineConfig
from dosaku.engine.search.config import FloatParam, IntParam, SearchConfig


def test_time_per_move_defaults_to_a_second_only_without_other_limits():
    assert EngineConfig().move_limits() == (0, 0, DEFAULT_SECONDS)
    assert EngineConfig(visits=100).move_limits() == (100, 0, 0.0)  # exactly 100 visits
    assert EngineConfig(playouts=64).move_limits() == (0, 64, 0.0)
    assert EngineConfig(visits=100, seconds=2.5).move_limits() == (100, 0, 2.5)


def test_unlimited_move_falls_back_to_a_visit_limit_and_time_is_capped():
    cfg = EngineConfig(seconds=0, fallback_visits=123)
    assert cfg.move_limits() == (123, 0, 0.0)
    assert EngineConfig(seconds=900, max_seconds=600).move_limits() == (0, 0, 600.0)


def test_clock_budget_replaces_the_time_per_move():
    assert EngineConfig(seconds=5).move_limits(clock_budget=2.0) == (0, 0, 2.0)
    assert EngineConfig(visits=50).move_limits(clock_budget=1000.0) == (50, 0, 600.0)


def test_batch_and_cache_size_per_evaluator_kind():
    assert (SearchConfig.for_evaluator("onnx").batch_size,
            SearchConfig.for_evaluator("onnx").cache_size) == (16, 16384)
    assert (SearchConfig.for_evaluator("rollout").batch_size,
            SearchConfig.for_evaluator("rollout").cache_size) == (8, 0)
    assert SearchConfig.for_evaluator("uniform", batch_size=32).batch_size == 32
    with pytest.raises(ValueError):
        SearchConfig.for_evaluator("magic")


def test_kernel_params_follow_the_index_enums():
    per_search = dict(komi=6.5, score_center=0.0, sqrt_area=9.0, root_fpu_reduction=0.0,
                      ucb1=True, suicide=False, max_depth=340, history=True, exact_end=True,
                      wide_root_noise=0.25, ban_depth=3)
    cfg = SearchConfig(c_puct=1.5, batch_size=12, max_collisions=0)
    fp, ip = cfg.kernel_params(**per_search)
    assert [p.value for p in FloatParam] == list(range(len(fp)))
    assert [p.value for p in IntParam] == list(range(len(ip)))
    assert fp[FloatParam.c_puct] == 1.5 and fp[FloatParam.komi] == 6.5
    assert fp[FloatParam.root_fpu_reduction] == 0.0 and fp[FloatParam.sqrt_area] == 9.0
    assert ip[IntParam.batch_size] == 12 and ip[IntParam.max_depth] == 340
    assert (ip[IntParam.ucb1], ip[IntParam.suicide], ip[IntParam.history],
            ip[IntParam.exact_end]) == (1, 0, 1, 1)
    assert fp[FloatParam.wide_root_noise] == 0.25 and ip[IntParam.ban_depth] == 3
    assert ip[IntParam.max_collisions] == 1  # at least one collision is allowed
    with pytest.raises(ValueError):
        cfg.kernel_params(komi_typo=7.5, **per_search)
