"""KataGo's avoidMoves / allowMoves below the root (engine/search/bans.py): the table's fill,
then whole searches walked node by node in plain Python, the PVs, and both protocols (a GTP
`kata-analyze ... avoid` stream and a JSON analysis query) on one hand-built position."""

import threading

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import action_from_point, parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.search import tree as T
from dosaku.engine.search.bans import MoveBan, allowed_at_root, ban_table, root_only
from dosaku.engine.search.config import SearchConfig
from dosaku.engine.search.driver import Search
from dosaku.engine.search.limits import SearchLimits
from dosaku.gtp.analysis import analyze_stream, parse_request, resolve_color
from dosaku.kata_analysis.query import parse_line
from dosaku.kata_analysis.settings import AnalysisSettings
from dosaku.kata_analysis.tasks import Task
from dosaku.kata_analysis.workers import Worker

N = 5
A = N * N + 1
SMALL = SearchConfig(batch_size=4, max_nodes=20_000, max_edges=600_000)


def pt(v: str) -> int:
    return parse_vertex(v, N, N)


def act(v: str) -> int:
    return action_from_point(pt(v), N, N)


C3, D4, B2, A5 = act("C3"), act("D4"), act("B2"), act("A5")


class WhiteWantsC3:
    """White's policy puts 60 times the weight on C3 (so an unbanned search sends White
    there at once), Black's is uniform; values from the position's hash, as in
    tests/evaluators.py, so that lines differ."""

    capabilities = Capabilities()

    def evaluate(self, batch):
        n = batch.count
        policy = batch.legal[:n].astype(np.float32)
        white = batch.to_move[:n] == WHITE
        policy[white, C3] *= 60.0
        policy /= policy.sum(axis=1, keepdims=True)
        keys = batch.boards[:n, B.ROW_HEADER, B.H_HASH]
        value = ((keys % 997) / 997.0 - 0.5).astype(np.float32) * 0.2
        return Evaluation(policy, value, np.zeros(n, np.float32), None)


def tree_edges(search: Search):
    """Every visited edge of the tree, walked from the root in plain Python:
    (depth of the node it leaves, that node's side to move, action, visits)."""
    t = search.tree
    out = []
    stack = [(int(t.meta[T.M_ROOT]), 0)]
    while stack:
        node, depth = stack.pop()
        if t.node_state[node] != T.EXPANDED:
            continue
        s = int(t.node_edge_start[node])
        for j in range(s, s + int(t.node_num_edges[node])):
            child = int(t.edge_child[j])
            if child != T.NO_NODE and t.node_visits[child] > 0:
                out.append((depth, int(t.node_to_move[node]), int(t.edge_action[j]),
                            int(t.node_visits[child])))
                stack.append((child, depth + 1))
    return out


def searched(bans, color=BLACK, playouts=3000, seed=1):
    s = Search(WhiteWantsC3(), SMALL, seed=seed)
    s.run(GameState(N, N, 0.5), color, SearchLimits(playouts=playouts), bans=bans)
    return s


def breaks(edges, table):
    """The visited edges the table bans (a ban holds where its player moves, above its
    depth)."""
    return [e for e in edges if table[e[1], e[2]] > e[0]]


def pv_breaks(search: Search, table, root_color: int):
    """Moves of the root children's PVs that the table bans at their depth."""
    out = []
    for a in search.root_stats().actions:
        for depth, move in enumerate(search.principal_variation(int(a), 40)):
            mover = root_color if depth % 2 == 0 else 3 - root_color
            if table[mover, move] > depth:
                out.append((int(a), depth, move))
    return out


def test_the_table_fills_as_katago_fills_its_arrays():
    avoid = [MoveBan(WHITE, frozenset({pt("C3"), PASS_POINT}), 3),
             MoveBan(BLACK, frozenset({pt("C3")}), 2), MoveBan(WHITE, frozenset({pt("C3")}), 1)]
    table = ban_table(avoid, N, N)
    assert table.shape == (3, A) and (table[0] == 0).all()
    assert table[WHITE, C3] == 1 and table[WHITE, A - 1] == 3  # a later entry replaces
    assert table[BLACK, C3] == 2 and table[BLACK].sum() == 2 and table[WHITE].sum() == 4
    allow = ban_table([MoveBan(WHITE, frozenset({pt("C3"), pt("D4")}), 4, allow=True)], N, N)
    assert allow[WHITE, C3] == allow[WHITE, D4] == 0
    assert (np.delete(allow[WHITE], [C3, D4]) == 4).all()  # pass is banned too
    assert (allow[BLACK] == 0).all()
    assert ban_table([], N, N) is None and root_only(None, BLACK) is None
    mask = np.zeros(A, np.bool_)
    mask[[C3, A - 1]] = True
    table = root_only(mask, WHITE)
    assert allowed_at_root(table, WHITE).tolist() == mask.tolist()
    assert allowed_at_root(table, BLACK).all() and table.max() == 1
    for bad in (dict(color=0, until_depth=1), dict(color=BLACK, until_depth=0)):
        with pytest.raises(ValueError):
            MoveBan(points=frozenset(), **bad)


