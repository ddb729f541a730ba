"""The flat arrays the batch kernels work in besides the tree: the root position, the rows
handed to the evaluator, each leaf's path, the evaluation cache.

The kernels (engine/search/selection.py, engine/search/backup.py) take the parameter vectors, then
the arrays of the tree and of a SearchBuffers flattened (`*tree, *buffers`): numba types array
arguments in C but a NamedTuple argument in Python (1.5-3 us a call), so the kernels rebuild the
NamedTuples themselves (`unpack`) and read every array by name. Allocated once per board geometry by
the search driver (engine/search/driver.py), one SearchBuffers per batch in flight.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from dosaku.engine.evaluators.evaluator import PositionBatch
from dosaku.engine.search import tree as T
from dosaku.engine.search.scores import expected_atan_table

# leaf kinds (SearchBuffers.leaf_kind)
KIND_EVAL = 0  # needs the evaluator: its position is in batch row leaf_row
KIND_STORED = 1  # value already in node_value (terminal, full leaf, cache hit, depth cut)
KIND_EVAL_END = 4  # a game ended by two passes where the rules remove dead stones: evaluated
#                    and searched on like KIND_EVAL (play goes on until the dead stones are
#                    gone, as KataGo's conservative pass does), never cached: the cache key
#                    does not tell a finished game from the same board in play

# select_batch out[] entries
OUT_LEAVES = 0
OUT_ROWS = 1
OUT_FULL = 2  # 1 when a descent found no free node
OUT_LOOKUPS = 3  # leaves looked up in the evaluation cache
OUT_HITS = 4  # of those, the ones it held
OUT_LEN = 5


class SearchBuffers(NamedTuple):
    """Every array the batch kernels use besides the tree and the evaluator's output, allocated
    once per board geometry. A = W * H + 1 actions, Bt = batch size, D = max path depth + 1,
    C = cache slots (a power of two, 0 = no cache), n = board row length (board.num_points)."""
    # the root position, copied in at the start of a search
    root_board: np.ndarray  # int64 [NUM_ROWS, n]
    root_history: np.ndarray  # int64 [HISTORY_BOARDS, NUM_ROWS, n]: boards 1, 2 plies ago
    root_points: np.ndarray  # int64 [HISTORY_MOVES]: its recent moves, most recent first
    root_colors: np.ndarray  # int64 [HISTORY_MOVES]: their colours (0 = none)
    root_prior: np.ndarray  # float32 [A]: root priors the search uses (noise included)
    root_legal: np.ndarray  # bool [A]: root actions this search may take (superko, the bans'
    #                         root row); the root's edges hold every legal move
    bans: np.ndarray  # int64 [3, A]: the moves banned by colour and depth (engine/search/bans.py)
    # the rows handed to the evaluator (the PositionBatch's own arrays, see its docstring)
    boards: np.ndarray  # int64 [Bt, NUM_ROWS, n]
    history: np.ndarray  # int64 [Bt, HISTORY_BOARDS, NUM_ROWS, n]
    recent_points: np.ndarray  # int64 [Bt, HISTORY_MOVES]
    recent_colors: np.ndarray  # int64 [Bt, HISTORY_MOVES]
    to_move: np.ndarray  # int64 [Bt]
    legal: np.ndarray  # bool [Bt, A]
    # per leaf i of the batch
    path_nodes: np.ndarray  # int64 [Bt, D]: node at each depth of the path, root first
    path_actions: np.ndarray  # int64 [Bt, D]: action taken at each depth
    path_len: np.ndarray  # int64 [Bt]: depth of the leaf
    leaf_kind: np.ndarray  # int64 [Bt]: KIND_EVAL, KIND_EVAL_END or KIND_STORED
    leaf_row: np.ndarray  # int64 [Bt]: batch row of a leaf the evaluator values
    # evaluation cache keyed by position (see select_batch)
    cache_used: np.ndarray  # bool [C]
    cache_keys: np.ndarray  # int64 [C]
    cache_policy: np.ndarray  # float32 [C, A]
    cache_value: np.ndarray  # float32 [C]
    cache_score: np.ndarray  # float32 [C, 3]: score lead, expected score and its square
    cache_error: np.ndarray  # float32 [C, 2]: short-term value and score errors (tree.node_error)
    score_table: np.ndarray  # float64: engine.search.scores.expected_atan_table(), read only
    out: np.ndarray  # int64 [OUT_LEN]: select_batch's counts (OUT_*)



@njit(cache=True)
def unpack(arrays):
    """(TreeArrays, SearchBuffers) from the flattened arrays of both."""
    return T.TreeArrays(*arrays[:T.TREE_FIELDS]), SearchBuffers(*arrays[T.TREE_FIELDS:])


def cache_slots(n: int) -> int:
    """Round a cache size to a power of two (0 stays 0)."""
    return 0 if n <= 0 else 1 << (int(n) - 1).bit_length()


def new_buffers(root: PositionBatch, batches: list[PositionBatch], path_slots: int,
                cache_size: int) -> list[SearchBuffers]:
    """One SearchBuffers per batch, its rows the batch's own arrays (path_slots = D). The root
    arrays (board, history and recent moves are `root`'s row 0) and the cache are one for all:
    every batch descends from the same root into the same tree."""
    a = root.legal.shape[1]
    cs = cache_slots(cache_size)
    shared = dict(
        root_board=root.boards[0], root_history=root.history_boards[0],
        root_points=root.recent_points[0], root_colors=root.recent_colors[0],
        root_prior=np.zeros(a, np.float32), root_legal=np.zeros(a, np.bool_),
        bans=np.zeros((3, a), np.int64),
        cache_used=np.zeros(cs, np.bool_), cache_keys=np.zeros(cs, np.int64),
        cache_policy=np.zeros((cs, a), np.float32),
        cache_value=np.zeros(cs, np.float32), cache_score=np.zeros((cs, 3), np.float32),
        cache_error=np.zeros((cs, 2), np.float32),
        score_table=expected_atan_table())
    out = []
    for b in batches:
        bs = b.capacity
        out.append(SearchBuffers(
            boards=b.boards, history=b.history_boards, recent_points=b.recent_points,
            recent_colors=b.recent_colors, to_move=b.to_move, legal=b.legal,
            path_nodes=np.zeros((bs, path_slots), np.int64),
            path_actions=np.zeros((bs, path_slots), np.int64),
            path_len=np.zeros(bs, np.int64), leaf_kind=np.zeros(bs, np.int64),
            leaf_row=np.zeros(bs, np.int64),
            out=np.zeros(OUT_LEN, np.int64), **shared))
    return out
