"""A scripted misbehaving GTP engine for the controller, regress and match tests.

usage: fake_gtp_engine.py MODE [N]   (genmoves are counted from the last clear_board)
  pass     genmove always answers pass
  illegal  the first genmove plays the first empty point, later ones repeat it (occupied)
  garbage  genmove answers an unreadable vertex
  crash    exits (code 3) at genmove number N+1 (default: the first), or at a `crash` command
  hang     sleeps at genmove number N+1
  resign   genmove answers resign
  picky    refuses every `play` with `? illegal move` (genmove passes)
  noisy    writes 1 MB to stderr at start and a junk line to stdout before each answer
  script   genmove answers the vertices of N (comma-separated) in turn, then passes
  slow     genmove sleeps N seconds (a float), then plays the first empty point
  slowstart  the first boardsize takes N seconds (a float) to answer; genmove passes
  prefer   genmove answers the first of the vertices N (comma-separated) not occupied, else
           passes
  judge    a judge for tournament.compare: kata-genmove_analyze and lz-genmove_analyze print
           one `info` line whose best move has the winrate (side to move) and score lead of
           N's entry VERTEX=WINRATE:LEAD for the last move played (default 0.5:0), then
           `play pass`; final_score answers N's entry final=RESULT (default 0)
Environment: FAKE_GTP_LOG, a file to which every command line received is appended;
FAKE_GTP_REFUSE, command names (comma-separated) answered as unknown.
"""

import os
import sys
import time

mode = sys.argv[1]
arg = sys.argv[2] if len(sys.argv) > 2 else "0"
after = int(arg) if mode in ("crash", "hang") else 0
script = arg.split(",") if mode in ("script", "prefer") else []
table = dict(item.split("=", 1) for item in arg.split(",") if "=" in item) \
    if mode == "judge" else {}
last_move = ""
ANALYSIS = ["kata-genmove_analyze", "lz-genmove_analyze"] if mode == "judge" else []
size = 19
stones: set[str] = set()
first_move = None
genmoves = 0
out = sys.stdout
transcript = open(os.environ["FAKE_GTP_LOG"], "a") if os.environ.get("FAKE_GTP_LOG") else None
refused = set(os.environ.get("FAKE_GTP_REFUSE", "").split(","))

if mode == "noisy":
    sys.stderr.write(("x" * 1023 + "\n") * 1024)
    sys.stderr.flush()


def analysis(lz: bool) -> str:
    """The judge's one `info` line and its move, for the position after `last_move`."""
    winrate, lead = (float(x) for x in table.get(last_move, "0.5:0").split(":"))
    shown = str(int(winrate * 10000)) if lz else repr(winrate)
    return (f"info move A1 visits 7 winrate {shown} scoreLead {lead!r} prior 0.5 order 0 pv A1 "
            f"info move B1 visits 1 winrate 0 prior 0.1 order 1 pv B1\nplay pass")


def answer(cid: str, text: str = "", ok: bool = True) -> None:
    if mode == "noisy":
        out.write("junk before the answer\n")
    # an empty answer is `=ID` with no space, as some engines write it (Dosaku and GNU Go write
    # `=ID `): the controller must read both
    out.write(f"{'=' if ok else '?'}{cid} {text}".rstrip() + "\n\n")
    out.flush()


def first_empty() -> str:
    for col in "ABCDEFGHJKLMNOPQRST"[:size]:
        for row in range(1, size + 1):
            if f"{col}{row}" not in stones:
                return f"{col}{row}"
    return "pass"


def genmove() -> str:
    global genmoves, first_move
    genmoves += 1
    misbehave = genmoves > after
    if mode == "crash" and misbehave:
        sys.exit(3)
    if mode == "hang" and misbehave:
        time.sleep(60)
    if mode == "resign":
        return "resign"
    if mode == "garbage":
        return "Z99"
    if mode == "script":
        return script[genmoves - 1] if genmoves <= len(script) else "pass"
    if mode == "prefer":
        return next((v for v in script if v.upper() not in stones), "pass")
    if mode == "slow":
        time.sleep(float(arg))
        move = first_empty()
        stones.add(move)
        return move
    if mode == "illegal":
        if first_move is None:
            first_move = first_empty()
            stones.add(first_move)
        return first_move
    return "pass"


for line in sys.stdin:
    parts = line.split("#")[0].split()
    if not parts:
        continue
    cid = ""
    if parts[0].isdigit():
        cid, parts = parts[0], parts[1:]
    cmd, args = parts[0], parts[1:]
    if transcript is not None:
        transcript.write(" ".join(parts) + "\n")
        transcript.flush()
    if cmd in refused:
        answer(cid, "unknown command", ok=False)
        continue
    if cmd == "quit":
        answer(cid)
        break
    if cmd == "crash":
        sys.exit(3)
    if cmd == "name":
        answer(cid, f"Fake {mode}")
    elif cmd == "protocol_version":
        answer(cid, "2")
    elif cmd == "list_commands":
        answer(cid, "\n".join(["boardsize", "clear_board", "genmove", "komi", "list_commands",
                               "name", "play", "protocol_version", "quit"] + ANALYSIS
                               + (["final_score"] if mode == "judge" else [])))
    elif cmd == "boardsize":
        if mode == "slowstart" and arg:
            time.sleep(float(arg))
            arg = ""
        size = int(args[0])
        answer(cid)
    elif cmd == "clear_board":
        stones.clear()
        first_move = None
        last_move = ""
        genmoves = 0
        answer(cid)
    elif cmd == "play" and mode == "picky":
        answer(cid, "illegal move", ok=False)
    elif cmd == "play":
        if args[1].upper() != "PASS":
            stones.add(args[1].upper())
        last_move = args[1].upper()
        answer(cid)
    elif cmd == "set_free_handicap":
        stones.update(v.upper() for v in args)
        answer(cid)
    elif cmd in ANALYSIS:
        answer(cid, "\n" + analysis(cmd.startswith("lz-")))
    elif cmd == "final_score" and mode == "judge":
        answer(cid, table.get("final", "0"))
    elif cmd == "genmove":
        answer(cid, genmove())
    elif cmd in ("komi", "time_settings", "kgs-time_settings", "time_left"):
        answer(cid)
    elif cmd == "echo":
        answer(cid, " ".join(args))
    else:
        answer(cid, "unknown command", ok=False)
