"""OnnxModel (loading, metadata checks, batching, providers) and KataGo-style post-processing."""

import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from dosaku.engine.evaluators import onnx_evaluator as oe
from dosaku.engine.evaluators.features import FEATURE_SET, NUM_GLOBAL, NUM_SPATIAL
from dosaku.engine.rules.coords import action_from_xy
from dosaku.engine.rules.rulesets import PRESETS


def random_batch(rng, n, size):
    spatial = (rng.random((n, NUM_SPATIAL, size, size)) < 0.25).astype(np.float32)
    spatial[:, 0] = 1.0
    glob = rng.normal(0, 0.5, (n, NUM_GLOBAL)).astype(np.float32)
    return spatial, glob


def test_model_metadata_and_shapes(b6c96_model):
    assert b6c96_model.feature_set == "katago-v7"
    assert (b6c96_model.num_spatial, b6c96_model.num_global) == (22, 19)
    assert b6c96_model.score_outputs == ("scoremean", "scorestdev", "lead", "vartime")
    assert b6c96_model.multipliers["lead"] == 20.0
    assert b6c96_model.providers[0] == "CPUExecutionProvider"
    rng = np.random.default_rng(0)
    for size in (9, 13, 19):
        raw = b6c96_model.run(*random_batch(rng, 2, size))
        assert raw["policy"].shape == (2, size * size + 1)
        assert raw["value"].shape == (2, 3) and raw["score"].shape == (2, 4)
        assert raw["ownership"].shape == (2, size, size)


@pytest.mark.parametrize("size", [9, 19])
def test_batch_of_16_equals_16_singles(b6c96_model, size):
    rng = np.random.default_rng(size)
    spatial, glob = random_batch(rng, 16, size)
    batch = b6c96_model.run(spatial, glob)
    for i in range(16):
        single = b6c96_model.run(spatial[i:i + 1], glob[i:i + 1])
        for key, arr in single.items():
            np.testing.assert_allclose(batch[key][i:i + 1], arr, atol=2e-5, rtol=1e-5, err_msg=key)
    assert not np.allclose(batch["policy"][0], batch["policy"][1])  # inputs differ, so must outputs


def with_metadata(src, dst, **changes):
    proto = onnx.load(str(src))
    props = {p.key: p.value for p in proto.metadata_props}
    props.update(changes)
    props = {k: v for k, v in props.items() if v is not None}
    del proto.metadata_props[:]
    onnx.helper.set_model_props(proto, props)
    onnx.save(proto, str(dst))
    return dst


def test_unknown_or_missing_feature_set_is_refused(b6c96_onnx, tmp_path):
    odd = with_metadata(b6c96_onnx, tmp_path / "odd.onnx", feature_set="katago-v99")
    with pytest.raises(oe.UnsupportedModelError, match="'katago-v99'.*katago-v7"):
        oe.OnnxModel(odd)
    bare = with_metadata(b6c96_onnx, tmp_path / "bare.onnx", feature_set=None)
    with pytest.raises(oe.UnsupportedModelError, match="no feature_set metadata"):
        oe.OnnxModel(bare)


def test_feature_set_with_wrong_input_shapes_is_refused(tmp_path):
    from onnx import TensorProto, helper
    spatial = helper.make_tensor_value_info("spatial", TensorProto.FLOAT, ["N", 5, "H", "W"])
    glob = helper.make_tensor_value_info("global", TensorProto.FLOAT, ["N", 19])
    out = helper.make_tensor_value_info("value", TensorProto.FLOAT, ["N", 19])
    graph = helper.make_graph([helper.make_node("Identity", ["global"], ["value"])], "g",
                              [spatial, glob], [out])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    helper.set_model_props(proto, {"feature_set": FEATURE_SET})
    onnx.save(proto, str(tmp_path / "five.onnx"))
    with pytest.raises(oe.UnsupportedModelError, match=r"needs \(22, 19\).*\(5, 19\)"):
        oe.OnnxModel(tmp_path / "five.onnx")


