"""End to end against KataGo on a transformer net: our features, the converted
b10c384h6nbttflrs net and engine/raw_nn reproduce KataGo 1.17.2's `kata-raw-nn 0` on all 48
reference positions (tests/data/) within 2e-3; and the net's outputs do not depend on
where in a larger buffer a board sits, nor on the other boards of its batch.

The positions are evaluated once, batched by board size: the net is ten times b6c96's size.
"""

import numpy as np
import pytest

from dosaku.engine.evaluators import onnx_evaluator as oe
from dosaku.engine.evaluators.raw_nn import RawNN, raw_nn_batch, raw_nn_inputs
from tests.test_katago_reference import replay

TOL = 2e-3
FIELDS = {"whiteWin": "white_win", "whiteLoss": "white_loss", "noResult": "no_result",
          "whiteLead": "white_lead", "whiteScoreSelfplay": "white_score_selfplay",
          "varTimeLeft": "var_time_left", "shorttermWinlossError": "shortterm_winloss_error",
          "shorttermScoreError": "shortterm_score_error", "policyPass": "policy_pass"}


@pytest.fixture(scope="module")
def ours(b10_model, katago_b10_reference) -> dict[str, RawNN]:
    """Our kata-raw-nn 0 of every reference position by id, one network call per board size."""
    by_size = {}
    for pos in katago_b10_reference.values():
        by_size.setdefault(pos["board_size"], []).append(pos)
    out = {}
    for positions in by_size.values():
        games = [replay(pos) for pos in positions]
        out.update(zip((p["id"] for p in positions), raw_nn_batch(b10_model, games, 0)))
    return out


def reference_policy(ref: dict) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in ref["policy"]])


def errors(ours: RawNN, ref: dict) -> dict[str, float]:
    """Absolute errors per output (the maximum over the board for policy and ownership)."""
    policy = reference_policy(ref)
    assert np.array_equal(np.isnan(ours.policy), np.isnan(policy)), "illegal points differ"
    err = {key: abs(getattr(ours, field) - ref[key]) for key, field in FIELDS.items()}
    err["policy"] = float(np.nanmax(np.abs(ours.policy - policy)))
    err["whiteOwnership"] = float(np.max(np.abs(ours.white_ownership
                                                - np.array(ref["whiteOwnership"]))))
    return err


def test_kata_raw_nn_matches_katago_on_all_positions(ours, katago_b10_reference):
    assert len(ours) == len(katago_b10_reference) == 48
    bad = []
    for pos_id, pos in katago_b10_reference.items():
        ref = pos["raw_nn"]
        assert ref["varTimeLeft"] > 0 and ref["shorttermScoreError"] > 0  # real outputs here
        bad += [(pos_id, key, err) for key, err in errors(ours[pos_id], ref).items() if err > TOL]
        relative = abs(ours[pos_id].white_score_selfplay_sq / ref["whiteScoreSelfplaySq"] - 1)
        bad += [(pos_id, "whiteScoreSelfplaySq", relative)] if relative > 1e-4 else []
    assert not bad


def test_the_policy_mixes_in_optimism_as_katago_does(b10_model, katago_b10_reference, ours):
    """KataGo's GTP mixes 0.2 of the optimistic policy into kata-raw-nn's policy; the plain
    policy channel is clearly further from its output."""
    pos = katago_b10_reference["pass9_n20_one_pass"]
    spatial, glob, legal = raw_nn_inputs(b10_model, replay(pos), 0)
    plain = oe.policy_probs(b10_model.run(spatial, glob)["policy"], legal)[0, :-1]
    policy = reference_policy(pos["raw_nn"]).ravel()
    assert np.nanmax(np.abs(plain - policy)) > 5 * TOL
    assert np.nanmax(np.abs(ours[pos["id"]].policy.ravel() - policy)) < TOL


