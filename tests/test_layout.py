"""The architecture's dependency rules, checked on the import statements of every .py file of
every package (the packages setup.cfg installs, each of them) and of run_engine.py:

- engine/ imports nothing of ours outside itself (no gtp, tournament, training, bench,
  run_engine) and none of torch, ray, onnx;
- only engine/evaluators/onnx_evaluator.py imports onnxruntime (bench reaches it through that
  module), but for networks/calibration.py, which imports its quantization tools and nothing
  else of it;
- gtp/, the GTP server, never imports the tournament kit, training, torch, ray, nor
  run_engine (the composition root that imports it);
- kata_analysis/, KataGo's JSON analysis engine, is a server beside gtp/ on the same layers
  (engine/, launch/, networks/, weights/): neither server imports the other;
- tournament/, which drives other engines, never imports the gtp server or training;
- nothing imports run_engine, the composition root (the benchmarks run it as a program);
- networks/ (reading, converting and quantizing network files, and their cache: steps the
  engine takes at start-up) builds on engine/ alone, and never imports torch or ray;
- training/ may use engine/, networks/ and the tournament kit (gate matches), not the gtp
  server;
- launch/ (the settings table, the flag parser, the flags -> Engine factory) builds on engine/,
  networks/ and weights/; gtp/ reads its settings table, the review tool and the benchmarks use
  its factory;
- torch and ray appear only under training/, and nothing the engine runs imports training/
  (gtp/, kata_analysis/, engine/, networks/); run_engine, the `dosaku` command, reaches the
  tournament kit and training/ only for `dosaku review` (its Ray runner lives with Ray in
  training/), inside that branch, and tests/test_run_engine.py checks that serving GTP loads
  neither;
- weights/, the shipped networks, imports nothing of ours and nothing heavy (run_engine reads
  it before GTP answers).

Inside engine/, the subpackages are layers: engine.rules imports no other part of the engine,
engine.evaluators builds on the rules, engine.search on both; the facade's modules at engine/'s
top (the Engine, its settings, clock, dead-stone judgement and pre-compilation) use them all and
nothing below imports them. Every engine module lives in a layer or is one of the facade's, and
docs/architecture.md names each.

The feature set the engine encodes (name and plane counts) is defined once, in
engine/evaluators/features.py; a test fails if a copy of it reappears elsewhere.

docs/architecture.md describes the same layout in a table, one row per package with the
packages it may import; the last tests keep that table and these rules in step.

No module imports itself through others: the import graph of all these files, imports inside
functions included, has no cycle.

Every import of ours goes through the package `dosaku` (`from dosaku.engine.rules import
board`) or is relative: no module, test or embedded script imports `engine`, `gtp`, ... as a
top-level name, which an installed `dosaku` does not provide (tests/test_default_net.py checks
the wheel). The rules above name modules without the prefix: `dosaku.engine` is `engine`.
"""

import ast
import configparser
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"engine", "gtp", "tournament", "training", "networks", "bench", "weights", "launch",
        "kata_analysis", "run_engine", "tests"}
FORBIDDEN = {  # package -> top-level modules it must not import (besides ONLY_IN's rules)
    "engine": OURS - {"engine"} | {"onnx"},
    "gtp": {"kata_analysis", "tournament", "training", "bench", "run_engine", "tests"},
    "kata_analysis": {"gtp", "tournament", "training", "bench", "run_engine", "tests"},
    "tournament": {"gtp", "kata_analysis", "training", "bench", "run_engine", "tests"},
    "networks": OURS - {"networks", "engine", "weights"},
    "training": {"gtp", "kata_analysis", "bench", "run_engine", "tests"},
    "bench": {"run_engine", "tests"},
    "launch": {"gtp", "kata_analysis", "tournament", "training", "bench", "run_engine", "tests"},
    "weights": OURS - {"weights"} | {"numpy", "numba", "onnx", "onnxruntime"},
    "run_engine": {"bench", "tests"},
}
ONLY_IN = {  # module, its submodules included -> the files (a "folder/": its files) allowed
    "onnxruntime": ("engine/evaluators/onnx_evaluator.py",),  # to import it; for a submodule
    "onnxruntime.quantization": ("networks/calibration.py",),  # the longest rule decides
    "torch": ("training/",),
    "ray": ("training/",),
}
FEATURE_NAMES = {"FEATURE_SET", "NUM_SPATIAL", "NUM_GLOBAL"}


