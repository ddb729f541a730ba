"""The Go board as numba kernels over one int64 array.

A board is a 2-D int64 array of shape (NUM_ROWS, n). Row ROW_HEADER holds scalars (size, ko,
hash, prisoners); the other rows are per-point arrays over a padded 1-D layout:

    point p = (y + 1) * stride + (x + 1),   stride = W + 1,   0 <= x < W, 0 <= y < H (y = 0 top)

(engine/rules/coords.py computes it), so the four neighbours of p are p - stride, p - 1, p + 1,
p + stride and the padding holds WALL. One array per board makes copying into scratch boards a
single slice assignment and lets a batch of boards be one 3-D array. Chains are circular linked
lists (ROW_NEXT) with a head per stone (ROW_HEAD); the exact liberty count and size live at the
head, so liberties are O(1) to read. ROW_NBR packs how many empty, black and white neighbours
each point has, so the common cases of the legality and eye tests (an empty neighbour; all
neighbours own) are one load.

Moves are points; PASS_POINT and NULL_POINT sit inside the top wall row (never -1: numba wraps
negative indices). Conversions between points, (x, y) and network actions are
engine/rules/coords.py's, registered here so that every kernel can call them.
"""

import numpy as np
from numba import njit
from numba.extending import register_jitable

from dosaku.engine.rules import coords
from dosaku.engine.rules.constants import (
    BLACK,
    EMPTY,
    MAX_SIZE,
    MOVE_KO,
    MOVE_OCCUPIED,
    MOVE_OFF_BOARD,
    MOVE_OK,
    MOVE_SUICIDE,
    NULL_POINT,
    PASS_POINT,
    WALL,
    WHITE,
)
from dosaku.engine.rules.coords import action_from_xy, point_from_xy

for _helper in coords.JITABLE:
    register_jitable(_helper)

ROW_HEADER = 0
ROW_COLOR = 1
ROW_NEXT = 2  # next stone of the same chain (circular)
ROW_HEAD = 3  # chain head of each stone (NULL_POINT on empty points)
ROW_LIBS = 4  # liberty count, valid at the head
ROW_SIZE = 5  # stone count, valid at the head
ROW_EMPTY = 6  # the first H_NUM_EMPTY entries list the empty points
ROW_EMPTY_POS = 7  # index of an empty point in ROW_EMPTY
ROW_MARK = 8  # scratch marks for liberty counting (generation numbers)
ROW_NBR = 9  # neighbour counts: sum over on-board neighbours q of 1 << (NBR_BITS * colour[q])
NUM_ROWS = 10

NBR_BITS = 4  # so (nbr >> (NBR_BITS * c)) & NBR_MASK = neighbours of colour c (EMPTY, BLACK, WHITE)
NBR_MASK = 15

H_WIDTH = 0
H_HEIGHT = 1
H_STRIDE = 2
H_KO_POINT = 3  # simple-ko point banned for H_KO_COLOR, NULL_POINT when none
H_KO_COLOR = 4
H_HASH = 5  # Zobrist hash of the stones only
H_PRISONERS = 5  # prisoners taken by colour c are at H_PRISONERS + c (6 black, 7 white)
H_NUM_EMPTY = 8
H_MARK_GEN = 9
HEADER_LEN = 10

MAX_POINTS = (MAX_SIZE + 1) * (MAX_SIZE + 2) + 1

# Zobrist keys, a true constant (fixed seed), indexed [colour, point].
ZOBRIST = np.random.default_rng(20261121).integers(
    np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(3, MAX_POINTS), dtype=np.int64)
ZOBRIST[EMPTY, :] = 0


@njit(cache=True)
def num_points(width, height):
    """Length of the per-point rows for a W x H board (at least the header length)."""
    return max((width + 1) * (height + 2) + 1, HEADER_LEN)


