"""bench/avx2_only.py: under it onnxruntime runs the kernels of an AVX2-only CPU. What shows it
is a result, not a timing: without VNNI, onnxruntime's uint8 x int8 product adds pairs of
products in saturating 16-bit sums, so a product of full-range weights comes out clipped far
below its value, which VNNI's kernels compute within the quantization's rounding. Needs Linux on
x86-64, root (a private mount namespace), gcc and objdump: the test says which is missing."""

import os
import platform
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dosaku.bench import avx2_only
from dosaku.engine.evaluators.onnx_options import cpu_flags, cpu_has_int8_dot

K = 64  # inputs of the product; every weight 127 and every input 1 but one -1

PRODUCT = f"""
import sys
import numpy as np
import onnxruntime as ort
from dosaku.engine.evaluators.onnx_options import cpu_flags
x = np.ones((1, {K}), np.float32)
x[0, 0] = -1.0
session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
print(float(session.run(None, {{"x": x}})[0][0, 0]), ort.__file__, int("avx512f" in cpu_flags()),
      int("avx2" in cpu_flags()))
"""


def full_range_product(path) -> float:
    """An onnxruntime DynamicQuantizeMatMul of K inputs by weights of 127, its exact value."""
    graph = helper.make_graph(
        [helper.make_node("DynamicQuantizeMatMul", ["x", "w", "s"], ["y"],
                          domain="com.microsoft")], "product",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])],
        [numpy_helper.from_array(np.full((K, 1), 127, np.int8), "w"),
         numpy_helper.from_array(np.ones(1, np.float32), "s")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                      helper.make_opsetid("com.microsoft", 1)]),
              str(path))
    return (K - 2) * 127.0


def missing() -> str | None:
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return "needs Linux on x86-64"
    if os.geteuid() != 0:
        return "needs root for its mount namespace"
    for tool in ("gcc", "objdump", "unshare"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    return None


def test_masked_cpuinfo_drops_the_avx512_and_vnni_flags_only():
    text = ("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma avx512f avx512_vnni avx_vnni "
            "avx512_bf16 amx_int8\nbogomips\t: 4900\n")
    masked = avx2_only.masked_cpuinfo(text)
    assert cpu_flags(masked) == {"fpu", "sse2", "avx", "avx2", "fma"}
    assert "bogomips\t: 4900" in masked and not cpu_has_int8_dot(masked)


@pytest.mark.slow  # copies onnxruntime (70 MB) and disassembles its library
def test_under_it_onnxruntime_saturates_as_on_an_avx2_only_cpu(tmp_path):
    reason = missing()
    if reason:
        pytest.fail(f"bench/avx2_only.py {reason}")
    model = tmp_path / "product.onnx"
    exact = full_range_product(model)
    script = tmp_path / "product.py"
    script.write_text(PRODUCT)
    out = avx2_only.build(tmp_path / "avx2")

    def run(cmd):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        value, module, avx512, avx2 = done.stdout.split()
        return float(value), module, int(avx512), int(avx2)

    value, module, avx512, avx2 = run(avx2_only.command(out, [sys.executable, str(script),
                                                              str(model)]))
    assert module.startswith(str(out)) and not avx512 and avx2
    assert value < exact / 4  # clipped: each pair's sum 2 x 255 x 127 tops 32767
    native, _, _, _ = run([sys.executable, str(script), str(model)])
    if cpu_has_int8_dot():  # here VNNI computes it: the two kernels differ
        assert abs(native - exact) < 0.02 * exact
    else:  # an AVX2-only CPU clips it the same way by itself
        assert native == pytest.approx(value, rel=1e-6)
