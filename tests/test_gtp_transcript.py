"""The engine's answers to seeded command files stay byte for byte what they were
(tests/transcripts.py says how they are recorded and which runs are portable)."""

import pytest

from tests.transcripts import DATA, PORTABLE, answers


@pytest.mark.parametrize("name", sorted(PORTABLE))
def test_answers_match_the_recorded_transcript(name):
    commands, flags = PORTABLE[name]
    expected = (DATA / f"{name}.answers").read_bytes()
    assert answers(commands, flags) == expected
