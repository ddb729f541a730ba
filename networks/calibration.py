"""onnxruntime's static int8 quantization, its activation ranges calibrated on given inputs.

Offline work on a network file, kept apart from the engine's runtime session
(engine/evaluators/onnx_evaluator.py, the one module that runs onnxruntime): this one imports
only onnxruntime's quantization tools. networks/quantize.py chooses the nodes to quantize and the
calibration inputs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process


def quantize_int8(src: str | Path, dst: str | Path, feeds, float_nodes: list[str]) -> None:
    """onnxruntime's static int8 quantization of the Conv nodes of `src` into `dst` (QDQ,
    unsigned activations, per-channel signed weights), except the nodes named in float_nodes;
    activation ranges from `feeds`, a list of input dicts.

    Weights use 7 of their 8 bits (reduce_range): without VNNI, onnxruntime adds uint8 x int8
    products in saturating 16-bit sums, which full-range weights overflow (tests/test_quantize.py
    fails on an AVX2-only CPU with them)."""
    class Feeds:  # a CalibrationDataReader
        def __init__(self):
            self._it = iter(feeds)

        def get_next(self):
            return next(self._it, None)

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        # ONNX's own shape inference and graph clean-up first; the symbolic one (which needs
        # sympy) adds nothing for convolutions
        quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        quantize_static(str(pre), str(dst), Feeds(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True, reduce_range=True, op_types_to_quantize=["Conv"],
                        nodes_to_exclude=float_nodes)
