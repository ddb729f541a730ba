"""Self-play and teacher games: the rows they record, checked against independent replays.

Games are replayed move by move in the slow reference rules (tests/reference_rules.py), whose
Tromp-Taylor area is the expected final ownership and score; teacher outputs are checked
against a fresh evaluation of the replayed position. Random-playout games on 5x5 need nothing
outside the repository; the teacher tests use the KataGo net in ../shared.
"""

from pathlib import Path

import numpy as np
import pytest
from reference_rules import RefGame

from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import point_from_action, xy_from_point
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.training.chunks import load_chunks, read_manifest
from dosaku.training.selfplay import games_in, generate, main
from dosaku.training.selfplay_game import GameSpec, Players, SelfPlaySettings, play_game

ROOT = Path(__file__).resolve().parents[1]
NET = ROOT.parent / "shared" / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
needs_net = pytest.mark.skipif(not NET.exists(), reason=f"needs the KataGo net {NET} "
                                                        "(../shared/models beside the checkout)")
FAST = SelfPlaySettings(visits=12, fast_visits=3, full_search_prob=0.5, resign_threshold=0,
                        temperature_moves=100)


def replay(result, komi):
    """The game in the reference rules: (RefGame, [colour to move before each move])."""
    ref = RefGame(result.size, result.size)
    movers = []
    for color, point in result.moves:
        movers.append(color)
        ref.play(color, None if point == PASS_POINT else xy_from_point(point, result.size))
    return ref, movers


def reference_ownership(ref):
    """Tromp-Taylor owner of every point (+1 Black, -1 White, 0 neither), row-major."""
    size = ref.board.width
    own = np.zeros((size, size))
    for (x, y) in ref.board.points():
        c = ref.board.get(x, y)
        own[y, x] = 1.0 if c == BLACK else (-1.0 if c == WHITE else 0.0)
    for region, reached in ref.regions():
        if len(reached) == 1:
            for (x, y) in region:
                own[y, x] = 1.0 if BLACK in reached else -1.0
    return own.reshape(-1)


def check_rows(result, komi):
    """Everything a trainer relies on, against the replayed game."""
    rows, size = result.rows, result.size
    area = size * size
    ref, movers = replay(result, komi)
    assert not result.resigned and len(rows) == len(result.moves)
    assert result.black_score == ref.area_score(komi)
    sign = np.where(np.array(movers) == BLACK, 1.0, -1.0)
    np.testing.assert_array_equal(rows.ownership, sign[:, None] * reference_ownership(ref))
    np.testing.assert_array_equal(rows.score, sign * ref.area_score(komi))
    margin = rows.score
    np.testing.assert_array_equal(rows.value[:, 0], np.where(margin > 0, 1, (margin == 0) * 0.5))
    np.testing.assert_array_equal(rows.value[:, 1], np.where(margin < 0, 1, (margin == 0) * 0.5))
    np.testing.assert_array_equal(rows.value[:, 2], 0)
    assert rows.policy.shape == (len(rows), area + 1)
    np.testing.assert_allclose(rows.policy.sum(axis=1), 1.0, atol=1e-5)
    assert set(np.unique(rows.policy_weight)) <= {0.0, 1.0}
    planes = rows.spatial()
    assert planes.shape == (len(rows), 22, size, size)
    assert np.all(planes[:, 0] == 1)  # the on-board plane
    # Planes 1 and 2 are the mover's and the opponent's stones before each move.
    game = RefGame(size, size)
    for i, (color, point) in enumerate(result.moves):
        stones = np.array([[game.board.get(x, y) for x in range(size)] for y in range(size)])
        np.testing.assert_array_equal(planes[i, 1], stones == color)
        np.testing.assert_array_equal(planes[i, 2], stones == 3 - color)
        np.testing.assert_allclose(rows.global_in[i, 5] * 20, komi if color == WHITE else -komi)
        action = size * size if point == PASS_POINT else \
            xy_from_point(point, size)[1] * size + xy_from_point(point, size)[0]
        if rows.policy_weight[i] == 1 and point != PASS_POINT:
            assert rows.policy[i, action] > 0  # a searched move had visits
        game.play(color, None if point == PASS_POINT else xy_from_point(point, size))


