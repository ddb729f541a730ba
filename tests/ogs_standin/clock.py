"""OGS's game clock for one player: byo-yomi, Fischer and simple, as OGS keeps them.

The server charges each move the wall time since the player's turn began and fails a move made
past the clock. The JSON is the shape gtp2ogs reads (`clock.black_time` etc. in gamedata).
"""

from dataclasses import dataclass


@dataclass
class PlayerClock:
    """One player's clock under `time_control` (OGS's dict: system, main_time, ...)."""
    time_control: dict
    thinking_time: float = 0.0
    periods: int = 0
    timed_out: bool = False

    def __post_init__(self):
        tc = self.time_control
        if tc["system"] == "byoyomi":
            self.thinking_time, self.periods = float(tc["main_time"]), int(tc["periods"])
        elif tc["system"] == "fischer":
            self.thinking_time = float(tc["initial_time"])
        elif tc["system"] == "simple":
            self.thinking_time = float(tc["per_move"])
        else:
            raise ValueError(f"clock system {tc['system']!r} is not kept by the stand-in")

    def charge(self, used: float) -> bool:
        """Charge one move that took `used` seconds; False (and timed_out) if it came too late."""
        tc = self.time_control
        system = tc["system"]
        if system == "simple":
            self.timed_out = used > tc["per_move"]
        elif system == "fischer":
            left = self.thinking_time - used
            self.timed_out = left < 0
            self.thinking_time = min(left + tc["time_increment"], tc["max_time"])
        else:  # byoyomi: main time first, then each period over-run is lost
            over = used - self.thinking_time
            if over <= 0:
                self.thinking_time -= used
            else:
                self.thinking_time = 0.0
                period = float(tc["period_time"])
                lost = int(over // period)
                self.periods -= lost
                self.timed_out = self.periods <= 0  # the last period over-run too
        return not self.timed_out

    def left_at(self, used: float) -> float:
        """Seconds before the clock runs out, `used` seconds into a turn."""
        tc = self.time_control
        if tc["system"] == "simple":
            return tc["per_move"] - used
        if tc["system"] == "fischer":
            return self.thinking_time - used
        return self.thinking_time + self.periods * tc["period_time"] - used

    def json(self) -> dict:
        tc = self.time_control
        if tc["system"] == "byoyomi":
            return {"thinking_time": self.thinking_time, "periods": self.periods,
                    "period_time": tc["period_time"]}
        if tc["system"] == "fischer":
            return {"thinking_time": self.thinking_time, "skip_bonus": False}
        return self.thinking_time
