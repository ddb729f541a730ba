"""dosaku's flags and config file map onto the evaluator and EngineConfig as documented."""

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.evaluators.evaluator import UniformEvaluator
from dosaku.engine.evaluators.onnx_options import PROVIDERS, cpu_runs_int8_fast, is_onnx_file
from dosaku.engine.evaluators.rollout import RolloutEvaluator
from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.launch import factory
from dosaku.launch import flags as launch_flags
from dosaku.weights import model_path
from tests.boards import game_from_diagram


def test_defaults_without_a_network_use_rollouts_for_a_second(monkeypatch, tmp_path):
    monkeypatch.setattr(launch_flags, "SHIPPED_MODEL", tmp_path / "absent.onnx")
    args = launch_flags.parse_flags([])
    cfg = factory.engine_config(args)
    assert (args.evaluator, cfg.time_per_move, cfg.search.batch_size) == ("rollout", 1.0, 8)
    assert isinstance(factory.build_evaluator(args), RolloutEvaluator)
    assert cfg.time_per_move == 1.0 and cfg.visits == 0 and cfg.use_lcb


def test_visit_limit_drops_the_default_time_limit():
    args = launch_flags.parse_flags(["--visits", "100", "--evaluator", "uniform", "--no-lcb"])
    cfg = factory.engine_config(args)
    assert (cfg.visits, cfg.time_per_move, cfg.use_lcb) == (100, 0.0, False)
    assert isinstance(factory.build_evaluator(args), UniformEvaluator)
    assert cfg.move_limits() == EngineConfig(visits=100).move_limits()  # the flag = the field


def test_config_file_is_overridden_by_the_command_line(tmp_path):
    cfg = tmp_path / "dosaku.cfg"
    cfg.write_text("# settings\nvisits = 50\nresign_threshold = 0.1  # lower\nlcb = false\n"
                   "komi = 6.5\n")
    args = launch_flags.parse_flags(["--config", str(cfg), "--visits", "70"])
    assert (args.visits, args.resign_threshold, args.lcb, args.komi) == (70, 0.1, False, 6.5)


def test_bad_config_line_and_onnx_without_model_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(launch_flags, "SHIPPED_MODEL", tmp_path / "absent.onnx")
    cfg = tmp_path / "bad.cfg"
    cfg.write_text("visits 50\n")
    with pytest.raises(SystemExit):
        launch_flags.parse_flags(["--config", str(cfg)])
    with pytest.raises(SystemExit):
        launch_flags.parse_flags(["--evaluator", "onnx"])


def test_provider_choices_and_onnx_suffix_come_from_the_engine(tmp_path, monkeypatch):
    monkeypatch.setattr(launch_flags, "SHIPPED_MODEL", tmp_path / "absent.onnx")
    for name in PROVIDERS:
        assert launch_flags.parse_flags(["--provider", name]).provider == name
    with pytest.raises(SystemExit):
        launch_flags.parse_flags(["--provider", "tpu"])
    assert is_onnx_file("nets/b6.ONNX") and not is_onnx_file("nets/b6.bin.gz")