SUBNORMAL_PRODUCT = """
import sys, threading
import numpy as np, onnx, onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from dosaku.engine.evaluators.features import FEATURE_SET, NUM_GLOBAL, NUM_SPATIAL
from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
spatial = helper.make_tensor_value_info("spatial", TensorProto.FLOAT, ["N", NUM_SPATIAL, 9, 9])
glob = helper.make_tensor_value_info("global", TensorProto.FLOAT, ["N", NUM_GLOBAL])
out = helper.make_tensor_value_info("value", TensorProto.FLOAT, ["N", 1])
w = numpy_helper.from_array(np.full((NUM_GLOBAL, 1), 1e-40, np.float32), "w")
graph = helper.make_graph([helper.make_node("MatMul", ["global", "w"], ["value"])], "g",
                          [spatial, glob], [out], initializer=[w])
proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
proto.ir_version = 8
helper.set_model_props(proto, {"feature_set": FEATURE_SET})
onnx.save(proto, sys.argv[1])
feeds = (np.zeros((1, NUM_SPATIAL, 9, 9), np.float32), np.ones((1, NUM_GLOBAL), np.float32))
plain = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
print(plain.run(None, {"spatial": feeds[0], "global": feeds[1]})[0][0, 0])
models, values = [], []
for job in (lambda: models.append(OnnxModel(sys.argv[1])),  # built on a loader thread,
            lambda: values.append(models[0].run(*feeds)["value"][0, 0])):  # run on another
    thread = threading.Thread(target=job)
    thread.start()
    thread.join()
print(values[0])
"""


def test_subnormal_numbers_are_zero_in_the_engines_network_calls(tmp_path):
    """A product with a subnormal weight (1e-40 < float32's smallest normal, 1.18e-38) is zero
    in OnnxModel.run, on a thread other than the one that built the session (as in the GTP
    engine), and not in a plain session. A process of its own: the CPU's flags are per thread
    and new threads inherit them."""
    import platform
    import subprocess
    import sys
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("the flags are set on x86-64 Linux only")
    plain, ours = subprocess.run([sys.executable, "-c", SUBNORMAL_PRODUCT,
                                  str(tmp_path / "m.onnx")], capture_output=True, text=True,
                                 check=True).stdout.split()
    assert float(plain) == pytest.approx(19e-40, rel=1e-3)
    assert float(ours) == 0.0


def test_missing_provider_falls_back_to_cpu(b6c96_onnx, capsys):
    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("CUDA is available here, so there is nothing to fall back from")
    model = oe.OnnxModel(b6c96_onnx, provider="cuda")
    assert model.providers == ["CPUExecutionProvider"]
    err = capsys.readouterr().err
    assert "cuda" in err and "using the CPU" in err
    with pytest.raises(ValueError, match="unknown provider"):
        oe.choose_providers("tpu")


def test_provider_fallback_message(capsys):
    if "DmlExecutionProvider" in ort.get_available_providers():
        pytest.skip("DirectML is available here")
    assert oe.choose_providers("dml") == ["CPUExecutionProvider"]
    err = capsys.readouterr().err
    assert "dml" in err and "not available" in err and "using the CPU" in err


# ------------------------------------------------------------------ post-processing

def test_policy_softmax_masks_illegal_moves():
    logits = np.array([[1.0, 2.0, 3.0, 0.5], [0.0, -1.0, 5.0, 2.0]], np.float32)
    legal = np.array([[True, False, True, True], [False, False, False, True]])
    probs = oe.policy_probs(logits, legal)
    e = [math.exp(1.0), math.exp(3.0), math.exp(0.5)]
    expected0 = [e[0] / sum(e), 0.0, e[1] / sum(e), e[2] / sum(e)]
    np.testing.assert_allclose(probs[0], expected0, rtol=1e-6)
    np.testing.assert_allclose(probs[1], [0, 0, 0, 1], atol=0)
    hot = oe.policy_probs(logits, legal, temperature=0.5)
    assert hot[0, 2] > probs[0, 2]


def test_wdl_and_no_result_suppression():
    logits = np.array([[1.0, 0.0, -2.0]])
    z = [math.exp(1.0), 1.0, math.exp(-2.0)]
    np.testing.assert_allclose(oe.wdl(logits, True)[0], [v / sum(z) for v in z], rtol=1e-12)
    np.testing.assert_allclose(oe.wdl(logits, False)[0], [z[0] / (z[0] + 1), 1 / (z[0] + 1), 0])
    assert oe.no_result_possible(PRESETS["chinese"])
    assert not oe.no_result_possible(PRESETS["tromp-taylor"])


