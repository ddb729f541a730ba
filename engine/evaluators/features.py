"""KataGo V7 network inputs (22 spatial planes, 19 globals) for a whole PositionBatch.

Follows katago-network.md §3 (KataGo's `NNInputs::fillRowV7`) for normal play without an
encore: side-to-move perspective, liberties, ko and superko bans, the last five moves with
KataGo's history hiding after passes, ladders on the current board and the boards one and two
turns ago, Benson areas, self-komi with its parity wave, and rule encodings. The symmetry of
each row is applied while writing, so the net sees the position already transformed; undoing
it on the outputs is engine/evaluators/onnx_evaluator.py's job.

Not modelled (never arise in our games): encore phases and territory-scoring area planes,
button Go, playout doubling advantage, and KataGo's "spight-like" repeated-pass ending.
"""

import threading

import numpy as np
from numba import njit

from dosaku.engine.rules import board as B
from dosaku.engine.rules.area import calculate_area, independent_life_area
from dosaku.engine.rules.constants import BLACK, EMPTY, NULL_POINT, PASS_POINT, WHITE
from dosaku.engine.rules.coords import action_from_xy, point_from_xy
from dosaku.engine.rules.ladder import (
    ladder_captured,
    ladder_captured_attacker_first,
    new_ladder_scratch,
)

FEATURE_SET = "katago-v7"  # the name models fed by this module declare in their metadata
NUM_SPATIAL = 22  # input planes [N, NUM_SPATIAL, H, W]
NUM_GLOBAL = 19  # global inputs [N, NUM_GLOBAL]

KO_SIMPLE, KO_POSITIONAL, KO_SITUATIONAL = 0, 1, 2
TAX_NONE, TAX_SEKI, TAX_ALL = 0, 1, 2
_LADDER_SCRATCH = threading.local()  # .by_size: (W, H) -> this thread's ladder scratch memory


def self_komi_white(komi: float, rules, handicap_stones: int) -> float:
    """White's komi as KataGo's features see it: komi plus the white handicap bonus."""
    return komi + rules.handicap_bonus(handicap_stones)


def fill_features(batch, spatial_out, global_out, symmetries, passing_hacks=False):
    """Fill rows 0..batch.count-1 of spatial_out [B, 22, H, W] and global_out [B, 19] (float32).

    symmetries[i] in 0..7 is applied to row i. The white handicap bonus of the rules comes from
    the batch's handicap_stones, which the rows' game gave it (positions.py, the search), so no
    caller can leave it out. passing_hacks: KataGo's enablePassingHacks (hide the history when a
    pass would end a game pla does not win); off for kata-raw-nn.
    """
    rules = batch.rules
    ko = {"simple": KO_SIMPLE, "positional": KO_POSITIONAL, "situational": KO_SITUATIONAL}[rules.ko]
    tax = {"none": TAX_NONE, "seki": TAX_SEKI, "all": TAX_ALL}[rules.tax]
    scratch = _LADDER_SCRATCH.__dict__.setdefault("by_size", {})  # the search's worker
    key = (batch.width, batch.height)  # threads fill features at the same time
    if key not in scratch:
        scratch[key] = new_ladder_scratch(batch.width, batch.height)
    stack, buf = scratch[key]
    fill_batch(batch.count, batch.boards, batch.history_boards, batch.recent_points,
               batch.recent_colors, batch.to_move, batch.legal,
               self_komi_white(batch.komi, rules, batch.handicap_stones), ko,
               rules.scoring == "territory", tax, rules.suicide, rules.friendly_pass_ok,
               passing_hacks, np.asarray(symmetries, dtype=np.int64), spatial_out, global_out,
               stack, buf)


@njit(cache=True)
def _suicide_illegal(b, p, color, suicide_ok):
    """KataGo's isIllegalSuicide: no liberty after the move (single-stone suicide always)."""
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    for q in (p - stride, p - 1, p + 1, p + stride):
        c = col[q]
        if c == EMPTY:
            return False
        if c == color:
            if suicide_ok or b[B.ROW_LIBS, b[B.ROW_HEAD, q]] > 1:
                return False
        elif c == 3 - color and b[B.ROW_LIBS, b[B.ROW_HEAD, q]] == 1:
            return False
    return True


