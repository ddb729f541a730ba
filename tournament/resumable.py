"""The ending the resumable tournament commands (match, soak, compare) share: a run that fails or
is interrupted says so in one line and exits with a status a script can tell apart, and what it
finished stays in --out for a rerun to continue from."""

import sys
from collections.abc import Callable
from typing import TypeVar

FAILED = 2  # exit status when the run cannot go on (an engine that fails, an unwritable --out)
INTERRUPTED = 130  # exit status after Ctrl-C, the one a shell gives for SIGINT

T = TypeVar("T")


def run_resumable(tool: str, errors: tuple[type[Exception], ...],
                  work: Callable[[], T]) -> tuple[int, T | None]:
    """(0, work()); or, after one line on stderr naming `tool`, (FAILED, None) for one of
    `errors` or an OSError, and (INTERRUPTED, None) for Ctrl-C."""
    try:
        return 0, work()
    except (*errors, OSError) as exc:
        print(f"{tool}: {exc}", file=sys.stderr)
        return FAILED, None
    except KeyboardInterrupt:
        print(f"{tool}: interrupted; rerun with the same --out to continue", file=sys.stderr)
        return INTERRUPTED, None