def test_score_stats_follow_katago_multipliers():
    raw = np.array([[0.25, 0.1, -0.4, 0.3]])
    probs = np.array([[0.6, 0.3, 0.1]])
    s = oe.score_stats(raw, probs)
    stdev = 20 * math.log1p(math.exp(0.1))
    assert s["score_mean"][0] == pytest.approx(20 * 0.25 * 0.9)
    assert s["lead"][0] == pytest.approx(20 * -0.4 * 0.9)
    assert s["score_stdev"][0] == pytest.approx(stdev)
    assert s["score_mean_sq"][0] == pytest.approx((5.0 ** 2 + stdev ** 2) * 0.9)
    custom = oe.score_stats(raw, probs, multipliers={"lead": 10.0})
    assert custom["lead"][0] == pytest.approx(10 * -0.4 * 0.9)


def test_to_evaluation_from_side_to_move(b6c96_model):
    rng = np.random.default_rng(3)
    spatial, glob = random_batch(rng, 4, 9)
    raw = b6c96_model.run(spatial, glob)
    legal = rng.random((4, 82)) < 0.7
    legal[:, -1] = True
    ev = oe.to_evaluation(raw, legal, b6c96_model, allow_no_result=False)
    np.testing.assert_allclose(ev.policy.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(ev.policy[~legal] == 0)
    p = oe.wdl(raw["value"], False)
    np.testing.assert_allclose(ev.value, p[:, 0] - p[:, 1], rtol=1e-6)
    np.testing.assert_allclose(ev.score, 20 * raw["score"][:, 2], rtol=1e-5)
    np.testing.assert_allclose(ev.ownership, np.tanh(raw["ownership"]).reshape(4, 81), rtol=1e-6)


# ------------------------------------------------------------------ symmetries

SPEC_TABLE = {  # katago-network.md §3.10: (x, y) -> new (x, y) on an N x N board
    0: lambda x, y, n: (x, y), 1: lambda x, y, n: (x, n - 1 - y),
    2: lambda x, y, n: (n - 1 - x, y), 3: lambda x, y, n: (n - 1 - x, n - 1 - y),
    4: lambda x, y, n: (y, x), 5: lambda x, y, n: (n - 1 - y, x),
    6: lambda x, y, n: (y, n - 1 - x), 7: lambda x, y, n: (n - 1 - y, n - 1 - x),
}


@pytest.mark.parametrize("sym", range(8))
def test_symmetry_moves_points_as_the_spec_table(sym):
    n = 5
    for x, y in [(1, 0), (3, 1), (4, 2)]:
        board = np.zeros((n, n))
        board[y, x] = 1
        moved = oe.apply_symmetry(board[None], sym)[0]
        nx, ny = SPEC_TABLE[sym](x, y, n)
        assert moved[ny, nx] == 1 and moved.sum() == 1
        np.testing.assert_array_equal(oe.undo_symmetry(moved, sym), board)


def test_symmetry_on_rectangles_ignores_transpose():
    board = np.arange(12.0).reshape(3, 4)
    for sym in range(4):
        np.testing.assert_array_equal(oe.apply_symmetry(board, sym + 4),
                                      oe.apply_symmetry(board, sym))


@pytest.mark.parametrize("sym", range(8))
def test_undo_symmetry_outputs_returns_points_to_the_board(sym):
    n, x, y = 7, 5, 1
    nx, ny = SPEC_TABLE[sym](x, y, n)
    policy = np.zeros((1, n * n + 1), np.float32)
    policy[0, ny * n + nx] = 0.75  # the net's output for the moved point
    policy[0, -1] = 0.25
    own = np.zeros((1, n, n), np.float32)
    own[0, ny, nx] = -0.5
    raw = {"policy": policy, "policy_optimistic": policy, "ownership": own,
           "value": np.ones((1, 3))}
    back = oe.undo_symmetry_outputs(raw, sym)
    for key in ("policy", "policy_optimistic"):
        assert back[key][0, y * n + x] == 0.75 and back[key][0, -1] == 0.25
        assert back[key].sum() == 1.0
    assert back["ownership"][0, y, x] == -0.5 and back["ownership"].sum() == -0.5
    assert back["value"] is raw["value"]


# ------------------------------------------------------------------ KataGo's own outputs

# Positions whose V7 features are trivial to build by hand: at most two isolated stones with 4
# liberties (no liberty or ladder planes; area = stones, or the whole board when only one colour
# is on it), Chinese rules, no passes except one that hides
# the history (§3.4: under Chinese rules the net sees no history right after the opponent passes).
TRIVIAL = ["gnugo9_n0_k7.5", "gnugo9_n0_k6.5", "gnugo13_n0_k7.5", "gnugo13_n0_k6.5",
           "gnugo19_n0_k7.5", "gnugo19_n0_k6.5", "gnugo9_n1_k7.5", "gnugo9_n2_k7.5",
           "orient9_B_C8", "orient13_B_K3", "orient19_B_R5_W_C16", "pass9_empty_black_pass",
           "pass19_empty_black_pass"]
COLUMNS = "ABCDEFGHJKLMNOPQRST"


def komi_wave(k, area):
    """katago-network.md §3.7, global 18."""
    floor_k = 2 * math.floor(k / 2) if area % 2 == 0 else 2 * math.floor((k - 1) / 2) + 1
    d = min(max(k - floor_k, 0.0), 2.0)
    return d if d < 0.5 else 1 - d if d < 1.5 else d - 2


def liberties(stones, x, y):
    """Liberty count of the chain at (x, y); stones[y][x] in '.', 'B', 'W'."""
    h, w = len(stones), len(stones[0])
    color, chain, libs, todo = stones[y][x], {(x, y)}, set(), [(x, y)]
    while todo:
        cx, cy = todo.pop()
        for nx, ny in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)):
            if 0 <= nx < w and 0 <= ny < h:
                if stones[ny][nx] == ".":
                    libs.add((nx, ny))
                elif stones[ny][nx] == color and (nx, ny) not in chain:
                    chain.add((nx, ny))
                    todo.append((nx, ny))
    return len(libs)


