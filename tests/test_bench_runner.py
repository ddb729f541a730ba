"""bench.runner and python -m dosaku.bench: repetition, median and spread, skips and errors,
reports.

Fake bench modules in a temporary package stand in for the real ones, so these are tests of
the runner's behaviour, not timings.
"""

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from dosaku.bench import nn as bench_nn
from dosaku.bench import startup as bench_startup
from dosaku.bench.__main__ import main as bench_main
from dosaku.bench.runner import Skip, fmt, run_all
from dosaku.weights import model_path

MODULES = {
    "__init__.py": "",
    # successive calls give 5, 1, 3 (then 5, 1, ... again): median 3, spread 1-5
    "good.py": """
        CALLS = []
        VALUES = [5.0, 1.0, 3.0]

        def measure(quick):
            CALLS.append(quick)
            v = VALUES[(len(CALLS) - 1) % 3]
            return {"speed": (v * 1000, "moves/s"), "latency": (v / 10, "ms")}

        def other(quick):
            return {"only figure": (42, "items")}
    """,
    "skipper.py": """
        from dosaku.bench.runner import Skip

        def measure(quick):
            raise Skip("no model at ../shared/models")
    """,
    "broken.py": """
        def measure(quick):
            raise RuntimeError("kernel exploded")
    """,
    "needs_dep.py": """
        import no_such_package_for_bench_tests

        def measure(quick):
            return {}
    """,
    "no_measure.py": "X = 1\n",
}


@pytest.fixture
def fakebench(tmp_path, monkeypatch):
    pkg = tmp_path / "fakebench"
    pkg.mkdir()
    for name, text in MODULES.items():
        (pkg / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "fakebench"
    for name in list(sys.modules):
        if name.startswith("fakebench"):
            del sys.modules[name]


def test_medians_spread_skips_and_errors(fakebench, tmp_path, capsys):
    out = tmp_path / "report"
    entries = ["good", "good:other", "skipper", "broken", "missing", "needs_dep", "no_measure"]
    results = run_all(entries, 3, True, str(out), package=fakebench)
    status = {r.name: (r.status, r.message) for r in results}
    assert status["good"] == ("ok", "") and status["good:other"] == ("ok", "")
    assert status["skipper"] == ("skipped", "no model at ../shared/models")
    assert status["broken"] == ("error", "RuntimeError: kernel exploded")
    assert status["missing"] == ("skipped", "module fakebench.missing does not exist yet")
    assert status["needs_dep"][0] == "skipped"
    assert "no_such_package_for_bench_tests" in status["needs_dep"][1]
    assert status["no_measure"] == ("skipped",
                                    "fakebench.no_measure has no measure(quick) function")
    assert sys.modules["fakebench.good"].CALLS == [True] * 3    # quick passed on, 3 repeats

    data = json.loads((out / "bench.json").read_text())
    speed = data["benches"]["good"]["figures"]["speed"]
    assert speed == {"median": 3000.0, "min": 1000.0, "max": 5000.0, "unit": "moves/s",
                     "values": [5000.0, 1000.0, 3000.0]}
    assert data["benches"]["good"]["figures"]["latency"]["median"] == pytest.approx(0.3)
    assert data["benches"]["good:other"]["figures"]["only figure"]["values"] == [42.0] * 3
    assert data["benches"]["skipper"]["figures"] == {}
    assert data["meta"]["repeat"] == 3 and data["meta"]["quick"] is True

    md = (out / "bench.md").read_text()
    assert md == capsys.readouterr().out.rstrip("\n") + "\n"       # printed and written alike
    assert "| good | speed | 3,000 | 1,000-5,000 | moves/s |" in md
    assert "| good | latency | 0.3 | 0.1-0.5 | ms |" in md
    assert "- skipper: skipped: no model at ../shared/models" in md
    assert "- broken: error: RuntimeError: kernel exploded" in md


def test_unit_change_is_an_error(fakebench, tmp_path):
    (tmp_path / "fakebench" / "fickle.py").write_text(
        "N = [0]\ndef measure(quick):\n    N[0] += 1\n"
        "    return {'t': (1.0, 's' if N[0] == 1 else 'ms')}\n")
    (r,) = run_all(["fickle"], 2, False, None, package=fakebench)
    assert r.status == "error" and "changed unit" in r.message


def test_fmt():
    assert (fmt(123456.7), fmt(12.345), fmt(0.012345)) == ("123,457", "12.3", "0.0123")


def test_cli_selects_entries_and_reports_errors(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr("dosaku.bench.__main__.run_all",
                        lambda *args: ran.append(args) or [])
    assert bench_main(["--only", "search", "startup", "--repeat", "2", "--out", "o"]) == 0
    assert ran == [(["search:measure_uniform", "search:measure_onnx", "startup",
                     "startup:measure_cold", "startup:measure_cold_network"], 2, False, "o")]
    with pytest.raises(SystemExit):
        bench_main(["--only", "nonexistent"])
    with pytest.raises(SystemExit):
        bench_main(["--repeat", "0"])


def test_startup_answers_in_order_or_skips(fake_engine, tmp_path, monkeypatch):
    engine = fake_engine("pass")
    figs = bench_startup.measure(True, engine)
    times = [figs[k][0] for k in ("to protocol_version answer", "to list_commands answer",
                                  "to first board command answer",
                                  "to first genmove answer (19x19)")]
    assert 0 < times[0] <= times[1] <= times[2] <= times[3]
    assert {u for _, u in figs.values()} == {"s"}
    assert figs["engine CPU time, launch to quit after that genmove"][0] >= 0
    monkeypatch.setattr(bench_startup, "ENGINE", tmp_path / "run_engine.py")
    with pytest.raises(Skip, match="run_engine.py not found"):
        bench_startup.measure(True)


def test_cold_start_launches_with_empty_caches(monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/somewhere/warm")
    seen = []
    monkeypatch.setattr(bench_startup, "_launch",
                        lambda command: seen.append(dict(os.environ)) or {"t": (1.0, "s")})
    assert bench_startup.measure_cold(False, "engine") == {"t, cold cache": (1.0, "s")}
    cache = Path(seen[0]["NUMBA_CACHE_DIR"])
    assert cache.parent == Path(seen[0]["HOME"]) and not cache.parent.exists()  # removed after
    assert os.environ["NUMBA_CACHE_DIR"] == "/somewhere/warm"


def test_transformer_bench_finds_the_shipped_net_and_skips_without_it(tmp_path, monkeypatch):
    assert bench_nn.B10_MODEL == model_path("b10c384h6nbttflrs") and bench_nn.B10_MODEL.is_file()
    monkeypatch.setattr(bench_nn, "B10_MODEL", tmp_path / "absent.bin.gz")
    with pytest.raises(Skip, match=r"weights/ is incomplete"):
        bench_nn.measure_transformer(True)
