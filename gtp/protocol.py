"""GTP v2 text handling: preprocess a command line, split it, frame answers.

Pure string functions, no engine and no I/O, so every framing rule is testable on its own.
Rules (GTP v2 spec section 2): control characters other than TAB and LF are discarded, TAB
becomes a space, everything from `#` on is a comment, lines left empty are ignored; an answer
is `=[id] text` or `?[id] text` followed by one empty line, and never contains an empty line.
The space after `=[id]` is always written, before an empty or multi-line body too, as GNU Go
writes it: GoGui's client (and gogui-regress) keep what follows the first space of an answer,
so a board starting right after `=[id]` and a newline would lose its first value.
"""

import re
from dataclasses import dataclass

from dosaku.engine.rules.constants import BLACK, WHITE

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_ID = re.compile(r"[0-9]+")

# Failure texts. Spec strings where the spec has one; GNU Go 3.8's wording otherwise.
UNKNOWN_COMMAND = "unknown command"
SYNTAX_ERROR = "syntax error"
ILLEGAL_MOVE = "illegal move"
CANNOT_UNDO = "cannot undo"
UNACCEPTABLE_SIZE = "unacceptable size"
BOARD_NOT_EMPTY = "board not empty"
INVALID_STONES = "invalid number of stones"
BAD_VERTEX_LIST = "bad vertex list"
CANNOT_SCORE = "cannot score"
CANNOT_LOAD = "cannot load file"
CANNOT_SAVE = "cannot save file"
UNKNOWN_RULES = "unknown rules"
INVALID_STATUS = "invalid status"


class GtpError(Exception):
    """A command failed; the message is the text after `?`."""


@dataclass(frozen=True)
class Command:
    """One parsed command line."""
    id: int | None
    name: str
    args: list[str]


def preprocess(line: str) -> str:
    """The line as the spec says to read it: no control chars, no comment, no outer spaces."""
    line = line.replace("\t", " ")
    line = _CONTROL.sub("", line)
    line = line.split("#", 1)[0]
    return line.strip(" ")


def parse(line: str) -> Command | None:
    """Split a raw input line into id, name and arguments; None for a line to ignore.

    A line holding only an id gets the empty name, which no command has.
    """
    words = [w for w in preprocess(line).split(" ") if w]
    if not words:
        return None
    cid = None
    if _ID.fullmatch(words[0]):
        cid = int(words[0])
        words = words[1:]
    if not words:
        return Command(cid, "", [])
    return Command(cid, words[0], words[1:])


def _clean(text: str) -> str:
    """Answer text that cannot end the answer early: no empty lines, no control characters."""
    lines = [_CONTROL.sub("", ln.replace("\t", " ")).rstrip() for ln in text.split("\n")]
    return "\n".join(ln for ln in lines if ln.strip())


def success(cid: int | None, text: str = "") -> str:
    """Framed success answer, ending with the empty line."""
    return _frame("=", cid, text)


def failure(cid: int | None, text: str) -> str:
    """Framed failure answer, ending with the empty line."""
    return _frame("?", cid, text)


def header(cid: int | None) -> str:
    """First line of a streaming answer (`=id `, its space and newline); the body follows."""
    return _head("=", cid) + "\n"


def _head(mark: str, cid: int | None) -> str:
    """`=[id] ` or `?[id] `: the mark, the id and the space every answer has after them."""
    return mark + ("" if cid is None else str(cid)) + " "


def _frame(mark: str, cid: int | None, text: str) -> str:
    head = _head(mark, cid)
    body = _clean(text)
    if not body:
        return head + "\n\n"
    if text.startswith("\n"):  # multi-line answers such as showboard start on their own line
        return head + "\n" + body + "\n\n"
    return head + body + "\n\n"


def stream_line(text: str) -> str:
    """One line of a streaming answer body ("" if nothing is left to print: never an empty line)."""
    body = _clean(text).replace("\n", " ")
    return body + "\n" if body else ""


def parse_color(text: str) -> int | None:
    """BLACK or WHITE for b/black/w/white in any case, else None."""
    t = text.lower()
    if t in ("b", "black"):
        return BLACK
    if t in ("w", "white"):
        return WHITE
    return None


def color_name(color: int) -> str:
    return "black" if color == BLACK else "white"


def parse_int(text: str) -> int:
    """A non-negative decimal integer, else GtpError(syntax error)."""
    if not _ID.fullmatch(text):
        raise GtpError(SYNTAX_ERROR)
    return int(text)


def parse_float(text: str) -> float:
    """A finite float, else GtpError(syntax error)."""
    try:
        value = float(text)
    except ValueError:
        raise GtpError(SYNTAX_ERROR) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise GtpError(SYNTAX_ERROR)
    return value


def format_float(x: float) -> str:
    """A float for answers: integral values without a fraction, else the shortest exact form."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))
