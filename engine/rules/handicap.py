"""Fixed handicap layouts as GTP `fixed_handicap` places them (GNU Go / KataGo pattern)."""

from dosaku.engine.rules.coords import point_from_xy


def max_fixed_handicap(width: int, height: int) -> int:
    """Largest N `fixed_handicap` accepts on this board (0 if the board has no layout)."""
    if width != height or width < 7 or width > 25:
        return 0
    return 4 if width == 7 or width % 2 == 0 else 9


def fixed_handicap_points(n: int, size: int) -> list[int] | None:
    """Points of the n-stone layout, listed top row first, left to right; None if invalid."""
    if not 2 <= n <= max_fixed_handicap(size, size):
        return None
    d = 3 if size >= 13 else 2
    lo, hi, mid = d, size - 1 - d, size // 2
    # (x, y), y = 0 the top row: top-right and bottom-left corners first
    corners = [(hi, lo), (lo, hi), (lo, lo), (hi, hi)]
    chosen = corners[:min(n, 4)]
    if n >= 6:
        chosen += [(lo, mid), (hi, mid)]
    if n >= 8:
        chosen += [(mid, lo), (mid, hi)]
    if n % 2 == 1 and n >= 5:
        chosen.append((mid, mid))
    chosen.sort(key=lambda xy: (xy[1], xy[0]))
    return [point_from_xy(x, y, size) for x, y in chosen]