def test_random_playout_games_on_5x5_give_valid_rows():
    players = Players()
    for n in range(2):
        result = play_game(players, GameSpec(n, 5, seed=10 + n), FAST)
        assert result.moves[-1][1] == PASS_POINT and result.moves[-2][1] == PASS_POINT
        check_rows(result, komi=7.0)
        assert 0 < result.rows.policy_weight.sum() < len(result.rows)  # playout cap randomization
        assert not result.rows.teacher


def test_gumbel_games_record_completed_q_targets():
    settings = SelfPlaySettings(gumbel=True, gumbel_k=4, gumbel_simulations=8, fast_visits=2,
                                full_search_prob=1.0, resign_threshold=0)
    result = play_game(Players(), GameSpec(0, 5, seed=3), settings)
    check_rows(result, komi=7.0)
    # Completed-Q targets give every legal move some probability, unlike 8 visit counts.
    assert np.mean(np.count_nonzero(result.rows.policy, axis=1)) > 8


def test_resignation_ends_the_rows_and_playouts_count_false_resignations():
    eager = SelfPlaySettings(visits=8, fast_visits=4, full_search_prob=1.0, resign_threshold=0.99,
                             resign_consecutive=1, resign_min_move=0, resign_playout_share=0.0)
    resigned = play_game(Players(), GameSpec(0, 5, seed=4), eager)
    assert resigned.resigned in (BLACK, WHITE) and not resigned.would_resign
    n = len(resigned.rows)
    assert 1 <= n < len(resigned.moves)  # rows stop; fast searches finish the game unrecorded
    ref, movers = replay(resigned, 7.0)
    assert movers[n - 1] == resigned.resigned
    sign = np.where(np.array(movers[:n]) == BLACK, 1.0, -1.0)
    np.testing.assert_array_equal(resigned.rows.score, sign * ref.area_score(7.0))
    played_out = play_game(Players(), GameSpec(0, 5, seed=4),
                           SelfPlaySettings(**{**eager.__dict__, "resign_playout_share": 1.0}))
    assert not played_out.resigned and played_out.would_resign == resigned.resigned
    assert played_out.moves[:n] == resigned.moves[:n]  # the same game up to the resignation
    assert len(played_out.rows) == len(played_out.moves)
    full_ref, _ = replay(played_out, 7.0)
    margin = full_ref.area_score(7.0)  # integer komi: a draw is possible, and no false resign
    winner = BLACK if margin > 0 else (WHITE if margin < 0 else 0)
    assert played_out.false_resign == (winner == played_out.would_resign)


def test_generate_resumes_without_overwriting(tmp_path):
    first = generate(tmp_path, games=1, sizes=(5,), settings=FAST, seed=7, chunk_rows=1)
    before = {e["file"]: e["sha256"] for e in read_manifest(tmp_path)["chunks"]}
    second = generate(tmp_path, games=2, sizes=(5,), settings=FAST, seed=7, chunk_rows=1)
    assert [e["file"] for e in first] == ["000001-selfplay-5x5.npz"]
    assert [e["file"] for e in second] == ["000002-selfplay-5x5.npz", "000003-selfplay-5x5.npz"]
    after = {e["file"]: e["sha256"] for e in read_manifest(tmp_path)["chunks"]}
    assert all(after[f] == sha for f, sha in before.items())
    assert games_in(tmp_path, "selfplay") == 3
    rows = load_chunks(tmp_path, log=pytest.fail)
    assert len(rows) == 3
    # Game numbers continue, so the resumed games got new seeds: no game is repeated.
    assert len({r.policy.tobytes() for r in rows}) == 3


def test_cli_games_is_the_total_in_the_folder(tmp_path):
    args = ["--out", str(tmp_path), "--sizes", "5", "--visits", "6", "--fast-visits", "2",
            "--resign-threshold", "0", "--seed", "1"]
    assert main(args + ["--games", "2"]) == 0
    assert games_in(tmp_path, "selfplay") == 2
    assert main(args + ["--games", "3"]) == 0
    assert games_in(tmp_path, "selfplay") == 3
    assert main(args + ["--games", "3"]) == 0
    assert len(read_manifest(tmp_path)["chunks"]) == 2


