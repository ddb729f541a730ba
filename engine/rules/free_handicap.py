"""Engine-chosen handicap stones (GTP `place_free_handicap`): the fixed layout where the board
has one, then points spread as far as possible from the stones already chosen."""

from dosaku.engine.rules.coords import point_from_xy, xy_from_point
from dosaku.engine.rules.handicap import fixed_handicap_points, max_fixed_handicap


def free_handicap_points(n: int, width: int, height: int) -> list[int]:
    """Engine-chosen handicap: the fixed layout when there is one, else spread-out points.

    Points beyond the fixed layout are added greedily, each as far as possible from the stones
    already chosen; points off the first two lines (one on small boards) come first.
    """
    if width == height and n <= max_fixed_handicap(width, height):
        return fixed_handicap_points(n, width)
    chosen: list[tuple[int, int]] = []
    if width == height and max_fixed_handicap(width, height):
        base = fixed_handicap_points(max_fixed_handicap(width, height), width)
        chosen = [xy_from_point(p, width) for p in base]
    cells = [(x, y) for y in range(height) for x in range(width)]
    inner = 2 if min(width, height) >= 7 else 1 if min(width, height) >= 3 else 0
    zone = {(x, y): min(x, y, width - 1 - x, height - 1 - y) >= inner for x, y in cells}
    centre = {(x, y): -abs(2 * x - width + 1) - abs(2 * y - height + 1) for x, y in cells}
    far = {c: min(((c[0] - a) ** 2 + (c[1] - b) ** 2 for a, b in chosen), default=10 ** 9)
           for c in cells}
    for c in chosen:
        far.pop(c, None)
    while len(chosen) < n and far:
        best = max(far, key=lambda c: (zone[c], far[c], centre[c]))
        chosen.append(best)
        del far[best]
        for c in far:
            far[c] = min(far[c], (c[0] - best[0]) ** 2 + (c[1] - best[1]) ** 2)
    return [point_from_xy(x, y, width) for x, y in chosen]
