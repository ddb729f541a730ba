"""The networks Dosaku ships, installed with the package so that any install finds its net.

A package rather than a plain folder so that `pip install .` and a wheel carry the .onnx files
and their model cards (setup.cfg package_data) and the engine finds them wherever they were
installed. Pip unpacks wheels into ordinary files, so a path beside this module is a real file
that onnxruntime can open. Imports nothing heavy: run_engine reads it before GTP answers.

Each shipped net comes with its int8 copy in int8/, made by networks/quantize.py and named with
its hash in the model card, so that no engine calibrates a shipped net at its first start.
"""

import hashlib
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
INT8_DIR = HERE / "int8"
DEFAULT_NAME = "default"


def model_path(name: str) -> Path:
    """The shipped network `name` (e.g. `zero-9x9`); `--model NAME` finds it here."""
    return HERE / f"{name}.onnx"


def card_path(name: str) -> Path:
    """The model card of network `name`: how it was made, its size, feature set, sha256."""
    return HERE / f"{name}.md"


def int8_model_path(name: str) -> Path:
    """The int8 copy of shipped network `name`."""
    return INT8_DIR / f"{name}.onnx"


def card_value(name: str, key: str) -> str | None:
    """The value of a `key: value` line of network `name`'s model card (None without one)."""
    try:
        text = card_path(name).read_text()
    except OSError:
        return None
    found = re.search(rf"^{re.escape(key)}:[ \t]*(\S+)[ \t]*$", text, re.MULTILINE)
    return found.group(1) if found else None


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shipped_int8_for(model: Path) -> Path | None:
    """The shipped int8 copy of `model` when `model` is a shipped net and both files still hash
    to what its card states; None otherwise."""
    name = model.stem
    if model.resolve() != model_path(name) or not int8_model_path(name).is_file():
        return None
    copy = int8_model_path(name)
    if (card_value(name, "sha256") != file_sha256(model)
            or card_value(name, "int8_sha256") != file_sha256(copy)):
        return None
    return copy


def shipped_names() -> list[str]:
    """Names of every network shipped here (the default among them)."""
    return sorted(p.stem for p in HERE.glob("*.onnx"))


def default_model_path() -> Path:
    """The network the engine uses when no --model is given (the file may be absent)."""
    return model_path(DEFAULT_NAME)


def default_card_path() -> Path:
    """The default network's model card."""
    return card_path(DEFAULT_NAME)
