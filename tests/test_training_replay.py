"""The replay window: symmetry augmentation agrees with the engine's own symmetric features,
batches hold one board size, teacher targets are kept per row, bad chunks are skipped."""

import numpy as np
import pytest

from dosaku.engine.evaluators.features import FEATURE_SET
from dosaku.engine.rules.constants import MOVE_OK
from dosaku.engine.rules.coords import point_from_xy
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.training.chunks import Rows, pack_spatial, write_chunk
from dosaku.training.replay import Pool, ReplayWindow, rows_batch
from tests.training_rows import features, random_game_rows


def random_position(width, height, seed, plies=14):
    """A game after `plies` random legal non-pass moves."""
    rng = np.random.default_rng(seed)
    game = GameState(width, height, 7.5, PRESETS["chinese"])
    for _ in range(plies):
        legal = np.flatnonzero(game.legal_mask(game.to_move)[:-1])
        a = int(rng.choice(legal))
        assert game.play(game.to_move, point_from_xy(a % width, a // width, width)) == MOVE_OK
    return game, rng


def one_row_pool(game, next_action):
    """A pool of the game's position with the policy target `next_action` and an ownership
    target equal to its own stones (+1) and the opponent's (-1)."""
    spatial, glob = features(game)
    area = game.width * game.height
    policy = np.zeros((1, area + 1), np.float32)
    policy[0, next_action] = 1.0
    own = (spatial[1] - spatial[2]).reshape(1, -1)
    rows = Rows(game.height, game.width, spatial.shape[0], FEATURE_SET,
                pack_spatial(spatial[None]), glob[None], policy, np.ones(1, np.float32),
                np.array([[1.0, 0.0, 0.0]], np.float32), np.zeros(1, np.float32), own)
    return Pool(rows, np.zeros(1, np.float32))


@pytest.mark.parametrize("width,height,symmetries", [(5, 5, range(8)), (7, 5, range(4))])
def test_augmentation_moves_planes_and_targets_like_the_engine_symmetries(width, height,
                                                                           symmetries):
    game, rng = random_position(width, height, seed=width)
    legal = np.flatnonzero(game.legal_mask(game.to_move)[:-1])
    action = int(rng.choice(legal))
    pool = one_row_pool(game, action)
    after = GameState(width, height, 7.5, PRESETS["chinese"])
    for color, point in game.moves:
        after.play(color, point)
    after.play(game.to_move, point_from_xy(action % width, action // width, width))
    for s in symmetries:
        batch = rows_batch(pool, np.array([0]), np.array([s]))
        engine_planes, _ = features(game, s)
        np.testing.assert_array_equal(batch.spatial[0].numpy(), engine_planes, err_msg=f"sym {s}")
        # The move the policy target names is the one the next position's last-move plane shows.
        last_move_plane = features(after, s)[0][9].reshape(-1)
        assert np.flatnonzero(batch.policy[0, :-1].numpy()) == np.flatnonzero(last_move_plane)
        stones = engine_planes[1] - engine_planes[2]
        np.testing.assert_array_equal(batch.ownership[0].numpy(), stones)


def test_pass_target_stays_pass_under_every_symmetry():
    game, _ = random_position(5, 5, seed=1)
    pool = one_row_pool(game, 25)
    for s in range(8):
        batch = rows_batch(pool, np.array([0]), np.array([s]))
        assert batch.policy[0, -1] == 1.0 and batch.policy[0, :-1].sum() == 0.0


def test_batches_hold_one_board_size_in_proportion_to_rows():
    small, large = random_game_rows(5, 6, seed=1), random_game_rows(7, 2, seed=2)
    window = ReplayWindow([small, large])
    rng = np.random.default_rng(0)
    counts = {5: 0, 7: 0}
    for _ in range(300):
        batch = window.sample(rng, 8)
        size = batch.spatial.shape[-1]
        assert batch.spatial.shape == (8, 22, size, size)
        assert batch.ownership.shape == (8, size, size)
        assert batch.policy.shape == (8, size * size + 1)
        counts[size] += 1
    expected = 300 * len(small) / (len(small) + len(large))
    assert abs(counts[5] - expected) < 4 * np.sqrt(expected)


def test_teacher_targets_are_kept_per_row_and_zero_elsewhere():
    plain, taught = random_game_rows(5, 2, seed=5), random_game_rows(5, 2, seed=6, teacher=True)
    window = ReplayWindow([plain, taught])
    pool = window.pools[(5, 5)]
    n_plain = len(plain)
    np.testing.assert_array_equal(pool.has_teacher, [0.0] * n_plain + [1.0] * len(taught))
    batch = rows_batch(pool, np.arange(len(pool.rows)))
    assert batch.teacher_policy[:n_plain].abs().sum() == 0.0
    for key in ("teacher_policy", "teacher_score"):
        np.testing.assert_allclose(getattr(batch, key)[n_plain:].numpy(), taught.teacher[key])


def test_corrupt_and_foreign_chunks_are_skipped_with_a_message(tmp_path):
    good = random_game_rows(5, 3, seed=7)
    write_chunk(tmp_path, "good.npz", good, "test")
    write_chunk(tmp_path, "bad.npz", random_game_rows(7, 2, seed=8), "test")
    data = bytearray((tmp_path / "bad.npz").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / "bad.npz").write_bytes(bytes(data))
    foreign = random_game_rows(9, 1, seed=9)
    foreign.feature_set = "katago-v5"
    write_chunk(tmp_path, "foreign.npz", foreign, "test")
    messages = []
    window = ReplayWindow.load([tmp_path], None, messages.append)
    assert window.sizes == [(5, 5)] and len(window) == len(good)
    assert any("bad.npz" in m and "sha256" in m for m in messages), messages
    assert any("katago-v5" in m for m in messages), messages
