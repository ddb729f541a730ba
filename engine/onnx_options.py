"""What can be said about ONNX networks before onnxruntime is loaded: which model files are
ONNX (anything else is a KataGo model to convert first), the execution providers a user may
name, and whether the CPU runs int8 networks fast. Imports nothing, so run_engine builds its
flags from it and still answers GTP at once; engine/onnx_evaluator.py hands the providers to
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


# /proc/cpuinfo flags of the CPUs where onnxruntime's int8 convolutions win at equal time: AVX2
# (1.7x float32's evaluations a second; 46 wins, 6 draws, 28 losses against float32 at 0.5 s a
# move on 9x9) and every CPU with int8 dot-product instructions (AVX-512 VNNI, AVX-VNNI, AMX:
# 2.6-3.3x), which all have AVX2 too
INT8_FAST_FLAGS = ("avx2",)


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
    return any(flag in flags for flag in INT8_FAST_FLAGS)
