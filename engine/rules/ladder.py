"""Ladder search for KataGo's ladder input features (planes 14-17).

A chain is "ladder captured" when the attacker can keep it in atari until it is taken, the
defender being allowed every liberty-gaining capture and assumed to win any ko. The search is a
depth-first minimax over a stack of scratch boards (one per level, instead of undo records),
with KataGo's quick exits, move ordering, 25,000-move budget and depth guard, so its answers
match KataGo's `searchIsLadderCaptured` / `searchIsLadderCapturedAttackerFirst2Libs`.
"""

import numpy as np
from numba import njit

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, EMPTY, NULL_POINT, WALL, WHITE

NODE_BUDGET = 25000


def new_ladder_scratch(width, height):
    """Scratch memory for ladder searches on W x H boards: (board stack, move buffer)."""
    depth = width * height * 3 // 2 + 2
    n = B.num_points(width, height)
    return (np.zeros((depth, B.NUM_ROWS, n), dtype=np.int64),
            np.zeros(depth * 8 + width * height + 8, dtype=np.int64))


@njit(cache=True)
def _libs(b, p, buf, start, end):
    """Append the liberties of p's chain to buf[end:], skipping any already in buf[start:end]."""
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    s = p
    while True:
        for q in (s - stride, s - 1, s + 1, s + stride):
            if col[q] == EMPTY:
                dup = False
                for j in range(start, end):
                    if buf[j] == q:
                        dup = True
                        break
                if not dup:
                    buf[end] = q
                    end += 1
        s = b[B.ROW_NEXT, s]
        if s == p:
            break
    return end


@njit(cache=True)
def _capture_moves(b, p, buf, start, end):
    """Append the liberties of every opposing chain in atari next to p's chain (no duplicates)."""
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    head = b[B.ROW_HEAD]
    opp = 3 - col[p]
    s = p
    while True:
        for q in (s - stride, s - 1, s + 1, s + stride):
            if col[q] == opp and b[B.ROW_LIBS, head[q]] == 1:
                end = _libs(b, q, buf, start, end)
        s = b[B.ROW_NEXT, s]
        if s == p:
            break
    return end


@njit(cache=True)
def _has_capture(b, p):
    """Whether some opposing chain next to p's chain is in atari."""
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    opp = 3 - col[p]
    s = p
    while True:
        for q in (s - stride, s - 1, s + 1, s + stride):
            if col[q] == opp and b[B.ROW_LIBS, b[B.ROW_HEAD, q]] == 1:
                return True
        s = b[B.ROW_NEXT, s]
        if s == p:
            break
    return False


@njit(cache=True)
def _empty_neighbours(b, p):
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    n = 0
    for q in (p - stride, p - 1, p + 1, p + stride):
        if col[q] == EMPTY:
            n += 1
    return n


@njit(cache=True)
def _legal(b, p, color):
    """KataGo's ladder legality: empty, not the ko point (any colour), no suicide at all."""
    if b[B.ROW_COLOR, p] != EMPTY or p == b[B.ROW_HEADER, B.H_KO_POINT]:
        return False
    return B.is_legal(b, p, color, np.bool_(False))  # not a literal: see features.fill_row


@njit(cache=True)
def _would_be_ko_capture(b, p, color):
    """p is surrounded by the other colour (or walls) with exactly one single-stone chain in
    atari."""
    if b[B.ROW_COLOR, p] != EMPTY:
        return False
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    opp = 3 - color
    found = NULL_POINT
    for q in (p - stride, p - 1, p + 1, p + stride):
        if col[q] != WALL and col[q] != opp:
            return False
        if col[q] == opp and b[B.ROW_LIBS, b[B.ROW_HEAD, q]] == 1:
            if found != NULL_POINT:
                return False
            found = q
    if found == NULL_POINT:
        return False
    return b[B.ROW_SIZE, b[B.ROW_HEAD, found]] == 1


