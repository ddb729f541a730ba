"""The bot's opponent on the stand-in: GNU Go over GTP, scripted to pass or resign on cue.

GNU Go also referees: it replays every move, so after two passes it counts the game
(final_score) for the stand-in, as OGS counts after its stone-removal phase.
"""

import subprocess

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


class GnuGo:
    """A GNU Go process at level 0 playing `color`; from move number `pass_from` (1-based,
    the game's) it passes; `resign_at`: the move number after which it resigns while the bot
    thinks (the stand-in does that)."""

    def __init__(self, command: str, size: int, komi: float, color: str,
                 pass_from: int | None = None, resign_at: int | None = None):
        self.size, self.color = size, color
        self.pass_from, self.resign_at = pass_from, resign_at
        self.proc = subprocess.Popen([*command.split(), "--mode", "gtp", "--level", "0",
                                      "--never-resign"],  # it resigns only on cue
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for cmd in (f"boardsize {size}", "clear_board", f"komi {komi}"):
            self.gtp(cmd)

    def gtp(self, cmd: str) -> str:
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"GNU Go ended during {cmd!r}")
            if line.strip() == "" and lines:
                break
            if line.strip():
                lines.append(line.strip())
        answer = "\n".join(lines)
        if not answer.startswith("="):
            raise RuntimeError(f"GNU Go refused {cmd!r}: {answer}")
        return answer[1:].strip()

    def vertex(self, xy) -> str:
        if xy is None:
            return "pass"
        x, y = xy
        return f"{COLUMNS[x]}{self.size - y}"

    def point(self, vertex: str):
        v = vertex.strip().upper()
        if v == "PASS":
            return None
        return COLUMNS.index(v[0]), self.size - int(v[1:])

    def tell(self, color: str, xy) -> None:
        """A move made on the stand-in (either player's)."""
        self.gtp(f"play {color} {self.vertex(xy)}")

    def reply(self, move_number: int):
        """This player's move number `move_number`: None (pass) or (x, y)."""
        if self.pass_from is not None and move_number >= self.pass_from:
            self.gtp(f"play {self.color} pass")
            return None
        return self.point(self.gtp(f"genmove {self.color}"))

    def final_score(self) -> float:
        """Black minus White as GNU Go counts the final position (dead stones removed)."""
        answer = self.gtp("final_score")
        if answer == "0":
            return 0.0
        value = float(answer[2:])
        return value if answer.startswith("B") else -value

    def close(self) -> None:
        try:
            self.gtp("quit")
        except (RuntimeError, OSError):
            pass
        self.proc.kill()
        self.proc.wait()
