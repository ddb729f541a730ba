"""Every entry of `gogui-analyze_commands`, grouped by its GoGui response type, answers in the
format that type promises (read as GoGui reads it: tests/gogui_formats.py) and shows the
position it was asked about.

The position is the finished 9x9 game of test_gtp_kgs_gogui: Black's wall on C, White's on D,
a dead white stone at B5, both passed, komi 7.5: Black's area is columns A-C (27 points),
White's D-J (54), so the score is W+34.5 and B5 is the one dead stone.
"""

import re

import pytest

from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.gtp import gogui
from tests import gogui_formats as fmt
from tests.gtp_answers import ok
from tests.test_gtp_kgs_gogui import finished_game, rollout_engine, server

SIZE = 9
ENTRIES = [tuple(entry.split("/", 2)) for entry in gogui.ANALYZE_COMMANDS]
STONES = {f"C{r}": "b" for r in range(1, 10)} | {f"D{r}": "w" for r in range(1, 10)} | \
    {"B5": "w"}


@pytest.fixture(scope="module")
def srv():
    s = server(rollout_engine(playouts=256))  # ownership averaged over enough playouts
    finished_game(s)
    return s


def position() -> GameState:
    game = GameState(SIZE, SIZE, 7.5, PRESETS["chinese"])
    for row in range(1, 10):
        game.play(BLACK, parse_vertex(f"C{row}", SIZE, SIZE))
        game.play(WHITE, parse_vertex(f"D{row}", SIZE, SIZE))
    game.play(WHITE, parse_vertex("B5", SIZE, SIZE))
    return game


def check_moves_replay(moves: list[tuple[str, str]]) -> None:
    """A variation from the position (Black to move) is legal move after move."""
    game = position()
    assert moves and moves[0][0] == "b"
    for color, vertex in moves:
        err = game.play(BLACK if color == "b" else WHITE, parse_vertex(vertex, SIZE, SIZE))
        assert err == 0, (moves, vertex)


def board_cells(rows) -> dict[str, object]:
    """{vertex: cell} of a parsed board (rows from the top)."""
    return {f"{'ABCDEFGHJ'[x]}{SIZE - y}": cell
            for y, row in enumerate(rows) for x, cell in enumerate(row)}


# ---- one check per response type -----------------------------------------------------------
def check_dboard(answer: str, command: str) -> None:
    cells = board_cells(fmt.dboard(answer, SIZE))
    if command.startswith("dosaku-policy"):  # a prior: nothing on stones, at most 1 in all
        assert all(cells[v] == 0 for v in STONES)
        assert all(v >= 0 for v in cells.values()) and 0.5 < sum(cells.values()) <= 1.0
    else:  # ownership from Black's view
        assert all(cells[f"{c}{r}"] > 0.3 for c in "ABC" for r in range(1, 10))
        assert all(cells[f"D{r}"] < -0.3 for r in range(1, 10))


def check_cboard(answer: str, command: str) -> None:
    cells = board_cells(fmt.cboard(answer, SIZE))
    assert all(cells[f"{c}{r}"] == "black" for c in "ABC" for r in range(1, 10))  # B5 included
    assert all(cells[f"{c}{r}"] == "white" for c in "D" for r in range(1, 10))
    assert set(cells.values()) <= {"black", "white", ""}


def check_sboard(answer: str, command: str) -> None:
    cells = board_cells(fmt.sboard(answer, SIZE))
    shown = {v: w for v, w in cells.items() if w}
    assert shown and not set(shown) & set(STONES)  # winrates on empty points only
    assert all(re.fullmatch(r"\d{1,3}", w) and int(w) <= 100 for w in shown.values())


def check_pspairs(answer: str, command: str) -> None:
    pairs = fmt.pspairs(answer, SIZE)
    visits = [int(n) for _, n in pairs]
    assert pairs and visits == sorted(visits, reverse=True) and min(visits) > 0
    assert not {p for p, _ in pairs} & set(STONES)


def check_var(answer: str, command: str) -> None:
    check_moves_replay(fmt.var(answer, SIZE, first="b"))


def check_plist(answer: str, command: str) -> None:
    assert fmt.plist(answer, SIZE) == ["B5"]


def check_string(answer: str, command: str) -> None:
    lines = fmt.text_answer(answer)
    assert len(lines) == 1  # the status bar
    assert lines == ["W+34.5"]