def test_a_ban_on_the_player_not_to_move_holds_from_its_first_move_to_its_depth():
    unbanned = tree_edges(searched(None))
    white_c3 = [e for e in unbanned if e[1] == WHITE and e[2] == C3]
    assert 1 in {e[0] for e in white_c3}  # without the ban White's first move is C3
    table = ban_table([MoveBan(WHITE, frozenset({pt("C3")}), 3)], N, N)
    s = searched(table)
    edges = tree_edges(s)
    assert len(edges) > 1000 and not breaks(edges, table) and not pv_breaks(s, table, BLACK)
    white_c3 = [e for e in edges if e[1] == WHITE and e[2] == C3]
    assert white_c3 and min(e[0] for e in white_c3) == 3  # depths 1 and 2 never, 3 at once
    assert any(e[1] == BLACK and e[2] == C3 and e[0] < 3 for e in edges)  # Black's C3 stays
    assert any(move == C3 for a in s.root_stats().actions
               for move in s.principal_variation(int(a))[3::2])  # and PVs show it past 3


def test_a_ban_on_the_root_player_holds_at_the_root_and_its_even_depths():
    # A5 is action 0: among Black's uniform priors the first edge a young node tries
    table = ban_table([MoveBan(BLACK, frozenset({pt("C3"), pt("A5")}), 3)], N, N)
    s = searched(table)
    edges = tree_edges(s)
    assert not breaks(edges, table) and not pv_breaks(s, table, BLACK)
    assert C3 not in s.root_stats().actions and A5 not in s.root_stats().actions
    black = {(e[0], e[2]) for e in edges if e[1] == BLACK}
    assert (2, A5) not in black and (4, A5) in black  # depth 2 < 3: banned; depth 4 is free
    assert any(e[1] == WHITE and e[2] == C3 and e[0] == 1 for e in edges)  # not White's


def test_allow_moves_keep_their_player_to_the_listed_points_pass_included():
    table = ban_table([MoveBan(WHITE, frozenset({pt("D4"), pt("B2")}), 3, allow=True)], N, N)
    s = searched(table)
    edges = tree_edges(s)
    assert not breaks(edges, table) and not pv_breaks(s, table, BLACK)
    shallow = {e[2] for e in edges if e[1] == WHITE and e[0] < 3}
    assert shallow == {D4, B2}  # not C3 for all its weight, not pass either
    assert len({e[2] for e in edges if e[1] == WHITE and e[0] >= 3}) > 5


def test_a_node_with_every_move_banned_stands_on_its_own_evaluation():
    # White may play only C3 for its first two moves; after Black's C3 it has no move
    table = ban_table([MoveBan(WHITE, frozenset({pt("C3")}), 2, allow=True)], N, N)
    s = searched(table, playouts=1500)
    t = s.tree
    after_c3 = int(T.find_child(t, int(t.meta[T.M_ROOT]), C3))
    assert after_c3 != T.NO_NODE and t.node_visits[after_c3] > 1
    assert t.node_num_children[after_c3] == 0  # revisited without ever descending
    assert t.node_value_sum[after_c3] == pytest.approx(t.node_visits[after_c3]
                                                       * t.node_value[after_c3], rel=1e-5)
    assert not breaks(tree_edges(s), table)


# ---- both protocols ------------------------------------------------------------------------
def _engine():
    e = Engine(N, N, 0.5, evaluator=WhiteWantsC3(),
               config=EngineConfig(playouts=64, seconds=0, report_moves=False,
                                   search=SMALL))
    e.warm_up()
    return e


def _pvs_ok(pvs):
    """Whether PVs from a root with Black to move, White's C3 banned until depth 3, keep
    White's first move (index 1) off C3 while some later one of White's (index 3) is C3."""
    return bool(pvs) and all(pv[1:2] != ["C3"] for pv in pvs) and \
        any(pv[3:4] == ["C3"] for pv in pvs)


def test_gtp_kata_analyze_avoid_reaches_below_the_root():
    e = _engine()
    req = parse_request(["b", "5", "avoid", "w", "c3", "3"], N, N, kata=True)
    resolve_color(req, e.to_move)
    lines = []
    stop = threading.Event()
    timer = threading.Timer(1.5, stop.set)
    timer.start()
    analyze_stream(e, req, kata=True).run(lines.append, stop)
    timer.join()
    last = lines[-1]
    pvs = [seg.split(" pv ")[1].split() for seg in last.split("info move ")[1:]]
    assert _pvs_ok(pvs)
    assert int(last.split(" visits ")[1].split()[0]) > 20


def test_json_avoid_moves_reach_below_the_root():
    line = ('{"id": "q", "moves": [], "rules": "chinese", "komi": 0.5, "boardXSize": 5, '
            '"boardYSize": 5, "maxVisits": 800, "analysisPVLen": 10, '
            '"overrideSettings": {"wideRootNoise": 0.0}, '
            '"avoidMoves": [{"player": "W", "moves": ["C3"], "untilDepth": 3}]}')
    query, warnings = parse_line(line, AnalysisSettings(), 10_000)
    assert not warnings and query.bans == [MoveBan(WHITE, frozenset({pt("C3")}), 3)]
    out = []
    worker = Worker(_engine(), None, out.append, lambda: 0)
    worker._search(Task(query, 0, 0))
    infos = out[-1]["moveInfos"]
    assert sum(m["visits"] for m in infos) >= 700
    assert _pvs_ok([m["pv"] for m in infos])


def test_a_follow_up_move_does_not_keep_a_tree_the_bans_shaped():
    e = _engine()
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    e.analyze(BLACK, lambda snap: None, 0.1, stop, bans=(MoveBan(WHITE, frozenset({pt("C3")}),
                                                               3),))
    assert e.search.has_tree
    e.play(BLACK, pt("D4"))
    assert not e.search.has_tree  # its subtrees never saw White's C3
    e.think(WHITE)
    e.play(WHITE, pt("C3"))  # White's favourite: the search visited it
    assert e.search.has_tree  # without bans the tree is kept as before