def simple_features(stones, pla, history, komi, rule_globals=(0.0, 0.0, 0.0), buffer=None):
    """V7 features of a capture-free position without ladders or pass-alive groups.

    stones: rows (top first) of '.', 'B', 'W'; history: (x, y) of the last moves, most recent
    first; rule_globals: globals 6, 7, 8. Area (§3.6, area scoring): every stone, plus the whole
    board when only one colour is on it.
    """
    h, w = len(stones), len(stones[0])
    bh, bw = buffer or (h, w)
    spatial = np.zeros((1, NUM_SPATIAL, bh, bw), np.float32)
    spatial[0, 0, :h, :w] = 1
    for y in range(h):
        for x in range(w):
            if stones[y][x] != ".":
                spatial[0, 1 if stones[y][x] == pla else 2, y, x] = 1
                libs = liberties(stones, x, y)
                if libs <= 3:
                    spatial[0, 2 + libs, y, x] = 1
    for k, (x, y) in enumerate(history[:5], start=1):
        spatial[0, 8 + k, y, x] = 1
    own, opp = spatial[0, 1].copy(), spatial[0, 2].copy()
    if own.any() != opp.any():
        own, opp = (spatial[0, 0], opp) if own.any() else (own, spatial[0, 0])
    spatial[0, 18], spatial[0, 19] = own, opp
    self_komi = komi if pla == "W" else -komi
    glob = np.zeros((1, NUM_GLOBAL), np.float32)
    glob[0, 5] = self_komi / 20
    glob[0, 6:9] = rule_globals
    glob[0, 18] = komi_wave(self_komi, h * w)
    return spatial, glob


def replay(width, height, moves):
    """Stones and history (most recent first) after capture-free moves [(colour, vertex)]."""
    stones = [["."] * width for _ in range(height)]
    history = []
    for color, vertex in moves:
        x, y = COLUMNS.index(vertex[0]), height - int(vertex[1:])
        stones[y][x] = color
        history.insert(0, (x, y))
    return ["".join(r) for r in stones], history


