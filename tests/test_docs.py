"""The documentation stays true to the code: docs/gtp.md lists exactly the GTP commands the
engine's registry has, every relative link in README.md, docs/, the records' index and the
model cards reaches a file (and a heading, when it names one), every docs page (and
section) the code cites exists, and every repository path those documents and the package
docstrings name in backticks exists: a file moved or renamed leaves no stale name behind."""

import ast
import fnmatch
import re
import subprocess
from pathlib import Path

from dosaku.gtp.commands import Commands

ROOT = Path(__file__).resolve().parents[1]
GTP_DOC = ROOT / "docs" / "gtp.md"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CITATION = re.compile(r"(?<![\w/.])docs/[\w/.-]+\.md(?:#[\w-]+)?")


def registered_commands() -> set[str]:
    """GTP names of the command methods the registry collects (gtp/commands.py)."""
    return {fn.gtp_name for fn in vars(Commands).values() if hasattr(fn, "gtp_name")}


def documented_commands(text: str) -> set[str]:
    """First words of the backquoted first cells of the tables under "## Commands"."""
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `([^`\s]+)", section, re.MULTILINE)}


def anchor(heading: str) -> str:
    """The anchor a markdown heading gets: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {anchor(m.group(1)) for m in re.finditer(r"^#+ (.+)$", prose(path.read_text()),
                                                   re.MULTILINE)}


def prose(text: str) -> str:
    """The text without fenced or indented code blocks and inline code."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    text = re.sub(r"^(    |\t).*$", "", text, flags=re.MULTILINE)
    return re.sub(r"`[^`\n]*`", "", text)


def broken_target(source: Path, target: str, root: Path = ROOT) -> str | None:
    """Why a link target written in `source` does not resolve inside `root`, or None."""
    path_part, _, fragment = target.partition("#")
    dest = (source.parent / path_part).resolve() if path_part else source
    if not dest.exists() or root not in dest.parents:
        return "no such file in the repository"
    if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
        return f"no heading #{fragment}"
    return None


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
            ROOT / "records" / "README.md", *sorted((ROOT / "weights").glob("*.md"))]


def test_gtp_doc_lists_exactly_the_registered_commands():
    documented = documented_commands(GTP_DOC.read_text())
    registered = registered_commands()
    assert {"missing from docs/gtp.md": registered - documented,
            "not a registered command": documented - registered} == \
        {"missing from docs/gtp.md": set(), "not a registered command": set()}


def test_command_reader_sees_only_the_command_tables():
    text = ("## Framing\n| `syntax error` | x |\n## Commands\n### Moves\n| command | answer |\n"
            "|---|---|\n| `play COLOR VERTEX` | empty |\n| `gg-undo [N]` | x |\n"
            "## Time controls\n| `time_left` | x |\n")
    assert documented_commands(text) == {"play", "gg-undo"}


def test_relative_links_in_the_documents_resolve():
    broken = {}
    for path in doc_files():
        for target in LINK.findall(prose(path.read_text())):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            why = broken_target(path, target)
            if why:
                broken[f"{path.relative_to(ROOT)} -> {target}"] = why
    assert broken == {}


def test_link_checker_sees_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A section\n")
    assert broken_target(page, "#a-section", tmp_path) is None
    assert broken_target(page, "page.md#a-section", tmp_path) is None
    assert broken_target(page, "#another", tmp_path) == "no heading #another"
    assert broken_target(page, "missing.md", tmp_path) == "no such file in the repository"
    assert broken_target(page, "../outside.md", tmp_path) == "no such file in the repository"


def test_docs_cited_by_the_code_exist():
    broken = {}
    folders = ("engine", "gtp", "tournament", "training", "networks", "bench", "weights", "tests")
    sources = [ROOT / "run_engine.py",
               *sorted(p for d in folders for p in (ROOT / d).rglob("*.py"))]
    for path in sources:
        if path == Path(__file__).resolve():
            continue  # this file names absent docs on purpose (NOT_IN_THIS_TREE)
        for cited in CITATION.findall(path.read_text()):
            file_part, _, fragment = cited.partition("#")
            dest = ROOT / file_part
            if not dest.exists():
                broken[f"{path.relative_to(ROOT)}: {cited}"] = "no such file"
            elif fragment and fragment not in anchors(dest):
                broken[f"{path.relative_to(ROOT)}: {cited}"] = "no such heading"
    assert broken == {}


# Paths the docs name that are not in this tree on purpose, each saying so where it is named:
# kept in the git history only, a former path, another project's file. Each must still be
# absent and still be named, so the list cannot go stale.
NOT_IN_THIS_TREE = {
    "docs/matches/README.md": "docs/history.md: a lab notebook, in the history at 2a5473f",
    "docs/training/default-b6c96/step-000021750.pt": "a checkpoint, in the history at 2a5473f",
    "docs/training/zero-9x9/gumbel/": "weights/dosaku-zero-9x9.md: in the history at 2a5473f",
    "weights/default.onnx": "the former default's path, as the older model cards say",
    "docs/Analysis_Engine.md": "docs/analysis.md: KataGo's own documentation",
}
TICKED = re.compile(r"`([^`\s]+)`")
SOURCE_SUFFIX = (".py",)  # a bare file name with this suffix names a module of the repository
NET_SUFFIX = (".onnx", ".bin.gz")  # a bare net file name names a shipped net (weights/)


