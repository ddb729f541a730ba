"""What can be said about ONNX networks before onnxruntime is loaded: which model files are ONNX
(anything else is a KataGo model to convert first), the execution providers a user may name, and
whether the CPU runs int8 networks fast. Imports nothing, so run_engine builds its flags from it and
still answers GTP at once; engine/evaluators/onnx_evaluator.py hands the providers to
onnxruntime."""

from pathlib import Path

PROVIDERS = {  # --provider name -> onnxruntime execution provider
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
    "dml": "DmlExecutionProvider",
}


def is_onnx_file(path: str | Path) -> bool:
    """Whether a model path names an ONNX file (by its suffix, in any case)."""
    return Path(path).suffix.lower() == ".onnx"


# the /proc/cpuinfo flag of the CPUs where onnxruntime's int8 convolutions beat float32 at
# equal time (docs/performance.md#int8-on-an-avx2-only-cpu): AVX2, which every CPU with VNNI,
# AVX-VNNI or AMX has too
INT8_FAST_FLAG = "avx2"


def cpu_runs_int8_fast(cpuinfo: str | None = None) -> bool:
    """Whether onnxruntime's int8 kernels beat float32 on this CPU (it has AVX2): what decides
    that `--int8` is on by default. Read from Linux's /proc/cpuinfo (or the text given); False
    where there is none to read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
    return INT8_FAST_FLAG in flags
