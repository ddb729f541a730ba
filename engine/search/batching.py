"""One evaluator shared by many searches, their leaves evaluated together.

Each search (engine/search.py) runs on a thread of its own and calls `evaluate` on its
`BatchClient` as on any evaluator; the call waits while the shared `SharedBatcher` gathers the
batches that searches have handed in and evaluates them in one call of the real evaluator. So
twenty searches of two leaves each make one call of forty rows instead of twenty of two, which
is what a network on a CPU (or a GPU) runs fastest: the analysis engine's queries of one game
become one stream of full batches.

Rows are merged only when the evaluator would treat them alike: same board size, komi, rules,
handicap and policy optimism (the batch-wide fields of a PositionBatch). The batcher runs as
many real calls at once as the evaluator declares it can (Capabilities.parallel_calls); a free
caller takes every compatible batch waiting, up to `max_rows`, so batches grow by themselves
when the evaluator is the bottleneck and stay small (no waiting) when it is not.
"""

import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import replace

from engine.evaluators.evaluator import Evaluation, PositionBatch, capabilities_of


def _group(batch: PositionBatch) -> tuple:
    """The batch-wide fields that must agree for rows to share one evaluator call."""
    return (batch.width, batch.height, batch.komi, batch.rules, batch.handicap_stones,
            batch.policy_optimism)


def _rows(ev: Evaluation, lo: int, hi: int) -> Evaluation:
    """Rows lo..hi-1 of an Evaluation."""
    def part(x):
        return None if x is None else x[lo:hi]
    return Evaluation(ev.policy[lo:hi], ev.value[lo:hi], ev.score[lo:hi], part(ev.ownership),
                      part(ev.score_mean), part(ev.score_mean_sq), part(ev.shortterm_error))


class SharedBatcher:
    """Evaluates the batches of many searches together (see the module docstring)."""

    def __init__(self, evaluator, max_rows: int = 64):
        self.evaluator = evaluator
        self.capabilities = capabilities_of(evaluator)
        self.max_rows = max_rows
        self._waiting: deque[tuple[PositionBatch, Future]] = deque()
        self._ready = threading.Condition()
        self.calls = 0  # real evaluator calls so far
        self.rows = 0  # rows evaluated so far
        for k in range(max(1, self.capabilities.parallel_calls)):
            threading.Thread(target=self._serve, name=f"batcher-{k}", daemon=True).start()

    def client(self, parallel_calls: int = 1) -> "BatchClient":
        """An evaluator for one search, which keeps `parallel_calls` batches in flight."""
        return BatchClient(self, replace(self.capabilities, parallel_calls=parallel_calls))

    def evaluate(self, batch: PositionBatch) -> Evaluation:
        """The evaluation of `batch`, computed with other searches' batches; waits for it."""
        if batch.count == 0:
            return self.evaluator.evaluate(batch)
        done: Future = Future()
        with self._ready:
            self._waiting.append((batch, done))
            self._ready.notify()
        return done.result()

    def _take(self) -> list[tuple[PositionBatch, Future]]:
        """The oldest waiting batch and the compatible ones behind it, up to max_rows rows."""
        with self._ready:
            while not self._waiting:
                self._ready.wait()
            first = self._waiting.popleft()
            taken, rows, key = [first], first[0].count, _group(first[0])
            kept = deque()
            while self._waiting:
                item = self._waiting.popleft()
                if _group(item[0]) == key and rows + item[0].count <= self.max_rows:
                    taken.append(item)
                    rows += item[0].count
                else:
                    kept.append(item)
            self._waiting = kept
            return taken

    def _serve(self) -> None:
        merged: dict[tuple, PositionBatch] = {}  # this thread's buffers, one per group
        while True:
            taken = self._take()
            try:
                if len(taken) == 1:
                    results = [self.evaluator.evaluate(taken[0][0])]
                else:
                    results = self._evaluate_together([b for b, _ in taken], merged)
                with self._ready:
                    self.calls += 1
                    self.rows += sum(b.count for b, _ in taken)
            except BaseException as exc:  # each search's evaluate raises it
                for _, done in taken:
                    done.set_exception(exc)
                continue
            for (_, done), ev in zip(taken, results):
                done.set_result(ev)

    def _evaluate_together(self, batches: list[PositionBatch],
                           merged: dict[tuple, PositionBatch]) -> list[Evaluation]:
        """One evaluator call over the rows of `batches`, split back into one result each."""
        first = batches[0]
        total = sum(b.count for b in batches)
        key = _group(first)
        if key not in merged:
            merged[key] = PositionBatch(self.max_rows, first.width, first.height, first.komi,
                                        first.rules)
        big = merged[key]
        big.handicap_stones = first.handicap_stones
        big.policy_optimism = first.policy_optimism
        big.seed = first.seed  # the first search's draw: symmetries stay seeded
        spans, lo = [], 0
        for b in batches:
            hi = lo + b.count
            big.boards[lo:hi] = b.boards[:b.count]
            big.history_boards[lo:hi] = b.history_boards[:b.count]
            big.recent_points[lo:hi] = b.recent_points[:b.count]
            big.recent_colors[lo:hi] = b.recent_colors[:b.count]
            big.to_move[lo:hi] = b.to_move[:b.count]
            big.legal[lo:hi] = b.legal[:b.count]
            spans.append((lo, hi))
            lo = hi
        big.count = total
        ev = self.evaluator.evaluate(big)
        return [_rows(ev, a, b) for a, b in spans]


class BatchClient:
    """The evaluator one search sees: the shared evaluator's capabilities, its own number of
    batches in flight, every call evaluated through the SharedBatcher."""

    def __init__(self, batcher: SharedBatcher, capabilities):
        self._batcher = batcher
        self.capabilities = capabilities

    def evaluate(self, batch: PositionBatch) -> Evaluation:
        return self._batcher.evaluate(batch)
