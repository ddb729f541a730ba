"""Batched PUCT / UCB1 tree search over the array tree (engine/tree.py).

One iteration = `select_batch` (numba: descend up to B leaves with virtual loss, replay each
path from the root board into the batch's scratch boards) -> one `Evaluator.evaluate(batch)`
-> `expand_and_backup` (numba). Python crosses into numba twice per batch, never per node.
Values follow tree.py's convention (mover's view, sign flip per ply).
"""

import sys
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from engine import board as B
from engine import tree as T
from engine.config import SearchConfig
from engine.constants import BLACK, PASS_POINT
from engine.evaluator import HISTORY_MOVES, PositionBatch
from engine.positions import batch_row_from_game

# leaf kinds
KIND_EVAL = 0  # needs the evaluator: its position is in batch row leaf_row
KIND_STORED = 1  # value already in node_value (terminal, full leaf, cache hit, depth cut)
_KIND_COLLIDE = 2
_KIND_FULL = 3

# select_batch out[] entries
OUT_LEAVES = 0
OUT_ROWS = 1
OUT_FULL = 2  # 1 when a descent found no free node

# float parameter vector
(F_CPUCT, F_CPUCT_LOG, F_CPUCT_BASE, F_FPU, F_ROOT_FPU, F_UCB1_C, F_KOMI, F_STATIC_SCORE,
 F_DYNAMIC_SCORE, F_SCORE_CENTER, F_SQRT_AREA) = range(11)
# int parameter vector
I_BATCH, I_VLOSS, I_UCB1, I_SUICIDE, I_COLLISIONS, I_MAX_DEPTH, I_HISTORY = range(7)


@njit(cache=True)
def _select_child(t, node, is_root, root_prior, root_legal, fp, ip):
    """Edge index maximising Q + U (PUCT) or UCB1 among the node's edges.

    Edges with a child come first (tree.attach_child), then the unvisited edge with the
    highest prior: of the unvisited ones only it can win PUCT (they share the FPU value). The
    root scans all edges since its priors (noise) and legality (superko) are its own. UCB1
    takes a random unvisited edge before revisiting anything.
    """
    start = t.node_edge_start[node]
    end = start + t.node_num_edges[node]
    mid = start + t.node_num_children[node]
    if ip[I_UCB1] != 0:
        if mid < end:
            if not is_root:
                return mid + np.random.randint(end - mid)
            legal_unvisited = 0
            for j in range(mid, end):
                if root_legal[t.edge_action[j]]:
                    legal_unvisited += 1
            if legal_unvisited > 0:
                r = np.random.randint(legal_unvisited)
                for j in range(mid, end):
                    if root_legal[t.edge_action[j]]:
                        if r == 0:
                            return j
                        r -= 1
        log_n = np.log(max(t.node_visits[node] + t.node_virtual[node], 1))
        best = -1e30
        best_j = start
        for j in range(start, mid):
            if is_root and not root_legal[t.edge_action[j]]:
                continue
            c = t.edge_child[j]
            n = t.node_sel[c, 0]
            if n == 0:
                return j
            q = t.node_sel[c, 1] / n
            s = q + fp[F_UCB1_C] * np.sqrt(log_n / n)
            if s > best:
                best = s
                best_j = j
        return best_j

    parent_n = t.node_visits[node] - 1 + t.node_virtual[node]
    if parent_n < 0:
        parent_n = 0
    if t.node_visits[node] > 0:
        parent_q = -(t.node_sel[node, 1] + t.node_virtual[node]) / t.node_visits[node]
    else:
        parent_q = -t.node_value[node]
    mass = 0.0
    for j in range(start, mid):
        if is_root:
            mass += root_prior[t.edge_action[j]]
        else:
            mass += t.edge_prior[j]
    red = fp[F_ROOT_FPU] if is_root else fp[F_FPU]
    fpu = parent_q - red * np.sqrt(mass)
    cp = fp[F_CPUCT] + fp[F_CPUCT_LOG] * np.log((parent_n + fp[F_CPUCT_BASE]) / fp[F_CPUCT_BASE])
    scale = cp * np.sqrt(parent_n + 0.01)
    best = -1e30
    best_j = start
    for j in range(start, mid):
        if is_root:
            a = t.edge_action[j]
            if not root_legal[a]:
                continue
            p = root_prior[a]
        else:
            p = t.edge_prior[j]
        c = t.edge_child[j]
        n = t.node_sel[c, 0]
        q = t.node_sel[c, 1] / n if n > 0 else fpu
        s = q + scale * p / (1.0 + n)
        if s > best:
            best = s
            best_j = j
    if mid < end:
        top = -1.0
        top_j = end
        if is_root:
            for j in range(mid, end):
                a = t.edge_action[j]
                if root_legal[a] and root_prior[a] > top:
                    top = root_prior[a]
                    top_j = j
        else:
            top = t.edge_prior[mid]
            top_j = mid
        if top_j < end and fpu + scale * top > best:
            best_j = top_j
    return best_j


