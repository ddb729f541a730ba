"""A plain-Python referee board for the match runner: legality, captures, Tromp-Taylor score.

Deliberately independent of the engine's numba board, so matches between our own engines are
refereed by separate code. Points are sgfmill-style (row, col) with row 0 at the bottom,
colours 'b'/'w', None is a pass. Ko is the simple-ko rule (the one every engine enforces);
long superko cycles end at the match's move limit.
"""

from __future__ import annotations

Point = tuple[int, int]


def other(colour: str) -> str:
    return "w" if colour == "b" else "b"


class RefBoard:
    """Stones on a size x size board plus the simple-ko point."""

    def __init__(self, size: int):
        self.size = size
        self.stones: dict[Point, str] = {}
        self.ko: Point | None = None

    def neighbours(self, p: Point):
        r, c = p
        for q in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= q[0] < self.size and 0 <= q[1] < self.size:
                yield q

    def group(self, p: Point) -> tuple[set[Point], set[Point]]:
        """The string containing p and its liberties."""
        colour = self.stones[p]
        stones, libs, todo = {p}, set(), [p]
        while todo:
            for q in self.neighbours(todo.pop()):
                owner = self.stones.get(q)
                if owner is None:
                    libs.add(q)
                elif owner == colour and q not in stones:
                    stones.add(q)
                    todo.append(q)
        return stones, libs

    def play(self, colour: str, p: Point | None) -> str | None:
        """Play a move; return None when legal (and applied) or the reason it is illegal."""
        if p is None:
            self.ko = None
            return None
        if not (0 <= p[0] < self.size and 0 <= p[1] < self.size):
            return "off the board"
        if p in self.stones:
            return "occupied"
        if p == self.ko:
            return "ko"
        self.stones[p] = colour
        captured: set[Point] = set()
        for q in self.neighbours(p):
            if self.stones.get(q) == other(colour):
                stones, libs = self.group(q)
                if not libs:
                    captured |= stones
        for q in captured:
            del self.stones[q]
        own, libs = self.group(p)
        if not libs:
            del self.stones[p]
            return "suicide"
        single_capture = len(captured) == 1 and len(own) == 1 and len(libs) == 1
        self.ko = next(iter(captured)) if single_capture else None
        return None

    def area_score(self, komi: float) -> float:
        """Tromp-Taylor: stones plus empty regions reaching only one colour; black minus white
        minus komi."""
        score = {"b": 0, "w": 0}
        for colour in self.stones.values():
            score[colour] += 1
        seen: set[Point] = set()
        for r in range(self.size):
            for c in range(self.size):
                p = (r, c)
                if p in self.stones or p in seen:
                    continue
                region, borders, todo = {p}, set(), [p]
                while todo:
                    for q in self.neighbours(todo.pop()):
                        owner = self.stones.get(q)
                        if owner is not None:
                            borders.add(owner)
                        elif q not in region:
                            region.add(q)
                            todo.append(q)
                seen |= region
                if len(borders) == 1:
                    score[borders.pop()] += len(region)
        return score["b"] - score["w"] - komi


def tromp_taylor_score(size: int, moves: list[tuple[str, Point | None]], komi: float) -> float:
    """Replay `moves` and return the area score (black minus white, komi included).

    The default scorer of gtp.match; any callable with this signature can replace it.
    """
    board = RefBoard(size)
    for colour, p in moves:
        reason = board.play(colour, p)
        if reason is not None:
            raise ValueError(f"illegal move {colour} {p}: {reason}")
    return board.area_score(komi)
