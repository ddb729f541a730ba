"""The numba cache directory follows the engine's sources (engine/__init__.py)."""

import os
import subprocess
import sys
from pathlib import Path

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


def test_the_suite_runs_in_a_home_and_cache_of_its_own():
    """conftest.py gives the run an empty home: every compiled kernel, conversion and int8 copy
    is made afresh and lands there, never in the developer's home."""
    import numba

    from dosaku.networks.cache import cache_dir
    home = Path.home()
    sandbox = home.parent
    assert home.name == "home" and sandbox.name.startswith("dosaku-tests-")
    # numba re-reads its NUMBA_* settings at each compile: read them as the next compile will
    numba.core.config.reload_config()
    assert Path(numba.config.CACHE_DIR).is_relative_to(sandbox)
    assert Path(os.environ["NUMBA_CACHE_DIR"]).is_relative_to(sandbox)
    assert cache_dir().is_relative_to(sandbox)