def setup_packages() -> set[str]:
    """The packages setup.cfg installs, by their names in the repository: "dosaku.engine.rules"
    is engine/rules/ (setup.cfg installs the root as the package dosaku)."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    listed = cfg["options"]["packages"].split()
    return {name.removeprefix("dosaku.") for name in listed if name != "dosaku"}


def installed_packages() -> list[str]:
    """The top-level packages among them."""
    return sorted(name for name in setup_packages() if "." not in name)


def packages_on_disk(folder: Path = ROOT, prefix: str = "") -> set[str]:
    """Every package below `folder`: each folder with an __init__.py inside one that has one
    (or at the root), by its dotted name."""
    found = set()
    for sub in folder.iterdir():
        if (sub / "__init__.py").is_file():
            found |= {prefix + sub.name} | packages_on_disk(sub, f"{prefix}{sub.name}.")
    return found


def checked_files() -> dict[str, list[Path]]:
    """Every .py file of every package (sub-packages included) and run_engine.py, by owner."""
    files = {pkg: sorted((ROOT / pkg).rglob("*.py")) for pkg in installed_packages()}
    files["run_engine"] = [ROOT / "run_engine.py"]
    return files


def raw_imported_names(path: Path) -> set[str]:
    """Dotted names of the modules absolute imports anywhere in the file (function bodies
    included) name, as written: `import a.b` and `from a.b import c` give a.b."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def ours(name: str) -> str:
    """A module's name without the package's prefix: dosaku.engine.rules -> engine.rules."""
    return name.removeprefix("dosaku.")


def imported_names(path: Path) -> set[str]:
    """raw_imported_names, ours by their names in the repository (dosaku.gtp.server is
    gtp.server; `from dosaku import weights` is weights)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == "dosaku" and node.level == 0:
            names.update(alias.name for alias in node.names)
    return names | {ours(name) for name in raw_imported_names(path) if name != "dosaku"}


def imported_top_names(path: Path) -> set[str]:
    """Top-level names of absolute imports anywhere in the file (function bodies included)."""
    return {name.split(".")[0] for name in imported_names(path)}


def misplaced_imports(rel: str, names: set[str]) -> set[str]:
    """The ONLY_IN rules that the imports `names` of file `rel` break."""
    broken = set()
    for name in names:
        rules = [m for m in ONLY_IN if name == m or name.startswith(m + ".")]
        if rules:
            rule = max(rules, key=len)
            if not any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in ONLY_IN[rule]):
                broken.add(rule)
    return broken


def test_every_package_is_installed_and_checked():
    assert packages_on_disk() == setup_packages()
    assert set(FORBIDDEN) == set(installed_packages()) | {"run_engine"}
    assert all(checked_files().values())


@pytest.mark.parametrize("owner", sorted(FORBIDDEN))
def test_package_imports_follow_the_layout(owner):
    offenders = {}
    for path in checked_files()[owner]:
        rel = path.relative_to(ROOT).as_posix()
        bad = imported_top_names(path) & FORBIDDEN[owner]
        bad |= misplaced_imports(rel, imported_names(path))
        if bad:
            offenders[rel] = sorted(bad)
    assert offenders == {}


def test_import_reader_sees_imports(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import dosaku.gtp.server\nfrom onnxruntime import InferenceSession\n"
                      "from . import x\nfrom dosaku import weights\n\n"
                      "def f():\n    import torch.nn\n    import " + "engine.rules\n")
    # (split, so that test_every_import_of_ours_goes_through_the_package does not see it)
    assert imported_top_names(sample) == {"gtp", "onnxruntime", "weights", "torch", "engine"}
    assert imported_names(sample) == {"gtp.server", "onnxruntime", "weights", "torch.nn",
                                      "engine.rules"}
    assert raw_imported_names(sample) == {"dosaku.gtp.server", "onnxruntime", "dosaku",
                                          "torch.nn", "engine.rules"}
    assert top_level_imports_of_ours(sample) == ["engine.rules"]


def top_level_imports_of_ours(path: Path) -> list[str]:
    """The imports in the file of our packages by their bare names (`engine`, not
    `dosaku.engine`), in the file's code and in the Python code of string constants it hands
    to `python -c` (a string that parses as Python and imports something)."""
    bare = OURS - {"tests"}
    found = {name for name in raw_imported_names(path) if name.split(".")[0] in bare}
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                "import " in node.value:
            try:
                code = ast.parse(node.value)
            except SyntaxError:
                continue
            for inner in ast.walk(code):
                if isinstance(inner, ast.Import):
                    found |= {a.name for a in inner.names if a.name.split(".")[0] in bare}
                elif isinstance(inner, ast.ImportFrom) and inner.module and not inner.level \
                        and inner.module.split(".")[0] in bare:
                    found.add(inner.module)
    return sorted(found)


def test_every_import_of_ours_goes_through_the_package():
    """No file of ours (packages, run_engine.py, the tests and their helpers) imports `engine`,
    `gtp`, ... as top-level names: an installed dosaku provides only dosaku.engine etc."""
    files = [path for group in checked_files().values() for path in group]
    files += sorted((ROOT / "tests").rglob("*.py"))
    offenders = {}
    for path in files:
        if "node_modules" not in path.parts:
            found = top_level_imports_of_ours(path)
            if found:
                offenders[path.relative_to(ROOT).as_posix()] = found
    assert offenders == {}


def test_only_the_named_files_import_onnxruntime_and_its_quantization_tools():
    session, calibration = "engine/evaluators/onnx_evaluator.py", "networks/calibration.py"
    assert misplaced_imports(session, {"onnxruntime", "onnxruntime.quantization"}) == \
        {"onnxruntime.quantization"}
    assert misplaced_imports(calibration, {"onnxruntime.quantization.shape_inference"}) == set()
    assert misplaced_imports(calibration, {"onnxruntime"}) == {"onnxruntime"}
    assert misplaced_imports("networks/quantize.py", {"onnxruntime.quantization"}) == \
        {"onnxruntime.quantization"}
    assert misplaced_imports("training/train.py", {"torch.nn"}) == set()


def feature_set_copies(path: Path) -> list[str]:
    """Definitions of the feature set's name or plane counts in `path`: a "katago-v..." string,
    a (22, 19) pair, or an assignment to one of the names engine/evaluators/features.py defines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.startswith("katago-v"):
            found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Tuple) and [getattr(e, "value", None) for e in node.elts] \
                == [22, 19]:
            found.append(f"line {node.lineno}: (22, 19)")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [f"line {node.lineno}: {t.id} =" for t in targets
                      if isinstance(t, ast.Name) and t.id in FEATURE_NAMES]
    return found


