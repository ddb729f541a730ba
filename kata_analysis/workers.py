"""The analysis threads (KataGo's numAnalysisThreads): each owns an Engine whose evaluator is
a client of one SharedBatcher, takes the next turn from the TaskQueue, searches it and writes
its answers. Their leaves meet in the batcher, so the network sees one stream of batches
whatever the number of queries.
"""

import logging
import threading

from dosaku.kata_analysis.answer import answer, no_result
from dosaku.kata_analysis.position import at_turn
from dosaku.kata_analysis.position_hash import position_hashes
from dosaku.kata_analysis.tasks import Task, TaskQueue

log = logging.getLogger("dosaku")


class Worker:
    """One analysis thread and its Engine."""

    def __init__(self, engine, tasks: TaskQueue, emit, cache_epoch):
        self.engine = engine
        self.tasks = tasks
        self.emit = emit  # writes one answer dict
        self.cache_epoch = cache_epoch  # () -> clear_cache actions so far
        self._epoch = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _loop(self) -> None:
        while True:
            item = self.tasks.next()
            if item is None:
                return
            n, task = item
            try:
                self._search(task)
            except Exception as exc:  # a bug: say so for this turn, keep serving
                log.exception("analysis of %s turn %d failed", task.query.id, task.turn)
                self.emit({"id": task.query.id, "turnNumber": task.turn,
                           "error": f"internal error: {type(exc).__name__}"})
            finally:
                self.tasks.done(n)

    def _search(self, task: Task) -> None:
        epoch = self.cache_epoch()
        if epoch != self._epoch:
            self.engine.clear_cache()
            self._epoch = epoch
        q, engine = task.query, self.engine
        at_turn(engine, q, task.turn)
        color = engine.to_move
        hashes = position_hashes(q.width, q.height, engine.stones(), color, engine.ko_point)
        interval = q.report_every or q.first_report_after
        on_update = None
        if interval is not None:
            def on_update(snap):
                if snap.root_visits and not task.stop.is_set():
                    self.emit(answer(q, task.turn, color, snap, True, hashes))
        snap = engine.analyze_position(q.max_visits, q.max_time, task.stop, on_update,
                                       interval or 1.0, tuple(q.bans), q.root_temperature,
                                       q.wide_root_noise, raw=True,
                                       spread=q.ownership_stdev or q.moves_ownership_stdev)
        if snap.root_visits == 0:
            self.emit(no_result(q.id, task.turn))
        else:
            self.emit(answer(q, task.turn, color, snap, False, hashes))