@njit(cache=True)
def new_board(width, height):
    """An empty W x H board."""
    b = np.zeros((NUM_ROWS, num_points(width, height)), dtype=np.int64)
    b[ROW_COLOR, :] = WALL
    k = 0
    for y in range(height):
        for x in range(width):
            p = point_from_xy(x, y, width)
            b[ROW_COLOR, p] = EMPTY
            b[ROW_EMPTY, k] = p
            b[ROW_EMPTY_POS, p] = k
            b[ROW_NBR, p] = (y > 0) + (y < height - 1) + (x > 0) + (x < width - 1)
            k += 1
    b[ROW_HEADER, H_WIDTH] = width
    b[ROW_HEADER, H_HEIGHT] = height
    b[ROW_HEADER, H_STRIDE] = width + 1
    b[ROW_HEADER, H_KO_POINT] = NULL_POINT
    b[ROW_HEADER, H_NUM_EMPTY] = k
    return b


@njit(cache=True)
def copy_board(dst, src):
    """Copy src into the preallocated dst of the same shape (no allocation). An explicit loop:
    a slice assignment would compile numba's shape-mismatch error text (seconds at start-up)."""
    for r in range(dst.shape[0]):
        for p in range(dst.shape[1]):
            dst[r, p] = src[r, p]


@njit(cache=True)
def is_legal(b, p, color, allow_suicide):
    """Whether colour may play at point p (pass is always legal; simple ko only)."""
    if p == PASS_POINT:
        return True
    if p <= 0 or p >= b.shape[1] or b[ROW_COLOR, p] != EMPTY:
        return False
    if p == b[ROW_HEADER, H_KO_POINT] and color == b[ROW_HEADER, H_KO_COLOR]:
        return False
    if allow_suicide or b[ROW_NBR, p] & NBR_MASK:
        return True
    stride = b[ROW_HEADER, H_STRIDE]
    for q in (p - stride, p - 1, p + 1, p + stride):
        c = b[ROW_COLOR, q]
        if c == color:
            if b[ROW_LIBS, b[ROW_HEAD, q]] > 1:
                return True
        elif c != WALL:
            if b[ROW_LIBS, b[ROW_HEAD, q]] == 1:
                return True
    return False


@njit(cache=True)
def move_error(b, p, color, allow_suicide):
    """MOVE_OK if the move is legal, otherwise the reason it is not."""
    if p == PASS_POINT:
        return MOVE_OK
    if p <= 0 or p >= b.shape[1] or b[ROW_COLOR, p] == WALL:
        return MOVE_OFF_BOARD
    if b[ROW_COLOR, p] != EMPTY:
        return MOVE_OCCUPIED
    if p == b[ROW_HEADER, H_KO_POINT] and color == b[ROW_HEADER, H_KO_COLOR]:
        return MOVE_KO
    if not is_legal(b, p, color, allow_suicide):
        return MOVE_SUICIDE
    return MOVE_OK


@njit(cache=True)
def _empty_remove(b, p):
    n = b[ROW_HEADER, H_NUM_EMPTY] - 1
    i = b[ROW_EMPTY_POS, p]
    last = b[ROW_EMPTY, n]
    b[ROW_EMPTY, i] = last
    b[ROW_EMPTY_POS, last] = i
    b[ROW_HEADER, H_NUM_EMPTY] = n


@njit(cache=True)
def _empty_add(b, p):
    n = b[ROW_HEADER, H_NUM_EMPTY]
    b[ROW_EMPTY, n] = p
    b[ROW_EMPTY_POS, p] = n
    b[ROW_HEADER, H_NUM_EMPTY] = n + 1