def trivial_features(pos):
    n = pos["board_size"]
    moves = pos["moves"]
    if moves and moves[-1][1] == "pass":
        assert len(moves) == 1  # the Chinese-rules friendly-pass case: history hidden
        moves = []
    assert not any(v == "pass" for _, v in moves)
    stones, history = replay(n, n, moves)
    return simple_features(stones, pos["to_move"], history, pos["komi"])


@pytest.mark.parametrize("pos_id", TRIVIAL)
def test_katago_reference_positions_with_trivial_features(b6c96_model, katago_reference,
                                                          pos_id):
    pos = katago_reference[pos_id]
    ref = pos["raw_nn"]
    spatial, glob = trivial_features(pos)
    raw = b6c96_model.run(spatial, glob)
    legal = np.append(spatial[0, 1:3].sum(axis=0).reshape(-1) == 0, True)[None]
    policy = oe.policy_probs(raw["policy"], legal)[0]
    probs = oe.wdl(raw["value"], oe.no_result_possible(PRESETS["chinese"]))[0]
    stats = oe.score_stats(raw["score"], probs[None], b6c96_model.score_outputs,
                           b6c96_model.multipliers)
    own = oe.ownership(raw["ownership"])[0]
    sign = 1.0 if pos["to_move"] == "W" else -1.0
    white_win, white_loss = (probs[0], probs[1]) if sign > 0 else (probs[1], probs[0])
    assert white_win == pytest.approx(ref["whiteWin"], abs=2e-3)
    assert white_loss == pytest.approx(ref["whiteLoss"], abs=2e-3)
    assert probs[2] == pytest.approx(ref["noResult"], abs=2e-3)
    assert sign * stats["lead"][0] == pytest.approx(ref["whiteLead"], abs=0.02)
    assert sign * stats["score_mean"][0] == pytest.approx(ref["whiteScoreSelfplay"], abs=0.02)
    assert stats["score_mean_sq"][0] == pytest.approx(ref["whiteScoreSelfplaySq"], rel=1e-3)
    ref_policy = np.array([[np.nan if v is None else v for v in row] for row in ref["policy"]])
    np.testing.assert_array_equal(np.isnan(ref_policy).reshape(-1), ~legal[0, :-1])
    np.testing.assert_allclose(policy[:-1], np.nan_to_num(ref_policy.reshape(-1)), atol=2e-3)
    assert policy[-1] == pytest.approx(ref["policyPass"], abs=2e-3)
    np.testing.assert_allclose(sign * own, np.array(ref["whiteOwnership"]), atol=2e-3)


# katago-network.md §5.3: outputs printed by KataGo's own tests (CUDA, TF32), same model.

def white_view(model, spatial, glob, sym, pla, allow_no_result):
    raw = oe.undo_symmetry_outputs(model.run(oe.apply_symmetry(spatial, sym), glob), sym)
    probs = oe.wdl(raw["value"], allow_no_result)[0]
    stats = oe.score_stats(raw["score"], probs[None])
    sign = 1.0 if pla == "W" else -1.0
    win = probs[0] if sign > 0 else probs[1]
    return raw, probs, win, sign * stats["lead"][0], sign * stats["score_mean"][0], stats


def test_katago_tiny_board_test_5x5_in_6x6_buffer_symmetry_3(b6c96_model):
    stones = [".....", "...B.", "..W..", ".BBW.", "....."]
    spatial, glob = simple_features(stones, "W", [], 7.5, (1.0, 0.5, 1.0), buffer=(6, 6))
    assert sorted(zip(*np.nonzero(spatial[0, 5]))) == [(2, 2), (3, 3)]  # the 3-liberty stones
    raw, probs, win, lead, mean, stats = white_view(b6c96_model, spatial, glob, 3, "W", False)
    assert win == pytest.approx(0.9025, abs=1e-3) and probs[1] == pytest.approx(0.0975, abs=1e-3)
    assert mean == pytest.approx(9.37, abs=0.02) and lead == pytest.approx(7.87, abs=0.02)
    assert stats["score_mean_sq"][0] == pytest.approx(242.9, abs=0.2)
    legal = np.zeros((1, 37), bool)
    legal[0, -1] = True
    for y in range(5):
        for x in range(5):
            legal[0, action_from_xy(x, y, 6)] = stones[y][x] == "."
    policy = oe.policy_probs(raw["policy"], legal)[0]
    permille = {(x, y): policy[action_from_xy(x, y, 6)] * 1000 for y in range(5) for x in range(5)}
    top = sorted(permille, key=permille.get, reverse=True)[:3]
    assert top == [(3, 2), (1, 2), (2, 1)]
    for point, expected in zip(top, (607, 237, 150)):
        assert permille[point] == pytest.approx(expected, abs=2)
    assert policy[-1] * 1000 < 0.5