def test_two_ray_workers_play_exactly_the_games_asked_for(tmp_path):
    pytest.importorskip("ray")
    entries = generate(tmp_path, games=5, sizes=(5,), workers=2, seed=11, chunk_rows=1,
                       settings=SelfPlaySettings(visits=6, fast_visits=2, resign_threshold=0))
    assert sum(e["games"] for e in entries) == 5
    assert len(entries) == 5 and games_in(tmp_path, "selfplay") == 5
    assert len(load_chunks(tmp_path, log=pytest.fail)) == 5


@needs_net
@pytest.mark.parametrize("visits", [1, 4])
def test_teacher_rows_carry_the_teachers_outputs_for_each_position(visits):
    from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator, OnnxModel
    from dosaku.training.selfplay import onnx_path
    onnx = onnx_path(NET)
    settings = SelfPlaySettings(visits=visits, full_search_prob=1.0, resign_threshold=0)
    result = play_game(Players(teacher=onnx), GameSpec(0, 7, seed=5), settings)
    check_rows(result, komi=7.0)
    rows = result.rows
    reference = OnnxEvaluator(OnnxModel(onnx, threads=1), symmetry=0)
    game = GameState(7, 7, 7.0, PRESETS["chinese"])
    for i, (color, point) in enumerate(result.moves):
        batch = position_batch(game)
        direct = reference.outputs(batch)
        np.testing.assert_allclose(rows.teacher["teacher_policy"][i], direct.policy[0], atol=1e-5)
        np.testing.assert_allclose(rows.teacher["teacher_value"][i], direct.wdl[0], atol=1e-5)
        np.testing.assert_allclose(rows.teacher["teacher_score"][i], direct.lead[0], atol=1e-4)
        np.testing.assert_allclose(rows.teacher["teacher_ownership"][i], direct.ownership[0],
                                   atol=1e-5)
        if visits == 1:  # no search: the raw policy is the target, without pass before
            target = direct.policy[0].astype(np.float64)  # pass_from (a board move is legal)
            if i < round(settings.pass_from * 49) and batch.legal[0, :-1].any():
                target[-1] = 0.0
            np.testing.assert_allclose(rows.policy[i], target / target.sum(), atol=1e-5)
        assert game.play(color, point) == MOVE_OK


@needs_net
def test_branch_rows_are_teacher_labelled_positions_one_top_move_off_the_game_line():
    """With branch_share 1 every recorded position gives a branch row: the position after one
    of the player's other top moves (found here by trying every board move on a replayed
    game), with the teacher's outputs there as every target."""
    from dosaku.engine.evaluators.features import NUM_GLOBAL, NUM_SPATIAL, fill_features
    from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator, OnnxModel
    from dosaku.training.chunks import pack_spatial
    from dosaku.training.selfplay import onnx_path
    onnx = onnx_path(NET)
    top = 3
    settings = SelfPlaySettings(visits=1, full_search_prob=1.0, resign_threshold=0,
                                branch_share=1.0, branch_top=top)
    result = play_game(Players(net=onnx, teacher=onnx), GameSpec(0, 7, seed=3), settings)
    check_rows(result, komi=7.0)
    rows, branch = result.rows, result.branch_rows
    reference = OnnxEvaluator(OnnxModel(onnx, threads=1), symmetry=0)
    spatial = np.zeros((1, NUM_SPATIAL, 7, 7), np.float32)
    glob = np.zeros((1, NUM_GLOBAL), np.float32)
    game = GameState(7, 7, 7.0, PRESETS["chinese"])
    b = 0
    for i, (color, point) in enumerate(result.moves):
        others = [(float(rows.policy[i][a]), a) for a in range(49)
                  if rows.policy[i][a] > 0 and point_from_action(a, 7, 7) != point]
        found = []
        for weight, a in others:
            assert game.play(color, point_from_action(a, 7, 7)) == MOVE_OK
            batch = position_batch(game)
            game.undo()
            fill_features(batch, spatial, glob, np.zeros(1, np.int64))
            if np.array_equal(pack_spatial(spatial)[0], branch.spatial_bits[b]):
                found.append((weight, batch, glob[0].copy()))
        assert game.play(color, point) == MOVE_OK
        if not others:
            continue  # nothing to branch to
        least = sorted(others, reverse=True)[:top][-1][0]
        assert len(found) == 1, f"branch row {b} is no top move off position {i}"
        weight, batch, expect_glob = found[0]
        assert weight >= least
        np.testing.assert_array_equal(branch.global_in[b], expect_glob)
        direct = reference.outputs(batch)
        for name, want in (("policy", direct.policy[0]), ("value", direct.wdl[0]),
                           ("score", direct.lead[0]), ("ownership", direct.ownership[0])):
            np.testing.assert_allclose(getattr(branch, name)[b], want, atol=1e-4)
            np.testing.assert_allclose(branch.teacher[f"teacher_{name}"][b], want, atol=1e-4)
        assert branch.policy_weight[b] == 1.0
        b += 1
    assert b == len(branch) > len(rows) // 2


