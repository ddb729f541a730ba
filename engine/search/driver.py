"""The search driver: batched PUCT / UCB1 tree search over the array tree (engine/search/tree.py).

One batch = `select_batch` (engine/search/selection.py: descend up to B leaves with virtual loss,
replay each path from the root board into the batch's rows) -> one `Evaluator.evaluate(batch)` ->
`expand_and_backup` (engine/search/backup.py). Python crosses into numba twice per batch, never per
node. This module owns the tree and the buffers (engine/search/buffers.py), launches batches while
the limits allow (engine/search/limits.py) and reads results through engine/search/results.py.

An evaluator that can run several calls at once (Capabilities.parallel_calls, e.g. an ONNX
network on one thread per call) gets that many batches in flight, each evaluated on a worker
thread while this thread selects the next batch and backs up finished ones. Under a visit or
playout limit alone they are backed up oldest first, so that the order of selections and
backups does not depend on timing and the search is reproducible; otherwise (a time limit, an
open-ended analysis) as they finish, so that no evaluating thread idles while an older batch
is still being evaluated. The kernels release the GIL. Batches start small and grow with the
root's visits (SearchConfig.batch_growth): leaves in flight carry virtual losses that push the
other selections elsewhere, which costs little in a wide tree but throws visits away in a
young one.
"""

import sys
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from dosaku.engine.evaluators.evaluator import Evaluation, PositionBatch, capabilities_of
from dosaku.engine.evaluators.positions import batch_row_from_game
from dosaku.engine.rules import board as B
from dosaku.engine.rules.coords import action_from_point
from dosaku.engine.search import tree as T
from dosaku.engine.search.backup import expand_and_backup
from dosaku.engine.search.bans import allowed_at_root
from dosaku.engine.search.buffers import (
    KIND_STORED,
    OUT_FULL,
    OUT_HITS,
    OUT_LOOKUPS,
    OUT_ROWS,
    SearchBuffers,
    new_buffers,
)
from dosaku.engine.search.config import FloatParam, IntParam, SearchConfig
from dosaku.engine.search.limits import (
    SearchLimits,
    backs_up_in_launch_order,
    leaves_wanted,
    most_in_flight,
    should_stop,
)
from dosaku.engine.search.recenter import recenter_utilities
from dosaku.engine.search.results import (
    OwnershipMean,
    RootStats,
    principal_variation,
    pv_visits,
    root_policy,
    root_stats,
)
from dosaku.engine.search.scores import score_columns
from dosaku.engine.search.selection import select_batch


