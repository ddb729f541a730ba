"""Area maps for KataGo's area input features (planes 18/19): Benson pass-alive analysis.

`calculate_area` gives KataGo's `calculateArea`: pass-alive chains and the territory they make
safe (Benson's algorithm), optionally also big empty regions bordered by one colour and the
remaining stones. `independent_life_area` gives `calculateIndependentLifeArea` (tax rules).
Results are per padded point (see engine/rules/board.py): EMPTY, BLACK or WHITE.
"""

import numpy as np
from numba import njit

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, EMPTY, WHITE
from dosaku.engine.rules.coords import point_from_xy


@njit(cache=True)
def _adjacent_to_head(b, p, head):
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    for q in (p - stride, p - 1, p + 1, p + stride):
        if b[B.ROW_HEAD, q] == head and (b[B.ROW_COLOR, q] == BLACK or b[B.ROW_COLOR, q] == WHITE):
            return True
    return False


@njit(cache=True)
def _area_for_pla(b, pla, safe_big, unsafe_big, suicide, result):
    """Mark pla's pass-alive chains and the territory they secure in result."""
    n = b.shape[1]
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    w = b[B.ROW_HEADER, B.H_WIDTH]
    h = b[B.ROW_HEADER, B.H_HEIGHT]
    col = b[B.ROW_COLOR]
    head = b[B.ROW_HEAD]
    opp = 3 - pla

    region_of = np.full(n, -1, dtype=np.int64)
    points = np.empty(n, dtype=np.int64)  # region points, grouped by region
    max_regions = w * h // 2 + 2
    reg_start = np.zeros(max_regions, dtype=np.int64)
    reg_len = np.zeros(max_regions, dtype=np.int64)
    vital = np.zeros((max_regions, 4), dtype=np.int64)  # pla chain heads the region is vital for
    n_vital = np.zeros(max_regions, dtype=np.int64)
    internal = np.zeros(max_regions, dtype=np.int64)  # points not next to pla, capped at 2
    has_opp = np.zeros(max_regions, dtype=np.bool_)
    borders_dead = np.zeros(max_regions, dtype=np.bool_)

    n_regions = 0
    n_points = 0
    any_pla = False
    for y in range(h):
        for x in range(w):
            p0 = point_from_xy(x, y, w)
            if region_of[p0] >= 0:
                continue
            if col[p0] != EMPTY:
                if col[p0] == pla:
                    any_pla = True
                continue
            r = n_regions
            n_regions += 1
            nv = 0
            for q in (p0 - stride, p0 - 1, p0 + 1, p0 + stride):
                if col[q] == pla:
                    hq = head[q]
                    dup = False
                    for j in range(nv):
                        if vital[r, j] == hq:
                            dup = True
                    if not dup:
                        vital[r, nv] = hq
                        nv += 1
            reg_start[r] = n_points
            points[n_points] = p0
            region_of[p0] = r
            qi = n_points
            n_points += 1
            while qi < n_points:
                p = points[qi]
                qi += 1
                if nv > 0 and (suicide or col[p] == EMPTY):
                    k = 0
                    for j in range(nv):
                        if _adjacent_to_head(b, p, vital[r, j]):
                            vital[r, k] = vital[r, j]
                            k += 1
                    nv = k
                if internal[r] < 2:
                    next_to_pla = False
                    for q in (p - stride, p - 1, p + 1, p + stride):
                        if col[q] == pla:
                            next_to_pla = True
                    if not next_to_pla:
                        internal[r] += 1
                if col[p] == opp:
                    has_opp[r] = True
                for q in (p - stride, p - 1, p + 1, p + stride):
                    if (col[q] == EMPTY or col[q] == opp) and region_of[q] < 0:
                        region_of[q] = r
                        points[n_points] = q
                        n_points += 1
            reg_len[r] = n_points - reg_start[r]
            n_vital[r] = nv

    # Benson: kill chains with fewer than two vital regions until nothing changes.
    vital_count = np.zeros(n, dtype=np.int64)
    for r in range(n_regions):
        for j in range(n_vital[r]):
            vital_count[vital[r, j]] += 1
    killed = np.zeros(n, dtype=np.bool_)
    changed = True
    while changed:
        changed = False
        for p0 in range(n):
            if col[p0] != pla or head[p0] != p0 or killed[p0] or vital_count[p0] >= 2:
                continue
            killed[p0] = True
            changed = True
            s = p0
            while True:
                for q in (s - stride, s - 1, s + 1, s + stride):
                    r = region_of[q]
                    if r >= 0 and not borders_dead[r]:
                        borders_dead[r] = True
                        for j in range(n_vital[r]):
                            vital_count[vital[r, j]] -= 1
                s = b[B.ROW_NEXT, s]
                if s == p0:
                    break

    for p0 in range(n):
        if col[p0] == pla and not killed[head[p0]]:
            result[p0] = pla

    for r in range(n_regions):
        mark = any_pla and not borders_dead[r] and (internal[r] <= 1
                                                   or (safe_big and not has_opp[r]))
        if mark:
            for i in range(reg_start[r], reg_start[r] + reg_len[r]):
                result[points[i]] = pla
        elif unsafe_big and not has_opp[r] and any_pla:
            for i in range(reg_start[r], reg_start[r] + reg_len[r]):
                if result[points[i]] == EMPTY:
                    result[points[i]] = pla


