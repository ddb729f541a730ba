"""The ending match, soak and compare share (tournament/resumable.py)."""

import pytest

from dosaku.tournament.resumable import FAILED, INTERRUPTED, run_resumable


class Refused(Exception):
    pass


def raises(exc):
    def work():
        raise exc
    return work


def test_a_finished_run_gives_its_result():
    assert run_resumable("match", (Refused,), lambda: [1, 2]) == (0, [1, 2])


@pytest.mark.parametrize("exc", [Refused("engine 2 died"), OSError("engine 2 died")])
def test_a_failed_run_says_why_in_one_line(exc, capsys):
    assert run_resumable("soak", (Refused,), raises(exc)) == (FAILED, None)
    assert capsys.readouterr().err == "soak: engine 2 died\n"


def test_an_interrupted_run_says_how_to_continue(capsys):
    assert run_resumable("compare", (), raises(KeyboardInterrupt())) == (INTERRUPTED, None)
    assert capsys.readouterr().err == \
        "compare: interrupted; rerun with the same --out to continue\n"


def test_other_errors_are_not_swallowed():
    with pytest.raises(ValueError):
        run_resumable("match", (Refused,), raises(ValueError("a bug")))
