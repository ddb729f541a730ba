"""Settings over GTP (kata-get-param, kata-set-param, GoGui's dosaku-param) and in --config
files, under the same names."""

import re

import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import UniformEvaluator
from dosaku.engine.search.config import SearchConfig
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.params import PARAMS
from dosaku.gtp.server import GtpServer
from dosaku.launch.factory import engine_config
from dosaku.launch.flags import parse_flags
from tests.gtp_answers import fail, ok

START = EngineConfig(search=SearchConfig(batch_size=8, max_nodes=20_000, max_edges=500_000),
                     visits=0, playouts=40, seconds=0, report_reuse=False)

# name -> (a value to set, how kata-get-param shows it, the EngineConfig it leads to)
CHANGES = {
    "visits": ("120", "120", lambda c: c.visits == 120),
    "playouts": ("64", "64", lambda c: c.playouts == 64),
    "time": ("2.5", "2.5", lambda c: c.seconds == 2.5),
    "lcb": ("false", "false", lambda c: not c.use_lcb),
    "katago-choice": ("true", "true", lambda c: c.katago_choice),
    "resign-threshold": ("0.1", "0.1", lambda c: c.resign_threshold == 0.1),
    "batch": ("4", "4", lambda c: c.search.batch_size == 4),
    "ponder": ("true", "true", lambda c: c.ponder),
    "friendly-pass": ("off", "false", lambda c: not c.friendly_pass),
    "policy-optimism": ("1", "1", lambda c: c.search.policy_optimism == 1.0),
    "root-policy-optimism": ("0.2", "0.2", lambda c: c.search.root_policy_optimism == 0.2),
}
BAD_VALUES = {"visits": ["-1", "1.5", "x"], "playouts": ["-3", "many"],
              "time": ["-1", "nan", "inf", "soon"], "lcb": ["maybe", "2"],
              "katago-choice": ["perhaps"],
              "resign-threshold": ["1", "-0.1", "nan"], "batch": ["0", "2000", "8.0"],
              "ponder": ["sometimes"], "friendly-pass": ["maybe"],
              "policy-optimism": ["-0.1", "1.01", "nan"], "root-policy-optimism": ["2", "x"]}


@pytest.fixture
def srv():
    engine = Engine(9, 9, 7.5, evaluator=UniformEvaluator(), config=START, log=lambda m: None)
    return GtpServer(Commands(EngineLoader.of(engine)))


def test_every_setting_is_covered():
    assert set(CHANGES) == set(PARAMS) == set(BAD_VALUES)


def test_get_and_set(srv):
    engine = srv.commands.engine
    assert ok(srv, "kata-get-param visits") == "0"
    assert ok(srv, "kata-get-param lcb") == "true"
    assert ok(srv, "kata-get-param time") == "0"
    for name, (value, shown, holds) in CHANGES.items():
        ok(srv, f"kata-set-param {name} {value}")
        assert ok(srv, f"kata-get-param {name}") == shown
        assert holds(engine.config), name
    assert engine.search.config.batch_size == 4  # the search itself uses the new batch
    # names as flags or config keys (resign_threshold) and KataGo's limits' names work too
    ok(srv, "kata-set-param resign_threshold 0.2")
    ok(srv, "kata-set-param maxVisits 300")
    assert (engine.config.resign_threshold, engine.config.visits) == (0.2, 300)
    ok(srv, "kata-set-param policyOptimism 0.5")
    ok(srv, "kata-set-param rootPolicyOptimism 0.1")
    assert (engine.search.config.policy_optimism,
            engine.search.config.root_policy_optimism) == (0.5, 0.1)


def test_bad_names_and_values_change_nothing(srv):
    engine = srv.commands.engine
    before = engine.config
    assert fail(srv, "kata-get-param nonsense") == "unknown parameter"
    assert fail(srv, "kata-set-param nonsense 1") == "unknown parameter"
    for name, values in BAD_VALUES.items():
        for value in values:
            line = f"kata-set-param {name} {value}"
            assert fail(srv, line) == "invalid value", line
    assert fail(srv, "kata-set-param visits") == "syntax error"
    assert fail(srv, "kata-get-param") == "syntax error"
    assert engine.config == before


def test_search_follows_the_changed_limits(counting_evaluator):
    engine = Engine(9, 9, 7.5, evaluator=counting_evaluator, config=START, log=lambda m: None)
    srv = GtpServer(Commands(EngineLoader.of(engine)))
    ok(srv, "kata-set-param playouts 0")
    ok(srv, "kata-set-param visits 24")
    ok(srv, "kata-set-param batch 3")
    ok(srv, "reg_genmove b")
    # at most 24 visits, not 40 playouts (leaves in flight count, so the limit is exact; early
    # stop may end sooner), in batches of at most 3 (they start at one leaf and grow)
    assert 1 < engine.search.root_stats().root_visits <= 24
    assert engine.search.config.batch_size == 3
    assert counting_evaluator.positions <= 3 * counting_evaluator.calls


def test_gogui_param_lists_and_sets(srv):
    lines = ok(srv, "dosaku-param").split("\n")
    assert [ln.split()[1] for ln in lines] == list(PARAMS)
    assert "[bool] lcb 1" in lines and "[bool] ponder 0" in lines
    assert "[string] playouts 40" in lines
    ok(srv, "dosaku-param lcb 0")
    ok(srv, "dosaku-param visits 77")
    lines = ok(srv, "dosaku-param").split("\n")
    assert "[bool] lcb 0" in lines and "[string] visits 77" in lines
    assert fail(srv, "dosaku-param visits") == "syntax error"
    assert fail(srv, "dosaku-param visits -2") == "invalid value"
    assert "param/Parameters/dosaku-param" in ok(srv, "gogui-analyze_commands").split("\n")


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_config_file_takes_the_same_names(tmp_path, name, srv):
    value, _, holds = CHANGES[name]
    cfg = tmp_path / "dosaku.cfg"
    cfg.write_text(f"{name} = {value}\n")
    args = parse_flags(["--config", str(cfg), "--evaluator", "uniform"])
    assert holds(engine_config(args))
    assert re.fullmatch(r"\S+", ok(srv, f"kata-get-param {name}"))