@pytest.mark.parametrize("sym,white_win,white_lead", [
    (1, 0.532987, 0.577), (4, 0.525422, 0.408), (6, 0.549882, 1.019)])
def test_katago_rawnn_9x9_symmetries(b6c96_model, sym, white_win, white_lead):
    stones, history = replay(9, 9, [("B", "C3"), ("W", "C6")])
    spatial, glob = simple_features(stones, "B", history, 7.5)
    _, probs, win, lead, _, _ = white_view(b6c96_model, spatial, glob, sym, "B", True)
    assert win == pytest.approx(white_win, abs=3e-4)
    assert probs[2] == pytest.approx(6e-5, abs=3e-5)
    assert lead == pytest.approx(white_lead, abs=0.01)


def test_katago_rawnn_7x10_all_symmetries(b6c96_model):
    stones, history = replay(7, 10, [("B", "C3"), ("W", "C7"), ("B", "F7")])
    spatial, glob = simple_features(stones, "W", history, 7.5, (1.0, -0.5, 1.0))
    assert glob[0, 18] == -0.5  # even area
    expected = [0.690885, 0.718946, 0.680947, 0.693356]
    wins = [white_view(b6c96_model, spatial, glob, sym, "W", False)[2] for sym in range(8)]
    np.testing.assert_allclose(wins[:4], expected, atol=3e-4)
    np.testing.assert_array_equal(wins[4:], wins[:4])  # non-square: transpose bit ignored


def test_int8_dot_instructions_are_read_from_the_cpu_flags():
    from dosaku.engine.evaluators.onnx_options import cpu_has_int8_dot
    assert cpu_has_int8_dot("flags\t\t: fpu sse2 avx2 avx512f avx512_vnni avx512_bf16\n")
    assert cpu_has_int8_dot("flags\t\t: fpu avx2 avx_vnni\n")
    assert cpu_has_int8_dot("flags\t\t: fpu avx2 avx512f amx_tile amx_int8\n")
    assert not cpu_has_int8_dot("flags\t\t: fpu sse2 avx avx2 fma\nbugs\t\t: avx_vnni\n")


def test_transformer_nets_play_int8_of_every_product_by_default_on_avx2_without_vnni():
    from dosaku.engine.evaluators.onnx_options import (
        cpu_plays_transformers_in_int8,
        int8_products_for_cpu,
    )
    avx2_only = "flags\t\t: fpu sse2 avx avx2 fma\n"
    for vnni in ("flags\t\t: fpu avx2 avx512f avx512_vnni\n", "flags\t\t: fpu avx2 avx_vnni\n"):
        assert not cpu_plays_transformers_in_int8(vnni) and int8_products_for_cpu(vnni) == "ffn"
    assert cpu_plays_transformers_in_int8(avx2_only) and int8_products_for_cpu(avx2_only) == "all"
    assert not cpu_plays_transformers_in_int8("flags\t\t: fpu sse2 avx\n")


@pytest.mark.parametrize("int8_dot", [True, False])
def test_saturation_work_around_only_on_cpus_without_int8_dot_products(monkeypatch, int8_dot):
    """session.x64quantprecision keeps AVX2's saturating uint8 x int8 sums off full-range
    weights, but on CPUs with VNNI or AMX it would only keep onnxruntime off their kernels."""
    monkeypatch.setattr(oe, "cpu_has_int8_dot", lambda: int8_dot)
    opts = oe.session_options()
    if int8_dot:
        with pytest.raises(Exception, match="x64quantprecision"):
            opts.get_session_config_entry("session.x64quantprecision")
    else:
        assert opts.get_session_config_entry("session.x64quantprecision") == "1"
