"""The GTP server: `handle_line` answers one line; `serve` runs the stdin/stdout loop.

Input is read by a thread into a queue, so a running analysis can be stopped by the arrival of
the next line (a thread works on every platform, unlike select() on a pipe); a genmove is
stopped only by GoGui's `# interrupt` line. After a genmove the engine may ponder (think on
the opponent's time) on a background thread; each new line stops it, so pondering never
delays an answer by more than one search batch, and it resumes after commands that leave the
game unchanged. The loop never dies on bad input: every
command line gets a framed answer, internal errors included, and the output is flushed after
every answer and every streamed line.

Each line keeps the moment it was read, so `time_left` counts from when the controller sent
it, not from when a busy or starting engine got to it. A `quit` read while a search runs ends
that search at once (gtp2ogs kills an engine that has not exited 3 s after it); one already
waiting in the queue when a command starts (a script's lines, read all at once) waits its
turn, as the commands before it are answered in full.
"""

import logging
import threading
import time
from collections import deque
from typing import BinaryIO, Callable

from dosaku.gtp.analysis import Stream
from dosaku.gtp.protocol import GtpError, failure, header, parse, stream_line, success

log = logging.getLogger(__name__)

INTERRUPT = "# interrupt"  # GoGui's line asking to end the running command early


def is_quit(line: str) -> bool:
    try:
        cmd = parse(line)
    except Exception:  # parse is total by design
        return False
    return cmd is not None and cmd.name == "quit"


def is_interrupt(line: str) -> bool:
    return line.strip().lower() == INTERRUPT


