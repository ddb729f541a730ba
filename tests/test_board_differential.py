"""Random games played move by move on the engine and on the slow reference, compared each move.

Games are biased towards captures, ataris and ko (retakes), with some passes and some
non-alternating moves; rules vary over ko rule and suicide. Compared after every move: stone
colours, chains (size, liberties, ring structure), empty list, incremental hash, ko point,
prisoners and captures, legality masks (board kernel under simple ko, GameState under the game's
ko rule), refusal codes of illegal moves; hashes are equal exactly when positions are; undo
restores the board arrays exactly; area scores agree at the end.

DOSAKU_SMALL=1 (set by the no-JIT run) shrinks the game counts.
"""

import os
import random

import numpy as np
import pytest

from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import (
    BLACK,
    MOVE_KO,
    MOVE_OCCUPIED,
    MOVE_OK,
    MOVE_SUICIDE,
    MOVE_SUPERKO,
    PASS_POINT,
    WHITE,
)
from dosaku.engine.rules.coords import point_from_xy
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import Rules, score_position
from tests.boards import assert_board_matches, ko_of
from tests.reference_rules import (
    EMPTY,
    KO,
    OCCUPIED,
    OK,
    SUICIDE,
    SUPERKO,
    RefBoard,
    RefGame,
    other,
)

SMALL = os.environ.get("DOSAKU_SMALL") == "1"

ERROR_CODES = {OK: MOVE_OK, OCCUPIED: MOVE_OCCUPIED, KO: MOVE_KO, SUICIDE: MOVE_SUICIDE,
               SUPERKO: MOVE_SUPERKO}


