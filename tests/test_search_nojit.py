"""The search's kernels once more as plain Python (NUMBA_DISABLE_JIT=1), against the jitted ones.

A small search runs its selection, backup and re-centring kernels and the tree's (expansion,
tree reuse, child lookup, position keys), and the limits' root gap, in a subprocess without the
JIT (the variable must be set before numba is imported), and every array of the tree it leaves
must equal the same search's here, jitted. Without the JIT, numba's silent index wrapping and
type unification are gone, so a kernel that leans on them fails here with a Python traceback
(the board's kernels have tests/test_board_nojit.py).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dosaku.engine.rules.constants import MOVE_OK
from dosaku.engine.rules.coords import parse_vertex, point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.search import tree as T
from dosaku.engine.search.bans import MoveBan, ban_table
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits, root_visit_gap
from tests.evaluators import SkewedEvaluator

ROOT = Path(__file__).resolve().parents[1]
SIZE = 7
SMALL = SearchConfig(batch_size=4, max_nodes=3000, max_edges=150_000)


def tree_arrays(search: Search) -> dict[str, list]:
    """Every tree array, cut to the nodes and edges in use."""
    t = search.tree
    nodes, edges = int(t.meta[T.M_NODES]), int(t.meta[T.M_EDGES])
    cut = {len(t.node_visits): nodes, len(t.edge_action): edges}
    return {name: array[:cut.get(len(array), len(array))].tolist()
            for name, array in t._asdict().items()}


def trace() -> dict:
    """A search of a position with a score lead to centre on and wideRootNoise's bonus, its
    most visited move followed into the subtree (tree reuse), and a second search re-centring
    the reused sums, under move bans for both players down to depth 3."""
    game = GameState(SIZE, SIZE, 6.5)
    for color, vertex in ((1, "D4"), (2, "C5"), (1, "E5"), (2, "E3")):
        assert game.play(color, parse_vertex(vertex, SIZE, SIZE)) == MOVE_OK
    search = Search(SkewedEvaluator(SIZE * SIZE + 1, spread=0.6, score_per_value=8.0), SMALL,
                    seed=5)
    out = {"first": int(search.run(game, game.to_move, SearchLimits(playouts=96),
                                   wide_root_noise=0.3))}
    out["gap"] = int(root_visit_gap(search.tree, search.root_legal))
    stats = search.root_stats()
    best = int(stats.actions[np.argmax(stats.visits)])
    out["pv"] = [int(a) for a in search.principal_variation(best)]
    assert game.play(game.to_move, point_from_action(best, SIZE, SIZE)) == MOVE_OK
    out["reused"] = int(search.update_with_move(game))
    line = frozenset(point_from_action(a, SIZE, SIZE) for a in out["pv"][1:4])
    bans = ban_table([MoveBan(1, line, 3), MoveBan(2, line, 2)], SIZE, SIZE)
    out["second"] = int(search.run(game, game.to_move, SearchLimits(playouts=64), bans=bans))
    out["tree"] = tree_arrays(search)
    return out


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1",
                    reason="already running without JIT")
def test_search_tree_and_backup_kernels_without_jit_match_the_jitted_ones():
    jitted = trace()
    assert jitted["reused"] > 0 and jitted["first"] == 96 and jitted["second"] == 64
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    code = "import json\nfrom tests.test_search_nojit import trace\nprint(json.dumps(trace()))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    plain = json.loads(proc.stdout)
    assert {k: v for k, v in plain.items() if k != "tree"} == \
        {k: v for k, v in jitted.items() if k != "tree"}
    for name, values in jitted["tree"].items():  # counts and links exactly, sums and priors
        got, want = np.array(plain["tree"][name]), np.array(values)  # within float32's 1e-7
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