@njit(cache=True)
def _replay(t, i, depth, root, root_board, root_hist, root_points, root_colors, path_actions,
            board, hist, rpoints, rcolors, want_history):
    """Play the path of leaf i from the root into `board`; fill history and recent moves."""
    B.copy_board(board, root_board)
    color = t.node_to_move[root]
    for k in range(depth):
        if want_history:
            if k == depth - 2:
                B.copy_board(hist[1], board)
            if k == depth - 1:
                B.copy_board(hist[0], board)
        B.play_unchecked(board, B.point_of_action(board, path_actions[i, k]), color)
        color = 3 - color
    if want_history:
        if depth == 0:
            B.copy_board(hist[0], root_hist[0])
            B.copy_board(hist[1], root_hist[1])
        elif depth == 1:
            B.copy_board(hist[1], root_hist[0])
    root_color = t.node_to_move[root]
    for k in range(HISTORY_MOVES):
        if k < depth:
            m = depth - 1 - k
            rpoints[k] = B.point_of_action(board, path_actions[i, m])
            rcolors[k] = root_color if m % 2 == 0 else 3 - root_color
        else:
            rpoints[k] = root_points[k - depth]
            rcolors[k] = root_colors[k - depth]
    return color


@njit(cache=True)
def _score_terminal(t, leaf, board, komi):
    """Store the exact result of a finished game (area score) in the leaf, mover's view."""
    black, white = B.area_counts(board)
    margin = black - white - komi
    if t.node_to_move[leaf] == BLACK:  # White made the last move
        margin = -margin
    t.node_score[leaf] = margin
    t.node_value[leaf] = 1.0 if margin > 0 else (-1.0 if margin < 0 else 0.0)
    t.node_state[leaf] = T.TERMINAL


