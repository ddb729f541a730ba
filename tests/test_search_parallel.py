"""Batches in flight on worker threads (evaluators with parallel_calls > 1) and batches that
grow with the tree: overlap, exact limits, reproducibility, clean failure."""

import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK
from dosaku.engine.rules.game import GameState
from dosaku.engine.search import tree as T
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits

CFG = SearchConfig(batch_size=8, max_nodes=50_000, max_edges=1_000_000)


class SlowEvaluator:
    """Uniform policy and a value fixed per position; each call sleeps `delay` seconds (as a
    network call does, without the GIL) and records its size and how many calls overlapped."""

    def __init__(self, parallel_calls=2, delay=0.002, fail_at=None):
        self.capabilities = Capabilities(needs_history=False, parallel_calls=parallel_calls)
        self.delay = delay
        self.fail_at = fail_at
        self.sizes = []
        self.running = 0
        self.most_running = 0
        self._lock = threading.Lock()

    def evaluate(self, batch):
        n = batch.count
        with self._lock:
            self.sizes.append(n)
            call = len(self.sizes)
            self.running += 1
            self.most_running = max(self.most_running, self.running)
            fail = call == self.fail_at
        time.sleep(self.pause(call))
        with self._lock:
            self.running -= 1
        if fail:
            raise RuntimeError("evaluator failed")
        legal = batch.legal[:n].astype(np.float32)
        keys = batch.boards[:n, B.ROW_HEADER, B.H_HASH]
        value = ((keys % 997) / 997.0 - 0.5).astype(np.float32)
        return Evaluation(legal / legal.sum(axis=1, keepdims=True), value,
                          np.zeros(n, np.float32), None)

    def pause(self, call: int) -> float:
        """Seconds the `call`-th call (from 1) takes."""
        return self.delay


def _root_visits(s):
    st = s.root_stats()
    return {int(a): int(v) for a, v in zip(st.actions, st.visits) if v > 0}


def test_two_batches_are_evaluated_at_once():
    ev = SlowEvaluator()
    s = Search(ev, CFG, seed=1)
    s.run(GameState(7, 7, 0.5), BLACK, SearchLimits(visits=600))
    assert ev.most_running == 2
    serial = SlowEvaluator(parallel_calls=1)
    Search(serial, CFG, seed=1).run(GameState(7, 7, 0.5), BLACK, SearchLimits(visits=600))
    assert serial.most_running == 1


def test_visit_and_playout_limits_are_exact_with_batches_in_flight():
    for limits, check in ((SearchLimits(visits=333), lambda s, n: s.tree.node_visits[s.root]),
                          (SearchLimits(playouts=250), lambda s, n: n)):
        s = Search(SlowEvaluator(delay=0.0), CFG, seed=2)
        n = s.run(GameState(7, 7, 0.5), BLACK, limits)
        assert int(check(s, n)) == (limits.visits or limits.playouts)
        assert not s.tree.node_virtual[:int(s.tree.meta[T.M_NODES])].any()  # all backed up


def test_visit_limited_search_is_reproducible_despite_threads():
    def run(seed):
        s = Search(SlowEvaluator(delay=0.0005), CFG, seed=seed)
        s.run(GameState(7, 7, 0.5), BLACK, SearchLimits(visits=500))
        return _root_visits(s)

    first = run(3)
    assert run(3) == first and sum(first.values()) == 499


