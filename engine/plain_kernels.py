"""The engine's numba kernels run as plain Python while their compiled versions are being made.

On an empty numba cache (a new install, new engine sources) compiling what a genmove calls takes
20-50 s, which a server's clock charges to the first move. So a protocol server starts on the
kernels' own Python functions while engine/precompile.py's helper process compiles them into the
cache, and takes the compiled kernels (loaded from the cache in a fraction of a second) at the
first search after the helper is done: nothing is compiled in this process meanwhile.

How: a numba dispatcher with no compiled version for its arguments calls its
`_compile_for_args`, which returns the function to run; while plain, it returns the Python
function itself for the engine's kernels, and that function's calls of other kernels go the
same way. The moves are the same: a kernel's `np.random` draws then come from NumPy's global
generator, which numba's reproduces draw for draw from the same seed (engine/rules/board.py's
seed_rng), and the kernels are checked as plain Python against their compiled selves
(tests/test_board_nojit.py, tests/test_search_nojit.py, tests/test_plain_kernels.py).
"""

import inspect
import subprocess
import sys
import threading

PACKAGE = __name__.rsplit(".", 1)[0] + "."  # the engine's modules: the kernels this runs plain

_lock = threading.Lock()
_helper: subprocess.Popen | None = None  # while plain: the process compiling the kernels
_entries: dict = {}  # dispatcher -> the Python function that stands in for it
_installed = False  # whether numba's Dispatcher._compile_for_args asks this module first


def is_plain() -> bool:
    return _helper is not None


def install() -> bool:
    """Make the kernels able to run plain (numba's dispatcher asks this module first). False,
    with a note, where this numba offers no way to do so: the kernels then compile here."""
    global _installed
    with _lock:
        if _installed:
            return True
        try:
            from numba.core.dispatcher import Dispatcher
            original = Dispatcher._compile_for_args
        except (ImportError, AttributeError):
            _note("cannot run the kernels as Python while they compile (numba's dispatcher "
                  "changed): compiling them in this process")
            return False

        def compile_or_plain(self, *args, **kws):
            if _helper is not None and self.py_func.__module__.startswith(PACKAGE):
                return _entry(self)
            return original(self, *args, **kws)

        Dispatcher._compile_for_args = compile_or_plain
        _installed = True
        return True


def run_plain_until(helper: subprocess.Popen) -> None:
    """Run the engine's kernels as Python until `helper` has exited (see settle); install()
    first."""
    global _helper
    assert _installed, "install() first"
    with _lock:
        _helper = helper


def settle() -> None:
    """Take the compiled kernels once the helper has exited; called before each search, so
    that a search runs in one mode throughout. A helper that failed leaves the compiling to
    this process, as without a helper."""
    global _helper
    with _lock:
        if _helper is None or _helper.poll() is None:
            return
        if _helper.returncode != 0:
            _note(f"the kernel compiler exited with code {_helper.returncode}: compiling the "
                  "kernels in this process")
        _helper = None


def _entry(dispatcher):
    """The Python function numba's dispatcher calls in place of a compiled one. Numba hands a
    kernel's `*args` over packed in one tuple, so such kernels get them unpacked."""
    entry = _entries.get(dispatcher)
    if entry is None:
        function = dispatcher.py_func
        params = list(inspect.signature(function).parameters.values())
        if params and params[-1].kind is inspect.Parameter.VAR_POSITIONAL:
            def entry(*args, _function=function):
                return _function(*args[:-1], *args[-1])
        else:
            entry = function
        _entries[dispatcher] = entry
    return entry


def _note(text: str) -> None:
    print(f"dosaku: {text}", file=sys.stderr, flush=True)
