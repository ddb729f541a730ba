"""Training rows from random legal games: real positions through engine.evaluators.features, targets
from the games themselves (the move played, the final result, score and area ownership).

Moves are drawn among the legal ones with a preference for the centre, so the policy target is
learnable from the planes. An optional synthetic teacher gives each row soft targets of its
own: a policy preferring the edges instead, a softened result, half the score and half the
ownership.
"""

import numpy as np

from dosaku.engine.evaluators.features import FEATURE_SET, NUM_GLOBAL, NUM_SPATIAL, fill_features
from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.rules.area import calculate_area
from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT
from dosaku.engine.rules.coords import action_from_point, point_from_xy
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.training.chunks import Rows, pack_spatial


def features(game: GameState, symmetry: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Input planes [22, H, W] and globals [19] of the game's position."""
    batch = position_batch(game)
    spatial = np.zeros((1, NUM_SPATIAL, game.height, game.width), np.float32)
    glob = np.zeros((1, NUM_GLOBAL), np.float32)
    fill_features(batch, spatial, glob, np.array([symmetry], np.int64))
    return spatial[0], glob[0]


def random_game(size: int, rng: np.random.Generator, komi: float = 0.5, max_moves=None):
    """A random legal game, centre points preferred: a pass now and then after a few moves,
    two passes end it."""
    game = GameState(size, size, komi, PRESETS["chinese"])
    max_moves = max_moves or 3 * size * size
    records = []  # (spatial, global, action, legal mask, colour)
    while not game.is_over() and len(game.moves) < max_moves:
        legal = game.legal_mask(game.to_move)
        if not legal[:-1].any() or (len(game.moves) > size and rng.random() < 0.08):
            action = size * size
        else:
            p = preference_policy(legal, size, -1.5)[:-1]
            action = int(rng.choice(size * size, p=p / p.sum()))
        spatial, glob = features(game)
        records.append((spatial, glob, action, legal, game.to_move))
        point = PASS_POINT if action == size * size else point_from_xy(action % size,
                                                                       action // size, size)
        assert game.play(game.to_move, point) == MOVE_OK
    return game, records


def final_ownership(game: GameState) -> np.ndarray:
    """Black's area ownership (+1 black, -1 white, 0 neutral) per action, row-major."""
    area = np.zeros(game.board.shape[1], np.int64)
    calculate_area(game.board, area, True, True, True, game.rules.suicide)
    own = np.zeros(game.width * game.height, np.float32)
    for y in range(game.height):
        for x in range(game.width):
            p = point_from_xy(x, y, game.width)
            if area[p]:
                a = action_from_point(p, game.width, game.height)
                own[a] = 1.0 if area[p] == BLACK else -1.0
    return own


def random_game_rows(size: int, games: int, seed: int, teacher: bool = False) -> Rows:
    """Rows of `games` random games on a size x size board (every 4th row policy weight 0)."""
    rng = np.random.default_rng(seed)
    area = size * size
    cols = {k: [] for k in ("spatial", "global", "policy", "value", "score", "ownership",
                            "teacher_policy", "teacher_value")}
    for _ in range(games):
        game, records = random_game(size, rng)
        black_score = game.score()
        black_own = final_ownership(game)
        for spatial, glob, action, legal, color in records:
            sign = 1.0 if color == BLACK else -1.0
            policy = np.zeros(area + 1, np.float32)
            policy[action] = 1.0
            margin = sign * black_score
            value = np.array([margin > 0, margin < 0, 0.0], np.float32)
            if margin == 0:
                value[:2] = 0.5
            cols["spatial"].append(spatial)
            cols["global"].append(glob)
            cols["policy"].append(policy)
            cols["value"].append(value)
            cols["score"].append(margin)
            cols["ownership"].append(sign * black_own)
            cols["teacher_policy"].append(preference_policy(legal, size, 1.0))
            cols["teacher_value"].append(0.8 * value + 0.1 * np.array([1, 1, 0], np.float32))
    n = len(cols["policy"])
    weight = np.ones(n, np.float32)
    weight[::4] = 0.0
    score = np.array(cols["score"], np.float32)
    ownership = np.array(cols["ownership"], np.float32)
    extra = {}
    if teacher:
        extra = {"teacher_policy": np.array(cols["teacher_policy"]),
                 "teacher_value": np.array(cols["teacher_value"]),
                 "teacher_score": 0.5 * score, "teacher_ownership": 0.5 * ownership}
    return Rows(size, size, NUM_SPATIAL, FEATURE_SET, pack_spatial(np.array(cols["spatial"])),
                np.array(cols["global"]), np.array(cols["policy"]), weight,
                np.array(cols["value"]), score, ownership, extra)


def preference_policy(legal: np.ndarray, size: int, slope: float) -> np.ndarray:
    """A soft policy over the legal moves with logits slope * distance from the centre (pass a
    little): slope < 0 prefers the centre, slope > 0 the edges."""
    y, x = np.divmod(np.arange(size * size), size)
    centre = (size - 1) / 2
    logits = np.append(slope * np.hypot(y - centre, x - centre), -3.0)
    p = np.where(legal, np.exp(logits - logits.max()), 0.0)
    return (p / p.sum()).astype(np.float32)
