"""Dosaku's engine core: the rules (engine.rules), the evaluators (engine.evaluators) and the
search (engine.search), each building on the ones before it, under the facade at this level
(engine.engine with its settings, clock and dead-stone judgement).

numba's on-disk cache only notices edits to a jitted function's own file, not to the functions
it calls in other modules, so a cache from older board code could be loaded by newer callers.
Unless NUMBA_CACHE_DIR is set, the cache therefore lives in a directory named after a hash of
this package's sources, its subpackages included: any edit to engine/ starts a fresh cache.
numba itself is not imported here (it takes a third of a second, and the GTP front-end must
answer at once): the setting goes into the environment numba reads when it is first imported.
"""

import hashlib
import os
import sys
from pathlib import Path


def _source_keyed_cache_dir() -> Path:
    digest = hashlib.sha256()
    package = Path(__file__).parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "dosaku" / "numba" / digest.hexdigest()[:16]


if not os.environ.get("NUMBA_CACHE_DIR"):
    os.environ["NUMBA_CACHE_DIR"] = str(_source_keyed_cache_dir())
    if "numba" in sys.modules:
        sys.modules["numba"].config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]