@njit(cache=True)
def select_batch(t, root_board, root_hist, root_points, root_colors, root_prior, root_legal,
                 boards, hist, rpoints, rcolors, to_move, legal,
                 path_nodes, path_actions, path_len, leaf_kind, leaf_row,
                 cache_used, cache_keys, cache_policy, cache_value, cache_score,
                 fp, ip, out):
    """Descend up to ip[I_BATCH] leaves; fill batch rows for those needing the evaluator."""
    root = t.meta[T.M_ROOT]
    pass_action = root_legal.shape[0] - 1
    vl = ip[I_VLOSS]
    n_leaves = 0
    rows = 0
    collisions = 0
    out[OUT_FULL] = 0
    while n_leaves < ip[I_BATCH] and collisions < ip[I_COLLISIONS]:
        i = n_leaves
        node = root
        depth = 0
        path_nodes[i, 0] = root
        kind = KIND_STORED
        while True:
            st = t.node_state[node]
            if st == T.NEW:
                kind = _KIND_COLLIDE if t.node_virtual[node] > 0 else KIND_EVAL
                break
            if st != T.EXPANDED or depth >= ip[I_MAX_DEPTH]:
                kind = KIND_STORED
                break
            e = _select_child(t, node, depth == 0, root_prior, root_legal, fp, ip)
            path_actions[i, depth] = t.edge_action[e]
            child = t.edge_child[e]
            if child == T.NO_NODE:
                child = T.alloc_node(t, 3 - t.node_to_move[node], 0)
                if child == T.NO_NODE:
                    kind = _KIND_FULL
                    break
                T.attach_child(t, node, e, child)
                depth += 1
                path_nodes[i, depth] = child
                kind = KIND_EVAL
                break
            depth += 1
            path_nodes[i, depth] = child
            node = child
        if kind == _KIND_COLLIDE:
            collisions += 1
            continue
        if kind == _KIND_FULL:
            out[OUT_FULL] = 1
            break
        for k in range(depth + 1):
            nd = path_nodes[i, k]
            t.node_virtual[nd] += vl
            t.node_sel[nd, 0] += vl
            t.node_sel[nd, 1] -= vl
        path_len[i] = depth
        leaf = path_nodes[i, depth]
        if kind == KIND_EVAL:
            tm = _replay(t, i, depth, root, root_board, root_hist, root_points, root_colors,
                         path_actions, boards[rows], hist[rows], rpoints[rows], rcolors[rows],
                         ip[I_HISTORY] != 0)
            key = T.position_key(boards[rows], tm)
            t.node_key[leaf] = key
            last_pass = depth >= 1 and path_actions[i, depth - 1] == pass_action
            if depth >= 2:
                prev_pass = path_actions[i, depth - 2] == pass_action
            else:
                prev_pass = root_points[0] == PASS_POINT
            slot = (key >> 3) & (cache_keys.shape[0] - 1)
            if last_pass and prev_pass:
                _score_terminal(t, leaf, boards[rows], fp[F_KOMI])
                kind = KIND_STORED
            elif depth > 0 and cache_keys.shape[0] > 0 and cache_used[slot] \
                    and cache_keys[slot] == key:
                B.legal_mask(boards[rows], tm, ip[I_SUICIDE] != 0, legal[rows])
                t.node_value[leaf] = -cache_value[slot]
                t.node_score[leaf] = -cache_score[slot]
                if not T.expand_node(t, leaf, legal[rows], cache_policy[slot]):
                    t.node_state[leaf] = T.LEAF
                kind = KIND_STORED
            else:
                to_move[rows] = tm
                if depth == 0:
                    legal[rows, :] = root_legal
                else:
                    B.legal_mask(boards[rows], tm, ip[I_SUICIDE] != 0, legal[rows])
                leaf_row[i] = rows
                rows += 1
        leaf_kind[i] = kind
        n_leaves += 1
    out[OUT_LEAVES] = n_leaves
    out[OUT_ROWS] = rows
    return n_leaves


@njit(cache=True)
def score_utility(score, center, fp):
    """KataGo's score utility added to a value for selection: a static term (centre 0) that
    prefers larger wins and smaller losses, and a dynamic term centred near the root's expected
    score so the search keeps caring about points when the winrate saturates.
    sv(s) = (2/pi) atan((s - c) / (scale sqrt(area))) with scales 2 and 0.75 (katago-network.md
    §4.1); `score` and `center` are from the same player's view."""
    k = 2.0 / np.pi
    return (fp[F_STATIC_SCORE] * k * np.arctan(score / (2.0 * fp[F_SQRT_AREA]))
            + fp[F_DYNAMIC_SCORE] * k * np.arctan((score - center) / (0.75 * fp[F_SQRT_AREA])))


