"""The turns waiting to be searched and those being searched, in KataGo's order: highest
`priority` first, ties to the earliest query; and their termination.

A terminated turn that has not started is dropped and answered with `noResults` at once; one
being searched is stopped and answered with what its search found (KataGo's `terminate`
semantics: every turn ends with exactly one final answer).
"""

import heapq
import itertools
import threading
from dataclasses import dataclass, field

from dosaku.kata_analysis.query import Query


@dataclass
class Task:
    """One turn of one query."""
    query: Query
    turn: int
    priority: int
    stop: threading.Event = field(default_factory=threading.Event)
    started: bool = False


class TaskQueue:
    """Waiting and running turns; every method is safe from any thread."""

    def __init__(self):
        self._heap: list[tuple[int, int, Task]] = []
        self._open: dict[int, Task] = {}  # waiting or running, by arrival number
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._closed = False

    def add(self, query: Query) -> None:
        """Queue every analysed turn of a checked query."""
        with self._cond:
            for turn, priority in zip(query.turns, query.priorities):
                n = next(self._seq)
                task = Task(query, turn, priority)
                self._open[n] = task
                heapq.heappush(self._heap, (-priority, n, task))
            self._cond.notify_all()

    def next(self) -> tuple[int, Task] | None:
        """The next turn to search (waits for one), marked started; None once closed and
        empty."""
        with self._cond:
            while True:
                while self._heap:
                    _, n, task = heapq.heappop(self._heap)
                    if n in self._open:  # not terminated while waiting
                        task.started = True
                        return n, task
                if self._closed:
                    return None
                self._cond.wait()

    def done(self, n: int) -> None:
        with self._cond:
            self._open.pop(n, None)
            self._cond.notify_all()

    def terminate(self, query_id: str | None, turns: list[int] | None) -> list[Task]:
        """Stop the matching turns (query_id None: every query); returns those that had not
        started, which are dropped and need their `noResults` answer."""
        dropped = []
        with self._cond:
            for n, task in list(self._open.items()):
                if query_id is not None and task.query.id != query_id:
                    continue
                if turns is not None and task.turn not in turns:
                    continue
                task.stop.set()
                if not task.started:
                    del self._open[n]
                    dropped.append(task)
            self._cond.notify_all()
        return dropped

    def close(self) -> None:
        """No more turns will come: `next` returns None once the queue is empty."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def wait_empty(self) -> None:
        """Wait until no turn is waiting or running."""
        with self._cond:
            while self._open:
                self._cond.wait()
