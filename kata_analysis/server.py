"""The analysis server's loop: one JSON line in, its answers out, stdout holding nothing else.

Lines are read on the calling thread and handled at once: an action is carried out and
echoed, a query is checked (fields, then a replay of its moves) and its turns queued for the
workers (kata_analysis/workers.py), who write the answers as they finish, in any order. Every
answer is one line written whole under a lock. Whatever a line holds, it gets answers, never
an exception: a bug in handling one line is answered as an error for that line and logged.
At the end of input the queued turns are finished first (unless quit_without_waiting).
"""

import json
import logging
import threading
from pathlib import Path

from dosaku.kata_analysis.answer import no_result
from dosaku.kata_analysis.position import check_moves
from dosaku.kata_analysis.query import Action, QueryError, parse_line
from dosaku.kata_analysis.tasks import TaskQueue

log = logging.getLogger("dosaku")
KATAGO_PROTOCOL = "1.17.2"  # the KataGo release whose analysis protocol this follows


class Output:
    """Answers as JSON lines on a binary stream, one whole line at a time."""

    def __init__(self, stream):
        self._stream = stream
        self._lock = threading.Lock()

    def __call__(self, message: dict) -> None:
        line = json.dumps(message, separators=(",", ":"), allow_nan=False) + "\n"
        with self._lock:
            try:
                self._stream.write(line.encode())
                self._stream.flush()
            except (BrokenPipeError, OSError):  # the client went away: nothing to tell it
                pass


class AnalysisServer:
    """Dispatches lines to actions and queued turns (see the module docstring)."""

    def __init__(self, settings, checker, tasks: TaskQueue, emit, models: list[dict],
                 visit_capacity: int, clear_cache=None):
        self.settings = settings
        self.checker = checker  # an Engine used only to replay queries' moves
        self.tasks = tasks
        self.emit = emit
        self.models = models
        self.visit_capacity = visit_capacity
        self.cache_epoch = 0
        self.clear_cache = clear_cache  # () -> None: forgets what the searches share, or None

    def handle_line(self, line: str) -> None:
        if not line.strip():
            return
        try:
            parsed, answers = parse_line(line, self.settings, self.visit_capacity)
            if isinstance(parsed, Action):
                self._action(parsed)
            elif parsed is not None:
                try:
                    check_moves(self.checker, parsed)
                except QueryError as err:
                    self.emit({"id": parsed.id, "field": err.field, "error": err.message})
                    return
                for message in answers:
                    self.emit(message)
                self.tasks.add(parsed)
                return
            for message in answers:
                self.emit(message)
        except Exception as exc:  # a bug: answer this line, keep serving
            log.exception("handling a line failed")
            self.emit({"error": f"internal error: {type(exc).__name__}"})

    def _action(self, action: Action) -> None:
        reply = dict(action.raw)
        if action.name == "query_version":
            reply.update(version=KATAGO_PROTOCOL, git_hash="<omitted>")
        elif action.name == "query_models":
            reply["models"] = self.models
        elif action.name == "clear_cache":
            self.cache_epoch += 1
            if self.clear_cache is not None:
                self.clear_cache()
        else:
            query_id = action.terminate_id if action.name == "terminate" else None
            for task in self.tasks.terminate(query_id, action.turns):
                self.emit(no_result(task.query.id, task.turn))
        self.emit(reply)

    def serve(self, stream, quit_without_waiting: bool = False) -> None:
        """Handle every line of the binary `stream`, then finish (or drop) the queued turns."""
        for raw in stream:
            self.handle_line(raw.decode("utf-8", errors="replace"))
        if quit_without_waiting:
            self.tasks.terminate(None, None)
        self.tasks.wait_empty()
        self.tasks.close()


def model_info(path: str, max_batch: int, meta: dict) -> dict:
    """One entry of query_models' list, in KataGo's keys."""
    name = Path(path).name
    version = str(meta.get("model_version", ""))
    return {"name": name, "internalName": name.split(".")[0], "maxBatchSize": max_batch,
            "usesHumanSLProfile": False, "version": int(version) if version.isdigit() else 0,
            "usingFP16": "false"}