def mask_points(mask, width, height):
    """Set of (x, y) whose action is marked in a legal mask (pass excluded)."""
    return {(a % width, a // width) for a in np.flatnonzero(mask[:width * height])}


def choose_move(ref, color, rng):
    """A legal move, preferring captures (ko retakes included) and ataris; rarely a pass."""
    if rng.random() < 0.03:
        return None
    b = ref.board
    chains = b.chain_map()
    candidates, weights = [], []
    for p in b.points():
        if b.get(*p) != EMPTY:
            continue
        w = 1.0
        for q in b.neighbours(*p):
            if b.get(*q) == other(color):
                libs = len(chains[q][1])
                w += 30.0 if libs == 1 else (4.0 if libs == 2 else 0.0)
        if ref.ko is not None and ref.ko[0] == p:
            w += 10.0
        candidates.append(p)
        weights.append(w)
    while candidates:
        i = rng.choices(range(len(candidates)), weights)[0]
        if ref.error(color, candidates[i]) == OK:
            return candidates[i]
        del candidates[i], weights[i]
    return None


def legal_set(errors, superko):
    allowed = (OK,) if superko else (OK, SUPERKO)
    return {p for p, e in errors.items() if e in allowed}


def compare_masks(gs, errors, width, height, full_rule):
    """Board-kernel masks (simple ko) and GameState masks (game's ko rule) for both colours."""
    mask = np.zeros(width * height + 1, dtype=np.bool_)
    for c in (BLACK, WHITE):
        B.legal_mask(gs.board, c, gs.rules.suicide, mask)
        assert mask[-1]
        assert mask_points(mask, width, height) == legal_set(errors[c], False), \
            f"board legal_mask for colour {c}"
        for (x, y), e in errors[c].items():
            p = point_from_xy(x, y, width)
            assert B.is_legal(gs.board, p, c, gs.rules.suicide) == (e in (OK, SUPERKO))
        if full_rule:
            gmask = gs.legal_mask(c)
            assert gmask[-1]
            assert mask_points(gmask, width, height) == legal_set(errors[c], True), \
                f"GameState.legal_mask ({gs.rules.ko}) for colour {c}"


def check_refusal(gs, errors, color, width, rng):
    """An illegal move (when there is one) is refused with the reference's reason, no change."""
    bad = [(p, e) for p, e in errors.items() if e != OK]
    if not bad:
        return
    rare = [(p, e) for p, e in bad if e != OCCUPIED]
    (x, y), reason = rng.choice(rare if rare and rng.random() < 0.8 else bad)
    before = gs.board.copy()
    n_moves = len(gs.moves)
    point = point_from_xy(x, y, width)
    assert gs.move_error(color, point) == ERROR_CODES[reason]
    assert gs.play(color, point) == ERROR_CODES[reason]
    assert np.array_equal(gs.board, before) and len(gs.moves) == n_moves


def play_game(width, height, ko_rule, suicide, rng, max_moves, mask_every=1, superko_masks=True):
    rules = Rules(ko=ko_rule, suicide=suicide)
    komi = rng.choice([0.0, 0.5, 6.5, 7.0])
    gs = GameState(width, height, komi=komi, rules=rules)
    ref = RefGame(width, height, ko_rule, suicide)
    by_hash, by_key = {}, {}
    boards_before = []
    color = BLACK
    passes = 0
    stats = {"captures": 0, "ko": 0, "suicide": 0, "moves": 0}

    def check_position(ply):
        assert_board_matches(gs.board, ref.board)
        assert ko_of(gs.board) == ref.ko
        assert gs.prisoners(BLACK) == ref.prisoners[BLACK]
        assert gs.prisoners(WHITE) == ref.prisoners[WHITE]
        h, key = gs.stone_hash, ref.board.key()
        assert by_hash.setdefault(h, key) == key, "two positions share a hash"
        assert by_key.setdefault(key, h) == h, "one position has two hashes"
        if ref.ko is not None:
            # the banned retake would recreate the position before the last move
            (kx, ky), kc = ref.ko
            trial = ref.board.copy()
            trial.place(kc, kx, ky)
            assert trial.key() == ref.history[-2][0]
        if ply % mask_every == 0 or ref.ko is not None:
            errors = {BLACK: ref.errors(BLACK), WHITE: ref.errors(WHITE)}
            compare_masks(gs, errors, width, height, superko_masks)
            return errors
        return None

    for ply in range(max_moves):
        errors = check_position(ply)
        if errors is not None and rng.random() < 0.3:
            check_refusal(gs, errors[color], color, width, rng)
        move = choose_move(ref, color, rng)
        point = PASS_POINT if move is None else point_from_xy(*move, width)
        boards_before.append(gs.board.copy())
        ko_before = ref.ko
        prisoners_before = dict(ref.prisoners)
        captured = ref.play(color, move)
        assert gs.play(color, point) == MOVE_OK
        stats["moves"] += 1
        stats["captures"] += captured > 0
        stats["ko"] += ref.ko is not None
        stats["suicide"] += ref.prisoners[other(color)] > prisoners_before[other(color)]
        if ko_before is not None and (move, color) == ko_before:
            raise AssertionError("a ko-banned point was chosen")
        # undo now and then: the board arrays come back exactly, then the move is replayed
        if rng.random() < 0.1:
            assert gs.undo()
            ref.undo()
            assert np.array_equal(gs.board, boards_before[-1])
            check_position(ply)
            assert gs.play(color, point) == MOVE_OK
            assert ref.play(color, move) == captured
        passes = passes + 1 if move is None else 0
        if passes >= 2:
            break
        color = color if rng.random() < 0.04 else other(color)
    check_position(0)

    # area score of the final position
    black, white = ref.area()
    assert B.area_counts(gs.board) == (black, white)
    assert score_position(gs.board, rules, komi, 0) == pytest.approx(black - white - komi)
    # undo everything: each earlier board comes back bit for bit
    for before in reversed(boards_before):
        assert gs.undo()
        assert np.array_equal(gs.board, before)
    assert not gs.undo()
    assert gs.stone_hash == 0
    return stats


def run_games(width, height, games, seed, max_moves, **kw):
    rng = random.Random(seed)
    total = {"captures": 0, "ko": 0, "suicide": 0, "moves": 0}
    for g in range(games):
        ko_rule = ("simple", "positional", "situational")[g % 3]
        suicide = (g // 3) % 2 == 1
        stats = play_game(width, height, ko_rule, suicide, rng, max_moves, **kw)
        for k in total:
            total[k] += stats[k]
    return total


def test_random_games_5x5():
    total = run_games(5, 5, 30 if SMALL else 1000, seed=1, max_moves=40, mask_every=3)
    # the bias really produces the situations under test
    assert total["captures"] > total["moves"] // 20
    assert total["ko"] > 0 and total["suicide"] > 0


def test_random_games_rectangular():
    total = run_games(7, 4, 6 if SMALL else 40, seed=2, max_moves=100, mask_every=2)
    assert total["captures"] > 0


@pytest.mark.skipif(SMALL, reason="kept out of the no-JIT run for time")
def test_random_games_9x9():
    total = run_games(9, 9, 60, seed=3, max_moves=200, mask_every=8)
    assert total["captures"] > total["moves"] // 30 and total["ko"] > 0


@pytest.mark.skipif(SMALL, reason="kept out of the no-JIT run for time")
def test_random_games_19x19():
    total = run_games(19, 19, 6, seed=4, max_moves=400, mask_every=40, superko_masks=False)
    assert total["captures"] > 0


def test_random_playouts_leave_consistent_boards():
    """random_playout ends with a consistent board: chains, hash and empties match the reference."""
    B.seed_rng(7)
    for size, n in ((5, 20), (9, 10)) if SMALL else ((5, 200), (9, 60), (19, 10)):
        for i in range(n):
            b = B.new_board(size, size)
            moves = B.random_playout(b, BLACK, i % 2 == 1, 3 * size * size)
            assert moves > 0
            ref = RefBoard(size, size)
            col = b[B.ROW_COLOR]
            for (x, y) in ref.points():
                ref.grid[y][x] = int(col[point_from_xy(x, y, size)])
            assert_board_matches(b, ref)


def test_random_playout_is_reproducible_from_the_seed():
    boards = []
    for _ in range(2):
        B.seed_rng(11)
        b = B.new_board(9, 9)
        B.random_playout(b, BLACK, False, 300)
        boards.append(b)
    assert np.array_equal(boards[0], boards[1])
