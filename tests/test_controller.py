"""GtpController against a scripted engine: framing, ids, stderr draining, crash and time-out."""

import io

import pytest

from dosaku.tournament.controller import (
    EngineDied,
    EngineError,
    EngineTimeout,
    GtpController,
    GtpFailure,
    parse_response,
)


def test_parse_response_ids_and_text():
    r = parse_response(["=12 Q16"])
    assert (r.ok, r.id, r.text) == (True, 12, "Q16")
    r = parse_response(["= 10"])
    assert (r.ok, r.id, r.text) == (True, None, "10")
    r = parse_response(["?3 illegal move"])
    assert (r.ok, r.id, r.text) == (False, 3, "illegal move")
    r = parse_response(["=7 ", "   A B", " 1 . . 1"])
    assert r.id == 7 and r.text == "A B\n 1 . . 1"
    r = parse_response(["="])
    assert (r.ok, r.id, r.text) == (True, None, "")
    with pytest.raises(EngineError):
        parse_response(["hello"])


@pytest.mark.parametrize("head", ["=7", "=7 ", "?7", "?7 "])
def test_parse_response_with_or_without_the_space_after_the_id(head):
    """GNU Go (and Dosaku) write `=7 ` before an empty or multi-line body; older engines write
    `=7` alone. Both read the same."""
    empty = parse_response([head])
    assert (empty.ok, empty.id, empty.text) == (head[0] == "=", 7, "")
    board = parse_response([head, "0.1 0.2", "0.3 0.4"])
    assert (board.ok, board.id, board.text) == (head[0] == "=", 7, "0.1 0.2\n0.3 0.4")


def test_send_failure_and_echoed_id(fake_engine):
    with GtpController(fake_engine("pass")) as c:
        assert c.send("name") == "Fake pass"
        r = c.send_raw("42 echo a  b")
        assert (r.ok, r.id, r.text) == (True, 42, "a b")
        with pytest.raises(GtpFailure) as info:
            c.send("nonsense")
        assert info.value.message == "unknown command"
        assert c.alive
    assert c.proc.returncode == 0


def test_noisy_engine_stderr_drained_and_junk_skipped(fake_engine):
    log = io.StringIO()
    with GtpController(fake_engine("noisy"), stderr_log=log) as c:
        # 1 MB of stderr would fill the pipe and block the engine if nobody read it.
        assert c.send("name", timeout=20) == "Fake noisy"
        assert c.send("genmove b", timeout=20) == "pass"
        assert c.invalid_lines == ["junk before the answer"] * 2
    assert log.getvalue().count("x" * 1023 + "\n") == 1024


def test_crash_raises_engine_died(fake_engine):
    c = GtpController(fake_engine("crash"))
    assert c.send("name") == "Fake crash"
    with pytest.raises(EngineDied):
        c.send("genmove b", timeout=10)
    assert not c.alive
    assert c.close() == 3


def test_timeout_then_kill(fake_engine):
    c = GtpController(fake_engine("hang"))
    with pytest.raises(EngineTimeout):
        c.send("genmove b", timeout=0.3)
    assert not c.alive
    with pytest.raises(EngineError):
        c.send("name")
    assert c.close(grace=0.5) is not None
    assert c.proc.poll() is not None


def test_missing_program():
    with pytest.raises(EngineError, match="cannot start"):
        GtpController("/nonexistent/engine --gtp")
