"""run_engine.py as a subprocess: start-up latency, a transcript, garbage input, clean exits."""

import os
import random
import re
import subprocess
import sys
import threading
from pathlib import Path

from dosaku.weights import DEFAULT_NAME

ROOT = Path(__file__).resolve().parents[1]
ENGINE = [sys.executable, str(ROOT / "run_engine.py")]
NAME = f"Dosaku ({DEFAULT_NAME})".encode()  # `name` with the shipped default net
HANG = 60.0  # seconds: only a hang takes this long


class Proc:
    """The engine process with a blocking answer reader."""

    def __init__(self, *flags: str):
        self.p = subprocess.Popen(ENGINE + list(flags), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(self, data: bytes) -> None:
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def answer(self) -> str:
        """One answer without its terminating empty line; every line belongs to it."""
        lines = []
        while True:
            line = self.p.stdout.readline()
            assert line, "engine closed stdout"
            if line == b"\n":
                return b"".join(lines).decode()
            lines.append(line)

    def close(self) -> int:
        try:
            self.send(b"quit\n")
            assert self.answer() == "= \n"
        finally:
            self.p.stdin.close()
        return self.p.wait(10)


def test_admin_commands_never_wait_for_the_engine(tmp_path):
    """The GTP loop answers before the engine exists: here it never will, its network being a
    pipe no one writes to, so the loader blocks for good on reading it."""
    net = tmp_path / "net.onnx"
    os.mkfifo(net)
    e = Proc("--model", str(net), "--no-int8")
    watchdog = threading.Timer(HANG, e.p.kill)  # a held-back answer fails instead of hanging
    watchdog.start()
    try:
        e.send(b"protocol_version\nname\nversion\nlist_commands\n")
        assert e.answer() == "= 2\n"
        assert e.answer() == "= Dosaku (net)\n"  # the net's name, before it is loaded
        assert e.answer().startswith("= ")
        assert "\ngenmove\n" in e.answer()
        assert e.close() == 0
    finally:
        watchdog.cancel()
        e.p.kill()


def test_the_gtp_loop_starts_without_numeric_libraries():
    """What run_engine imports before it serves GTP (the start-up users wait for): none of
    numpy, numba, onnxruntime, nor the engine itself; the loader thread brings those. Nor the
    review command's modules and Ray, which only `dosaku review` loads."""
    heavy = ("numpy", "numba", "onnxruntime", "onnx", "dosaku.engine.engine",
             "dosaku.engine.search.driver", "dosaku.tournament.review_batch",
             "dosaku.training.review_ray", "ray")
    code = ("import sys\nfrom dosaku import run_engine\n"
            "from dosaku.gtp.commands import Commands\n"
            "from dosaku.gtp.loader import EngineLoader\n"
            "from dosaku.gtp.server import GtpServer\n"
            f"print([m for m in {heavy!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=HANG, check=True).stdout
    assert out.strip() == "[]"


def test_transcript():
    e = Proc("--boardsize", "9", "--komi", "6.5")
    script = [
        ("1 get_komi", "=1 6.5"),
        ("boardsize 5", "= "),
        ("clear_board\r", "= "),  # CR LF line ending
        ("\t2\tplay\tb\tc3  # tabs and a comment", "=2 "),
        ("", None),  # empty lines get no answer
        ("# a comment line", None),
        ("play w c3", "? illegal move"),
        ("3 play b zz", "?3 syntax error"),
        ("undo", "= "),
        ("undo", "? cannot undo"),
        ("boardsize 30", "? unacceptable size"),
        ("fixed_handicap 1", "? invalid number of stones"),
        ("foo", "? unknown command"),
        ("10 known_command lz-analyze", "=10 true"),
        ("komi 0.5", "= "),
        ("play b c3", "= "),
        ("final_score", "= B+24.5"),
        ("final_status_list dead", "= "),
    ]
    for line, expected in script:
        e.send(line.encode() + b"\n")
        if expected is not None:
            assert e.answer() == expected + "\n", line
    e.send(b"genmove w\n")
    assert re.fullmatch(r"= ([A-E][1-5]|pass|resign)\n", e.answer())
    e.send(b"showboard\n")
    board = e.answer()
    assert board.startswith("= \n") and board.count("\n") == 9  # header + 8 lines, no blank one
    assert e.close() == 0


def test_end_of_input_exits_cleanly():
    p = subprocess.run(ENGINE, input=b"name\nboardsize 9\nplay b e5", capture_output=True,
                       timeout=60)
    assert p.returncode == 0
    assert p.stdout == b"= " + NAME + b"\n\n= \n\n= \n\n"  # no newline on the last line: answered


def test_bad_engine_flag_is_reported_on_every_engine_command():
    p = subprocess.run(ENGINE + ["--rules", "nonsense"], input=b"name\nboardsize 9\nquit\n",
                       capture_output=True, timeout=60)
    assert p.stdout == (b"= " + NAME + b"\n\n? engine failed to start: unknown --rules "
                        b"'nonsense'\n\n= \n\n")


def test_stdout_carries_protocol_only():
    # Logging happens (engine start-up is logged at INFO) but never on stdout.
    p = subprocess.run(ENGINE + ["--log-level", "DEBUG"], input=b"boardsize 9\ngenmove b\nquit\n",
                       capture_output=True, timeout=60)
    answers = p.stdout.decode().split("\n\n")
    assert answers[-1] == "" and all(re.match(r"[=?]", a) for a in answers[:-1])
    assert b"engine ready" in p.stderr


def _expected_answer_head(line: bytes) -> str | None:
    """Independent reading of the spec: which answer prefix a garbage line must get."""
    text = line.decode("utf-8", errors="replace")
    text = "".join(ch for ch in text if ch == "\t" or not (ord(ch) < 32 or ord(ch) == 127))
    text = text.replace("\t", " ").split("#")[0].strip(" ")
    if not text:
        return None
    first = text.split(" ")[0]
    return first if re.fullmatch(r"[0-9]+", first) else ""


def _garbage(rng: random.Random, names: list[str]) -> bytes:
    kind = rng.random()
    if kind < 0.4:  # raw bytes, everything but LF
        return bytes(rng.choice([b for b in range(256) if b != 10])
                     for _ in range(rng.randint(0, 60)))
    words = [rng.choice(names)] + [rng.choice(["b", "w", "D4", "pass", "-1", "3", "1e9", "#",
                                               "\t", "\r", "\x00", "x" * rng.randint(1, 300),
                                               "{", "}", "9", "0", "A1", "t19", "white"])
                                   for _ in range(rng.randint(0, 6))]
    if kind < 0.7:
        words.insert(0, str(rng.randint(0, 10 ** rng.randint(1, 30))))
    return " ".join(words).encode("utf-8", errors="replace").replace(b"\n", b"")


def test_ten_thousand_garbage_lines_all_answered_and_framed():
    rng = random.Random(20261121)
    # Everything except commands that end the session, write files or play full games.
    names = ["protocol_version", "name", "version", "known_command", "list_commands",
             "boardsize", "clear_board", "komi", "get_komi", "play", "undo", "gg-undo",
             "showboard", "final_score", "final_status_list", "fixed_handicap",
             "place_free_handicap", "set_free_handicap", "time_settings", "time_left",
             "kgs-time_settings", "kgs-rules", "kata-get-rules", "kata-set-rules",
             "clear_cache", "cputime", "lz-analyze", "kata-analyze", "nonsense", "QUIT", "Play"]
    lines = [_garbage(rng, names) for _ in range(10_000)]
    heads = [_expected_answer_head(line) for line in lines]
    e = Proc()
    payload = b"".join(line + b"\n" for line in lines) + b"999999 name\n"
    writer = threading.Thread(target=e.send, args=(payload,))
    writer.start()
    for line, head in zip(lines, heads):
        if head is None:
            continue
        answer = e.answer()
        assert re.match(r"[=?]" + re.escape(head) + r"( |\n)", answer), (line, answer)
    assert e.answer() == f"=999999 {NAME.decode()}\n"  # still alive and in step
    writer.join()
    assert e.close() == 0
