"""The networks Dosaku ships, installed with the package so that any install finds its net.

A package rather than a plain folder so that `pip install .` and a wheel carry the .onnx files
and their model cards (setup.cfg package_data) and the engine finds them wherever they were
installed. Pip unpacks wheels into ordinary files, so a path beside this module is a real file
that onnxruntime can open. Imports nothing heavy: run_engine reads it before GTP answers.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_NAME = "default"


def model_path(name: str) -> Path:
    """The shipped network `name` (e.g. `zero-9x9`); `--model NAME` finds it here."""
    return HERE / f"{name}.onnx"


def card_path(name: str) -> Path:
    """The model card of network `name`: how it was made, its size, feature set, sha256."""
    return HERE / f"{name}.md"


def shipped_names() -> list[str]:
    """Names of every network shipped here (the default among them)."""
    return sorted(p.stem for p in HERE.glob("*.onnx"))


def default_model_path() -> Path:
    """The network the engine uses when no --model is given (the file may be absent)."""
    return model_path(DEFAULT_NAME)


def default_card_path() -> Path:
    """The default network's model card."""
    return card_path(DEFAULT_NAME)