def tracked_files(root: Path = ROOT) -> list[str]:
    """The repository's files (git's list with the new files not ignored, or the tree when git
    is not there), as posix paths."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                             cwd=root, capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
    return out or [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]


def without_code_blocks(text: str) -> str:
    """Markdown text without its fenced and indented code blocks (commands, not claims)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"^(    |\t).*$", "", text, flags=re.MULTILINE)


def stale_path(name: str, files: list[str], nets_too: bool = True) -> str | None:
    """Why `name`, written in backticks, is a repository path that does not exist; None when
    it exists or is not a repository path (a command, an option, a file the tools write, a
    placeholder like weights/NAME.onnx, a path outside the checkout)."""
    name = name.split("::", 1)[0]  # pytest's node ids name a file
    if re.search(r"[<>{}$~@^]|\b[A-Z]{3,}\b", name) or name.startswith(("/", ".")):
        return None
    tops = {f.split("/", 1)[0] for f in files}
    dirs = {d for f in files for d in (f.rsplit("/", i)[0] for i in range(1, f.count("/") + 1))}
    if "/" in name:
        if name.split("/", 1)[0] not in tops:
            return None  # not ours: KataGo's, an install's, an output folder
        path = name.rstrip("/")
        if "*" in path:
            return None if fnmatch.filter(files, path) else "no file matches"
        if path in files or path in dirs or f"{path}.jsonl.gz" in files:  # a record by name
            return None
        return "no such file or folder in the repository"
    basenames = {f.rsplit("/", 1)[-1] for f in files}
    if name in tops or name in basenames or ("*" in name and fnmatch.filter(basenames, name)):
        return None
    if name.endswith(SOURCE_SUFFIX) or (nets_too and name.endswith(NET_SUFFIX)
                                        and not name.startswith(".")):
        return "no file of that name in the repository"
    return None


def package_docstrings() -> dict[Path, str]:
    """The docstrings of the packages' `__init__.py` files, by file."""
    out = {}
    for path in sorted(ROOT.glob("*/__init__.py")) + sorted(ROOT.glob("*/*/__init__.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        if doc and "tests" not in path.parts:
            out[path] = doc
    return out


def named_paths() -> dict[str, set[str]]:
    """Backticked names in the documents and package docstrings: name -> where. A package
    docstring's bare module name (`match.py`) names the package's own module."""
    found = {}
    for path in doc_files():
        for name in TICKED.findall(without_code_blocks(path.read_text())):
            found.setdefault(name, set()).add(path.relative_to(ROOT).as_posix())
    for path, doc in package_docstrings().items():
        package = path.parent.relative_to(ROOT).as_posix()
        for name in TICKED.findall(doc):
            if "/" not in name and name.endswith(SOURCE_SUFFIX):
                name = f"{package}/{name}"
            found.setdefault(name, set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_repository_paths_the_docs_name_exist():
    files = tracked_files()
    stale = {}
    for name, where in named_paths().items():
        # records/README.md's rows describe each match's nets by the file names of the run
        why = stale_path(name, files, nets_too=where != {"records/README.md"})
        if why and name not in NOT_IN_THIS_TREE:
            stale[f"{name} ({', '.join(sorted(where))})"] = why
    assert stale == {}


def test_paths_not_in_this_tree_are_absent_and_still_named():
    named = named_paths()
    for path in NOT_IN_THIS_TREE:
        assert not (ROOT / path).exists(), f"{path} is in the tree: drop it from the list"
        assert path in named, f"no document names {path} any more: drop it from the list"


def test_path_checker_tells_stale_names_from_other_words():
    files = ["engine/search/batching.py", "weights/dosaku-b6c96.onnx", "run_engine.py",
             "records/a-9x9.jsonl.gz", "tests/test_docs.py"]
    for ok in ("engine/search/batching.py", "engine/search/", "engine", "batching.py",
               "dosaku-b6c96.onnx", "run_engine.py", "records/a-9x9", "records/a-*",
               "tests/test_docs.py::test_x", "weights/NAME.onnx", "~/.cache/dosaku",
               "../shared/models", "katrain/models/x.bin.gz", "match.json", ".bin.gz",
               "dosaku/engine/", "dosaku-*.onnx"):
        assert stale_path(ok, files) is None, ok
    assert stale_path("engine/batching.py", files) == "no such file or folder in the repository"
    assert stale_path("records/b-*", files) == "no file matches"
    assert stale_path("default.onnx", files) == "no file of that name in the repository"
    assert stale_path("default.onnx", files, nets_too=False) is None
    assert stale_path("gone.py", files) == "no file of that name in the repository"
    assert stale_path("other-*.onnx", files) == "no file of that name in the repository"
