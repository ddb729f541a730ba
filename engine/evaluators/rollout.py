"""Leaf evaluation by random playouts (classic MCTS), and its mix with a network.

RolloutEvaluator plays each batch position to the end with uniformly random moves that fill no
own eye (engine.rules.board.random_playout), scores the final position by area with the effective
komi, and returns the result (+1 win, -1 loss, 0 jigo) from the side to move's view, the final
ownership, and a uniform policy (it has no priors, so the search uses UCB1 with it).
MixedEvaluator combines a network and rollouts as V = (1 - lam) * v_net + lam * z_rollout.
"""

import numpy as np
from numba import njit

from dosaku.engine.evaluators.evaluator import (
    Capabilities,
    Evaluation,
    PositionBatch,
    capabilities_of,
)
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, EMPTY, WHITE
from dosaku.engine.rules.coords import action_from_point, action_from_xy, point_from_xy


@njit(cache=True)
def area_owner(b, out):
    """out[a] = +1 Black / -1 White / 0 neither, per action a, by Tromp-Taylor area."""
    w = b[B.ROW_HEADER, B.H_WIDTH]
    h = b[B.ROW_HEADER, B.H_HEIGHT]
    stride = b[B.ROW_HEADER, B.H_STRIDE]
    col = b[B.ROW_COLOR]
    n = b.shape[1]
    region = np.zeros(n, np.int64)  # 0 unseen, else 1 + index of the region's owner code
    stack = np.empty(n, np.int64)
    members = np.empty(n, np.int64)
    for y in range(h):
        for x in range(w):
            p = point_from_xy(x, y, w)
            c = col[p]
            if c == BLACK:
                out[action_from_xy(x, y, w)] = 1.0
            elif c == WHITE:
                out[action_from_xy(x, y, w)] = -1.0
            elif region[p] == 0:
                reach = 0
                size = 0
                stack[0] = p
                region[p] = 1
                top = 1
                while top > 0:
                    top -= 1
                    s = stack[top]
                    members[size] = s
                    size += 1
                    for q in (s - stride, s - 1, s + 1, s + stride):
                        cq = col[q]
                        if cq == EMPTY and region[q] == 0:
                            region[q] = 1
                            stack[top] = q
                            top += 1
                        elif cq == BLACK or cq == WHITE:
                            reach |= cq
                v = 1.0 if reach == BLACK else (-1.0 if reach == WHITE else 0.0)
                for k in range(size):
                    out[action_from_point(members[k], w, h)] = v


@njit(cache=True)
def rollout_batch(boards, to_move, count, komi, allow_suicide, playouts, max_moves, scratch,
                  own_scratch, value, score, score_sq, ownership):
    """Average result, score, squared score and ownership of `playouts` random games per
    position.

    All outputs are from the side to move's view. Uses numba's global RNG. Sums are loops:
    array arithmetic would compile numba's shape-mismatch error text (see board.copy_board).
    """
    points = own_scratch.shape[0]
    for i in range(count):
        sign = 1.0 if to_move[i] == BLACK else -1.0
        v = 0.0
        s = 0.0
        s2 = 0.0
        for a in range(points):
            ownership[i, a] = 0.0
        for _ in range(playouts):
            B.copy_board(scratch, boards[i])
            B.random_playout(scratch, to_move[i], allow_suicide, max_moves)
            area_owner(scratch, own_scratch)
            margin = -komi  # Black's area minus White's, minus komi
            for a in range(points):
                margin += own_scratch[a]
                ownership[i, a] += sign * own_scratch[a]
            s += sign * margin
            s2 += margin * margin
            v += sign * (1.0 if margin > 0 else (-1.0 if margin < 0 else 0.0))
        value[i] = v / playouts
        score[i] = s / playouts
        score_sq[i] = s2 / playouts
        for a in range(points):
            ownership[i, a] /= playouts


class RolloutEvaluator:
    """Random playouts to the end; the area result decides the value."""

    capabilities = Capabilities(needs_history=False, has_priors=False, precompile_kind="rollout")

    def __init__(self, playouts_per_leaf: int = 1):
        self.playouts_per_leaf = max(1, playouts_per_leaf)
        self._scratch = None

    def evaluate(self, batch: PositionBatch) -> Evaluation:
        n = batch.count
        a = batch.width * batch.height
        if self._scratch is None or self._scratch.shape != batch.boards.shape[1:]:
            self._scratch = np.empty(batch.boards.shape[1:], np.int64)
            self._own_scratch = np.zeros(a, np.float64)
        value = np.zeros(n, np.float32)
        score = np.zeros(n, np.float32)
        score_sq = np.zeros(n, np.float32)
        own = np.zeros((n, a), np.float32)
        komi = batch.komi + batch.rules.handicap_bonus(batch.handicap_stones)
        rollout_batch(batch.boards, batch.to_move, n, komi, batch.rules.suicide,
                      self.playouts_per_leaf, 3 * a + 20, self._scratch, self._own_scratch,
                      value, score, score_sq, own)
        legal = batch.legal[:n].astype(np.float32)
        policy = legal / legal.sum(axis=1, keepdims=True)
        return Evaluation(policy, value, score, own, score, score_sq)


class MixedEvaluator:
    """Network priors with V = (1 - lam) * v_net + lam * z_rollout (AlphaGo 2016: lam = 0.5).

    One evaluate call at a time (the playouts share scratch arrays); the network's raw outputs
    stay reachable for kata-raw-nn."""

    def __init__(self, net, rollout: RolloutEvaluator, lam: float = 0.5):
        self.net = net
        self.rollout = rollout
        self.lam = lam
        net_caps = capabilities_of(net)
        self.capabilities = Capabilities(needs_history=net_caps.needs_history,
                                         network=net_caps.network,
                                         optimistic_policy=net_caps.optimistic_policy)

    def raw_model(self):
        """The network's model for kata-raw-nn (see OnnxEvaluator.raw_model)."""
        return self.net.raw_model()

    def evaluate(self, batch: PositionBatch) -> Evaluation:
        e = self.net.evaluate(batch)
        z = self.rollout.evaluate(batch)
        lam = self.lam
        value = (1 - lam) * np.asarray(e.value) + lam * z.value
        score = (1 - lam) * np.asarray(e.score) + lam * z.score
        own = e.ownership if e.ownership is not None else z.ownership
        net_mean = np.asarray(e.score if e.score_mean is None else e.score_mean)
        net_sq = net_mean ** 2 if e.score_mean_sq is None else np.asarray(e.score_mean_sq)
        mean = (1 - lam) * net_mean + lam * z.score_mean  # the mixture's moments
        sq = (1 - lam) * net_sq + lam * z.score_mean_sq
        return Evaluation(e.policy, value.astype(np.float32), score.astype(np.float32), own,
                          mean.astype(np.float32), sq.astype(np.float32))