def test_padded_and_mixed_batches_give_the_same_outputs(b10_model, katago_b10_reference):
    """9x9, 13x13 and 19x19 boards in one batch of 19x19 buffers, one 9x9 board away from the
    corner, give each board's outputs in a buffer of its own size: within 1e-5 on value, score
    and ownership logits, 3e-5 on policy logits. That is float32 rounding: the attention sums
    over keys, and the pooling over the board, add the same terms in another order in another
    buffer, and 20 attention layers carry the differences to the policy (up to 2.2e-5 measured
    over the 30 smaller reference boards, top-left and bottom-right in 19x19)."""
    placed = [("gnugo9_n20_k7.5", 0, 0), ("ko9_white_banned", 6, 9),
              ("gnugo13_n50_k7.5", 0, 0), ("gnugo19_n60_k7.5", 0, 0)]
    spatial = np.zeros((len(placed), b10_model.num_spatial, 19, 19), np.float32)
    glob = np.zeros((len(placed), b10_model.num_global), np.float32)
    alone = []
    for i, (pos_id, y, x) in enumerate(placed):
        exact, glob[i:i + 1], _ = raw_nn_inputs(b10_model, replay(katago_b10_reference[pos_id]), 0)
        n = exact.shape[2]
        spatial[i, :, y:y + n, x:x + n] = exact[0]
        alone.append(b10_model.run(exact, glob[i:i + 1]))
    together = b10_model.run(spatial, glob)
    for i, (pos_id, y, x) in enumerate(placed):
        n = alone[i]["ownership"].shape[1]
        for key in ("policy", "policy_optimistic"):
            board = together[key][i, :-1].reshape(19, 19)
            np.testing.assert_allclose(board[y:y + n, x:x + n].ravel(), alone[i][key][0, :-1],
                                       atol=3e-5, err_msg=f"{pos_id} {key}")
            np.testing.assert_allclose(together[key][i, -1], alone[i][key][0, -1], atol=3e-5)
            outside = np.ones((19, 19), bool)
            outside[y:y + n, x:x + n] = False
            assert np.all(board[outside] <= -4000.0)
        for key in ("value", "score"):
            np.testing.assert_allclose(together[key][i], alone[i][key][0], atol=1e-5,
                                       err_msg=f"{pos_id} {key}")
        own = together["ownership"][i]
        np.testing.assert_allclose(own[y:y + n, x:x + n], alone[i]["ownership"][0], atol=1e-5)
        assert np.count_nonzero(own) <= n * n


def subnormals(w: np.ndarray) -> int:
    """Count of subnormal float32 numbers, read off their bits (the engine's sessions have the CPU
    treat subnormal operands as zero, numpy's comparisons on this thread included)."""
    bits = np.ascontiguousarray(w, np.float32).view(np.uint32)
    return int(np.count_nonzero(((bits & 0x7F800000) == 0) & ((bits & 0x007FFFFF) != 0)))


def test_the_conversion_flushes_the_nets_subnormal_weights(b10_file, b10_onnx):
    """The feed-forward weights of b10c384h6nbttflrs hold subnormal numbers, which cost 10-25x
    in float32 products on Intel CPUs; the converted graph holds none (and still matches KataGo
    above)."""
    import onnx
    from onnx import numpy_helper

    from dosaku.networks import katago_bin as kb

    matmuls = [layer.w for layer in kb.layers(kb.load(b10_file)) if isinstance(layer, kb.MatMul)]
    assert sum(subnormals(w) for w in matmuls) > 100_000
    weights = [numpy_helper.to_array(t) for t in onnx.load(str(b10_onnx)).graph.initializer]
    floats = [w for w in weights if w.dtype == np.float32]
    assert sum(w.size for w in floats) > 10_000_000
    assert sum(subnormals(w) for w in floats) == 0


@pytest.fixture(scope="module")
def b10_full_onnx(b10_file, tmp_path_factory):
    """The transformer net converted as the engine plays it: a graph for full boards."""
    from dosaku.networks.katago_convert import convert
    return convert(b10_file, tmp_path_factory.mktemp("b10full") / "full.onnx", full_board=True)


def test_the_full_board_graph_gives_the_general_graphs_outputs(b10_model, b10_full_onnx,
                                                               katago_b10_reference):
    """On all 48 reference positions, each in a buffer of its own size (as the engine feeds
    them), the graph without the mask's work gives the general graph's raw outputs within 1e-5."""
    full = oe.OnnxModel(b10_full_onnx, threads=2)
    assert full.full_board and not b10_model.full_board
    by_size = {}
    for pos in katago_b10_reference.values():
        by_size.setdefault(pos["board_size"], []).append(replay(pos))
    for games in by_size.values():
        rows = [raw_nn_inputs(b10_model, game, 0)[:2] for game in games]
        spatial, glob = (np.concatenate(part) for part in zip(*rows))
        general, specialised = b10_model.run(spatial, glob), full.run(spatial, glob)
        for key, value in general.items():
            np.testing.assert_allclose(specialised[key], value, atol=1e-5, rtol=0, err_msg=key)


def test_the_full_board_graph_never_reads_the_mask_and_refuses_off_board_points(
        b10_full_onnx, katago_b10_reference):
    """The input planes reach only the first convolution and a Shape (the board's size): no
    mask multiplies, pools or biases attention. A batch with an off-board point is refused."""
    import onnx
    graph = onnx.load(str(b10_full_onnx)).graph
    readers = sorted(n.op_type for n in graph.node if "spatial" in n.input)
    assert readers == ["Conv", "Shape"]
    assert not any(n.op_type == "Concat" and any("key" in i for i in n.input) for n in graph.node)
    full = oe.OnnxModel(b10_full_onnx, threads=2)
    game = replay(katago_b10_reference["gnugo9_n20_k7.5"])
    spatial, glob, _ = raw_nn_inputs(full, game, 0)
    padded = np.zeros((1, spatial.shape[1], 10, 10), np.float32)
    padded[:, :, :9, :9] = spatial
    with pytest.raises(ValueError, match="off-board points"):
        full.run(padded, glob)
