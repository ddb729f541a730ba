"""The numba cache directory follows the engine's sources (engine/__init__.py); the test runs'
own cache follows everything its files depend on (tests/run_cache.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import run_cache
from tests.run_cache import LIBRARIES, cache_key, keyed_cache

ROOT = Path(__file__).resolve().parents[1]


def cache_dir_for(tmp_path, package_dir: Path) -> str:
    """numba's cache directory in a process that imports the copy of `dosaku` in package_dir
    (found on PYTHONPATH before the installed one)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env["PYTHONPATH"] = str(package_dir)
    code = "import dosaku.engine, numba; print(dosaku.engine.__file__, numba.config.CACHE_DIR)"
    where, cache = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                  text=True, check=True, cwd=tmp_path).stdout.split()
    assert Path(where).is_relative_to(package_dir)  # the copy, not the installed package
    return cache


def test_cache_dir_changes_when_an_engine_source_changes(tmp_path):
    copy = tmp_path / "pkg"
    for f in [ROOT / "__init__.py", *(ROOT / "engine").rglob("*.py")]:
        target = copy / "dosaku" / f.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.read_bytes())
    first = cache_dir_for(tmp_path, copy)
    assert first.startswith(str(tmp_path / "xdg" / "dosaku" / "numba"))
    assert cache_dir_for(tmp_path, copy) == first
    seen = {first}
    for edited in ("engine/engine.py", "engine/rules/board.py", "engine/search/selection.py"):
        source = copy / "dosaku" / edited  # the facade and a kernel in each of two subpackages
        source.write_text(source.read_text() + "\n# edited\n")
        seen.add(cache_dir_for(tmp_path, copy))
    assert len(seen) == 4


def test_explicit_numba_cache_dir_is_respected(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "mine"))
    code = "import dosaku.engine, numba; print(numba.config.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout.strip()
    assert out == str(tmp_path / "mine")


def test_the_suite_runs_in_a_home_of_its_own_and_the_keyed_test_cache():
    """conftest.py gives the run an empty home, never the developer's, and the cache the test
    runs keep, in the folder keyed by this checkout's sources and libraries: every compiled
    kernel, conversion and int8 copy lands there."""
    import numba

    from dosaku.networks.cache import cache_dir
    home = Path.home()
    assert home.name == "home" and home.parent.name.startswith("dosaku-tests-")
    keyed = Path(os.environ["XDG_CACHE_HOME"])
    assert keyed.name == cache_key(ROOT) and not keyed.is_relative_to(home)
    # numba re-reads its NUMBA_* settings at each compile: read them as the next compile will
    numba.core.config.reload_config()
    assert Path(numba.config.CACHE_DIR).is_relative_to(keyed)
    assert Path(os.environ["NUMBA_CACHE_DIR"]).is_relative_to(keyed)
    assert cache_dir().is_relative_to(keyed)


def copy_sources(root: Path, target: Path) -> Path:
    for folder in ("engine", "networks", "gtp"):
        for f in (root / folder).rglob("*.py"):
            (target / f.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
            (target / f.relative_to(root)).write_bytes(f.read_bytes())
    return target


def test_the_test_cache_key_follows_what_the_cached_files_depend_on(tmp_path):
    copy = copy_sources(ROOT, tmp_path / "copy")
    versions = {name: "1.0" for name in LIBRARIES}
    assert cache_key(copy) == cache_key(ROOT)  # the same sources, the installed libraries
    key = cache_key(copy, versions)
    gtp = copy / "gtp" / "server.py"
    gtp.write_text("# not what a cached file depends on\n")
    assert cache_key(copy, versions) == key
    seen = {key}
    for name in LIBRARIES:
        seen.add(cache_key(copy, {**versions, name: "2.0"}))
    for edited in ("engine/rules/board.py", "networks/katago_convert.py",
                   "networks/int8_transformer.py"):
        source = copy / edited
        source.write_text(source.read_text() + "\n# edited\n")
        seen.add(cache_key(copy, versions))
    assert len(seen) == 1 + len(LIBRARIES) + 3


def test_the_test_cache_keeps_the_most_recently_used_keys(tmp_path):
    base = tmp_path / "dosaku-tests"
    for n, key in enumerate("abcde"):
        folder = keyed_cache(base, key, kept=3)
        os.utime(folder, (1000 + n, 1000 + n))  # used in that order
        (folder / "kernel").write_text(key)
    assert sorted(p.name for p in base.iterdir()) == ["c", "d", "e"]
    again = keyed_cache(base, "c", kept=3)  # used again: kept with its files, now the newest
    assert (again / "kernel").read_text() == "c"
    keyed_cache(base, "f", kept=3)
    assert sorted(p.name for p in base.iterdir()) == ["c", "e", "f"]


@pytest.mark.slow  # a cold compile in two processes; every run from an empty cache makes it
def test_compiling_ahead_fills_an_empty_cache(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    code = ("from tests.run_cache import compile_kernels; from dosaku.engine.precompile import "
            "cache_is_cold; print(cache_is_cold(), compile_kernels(), cache_is_cold(), "
            "compile_kernels())")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=900).stdout.split()
    assert out == ["True", "True", "False", "False"]  # compiled once, then found warm
    names = {p.name.split("-")[0] for p in (tmp_path / "numba").rglob("*.nbi")}
    assert {"selection.select_batch", "features.fill_batch", "backup.expand_and_backup"} <= names


def test_a_failing_compile_ahead_is_said_and_left_to_the_tests(monkeypatch, capsys):
    from dosaku.engine import precompile
    monkeypatch.setattr(precompile, "cache_is_cold", lambda: True)
    monkeypatch.setattr(run_cache, "COMPILE_PARTS", ("raise SystemExit(3)", "pass"))
    assert run_cache.compile_kernels()
    err = capsys.readouterr().err
    assert err.count("compiling ahead failed") == 1 and "SystemExit(3)" in err
