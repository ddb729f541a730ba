"""What can be said about ONNX networks before onnxruntime is loaded: which model files are
ONNX (anything else is a KataGo model to convert first) and the execution providers a user may
name. Imports nothing, so run_engine builds its flags from it and still answers GTP at once;
engine/onnx_evaluator.py hands the providers to onnxruntime."""

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
