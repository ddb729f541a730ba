"""The documentation stays true to the code: docs/gtp.md lists exactly the GTP commands the
engine's registry has, every relative link in README.md, docs/, the records' index and the
model cards reaches a file (and a heading, when it names one), and every docs page (and
section) the code cites exists."""

import re
from pathlib import Path

from gtp.commands import Commands

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
        for cited in CITATION.findall(path.read_text()):
            file_part, _, fragment = cited.partition("#")
            dest = ROOT / file_part
            if not dest.exists():
                broken[f"{path.relative_to(ROOT)}: {cited}"] = "no such file"
            elif fragment and fragment not in anchors(dest):
                broken[f"{path.relative_to(ROOT)}: {cited}"] = "no such heading"
    assert broken == {}