@njit(cache=True)
def _libs_after_play_at_most(b, p, color, cap):
    """Liberties a stone of colour at p would have (captures and connections counted), capped."""
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    head = b[B.ROW_HEAD]
    opp = 3 - color
    libs = np.empty(cap + 1, dtype=np.int64)
    caps = np.empty(4, dtype=np.int64)
    n = 0
    nc = 0
    for q in (p - stride, p - 1, p + 1, p + stride):
        if col[q] == EMPTY or (col[q] == opp and b[B.ROW_LIBS, head[q]] == 1):
            libs[n] = q
            n += 1
            if n >= cap:
                return cap
            if col[q] == opp:
                caps[nc] = head[q]
                nc += 1
    conn = np.empty(4, dtype=np.int64)
    nconn = 0
    for q in (p - stride, p - 1, p + 1, p + stride):
        if col[q] != color:
            continue
        h = head[q]
        seen = False
        for j in range(nconn):
            if conn[j] == h:
                seen = True
        if seen:
            continue
        conn[nconn] = h
        nconn += 1
        s = q
        while True:
            for r in (s - stride, s - 1, s + 1, s + stride):
                if r == p:
                    continue
                empty = col[r] == EMPTY
                if not empty and col[r] == opp:
                    for j in range(nc):
                        if caps[j] == head[r]:
                            empty = True
                if empty:
                    dup = False
                    for j in range(n):
                        if libs[j] == r:
                            dup = True
                    if not dup:
                        libs[n] = r
                        n += 1
                        if n >= cap:
                            return cap
            s = b[B.ROW_NEXT, s]
            if s == q:
                break
    return n


@njit(cache=True)
def _defender_bounds(b, p, color):
    """(lower, upper) bounds on the liberties of a defender stone played at p."""
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    opp = 3 - color
    empties = 0
    n_caps = 0
    cap_stones = 0
    conn_sum = 0
    conn_max = 0
    for q in (p - stride, p - 1, p + 1, p + stride):
        c = col[q]
        if c == EMPTY:
            empties += 1
        elif c == opp:
            h = b[B.ROW_HEAD, q]
            if b[B.ROW_LIBS, h] == 1:
                n_caps += 1
                cap_stones += b[B.ROW_SIZE, h]
        elif c == color:
            extra = b[B.ROW_LIBS, b[B.ROW_HEAD, q]] - 1
            conn_sum += extra
            if extra > conn_max:
                conn_max = extra
    lower = n_caps + (conn_max if conn_max > empties else empties)
    upper = empties + cap_stones + conn_sum
    return lower, upper


@njit(cache=True)
def _connection_score_x2(b, p, color):
    """Sum over adjacent chains of colour with more than one liberty of (2 * libs - 3)."""
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    total = 0
    for q in (p - stride, p - 1, p + 1, p + stride):
        if col[q] == color:
            libs = b[B.ROW_LIBS, b[B.ROW_HEAD, q]]
            if libs > 1:
                total += 2 * libs - 3
    return total


@njit(cache=True)
def _adjacent(b, p, q):
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    d = p - q
    return d == 1 or d == -1 or d == stride or d == -stride