@njit(cache=True)
def expand_and_backup(t, n_leaves, path_nodes, path_len, leaf_kind, leaf_row, legal,
                      policy, value, score, cache_used, cache_keys, cache_policy, cache_value,
                      cache_score, vl, fp):
    """Expand evaluated leaves (values from the side to move's view) and back all leaves up.

    Visits, values and scores are backed up as they are (they are what reports show);
    selection backs up the utility (value plus score utility, see score_utility).
    """
    for i in range(n_leaves):
        depth = path_len[i]
        leaf = path_nodes[i, depth]
        if leaf_kind[i] == KIND_EVAL:
            r = leaf_row[i]
            t.node_value[leaf] = -value[r]
            t.node_score[leaf] = -score[r]
            if not T.expand_node(t, leaf, legal[r], policy[r]):
                t.node_state[leaf] = T.LEAF
            if cache_keys.shape[0] > 0:
                key = t.node_key[leaf]
                slot = (key >> 3) & (cache_keys.shape[0] - 1)
                cache_used[slot] = True
                cache_keys[slot] = key
                cache_policy[slot, :] = policy[r]
                cache_value[slot] = value[r]
                cache_score[slot] = score[r]
        v = np.float64(t.node_value[leaf])
        s = np.float64(t.node_score[leaf])
        for k in range(depth, -1, -1):
            nd = path_nodes[i, k]
            # Node k's mover is the root's side to move when k is odd.
            center = fp[F_SCORE_CENTER] if k % 2 == 1 else -fp[F_SCORE_CENTER]
            t.node_visits[nd] += 1
            t.node_value_sum[nd] += v
            t.node_value_sq[nd] += v * v
            t.node_score_sum[nd] += s
            t.node_virtual[nd] -= vl
            t.node_sel[nd, 0] += 1 - vl
            t.node_sel[nd, 1] += v + score_utility(s, center, fp) + vl
            v = -v
            s = -s


@dataclass
class SearchLimits:
    """Stop when any set limit is reached (0 = not set)."""
    visits: int = 0  # root visits, reused ones included
    playouts: int = 0  # new leaf evaluations in this search
    seconds: float = 0.0  # wall-clock time
    early_stop: bool = False  # also stop once no other move can catch up with the most visited


@njit(cache=True)
def root_visit_gap(t, root_legal):
    """Visits of the most visited legal root child minus those of the runner-up."""
    root = t.meta[T.M_ROOT]
    s = t.node_edge_start[root]
    first = 0
    second = 0
    for j in range(s, s + t.node_num_children[root]):
        if not root_legal[t.edge_action[j]]:
            continue
        v = t.node_visits[t.edge_child[j]]
        if v > first:
            second = first
            first = v
        elif v > second:
            second = v
    return first - second


def _remaining_playouts(limits: SearchLimits, root_visits: int, playouts: int,
                        elapsed: float) -> float:
    """How many more playouts the limits allow at most (inf when unlimited)."""
    rem = np.inf
    if limits.visits:
        rem = min(rem, limits.visits - root_visits)
    if limits.playouts:
        rem = min(rem, limits.playouts - playouts)
    if limits.seconds and elapsed > 0.05 and playouts > 0:
        rem = min(rem, playouts / elapsed * (limits.seconds - elapsed))
    return rem


@dataclass
class RootStats:
    """Statistics of the root's legal children, side to move's view (arrays, one per child)."""
    actions: np.ndarray
    visits: np.ndarray
    value: np.ndarray  # mean value in [-1, 1] (0 when unvisited)
    value_sq: np.ndarray  # mean squared value
    score: np.ndarray  # mean score lead
    prior: np.ndarray  # root prior used by the search (noise included)
    root_visits: int
    root_value: float
    root_score: float


def _cache_size(n: int) -> int:
    """Round a cache size to a power of two (0 stays 0)."""
    return 0 if n <= 0 else 1 << (int(n) - 1).bit_length()