def test_feature_set_is_defined_once():
    home = ROOT / "engine" / "evaluators" / "features.py"
    assert len(feature_set_copies(home)) == 4  # "katago-v7", FEATURE_SET, NUM_SPATIAL, NUM_GLOBAL
    copies = {}
    for files in checked_files().values():
        for path in files:
            if path != home:
                found = feature_set_copies(path)
                if found:
                    copies[path.relative_to(ROOT).as_posix()] = found
    assert copies == {}


def module_name(path: Path, root: Path = ROOT) -> str:
    """The dotted name a file is imported under ("engine.rules.board", "gtp" for
    gtp/__init__.py)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str], root: Path = ROOT) -> set[str]:
    """The modules among `known` that the file imports anywhere, function bodies included:
    `from pkg import name` counts as pkg.name when that is a module, else as pkg; relative
    imports are resolved against the file's package."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(ours(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ours(".".join(base + ([node.module] if node.module else [])))
            for alias in node.names:  # `from dosaku import weights`: the package weights
                full = f"{module}.{alias.name}" if module != "dosaku" else alias.name
                found.add(full if full in known else module)
    return (found & known) - {name}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of two or more modules that import each other, directly or through others
    (the strongly connected components of the graph, Tarjan's algorithm)."""
    index, low, stack, cycles = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def import_graph(files: list[Path], root: Path = ROOT) -> dict[str, set[str]]:
    known = {module_name(path, root) for path in files}
    return {module_name(path, root): imported_modules(path, known, root) for path in files}


def test_cycle_finder_sees_lazy_and_relative_imports(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from pkg import b\n")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from .c import g\n")
    (tmp_path / "pkg" / "c.py").write_text("import pkg.a\n")
    (tmp_path / "pkg" / "d.py").write_text("from pkg.a import x\n")
    graph = import_graph(sorted(tmp_path.rglob("*.py")), tmp_path)
    assert graph["pkg.b"] == {"pkg.c"} and graph["pkg.d"] == {"pkg.a"}
    assert import_cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    (tmp_path / "pkg" / "c.py").write_text("import pkg\n")  # the package alone: no cycle
    assert import_cycles(import_graph(sorted(tmp_path.rglob("*.py")), tmp_path)) == []


def test_no_import_cycles():
    files = [path for group in checked_files().values() for path in group]
    assert import_cycles(import_graph(files)) == []


ENGINE_LAYERS = ("rules", "evaluators", "search")  # engine's subpackages, lowest first
FACADE = {"engine", "config", "timecontrol", "precompile", "plain_kernels", "dead_stones",
          "friendly_pass"}  # engine/*.py


def engine_layer(module: str) -> int:
    """The layer of an engine module: its subpackage's place in ENGINE_LAYERS, the facade's
    modules (and the package itself) above them all."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ENGINE_LAYERS:
        return ENGINE_LAYERS.index(parts[1])
    return len(ENGINE_LAYERS)


def test_engine_modules_live_in_a_layer_or_the_facade():
    strays = [module_name(path) for path in checked_files()["engine"]
              if engine_layer(module_name(path)) == len(ENGINE_LAYERS)
              and module_name(path) not in {"engine"} | {f"engine.{m}" for m in FACADE}]
    assert strays == []
    assert {p.name for p in (ROOT / "engine").iterdir() if p.is_dir() and
            (p / "__init__.py").is_file()} == set(ENGINE_LAYERS)


def test_engine_layers_import_only_the_layers_below():
    files = checked_files()["engine"]
    graph = import_graph(files)
    upward = {module: sorted(m for m in imported if engine_layer(m) > engine_layer(module))
              for module, imported in graph.items()}
    assert {m: up for m, up in upward.items() if up} == {}


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def documented_layout(text: str) -> list[tuple[str, set[str]]]:
    """The rows of the table under "## Layout" in architecture.md's text, in order: (package,
    the packages its last column names in backquotes; "nothing" names none)."""
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = line.strip().strip("|").split("|")
            rows.append((cells[0].strip().strip("`").rstrip("/"),
                         set(re.findall(r"`([a-z_]+)`", cells[-1]))))
    return rows


def allowed_imports(owner: str) -> set[str]:
    """The packages of ours that FORBIDDEN lets `owner` import (tests/ aside)."""
    return OURS - {owner, "tests"} - FORBIDDEN[owner]


def test_layout_reader_sees_the_table():
    text = ("# A\n\n## Layout\n\n| package | job | may import |\n|---|---|---|\n"
            "| `engine/` | rules | nothing |\n| `run_engine` | root | `engine`, `gtp` |\n\n"
            "## Next\n\n| `bench/` | not this table | `engine` |\n")
    assert documented_layout(text) == [("engine", set()), ("run_engine", {"engine", "gtp"})]


def test_architecture_doc_names_every_package_and_what_it_may_import():
    documented = dict(documented_layout(ARCHITECTURE.read_text()))
    assert documented == {owner: allowed_imports(owner) for owner in FORBIDDEN}


def test_architecture_doc_lists_packages_in_dependency_order():
    seen, late = set(), {}
    for owner, allowed in documented_layout(ARCHITECTURE.read_text()):
        if allowed - seen:
            late[owner] = sorted(allowed - seen)
        seen.add(owner)
    assert late == {}


def documented_engine_modules(text: str) -> set[str]:
    """The files architecture.md's "Inside engine/" section names, as paths under engine/: each
    paragraph opening with a bold folder (**`rules/`**) names that folder's files, the others
    files at engine/'s top."""
    section = text.split("\n### Inside `engine/`\n", 1)[1].split("\n## ", 1)[0]
    named, folder = set(), ""
    for line in section.splitlines():
        if line.startswith("**"):
            opening = re.match(r"\*\*`([a-z_]+/)`\*\*", line)
            folder = opening.group(1) if opening else ""
        named |= {folder + name for name in re.findall(r"`([a-z_]+\.py)`", line)}
    return named


def test_engine_module_reader_sees_folders():
    text = ("# A\n\n### Inside `engine/`\n\n**`rules/`**, the game:\n\n- `board.py`, `game.py`\n\n"
            "**The facade**:\n\n- `engine.py`\n\n## Next\n\n- `other.py`\n")
    assert documented_engine_modules(text) == {"rules/board.py", "rules/game.py", "engine.py"}


def test_architecture_doc_names_every_engine_module():
    modules = {path.relative_to(ROOT / "engine").as_posix() for path in checked_files()["engine"]
               if path.name != "__init__.py"}
    assert documented_engine_modules(ARCHITECTURE.read_text()) == modules