def test_a_search_of_a_few_playouts_keeps_one_leaf_in_flight():
    # KataGo's minPlayoutsPerThread (8): a limit that allows fewer than 16 new playouts is
    # searched one leaf at a time, reused visits not counted as new
    g = GameState(7, 7, 0.5)
    ev = SlowEvaluator(delay=0.01)
    s = Search(ev, CFG, seed=6)
    s.run(g, BLACK, SearchLimits(visits=15))
    assert (ev.most_running, set(ev.sizes)) == (1, {1})
    reused = int(s.tree.node_visits[s.root])
    s.run(g, BLACK, SearchLimits(visits=reused + 15))
    assert ev.most_running == 1 and int(s.tree.node_visits[s.root]) == reused + 15
    s.run(g, BLACK, SearchLimits(visits=reused + 15 + 40))  # 40 new: two batches at once
    assert ev.most_running == 2
    # a large limit: still one leaf per evaluation thread, as KataGo's threads under maxVisits
    many = SlowEvaluator(delay=0.0005)
    Search(many, CFG, seed=6).run(g, BLACK, SearchLimits(visits=2000))
    assert set(many.sizes) == {1} and many.most_running == 2
    uncapped = SlowEvaluator(delay=0.01)
    Search(uncapped, replace(CFG, playouts_per_leaf_in_flight=0), seed=6).run(
        g, BLACK, SearchLimits(playouts=15))
    assert uncapped.most_running == 2


def test_batches_grow_with_the_root_visits():
    # the leaves-in-flight cap of visit limits off: batches as a time limit gets them
    ev = SlowEvaluator(delay=0.0)
    cfg = SearchConfig(batch_size=8, batch_growth=16, max_nodes=50_000, max_edges=1_000_000,
                       playouts_per_leaf_in_flight=0)
    Search(ev, cfg, seed=4).run(GameState(7, 7, 0.5), BLACK, SearchLimits(visits=2000))
    # 2 batches in flight: one leaf each below 64 root visits, 8 from 256 visits on
    assert ev.sizes[:20] == [1] * 20
    assert max(ev.sizes) == 8 and ev.sizes[-30:-5].count(8) >= 20
    fixed = SlowEvaluator(delay=0.0)
    cfg = replace(cfg, batch_growth=0)
    Search(fixed, cfg, seed=4).run(GameState(7, 7, 0.5), BLACK, SearchLimits(visits=2000))
    assert fixed.sizes[2:10] == [8] * 8  # batch_growth 0: full batches from the start


class OneSlowCall(SlowEvaluator):
    """Call number `slow_call` takes `slow` seconds, the others `delay`; counts the calls
    that began while it was running."""

    def __init__(self, slow_call: int, slow: float, **kwargs):
        super().__init__(**kwargs)
        self.slow_call, self.slow = slow_call, slow
        self.slow_running = False
        self.begun_during_slow = 0

    def pause(self, call: int) -> float:
        with self._lock:
            self.begun_during_slow += self.slow_running
        if call != self.slow_call:
            return self.delay
        self.slow_running = True
        time.sleep(self.slow)
        self.slow_running = False
        return 0.0


@pytest.mark.parametrize("limits, begun", [
    (SearchLimits(seconds=0.8), range(20, 10_000)),  # backed up as they finish
    (SearchLimits(visits=300), range(1, 2)),  # in launch order: the next waits behind it
])
def test_a_time_limited_search_backs_batches_up_as_they_finish(limits, begun):
    ev = OneSlowCall(slow_call=10, slow=0.4, delay=0.002)
    s = Search(ev, replace(CFG, playouts_per_leaf_in_flight=0), seed=7)
    s.run(GameState(7, 7, 0.5), BLACK, limits)
    assert ev.begun_during_slow in begun
    assert not s.tree.node_virtual[:int(s.tree.meta[T.M_NODES])].any()
    assert int(s.tree.node_visits[s.root]) == sum(ev.sizes)


def test_a_failing_evaluation_leaves_a_clean_tree():
    ev = SlowEvaluator(fail_at=6)
    s = Search(ev, CFG, seed=5)
    g = GameState(7, 7, 0.5)
    with pytest.raises(RuntimeError, match="evaluator failed"):
        s.run(g, BLACK, SearchLimits(visits=400))
    assert not s.has_tree  # forgotten: virtual losses of the other batch in flight are gone
    ev.fail_at = None
    s.run(g, BLACK, SearchLimits(visits=400))
    assert int(s.tree.node_visits[s.root]) == 400
    assert not s.tree.node_virtual[:int(s.tree.meta[T.M_NODES])].any()
