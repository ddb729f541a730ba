"""bench/precision.py's graph rewrites against plain numpy products: the fused Q/K/V and
FFN up+gate products, and MatMulNBits' 8-bit block layout."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dosaku.bench import precision
from dosaku.networks import int8_transformer


def products(roles: list[str], widths: list[int], k: int, rng) -> tuple[onnx.ModelProto, list]:
    """x [2,5,k] read by one MatMul per role, named "role:layer" as katago_convert names them;
    each output is a graph output. Returns the model and the weights."""
    weights = [rng.standard_normal((k, n)).astype(np.float32) for n in widths]
    nodes = [helper.make_node("MatMul", ["x", f"w{i}"], [f"y{i}"], name=f"{role}:layer0")
             for i, role in enumerate(roles)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, k])],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None)
         for i in range(len(roles))],
        [numpy_helper.from_array(w, f"w{i}") for i, w in enumerate(weights)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("com.microsoft", 1)],
                             ir_version=8), weights


def run(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


def test_fused_products_give_each_role_its_own_product():
    rng = np.random.default_rng(0)
    roles = ["attention_k", "ffn_gate", "attention_q", "ffn_up", "attention_v", "ffn_down"]
    model, weights = products(roles, [8, 12, 8, 12, 6, 5], 16, rng)
    precision.fuse(model)
    ops = sorted(n.op_type for n in model.graph.node)
    assert ops == ["MatMul", "MatMul", "MatMul", "Split", "Split"]  # ffn_down alone stays
    assert {n.name for n in model.graph.node if n.op_type == "MatMul"} == {
        "attention_qkv:layer0", "ffn_up_gate:layer0", "ffn_down:layer0"}
    x = rng.standard_normal((2, 5, 16)).astype(np.float32)
    for y, w in zip(run(model, x), weights):
        np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)


def test_nbits_weights_round_each_block_to_its_own_scale():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 3)).astype(np.float32)
    w[:32, 0] *= 100  # one block of one column far larger than the others
    q, scale = precision.nbits_weights(w, 32)
    assert q.shape == (3, 2, 32) and scale.shape == (6,)
    back = ((q.astype(np.float32) - 128) * scale.reshape(3, 2, 1)).reshape(3, 64).T
    step = np.repeat(scale.reshape(3, 2), 32, axis=1).T
    assert np.all(np.abs(back - w) <= step / 2 + 1e-6)
    assert scale[1] < scale[0] / 20  # the small block of column 0 keeps its fine step
    with pytest.raises(ValueError, match="blocks of 32"):
        precision.nbits_weights(w[:48], 32)


def test_matmulnbits_products_match_numpy_within_int8_rounding():
    """The rewritten product against x @ w: within 1 % of the output's scale (int8 weights and
    activations), where a wrong layout (blocks or columns swapped) errs by about 100 %."""
    rng = np.random.default_rng(2)
    model, weights = products(["attention_out"], [24], 64, rng)
    precision.to_nbits(model)
    assert [n.op_type for n in model.graph.node] == ["MatMulNBits"]
    x = rng.standard_normal((2, 5, 64)).astype(np.float32)
    (y,) = run(model, x)
    exact = x @ weights[0]
    assert np.abs(y - exact).max() < 0.01 * np.abs(exact).max()


def test_gptq_with_7_bit_levels_keeps_the_range_and_beats_plain_rounding():
    """gptq(levels=63), as bench/precision.py's 7-bit copies take it: weights in [-63, 63],
    each column's largest at +-63, and on inputs with correlated channels a smaller output
    error than rounding each weight to the same grid."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4000, 6)) @ rng.standard_normal((6, 24))
         + 0.1 * rng.standard_normal((4000, 24)))  # 24 channels, nearly 6 directions
    w = rng.standard_normal((24, 10))
    q, scale = int8_transformer.gptq(w, x.T @ x / len(x), levels=63)
    assert q.dtype == np.int8 and np.abs(q).max(axis=0).tolist() == [63] * 10
    plain = np.clip(np.round(w / scale), -63, 63)
    err_gptq = np.linalg.norm(x @ (q * scale - w))
    err_plain = np.linalg.norm(x @ (plain * scale - w))
    assert err_gptq < 0.6 * err_plain  # 0.51 at this seed
