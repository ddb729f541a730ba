"""A slow, plainly written rules of Go to test the numba board against.

Nothing here imports engine code except the coordinate convention (x = column from the left,
y = row from the top, 0-based), so a bug in engine/rules/board.py cannot hide in the reference.
Chains and liberties are found by flood fill on a 2-D list every time they are needed.

Rules implemented:
- captures of opponent chains left without liberties, then suicide of the own chain (legal
  only with `suicide=True`; the opponent is credited with the suicided stones);
- simple ko: after a move that captured exactly one stone with a lone stone now in atari, the
  opponent may not play on the captured point in the very next move;
- positional / situational superko against every earlier whole-board position (situational:
  the same position with the same player to move); the simple-ko ban applies under every rule;
- Tromp-Taylor area score and territory score with a given set of dead stones.
"""

EMPTY, BLACK, WHITE = 0, 1, 2

# Reasons a move is refused (names only; tests map them to the engine's codes).
OK, OCCUPIED, OFF_BOARD, KO, SUICIDE, SUPERKO = "ok", "occupied", "off", "ko", "suicide", "superko"


def other(color):
    return BLACK if color == WHITE else WHITE


class RefBoard:
    """Stones on a width x height grid: grid[y][x] in {EMPTY, BLACK, WHITE}."""

    def __init__(self, width, height, _adjacent=None):
        self.width = width
        self.height = height
        self.grid = [[EMPTY] * width for _ in range(height)]
        if _adjacent is None:
            _adjacent = {}
            for y in range(height):
                for x in range(width):
                    _adjacent[(x, y)] = [(x + dx, y + dy)
                                         for dx, dy in ((0, -1), (-1, 0), (1, 0), (0, 1))
                                         if self.on_board(x + dx, y + dy)]
        self.adjacent = _adjacent  # (x, y) -> on-board neighbours, shared by copies

    def copy(self):
        b = RefBoard(self.width, self.height, self.adjacent)
        b.grid = [row[:] for row in self.grid]
        return b

    def on_board(self, x, y):
        return 0 <= x < self.width and 0 <= y < self.height

    def neighbours(self, x, y):
        return self.adjacent[(x, y)]

    def get(self, x, y):
        return self.grid[y][x]

    def points(self):
        return [(x, y) for y in range(self.height) for x in range(self.width)]

    def chain(self, x, y):
        """The set of stones connected to the stone at (x, y)."""
        color = self.get(x, y)
        seen = {(x, y)}
        todo = [(x, y)]
        while todo:
            p = todo.pop()
            for q in self.neighbours(*p):
                if q not in seen and self.get(*q) == color:
                    seen.add(q)
                    todo.append(q)
        return seen

    def liberties(self, stones):
        """The set of empty points next to any stone of `stones`."""
        libs = set()
        for p in stones:
            for q in self.neighbours(*p):
                if self.get(*q) == EMPTY:
                    libs.add(q)
        return libs

    def chain_map(self):
        """Every stone -> (its chain as a frozenset, the chain's liberties as a frozenset)."""
        result = {}
        for (x, y) in self.points():
            if self.get(x, y) != EMPTY and (x, y) not in result:
                stones = frozenset(self.chain(x, y))
                libs = frozenset(self.liberties(stones))
                for p in stones:
                    result[p] = (stones, libs)
        return result

    def key(self):
        """The whole position as a hashable value."""
        return tuple(tuple(row) for row in self.grid)

    def place(self, color, x, y):
        """Put a stone down and resolve captures, then suicide.

        Returns (captured opponent stones as a set, own stones removed by suicide as a set).
        """
        self.grid[y][x] = color
        captured = set()
        for q in self.neighbours(x, y):
            if self.get(*q) == other(color) and q not in captured:
                group = self.chain(*q)
                if not self.liberties(group):
                    captured |= group
        for (cx, cy) in captured:
            self.grid[cy][cx] = EMPTY
        suicided = set()
        own = self.chain(x, y)
        if not self.liberties(own):
            suicided = own
            for (sx, sy) in own:
                self.grid[sy][sx] = EMPTY
        return captured, suicided


