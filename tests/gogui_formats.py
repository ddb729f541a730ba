"""Readers of GoGui analyze-command answers, one per response type, written from GoGui's manual
(chapter "Analyze Commands"): each returns what GoGui would display and fails an assertion on an
answer GoGui could not read that way. Boards are W words on each of H rows, top row first (GoGui
skips empty lines); points are GTP vertices."""

import re

import numpy as np

from dosaku.engine.rules.coords import COLUMNS

TYPES = {"bwboard", "cboard", "dboard", "eplist", "gfx", "hstring", "hpstring", "none",
         "param", "plist", "pspairs", "pstring", "sboard", "string", "var", "varb", "varc",
         "varp", "varpo", "varw"}
COLOR_NAMES = {"black", "blue", "cyan", "green", "gray", "magenta", "pink", "red", "white",
                "yellow"}
GFX_COMMANDS = {"BLACK", "CIRCLE", "COLOR", "INFLUENCE", "LABEL", "MARK", "SQUARE", "TEXT",
                "TRIANGLE", "VAR", "WHITE"}


def is_point(word: str, size: int) -> bool:
    m = re.fullmatch(r"([A-HJ-Z])(\d{1,2})", word.upper())
    return bool(m) and COLUMNS.index(m.group(1)) < size and 1 <= int(m.group(2)) <= size


def _board_words(text: str, size: int) -> list[list[str]]:
    rows = [line.split() for line in text.splitlines() if line.strip()]
    assert len(rows) == size and all(len(r) == size for r in rows), text
    return rows


def dboard(text: str, size: int) -> np.ndarray:
    """Numbers meant to lie in [-1, 1] (positive black, negative white)."""
    grid = np.array([[float(v) for v in row] for row in _board_words(text, size)])
    assert np.all(np.abs(grid) <= 1.0), text
    return grid


def sboard(text: str, size: int) -> list[list[str]]:
    """Short strings (3-4 characters fit on a point); `""` shows nothing."""
    rows = [["" if w == '""' else w for w in row] for row in _board_words(text, size)]
    assert all(len(w) <= 4 for row in rows for w in row), text
    return rows


def cboard(text: str, size: int) -> list[list[str]]:
    """Background colours: the named ones or #rrggbb; `""` leaves the point alone."""
    rows = [["" if w == '""' else w.lower() for w in row] for row in _board_words(text, size)]
    for w in (w for row in rows for w in row if w):
        assert w in COLOR_NAMES or re.fullmatch(r"#[0-9a-f]{6}", w), (w, text)
    return rows


def bwboard(text: str, size: int) -> list[list[str]]:
    """`b`/`black` and `w`/`white` are shown as stones, anything else not at all."""
    words = {"b": "b", "black": "b", "w": "w", "white": "w"}
    return [[words.get(w.lower(), "") for w in row] for row in _board_words(text, size)]


def plist(text: str, size: int) -> list[str]:
    words = text.split()
    assert all(is_point(w, size) for w in words), text
    return [w.upper() for w in words]


def pspairs(text: str, size: int) -> list[tuple[str, str]]:
    words = text.split()
    assert len(words) % 2 == 0, text
    assert all(is_point(w, size) for w in words[::2]), text
    return [(p.upper(), label) for p, label in zip(words[::2], words[1::2])]


def var(text: str, size: int, first: str) -> list[tuple[str, str]]:
    """(colour, point or PASS) moves; `b`/`w` words set the colour of the next move, other
    words without a point are ignored; colours otherwise alternate from `first`."""
    moves, color = [], first
    for word in text.split():
        w = word.lower()
        if w in ("b", "w", "black", "white"):
            color = w[0]
        elif w == "pass" or is_point(w, size):
            moves.append((color, w.upper()))
            color = "w" if color == "b" else "b"
    return moves


def gfx(text: str, size: int, first: str) -> dict[str, list]:
    """{command: [arguments of each line]} after checking each line's arguments."""
    out: dict[str, list] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        cmd, _, rest = line.strip().partition(" ")
        assert cmd in GFX_COMMANDS, line
        words = rest.split()
        if cmd == "TEXT":
            value = rest
        elif cmd == "LABEL":
            value = pspairs(rest, size)
        elif cmd == "INFLUENCE":
            pairs = pspairs(rest, size)
            value = [(p, float(v)) for p, v in pairs]
        elif cmd == "COLOR":
            assert words and (words[0].lower() in COLOR_NAMES or
                              re.fullmatch(r"#[0-9a-fA-F]{6}", words[0])), line
            value = (words[0], plist(" ".join(words[1:]), size))
        elif cmd == "VAR":
            value = var(rest, size, first)
            assert len(value) == sum(1 for w in words if w.lower() not in "bw"), line
        else:
            value = plist(rest, size)
        out.setdefault(cmd, []).append(value)
    return out


def param(text: str) -> list[tuple[str | None, str, str]]:
    """(type or None, key, value) per line `[type] key value`: type `[string]`, `[bool]` (value
    0 or 1) or, in newer GoGui, `[list/a/b/...]` (value one of them); keys have no whitespace;
    a line that is only `[...]` is a group heading, skipped."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or (line.startswith("[") and line.endswith("]")):
            continue
        kind = None
        if line.startswith("["):
            kind, _, line = line.partition("]")
            kind += "]"
            assert kind in ("[string]", "[bool]") or kind.startswith("[list/"), line
        key, _, value = line.strip().partition(" ")
        assert key, line
        value = value.strip()
        if kind == "[bool]":
            assert value in ("0", "1"), line
        elif kind and kind.startswith("[list/"):
            assert value in kind[6:-1].split("/"), line
        out.append((kind, key, value))
    return out


def text_answer(text: str) -> list[str]:
    """string / hstring / pstring / hpstring / none: any text; single-line answers go to the
    status bar, longer ones to a window."""
    return text.splitlines()
