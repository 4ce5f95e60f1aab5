"""The written word names only what exists: every `benign.<module>.<name>` (or `<module>.<name>` of a benign module)
written as code in the README, the book's pages and the notebooks' prose. (The notebooks' code runs in the tests.)"""

import importlib
import importlib.util
import pkgutil
import re

import pytest

import benign
from benign import paths

MODULES = sorted(m.name for m in pkgutil.iter_modules(benign.__path__))
REFERENCE = re.compile(r"(?<![\w./])(?:benign\.)?(" + "|".join(MODULES) + r")\.([A-Za-z_]\w*)(?!\w)")
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)  # fenced blocks and inline code spans


def documents() -> list:
    files = [paths.ROOT / "README.md", paths.ROOT / "CONTRIBUTING.md", *sorted((paths.ROOT / "book").glob("*.md")),
             *sorted(paths.NOTEBOOKS.glob("*.py"))]
    return [f for f in files if f.exists()]


def references(text: str, code_only: bool) -> set:
    spans = CODE.findall(text) if code_only else [text]
    return {m.groups() for span in spans for m in REFERENCE.finditer(span)}


def prose(document) -> str:
    """A markdown page, or the markdown cells of a notebook."""
    if document.suffix == ".md":
        return document.read_text()
    import jupytext

    return "\n".join(c.source for c in jupytext.read(document).cells if c.cell_type == "markdown")


def exists(module: str, name: str) -> bool:
    target = importlib.import_module(f"benign.{module}")
    if hasattr(target, name):
        return True
    return hasattr(target, "__path__") and importlib.util.find_spec(f"benign.{module}.{name}") is not None


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.name)
def test_every_named_module_and_name_exists(document):
    missing = [f"benign.{m}.{n}" for m, n in sorted(references(prose(document), code_only=True)) if not exists(m, n)]
    assert not missing, f"{document.name} names what does not exist: {', '.join(missing)}"


def test_the_check_itself_finds_a_removed_name():
    assert references("`cells = sweep.pivot(cells)` and `benign.synthetic.descend`", code_only=True) == {
        ("sweep", "pivot"), ("synthetic", "descend")}
    assert not hasattr(importlib.import_module("benign.sweep"), "pivot")


def test_the_rerun_pages_example_line_counts_the_books_notebooks():
    """`make book` prints `[k/N] name  wall s`: the rerun page's example has the book's N and one of its notebooks."""
    from benign import book

    example = re.search(r"\[(\d+)/(\d+)\] (\w+)", (paths.ROOT / "book" / "rerun.md").read_text())
    assert example and int(example.group(2)) == len(book.toc_notebooks())
    assert example.group(3) in book.toc_notebooks()
