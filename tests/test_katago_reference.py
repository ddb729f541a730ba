"""End to end against KataGo itself: our features + the converted b6c96 net + post-processing
reproduce `kata-raw-nn 0` on all 48 reference positions (tests/data/) within 2e-3."""

import numpy as np

from dosaku.engine.evaluators import onnx_evaluator as oe
from dosaku.engine.evaluators.features import NUM_GLOBAL, NUM_SPATIAL, fill_features
from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import rules_by_name

TOL = 2e-3


def replay(pos) -> GameState:
    n = pos["board_size"]
    game = GameState(n, n, pos["komi"], rules_by_name(pos["rules"]))
    for color, vertex in pos["moves"]:
        assert game.play(BLACK if color == "B" else WHITE, parse_vertex(vertex, n, n)) == MOVE_OK
    assert game.to_move == (BLACK if pos["to_move"] == "B" else WHITE)
    return game


def evaluate(model, game):
    n = game.width
    batch = position_batch(game)
    spatial = np.zeros((1, NUM_SPATIAL, n, n), dtype=np.float32)
    glob = np.zeros((1, NUM_GLOBAL), dtype=np.float32)
    fill_features(batch, spatial, glob, [0])
    raw = model.run(spatial, glob)
    probs = oe.wdl(raw["value"], oe.no_result_possible(game.rules))
    stats = oe.score_stats(raw["score"], probs, model.score_outputs, model.multipliers)
    policy = oe.policy_probs(raw["policy"], batch.legal[:1])[0]
    own = oe.ownership(raw["ownership"])[0]
    black = game.to_move == BLACK
    win, loss = (probs[0, 1], probs[0, 0]) if black else (probs[0, 0], probs[0, 1])
    sign = -1.0 if black else 1.0
    return {"whiteWin": win, "whiteLoss": loss, "noResult": probs[0, 2],
            "whiteLead": sign * stats["lead"][0], "policy": policy[:-1].reshape(n, n),
            "policyPass": policy[-1], "whiteOwnership": sign * own, "legal": batch.legal[0]}


def errors(ours, ref):
    """Max absolute error per output; policy entries KataGo marks null must be illegal for us."""
    n = ours["policy"].shape[0]
    ref_policy = np.array([[np.nan if v is None else v for v in row] for row in ref["policy"]])
    illegal = np.isnan(ref_policy)
    assert np.array_equal(illegal.ravel(), ~ours["legal"][:-1]), "legal moves differ from KataGo"
    return {
        "whiteWin": abs(ours["whiteWin"] - ref["whiteWin"]),
        "whiteLoss": abs(ours["whiteLoss"] - ref["whiteLoss"]),
        "noResult": abs(ours["noResult"] - ref["noResult"]),
        "whiteLead": abs(ours["whiteLead"] - ref["whiteLead"]),
        "policy": float(np.max(np.abs(ours["policy"][~illegal] - ref_policy[~illegal]))),
        "policyPass": abs(ours["policyPass"] - ref["policyPass"]),
        "whiteOwnership": float(np.max(np.abs(ours["whiteOwnership"]
                                              - np.array(ref["whiteOwnership"]).reshape(n, n)))),
    }


def test_matches_katago_raw_nn(b6c96_model, reference_position):
    pos = reference_position
    err = errors(evaluate(b6c96_model, replay(pos)), pos["raw_nn"])
    bad = {k: v for k, v in err.items() if v > TOL}
    assert not bad, f"{pos['id']}: {bad}"


def test_reference_positions_present(katago_reference):
    assert len(katago_reference) == 48


# KataGo's own test vectors (katago-network.md §5.3): the same net under several symmetries.
# Those outputs come from KataGo's CUDA backend with TF32 convolutions (~1e-3 relative).

def raw_nn(model, game, sym):
    batch = position_batch(game)
    spatial = np.zeros((1, NUM_SPATIAL, game.height, game.width), dtype=np.float32)
    glob = np.zeros((1, NUM_GLOBAL), dtype=np.float32)
    fill_features(batch, spatial, glob, [sym])
    if sym >= 4 and game.width != game.height:
        sym -= 4  # non-square boards ignore the transpose bit
    raw = oe.undo_symmetry_outputs(model.run(spatial, glob), sym)
    probs = oe.wdl(raw["value"], oe.no_result_possible(game.rules))
    lead = oe.score_stats(raw["score"], probs, model.score_outputs, model.multipliers)["lead"][0]
    black = game.to_move == BLACK
    return (probs[0, 1] if black else probs[0, 0]), (-lead if black else lead)


def test_katago_rawnn_gtp_9x9_symmetries(b6c96_model):
    game = GameState(9, 9, 7.5, rules_by_name("chinese"))
    game.play(BLACK, parse_vertex("C3", 9, 9))
    game.play(WHITE, parse_vertex("C6", 9, 9))
    for sym, win, lead in ((1, 0.532987, 0.577), (4, 0.525422, 0.408), (6, 0.549882, 1.019)):
        ours_win, ours_lead = raw_nn(b6c96_model, game, sym)
        assert abs(ours_win - win) < TOL and abs(ours_lead - lead) < 0.01, sym


def test_katago_rawnn_gtp_7x10_new_zealand_all_symmetries(b6c96_model):
    game = GameState(7, 10, 7.5, rules_by_name("new-zealand"))
    for color, v in ((BLACK, "C3"), (WHITE, "C7"), (BLACK, "F7")):
        assert game.play(color, parse_vertex(v, 7, 10)) == MOVE_OK
    wins = (0.690885, 0.718946, 0.680947, 0.693356)
    for sym in range(8):
        ours_win, _ = raw_nn(b6c96_model, game, sym)
        assert abs(ours_win - wins[sym % 4]) < TOL, sym
