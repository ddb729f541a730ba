"""The game clock (`Clock`) and the time budget of one move from its state (seconds).

Clock kinds, as GTP describes them: absolute (main time only), Canadian byo-yomi (after main
time, `byo_stones` moves in every `byo_time` period), Japanese byo-yomi (`byo_periods`
periods of `byo_time` each, one move per period) and Fischer (main time plus `increment`
seconds after every move, optionally capped: the clock never exceeds `main_cap` and no move may
take longer than `max_per_move`; negative = no cap, as in KataGo's fischer-capped).
`time_left`/`stones_left` is what the controller reported: stones_left == 0 means we are still
in main time; in byo-yomi it is the stones left in the Canadian period, or the periods left for
Japanese byo-yomi.
"""

from dataclasses import dataclass


@dataclass
class TimeSettings:
    """The clock as GTP told it (seconds); main_time < 0 means no time limit."""
    main_time: float = -1.0
    byo_time: float = 0.0
    byo_stones: int = 0
    byo_periods: int = 0  # >0 for Japanese byo-yomi (kgs-time_settings byoyomi)
    increment: float = 0.0  # >0 for Fischer: seconds added after every move
    main_time_cap: float = -1.0  # fischer-capped: the clock never exceeds this (<0 = no cap)
    max_per_move: float = -1.0  # fischer-capped: longest time one move may take (<0 = none)


class Clock:
    """Both players' clocks: the settings, and (time_left, stones_left) per colour as the
    controller reported them or as our own bookkeeping after each move has them."""

    def __init__(self):
        self.settings = TimeSettings()
        self.left: dict[int, tuple[float, int]] = {}
        self.reported: dict[int, tuple[float, int]] = {}  # colour -> (when, moves played then)

    def set(self, settings: TimeSettings) -> None:
        """A new clock for both players (forgets any time_left reports)."""
        self.settings = settings
        self.left.clear()
        self.reported.clear()

    def report(self, color: int, seconds: float, stones: int, at: float | None = None,
               moves_played: int = 0) -> None:
        """The controller's report of colour's clock (GTP time_left), read at monotonic time
        `at` with `moves_played` moves on the board; colour's clock has run since then."""
        self.left[color] = (seconds, stones)
        if at is None:
            self.reported.pop(color, None)
        else:
            self.reported[color] = (at, moves_played)

    def budget(self, color: int, board_points: int, moves_played: int,
               lag_buffer: float, now: float | None = None) -> float | None:
        """Seconds for colour's move now, or None when the game is untimed.

        `now` (monotonic): the time since colour's last time_left report, if no move was
        played since, is gone from its clock already (an engine still starting when the
        report came, a slow command in between).
        """
        ts = self.settings
        if ts.main_time < 0 or (ts.main_time == 0 and ts.byo_time > 0 and ts.byo_stones == 0
                                and ts.byo_periods == 0):
            return None
        left, stones = self.left.get(color, (ts.main_time, 0))
        at, moves_then = self.reported.get(color, (None, -1))
        if now is not None and at is not None and moves_then == moves_played and now > at:
            left, stones = after_wait(ts, left, stones, now - at)
        return move_budget(ts.main_time, ts.byo_time, ts.byo_stones, ts.byo_periods, left,
                           stones, board_points, moves_played, lag_buffer, ts.increment,
                           ts.max_per_move)

    def keeps_saved_time(self, color: int) -> bool:
        """Whether time colour's move now leaves unused stays on its clock for later moves
        (saved_time_carries_over; the game must be timed)."""
        ts = self.settings
        left, stones = self.left.get(color, (ts.main_time, 0))
        return saved_time_carries_over(ts.byo_stones, ts.byo_periods, left, stones,
                                       ts.increment)

    def record_move(self, color: int, used: float) -> None:
        """Our own bookkeeping of colour's clock after a move that took `used` seconds (a
        controller's time_left report overrides it)."""
        ts = self.settings
        if ts.main_time < 0:
            return
        left, stones = self.left.get(color, (ts.main_time, 0))
        self.reported.pop(color, None)
        self.left[color] = spend(left, ts.byo_time, ts.byo_stones, ts.byo_periods, stones, used,
                                 ts.increment, ts.main_time_cap)