@needs_net
def test_cli_writes_branch_rows_to_their_own_folder(tmp_path):
    """--branch-out holds the branch rows (source "branch"), --out only the game rows; a branch
    share without a folder to write to is refused."""
    out, branch_out = tmp_path / "games", tmp_path / "branch"
    common = ["--teacher", str(NET), "--sizes", "7", "--visits", "1", "--seed", "4",
              "--out", str(out)]
    with pytest.raises(SystemExit):
        main(common + ["--games", "1", "--branch-share", "0.5"])
    assert main(common + ["--games", "2", "--branch-share", "0.5",
                          "--branch-out", str(branch_out)]) == 0
    games = read_manifest(out)["chunks"]
    branches = read_manifest(branch_out)["chunks"]
    assert {c["source"] for c in games} == {"teacher"} and games_in(out, "teacher") == 2
    assert {c["source"] for c in branches} == {"branch"}
    game_rows = sum(c["rows"] for c in games)
    branch_rows = sum(c["rows"] for c in branches)
    assert 0.2 * game_rows < branch_rows < 0.8 * game_rows  # about half the positions
    assert sum(len(r) for r in load_chunks(branch_out, log=pytest.fail)) == branch_rows


@pytest.mark.parametrize("gumbel", [False, True])
def test_no_pass_before_pass_from_while_another_move_is_legal(tmp_path, gumbel):
    """A random net ends its games by passing early; pass_from keeps pass out of the search
    (and out of the policy targets) until that share of the board has been played."""
    from dosaku.training.export import export_random
    net = str(export_random("b2c32", tmp_path / "random.onnx", seed=2, check_sizes=(7,)))
    base = dict(visits=8, fast_visits=4, full_search_prob=0.5, resign_threshold=0,
                gumbel=gumbel, gumbel_k=4, gumbel_simulations=8)
    first_pass = round(0.5 * 49)

    def early_passes(result):
        return [i for i, (_, point) in enumerate(result.moves[:first_pass])
                if point == PASS_POINT]

    free = [play_game(Players(net), GameSpec(n, 7, seed=20 + n),
                      SelfPlaySettings(pass_from=0.0, **base)) for n in range(4)]
    assert any(early_passes(r) for r in free)  # the behaviour the rule is there for
    for n in range(4):
        result = play_game(Players(net), GameSpec(n, 7, seed=20 + n),
                           SelfPlaySettings(pass_from=0.5, **base))
        check_rows(result, komi=7.0)
        ref = RefGame(7, 7)
        for i, (color, point) in enumerate(result.moves[:first_pass]):
            if point == PASS_POINT:  # only when no board move was legal
                assert not ref.legal_moves(color)
            else:
                assert result.rows.policy[i, -1] == 0
            ref.play(color, None if point == PASS_POINT else xy_from_point(point, 7))
