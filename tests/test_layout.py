"""The dependency direction of the architecture: run_engine -> gtp -> engine; training -> engine.

engine/ never imports gtp, training, torch or onnx, and only engine/onnx_evaluator.py imports
onnxruntime. Checked by reading the import statements of every module.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imported_top_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_engine_imports_no_front_end_or_training_code():
    offenders = {}
    for path in sorted((ROOT / "engine").glob("*.py")):
        bad = imported_top_names(path) & {"gtp", "training", "torch", "onnx", "run_engine"}
        if path.name != "onnx_evaluator.py":
            bad |= imported_top_names(path) & {"onnxruntime"}
        if bad:
            offenders[path.name] = sorted(bad)
    assert offenders == {}


def test_gtp_never_imports_training_or_onnxruntime():
    offenders = {}
    for path in sorted((ROOT / "gtp").glob("*.py")):
        bad = imported_top_names(path) & {"training", "torch", "onnxruntime"}
        if bad:
            offenders[path.name] = sorted(bad)
    assert offenders == {}


def test_import_reader_sees_imports(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import gtp.server\nfrom onnxruntime import InferenceSession\nfrom . import x\n")
    assert imported_top_names(sample) == {"gtp", "onnxruntime"}