@njit(cache=True)
def _merge(b, keep, other):
    """Join chains with heads `keep` and `other`; returns the surviving head.

    The liberty count is updated without a full recount: the larger chain keeps its count and
    gains the liberties of the smaller one that it does not already touch, so a merge costs
    O(size of the smaller chain).
    """
    if b[ROW_SIZE, other] > b[ROW_SIZE, keep]:
        keep, other = other, keep
    stride = b[ROW_HEADER, H_STRIDE]
    gen = b[ROW_HEADER, H_MARK_GEN] + 1
    b[ROW_HEADER, H_MARK_GEN] = gen
    gained = 0
    s = other
    while True:
        for q in (s - stride, s - 1, s + 1, s + stride):
            if b[ROW_COLOR, q] == EMPTY and b[ROW_MARK, q] != gen:
                b[ROW_MARK, q] = gen
                if (b[ROW_HEAD, q - stride] != keep and b[ROW_HEAD, q - 1] != keep
                        and b[ROW_HEAD, q + 1] != keep and b[ROW_HEAD, q + stride] != keep):
                    gained += 1  # a liberty of `other` that `keep` did not have
        s = b[ROW_NEXT, s]
        if s == other:
            break
    s = other
    while True:
        b[ROW_HEAD, s] = keep
        s = b[ROW_NEXT, s]
        if s == other:
            break
    nk = b[ROW_NEXT, keep]
    b[ROW_NEXT, keep] = b[ROW_NEXT, other]
    b[ROW_NEXT, other] = nk
    b[ROW_SIZE, keep] += b[ROW_SIZE, other]
    b[ROW_LIBS, keep] += gained
    return keep


@njit(cache=True)
def _remove_chain(b, h):
    """Take the chain with head h off the board; neighbouring chains gain the liberties."""
    stride = b[ROW_HEADER, H_STRIDE]
    color = b[ROW_COLOR, h]
    s = h
    while True:
        b[ROW_COLOR, s] = EMPTY
        b[ROW_HEADER, H_HASH] ^= ZOBRIST[color, s]
        b[ROW_HEAD, s] = NULL_POINT
        _empty_add(b, s)
        s = b[ROW_NEXT, s]
        if s == h:
            break
    # Each removed stone is a new liberty of every distinct chain next to it (the removed
    # stones' heads are NULL_POINT by now, like empty and wall points).
    nbr_delta = 1 - (1 << (NBR_BITS * color))  # a neighbour turns from colour to empty
    s = h
    while True:
        q0 = s - stride
        q1 = s - 1
        q2 = s + 1
        q3 = s + stride
        b[ROW_NBR, q0] += nbr_delta
        b[ROW_NBR, q1] += nbr_delta
        b[ROW_NBR, q2] += nbr_delta
        b[ROW_NBR, q3] += nbr_delta
        h0 = b[ROW_HEAD, q0]
        h1 = b[ROW_HEAD, q1]
        h2 = b[ROW_HEAD, q2]
        h3 = b[ROW_HEAD, q3]
        if h1 == h0:
            h1 = NULL_POINT
        if h2 == h0 or h2 == h1:
            h2 = NULL_POINT
        if h3 == h0 or h3 == h1 or h3 == h2:
            h3 = NULL_POINT
        if h0 != NULL_POINT:
            b[ROW_LIBS, h0] += 1
        if h1 != NULL_POINT:
            b[ROW_LIBS, h1] += 1
        if h2 != NULL_POINT:
            b[ROW_LIBS, h2] += 1
        if h3 != NULL_POINT:
            b[ROW_LIBS, h3] += 1
        s = b[ROW_NEXT, s]
        if s == h:
            break
    return b[ROW_SIZE, h]


