"""The text layer of GTP: preprocessing, id/name/argument splitting and answer framing."""

import pytest

from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.gtp.protocol import (
    GtpError,
    failure,
    format_float,
    header,
    parse,
    parse_color,
    parse_float,
    parse_int,
    preprocess,
    stream_line,
    success,
)


@pytest.mark.parametrize("raw, expected", [
    ("name\n", "name"),
    ("name\r\n", "name"),
    ("  play\tb\td4  \n", "play b d4"),
    ("play b d4 # a comment\n", "play b d4"),
    ("# only a comment\n", ""),
    ("\n", ""),
    ("\r\n", ""),
    ("\t \t\n", ""),
    ("na\x00me\x07\x1b\x7f", "name"),  # control characters are discarded, not turned into spaces
    ("12 name#comment", "12 name"),
])
def test_preprocess(raw, expected):
    assert preprocess(raw) == expected


def test_parse_splits_id_name_args():
    cmd = parse("12 play  b\td4\r\n")
    assert (cmd.id, cmd.name, cmd.args) == (12, "play", ["b", "d4"])
    cmd = parse("genmove w")
    assert (cmd.id, cmd.name, cmd.args) == (None, "genmove", ["w"])


def test_parse_ignores_empty_and_comment_lines():
    assert parse("") is None
    assert parse("   # nothing\n") is None
    assert parse("\x01\x02\r\n") is None


def test_parse_id_only_and_non_ascii_digits():
    assert parse("7").id == 7 and parse("7").name == ""
    # Only ASCII digits form an id; other Unicode digits are part of the command name.
    cmd = parse("\u0663 name")
    assert cmd.id is None and cmd.name == "\u0663"


def test_parse_id_is_decimal():
    cmd = parse("007 name")
    assert cmd.id == 7
    assert parse("-1 name").id is None
    assert parse("1.5 name").name == "1.5"


def test_success_and_failure_framing():
    assert success(None, "") == "= \n\n"  # GNU Go's empty answer
    assert success(None, "2") == "= 2\n\n"
    assert success(5, "Dosaku") == "=5 Dosaku\n\n"
    assert failure(None, "unknown command") == "? unknown command\n\n"
    assert failure(42, "illegal move") == "?42 illegal move\n\n"


def test_answer_never_contains_an_empty_line():
    text = success(3, "\nline one\n\n\nline two\n\n")
    assert text == "=3 \nline one\nline two\n\n"
    assert text.count("\n\n") == 1 and text.endswith("\n\n")
    assert success(None, "a\n \nb\x00c") == "= a\nbc\n\n"


def test_multiline_answer_starting_with_newline_starts_on_next_line():
    assert success(1, "\nrow1\nrow2") == "=1 \nrow1\nrow2\n\n"
    assert failure(2, "\nrow1\nrow2") == "?2 \nrow1\nrow2\n\n"
    assert failure(None, "") == "? \n\n"


def test_stream_pieces():
    assert header(None) == "= \n"
    assert header(9) == "=9 \n"
    assert stream_line("info move D4") == "info move D4\n"
    assert stream_line("a\n\nb") == "a b\n"
    assert stream_line("\n\n") == ""


@pytest.mark.parametrize("text, color", [("b", BLACK), ("B", BLACK), ("black", BLACK),
                                         ("BLACK", BLACK), ("w", WHITE), ("White", WHITE),
                                         ("x", None), ("", None), ("bl", None)])
def test_parse_color(text, color):
    assert parse_color(text) == color


def test_numbers():
    assert parse_int("19") == 19
    for bad in ("-1", "1.0", "x", "", "\u0663"):
        with pytest.raises(GtpError, match="syntax error"):
            parse_int(bad)
    assert parse_float("6.5") == 6.5 and parse_float("-3") == -3.0
    for bad in ("nan", "inf", "-inf", "abc", ""):
        with pytest.raises(GtpError, match="syntax error"):
            parse_float(bad)
    assert format_float(7.0) == "7" and format_float(6.5) == "6.5" and format_float(-0.5) == "-0.5"
