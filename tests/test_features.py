"""V7 input features: plane- and global-level checks on hand positions and KataGo's reference
positions (katago-network.md §3, §5.4)."""

import threading

import numpy as np
import pytest

from dosaku.engine.evaluators.evaluator import PositionBatch
from dosaku.engine.evaluators.features import NUM_GLOBAL, NUM_SPATIAL, _komi_wave, fill_features
from dosaku.engine.evaluators.positions import batch_row_from_game, position_batch
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import parse_vertex, point_from_action, xy_from_point
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS, rules_by_name
from tests.boards import board_from_diagram


def game_of(moves, size=9, rules="chinese", komi=7.5, width=None):
    width = width or size
    g = GameState(width, size, komi, rules_by_name(rules))
    for text in moves.split():
        color = BLACK if text[0] == "B" else WHITE
        assert g.play(color, parse_vertex(text[1:], width, size)) == MOVE_OK, text
    return g


def features(game, sym=0):
    batch = position_batch(game)
    spatial = np.zeros((1, NUM_SPATIAL, game.height, game.width), dtype=np.float32)
    glob = np.zeros((1, NUM_GLOBAL), dtype=np.float32)
    fill_features(batch, spatial, glob, [sym])
    return spatial[0], glob[0]


def at(game, *vertices):
    """Plane of 0/1 with ones at the vertices."""
    plane = np.zeros((game.height, game.width), dtype=np.float32)
    for v in vertices:
        p = parse_vertex(v, game.width, game.height)
        x, y = xy_from_point(p, game.width)
        plane[y, x] = 1.0
    return plane


@pytest.fixture
def reference(katago_reference):
    """reference(id): the GameState of a KataGo reference position (tests/data)."""
    def game(pos_id):
        pos = katago_reference[pos_id]
        return game_of(" ".join(c + v for c, v in pos["moves"]), pos["board_size"],
                       pos["rules"], pos["komi"])
    return game


# ---------------------------------------------------------------- basic planes and globals

def test_two_moves_chinese_black_to_move():
    g = game_of("BC3 WC6")
    s, gl = features(g)
    assert np.array_equal(s[0], np.ones((9, 9)))
    assert np.array_equal(s[1], at(g, "C3")) and np.array_equal(s[2], at(g, "C6"))
    assert np.array_equal(s[9], at(g, "C6")) and np.array_equal(s[10], at(g, "C3"))
    assert not s[3:9].any() and not s[11:18].any() and not s[20:].any()
    assert np.array_equal(s[18], at(g, "C3")) and np.array_equal(s[19], at(g, "C6"))
    expected = np.zeros(19, dtype=np.float32)
    expected[5], expected[18] = -0.375, -0.5
    assert np.array_equal(gl, expected)


def test_liberty_planes_count_either_color():
    g = game_of("BA1 WB1 BC1 WA2")  # White A2 captures A1
    s, _ = features(g)
    # After W A2 captures A1: white B1 (libs A1, B2) 2, black C1 (D1, C2) 2, white A2 (A1, A3,
    # B2) 3.
    assert np.array_equal(s[4], at(g, "B1", "C1")) and np.array_equal(s[5], at(g, "A2"))
    assert not s[3].any()


def test_rule_globals_for_presets():
    cases = {"chinese": (0, 0, 0, 0, 0, 0), "tromp-taylor": (1, 0.5, 1, 0, 0, 0),
             "aga": (1, -0.5, 0, 0, 0, 0), "new-zealand": (1, -0.5, 1, 0, 0, 0),
             "japanese": (0, 0, 0, 1, 1, 0), "stone-scoring": (0, 0, 0, 0, 1, 1)}
    for name, want in cases.items():
        _, gl = features(game_of("BE5", rules=name))
        assert tuple(gl[6:12]) == want, name


def test_territory_rules_have_no_area_planes_or_parity_wave():
    s, gl = features(game_of("BE5 WC3", rules="japanese", komi=6.5))
    assert not s[18:20].any() and gl[18] == 0.0 and gl[5] == np.float32(-6.5 / 20)