@njit(cache=True)
def play_unchecked(b, p, color):
    """Play a move already known to be legal (suicide, if it happens, is carried out).

    Returns the number of opponent stones captured.
    """
    b[ROW_HEADER, H_KO_POINT] = NULL_POINT
    if p == PASS_POINT:
        return 0
    stride = b[ROW_HEADER, H_STRIDE]
    opp = 3 - color

    _empty_remove(b, p)
    b[ROW_COLOR, p] = color
    b[ROW_HEAD, p] = p
    b[ROW_NEXT, p] = p
    b[ROW_SIZE, p] = 1
    b[ROW_HEADER, H_HASH] ^= ZOBRIST[color, p]

    # Neighbouring chains lose p as a liberty (each distinct chain once). Empty and wall
    # points have a NULL_POINT head, so the four heads need no colour test.
    q0 = p - stride
    q1 = p - 1
    q2 = p + 1
    q3 = p + stride
    nbr_delta = (1 << (NBR_BITS * color)) - 1  # a neighbour turns from empty to colour
    b[ROW_NBR, q0] += nbr_delta
    b[ROW_NBR, q1] += nbr_delta
    b[ROW_NBR, q2] += nbr_delta
    b[ROW_NBR, q3] += nbr_delta
    h0 = b[ROW_HEAD, q0]
    h1 = b[ROW_HEAD, q1]
    h2 = b[ROW_HEAD, q2]
    h3 = b[ROW_HEAD, q3]
    if h1 == h0:
        h1 = NULL_POINT
    if h2 == h0 or h2 == h1:
        h2 = NULL_POINT
    if h3 == h0 or h3 == h1 or h3 == h2:
        h3 = NULL_POINT
    if h0 != NULL_POINT:
        b[ROW_LIBS, h0] -= 1
    if h1 != NULL_POINT:
        b[ROW_LIBS, h1] -= 1
    if h2 != NULL_POINT:
        b[ROW_LIBS, h2] -= 1
    if h3 != NULL_POINT:
        b[ROW_LIBS, h3] -= 1
    b[ROW_LIBS, p] = b[ROW_NBR, p] & NBR_MASK

    # Merge with friendly chains (unused h* are NULL_POINT, a wall point).
    mine = p
    if b[ROW_COLOR, h0] == color:
        mine = _merge(b, mine, h0)
    if b[ROW_COLOR, h1] == color:
        mine = _merge(b, mine, h1)
    if b[ROW_COLOR, h2] == color:
        mine = _merge(b, mine, h2)
    if b[ROW_COLOR, h3] == color:
        mine = _merge(b, mine, h3)

    # Capture opponent chains left without liberties.
    captured = 0
    last_captured = NULL_POINT
    if b[ROW_COLOR, h0] == opp and b[ROW_LIBS, h0] == 0:
        captured += _remove_chain(b, h0)
        last_captured = h0
    if b[ROW_COLOR, h1] == opp and b[ROW_LIBS, h1] == 0:
        captured += _remove_chain(b, h1)
        last_captured = h1
    if b[ROW_COLOR, h2] == opp and b[ROW_LIBS, h2] == 0:
        captured += _remove_chain(b, h2)
        last_captured = h2
    if b[ROW_COLOR, h3] == opp and b[ROW_LIBS, h3] == 0:
        captured += _remove_chain(b, h3)
        last_captured = h3
    b[ROW_HEADER, H_PRISONERS + color] += captured

    if b[ROW_LIBS, mine] == 0:
        # Suicide (only reached when the rules allow it).
        b[ROW_HEADER, H_PRISONERS + opp] += _remove_chain(b, mine)
    elif captured == 1 and b[ROW_SIZE, mine] == 1 and b[ROW_LIBS, mine] == 1:
        b[ROW_HEADER, H_KO_POINT] = last_captured
        b[ROW_HEADER, H_KO_COLOR] = opp
    return captured


@njit(cache=True)
def play(b, p, color, allow_suicide):
    """Play if legal under simple ko; returns MOVE_OK or the reason (board unchanged then)."""
    err = move_error(b, p, color, allow_suicide)
    if err == MOVE_OK:
        play_unchecked(b, p, color)
    return err


@njit(cache=True)
def legal_mask(b, color, allow_suicide, out):
    """Fill out[a] (bool, length W*H + 1, pass last) with the legal actions of colour."""
    w = b[ROW_HEADER, H_WIDTH]
    h = b[ROW_HEADER, H_HEIGHT]
    for y in range(h):
        for x in range(w):
            legal = is_legal(b, point_from_xy(x, y, w), color, allow_suicide)
            out[action_from_xy(x, y, w)] = legal
    out[w * h] = True