def test_int8_and_rollout_mix_need_a_network_and_a_share_between_0_and_1(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(launch_flags, "SHIPPED_MODEL", tmp_path / "absent.onnx")
    for flags in (["--int8"], ["--rollout-mix", "0.5"],
                  ["--rollout-mix", "0.5", "--evaluator", "uniform"],
                  ["--model", "net.onnx", "--rollout-mix", "1.5"],
                  ["--model", "net.onnx", "--rollout-mix", "-0.1"]):
        with pytest.raises(SystemExit):
            launch_flags.parse_flags(flags)


@pytest.mark.parametrize("flag, good, bad", [("--visits", "50", "-5"),
                                              ("--playouts", "50", "-1"),
                                              ("--time", "0.5", "-1"),
                                              ("--batch", "4", "0"),
                                              ("--resign-threshold", "0.1", "2")])
def test_budget_flags_take_the_ranges_their_gtp_settings_take(flag, good, bad, capsys):
    args = launch_flags.parse_flags(["--evaluator", "uniform", flag, good])
    assert getattr(args, flag[2:].replace("-", "_")) == float(good)
    with pytest.raises(SystemExit):
        launch_flags.parse_flags(["--evaluator", "uniform", flag, bad])
    assert f"{flag} {bad} is out of range" in capsys.readouterr().err


def test_int8_speed_is_read_from_the_cpu_flags():
    assert cpu_runs_int8_fast("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    assert cpu_runs_int8_fast("processor\t: 1\nflags\t\t: fpu sse2 avx avx2 fma\n")
    assert not cpu_runs_int8_fast("flags\t\t: fpu sse2 sse4_2 avx\nbugs\t\t: avx2\n")
    assert not cpu_runs_int8_fast("")


def test_int8_is_left_to_the_network_on_a_cpu_that_runs_it_fast(tmp_path, monkeypatch):
    """None: networks/loading.py decides by the net (tests/test_network_cache.py)."""
    for fast, flags, int8 in ((True, [], None), (False, [], False),
                              (True, ["--no-int8"], False), (False, ["--int8"], True),
                              (True, ["--provider", "cuda"], False),
                              (True, ["--evaluator", "uniform"], False)):
        monkeypatch.setattr(launch_flags, "cpu_runs_int8_fast", lambda fast=fast: fast)
        assert launch_flags.parse_flags(["--model", "net.onnx", *flags]).int8 is int8, flags
    cfg = tmp_path / "dosaku.cfg"
    cfg.write_text("int8 = false\n")
    assert launch_flags.parse_flags(["--config", str(cfg), "--model", "net.onnx"]).int8 is False
    monkeypatch.setattr(launch_flags, "SHIPPED_MODEL", tmp_path / "absent.onnx")
    assert launch_flags.parse_flags([]).int8 is False  # no network: nothing to quantize


def test_int8_plays_the_quantized_net_and_raw_nn_reports_the_float_one():
    """kata-raw-nn stays comparable with KataGo's outputs while the int8 net plays."""
    import onnx

    from dosaku.engine.engine import Engine
    from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
    from dosaku.engine.evaluators.raw_nn import raw_nn
    shipped = model_path("dosaku-b6c96")  # a net that ships its int8 copy
    ev = factory.build_evaluator(launch_flags.parse_flags(["--int8", "--boardsize", "9",
                                                           "--model", "dosaku-b6c96"]))
    assert ev.model.source != shipped and ev.raw_model().source == shipped
    assert any(n.op_type == "QuantizeLinear" for n in onnx.load(str(ev.model.source)).graph.node)
    engine = Engine(9, 9, 7.0, evaluator=ev)
    for vertex in ("E5", "C3"):
        assert engine.play(engine.to_move, parse_vertex(vertex, 9, 9)) == MOVE_OK
    reported = engine.raw_nn([3])[0]
    plain = raw_nn(OnnxModel(shipped), engine.game, 3)
    quantized = raw_nn(ev.model, engine.game, 3)
    assert np.array_equal(reported.policy, plain.policy, equal_nan=True)
    assert (reported.white_win, reported.white_lead) == (plain.white_win, plain.white_lead)
    assert not np.allclose(quantized.policy, plain.policy, atol=1e-6, equal_nan=True)


def test_rollout_mix_reaches_the_leaf_values(b6c96_file):
    from dosaku.engine.engine import Engine
    from dosaku.engine.evaluators.rollout import MixedEvaluator
    from tests.test_search_rollout import SETTLED, _batch
    args = launch_flags.parse_flags(["--model", str(b6c96_file), "--rollout-mix", "0.25",
                                   "--threads", "1", "--no-int8"])  # no int8 copy to calibrate
    ev = factory.build_evaluator(args)
    assert isinstance(ev, MixedEvaluator) and ev.lam == 0.25
    ev.net.symmetry = 0  # the same orientation for both evaluations below
    # settled: every playout ends B-5.5, so Black's rollout value is exactly -1
    g = game_from_diagram(SETTLED, BLACK, komi=0.5)
    net = ev.net.evaluate(_batch(g, [BLACK, WHITE]))
    mixed = ev.evaluate(_batch(g, [BLACK, WHITE]))
    assert mixed.value == pytest.approx(0.75 * net.value + 0.25 * np.array([-1.0, 1.0]),
                                        abs=1e-6)
    assert mixed.score == pytest.approx(0.75 * net.score + 0.25 * np.array([-5.5, 5.5]),
                                        abs=1e-4)
    assert np.array_equal(mixed.policy, net.policy)
    # kata-raw-nn still finds the network inside the mix
    assert Engine(5, 5, 0.5, evaluator=ev).has_network


def test_threads_are_evaluations_in_flight_of_one_thread_each(b6c96_file):
    from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator
    ev = factory.build_evaluator(launch_flags.parse_flags(["--model", str(b6c96_file),
                                                            "--threads", "3", "--no-int8"]))
    assert isinstance(ev, OnnxEvaluator) and ev.capabilities.parallel_calls == 3
    assert ev.model.session.get_session_options().intra_op_num_threads == 1
    # the playout mix is evaluated one call at a time, on --threads network threads
    mixed = factory.build_evaluator(launch_flags.parse_flags(["--model", str(b6c96_file),
                                                               "--rollout-mix", "0.5",
                                                               "--no-int8"]))
    assert mixed.capabilities.parallel_calls == 1
    assert mixed.net.model.session.get_session_options().intra_op_num_threads == 2