def after_wait(ts: TimeSettings, left: float, stones: int, waited: float) -> tuple[float, int]:
    """Clock state (time_left, stones_left) after `waited` seconds of the mover's own time
    with no move made: main time runs down into the periods (Japanese: each one used up is
    lost; Canadian: the first period starts with all its stones)."""
    t = left - waited
    if t >= 0:
        return t, stones
    if stones == 0 and ts.byo_time > 0 and ts.byo_periods > 0:  # main time out: periods
        over = -t
        return ts.byo_time - over % ts.byo_time, max(ts.byo_periods - int(over // ts.byo_time), 0)
    if stones == 0 and ts.byo_time > 0 and ts.byo_stones > 0:
        return max(ts.byo_time + t, 0.0), ts.byo_stones
    if stones > 0 and ts.byo_periods > 0 and ts.byo_time > 0:  # inside the periods already
        over = -t
        return ts.byo_time - over % ts.byo_time, max(stones - 1 - int(over // ts.byo_time), 0)
    return 0.0, stones


def expected_moves_left(board_points: int, moves_played: int) -> float:
    """Our own moves still to come: a game lasts about 0.8 moves per point, half are ours,
    and we never plan for fewer than a fifth of the board (games may run long)."""
    remaining = 0.8 * board_points - moves_played
    return max(remaining, 0.2 * board_points) / 2


def move_budget(main_time: float, byo_time: float, byo_stones: int, byo_periods: int,
                time_left: float, stones_left: int, board_points: int, moves_played: int,
                lag_buffer: float = 0.5, increment: float = 0.0,
                max_per_move: float = -1.0) -> float | None:
    """Seconds to think on this move, or None when the game is not timed (main_time < 0)."""
    if main_time < 0:
        return None
    if increment > 0:  # Fischer: the increment comes back after every move, so spend it too
        budget = _safe(time_left / expected_moves_left(board_points, moves_played) + increment,
                       time_left, lag_buffer)
        if max_per_move >= 0:
            budget = min(budget, max(0.05, max_per_move - lag_buffer))
        return budget
    if byo_periods > 0:  # Japanese byo-yomi
        period = byo_time
        if stones_left == 0:  # main time: spread it, the periods stay in reserve
            return _safe(time_left / expected_moves_left(board_points, moves_played) + period,
                         time_left + period, lag_buffer)
        return _safe(period, time_left, lag_buffer)
    if byo_stones > 0 and byo_time > 0:  # Canadian
        if stones_left == 0:
            per_stone = byo_time / byo_stones
            return _safe(time_left / expected_moves_left(board_points, moves_played) + per_stone,
                         time_left + byo_time, lag_buffer)
        return _safe(time_left / stones_left, time_left, lag_buffer)
    # absolute time: everything must last the game
    return _safe(time_left / expected_moves_left(board_points, moves_played), time_left,
                 lag_buffer)


def saved_time_carries_over(byo_stones: int, byo_periods: int, time_left: float,
                            stones_left: int, increment: float = 0.0) -> bool:
    """Whether time this move leaves unused stays on the clock for later moves.

    It does in main time, under Fischer and inside a Canadian period with stones still to
    play; it does not on the last stone of a Canadian period nor in a Japanese period (both
    reset), so a search there should use all its budget (KataGo's roundUpTimeLimitIfNeeded).
    Same arguments as move_budget.
    """
    if increment > 0:
        return True
    if stones_left == 0 and time_left > 0:  # main time
        return True
    if byo_periods > 0:
        return False
    if byo_stones > 0:  # Canadian: a first period starts with byo_stones to play
        return (stones_left if stones_left > 0 else byo_stones) > 1
    return True  # absolute time: whatever is left is for later


def _safe(budget: float, available: float, lag_buffer: float) -> float:
    """Keep the lag buffer back from what is available on the clock; never below 0.05 s."""
    return max(0.05, min(budget, available - lag_buffer))


def spend(main_left: float, byo_time: float, byo_stones: int, byo_periods: int,
          stones_left: int, used: float, increment: float = 0.0,
          main_cap: float = -1.0) -> tuple[float, int]:
    """Clock state (time_left, stones_left) after using `used` seconds on one move.

    Our own bookkeeping when the controller sends no time_left; the same conventions as
    move_budget's arguments.
    """
    t = main_left - used
    if increment > 0:  # Fischer: the increment is added after the move, up to the cap
        t += increment
        return (min(t, main_cap) if main_cap >= 0 else t), 0
    if stones_left == 0:
        if t >= 0:
            return t, 0
        if byo_periods > 0:  # main time ran out: enter the periods
            over = -t
            periods = byo_periods - int(over // byo_time) if byo_time > 0 else 0
            return byo_time, max(periods, 0)
        if byo_stones > 0:  # the overrun came out of the first period and counts as a stone
            if byo_stones == 1:
                return byo_time, 1
            return byo_time + t, byo_stones - 1
        return t, 0
    if byo_periods > 0:
        if t >= 0:
            return byo_time, stones_left  # the period resets after a move in time
        lost = int((-t) // byo_time) + 1 if byo_time > 0 else stones_left
        return byo_time, max(stones_left - lost, 0)
    if stones_left <= 1:
        return byo_time, byo_stones  # period done: a new one starts
    return t, stones_left - 1
