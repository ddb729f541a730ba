"""networks/quantize: the int8 network keeps float heads and stays within the float net's own
symmetry noise of KataGo's reference outputs (../shared/reference)."""

import numpy as np
import onnx
import pytest

from engine import onnx_evaluator as oe
from tests.test_katago_reference import raw_nn, replay
from networks import quantize as q


@pytest.fixture(scope="module")
def int8_onnx(b6c96_onnx, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(q, "CALIBRATION", ((9, 7.0, 1),))  # one calibration game keeps it short
        return q.quantize(b6c96_onnx, tmp_path_factory.mktemp("int8") / "b6c96-int8.onnx")


def test_trunk_convolutions_are_quantized_and_heads_are_not(int8_onnx):
    graph = onnx.load(str(int8_onnx)).graph
    producer = {o: n for n in graph.node for o in n.output}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    quantized = {n.name for n in convs
                 if n.input[1] in producer and producer[n.input[1]].op_type == "DequantizeLinear"}
    heads = {n.name for n in convs if n.name.split(":")[-1].startswith(q.FLOAT_LAYERS)}
    assert len(heads) == 5 and not heads & quantized
    assert quantized == {n.name for n in convs} - heads


def test_int8_outputs_stay_within_the_symmetry_noise_of_the_float_net(int8_onnx, b6c96_model,
                                                                      katago_reference):
    int8 = oe.OnnxModel(int8_onnx)
    ninebynine = [p for p in katago_reference.values() if p["board_size"] == 9]
    err_int8, err_sym = [], []
    for pos in ninebynine:
        game = replay(pos)
        ref_win = pos["raw_nn"]["whiteWin"]
        err_int8.append(abs(raw_nn(int8, game, 0)[0] - ref_win))
        err_sym.extend(abs(raw_nn(b6c96_model, game, s)[0] - ref_win) for s in range(1, 8))
    assert len(ninebynine) >= 10
    assert np.mean(err_int8) <= np.mean(err_sym)
    assert np.max(err_int8) <= max(np.max(err_sym), 0.05)
