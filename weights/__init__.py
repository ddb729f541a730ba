"""The networks Dosaku ships, installed with the package so that any install finds its net.

A package rather than a plain folder so that `pip install .` and a wheel carry the .onnx files
and their model cards (setup.cfg package_data) and the engine finds them wherever they were
installed. Pip unpacks wheels into ordinary files, so a path beside this module is a real file
that onnxruntime can open. Imports nothing heavy: run_engine reads it before GTP answers.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_NAME = "default"


def default_model_path() -> Path:
    """The network the engine uses when no --model is given (the file may be absent)."""
    return HERE / f"{DEFAULT_NAME}.onnx"


def default_card_path() -> Path:
    """The default network's model card: how it was made, its size, feature set, sha256."""
    return HERE / f"{DEFAULT_NAME}.md"