class Search:
    """Owns the tree, the batch buffers and the evaluator; runs searches from a GameState."""

    def __init__(self, evaluator, config: SearchConfig = SearchConfig(), seed: int = 0,
                 log=None):
        self.evaluator = evaluator
        self.config = config
        self.rng = np.random.default_rng(seed)
        B.seed_rng(seed)
        self.log = log if log is not None else (lambda msg: print(msg, file=sys.stderr))
        self.tree = T.new_tree(config.max_nodes, config.max_edges)
        self._spare = None  # second tree that update_with_move copies into (pages stay warm)
        self.want_history = bool(getattr(evaluator, "needs_history", True))
        self.ucb1 = config.ucb1 or not getattr(evaluator, "has_priors", True)
        self._geometry = None
        self._batch = None
        self.root_prior = np.zeros(0, np.float32)
        self.root_legal = np.zeros(0, np.bool_)
        self._new_root_state()

    # ---- buffers ---------------------------------------------------------------------------
    def _ensure_buffers(self, game) -> None:
        geom = (game.width, game.height, game.komi, game.rules, game.handicap)
        if geom == self._geometry:
            return
        self._geometry = geom
        w, h = game.width, game.height
        bs = self.config.batch_size
        a = w * h + 1
        self._batch = PositionBatch(bs, w, h, game.komi, game.rules)
        self._root_batch = PositionBatch(1, w, h, game.komi, game.rules)
        depth = T.max_depth_for(w, h)
        self._path_nodes = np.zeros((bs, depth + 1), np.int64)
        self._path_actions = np.zeros((bs, depth + 1), np.int64)
        self._path_len = np.zeros(bs, np.int64)
        self._leaf_kind = np.zeros(bs, np.int64)
        self._leaf_row = np.zeros(bs, np.int64)
        self._out = np.zeros(3, np.int64)
        self._dummy_policy = np.zeros((1, a), np.float32)
        self._dummy_value = np.zeros(1, np.float32)
        cs = _cache_size(self.config.cache_size)
        self._cache = (np.zeros(cs, np.bool_), np.zeros(cs, np.int64),
                       np.zeros((cs, a), np.float32), np.zeros(cs, np.float32),
                       np.zeros(cs, np.float32))
        self.reset()

    # ---- tree lifecycle -------------------------------------------------------------------
    @property
    def root(self) -> int:
        return int(self.tree.meta[T.M_ROOT])

    @property
    def has_tree(self) -> bool:
        """Whether a searched root exists (something update_with_move could keep)."""
        root = self.root
        return root != T.NO_NODE and int(self.tree.node_visits[root]) > 0

    def reset(self) -> None:
        """Forget the tree (the root is re-created at the next search)."""
        self.tree.meta[T.M_ROOT] = T.NO_NODE
        self.tree.meta[T.M_NODES] = 1
        self.tree.meta[T.M_EDGES] = 0
        self._new_root_state()

    def _new_root_state(self) -> None:
        """Forget what belonged to the previous root: its prior, ownership and full flag."""
        self._prior_ready = False
        self._own_sum = None
        self._own_n = 0
        self.tree_full = False

    def clear_cache(self) -> None:
        self.reset()
        if self._batch is not None:
            self._cache[0][:] = False

    def _ensure_root(self, game, color: int) -> None:
        self._ensure_buffers(game)
        key = int(T.position_key(game.board, color))
        root = self.root
        if root == T.NO_NODE or int(self.tree.node_key[root]) != key \
                or int(self.tree.node_to_move[root]) != color:
            T.reset_tree(self.tree, color, key)
            self._new_root_state()

    def update_with_move(self, game) -> int:
        """Follow the game's last move into the matching subtree; returns reused visits.

        The root must be the position before that move with its mover to play, and the child's
        stored key must equal the game's new position; otherwise the tree starts fresh (0).
        """
        root = self.root
        if root == T.NO_NODE or not game.moves or self._batch is None:
            self.reset()
            return 0
        color, point = game.moves[-1]
        before = game.board_before(1)
        ok = int(self.tree.node_to_move[root]) == color and \
            int(self.tree.node_key[root]) == int(T.position_key(before, color))
        child = T.NO_NODE
        if ok:
            action = int(B.action_of_point(game.board, point))
            child = int(T.find_child(self.tree, root, action))
        new_key = int(T.position_key(game.board, game.to_move))
        if child == T.NO_NODE or self.tree.node_state[child] == T.NEW \
                or int(self.tree.node_key[child]) != new_key:
            self.reset()
            return 0
        if self._spare is None:
            self._spare = T.new_tree(self.config.max_nodes, self.config.max_edges)
        fresh = self._spare
        T.copy_subtree(self.tree, child, fresh)
        self._spare = self.tree
        self.tree = fresh
        self._new_root_state()
        return int(fresh.node_visits[1])

    # ---- running ---------------------------------------------------------------------------
    def _setup_root_prior(self, noise_weight: float, noise_alpha_scale: float) -> None:
        t = self.tree
        root = self.root
        s = int(t.node_edge_start[root])
        ne = int(t.node_num_edges[root])
        actions = t.edge_action[s:s + ne]
        prior = t.edge_prior[s:s + ne].astype(np.float64)
        legal = self.root_legal[actions]
        prior = np.where(legal, prior, 0.0)
        total = prior.sum()
        n_legal = int(legal.sum())
        prior = prior / total if total > 0 else legal / max(n_legal, 1)
        if noise_weight > 0 and n_legal > 1:
            alpha = noise_alpha_scale / n_legal
            noise = np.zeros(ne)
            noise[legal] = self.rng.dirichlet(np.full(n_legal, alpha))
            prior = (1 - noise_weight) * prior + noise_weight * noise
        self.root_prior[:] = 0
        self.root_prior[actions] = prior
        self._prior_ready = True

    def run(self, game, color: int, limits: SearchLimits, stop=None, on_update=None,
            interval: float = 1.0, noise_weight: float = 0.0,
            noise_alpha_scale: float = 0.03 * 361) -> int:
        """Search the position of `game` with `color` to move; returns new playouts.

        on_update() is called about every `interval` seconds; `stop` (an Event) ends early.
        """
        self._ensure_root(game, color)
        t = self.tree
        cfg = self.config
        b = self._batch
        a = game.width * game.height + 1
        self.root_legal = game.legal_mask(color)
        self.root_prior = np.zeros(a, np.float32)
        self._prior_ready = False
        root = self.root
        if t.node_state[root] == T.EXPANDED:
            self._setup_root_prior(noise_weight, noise_alpha_scale)
        root_row = self._root_batch  # the root's history and recent moves, as leaves get them
        batch_row_from_game(root_row, 0, game)
        komi = game.komi + game.rules.handicap_bonus(game.handicap)
        b.handicap_stones = game.handicap
        root_fpu = 0.0 if noise_weight > 0 else cfg.root_fpu_reduction
        fp = np.array([cfg.c_puct, cfg.c_puct_log, cfg.c_puct_base, cfg.fpu_reduction,
                       root_fpu, cfg.ucb1_c, komi, cfg.static_score_utility,
                       cfg.dynamic_score_utility, 0.0, np.sqrt(game.width * game.height)],
                      np.float64)
        self._set_score_center(fp)
        ip = np.array([cfg.batch_size, cfg.virtual_loss, int(self.ucb1),
                       int(game.rules.suicide), max(cfg.max_collisions, 1),
                       T.max_depth_for(game.width, game.height), int(self.want_history)],
                      np.int64)
        start = time.monotonic()
        next_update = start + interval
        playouts = 0
        cache = self._cache
        while True:
            if stop is not None and stop.is_set():
                break
            if limits.visits and int(t.node_visits[self.root]) >= limits.visits:
                break
            if limits.playouts and playouts >= limits.playouts:
                break
            now = time.monotonic()
            if limits.seconds and now - start >= limits.seconds:
                break
            if limits.early_stop and playouts and root_visit_gap(t, self.root_legal) > \
                    _remaining_playouts(limits, int(t.node_visits[self.root]), playouts,
                                        now - start):
                break
            if on_update is not None and now >= next_update:
                on_update()
                next_update = now + interval
            n = select_batch(t, game.board, root_row.history_boards[0],
                             root_row.recent_points[0], root_row.recent_colors[0], self.root_prior,
                             self.root_legal, b.boards, b.history_boards, b.recent_points,
                             b.recent_colors, b.to_move, b.legal, self._path_nodes,
                             self._path_actions, self._path_len, self._leaf_kind,
                             self._leaf_row, cache[0], cache[1], cache[2], cache[3], cache[4],
                             fp, ip, self._out)
            rows = int(self._out[OUT_ROWS])
            if rows:
                b.count = rows
                b.seed = int(self.rng.integers(1 << 31))
                try:
                    ev = self.evaluator.evaluate(b)
                except BaseException:
                    self.reset()  # in-flight virtual losses would corrupt the tree
                    raise
                policy = np.ascontiguousarray(ev.policy, dtype=np.float32)
                value = np.ascontiguousarray(ev.value, dtype=np.float32)
                score = np.ascontiguousarray(ev.score, dtype=np.float32)
                if ev.ownership is not None:
                    self._add_ownership(ev.ownership, b.to_move[:rows], color)
            else:
                policy, value, score = self._dummy_policy, self._dummy_value, self._dummy_value
            expand_and_backup(t, n, self._path_nodes, self._path_len, self._leaf_kind,
                              self._leaf_row, b.legal, policy, value, score, cache[0], cache[1],
                              cache[2], cache[3], cache[4], cfg.virtual_loss, fp)
            if playouts == 0:
                self._set_score_center(fp)
            playouts += n
            if not self._prior_ready and t.node_state[self.root] == T.EXPANDED:
                self._setup_root_prior(noise_weight, noise_alpha_scale)
            if self._out[OUT_FULL]:
                if not self.tree_full:
                    self.log(f"search: tree full ({int(t.meta[T.M_NODES]) - 1} nodes, "
                             f"{int(t.meta[T.M_EDGES])} edges), stopping")
                self.tree_full = True
                break
        if on_update is not None:
            on_update()
        return playouts

    def _set_score_center(self, fp) -> None:
        """Centre of the dynamic score utility: 0.8 x the root's expected score for its side
        to move (KataGo's recentScoreCenter), 0 before the root has been evaluated."""
        t = self.tree
        visits = int(t.node_visits[self.root])
        expected = -float(t.node_score_sum[self.root]) / visits if visits else 0.0
        fp[F_SCORE_CENTER] = 0.8 * expected

    def _add_ownership(self, own, rows_to_move, color) -> None:
        sign = np.where(rows_to_move == color, 1.0, -1.0)
        total = (np.asarray(own, np.float64).reshape(len(sign), -1) * sign[:, None]).sum(axis=0)
        if self._own_sum is None:
            self._own_sum = np.zeros_like(total)
        self._own_sum += total
        self._own_n += len(sign)

    # ---- results ---------------------------------------------------------------------------
    def ownership(self) -> np.ndarray | None:
        """Average ownership of the leaves evaluated in this search, root side to move's view."""
        if self._own_sum is None or self._own_n == 0:
            return None
        return self._own_sum / self._own_n

    def root_stats(self) -> RootStats:
        t = self.tree
        root = self.root
        s = int(t.node_edge_start[root])
        ne = int(t.node_num_edges[root]) if t.node_state[root] == T.EXPANDED else 0
        actions = t.edge_action[s:s + ne].astype(np.int64)
        if len(self.root_legal):
            keep = self.root_legal[actions]
        else:
            keep = np.ones(ne, np.bool_)
        children = t.edge_child[s:s + ne][keep]
        actions = actions[keep]
        visits = t.node_visits[children].copy()
        visits[children == T.NO_NODE] = 0
        safe = np.maximum(visits, 1)
        value = np.where(visits > 0, t.node_value_sum[children] / safe, 0.0)
        value_sq = np.where(visits > 0, t.node_value_sq[children] / safe, 0.0)
        score = np.where(visits > 0, t.node_score_sum[children] / safe, 0.0)
        if self._prior_ready:
            prior = self.root_prior[actions].astype(np.float64)
        else:
            prior = t.edge_prior[s:s + ne][keep].astype(np.float64)
        rv = int(t.node_visits[root])
        return RootStats(actions, visits, value, value_sq, score, prior, rv,
                         -float(t.node_value_sum[root]) / rv if rv else 0.0,
                         -float(t.node_score_sum[root]) / rv if rv else 0.0)

    def principal_variation(self, action: int, max_len: int = 30) -> list[int]:
        """Actions from `action` on, following the most visited child."""
        t = self.tree
        pv = [action]
        node = int(T.find_child(t, self.root, action))
        while node != T.NO_NODE and len(pv) < max_len and t.node_state[node] == T.EXPANDED:
            s = int(t.node_edge_start[node])
            ne = int(t.node_num_edges[node])
            children = t.edge_child[s:s + ne]
            visits = np.where(children != T.NO_NODE, t.node_visits[children], 0)
            j = int(np.argmax(visits))
            if visits[j] == 0:
                break
            pv.append(int(t.edge_action[s + j]))
            node = int(children[j])
        return pv
