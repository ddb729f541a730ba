"""Game clocks as Go servers keep them, for matches played under a real schedule.

A ClockSpec is written the way `kgs-time_settings` takes it: `absolute MAIN`,
`canadian MAIN PERIOD STONES` (after the main time, STONES moves in every PERIOD seconds) or
`byoyomi MAIN PERIOD PERIODS` (Japanese: each move may take PERIOD seconds; a longer move uses up
one period per PERIOD started beyond the first, the last one lost loses the game), or
`fischer MAIN INCREMENT MAX` (OGS's Fischer clock: INCREMENT seconds added after each move, the
clock never above MAX), which gtp2ogs announces with `kata-time_settings fischer-capped` to
engines that list it and as a Canadian clock of one stone per INCREMENT to the others. A PlayerClock
keeps one side's time, says what `time_left` reports before a move (the period and the periods
left in Japanese byo-yomi, as kgsGtp does; the period time and the stones left in Canadian),
how long the next move may take, and charges each move.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

KINDS = {"absolute": 1, "canadian": 3, "byoyomi": 3, "fischer": 3}  # kind -> its arguments
# how the clock is announced to engines, each command falling back to the next when refused
COMMANDS = ("kata-time_settings", "kgs-time_settings", "time_settings")


@dataclass(frozen=True)
class ClockSpec:
    kind: str
    main: float
    period: float = 0.0
    count: int = 0  # Canadian: stones per period; Japanese byo-yomi: number of periods
    cap: float = 0.0  # Fischer: the most the clock may hold (period is the increment)

    @classmethod
    def parse(cls, text: str) -> "ClockSpec":
        """`absolute 300`, `canadian 10 10 10`, `byoyomi 30 2 3`, `fischer 60 5 120`;
        ValueError otherwise."""
        words = text.split()
        if not words or words[0] not in KINDS or len(words) != 1 + KINDS[words[0]]:
            raise ValueError(f"clock {text!r}: expected absolute MAIN, canadian MAIN PERIOD "
                             "STONES, byoyomi MAIN PERIOD PERIODS or fischer MAIN INCREMENT MAX")
        kind, main = words[0], float(words[1])
        if kind == "absolute":
            spec = cls(kind, main)
        elif kind == "fischer":
            spec = cls(kind, main, float(words[2]), cap=float(words[3]))
            if not (spec.period > 0 and spec.cap >= main):
                raise ValueError(f"clock {text!r}: the increment must be positive and MAX at "
                                 "least MAIN")
        else:
            spec = cls(kind, main, float(words[2]), int(words[3]))
            if spec.period <= 0 or spec.count < 1:
                raise ValueError(f"clock {text!r}: the period and its count must be positive")
        if not math.isfinite(main) or main < 0 or (kind == "absolute" and main <= 0):
            raise ValueError(f"clock {text!r}: bad main time")
        return spec

    def __str__(self) -> str:
        if self.kind == "absolute":
            return f"absolute {self.main:g}"
        if self.kind == "fischer":
            return f"fischer {self.main:g} {self.period:g} {self.cap:g}"
        return f"{self.kind} {self.main:g} {self.period:g} {self.count}"

    def settings_command(self, command: str) -> str:
        """The clock announced with `command` as gtp2ogs and kgsGtp announce it:
        `kata-time_settings` (Fischer only, as `fischer-capped` with no limit a move),
        `kgs-time_settings`, or plain `time_settings`. Japanese byo-yomi becomes one stone per
        period under time_settings, and Fischer one stone per increment after the main time
        less one increment under both (the most they can say)."""
        if command not in COMMANDS:
            raise ValueError(f"unknown clock command {command!r}")
        if command == "kata-time_settings":
            if self.kind != "fischer":
                return f"kata-time_settings {self}"
            return (f"kata-time_settings fischer-capped {self.main:g} {self.period:g} "
                    f"{self.cap:g} -1")
        if self.kind == "fischer":
            main, period = max(0.0, self.main - self.period), self.period
            if command == "kgs-time_settings":
                return f"kgs-time_settings canadian {main:g} {period:g} 1"
            return f"time_settings {int(main)} {int(math.ceil(period))} 1"
        if command == "kgs-time_settings":
            return f"kgs-time_settings {self}"
        secs = [int(math.ceil(self.main)), int(math.ceil(self.period))]
        stones = {"absolute": 0, "canadian": self.count, "byoyomi": 1}[self.kind]
        return f"time_settings {secs[0]} {secs[1]} {stones}"


class PlayerClock:
    """One side's clock under a ClockSpec."""

    def __init__(self, spec: ClockSpec):
        self.spec = spec
        self.main = spec.main
        self.period = spec.period  # Canadian: time left in the current period
        self.count = spec.count  # Canadian: stones left in it; Japanese: periods left

    @property
    def in_main_time(self) -> bool:
        return self.main > 0

    def time_left(self) -> tuple[int, int]:
        """(seconds, stones) for `time_left`: whole seconds as servers send them; stones 0 in
        main time."""
        if self.in_main_time or self.spec.kind in ("absolute", "fischer"):
            return int(self.main), 0
        if self.spec.kind == "canadian":
            return int(self.period), self.count
        return int(self.spec.period), self.count

    def allowance(self) -> float:
        """Seconds the next move may take without losing on time."""
        spec = self.spec
        if spec.kind in ("absolute", "fischer"):
            return self.main
        if spec.kind == "canadian":
            return self.main + (spec.period if self.in_main_time else self.period)
        return self.main + self.count * spec.period

    def spend(self, seconds: float) -> bool:
        """Charge a move that took `seconds`; False when it lost on time."""
        if seconds > self.allowance():
            self.main, self.count = 0.0, 0
            return False
        if self.spec.kind == "fischer":
            self.main = min(self.main - seconds + self.spec.period, self.spec.cap)
            return True
        from_main = min(seconds, self.main)
        self.main -= from_main
        over = seconds - from_main
        if self.in_main_time or (over <= 0 and from_main > 0):
            return True  # the move ended in main time (or exactly at its end)
        spec = self.spec
        if spec.kind == "canadian":
            self.period -= over
            self.count -= 1
            if self.count == 0:
                self.period, self.count = spec.period, spec.count
        elif spec.kind == "byoyomi":
            self.count -= int(over // spec.period)  # periods used up by this move
        return True