@njit(cache=True)
def is_eye_like(b, p, color):
    """p is empty and a real-looking single-point eye of colour (not a false eye)."""
    if b[ROW_COLOR, p] != EMPTY:
        return False
    # no empty and no opposing neighbour: all four are own stones or walls
    if b[ROW_NBR, p] & (NBR_MASK | (NBR_MASK << (NBR_BITS * (3 - color)))):
        return False
    stride = b[ROW_HEADER, H_STRIDE]
    bad = 0
    edge = 0
    for q in (p - stride - 1, p - stride + 1, p + stride - 1, p + stride + 1):
        c = b[ROW_COLOR, q]
        if c == WALL:
            edge = 1
        elif c == 3 - color:
            bad += 1
    return bad + edge < 2


@njit(cache=True)
def area_of_colors(col, stride):
    """Tromp-Taylor area (black, white) of a row of point colours: stones plus the empty regions
    that reach one colour only. Takes the colour row so scoring can remove dead stones first."""
    n = col.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    black = 0
    white = 0
    for p in range(n):
        c = col[p]
        if c == BLACK:
            black += 1
        elif c == WHITE:
            white += 1
        elif c == EMPTY and not seen[p]:
            size = 0
            reach = 0
            stack[0] = p
            seen[p] = True
            top = 1
            while top > 0:
                top -= 1
                s = stack[top]
                size += 1
                for q in (s - stride, s - 1, s + 1, s + stride):
                    cq = col[q]
                    if cq == EMPTY:
                        if not seen[q]:
                            seen[q] = True
                            stack[top] = q
                            top += 1
                    elif cq == BLACK or cq == WHITE:
                        reach |= cq
            if reach == BLACK:
                black += size
            elif reach == WHITE:
                white += size
    return black, white


@njit(cache=True)
def area_counts(b):
    """Tromp-Taylor area (black, white) of the board as it stands."""
    return area_of_colors(b[ROW_COLOR], b[ROW_HEADER, H_STRIDE])


@njit(cache=True)
def random_playout(b, color, allow_suicide, max_moves):
    """Play uniformly random legal moves that fill no own eye-like point until two passes.

    `color` moves first. Returns the number of moves played (passes included). One draw from
    numba's global RNG (seed it with seed_rng) seeds a xorshift generator for the playout,
    which is much cheaper per draw. Candidates are drawn from the empty list; a rejected one
    is swapped behind the shrinking candidate range, so each move is uniform over the
    acceptable points (the empty list is only reordered).
    """
    x = np.uint64(np.random.randint(1, 2 ** 62))
    moves = 0
    passes = 0
    while passes < 2 and moves < max_moves:
        m = b[ROW_HEADER, H_NUM_EMPTY]
        played = PASS_POINT
        while m > 0:
            x ^= x << np.uint64(13)
            x ^= x >> np.uint64(7)
            x ^= x << np.uint64(17)
            i = np.int64(((x >> np.uint64(32)) * np.uint64(m)) >> np.uint64(32))
            p = b[ROW_EMPTY, i]
            if b[ROW_NBR, p] & NBR_MASK:
                # an empty neighbour: no eye, and legal unless it is the ko point
                if p != b[ROW_HEADER, H_KO_POINT] or color != b[ROW_HEADER, H_KO_COLOR]:
                    played = p
                    break
            elif not is_eye_like(b, p, color) and is_legal(b, p, color, allow_suicide):
                played = p
                break
            m -= 1
            last = b[ROW_EMPTY, m]
            b[ROW_EMPTY, i] = last
            b[ROW_EMPTY_POS, last] = i
            b[ROW_EMPTY, m] = p
            b[ROW_EMPTY_POS, p] = m
        play_unchecked(b, played, color)
        passes = passes + 1 if played == PASS_POINT else 0
        color = 3 - color
        moves += 1
    return moves


@njit(cache=True)
def seed_rng(seed):
    """Seed numba's global RNG (used by playouts)."""
    np.random.seed(seed)
