"""Compiling the numba kernels without making a client wait for it.

numba compiles a kernel, with everything it calls, on its first call and keeps the machine code
in its on-disk cache, which processes share: what one process has stored, another loads in a
fraction of a second instead of compiling. On an empty cache (a new install or new engine
sources) compiling what a genmove calls takes 20-50 s, so the engine starts `python -m
dosaku.engine.precompile KIND`, a helper that compiles the leaf evaluator's kernels (KIND, its
Capabilities.precompile_kind: `rollout`, or a network feature set such as `katago-v7`), the
game and tree kernels around the search, and the search's own, into the cache. A protocol
server meanwhile runs the kernels as plain Python (engine/plain_kernels.py) and takes the
compiled ones once the helper is done; an engine that must be compiled before it returns
(`--precompile`, the tools) compiles the search kernels itself beside the helper, then loads
the helper's work.
"""

import contextlib
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from dosaku.engine import plain_kernels
from dosaku.engine.evaluators.positions import batch_row_from_game
from dosaku.engine.search.config import SearchConfig

HELPER_TIMEOUT = 600.0  # seconds the engine waits for the helper at most
LOCK = "compiling.lock"  # in the cache folder, held by the helper that compiles
# this module's name, which the helper runs under `python -m` (the installed package `dosaku`
# finds it from any working directory)
HELPER = plain_kernels.PACKAGE + "precompile"


def cache_is_cold() -> bool:
    """Whether numba's cache lacks the search kernel (its files are named after the function;
    small kernels may be there already: constructing an Engine compiles one)."""
    folder = Path(os.environ.get("NUMBA_CACHE_DIR") or ".")
    return not any(folder.rglob("selection.select_batch-*.nbi"))


def start_helper(kind: str | None, spare_core: bool = True) -> subprocess.Popen | None:
    """The helper process on a cold cache (with a spare core, where `spare_core`), else None."""
    if plain_kernels.is_plain() or spare_core and (os.cpu_count() or 1) < 2:
        return None  # (plain: a helper is at work already)
    if not os.environ.get("NUMBA_CACHE_DIR") or not cache_is_cold():
        return None
    args = [sys.executable, "-m", HELPER] + ([kind] if kind else [])
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def compile_in_background(kind: str | None) -> None:
    """On a cold cache (the caller knows it is), start the helper and run the kernels as plain
    Python until it is done (nothing where they cannot run plain)."""
    if not plain_kernels.install():
        return
    helper = start_helper(kind, spare_core=False)
    if helper is not None:
        plain_kernels.run_plain_until(helper)


def wait_for(helper: subprocess.Popen) -> None:
    """Let the helper finish (whatever it did not store, the engine compiles itself)."""
    try:
        helper.wait(HELPER_TIMEOUT)
    except subprocess.TimeoutExpired:
        helper.kill()


def compile_evaluator(kind: str | None) -> None:
    """Compile the kernels of a leaf evaluator kind (playouts or network input features)."""
    from dosaku.engine.evaluators.evaluator import PositionBatch
    if kind is None:
        return
    batch = PositionBatch(2, 9, 9, 7.5, _scratch_game().rules)
    batch_row_from_game(batch, 0, _scratch_game())
    batch.count = 1
    if kind == "rollout":
        from dosaku.engine.evaluators.rollout import RolloutEvaluator
        RolloutEvaluator().evaluate(batch)
        return
    from dosaku.engine.evaluators.features import fill_features
    from dosaku.engine.evaluators.onnx_evaluator import KNOWN_FEATURE_SETS
    planes, globals_ = KNOWN_FEATURE_SETS[kind]
    fill_features(batch, np.zeros((2, planes, 9, 9), np.float32),
                  np.zeros((2, globals_), np.float32), np.zeros(1, np.int64))


def compile_search(config: SearchConfig, width: int = 9, height: int = 9) -> None:
    """Compile the search's kernels with a tiny search of a uniform evaluator: selection,
    backup, re-centring, principal variations (the network's own kernels are
    compile_evaluator's)."""
    from dosaku.engine.evaluators.evaluator import UniformEvaluator
    from dosaku.engine.rules.constants import BLACK
    from dosaku.engine.rules.game import GameState
    from dosaku.engine.search.driver import Search
    from dosaku.engine.search.limits import SearchLimits
    scratch = GameState(width, height)
    small = replace(config, max_nodes=1000, max_edges=100_000)
    search = Search(UniformEvaluator(), small)
    search.run(scratch, BLACK, SearchLimits(playouts=4 * small.batch_size))
    search.principal_variation(int(search.root_stats().actions[0]))
    search.compile_backup(scratch)


def load_search_kernels(config: SearchConfig, width: int, height: int) -> None:
    """The search's, game's and tree's kernels: loaded from the cache, or compiled into it."""
    compile_search(config, width, height)
    compile_game_and_tree()


def compile_game_and_tree() -> None:
    """Compile what a genmove calls around the selection: the backup, moves, legality, tree
    reuse."""
    from dosaku.engine.evaluators.evaluator import UniformEvaluator
    from dosaku.engine.rules.constants import BLACK
    from dosaku.engine.rules.coords import point_from_xy
    from dosaku.engine.search import tree as T
    from dosaku.engine.search.driver import Search
    from dosaku.engine.search.limits import root_visit_gap
    game = _scratch_game()
    Search(UniformEvaluator(), SearchConfig(max_nodes=4, max_edges=400)).compile_backup(game)
    game.play(BLACK, point_from_xy(4, 4, 9))
    game.undo()
    tree, spare = T.new_tree(4, 400), T.new_tree(4, 400)
    T.reset_tree(tree, BLACK, 0)
    T.copy_subtree(tree, 1, spare)
    T.find_child(tree, 1, 0)
    root_visit_gap(tree, game.legal_mask(BLACK))


def _scratch_game():
    from dosaku.engine.rules.game import GameState
    return GameState(9, 9)


def one_helper_at_a_time():
    """An exclusive lock on the cache folder: a helper started while another compiles waits,
    then finds the other's work in the cache instead of compiling it a second time."""
    try:
        import fcntl
    except ImportError:  # not on Windows: helpers side by side compile the same kernels
        return contextlib.nullcontext()
    folder = Path(os.environ["NUMBA_CACHE_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    lock = open(folder / LOCK, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


if __name__ == "__main__":  # the search last: its kernel in the cache means a warm cache
    with one_helper_at_a_time():
        compile_evaluator(sys.argv[1] if len(sys.argv) > 1 else None)
        compile_game_and_tree()
        compile_search(SearchConfig())