@njit(cache=True)
def _ladder_plane(b, stack, buf, plane, working, opp, dst_y, dst_x, out):
    """Mark out[plane] at every stone of a ladder-captured chain of b (KataGo's iterLadders).

    If working, also mark out[17] at the first ataris that work against opp's 2-liberty chains.
    """
    w = b[B.ROW_HEADER, B.H_WIDTH]
    h = b[B.ROW_HEADER, B.H_HEIGHT]
    solved = np.zeros(b.shape[1], dtype=np.int8)  # by chain head: 0 unknown, 1 free, 2 captured
    moves = np.zeros(2, dtype=np.int64)
    for y in range(h):
        for x in range(w):
            p = point_from_xy(x, y, w)
            c = b[B.ROW_COLOR, p]
            if c != BLACK and c != WHITE:
                continue
            head = b[B.ROW_HEAD, p]
            libs = b[B.ROW_LIBS, head]
            if libs != 1 and libs != 2:
                continue
            if solved[head] == 0:
                k = 0
                if libs == 1:
                    captured = ladder_captured(b, p, True, stack, buf)
                else:
                    k = ladder_captured_attacker_first(b, p, stack, buf, moves)
                    captured = k > 0
                solved[head] = 2 if captured else 1
                if working and captured and c == opp and libs > 1:
                    for j in range(k):
                        q = moves[j]
                        out[17, dst_y[q], dst_x[q]] = 1.0
            if solved[head] == 2:
                out[plane, dst_y[p], dst_x[p]] = 1.0


@njit(cache=True)
def _komi_wave(self_komi, board_area):
    """KataGo's parity wave of the (clipped) self-komi: peaks where a draw becomes a win."""
    if board_area % 2 == 0:
        floor_k = np.floor(self_komi / np.float32(2.0)) * np.float32(2.0)
    else:
        floor_k = np.floor((self_komi - np.float32(1.0)) / np.float32(2.0)) * np.float32(2.0) \
            + np.float32(1.0)
    d = min(max(self_komi - floor_k, np.float32(0.0)), np.float32(2.0))
    if d < 0.5:
        return d
    if d < 1.5:
        return np.float32(1.0) - d
    return d - np.float32(2.0)


