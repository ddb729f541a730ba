"""KataGo's policy optimism in the search: nets with an optimistic policy head get that head's
logits mixed in at --policy-optimism inside the tree and at --root-policy-optimism for the root,
whose prior comes from an evaluation of its own each search; on the transformer net the
evaluator's policy at 0.2 is KataGo's kata-raw-nn policy."""

from dataclasses import replace

import numpy as np

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.rules.constants import BLACK, WHITE
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from tests.test_katago_reference import replay
from tests.test_katago_transformer_reference import TOL, reference_policy

CFG = SearchConfig(batch_size=4, max_nodes=20_000, max_edges=400_000, policy_optimism=1.0,
                   root_policy_optimism=0.2)
SIZE = 7
ACTIONS = SIZE * SIZE + 1
# the plain head is uniform; the optimistic one favours higher action numbers
OPTIMISTIC = np.linspace(0.0, 3.0, ACTIONS)


def softmax_over_legal(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    e = np.where(legal, np.exp(logits - logits.max()), 0.0)
    return e / e.sum()


class TwoHeadEvaluator:
    """A plain and an optimistic policy head mixed as the batch asks; records the optimism and
    size of every call."""

    def __init__(self, optimistic_head: bool = True):
        self.capabilities = Capabilities(needs_history=False, optimistic_policy=optimistic_head)
        self.calls: list[tuple[float, int]] = []

    def evaluate(self, batch):
        n = batch.count
        self.calls.append((batch.policy_optimism, n))
        share = batch.policy_optimism if self.capabilities.optimistic_policy else 0.0
        policy = np.stack([softmax_over_legal(share * OPTIMISTIC, batch.legal[i])
                           for i in range(n)]).astype(np.float32)
        return Evaluation(policy, np.zeros(n, np.float32), np.zeros(n, np.float32), None)


def root_prior(search: Search) -> np.ndarray:
    return search.root_prior.astype(np.float64)


def child_edge_priors(search: Search) -> tuple[np.ndarray, np.ndarray]:
    """(actions, priors) of the most visited root child's edges."""
    t = search.tree
    root = search.root
    s = int(t.node_edge_start[root])
    kids = [int(t.edge_child[j]) for j in range(s, s + int(t.node_num_children[root]))]
    child = max(kids, key=lambda c: int(t.node_visits[c]))
    cs = int(t.node_edge_start[child])
    ne = int(t.node_num_edges[child])
    return t.edge_action[cs:cs + ne].copy(), t.edge_prior[cs:cs + ne].astype(np.float64)


def test_the_tree_mixes_its_share_and_the_root_its_own():
    ev = TwoHeadEvaluator()
    s = Search(ev, CFG, seed=1)
    g = GameState(SIZE, SIZE, 0.5)
    s.run(g, BLACK, SearchLimits(visits=60))
    legal = g.legal_mask(BLACK)
    assert ev.calls[0] == (0.2, 1)  # the root's own evaluation, before the search
    assert {share for share, _ in ev.calls[1:]} == {1.0}
    assert np.allclose(root_prior(s), softmax_over_legal(0.2 * OPTIMISTIC, legal), atol=1e-6)
    actions, priors = child_edge_priors(s)
    expected = softmax_over_legal(1.0 * OPTIMISTIC, np.ones(ACTIONS, bool))[actions]
    assert np.allclose(priors / priors.sum(), expected / expected.sum(), atol=1e-5)
    # the same root searched again keeps the policy it was evaluated with
    calls = len(ev.calls)
    s.run(g, BLACK, SearchLimits(visits=70))
    assert {share for share, _ in ev.calls[calls:]} == {1.0}
    # a root reused from the last move: its edges hold the tree's mix, its prior comes from an
    # evaluation of its own again
    move = int(s.root_stats().actions[np.argmax(s.root_stats().visits)])
    g.play(BLACK, point_from_action(move, SIZE, SIZE))
    assert s.update_with_move(g) > 0
    calls = len(ev.calls)
    s.run(g, WHITE, SearchLimits(visits=90))
    assert ev.calls[calls] == (0.2, 1)
    assert np.allclose(root_prior(s), softmax_over_legal(0.2 * OPTIMISTIC, g.legal_mask(WHITE)),
                       atol=1e-6)


def test_no_root_evaluation_when_the_shares_agree_or_the_net_has_no_such_head():
    g = GameState(SIZE, SIZE, 0.5)
    legal = g.legal_mask(BLACK)
    for ev, cfg, share in ((TwoHeadEvaluator(), replace(CFG, root_policy_optimism=1.0), 1.0),
                           (TwoHeadEvaluator(optimistic_head=False), CFG, 0.0)):
        s = Search(ev, cfg, seed=2)
        s.run(g, BLACK, SearchLimits(visits=30))
        assert sum(n for _, n in ev.calls) == 30  # every evaluation a visit of the tree
        assert np.allclose(root_prior(s), softmax_over_legal(share * OPTIMISTIC, legal),
                           atol=1e-6)


def test_search_keeps_the_plain_head_by_default():
    ev = TwoHeadEvaluator()
    Search(ev, replace(CFG, policy_optimism=0.0, root_policy_optimism=0.0), seed=3).run(
        GameState(SIZE, SIZE, 0.5), BLACK, SearchLimits(visits=20))
    assert {share for share, _ in ev.calls} == {0.0}
    assert SearchConfig().policy_optimism == SearchConfig().root_policy_optimism == 0.0


def test_the_network_evaluator_at_the_root_share_is_katagos_policy(b10_model,
                                                                   katago_b10_reference):
    """OnnxEvaluator mixes the batch's share into the transformer net's policy: at 0.2 it is
    KataGo's kata-raw-nn policy (KataGo's GTP mixes 0.2 there), the plain head is not."""
    from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator
    evaluator = OnnxEvaluator(b10_model, symmetry=0)
    assert evaluator.capabilities.optimistic_policy
    pos = katago_b10_reference["pass9_n20_one_pass"]
    game = replay(pos)
    expected = reference_policy(pos["raw_nn"]).ravel()
    batch = position_batch(game)
    for share, close in ((0.2, True), (0.0, False)):
        batch.policy_optimism = share
        policy = evaluator.evaluate(batch).policy[0, :-1].astype(np.float64)
        policy[np.isnan(expected)] = np.nan
        gap = np.nanmax(np.abs(policy - expected))
        assert (gap < TOL) == close, (share, gap)
