"""Asking GTP engines about one position: set it up, get a move, get the judge's value of it.

Every question starts from clear_board and replays the moves, so no engine is left in a state
an earlier question made (a genmove's own move, a reused tree) and nothing needs undoing.

How the judge values a move: it plays the move, then searches the opponent's reply as it would
in a game, with its own visit limit (KataGo's maxVisits, Dosaku's --visits), through the first
of `kata-search_analyze`, `kata-genmove_analyze`, `lz-genmove_analyze` it lists. The value is
the winrate of the reply it ranks first (`order 0`) in the last `info` line, which KataGo and
Dosaku print when the search ends; that winrate is the side to move's, so the mover's is one
minus it (KataGo's default reportAnalysisWinratesAs = SIDETOMOVE). A move that ends the game
(a second pass) is valued by the judge's `final_score`; a resignation is worth 0 without
asking.
"""

from __future__ import annotations

from dataclasses import dataclass

from dosaku.tournament.compare_positions import Position
from dosaku.tournament.controller import GtpController, GtpFailure
from dosaku.tournament.match_game import parse_final_score, why_illegal

JUDGE_COMMANDS = ("kata-search_analyze", "kata-genmove_analyze", "lz-genmove_analyze")
INTERVAL_CS = 1000  # centiseconds between `info` lines: only the last one is read


class AnswerError(Exception):
    """An engine's answer about one position is unusable (a `?`, an illegal or unreadable
    move, no `info` line); the engine itself can go on."""


class JudgeUnfit(Exception):
    """The judge lists none of the analysis commands it is asked through."""


@dataclass
class Value:
    """The judge's view of the position after a move, from the mover's side."""

    winrate: float
    score: float | None  # score lead; None when the judge does not say
    visits: int | None  # of the judge's best reply
    reply: str  # the judge's best reply ("" when the move ended the game)


def send(ctrl: GtpController, command: str, label: str, timeout: float | None) -> str:
    """The answer text; a `?` becomes an AnswerError naming the engine and the command."""
    try:
        return ctrl.send(command, timeout)
    except GtpFailure as exc:
        raise AnswerError(f"{label}: `{command}` failed: {exc.message}") from None


def set_up(ctrl: GtpController, pos: Position, label: str, timeouts: tuple[float, float],
           rules_known: bool) -> None:
    """The position on the engine's board; the first command gets timeouts[0] (a new process
    may still be starting), the others timeouts[1]."""
    first, admin = timeouts
    send(ctrl, f"boardsize {pos.size}", label, first)
    send(ctrl, "clear_board", label, admin)
    send(ctrl, f"komi {pos.komi:g}", label, admin)
    if rules_known:
        try:
            ctrl.send(f"kgs-rules {pos.rules}", admin)
        except GtpFailure:
            pass  # an engine without these rules plays its own; its moves are still checked
    if pos.handicap:
        send(ctrl, "set_free_handicap " + " ".join(pos.handicap), label, admin)
    for color, vertex in pos.moves:
        send(ctrl, f"play {color} {vertex}", label, admin)


def checked_move(pos: Position, answer: str, label: str) -> str:
    """The answer as a vertex, `pass` or `resign`; AnswerError if it is not a legal move."""
    text = answer.strip()
    if text.lower() == "resign":
        return "resign"
    point = pos.point(text)
    if point is None:
        raise AnswerError(f"{label}: genmove answered {text!r}, not a move on "
                          f"{pos.size}x{pos.size}")
    game = pos.game()
    why = why_illegal(game, game.to_move, point)
    if why is not None:
        raise AnswerError(f"{label}: genmove played {text} ({why})")
    return text.upper() if text.lower() != "pass" else "pass"


def choose_move(ctrl: GtpController, pos: Position, label: str, timeout: float | None) -> str:
    """The engine's genmove in the position (already set up)."""
    return checked_move(pos, send(ctrl, f"genmove {pos.to_move}", label, timeout), label)


def judge_command(ctrl: GtpController, timeout: float) -> str:
    """The analysis command the judge is asked through (see the module's docstring)."""
    listed = set(ctrl.send("list_commands", timeout).split())
    for command in JUDGE_COMMANDS:
        if command in listed:
            return command
    raise JudgeUnfit(f"the judge lists none of {', '.join(JUDGE_COMMANDS)}")


def parse_analysis(text: str, lz: bool) -> tuple[float, float | None, int | None, str]:
    """(winrate, score lead, visits, move) of the best move in the last `info` line, from the
    side to move's view; lz: Leela Zero's winrates x10000."""
    lines = [line for line in text.splitlines() if line.startswith("info ")]
    if not lines:
        raise ValueError("no `info` line")
    segments, current = [], None
    for token in lines[-1].split():
        if token == "info":
            current = []
            segments.append(current)
        elif current is not None:
            current.append(token)
    fields = [segment_fields(s) for s in segments]
    best = next((f for f in fields if f.get("order") == "0"), fields[0])
    winrate = float(best["winrate"]) / (10000.0 if lz else 1.0)
    score = best.get("scoreLead", best.get("scoreMean"))
    visits = best.get("visits")
    return winrate, None if score is None else float(score), \
        None if visits is None else int(visits), best.get("move", "")


def segment_fields(tokens: list[str]) -> dict[str, str]:
    """The key/value pairs of one `info` segment up to its `pv`."""
    fields = {}
    for k in range(0, len(tokens) - 1, 2):
        if tokens[k] == "pv":
            break
        fields[tokens[k]] = tokens[k + 1]
    return fields


def value_after(ctrl: GtpController, command: str, pos: Position, move: str, label: str,
                timeouts: tuple[float, float], search_timeout: float | None,
                rules_known: bool) -> Value:
    """The judge's value of `move` (not a resignation) for the side to move in `pos` (see the
    module's docstring)."""
    set_up(ctrl, pos, label, timeouts, rules_known)
    mover, opponent = pos.to_move, "w" if pos.to_move == "b" else "b"
    send(ctrl, f"play {mover} {move}", label, timeouts[1])
    if move == "pass" and pos.moves and pos.moves[-1][1] == "pass":
        answer = send(ctrl, "final_score", label, timeouts[1])
        try:
            score = parse_final_score(answer) * (1 if mover == "b" else -1)
        except ValueError as exc:
            raise AnswerError(f"{label}: {exc}") from None
        return Value(1.0 if score > 0 else 0.0 if score < 0 else 0.5, score, None, "")
    text = send(ctrl, f"{command} {opponent} {INTERVAL_CS}", label, search_timeout)
    try:
        winrate, score, visits, reply = parse_analysis(text, command.startswith("lz-"))
    except (KeyError, ValueError, IndexError) as exc:
        raise AnswerError(f"{label}: cannot read the answer to {command} ({exc}): "
                          f"{text[-200:]!r}") from None
    return Value(1.0 - winrate, None if score is None else -score, visits, reply)
