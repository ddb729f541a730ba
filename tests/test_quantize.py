"""training/quantize: the int8 network keeps float heads and stays within the float net's own
symmetry noise of KataGo's reference outputs (../shared/reference)."""

import numpy as np
import onnx
import pytest

from engine import onnx_evaluator as oe
from tests.test_katago_reference import MODEL, POSITIONS, REFERENCE, raw_nn, replay
from training import quantize as q


@pytest.fixture(scope="module")
def int8_model(tmp_path_factory):
    if not MODEL.exists() or not REFERENCE.exists():
        pytest.skip(f"{MODEL} or {REFERENCE} is absent (../shared not available)")
    from training.katago_convert import cached_onnx_for
    fp32 = cached_onnx_for(MODEL)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(q, "CALIBRATION", ((9, 7.0, 1),))  # one calibration game keeps it short
        out = q.quantize(fp32, tmp_path_factory.mktemp("int8") / "b6c96-int8.onnx")
    return oe.OnnxModel(fp32), oe.OnnxModel(out), onnx.load(str(out))


def test_trunk_convolutions_are_quantized_and_heads_are_not(int8_model):
    graph = int8_model[2].graph
    producer = {o: n for n in graph.node for o in n.output}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    quantized = {n.output[0] for n in convs
                 if n.input[1] in producer and producer[n.input[1]].op_type == "DequantizeLinear"}
    heads = {n.output[0] for n in convs if n.output[0].startswith(q.FLOAT_LAYERS)}
    assert heads and not heads & quantized
    assert quantized == {n.output[0] for n in convs} - heads


def test_int8_outputs_stay_within_the_symmetry_noise_of_the_float_net(int8_model):
    fp32, int8, _ = int8_model
    ninebynine = [p for p in POSITIONS if p["board_size"] == 9]
    err_int8, err_sym = [], []
    for pos in ninebynine:
        game = replay(pos)
        ref_win = pos["raw_nn"]["whiteWin"]
        err_int8.append(abs(raw_nn(int8, game, 0)[0] - ref_win))
        err_sym.extend(abs(raw_nn(fp32, game, s)[0] - ref_win) for s in range(1, 8))
    assert len(ninebynine) >= 10
    assert np.mean(err_int8) <= np.mean(err_sym)
    assert np.max(err_int8) <= max(np.max(err_sym), 0.05)
