"""engine/search/batching.py: the batches of many searches evaluated in shared calls, each search
given back exactly its own rows' results, rows of different games never mixed, rows seen before
served from the shared cache."""

import threading

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation, PositionBatch
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.engine.search.batching import SharedBatcher


class RecordingEvaluator:
    """Value of a row = its recent_points[0] (a tag the test writes); records each call's
    komi and row count; a call waits for `release`, so that other batches pile up."""

    capabilities = Capabilities(parallel_calls=1)

    def __init__(self):
        self.calls = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def evaluate(self, batch):
        self.entered.set()
        self.release.wait()
        n = batch.count
        self.calls.append((batch.komi, n))
        legal = batch.legal[:n].astype(np.float32)
        tags = batch.recent_points[:n, 0].astype(np.float32)
        return Evaluation(legal / legal.sum(axis=1, keepdims=True), tags, -tags,
                          np.repeat(tags[:, None], 4, axis=1), no_result=tags / 100)


def tagged_batch(tags: list[int], komi: float) -> PositionBatch:
    b = PositionBatch(8, 2, 2, komi, PRESETS["chinese"])
    b.count = len(tags)
    b.legal[:b.count] = True
    b.recent_points[:b.count, 0] = tags
    return b


def test_batches_are_merged_and_each_gets_its_own_rows():
    fake = RecordingEvaluator()
    batcher = SharedBatcher(fake, max_rows=64)
    jobs = [([10 * k + j for j in range(k % 3 + 1)], 7.5 if k % 2 else 6.5) for k in range(12)]
    results = {}

    def search(k):
        tags, komi = jobs[k]
        results[k] = batcher.client(2).evaluate(tagged_batch(tags, komi))

    blocker = threading.Thread(target=lambda: batcher.evaluate(tagged_batch([99], 7.5)))
    blocker.start()
    assert fake.entered.wait(30)  # the batcher's one caller is busy: the rest must queue
    threads = [threading.Thread(target=search, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    while len(batcher._waiting) < 12:
        threading.Event().wait(0.01)
    fake.release.set()
    for t in threads + [blocker]:
        t.join(30)
    for k, (tags, _) in enumerate(jobs):
        ev = results[k]
        assert ev.value.tolist() == tags and ev.score.tolist() == [-t for t in tags]
        assert ev.ownership.shape == (len(tags), 4) and ev.ownership[:, 0].tolist() == tags
        assert ev.no_result.tolist() == pytest.approx([t / 100 for t in tags])
        assert ev.score_mean is None and ev.shortterm_error is None
    total = 1 + sum(len(tags) for tags, _ in jobs)
    assert sum(n for _, n in fake.calls) == batcher.rows == total
    assert len(fake.calls) == batcher.calls == 3  # the blocker, then one call per komi
    assert sorted(komi for komi, _ in fake.calls[1:]) == [6.5, 7.5]


def test_a_full_batch_waits_for_the_next_call():
    fake = RecordingEvaluator()
    fake.release.set()
    batcher = SharedBatcher(fake, max_rows=4)
    out = batcher.evaluate(tagged_batch([1, 2, 3], 7.5))
    assert out.value.tolist() == [1, 2, 3] and fake.calls == [(7.5, 3)]


def test_clients_declare_the_evaluators_capabilities_with_their_own_calls_in_flight():
    batcher = SharedBatcher(RecordingEvaluator())
    caps = batcher.client(3).capabilities
    assert caps.parallel_calls == 3 and caps.has_priors and caps.needs_history


def test_rows_evaluated_once_are_served_again_from_the_shared_cache():
    """A row another search had evaluated (same inputs) comes from the cache, with its own
    results; only rows never seen reach the evaluator, in one call; a different komi or
    legal move is another row; clear_cache forgets them; the oldest go beyond the size."""
    fake = RecordingEvaluator()
    fake.release.set()
    batcher = SharedBatcher(fake, max_rows=64, cache_rows=5)
    assert batcher.evaluate(tagged_batch([1, 2, 3], 7.5)).value.tolist() == [1, 2, 3]
    again = batcher.client().evaluate(tagged_batch([3, 4, 1], 7.5))
    assert again.value.tolist() == [3, 4, 1] and again.score.tolist() == [-3, -4, -1]
    assert again.ownership[:, 0].tolist() == [3, 4, 1]
    assert fake.calls == [(7.5, 3), (7.5, 1)]  # only row 4 was new
    assert (batcher.cache.hits, batcher.cache.lookups, batcher.rows) == (2, 6, 4)
    batcher.evaluate(tagged_batch([1], 6.5))  # another komi: another row
    changed = tagged_batch([2], 7.5)
    changed.legal[0, 0] = False  # another legal move: another row
    assert batcher.evaluate(changed).policy[0, 0] == 0
    assert fake.calls[2:] == [(6.5, 1), (7.5, 1)]
    batcher.evaluate(tagged_batch([1, 4], 7.5))
    assert len(fake.calls) == 4  # both kept
    batcher.evaluate(tagged_batch([5, 6], 7.5))  # room for 5: the 2 least recently used go
    batcher.evaluate(tagged_batch([3, 1], 7.5))
    assert fake.calls[-1] == (7.5, 1)
    batcher.clear_cache()
    batcher.evaluate(tagged_batch([1], 7.5))
    assert fake.calls[-1] == (7.5, 1) and batcher.rows == 10