class GtpServer:
    """Dispatches command lines to a Commands object and frames the answers."""

    def __init__(self, commands):
        self.commands = commands
        self._cond = threading.Condition()
        self._pending: deque[tuple[str, float]] = deque()  # (line, monotonic time read)
        self._eof = False
        self._stops: set[threading.Event] = set()  # set by any new line
        self._interrupts: set[threading.Event] = set()  # set by an interrupt line
        self._ponder: threading.Thread | None = None
        self._ponder_stop = threading.Event()
        self._ponder_game = None  # the engine's GameRecord while pondering is wanted
        self._out_lock = threading.Lock()
        self._out: BinaryIO | None = None
        self._closed = False

    # ---- one line ------------------------------------------------------------------------
    def handle_line(self, line: str, write: Callable[[str], None] | None = None,
                    stop: threading.Event | None = None,
                    interrupt: threading.Event | None = None,
                    received: float | None = None) -> str:
        """The full answer to one raw input line ("" for a line the protocol ignores).

        `write` receives the answer in pieces as they are ready (streaming commands); `stop`
        ends a streaming analysis; without it an analysis reports once and ends. `interrupt`
        ends a genmove search early. `received`: the monotonic time the line was read (now
        if None), from which time_left counts.
        """
        parts: list[str] = []
        lock = threading.Lock()

        def out(text: str) -> None:
            with lock:
                parts.append(text)
                if write is not None:
                    write(text)

        try:
            cmd = parse(line)
        except Exception:  # parse is total by design; this only guards the loop
            log.exception("cannot parse input line")
            out(failure(None, "syntax error"))
            return "".join(parts)
        if cmd is None:
            return ""
        try:
            result = self.commands.execute(cmd.name, cmd.args, interrupt,
                                           time.monotonic() if received is None else received)
        except GtpError as exc:
            out(failure(cmd.id, str(exc)))
        except Exception as exc:
            log.exception("command %r failed", cmd.name)
            out(failure(cmd.id, f"internal error: {type(exc).__name__}"))
        else:
            if isinstance(result, Stream):
                self._stream(cmd.id, result, out, stop)
            else:
                out(success(cmd.id, result))
        return "".join(parts)

    @staticmethod
    def _stream(cid, stream: Stream, out, stop: threading.Event | None) -> None:
        if stop is None:
            stop = threading.Event()
            stop.set()
        out(header(cid))

        def emit(text: str) -> None:
            piece = stream_line(text)
            if piece:
                out(piece)
        try:
            stream.run(emit, stop)
        except Exception:  # the `=` is out already: log, and end the answer cleanly
            log.exception("streaming command failed")
        out("\n")

    # ---- the loop ------------------------------------------------------------------------
    def serve(self, infile: BinaryIO, outfile: BinaryIO) -> None:
        """Answer lines from `infile` on `outfile` until `quit` or end of input."""
        self._out = outfile
        threading.Thread(target=self._read, args=(infile,), name="gtp-reader",
                         daemon=True).start()
        try:
            self._loop()
        finally:
            self._stop_pondering()

    def _loop(self) -> None:
        while not self._closed:
            with self._cond:
                while not self._pending and not self._eof:
                    self._cond.wait()
                if not self._pending:
                    return
                line, received = self._pending.popleft()
                stop, interrupt = threading.Event(), threading.Event()
                if self._pending or self._eof:
                    stop.set()
                if any(is_interrupt(later) for later, _ in self._pending):
                    interrupt.set()
                self._stops.add(stop)
                self._interrupts.add(interrupt)
            self._stop_pondering()
            try:
                self.handle_line(line, write=self._write, stop=stop, interrupt=interrupt,
                                 received=received)
            finally:
                with self._cond:
                    self._stops.discard(stop)
                    self._interrupts.discard(interrupt)
            if self.commands.quit_requested:
                return
            self._update_pondering()

    # ---- pondering -----------------------------------------------------------------------
    def _update_pondering(self) -> None:
        """Ponder after a genmove, and again after each later command that leaves the game
        as it was (name, time_left, showboard, ...); a move or any other change ends it."""
        engine = self.commands.engine if self._ponder_game or self.commands.ponder_now else None
        if self.commands.ponder_now:
            self._ponder_game = engine.record()
        elif self._ponder_game is not None and (not engine.config.ponder
                                                or engine.record() != self._ponder_game):
            self._ponder_game = None
        if self._ponder_game is not None:
            self._start_pondering()

    def _start_pondering(self) -> None:
        """Search on a background thread until the next input line (or end of input)."""
        stop = threading.Event()
        with self._cond:
            if self._pending or self._eof:
                return
            self._stops.add(stop)
        engine = self.commands.engine

        def ponder():
            try:
                engine.ponder(stop)
            except Exception:
                log.exception("pondering failed")
        self._ponder_stop = stop
        self._ponder = threading.Thread(target=ponder, name="gtp-ponder", daemon=True)
        self._ponder.start()

    def _stop_pondering(self) -> None:
        """End pondering before the engine is touched again (within one search batch)."""
        if self._ponder is None:
            return
        self._ponder_stop.set()
        self._ponder.join()
        self._ponder = None
        with self._cond:
            self._stops.discard(self._ponder_stop)

    def _read(self, infile: BinaryIO) -> None:
        """Reader thread: queue every input line and stop any running analysis."""
        try:
            for raw in iter(infile.readline, b""):
                read_at = time.monotonic()
                line = raw.decode("utf-8", errors="replace")
                ends = is_interrupt(line) or is_quit(line)
                with self._cond:
                    self._pending.append((line, read_at))
                    for ev in self._stops | (self._interrupts if ends else set()):
                        ev.set()
                    self._cond.notify()
        except (OSError, ValueError):
            log.exception("reading input failed")
        finally:
            with self._cond:
                self._eof = True
                for ev in self._stops:
                    ev.set()
                self._cond.notify()

    def _write(self, text: str) -> None:
        with self._out_lock:
            if self._closed:
                return
            try:
                self._out.write(text.encode("utf-8", errors="replace"))
                self._out.flush()
            except (OSError, ValueError):
                log.warning("output closed; stopping")
                self._closed = True