@njit(cache=True)
def calculate_area(b, result, non_pass_alive_stones, safe_big, unsafe_big, suicide):
    """KataGo's calculateArea into result (length b.shape[1]); suicide = multi-stone suicide
    legal."""
    result[:] = EMPTY
    for pla in (np.int64(BLACK), np.int64(WHITE)):  # one compiled version for both colours
        _area_for_pla(b, pla, safe_big, unsafe_big, suicide, result)
    if non_pass_alive_stones:
        col = b[B.ROW_COLOR]
        for p in range(b.shape[1]):
            if result[p] == EMPTY and (col[p] == BLACK or col[p] == WHITE):
                result[p] = col[p]


@njit(cache=True)
def _fill_owned(basic, p0, stride, mark, value, queue):
    """Set mark to value over the points of p0's owner connected to p0 (through owned points)
    that do not already hold it; queue is scratch of length basic.shape[0]."""
    owner = basic[p0]
    mark[p0] = value
    queue[0] = p0
    top = 1
    while top > 0:
        top -= 1
        s = queue[top]
        for q in (s - stride, s - 1, s + 1, s + stride):
            if basic[q] == owner and mark[q] != value:
                mark[q] = value
                queue[top] = q
                top += 1


@njit(cache=True)
def independent_life_area(b, result, keep_territories, keep_stones, suicide):
    """KataGo's calculateIndependentLifeArea into result.

    Owned regions touching dame or holding an owner's stone in atari count as seki and are left
    out. Returns white minus black independent-life region count (used by the group tax).
    """
    n = b.shape[1]
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    basic = np.zeros(n, dtype=np.int64)
    calculate_area(b, basic, True, True, True, suicide)
    result[:] = EMPTY
    seki = np.zeros(n, dtype=np.int64)  # the same types as `result`: one _fill_owned
    queue = np.empty(n, dtype=np.int64)
    for p0 in range(n):
        owner = basic[p0]
        if owner == EMPTY or seki[p0]:
            continue
        touches = col[p0] == owner and b[B.ROW_LIBS, b[B.ROW_HEAD, p0]] == 1
        for q in (p0 - stride, p0 - 1, p0 + 1, p0 + stride):
            if col[q] == EMPTY and basic[q] == EMPTY:
                touches = True
        if not touches:
            continue
        _fill_owned(basic, p0, stride, seki, np.int64(1), queue)
    count = 0
    for p0 in range(n):
        owner = basic[p0]
        if owner == EMPTY or seki[p0] or result[p0] == owner:
            continue
        count += 1 if owner == WHITE else -1
        _fill_owned(basic, p0, stride, result, owner, queue)
    for p0 in range(n):
        owner = basic[p0]
        if owner == EMPTY:
            continue
        if keep_territories and owner != col[p0]:
            result[p0] = owner
        if keep_stones and owner == col[p0]:
            result[p0] = owner
    return count
