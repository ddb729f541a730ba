"""`dosaku analysis` as a subprocess for the tests: send JSON lines, read answers with a
deadline, and check that stdout holds nothing but JSON lines."""

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = [sys.executable, str(ROOT / "run_engine.py"), "analysis"]
HANG = 120.0  # seconds: only a hang (or a cold compile on a loaded machine) takes this long


class AnalysisProc:
    """The engine process; every stdout line is parsed as JSON as it arrives (a line that is
    not JSON is kept as `BadLine` and fails `answer`)."""

    def __init__(self, *args: str, cwd: Path = ROOT):
        self.p = subprocess.Popen(ENGINE + list(args), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
        self.lines: queue.Queue = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        for raw in self.p.stdout:
            self.lines.put(raw)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        for raw in self.p.stderr:
            self.stderr.append(raw.decode(errors="replace"))

    def stderr_text(self, wanted: str, timeout: float = HANG) -> str:
        """stderr so far, once it holds `wanted` (its reader runs on a thread of its own)."""
        deadline = time.monotonic() + timeout
        while wanted not in "".join(self.stderr):
            assert time.monotonic() < deadline, f"{wanted!r} never came on stderr"
            time.sleep(0.05)
        return "".join(self.stderr)

    def send(self, *messages) -> None:
        """Send each message: a dict as one JSON line, a str as it is (plus a newline)."""
        data = b"".join((m if isinstance(m, str) else json.dumps(m)).encode() + b"\n"
                        for m in messages)
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def answer(self, timeout: float = HANG) -> dict:
        """The next answer: one line, one JSON object, ending in a newline."""
        raw = self.lines.get(timeout=timeout)
        assert raw is not None, "engine closed stdout; stderr:\n" + "".join(self.stderr[-20:])
        assert raw.endswith(b"\n")
        message = json.loads(raw)
        assert isinstance(message, dict)
        return message

    def answers(self, n: int, timeout: float = HANG) -> list[dict]:
        return [self.answer(timeout) for _ in range(n)]

    def final(self, query_id: str, timeout: float = HANG) -> list[dict]:
        """Answers up to and including the first final answer (or error) for `query_id`."""
        out = []
        while True:
            a = self.answer(timeout)
            out.append(a)
            if a.get("id") == query_id and ("error" in a or a.get("isDuringSearch") is False):
                return out

    def close(self) -> int:
        """Close stdin (the engine finishes what is queued) and wait for the exit."""
        self.p.stdin.close()
        try:
            return self.p.wait(HANG)
        finally:
            self.p.kill()


def config_file(tmp: Path, **keys) -> str:
    """A KataGo-style config file with these keys."""
    path = tmp / "analysis.cfg"
    path.write_text("# test config\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()))
    return str(path)