def root_moves(legal: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
    """The root moves a search may take: the `legal` ones (bool per action, pass last) among
    `allowed` (None: all); pass when none of those is legal, so a search always has a move."""
    if allowed is None:
        return legal
    kept = legal & allowed
    if not kept.any():
        kept[-1] = True
    return kept


@dataclass
class SearchCounters:
    """What the searches of one Search spent and saved since it was made (or `clear`ed), to
    measure the evaluation cache and tree reuse: counted once per batch, off the kernels."""
    searches: int = 0
    evaluations: int = 0  # positions sent to the evaluator (root policies included)
    lookups: int = 0  # leaves looked up in the evaluation cache
    hits: int = 0  # of those, the ones it held: evaluations saved
    visits: int = 0  # root visits at the end of each search, summed
    visits_reused: int = 0  # of those, the ones the root already had when the search began

    def clear(self) -> None:
        self.__init__()


@dataclass
class _Slot:
    """One batch of leaves: its evaluator rows, its kernel buffers (root and cache arrays
    shared with the other slots) and, while it is in flight, its evaluation."""
    batch: PositionBatch
    buf: SearchBuffers
    leaves: int = 0  # leaves selected (rows to evaluate and stored values alike)
    launched: float = 0.0  # when its evaluation started (time.monotonic)
    result: Future | None = None  # the Evaluation, or None when no row needed the evaluator


def _next_to_back_up(pending: deque, in_order: bool) -> _Slot:
    """Take the batch to back up next from `pending` (oldest first): the oldest, waiting for it
    when `in_order`; otherwise the oldest of those already evaluated, waiting for the first to
    finish when none is, so that no evaluating thread idles behind a slower batch."""
    if not in_order and not pending[0].result.done():
        wait([slot.result for slot in pending], return_when=FIRST_COMPLETED)
        for slot in pending:
            if slot.result.done():
                pending.remove(slot)
                return slot
    return pending.popleft()


class Search:
    """Owns the tree, the batch buffers and the evaluator; runs searches from a GameState."""

    def __init__(self, evaluator, config: SearchConfig = SearchConfig(), seed: int = 0,
                 log=None):
        self.evaluator = evaluator
        self.config = config
        self.seed = seed
        self.rng: np.random.Generator | None = None  # the search's noise and batch seeds
        self._searches = 0  # searches run so far, pondering left out (see _seed_search)
        self._ponders = 0  # ponder searches since the last of those
        self.log = log if log is not None else (lambda msg: print(msg, file=sys.stderr))
        self.tree = T.new_tree(config.max_nodes, config.max_edges)
        self._spare = None  # second tree that update_with_move copies into (pages stay warm)
        self.capabilities = capabilities_of(evaluator)
        self.want_history = self.capabilities.needs_history
        self.ucb1 = config.ucb1 or not self.capabilities.has_priors
        self._geometry = None
        self._buf = None  # the first slot's buffers (root and cache arrays are shared)
        self._sums_center = 0.0  # the score centre the tree's utility sums are counted around
        self._fp: np.ndarray | None = None  # the kernel parameters of the latest search
        self._slots: list[_Slot] = []
        self._ownership = OwnershipMean()  # of the leaves evaluated under the current root
        self.counters = SearchCounters()
        # batches in flight at once: one per evaluate call the evaluator can run in parallel,
        # each on a worker thread while this one selects the next batch and backs up the last
        self._parallel = max(1, self.capabilities.parallel_calls)
        self._pool = ThreadPoolExecutor(self._parallel, thread_name_prefix="evaluate") \
            if self._parallel > 1 else None
        self._new_root_state()

    def set_config(self, config: SearchConfig) -> None:
        """New search settings: buffers are rebuilt and the tree starts fresh."""
        if (config.max_nodes, config.max_edges) != (self.config.max_nodes, self.config.max_edges):
            self.tree = T.new_tree(config.max_nodes, config.max_edges)
            self._spare = None
        self.config = config
        self.ucb1 = config.ucb1 or not self.capabilities.has_priors
        self._geometry = None
        self.reset()

    # ---- buffers ---------------------------------------------------------------------------
    def _ensure_buffers(self, game) -> None:
        geom = (game.width, game.height, game.komi, game.rules, game.handicap)
        if geom == self._geometry:
            return
        self._geometry = geom
        w, h = game.width, game.height
        bs = self.config.batch_size
        a = w * h + 1
        # the root's board, history and recent moves, filled as the leaves' rows are
        self._root_batch = PositionBatch(1, w, h, game.komi, game.rules)
        batches = [PositionBatch(bs, w, h, game.komi, game.rules) for _ in range(self._parallel)]
        for b in batches:
            b.policy_optimism = self.config.policy_optimism
        self._root_batch.policy_optimism = self.config.root_policy_optimism
        buffers = new_buffers(self._root_batch, batches, T.max_depth_for(w, h) + 1,
                              self.config.cache_size)
        self._slots = [_Slot(b, buf) for b, buf in zip(batches, buffers)]
        self._buf = buffers[0]
        self._dummy_policy = np.zeros((1, a), np.float32)
        self._dummy_value = np.zeros(1, np.float32)
        self._dummy_score = np.zeros((1, 3), np.float32)
        self._dummy_error = np.zeros((1, 2), np.float32)
        self.reset()

    @property
    def root_prior(self) -> np.ndarray:
        """The root priors of the last search, by action (noise included; empty before one)."""
        return self._buf.root_prior if self._buf is not None else np.zeros(0, np.float32)

    @property
    def root_legal(self) -> np.ndarray:
        """The legal root actions of the last search (empty before one)."""
        return self._buf.root_legal if self._buf is not None else np.zeros(0, np.bool_)

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
        """Forget what belonged to the previous root: its prior, own evaluation, ownership
        and full flag."""
        self._prior_ready = False
        self._root_policy = None
        self._root_evaluation = None
        self._ownership.clear()
        self.tree_full = False

    def clear_cache(self) -> None:
        self.reset()
        if self._buf is not None:
            self._buf.cache_used[:] = False

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
        if root == T.NO_NODE or not game.moves or self._buf is None:
            self.reset()
            return 0
        color, point = game.moves[-1]
        before = game.board_before(1)
        ok = int(self.tree.node_to_move[root]) == color and \
            int(self.tree.node_key[root]) == int(T.position_key(before, color))
        child = T.NO_NODE
        if ok:
            action = action_from_point(point, game.width, game.height)
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
    def _evaluate_root_policy(self, game, color: int) -> None:
        """The root's policy at the root's own policy optimism, when it differs from the tree's
        and the evaluator has an optimistic head: one evaluation of each new root, as KataGo
        makes, since the root's edges hold the policy it had as a node of the tree. Later
        searches of the same root (ponder, analysis, genmove) keep it (_new_root_state forgets
        it with the root)."""
        cfg = self.config
        if self._root_policy is not None or not self.capabilities.optimistic_policy \
                or color != game.to_move or cfg.root_policy_optimism == cfg.policy_optimism:
            return
        b = self._root_batch
        b.count = 1
        b.seed = int(self.rng.integers(1 << 31))
        self._root_evaluation = self.evaluator.evaluate(b)
        self._root_policy = np.asarray(self._root_evaluation.policy[0], np.float64)
        self.counters.evaluations += 1

    def _setup_root_prior(self, noise_weight: float, noise_alpha_scale: float,
                          temperature: float = 1.0) -> None:
        t = self.tree
        root = self.root
        s = int(t.node_edge_start[root])
        ne = int(t.node_num_edges[root])
        actions = t.edge_action[s:s + ne]
        prior = t.edge_prior[s:s + ne].astype(np.float64) if self._root_policy is None \
            else self._root_policy[actions]
        legal = self.root_legal[actions]
        prior = np.where(legal, prior, 0.0)
        if temperature != 1.0:  # KataGo's rootPolicyTemperature: > 1 widens the search
            prior = prior ** (1.0 / temperature)
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
            noise_alpha_scale: float = 0.03 * 361, pondering: bool = False,
            root_temperature: float = 1.0, bans: np.ndarray | None = None,
            wide_root_noise: float = 0.0) -> int:
        """Search the position of `game` with `color` to move; returns new playouts.

        on_update() is called about every `interval` seconds; `stop` (an Event) ends early.
        pondering: a search that runs on the opponent's time (see _seed_search).
        root_temperature: the root's priors are raised to 1 / this power (1: as they are).
        bans: the moves banned by colour and depth (engine/search/bans.py; its root row as
        root_moves applies it), None for none. wide_root_noise: KataGo's random utility bonus
        for the root's children (engine/search/selection.py; 0: none).
        """
        self._seed_search(pondering)
        self._ensure_root(game, color)
        t = self.tree
        buf = self._buf
        allowed = allowed_at_root(bans, color)
        buf.root_legal[:] = root_moves(game.legal_mask(color), allowed)
        buf.bans[:] = 0 if bans is None else bans
        buf.root_prior[:] = 0
        self._prior_ready = False
        batch_row_from_game(self._root_batch, 0, game)  # fills buf.root_board, history, moves
        if allowed is not None:  # the root's own evaluation sees the same root moves
            row = self._root_batch.legal[0]
            row[:] = root_moves(row, allowed)
        self._evaluate_root_policy(game, color)
        if t.node_state[self.root] == T.EXPANDED:
            self._setup_root_prior(noise_weight, noise_alpha_scale, root_temperature)
        for slot in self._slots:
            slot.batch.handicap_stones = game.handicap
        fp, ip = self._kernel_params(game, noise_weight, wide_root_noise, bans)
        self._fp = fp  # what root_stats reads the exploration factor with
        centred = self._set_score_center(fp)
        reused = int(t.node_visits[self.root])
        most = most_in_flight(limits, self.config, reused, self._parallel)
        in_order = backs_up_in_launch_order(limits)
        start = time.monotonic()
        next_update = start + interval
        playouts = 0
        in_flight = 0  # leaves of the batches being evaluated
        step = 0.0  # seconds from launching a batch to its results, the last time
        free = deque(self._slots)
        pending: deque[_Slot] = deque()
        stopping = False
        try:
            while True:
                while free and not stopping:  # launch batches while the limits allow
                    now = time.monotonic()
                    visits = int(t.node_visits[self.root])
                    stopping = should_stop(limits, stop, t, self.root_legal, visits + in_flight,
                                           playouts + in_flight, now - start, step)
                    leaves = leaves_wanted(limits, self.config, self._parallel, visits, playouts,
                                           in_flight, most)
                    if stopping or leaves <= 0:
                        break
                    slot = free.popleft()
                    ip[IntParam.batch_size] = leaves
                    slot.leaves = select_batch(fp, ip, *t, *slot.buf)
                    self.counters.lookups += int(slot.buf.out[OUT_LOOKUPS])
                    self.counters.hits += int(slot.buf.out[OUT_HITS])
                    if slot.buf.out[OUT_FULL]:
                        if not self.tree_full:
                            self.log(f"search: tree full ({int(t.meta[T.M_NODES]) - 1} nodes, "
                                     f"{int(t.meta[T.M_EDGES])} edges), stopping")
                        self.tree_full = stopping = True
                    if slot.leaves == 0:  # only collisions: wait for a batch in flight
                        free.appendleft(slot)
                        break
                    self._launch(slot, now)
                    pending.append(slot)
                    in_flight += slot.leaves
                if not pending:
                    break
                slot = _next_to_back_up(pending, in_order)
                self._back_up(slot, fp, ip, color)
                step = time.monotonic() - slot.launched
                in_flight -= slot.leaves
                if not centred:  # a fresh root: centre on its first evaluation
                    centred = self._set_score_center(fp)
                playouts += slot.leaves
                free.append(slot)
                if not self._prior_ready and t.node_state[self.root] == T.EXPANDED:
                    self._setup_root_prior(noise_weight, noise_alpha_scale, root_temperature)
                if on_update is not None and time.monotonic() >= next_update:
                    on_update()
                    next_update = time.monotonic() + interval
        except BaseException:
            for slot in pending:  # let the evaluations in flight finish, then forget the
                slot.result.exception()  # tree: their virtual losses would corrupt it
            self.reset()
            raise
        if on_update is not None:
            on_update()
        counters = self.counters
        counters.searches += 1
        counters.visits += int(t.node_visits[self.root])
        counters.visits_reused += reused
        return playouts

    def _seed_search(self, pondering: bool) -> None:
        """Seed the random numbers of one search from the seed and the search's number: numba
        keeps a random state per thread (selection and playouts draw from it), and searches
        run on whatever thread calls them. Whether a ponder starts, and how long it runs,
        depends on when the controller's next line comes, so ponders number only their own
        streams (the k-th since the n-th other search), never the later searches'."""
        if pondering:
            self._ponders += 1
        else:
            self._searches += 1
            self._ponders = 0
        numba_seq, numpy_seq = np.random.SeedSequence(
            [self.seed, self._searches, self._ponders]).spawn(2)
        B.seed_rng(int(numba_seq.generate_state(1)[0]))
        self.rng = np.random.default_rng(numpy_seq)

    def _kernel_params(self, game, noise_weight: float, wide_root_noise: float = 0.0,
                       bans: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' float and int parameter vectors for a search of `game`."""
        rules = game.rules
        per_search = dict(komi=game.komi + rules.handicap_bonus(game.handicap),
                          score_center=0.0, sqrt_area=np.sqrt(game.width * game.height),
                          ucb1=self.ucb1, suicide=rules.suicide,
                          exact_end=rules.scoring == "area" and not rules.friendly_pass_ok,
                          max_depth=T.max_depth_for(game.width, game.height),
                          history=self.want_history, wide_root_noise=wide_root_noise,
                          ban_depth=0 if bans is None else int(bans.max()),
                          uncertainty=self.config.uncertainty
                          and self.capabilities.shortterm_error)
        if noise_weight > 0:
            per_search["root_fpu_reduction"] = 0.0
        fp, ip = self.config.kernel_params(**per_search)
        return np.array(fp, np.float64), np.array(ip, np.int64)

    def compile_backup(self, game) -> None:
        """Compile expand_and_backup and recenter_utilities: no leaves backed up, sums
        counted again around a centre of 0. How the cold-start helper (engine/precompile.py)
        stores them while the engine compiles the selection, and how the warm-up reaches the
        re-centring that a first search never needs."""
        self._ensure_root(game, game.to_move)
        self._sums_center = 0.0
        fp, ip = self._kernel_params(game, 0.0)
        expand_and_backup(fp, ip, 0, self._dummy_policy, self._dummy_value, self._dummy_score,
                          self._dummy_error, *self.tree, *self._buf)
        recenter_utilities(fp, *self.tree, *self._buf)

    def _launch(self, slot: "_Slot", now: float) -> None:
        """Start evaluating the slot's batch rows: on a worker thread when batches run in
        parallel, else here (slot.result is then already done)."""
        rows = int(slot.buf.out[OUT_ROWS])
        slot.launched = now
        slot.result = Future()
        if not rows:
            slot.result.set_result(None)
            return
        b = slot.batch
        b.count = rows
        b.seed = int(self.rng.integers(1 << 31))
        self.counters.evaluations += rows
        if self._pool is not None:
            slot.result = self._pool.submit(self.evaluator.evaluate, b)
        else:
            slot.result.set_result(self.evaluator.evaluate(b))

    def _back_up(self, slot: "_Slot", fp, ip, color: int) -> None:
        """Wait for the slot's evaluation, expand its leaves and back all its leaves up."""
        ev = slot.result.result()
        error = self._dummy_error
        if ev is None:  # no row needed the evaluator (terminal positions, cache hits)
            policy, value, score = self._dummy_policy, self._dummy_value, self._dummy_score
        else:
            policy = np.ascontiguousarray(ev.policy, dtype=np.float32)
            value = np.ascontiguousarray(ev.value, dtype=np.float32)
            score = score_columns(ev)
            error = np.zeros((len(value), 2), np.float32) if ev.shortterm_error is None \
                else np.ascontiguousarray(ev.shortterm_error, dtype=np.float32)
            if ev.ownership is not None:
                b = slot.batch
                self._ownership.add(ev.ownership, b.to_move[:b.count], color,
                                    self._row_root_actions(slot))
        expand_and_backup(fp, ip, slot.leaves, policy, value, score, error, *self.tree,
                          *slot.buf)

    def _row_root_actions(self, slot: "_Slot") -> np.ndarray:
        """The root move each evaluated row of the slot's batch descends from (-1: the root)."""
        buf = slot.buf
        actions = np.full(slot.batch.count, -1, np.int64)
        leaves = slot.leaves
        evaluated = (buf.leaf_kind[:leaves] != KIND_STORED) & (buf.path_len[:leaves] > 0)
        actions[buf.leaf_row[:leaves][evaluated]] = buf.path_actions[:leaves, 0][evaluated]
        return actions

    def _set_score_center(self, fp) -> bool:
        """Centre of the dynamic score utility: 0.8 x the root's expected score for its side
        to move (KataGo's recentScoreCenter), 0 before the root has been evaluated; the visits
        the tree holds are counted around it from then on (engine/search/recenter.py). Returns
        whether the root had visits."""
        t = self.tree
        visits = int(t.node_visits[self.root])
        weight = float(t.node_sel[self.root, 0] - t.node_virtual[self.root])
        expected = -float(t.node_score_moments[self.root, 0]) / weight if visits else 0.0
        center = fp[FloatParam.score_center] = 0.8 * expected
        if visits and center != self._sums_center:
            recenter_utilities(fp, *t, *self._buf)
        self._sums_center = center
        return visits > 0

    # ---- results ---------------------------------------------------------------------------
    def ownership(self, action: int | None = None) -> np.ndarray | None:
        """Average ownership of the leaves evaluated in this search (under root move `action`
        when given), root side to move's view."""
        return self._ownership.mean() if action is None else self._ownership.mean_after(action)

    def keep_ownership_spread(self, on: bool) -> None:
        """Count the leaves' ownership spread from now on (what ownership_stdev reads), or
        stop. A tree whose leaves were counted without it starts afresh: their ownership is
        gone, and a stdev of some of them would not match the mean of all."""
        if on and not self._ownership.has_spread():
            self.reset()
        self._ownership.spread = on

    def ownership_stdev(self, action: int | None = None) -> np.ndarray | None:
        """Standard deviation of the ownership `ownership` averages, over the same leaves; None
        unless they were counted with keep_ownership_spread on."""
        return self._ownership.stdev(action)

    def root_evaluation(self) -> Evaluation | None:
        """The evaluator's own outputs at the root of the last search (one row, the root's side
        to move's view): the evaluation that gave the root its prior when the search made one
        (nets with an optimistic policy), else one made now and kept with the root. Its
        symmetry is drawn as the batches' are, from a seed of the root's position rather than
        the search's generator, so that asking during a search changes nothing of it. None
        before a search of this root, or when its side to move was not the game's."""
        root = self.root
        b = self._root_batch if self._buf is not None else None
        if self._root_evaluation is None and b is not None and root != T.NO_NODE \
                and int(b.to_move[0]) == int(self.tree.node_to_move[root]) \
                and int(T.position_key(b.boards[0], int(b.to_move[0]))) == \
                int(self.tree.node_key[root]):
            b.count = 1
            b.seed = int(self.tree.node_key[root]) & 0x7FFFFFFF
            self._root_evaluation = self.evaluator.evaluate(b)
            self.counters.evaluations += 1
        return self._root_evaluation

    def root_stats(self) -> RootStats:
        """The root's children as this search sees them (its legal moves, its priors)."""
        return root_stats(self.tree, self.root_legal,
                          self.root_prior if self._prior_ready else None, self._fp)

    def principal_variation(self, action: int, max_len: int = 30) -> list[int]:
        """Actions from the root's `action` on, following the most visited child."""
        return principal_variation(self.tree, action, max_len)

    def pv_visits(self, pv: list[int]) -> list[int]:
        """Visits of the node each action of `pv` (from the root on) leads to."""
        return pv_visits(self.tree, pv)

    def root_policy(self, num_actions: int) -> np.ndarray:
        """The root's prior by action as the evaluator gave it, -1 on illegal actions."""
        return root_policy(self.tree, num_actions)