def test_handicap_bonus_enters_self_komi_under_chinese_rules():
    g = game_of("BD4 BF6", rules="chinese", komi=0.5)  # two black stones first = handicap 2
    assert g.handicap == 2
    _, gl = features(g)
    assert gl[5] == np.float32(2.5 / 20)  # White to move: komi 0.5 + bonus 2
    _, gl = features(game_of("BD4 BF6", rules="tromp-taylor", komi=0.5))
    assert gl[5] == np.float32(0.5 / 20)


@pytest.mark.parametrize("komi,area,want", [
    (7.5, 81, 0.5), (-7.5, 81, -0.5), (7.0, 81, 0.0), (-7.0, 81, 0.0), (6.5, 81, -0.5),
    (-6.5, 81, 0.5), (5.5, 81, 0.5), (7.5, 70, -0.5), (-7.5, 70, 0.5), (7.0, 70, 0.0),
    (8.25, 70, 0.25), (6.25, 81, -0.25),
    (6.5, 70, 0.5), (0.0, 70, 0.0)])
def test_komi_parity_wave(komi, area, want):
    assert _komi_wave(np.float32(komi), area) == np.float32(want)


def test_komi_globals_and_clipping():
    _, gl = features(game_of("BE5"))  # White to move
    assert gl[5] == 0.375 and gl[18] == 0.5
    _, gl = features(game_of("BE5", komi=150.0))
    assert gl[5] == np.float32((81 + 20) / 20)


# ---------------------------------------------------------------- ko and superko (plane 6)

def test_simple_ko_point_then_cleared_by_a_pass():
    moves = "BC5 WD5 BD6 WE6 BD4 WE4 BG8 WF5 BE5"  # Black E5 takes the ko at D5
    g = game_of(moves)
    s, _ = features(g)
    assert np.array_equal(s[6], at(g, "D5"))
    g.play(WHITE, parse_vertex("pass", 9, 9))
    s, _ = features(g)
    assert not s[6].any()


def test_positional_superko_ban_under_tromp_taylor_only():
    moves = "BA2 WB2 BB1 WC2 BC1 WA1"  # W A1 takes two stones; B B1 would repeat a position
    tt = game_of(moves, size=3, rules="tromp-taylor")
    s, _ = features(tt)
    assert np.array_equal(s[6], at(tt, "B1"))
    ch = game_of(moves, size=3, rules="chinese")
    s, _ = features(ch)
    assert not s[6].any()


def test_reference_ko_positions(reference):
    g = reference("ko9_white_banned")
    s, _ = features(g)
    assert np.array_equal(s[6], at(g, "D5"))
    s, _ = features(reference("ko9_after_threat"))
    assert not s[6].any()


# ---------------------------------------------------------------- history and passes

def test_consecutive_moves_of_one_color_stop_the_history():
    g = game_of("BD4 BF6 WE5 BC3")  # White to move: C3 opp, E5 pla, F6 opp, D4 not pla
    s, gl = features(g)
    assert np.array_equal(s[9], at(g, "C3")) and np.array_equal(s[10], at(g, "E5"))
    assert np.array_equal(s[11], at(g, "F6"))
    assert not s[12].any() and not s[13].any()
    g = game_of("BD4 BF6")
    s, _ = features(g)
    assert np.array_equal(s[9], at(g, "F6")) and not s[10:14].any()


def test_earlier_pass_sets_a_pass_global_not_a_plane():
    g = game_of("BD4 Wpass BG6 WC3")  # Black to move
    s, gl = features(g)
    assert np.array_equal(s[9], at(g, "C3")) and np.array_equal(s[10], at(g, "G6"))
    assert not s[11].any() and gl[2] == 1.0 and np.array_equal(s[12], at(g, "D4"))
    assert gl[14] == 0.0 and tuple(gl[:5]) == (0, 0, 1, 0, 0)


def test_opponent_pass_hides_history_under_chinese_but_not_tromp_taylor():
    s, gl = features(game_of("BD4 WC3 BE5 Wpass", rules="chinese"))
    assert not s[9:14].any() and not gl[:5].any() and gl[14] == 0.0
    g = game_of("BD4 WC3 BE5 Wpass", rules="tromp-taylor")
    s, gl = features(g)
    assert gl[0] == 1.0 and not s[9].any() and gl[14] == 1.0
    assert np.array_equal(s[10], at(g, "E5")) and np.array_equal(s[11], at(g, "C3"))
    assert np.array_equal(s[12], at(g, "D4"))


