"""SGF for loadsgf / printsgf: replay an sgfmill game into the Engine, and write the Engine's
game (size, komi, rules, handicap or set-up stones, moves) as SGF text without blank lines."""

from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import point_from_sgfmill, sgf_text
from dosaku.gtp.protocol import format_float


def replay_sgf(engine, game, size: int, limit: int | None) -> int:
    """Set up `engine` from an sgfmill game; returns the colour to move. ValueError if bad."""
    engine.set_size(size, size)
    root = game.get_root()
    if root.has_property("KM"):
        engine.set_komi(float(root.get("KM")))
    first = BLACK
    if root.has_property("PL"):
        first = BLACK if root.get("PL") == "b" else WHITE
    played = 0
    for node in game.get_main_sequence():
        color_text, move = node.get_move()
        if color_text is not None and limit is not None and played >= limit:
            return BLACK if color_text == "b" else WHITE
        ab, aw, ae = node.get_setup_stones()
        if ab or aw or ae:
            to_move = first if node is root else engine.to_move
            _apply_setup(engine, size, ab, aw, ae, to_move)
        if color_text is None:
            continue
        color = BLACK if color_text == "b" else WHITE
        if engine.play(color, point_from_sgfmill(move, size)) != MOVE_OK:
            raise ValueError(f"illegal move {color_text} {move} in the main line")
        played += 1
    if not engine.moves and root.has_property("PL"):
        return first
    return engine.to_move


def _apply_setup(engine, size, ab, aw, ae, to_move: int) -> None:
    """AB/AW/AE: black-only stones on an empty board are handicap; otherwise they change the
    position as set-up stones (not moves: undo does not remove them)."""
    black = {point_from_sgfmill(m, size) for m in ab}
    white = {point_from_sgfmill(m, size) for m in aw}
    empty = {point_from_sgfmill(m, size) for m in ae}
    if engine.is_empty() and not white and len(black) >= 2:
        if not engine.place_handicap(sorted(black)):
            raise ValueError("bad handicap stones")
        return
    position = engine.stones()
    for p in empty:
        position.pop(p, None)
    position.update({p: BLACK for p in black})
    position.update({p: WHITE for p in white})
    stones = [sorted(q for q, c in position.items() if c == color) for color in (BLACK, WHITE)]
    if not engine.setup(stones[0], stones[1], to_move):
        raise ValueError("illegal setup position")


def game_sgf(engine, app: str) -> str:
    """SGF of the current game: size, komi, rules, handicap or set-up stones (AB/AW with the
    colour to move after them as PL), then the moves."""
    w, h = engine.size
    size = str(w) if w == h else f"{w}:{h}"
    head = (f"(;GM[1]FF[4]CA[UTF-8]AP[{app}]SZ[{size}]"
            f"KM[{format_float(engine.komi)}]RU[{engine.rules.name}]")
    hcp = engine.handicap_points
    if hcp:
        head += f"HA[{len(hcp)}]AB" + "".join(f"[{sgf_text(p, w)}]" for p in hcp)
    setup = engine.setup_stones
    if setup is not None:
        black, white, to_move = setup
        for key, points in (("AB", black), ("AW", white)):
            if points:
                head += key + "".join(f"[{sgf_text(p, w)}]" for p in points)
        head += f"PL[{'B' if to_move == BLACK else 'W'}]"
    lines = [head]
    moves = engine.moves
    for k in range(0, len(moves), 10):
        lines.append("".join(f";{'B' if c == BLACK else 'W'}[{sgf_text(p, w)}]"
                             for c, p in moves[k:k + 10]))
    lines[-1] += ")"
    return "\n".join(lines)