def check_gfx(answer: str, command: str) -> None:
    drawing = fmt.gfx(answer, SIZE, first="b")
    assert set(drawing) == {"VAR", "LABEL", "INFLUENCE", "TEXT"}, answer
    check_moves_replay(drawing["VAR"][0])
    labels = drawing["LABEL"][0]
    assert labels and all(n.isdigit() and int(n) > 0 for _, n in labels)
    assert not {p for p, _ in labels} & set(STONES)
    influence = dict(drawing["INFLUENCE"][0])
    assert len(influence) == SIZE * SIZE and all(-1 <= v <= 1 for v in influence.values())
    assert all(influence[f"{c}{r}"] > 0.3 for c in "ABC" for r in range(1, 10))
    assert re.fullmatch(r"Black to move: winrate \d+\.\d%, score lead [-+]\d+\.\d, \d+ visits",
                        drawing["TEXT"][0]), drawing["TEXT"]


def check_param(answer: str, command: str, srv=None) -> None:
    """GoGui edits a parameter by sending the same command with the key and the new value:
    setting each one to its current value is accepted and changes nothing."""
    params = fmt.param(answer)
    assert params
    for _, key, value in params:
        ok(srv, f"{command} {key} {value}")
    assert fmt.param(ok(srv, command)) == params


CHECKS = {"dboard": check_dboard, "cboard": check_cboard, "sboard": check_sboard,
          "pspairs": check_pspairs, "var": check_var, "plist": check_plist,
          "string": check_string, "gfx": check_gfx, "param": check_param}


def test_every_listed_type_is_a_gogui_type_with_a_check():
    kinds = {kind for kind, _, _ in ENTRIES}
    assert kinds <= fmt.TYPES
    assert kinds <= set(CHECKS), kinds - set(CHECKS)
    assert len({label for _, label, _ in ENTRIES}) == len(ENTRIES)  # menu labels are distinct
    assert {"gfx", "dboard", "cboard", "sboard", "pspairs", "var", "plist", "string"} <= kinds


@pytest.mark.parametrize("kind", sorted({kind for kind, _, _ in ENTRIES}))
def test_entries_answer_in_their_types_format(srv, kind):
    entries = [(label, cmd) for k, label, cmd in ENTRIES if k == kind]
    for label, cmd in entries:
        assert ok(srv, f"known_command {cmd.split()[0]}") == "true", label
        command = cmd.replace("%m", "b")
        answer = ok(srv, command)
        if kind == "param":
            check_param(answer, command, srv)
        else:
            CHECKS[kind](answer, command)
    assert ok(srv, "gogui-analyze_commands").split("\n") == list(gogui.ANALYZE_COMMANDS)


# ---- the readers themselves reject what GoGui could not read ----------------------------------
@pytest.mark.parametrize("reader,text", [
    (fmt.dboard, "0 0\n0 0\n0"),  # a short row
    (fmt.dboard, "\n".join(["0.5 " * 8 + "1.5"] + ["0 " * 9] * 8)),  # outside [-1, 1]
    (fmt.sboard, "\n".join(["abcde" + ' ""' * 8] + ['"" ' * 9] * 8)),  # too long to fit
    (fmt.cboard, "\n".join(["mauve" + ' ""' * 8] + ['"" ' * 9] * 8)),  # not a colour
    (fmt.plist, "A1 Z9"),
    (fmt.pspairs, "A1 3 B2"),
])
def test_readers_reject_malformed_answers(reader, text):
    with pytest.raises(AssertionError):
        reader(text, SIZE)


def test_gfx_and_param_readers():
    drawing = fmt.gfx("VAR b E5 w pass\nLABEL A1 x B2 7\nCOLOR #ff0000 A1 B2\nTEXT hi there\n"
                      "SQUARE E5", SIZE, first="w")
    assert drawing == {"VAR": [[("b", "E5"), ("w", "PASS")]], "LABEL": [[("A1", "x"), ("B2", "7")]],
                       "COLOR": [("#ff0000", ["A1", "B2"])], "TEXT": ["hi there"],
                       "SQUARE": [["E5"]]}
    assert fmt.var("E5 F5 tenuki pass", SIZE, first="w") == \
        [("w", "E5"), ("b", "F5"), ("w", "PASS")]
    for bad in ("CIRCLES A1", "INFLUENCE A1 x", "COLOR mauve A1", "LABEL A1"):
        with pytest.raises((AssertionError, ValueError)):
            fmt.gfx(bad, SIZE, first="b")
    assert fmt.param("[Search]\n[bool] ponder 0\n[string] visits 400\n[list/fast/slow] mode fast"
                     "\nkomi 7.5") == [("[bool]", "ponder", "0"), ("[string]", "visits", "400"),
                                       ("[list/fast/slow]", "mode", "fast"),
                                       (None, "komi", "7.5")]
    for bad in ("[bool] ponder 2", "[list/a/b] mode c", "[int] visits 3"):
        with pytest.raises(AssertionError):
            fmt.param(bad)
