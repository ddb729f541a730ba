"""Score again, with a working referee, the games a match scored without its referee.

    python -m dosaku.tournament.rescore RECORD_DIR [RECORD_DIR ...] \
        --referee "gnugo --mode gtp --chinese-rules"

A match with --referee scores each game that ends by passes or by the move limit with the
referee's final_score. When the referee fails, the match scores the game itself under its rules
with every stone on the board counted alive, and says so in the game's `detail`: a game ended
with dead stones on the board can then go to the wrong side. This replays each such game's SGF
moves into a working referee, rewrites the game's record (score, result, winner, scorer, detail)
and its SGF's RE, and recomputes the summary in match.json. Games the referee scored, and games
that ended otherwise (resignation, time, an illegal move), are left as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from dosaku.tournament.controller import EngineError, GtpController, GtpFailure
from dosaku.tournament.match import RESULT_FILE
from dosaku.tournament.match_game import (
    MatchError,
    check_referee,
    color_letter,
    game_result,
    referee_final_score,
    score_winner,
)
from dosaku.tournament.match_report import tally, write_json
from dosaku.tournament.review import ReviewError, load_game


def rescore_record(record_dir: str, referee: str) -> tuple[int, int, dict]:
    """Rescore one match record in place; returns (games rescored, winners changed, summary)."""
    path = os.path.join(record_dir, RESULT_FILE)
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    cfg = data["config"]
    if not cfg.get("referee"):
        raise MatchError(f"{path}: the match had no referee; its games were meant to be "
                         f"scored by its rules")
    todo = [r for r in data["games"] if r.get("scorer") not in (None, "referee")]
    if not todo:
        return 0, 0, data["summary"]
    changed = 0
    ref = GtpController(referee.replace("{worker}", "0"))
    try:
        for r in todo:
            sgf_path = os.path.join(record_dir, r["sgf"])
            with open(sgf_path, "rb") as fh:
                game = load_game(fh.read())
            score = referee_final_score(ref, cfg["size"], cfg["komi"], game.moves)
            winner = score_winner(score)
            letter = color_letter(winner).upper() if winner else None
            engine = r["black"] if letter == "B" else r["white"] if letter == "W" else None
            changed += engine != r["winner_engine"]
            note = f"rescored by the referee (was {r['result']} by {r['scorer']} rules)"
            r.update(score=score, scorer="referee", winner=letter, winner_engine=engine,
                     result=game_result(winner, r["reason"], score),
                     detail=f"{r['detail']}; {note}" if r.get("detail") else note)
            game.sgf.get_root().set("RE", r["result"])
            with open(sgf_path, "wb") as fh:
                fh.write(game.sgf.serialise())
    finally:
        ref.close(grace=1.0)
    data["summary"] = tally(data["games"])
    write_json(path, data)
    return len(todo), changed, data["summary"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+", metavar="RECORD_DIR", help="a match's --out folder")
    ap.add_argument("--referee", required=True, help="GTP engine command with final_score")
    a = ap.parse_args(argv)
    try:
        check_referee(a.referee)
        for record in a.records:
            n, changed, s = rescore_record(record, a.referee)
            print(f"{record}: {n} games rescored, {changed} winners changed; now engine 1 "
                  f"{s['engine1_wins']}-{s['engine2_wins']}-{s['draws']}")
    except (MatchError, ReviewError, EngineError, GtpFailure, ValueError, OSError) as exc:
        print(f"rescore: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