@njit(cache=True)
def fill_row(board, prev1, prev2, recent_points, recent_colors, pla, legal, komi_white, ko_rule,
             territory, tax, suicide, friendly_pass, passing_hacks, sym, out, glob, stack, buf,
             area):
    """Features of one position into out [22, H, W] and glob [19] (see the module docstring)."""
    out[:] = 0.0
    glob[:] = 0.0
    opp = 3 - pla
    w = board[B.ROW_HEADER, B.H_WIDTH]
    h = board[B.ROW_HEADER, B.H_HEIGHT]
    n = board.shape[1]
    col = board[B.ROW_COLOR]

    # Where each point lands under the symmetry (transpose only on square boards).
    dst_y = np.zeros(n, dtype=np.int64)
    dst_x = np.zeros(n, dtype=np.int64)
    for y in range(h):
        for x in range(w):
            ty = h - 1 - y if sym & 1 else y
            tx = w - 1 - x if sym & 2 else x
            p = point_from_xy(x, y, w)
            if sym & 4 and w == h:
                dst_y[p] = tx
                dst_x[p] = ty
            else:
                dst_y[p] = ty
                dst_x[p] = tx

    for y in range(h):
        for x in range(w):
            p = point_from_xy(x, y, w)
            ty = dst_y[p]
            tx = dst_x[p]
            out[0, ty, tx] = 1.0
            c = col[p]
            if c == pla or c == opp:
                out[1 if c == pla else 2, ty, tx] = 1.0
                libs = board[B.ROW_LIBS, board[B.ROW_HEAD, p]]
                if libs <= 3:
                    out[2 + libs, ty, tx] = 1.0
            elif ko_rule != KO_SIMPLE and p != board[B.ROW_HEADER, B.H_KO_POINT] \
                    and not _suicide_illegal(board, p, pla, suicide) \
                    and not legal[action_from_xy(x, y, w)]:
                out[6, ty, tx] = 1.0  # superko ban: otherwise legal, but not in the legal mask
    ko = board[B.ROW_HEADER, B.H_KO_POINT]
    if ko != NULL_POINT:
        out[6, dst_y[ko], dst_x[ko]] = 1.0

    # Area (planes 18/19) and the board score used by the passing hack.
    self_komi = np.float32(komi_white) if pla == WHITE else -np.float32(komi_white)
    not_win = False
    if not territory:
        tax_adjust = 0
        if tax == TAX_NONE:
            calculate_area(board, area, True, True, True, suicide)
        else:
            white_minus_black = independent_life_area(board, area, False, True, suicide)
            if tax == TAX_ALL:
                tax_adjust = -2 * white_minus_black if pla == WHITE else 2 * white_minus_black
        score = tax_adjust
        for y in range(h):
            for x in range(w):
                p = point_from_xy(x, y, w)
                if area[p] == pla:
                    out[18, dst_y[p], dst_x[p]] = 1.0
                    score += 1
                elif area[p] == opp:
                    out[19, dst_y[p], dst_x[p]] = 1.0
                    score -= 1
        not_win = np.float32(score) + self_komi <= 0.0

    # History (planes 9-13, globals 0-4) and whether a pass would end the game (global 14).
    n_hist = recent_points.shape[0]
    passes = 0
    while passes < n_hist and recent_colors[passes] != 0 and recent_points[passes] == PASS_POINT:
        passes += 1
    pass_ends_phase = passes >= 1
    pass_ends_game = pass_ends_phase and not territory
    max_turns = 5
    suppress = False
    if pass_ends_game and ((friendly_pass and passes + 1 == 2) or (passing_hacks and not_win)):
        max_turns = 0
        suppress = True
    elif pass_ends_game and passes >= 2:
        max_turns = 1  # the game is over: show only the final pass
    included = 0
    for k in range(min(max_turns, n_hist)):
        expected = opp if k % 2 == 0 else pla
        if recent_colors[k] != expected:
            break
        included = k + 1
        q = recent_points[k]
        if q == PASS_POINT:
            glob[k] = 1.0
        elif q != NULL_POINT:
            out[9 + k, dst_y[q], dst_x[q]] = 1.0

    # Ladders: now (with working moves), one and two turns ago. np.int64 / np.bool_: a literal
    # argument would compile a separate version of the callee for each value (seconds each).
    _ladder_plane(board, stack, buf, np.int64(14), np.bool_(True), opp, dst_y, dst_x, out)
    b1 = prev1 if included >= 1 else board
    _ladder_plane(b1, stack, buf, np.int64(15), np.bool_(False), opp, dst_y, dst_x, out)
    b2 = prev2 if included >= 2 else b1
    _ladder_plane(b2, stack, buf, np.int64(16), np.bool_(False), opp, dst_y, dst_x, out)

    # Globals.
    limit = np.float32(w * h + 20)
    k = min(max(self_komi, -limit), limit)
    glob[5] = k / np.float32(20.0)
    if ko_rule == KO_POSITIONAL:
        glob[6] = 1.0
        glob[7] = 0.5
    elif ko_rule == KO_SITUATIONAL:
        glob[6] = 1.0
        glob[7] = -0.5
    if suicide:
        glob[8] = 1.0
    if territory:
        glob[9] = 1.0
    if tax != TAX_NONE:
        glob[10] = 1.0
    if tax == TAX_ALL:
        glob[11] = 1.0
    if pass_ends_phase and not suppress:
        glob[14] = 1.0
    if not territory:
        glob[18] = _komi_wave(k, w * h)


@njit(cache=True, nogil=True)  # runs on the search's worker threads (engine/search/driver.py)
def fill_batch(count, boards, history_boards, recent_points, recent_colors, to_move, legal,
               komi_white, ko_rule, territory, tax, suicide, friendly_pass, passing_hacks,
               symmetries, spatial_out, global_out, stack, buf):
    """fill_row for rows 0..count-1 of a PositionBatch's arrays (one numba call per batch)."""
    area = np.zeros(boards.shape[2], dtype=np.int64)
    for i in range(count):
        fill_row(boards[i], history_boards[i, 0], history_boards[i, 1], recent_points[i],
                 recent_colors[i], to_move[i], legal[i], komi_white, ko_rule, territory, tax,
                 suicide, friendly_pass, passing_hacks, symmetries[i], spatial_out[i],
                 global_out[i], stack, buf, area)
