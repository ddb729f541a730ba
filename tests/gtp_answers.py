"""Helpers for tests that talk to a GtpServer through handle_line."""


def ok(srv, line: str) -> str:
    """Send a line that must succeed; the answer text after '= '."""
    answer = srv.handle_line(line)
    assert answer.startswith("=") and answer.endswith("\n\n"), (line, answer)
    return answer[1:-2].lstrip(" ")


def fail(srv, line: str) -> str:
    """Send a line that must fail; the error text after '? '."""
    answer = srv.handle_line(line)
    assert answer.startswith("?") and answer.endswith("\n\n"), (line, answer)
    return answer[1:-2].lstrip(" ")