@njit(cache=True)
def ladder_captured(b, p, defender_first, stack, buf):
    """Whether the chain through stone p is ladder captured on board b.

    defender_first: the defender (p's colour) moves first; the chain must then have 1 liberty,
    and the board's ko point is ignored at the start. Otherwise the attacker moves first against
    a chain with at most 2 liberties. b is not modified: level d of the search works on
    stack[d], a copy of its parent with one move more. stack/buf come from new_ladder_scratch.
    """
    col = b[B.ROW_COLOR]
    if col[p] != BLACK and col[p] != WHITE:
        return False
    libs0 = b[B.ROW_LIBS, b[B.ROW_HEAD, p]]
    if libs0 > 2 or (defender_first and libs0 > 1):
        return False
    pla = col[p]
    opp = 3 - pla
    w = b[B.ROW_HEADER, B.H_WIDTH]
    h = b[B.ROW_HEADER, B.H_HEIGHT]
    stack_size = w * h * 3 // 2 + 1
    list_start = np.zeros(stack_size + 1, dtype=np.int64)
    list_len = np.zeros(stack_size + 1, dtype=np.int64)
    list_cur = np.zeros(stack_size + 1, dtype=np.int64)
    B.copy_board(stack[0], b)
    if defender_first:
        stack[0, B.ROW_HEADER, B.H_KO_POINT] = NULL_POINT
    d = 0
    nodes = 0
    list_cur[0] = -1
    value = False
    while True:
        if d < 0:
            return value
        if d >= stack_size - 1:
            value = True
            d -= 1
            continue
        if nodes >= NODE_BUDGET:
            return False
        cur = stack[d]
        defender = (d % 2 == 0) == defender_first
        if list_cur[d] == -1:
            libs = cur[B.ROW_LIBS, cur[B.ROW_HEAD, p]]
            if not defender and libs <= 1:
                value = True
                d -= 1
                continue
            if not defender and libs >= 3:
                value = False
                d -= 1
                continue
            if defender and libs >= 2:
                value = False
                d -= 1
                continue
            if defender and cur[B.ROW_HEADER, B.H_KO_POINT] != NULL_POINT:
                value = False
                d -= 1
                continue
            start = list_start[d]
            if defender:
                end = _capture_moves(cur, p, buf, start, start)
                end = _libs(cur, p, buf, start, end)
                n = end - start
                lower, upper = _defender_bounds(cur, buf[end - 1], pla)
                if lower >= 3:
                    value = False
                    d -= 1
                    continue
                if n == 1 and upper <= 1:
                    value = True
                    d -= 1
                    continue
            else:
                end = _libs(cur, p, buf, start, start)
                n = end - start
                m0 = buf[start]
                m1 = buf[start + 1]
                e0 = _empty_neighbours(cur, m0)
                e1 = _empty_neighbours(cur, m1)
                if (e0 == 0 and e1 == 0 and _would_be_ko_capture(cur, m0, opp)
                        and _would_be_ko_capture(cur, m1, opp)
                        and _libs_after_play_at_most(cur, m0, pla, 3) <= 2
                        and _libs_after_play_at_most(cur, m1, pla, 3) <= 2
                        and not _has_capture(cur, p)):
                    value = True
                    d -= 1
                    continue
                if not _adjacent(cur, m0, m1):
                    if e0 >= 3 and e1 >= 3:
                        value = False
                        d -= 1
                        continue
                    elif e0 >= 3:
                        n = 1
                    elif e1 >= 3:
                        buf[start] = m1
                        n = 1
                if n > 1:
                    s0 = 2 * e0 + _connection_score_x2(cur, m0, pla)
                    s1 = 2 * e1 + _connection_score_x2(cur, m1, pla)
                    if s1 > s0:
                        buf[start] = m1
                        buf[start + 1] = m0
            list_len[d] = n
            list_cur[d] = 0
        else:
            # Back from a child (or an illegal move) with its value.
            if defender and not value:
                d -= 1
                continue
            if not defender and value:
                d -= 1
                continue
            list_cur[d] += 1
        if list_cur[d] >= list_len[d]:
            value = defender
            d -= 1
            continue
        move = buf[list_start[d] + list_cur[d]]
        mover = pla if defender else opp
        if not _legal(cur, move, mover):
            value = defender
            continue
        B.copy_board(stack[d + 1], cur)
        B.play_unchecked(stack[d + 1], move, mover)
        nodes += 1
        d += 1
        list_cur[d] = -1
        list_start[d] = list_start[d - 1] + list_len[d - 1]
        list_len[d] = 0


@njit(cache=True)
def ladder_captured_attacker_first(b, p, stack, buf, moves):
    """Whether the attacker, moving first, can ladder-capture p's 2-liberty chain.

    moves[0:k] receives the k first moves (out of the two liberties) that work; returns k
    (0 = not captured). b is not modified.
    """
    col = b[B.ROW_COLOR]
    if col[p] != BLACK and col[p] != WHITE:
        return 0
    if b[B.ROW_LIBS, b[B.ROW_HEAD, p]] != 2:
        return 0
    opp = 3 - col[p]
    _libs(b, p, buf, np.int64(0), np.int64(0))  # not literals: see features.fill_row
    m0 = buf[0]
    m1 = buf[1]
    k = 0
    after = stack[stack.shape[0] - 1]
    for m in (m0, m1):
        if _legal(b, m, opp):
            B.copy_board(after, b)
            B.play_unchecked(after, m, opp)
            if ladder_captured(after, p, True, stack, buf):
                moves[k] = m
                k += 1
    return k
