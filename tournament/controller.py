"""Controller side of GTP: drive any engine subprocess over pipes.

Shared by the regression runner and the match runner. Reads stdout and stderr on daemon threads
so a chatty engine can never block on a full pipe and a hung engine can be timed out.
"""

from __future__ import annotations

import queue
import re
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO

_HEAD = re.compile(r"([=?])(\d*)[ \t]?(.*)\Z", re.DOTALL)
_EOF = None


class EngineError(Exception):
    """The engine cannot be used any more: it did not start, died, or broke the protocol."""


class EngineStartError(EngineError):
    """The engine program could not be launched at all (wrong path or command line)."""


class EngineDied(EngineError):
    """stdout closed (crash or exit) before a full answer arrived."""


class EngineTimeout(EngineError):
    """No complete answer within the time limit; the stream is out of step afterwards."""


class GtpFailure(Exception):
    """The engine answered `?`: a well-formed failure, the engine itself is still usable."""

    def __init__(self, command: str, message: str):
        super().__init__(f"{command!r} failed: {message}")
        self.command = command
        self.message = message


@dataclass
class Response:
    """One framed answer: `ok` for `=`, the echoed id (or None), and the text after it."""

    ok: bool
    id: int | None
    text: str
    full: str


def parse_response(lines: list[str]) -> Response:
    """Turn the lines of one answer (without the terminating blank line) into a Response.

    The text is everything after `=id`/`?id` with surrounding whitespace removed, as GoGui does.
    """
    full = "\n".join(lines)
    m = _HEAD.match(full)
    if m is None:
        raise EngineError(f"malformed GTP answer: {full[:200]!r}")
    rid = int(m.group(2)) if m.group(2) else None
    return Response(ok=m.group(1) == "=", id=rid, text=m.group(3).strip(), full=full)


class GtpController:
    """One engine process: `send` a command, get the framed answer, `close` when done."""

    def __init__(self, command: str, cwd: str | None = None, stderr_log: IO[str] | None = None):
        """Start `command` (split with shlex) in `cwd`; engine stderr goes to `stderr_log`."""
        self.command = command
        self.invalid_lines: list[str] = []
        self._log = stderr_log
        self._log_lock = threading.Lock()
        self._broken = False
        try:
            self.proc = subprocess.Popen(
                shlex.split(command), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", bufsize=1)
        except (OSError, ValueError) as exc:
            raise EngineStartError(f"cannot start engine {command!r}: {exc}") from exc
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        self._stderr_thread = threading.Thread(target=self._pump_stderr, daemon=True)
        self._stderr_thread.start()

    def _pump_stdout(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\r\n").replace("\r", ""))
        self._lines.put(_EOF)

    def _pump_stderr(self) -> None:
        for line in self.proc.stderr:
            if self._log is not None:
                with self._log_lock:
                    self._log.write(line)
                    self._log.flush()

    @property
    def alive(self) -> bool:
        """True while the process runs and the answer stream is still in step."""
        return self.proc.poll() is None and not self._broken

    def send_raw(self, command: str, timeout: float | None = None) -> Response:
        """Send one command line as given (an id included) and return the answer, `=` or `?`."""
        if "\n" in command or "\r" in command:
            raise ValueError("a GTP command is one line")
        if self._broken:
            raise EngineError("engine stream is out of step after an earlier error")
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            self._broken = True
            raise EngineDied(f"engine {self.command!r} closed its input: {exc}") from exc
        return self._read_answer(command, timeout)

    def _read_answer(self, command: str, timeout: float | None) -> Response:
        deadline = None if timeout is None else time.monotonic() + timeout
        lines: list[str] = []
        while True:
            try:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                line = self._lines.get(timeout=wait)
            except queue.Empty:
                self._broken = True
                raise EngineTimeout(f"no answer to {command!r} within {timeout:g} s") from None
            if line is _EOF:
                self._broken = True
                self._lines.put(_EOF)
                code = self._wait_code()
                raise EngineDied(f"engine exited (code {code}) while answering {command!r}")
            if not lines:
                if line.strip() == "":
                    continue
                if line[0] not in "=?":
                    self.invalid_lines.append(line)
                    self._log_note(f"[controller] ignored non-GTP stdout line: {line!r}\n")
                    continue
            elif line.strip() == "":
                return parse_response(lines)
            lines.append(line)

    def _log_note(self, text: str) -> None:
        if self._log is not None:
            with self._log_lock:
                self._log.write(text)
                self._log.flush()

    def _wait_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return None

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send a command and return its answer text; a `?` answer raises GtpFailure."""
        resp = self.send_raw(command, timeout)
        if not resp.ok:
            raise GtpFailure(command, resp.text)
        return resp.text

    def close(self, grace: float = 2.0) -> int | None:
        """Say `quit` if the engine is still in step, then wait, then kill; return the exit code."""
        if self.alive:
            try:
                self.send_raw("quit", timeout=grace)
            except EngineError:
                pass
        try:
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            code = self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._stderr_thread.join(timeout=1.0)
        return code

    def __enter__(self) -> "GtpController":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
