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

Rows are evaluated once for all the searches: each search's own cache (engine/search/buffers.py)
serves only that search, while the searches of an analysed game meet the same positions (the
tree of turn t holds turn t+1's). The batcher keeps the rows it evaluated, keyed by everything
the evaluator reads of a row, and hands them out again instead of evaluating them anew, as
KataGo's analysis threads share one cache (what it saves: docs/performance.md). A row from the
cache may have been evaluated under another board symmetry, as in KataGo's cache.
"""

import hashlib
import threading
from collections import OrderedDict, deque
from concurrent.futures import Future
from dataclasses import fields, replace

import numpy as np

from dosaku.engine.evaluators.evaluator import Evaluation, PositionBatch, capabilities_of

FIELDS = tuple(f.name for f in fields(Evaluation))  # a cached row keeps every one


def _group(batch: PositionBatch) -> tuple:
    """The batch-wide fields that must agree for rows to share one evaluator call."""
    return (batch.width, batch.height, batch.komi, batch.rules, batch.handicap_stones,
            batch.policy_optimism)


def _rows(ev: Evaluation, lo: int, hi: int) -> Evaluation:
    """Rows lo..hi-1 of an Evaluation (every field, the optional ones None where None)."""
    return Evaluation(*(None if (x := getattr(ev, f)) is None else x[lo:hi] for f in FIELDS))


def row_key(batch: PositionBatch, r: int) -> bytes:
    """What the evaluator reads of row r (its board, history, recent moves, side to move and
    legal moves, and the batch-wide fields), hashed: equal keys, equal inputs."""
    h = hashlib.blake2b(repr(_group(batch)).encode(), digest_size=16)
    for part in (batch.boards[r], batch.history_boards[r], batch.recent_points[r],
                 batch.recent_colors[r], batch.to_move[r:r + 1], batch.legal[r]):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.digest()


class RowCache:
    """Evaluated rows by row_key, the `size` most recently stored or served (thread-safe)."""

    def __init__(self, size: int):
        self.size = size
        self._rows: OrderedDict[bytes, tuple] = OrderedDict()
        self._lock = threading.Lock()
        self.lookups = 0
        self.hits = 0

    def get(self, key: bytes) -> tuple | None:
        with self._lock:
            self.lookups += 1
            row = self._rows.get(key)
            if row is not None:
                self.hits += 1
                self._rows.move_to_end(key)
            return row

    def put(self, key: bytes, row: tuple) -> None:
        with self._lock:
            self._rows[key] = row
            self._rows.move_to_end(key)
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


def _row(ev: Evaluation, r: int) -> tuple:
    """Row r of an Evaluation as a tuple of copies in FIELDS order (None where absent)."""
    return tuple(None if (x := getattr(ev, f)) is None else np.copy(x[r]) for f in FIELDS)


def _stack(rows: list[tuple]) -> Evaluation:
    return Evaluation(*(None if rows[0][k] is None else np.stack([row[k] for row in rows])
                        for k in range(len(FIELDS))))


class SharedBatcher:
    """Evaluates the batches of many searches together (see the module docstring); keeps up
    to `cache_rows` evaluated rows to serve again (0: none)."""

    def __init__(self, evaluator, max_rows: int = 64, cache_rows: int = 0):
        self.evaluator = evaluator
        self.capabilities = capabilities_of(evaluator)
        self.max_rows = max_rows
        self.cache = RowCache(cache_rows) if cache_rows > 0 else None
        self._waiting: deque[tuple[PositionBatch, Future]] = deque()
        self._ready = threading.Condition()
        self.calls = 0  # real evaluator calls so far
        self.rows = 0  # rows evaluated so far
        for k in range(max(1, self.capabilities.parallel_calls)):
            threading.Thread(target=self._serve, name=f"batcher-{k}", daemon=True).start()

    def clear_cache(self) -> None:
        """Forget the evaluated rows kept (evaluate them anew from now on)."""
        if self.cache is not None:
            self.cache.clear()

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
                batches = [b for b, _ in taken]
                if self.cache is not None:
                    results = self._evaluate_cached(batches, merged)
                elif len(taken) == 1:
                    results = [self._evaluate(batches[0])]
                else:
                    ev, lo = self._evaluate_together(batches, merged), 0
                    results = []
                    for b in batches:
                        results.append(_rows(ev, lo, lo + b.count))
                        lo += b.count
            except BaseException as exc:  # each search's evaluate raises it
                for _, done in taken:
                    done.set_exception(exc)
                continue
            for (_, done), ev in zip(taken, results):
                done.set_result(ev)

    def _evaluate(self, batch: PositionBatch) -> Evaluation:
        """One real evaluator call, counted."""
        ev = self.evaluator.evaluate(batch)
        with self._ready:
            self.calls += 1
            self.rows += batch.count
        return ev

    def _evaluate_cached(self, batches: list[PositionBatch],
                         merged: dict[tuple, PositionBatch]) -> list[Evaluation]:
        """The rows of `batches` from the cache, the others from one evaluator call (none when
        the cache holds them all), each batch's rows back in its order."""
        keys = [[row_key(b, r) for r in range(b.count)] for b in batches]
        found = [[self.cache.get(k) for k in ks] for ks in keys]
        missing = [(i, r) for i, rows in enumerate(found) for r, row in enumerate(rows)
                   if row is None]
        if missing:
            fresh = self._evaluate_together(batches, merged, missing)
            for row, (i, r) in enumerate(missing):
                found[i][r] = _row(fresh, row)
                self.cache.put(keys[i][r], found[i][r])
        return [_stack(rows) for rows in found]

    def _evaluate_together(self, batches: list[PositionBatch], merged: dict[tuple, PositionBatch],
                           picked: list[tuple[int, int]] | None = None) -> Evaluation:
        """One evaluator call over the `picked` rows (batch, row) of `batches`, by default all
        of them in order; their Evaluation, row by row in that order."""
        if picked is None:
            picked = [(i, r) for i, b in enumerate(batches) for r in range(b.count)]
        first = batches[0]
        key = _group(first)
        if key not in merged:
            merged[key] = PositionBatch(self.max_rows, first.width, first.height, first.komi,
                                        first.rules)
        big = merged[key]
        big.handicap_stones = first.handicap_stones
        big.policy_optimism = first.policy_optimism
        big.seed = first.seed  # the first search's draw: symmetries stay seeded
        for row, (i, r) in enumerate(picked):
            b = batches[i]
            big.boards[row] = b.boards[r]
            big.history_boards[row] = b.history_boards[r]
            big.recent_points[row] = b.recent_points[r]
            big.recent_colors[row] = b.recent_colors[r]
            big.to_move[row] = b.to_move[r]
            big.legal[row] = b.legal[r]
        big.count = len(picked)
        return self._evaluate(big)


class BatchClient:
    """The evaluator one search sees: the shared evaluator's capabilities, its own number of
    batches in flight, every call evaluated through the SharedBatcher."""

    def __init__(self, batcher: SharedBatcher, capabilities):
        self._batcher = batcher
        self.capabilities = capabilities

    def evaluate(self, batch: PositionBatch) -> Evaluation:
        return self._batcher.evaluate(batch)
