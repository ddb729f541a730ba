"""The settings table (launch/settings.py) against what is generated from it: the command line,
the flags -> EngineConfig mapping and the GTP settings agree on every name, default and range,
and a value out of range is refused the same clear way by a flag and by kata-set-param."""

import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import UniformEvaluator
from dosaku.engine.search.config import SearchConfig
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.params import KATAGO_NAMES, PARAMS
from dosaku.gtp.server import GtpServer
from dosaku.launch.factory import engine_config
from dosaku.launch.flags import flag_parser, parse_flags
from dosaku.launch.settings import SETTINGS
from tests.gtp_answers import fail, ok

LIVE = [s for s in SETTINGS if s.live]
# KataGo's kata-set-param names of our settings, as KataGo's GTP documentation spells them
KATAGO = {"maxVisits": "visits", "maxPlayouts": "playouts", "maxTime": "time",
          "policyOptimism": "policy-optimism", "rootPolicyOptimism": "root-policy-optimism"}


def outside(setting) -> str:
    """A value just outside the setting's range, as text."""
    if setting.high is not None:
        value = setting.high if setting.below_high else setting.high + 1
    else:
        value = setting.low - 1
    return str(int(value) if setting.kind is int else float(value))


@pytest.fixture
def srv():
    engine = Engine(9, 9, 7.5, evaluator=UniformEvaluator(),
                    config=EngineConfig(search=SearchConfig(batch_size=8, max_nodes=2000,
                                                            max_edges=50_000)),
                    log=lambda m: None)
    return GtpServer(Commands(EngineLoader.of(engine)))


def test_every_row_is_a_flag_and_every_flag_a_row():
    options = {o for a in flag_parser()._actions for o in a.option_strings} - {"-h", "--help"}
    flags = {s.flag for s in SETTINGS}
    flags |= {f"--no-{s.name}" for s in SETTINGS if s.kind is bool and not s.store_true}
    assert options == flags


def test_the_live_settings_are_the_gtp_settings_each_with_a_field_and_a_range():
    assert set(PARAMS) == {s.name for s in LIVE}
    for s in LIVE:
        assert s.field is not None, s.name
        assert s.kind is bool or s.has_range, f"{s.name} takes any value"
    assert {k.lower(): v for k, v in KATAGO.items()} == KATAGO_NAMES


def test_flag_defaults_are_what_kata_get_param_shows_at_start(srv):
    args = parse_flags(["--evaluator", "uniform", "--visits", "10"])
    config = engine_config(args)
    srv.commands.engine.set_config(config)
    for s in LIVE:
        given = getattr(args, s.dest)
        if given is not None:
            assert s.read(config) == given, s.name
    assert ok(srv, "kata-get-param visits") == "10"
    assert ok(srv, "kata-get-param time") == "0"  # --time unset: no limit beside --visits
    assert ok(srv, "kata-get-param batch") == "8"  # the rollout/uniform default


@pytest.mark.parametrize("name, ours", sorted(KATAGO.items()))
def test_katago_names_set_the_same_setting(srv, name, ours):
    value = "7" if PARAMS[ours].kind is int else "0.5"  # no setting's value at start
    ok(srv, f"kata-set-param {name} {value}")
    assert ok(srv, f"kata-get-param {ours}") == value
    assert ok(srv, f"kata-get-param {name}") == value


@pytest.mark.parametrize("setting", [s for s in SETTINGS if s.has_range], ids=lambda s: s.name)
def test_out_of_range_is_refused_by_the_flag_with_a_clear_message(setting, capsys):
    bad = outside(setting)
    with pytest.raises(SystemExit) as stop:
        parse_flags(["--evaluator", "uniform", setting.flag, bad])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    if setting.name in ("boardsize", "rollout-mix"):
        assert f"{setting.flag} must be between" in err
    else:
        assert f"{setting.flag} {float(bad):g} is out of range (see --help)" in err


@pytest.mark.parametrize("setting", [s for s in LIVE if s.has_range], ids=lambda s: s.name)
def test_out_of_range_is_refused_over_gtp_and_changes_nothing(setting, srv):
    before = ok(srv, f"kata-get-param {setting.name}")
    assert fail(srv, f"kata-set-param {setting.name} {outside(setting)}") == "invalid value"
    assert ok(srv, f"kata-get-param {setting.name}") == before
