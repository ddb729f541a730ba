"""The networks Dosaku ships, installed with the package so that any install finds its net.

A package rather than a plain folder so that `pip install .` and a wheel carry the network files
and their model cards (setup.cfg package_data) and the engine finds them wherever they were
installed. Pip unpacks wheels into ordinary files, so a path beside this module is a real file
that onnxruntime can open. Imports nothing heavy: run_engine reads it before GTP answers.

A net ships in the form its makers released it: KataGo's nets as KataGo's `.bin.gz` (converted
to ONNX into the user's cache at the first start, networks/cache.py), our own as the ONNX file
our export wrote. Each of our nets comes with its int8 copy in int8/, made by
networks/quantize.py and named with its hash in the model card, so that no engine calibrates a
shipped net at its first start.
"""

import hashlib
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
INT8_DIR = HERE / "int8"
SUFFIXES = (".onnx", ".bin.gz")  # the forms a shipped net comes in
DEFAULT_NAME = "b10c384h6nbttflrs"  # KataGo's transformer net (its card: the licence)
DEFAULT_ALIAS = "default"  # `--model default`: whichever net is the default
# names our nets shipped under before the default became KataGo's net: still accepted
FORMER_NAMES = {"b6c96-g170": "dosaku-b6c96-g170", "b4c64": "dosaku-b4c64",
                "zero-9x9": "dosaku-zero-9x9"}


def net_name(path: str | Path) -> str:
    """A network file's name without its format suffix (`b10c384h6nbttflrs.bin.gz` ->
    `b10c384h6nbttflrs`): what `name`, `version` and the start-up line call the net."""
    name = Path(path).name
    for suffix in (".bin.gz", ".txt.gz", ".bin", ".txt", ".onnx"):
        if name.lower().endswith(suffix):
            return name[:-len(suffix)]
    return name


def model_path(name: str) -> Path:
    """The file of shipped network `name` (e.g. `dosaku-zero-9x9`); `--model NAME` finds it
    here. For a name that ships nothing, the path an ONNX file of that name would have."""
    for suffix in SUFFIXES:
        path = HERE / f"{name}{suffix}"
        if path.is_file():
            return path
    return HERE / f"{name}.onnx"


def card_path(name: str) -> Path:
    """The model card of network `name`: where it came from, its licence, how it was checked."""
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
    name = net_name(model)
    if model.resolve() != model_path(name) or not int8_model_path(name).is_file():
        return None
    copy = int8_model_path(name)
    if (card_value(name, "sha256") != file_sha256(model)
            or card_value(name, "int8_sha256") != file_sha256(copy)):
        return None
    return copy


def shipped_names() -> list[str]:
    """Names of every network shipped here (the default among them)."""
    return sorted(net_name(p) for suffix in SUFFIXES for p in HERE.glob(f"*{suffix}"))


def default_model_path() -> Path:
    """The network the engine uses when no --model is given (the file may be absent)."""
    return model_path(DEFAULT_NAME)


def default_card_path() -> Path:
    """The default network's model card."""
    return card_path(DEFAULT_NAME)