def test_finished_game_shows_only_the_last_pass():
    s, gl = features(game_of("BD4 WC3 Bpass Wpass"))
    assert tuple(gl[:5]) == (1, 0, 0, 0, 0) and not s[9:14].any() and gl[14] == 1.0


# ---------------------------------------------------------------- ladders (planes 14-17)

def test_reference_ladder_attack_planes(reference):
    g = reference("ladder_working_b2m")  # GNU Go: attack D4 -> 1 C4
    s, _ = features(g)
    assert np.array_equal(s[14], at(g, "D4")) and np.array_equal(s[17], at(g, "C4"))
    g = reference("ladder_broken_b2m")  # GNU Go: attack D4 -> 0
    s, _ = features(g)
    assert not s[14].any() and not s[17].any()


def test_reference_ladder_planes_after_the_atari(reference):
    g = reference("ladder_working_w_atari")  # GNU Go: defend D4 -> 0
    s, _ = features(g)
    assert np.array_equal(s[14], at(g, "D4")) and not s[17].any()
    assert np.array_equal(s[15], at(g, "D4")) and np.array_equal(s[16], at(g, "D4"))
    g = reference("ladder_broken_w_atari")  # GNU Go: defend D4 -> 1 D5
    s, _ = features(g)
    assert not s[14].any() and not s[15].any()
    # Two turns ago White's P15 breaker was not yet on the board: the ladder worked then.
    assert np.array_equal(s[16], at(g, "D4"))


def test_reference_running_ladders(reference):
    g = reference("ladder_working_run")
    s, _ = features(g)
    assert np.array_equal(s[14], at(g, "D4", "D5", "E5", "E6", "F6"))
    s, _ = features(reference("ladder_broken_run"))
    assert not s[14].any()


def test_working_moves_only_against_opponent_chains(reference):
    g = reference("ladder_working_b2m")
    g.play(BLACK, parse_vertex("pass", 19, 19))  # now White to move: D4 is pla's own chain
    s, _ = features(g)
    assert np.array_equal(s[14], at(g, "D4")) and not s[17].any()


def test_ladder_history_boards_follow_included_turns(reference):
    # After a Chinese opponent pass no history is included: planes 15/16 use the current board.
    g = reference("ladder_broken_w_atari")
    g.play(WHITE, parse_vertex("K10", 19, 19))
    g.play(BLACK, parse_vertex("pass", 19, 19))
    s, _ = features(g)
    assert not s[9:14].any()
    assert np.array_equal(s[15], s[14]) and np.array_equal(s[16], s[14])


# ---------------------------------------------------------------- symmetries and batching

def random_game(rng, size, n_moves, width=None):
    width = width or size
    g = GameState(width, size, 7.5, PRESETS["chinese"])
    for _ in range(n_moves):
        legal = np.flatnonzero(g.legal_mask(g.to_move)[:-1])
        if len(legal) == 0 or rng.random() < 0.05:
            g.play(g.to_move, B.PASS_POINT)
        else:
            g.play(g.to_move, point_from_action(int(rng.choice(legal)), g.width, g.height))
    return g


def move_plane(plane, sym):
    """Independent re-statement of §3.10: new[sym(x, y)] = old[x, y]."""
    h, w = plane.shape
    out = np.zeros_like(plane if (sym < 4 or h != w) else plane.T)
    for y in range(h):
        for x in range(w):
            nx, ny = (w - 1 - x if sym & 2 else x), (h - 1 - y if sym & 1 else y)
            if sym & 4 and h == w:
                nx, ny = ny, nx
            out[ny, nx] = plane[y, x]
    return out


@pytest.mark.parametrize("size,width", [(9, 9), (10, 7)])
def test_symmetry_moves_every_plane(size, width):
    rng = np.random.default_rng(size)
    for trial in range(6):
        g = random_game(rng, size, 40 + 5 * trial, width)
        base, gl0 = features(g, 0)
        for sym in range(8):
            s, gl = features(g, sym)
            assert np.array_equal(gl, gl0)
            for c in range(NUM_SPATIAL):
                assert np.array_equal(s[c], move_plane(base[c], sym)), (sym, c)