class RefGame:
    """A game record: board, prisoners, ko, position history; undo by restoring copies."""

    def __init__(self, width, height, ko_rule="simple", suicide=False):
        self.board = RefBoard(width, height)
        self.ko_rule = ko_rule
        self.suicide = suicide
        self.prisoners = {BLACK: 0, WHITE: 0}
        self.ko = None  # (point, colour that may not play there) or None
        self.history = [(self.board.key(), BLACK)]  # (position, player to move next)
        self.saved = []

    # ---- legality ---------------------------------------------------------------------------
    def error(self, color, move):
        """Reason the move (None = pass) is illegal under the game's rules, or OK."""
        if move is None:
            return OK
        x, y = move
        if not self.board.on_board(x, y):
            return OFF_BOARD
        if self.board.get(x, y) != EMPTY:
            return OCCUPIED
        if self.ko == ((x, y), color):
            return KO
        trial = self.board.copy()
        captured, suicided = trial.place(color, x, y)
        if suicided and not self.suicide:
            return SUICIDE
        if self.ko_rule != "simple":
            key = trial.key()
            for position, next_player in self.history:
                if position == key and (self.ko_rule == "positional"
                                        or next_player == other(color)):
                    return SUPERKO
        return OK

    def errors(self, color):
        """{point: reason} for every board point (pass is always legal)."""
        return {p: self.error(color, p) for p in self.board.points()}

    def legal_moves(self, color, superko=True):
        """All legal board points (not pass) for colour; superko=False ignores superko."""
        allowed = (OK,) if superko else (OK, SUPERKO)
        return [p for p, e in self.errors(color).items() if e in allowed]

    # ---- changes ----------------------------------------------------------------------------
    def play(self, color, move):
        """Play a legal move (None = pass). Returns the number of opponent stones captured."""
        assert self.error(color, move) == OK
        self.saved.append((self.board.copy(), dict(self.prisoners), self.ko, len(self.history)))
        self.ko = None
        captured = set()
        if move is not None:
            x, y = move
            captured, suicided = self.board.place(color, x, y)
            self.prisoners[color] += len(captured)
            self.prisoners[other(color)] += len(suicided)
            if len(captured) == 1:
                own = self.board.chain(x, y)
                if len(own) == 1 and len(self.board.liberties(own)) == 1:
                    self.ko = (next(iter(captured)), other(color))
        self.history.append((self.board.key(), other(color)))
        return len(captured)

    def undo(self):
        board, prisoners, ko, n = self.saved.pop()
        self.board, self.prisoners, self.ko = board, prisoners, ko
        del self.history[n:]

    # ---- scoring ----------------------------------------------------------------------------
    def regions(self, removed=frozenset()):
        """Empty regions (stones in `removed` count as empty): list of (points, colours reached)."""
        b = self.board

        def color_at(p):
            return EMPTY if p in removed else b.get(*p)

        seen = set()
        result = []
        for p in b.points():
            if color_at(p) != EMPTY or p in seen:
                continue
            region = {p}
            reached = set()
            todo = [p]
            seen.add(p)
            while todo:
                s = todo.pop()
                for q in b.neighbours(*s):
                    c = color_at(q)
                    if c == EMPTY:
                        if q not in seen:
                            seen.add(q)
                            region.add(q)
                            todo.append(q)
                    else:
                        reached.add(c)
            result.append((region, reached))
        return result

    def area(self, removed=frozenset()):
        """(black, white) Tromp-Taylor area: stones plus empty regions reaching one colour only."""
        counts = {BLACK: 0, WHITE: 0}
        for p in self.board.points():
            c = self.board.get(*p)
            if c != EMPTY and p not in removed:
                counts[c] += 1
        for region, reached in self.regions(removed):
            if len(reached) == 1:
                counts[next(iter(reached))] += len(region)
        return counts[BLACK], counts[WHITE]

    def territory_score(self, dead, komi):
        """Black minus White: territory (dead stones' points included) + prisoners - komi."""
        terr = {BLACK: 0, WHITE: 0}
        for region, reached in self.regions(frozenset(dead)):
            if len(reached) == 1:
                terr[next(iter(reached))] += len(region)
        caught = {BLACK: self.prisoners[BLACK], WHITE: self.prisoners[WHITE]}
        for p in dead:
            c = self.board.get(*p)
            if c != EMPTY:
                caught[other(c)] += 1
        return terr[BLACK] + caught[BLACK] - terr[WHITE] - caught[WHITE] - komi

    def area_score(self, komi, dead=()):
        black, white = self.area(frozenset(dead))
        return black - white - komi
