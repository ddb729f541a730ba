"""GameState: the authoritative record of one game.

It owns the board, the move history (with a board snapshot before every move, so undo is exact),
the position-hash history that superko is checked against, komi, rules and handicap stones.
The search tree is only a cache of it.
"""

from collections import Counter

import numpy as np

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, MOVE_OK, MOVE_SUPERKO, PASS_POINT, WHITE, opponent
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.rulesets import PRESETS, Rules, score_position


def board_with_stones(width: int, height: int, black, white) -> np.ndarray | None:
    """A board holding exactly these stones (no ko point); None for repeated points or a
    chain without liberties."""
    points = list(black) + list(white)
    if len(set(points)) != len(points) or PASS_POINT in points:
        return None
    board = B.new_board(width, height)
    for color, group in ((BLACK, black), (WHITE, white)):
        for p in group:
            if B.play(board, p, color, False) != MOVE_OK:
                return None
    col = board[B.ROW_COLOR]
    if any(col[p] != BLACK for p in black) or any(col[p] != WHITE for p in white):
        return None  # a stone was captured: some chain had no liberty
    return board


class GameState:
    """One game: board, history, komi, rules, handicap; every change goes through here."""

    def __init__(self, width: int = 19, height: int = 19, komi: float = 7.5,
                 rules: Rules = PRESETS["chinese"]):
        self.width = width
        self.height = height
        self.komi = komi
        self.rules = rules
        self.clear()

    # ---- set-up -------------------------------------------------------------------------
    def clear(self) -> None:
        """Empty board, no history, Black to move (size, komi and rules are kept)."""
        self._start(B.new_board(self.width, self.height), BLACK)

    def _start(self, board: np.ndarray, to_move: int) -> None:
        """Begin the record at `board` with `to_move` to play: no moves, no handicap stones,
        this position the only one in the superko history."""
        self.board = board
        self.to_move = to_move
        self.moves: list[tuple[int, int]] = []  # (colour, point) after the set-up stones
        self._snapshots: list[np.ndarray] = []  # board before each move
        self.handicap_points: list[int] = []
        self._keys: list[tuple[int, int]] = []  # (stone hash, next player) after each move
        self._seen_positions: Counter = Counter()  # stone hash -> occurrences in _keys
        self._seen_situations: Counter = Counter()  # (stone hash, next player) -> occurrences
        self._push_key(self.stone_hash, to_move)

    def _push_key(self, stones: int, next_player: int) -> None:
        self._keys.append((stones, next_player))
        self._seen_positions[stones] += 1
        self._seen_situations[stones, next_player] += 1

    def _pop_key(self) -> None:
        stones, next_player = self._keys.pop()
        self._seen_positions[stones] -= 1
        self._seen_situations[stones, next_player] -= 1

    def resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.clear()

    def place_handicap(self, points: list[int]) -> bool:
        """Put black handicap stones on an empty board with no history; White moves next."""
        if self.moves or self.handicap_points or int(self.board[B.ROW_HEADER, B.H_NUM_EMPTY]) \
                != self.width * self.height:
            return False
        if len(set(points)) != len(points) or PASS_POINT in points:
            return False
        trial = self.board.copy()
        for p in points:
            if B.play(trial, p, BLACK, False) != MOVE_OK:
                return False
        self._start(trial, WHITE)
        self.handicap_points = list(points)
        return True

    def set_position(self, black: list[int], white: list[int], to_move: int) -> bool:
        """Replace the game by a set-up position (SGF AB/AW/PL): these stones, `to_move` to play,
        no history (undo cannot remove them), the position itself the start of the superko
        history. False, changing nothing, for repeated points or a chain without liberties."""
        trial = board_with_stones(self.width, self.height, black, white)
        if trial is None:
            return False
        self._start(trial, to_move)
        return True

    # ---- queries -------------------------------------------------------------------------
    @property
    def stone_hash(self) -> int:
        return int(self.board[B.ROW_HEADER, B.H_HASH])

    @property
    def handicap(self) -> int:
        """Handicap stones, counted as KataGo counts them (computeNumHandicapStones).

        The black stones of the starting position (handicap or set-up stones; none if it
        holds a white stone) plus Black's non-pass moves before White's first real move,
        where a lone white pass between them is skipped: servers and GUIs often send
        handicap as consecutive black moves. Two white moves in a row after the black run
        mean a set-up position, so those black moves do not count. One black stone is an
        ordinary game (0).
        """
        return self._handicap_run()[0]

    @property
    def moves_after_handicap(self) -> int:
        """Moves played since the handicap stones (handicap given as moves excluded)."""
        return len(self.moves) - self._handicap_run()[1]

    def _handicap_run(self) -> tuple[int, int]:
        """(handicap stones, how many of the first moves placed them)."""
        start = self._snapshots[0] if self._snapshots else self.board
        col = start[B.ROW_COLOR]
        if np.any(col == WHITE):
            return 0, 0
        extra = 0
        used = 0
        moves = self.moves
        for i, (color, point) in enumerate(moves):
            if color != BLACK:
                if i + 1 < len(moves) and moves[i + 1][0] != BLACK:
                    extra = 0  # a set-up position, not handicap
                elif point == PASS_POINT:
                    continue
                break
            if point != PASS_POINT:
                extra += 1
                used = i + 1
        stones = int(np.count_nonzero(col == BLACK)) + extra
        if stones < 2:
            return 0, 0
        return stones, used if extra else 0

    def prisoners(self, color: int) -> int:
        return int(self.board[B.ROW_HEADER, B.H_PRISONERS + color])

    def last_passes(self) -> int:
        """How many of the last moves in a row were passes."""
        n = 0
        for _, point in reversed(self.moves):
            if point != PASS_POINT:
                break
            n += 1
        return n

    def is_over(self) -> bool:
        return self.last_passes() >= 2

    def _repeats(self, stones: int, next_player: int) -> bool:
        """Whether the position (with next_player to move, for situational superko) occurred."""
        if self.rules.ko == "situational":
            return self._seen_situations[stones, next_player] > 0
        return self._seen_positions[stones] > 0

    def move_error(self, color: int, point: int) -> int:
        """MOVE_OK, a board.MOVE_* reason, or MOVE_SUPERKO."""
        err = B.move_error(self.board, point, color, self.rules.suicide)
        if err != MOVE_OK or point == PASS_POINT or self.rules.ko == "simple":
            return err
        trial = self.board.copy()
        B.play_unchecked(trial, point, color)
        if self._repeats(int(trial[B.ROW_HEADER, B.H_HASH]), opponent(color)):
            return MOVE_SUPERKO
        return MOVE_OK

    def legal_mask(self, color: int) -> np.ndarray:
        """Legal actions (bool, W*H + 1, pass last) for colour, superko included."""
        mask = np.zeros(self.width * self.height + 1, dtype=np.bool_)
        B.legal_mask(self.board, color, self.rules.suicide, mask)
        if self.rules.ko != "simple":
            trial = np.empty_like(self.board)
            for a in np.flatnonzero(mask[:-1]):
                p = point_from_action(a, self.width, self.height)
                B.copy_board(trial, self.board)
                B.play_unchecked(trial, p, color)
                if self._repeats(int(trial[B.ROW_HEADER, B.H_HASH]), opponent(color)):
                    mask[a] = False
        return mask

    # ---- changes -------------------------------------------------------------------------
    def play(self, color: int, point: int) -> int:
        """Play a move (any colour: set-up stones may come as consecutive moves).

        Returns MOVE_OK or the reason the move is illegal; nothing changes then.
        """
        err = self.move_error(color, point)
        if err != MOVE_OK:
            return err
        self._snapshots.append(self.board.copy())
        B.play_unchecked(self.board, point, color)
        self.moves.append((color, point))
        self.to_move = opponent(color)
        self._push_key(self.stone_hash, self.to_move)
        return MOVE_OK

    def undo(self) -> bool:
        """Take back the last move exactly; False if there is none."""
        if not self.moves:
            return False
        self.board = self._snapshots.pop()
        color, _ = self.moves.pop()
        self._pop_key()
        self.to_move = color
        return True

    def board_before(self, plies: int) -> np.ndarray:
        """The board `plies` moves ago (the oldest known board if the history is shorter)."""
        if plies <= 0:
            return self.board
        if plies > len(self._snapshots):
            return self._snapshots[0] if self._snapshots else self.board
        return self._snapshots[-plies]

    def score(self, dead: np.ndarray | None = None) -> float:
        """Black minus White under the rules (komi, handicap bonus), dead stones removed."""
        return score_position(self.board, self.rules, self.komi, self.handicap, dead)