def test_inverse_symmetry_round_trip():
    from dosaku.engine.evaluators.onnx_evaluator import (
        apply_symmetry,
        undo_symmetry,
        undo_symmetry_policy,
    )
    rng = np.random.default_rng(5)
    planes = rng.random((3, 9, 9))
    for sym in range(8):
        moved = np.stack([move_plane(p, sym) for p in planes])
        assert np.array_equal(apply_symmetry(planes, sym), moved)
        assert np.array_equal(undo_symmetry(moved, sym), planes)
        policy = np.concatenate([moved.reshape(3, -1), np.ones((3, 1))], axis=1)
        back = undo_symmetry_policy(policy, sym, 9, 9)
        assert np.array_equal(back[:, :-1].reshape(3, 9, 9), planes) and (back[:, -1] == 1).all()


def test_batch_equals_single_rows():
    rng = np.random.default_rng(3)
    games = [random_game(rng, 9, n) for n in (0, 1, 7, 20, 35, 50, 61, 80)]
    batch = PositionBatch(8, 9, 9, 7.5, PRESETS["chinese"])
    for i, g in enumerate(games):
        batch_row_from_game(batch, i, g)
    batch.count = 8
    syms = np.arange(8)
    spatial = np.zeros((8, NUM_SPATIAL, 9, 9), dtype=np.float32)
    glob = np.zeros((8, NUM_GLOBAL), dtype=np.float32)
    fill_features(batch, spatial, glob, syms)
    for i, g in enumerate(games):
        s, gl = features(g, int(syms[i]))
        assert np.array_equal(spatial[i], s) and np.array_equal(glob[i], gl)


def test_set_up_position_without_history():
    # KataGo's runNNOnTinyBoard inputs: planes 0,1,2,5,18,19 and g5, g6, g7, g8, g18 only.
    rows = [".....", "...x.", "..o..", ".xxo.", "....."]
    batch = PositionBatch(1, 5, 5, 7.5, PRESETS["tromp-taylor"])
    batch.boards[0] = board_from_diagram(rows)
    batch.history_boards[0, :] = batch.boards[0]
    batch.to_move[0] = WHITE
    B.legal_mask(batch.boards[0], WHITE, True, batch.legal[0])
    batch.count = 1
    spatial = np.zeros((1, NUM_SPATIAL, 5, 5), dtype=np.float32)
    glob = np.zeros((1, NUM_GLOBAL), dtype=np.float32)
    fill_features(batch, spatial, glob, [0])
    nonzero = [c for c in range(NUM_SPATIAL) if spatial[0, c].any()]
    assert nonzero == [0, 1, 2, 5, 18, 19]
    want = np.zeros(19, dtype=np.float32)
    want[[5, 6, 7, 8, 18]] = [0.375, 1.0, 0.5, 1.0, 0.5]
    assert np.array_equal(glob[0], want)


def test_threads_filling_ladder_features_at_once_get_the_sequential_planes(reference):
    """The search's worker threads fill features concurrently (fill_batch releases the GIL):
    each thread needs its own ladder scratch memory."""
    games = [reference(i) for i in ("ladder_working_run", "ladder_broken_run",
                                    "ladder_working_w_atari", "ladder_broken_w_atari")]

    def fill():
        batch = PositionBatch(len(games), 19, 19, 7.5, games[0].rules)
        for i, g in enumerate(games):
            batch_row_from_game(batch, i, g)
        batch.count = len(games)
        spatial = np.zeros((len(games), NUM_SPATIAL, 19, 19), np.float32)
        glob = np.zeros((len(games), NUM_GLOBAL), np.float32)
        for _ in range(30):
            fill_features(batch, spatial, glob, np.arange(len(games)))
        return spatial

    expected = fill()
    results = []
    threads = [threading.Thread(target=lambda: results.append(fill()), daemon=True)
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)  # shared scratch memory can send a ladder search into a loop
    assert len(results) == 2, "a thread filling features did not finish"
    assert all(np.array_equal(got, expected) for got in results)
