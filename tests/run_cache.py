"""The cache the test runs keep between them: numba's compiled kernels and the converted and
quantized networks, so that a run pays the cold compile only after a change that needs it.

It lives in a folder named after a key (`cache_key`): the Python and library versions the
cached files depend on and every source file of engine/ and networks/, the code that makes
them. A change to any of those starts an empty folder, so no stale kernel or conversion can
be used; the cached networks are named by their source's sha256 as well (networks/cache.py).
Only the most recently used folders are kept. The cold first start itself is checked by the
tests that give an engine an empty cache of its own.

On an empty folder the run compiles the engine's kernels before its first test, in two
processes at once (`compile_kernels`): otherwise each test process would compile all of them
itself, at the same time as the other.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

LIBRARIES = ("numpy", "numba", "onnxruntime", "onnx")  # their versions change what is cached
SOURCES = ("engine", "networks")  # the code that makes the cached files
KEPT = 4  # keyed folders kept: this checkout's and a few others' (clones, branches)


def cache_key(root: Path, versions: dict[str, str] | None = None) -> str:
    """16 hex digits over the Python and library versions and the sources under `root`."""
    digest = hashlib.sha256(sys.version.encode())
    for name in LIBRARIES:
        version = versions[name] if versions is not None else metadata.version(name)
        digest.update(f"\0{name}={version}".encode())
    for folder in SOURCES:
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(b"\0" + path.relative_to(root).as_posix().encode() + b"\0"
                          + path.read_bytes())
    return digest.hexdigest()[:16]


def default_base() -> Path:
    """DOSAKU_TEST_CACHE, else dosaku-tests in the user's cache folder (read before the run
    moves HOME)."""
    if os.environ.get("DOSAKU_TEST_CACHE"):
        return Path(os.environ["DOSAKU_TEST_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dosaku-tests"


def keyed_cache(base: Path, key: str, kept: int = KEPT) -> Path:
    """base/key, made and marked as just used; of the other folders in base, all but the
    kept - 1 most recently used are removed."""
    folder = base / key
    folder.mkdir(parents=True, exist_ok=True)
    os.utime(folder)
    others = sorted((p for p in base.iterdir() if p.is_dir() and p != folder),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for old in others[kept - 1:]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


# what the two compiling processes run: the network's input features, the playouts and the
# game and tree kernels beside the search's own (about the same time each)
COMPILE_PARTS = (
    "from dosaku.engine.evaluators.features import FEATURE_SET; p.compile_evaluator(FEATURE_SET);"
    " p.compile_evaluator('rollout'); p.compile_game_and_tree()",
    "from dosaku.engine.search.config import SearchConfig; p.compile_search(SearchConfig())",
)


def compile_kernels() -> bool:
    """Compile the engine's kernels into numba's cache (NUMBA_CACHE_DIR, set by importing
    dosaku.engine) when its search kernel is missing; whether it did. A part that fails is
    said on stderr and left to the tests, which compile what they call and report the fault."""
    from dosaku.engine.precompile import cache_is_cold
    if not cache_is_cold():
        return False
    parts = [subprocess.Popen([sys.executable, "-c",
                               f"from dosaku.engine import precompile as p; {code}"])
             for code in COMPILE_PARTS]
    for part in parts:
        if part.wait() != 0:
            print(f"tests: compiling ahead failed ({part.args[-1]}); the tests compile "
                  "what they call", file=sys.stderr)
    return True
