"""The package as a newcomer meets it: modules of one job and readable length, imports flowing one way, shared
helpers public."""

import ast
import pkgutil
from pathlib import Path

import benign

PACKAGE = Path(benign.__file__).parent


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (subpackages included)."""
    found = {}
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="benign."):
        path = PACKAGE.joinpath(*info.name.split(".")[1:])
        found[info.name] = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
    return found


def imports(name: str, path: Path) -> list[tuple[str, list[str]]]:
    """(imported module, names taken from it) for every import of the package's own modules in one module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("benign")):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names = [a.name for a in node.names]
            known = modules()
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in known]
            found += [(m, []) for m in submodules] + ([(base, [n for n in names if f"{base}.{n}" not in known])]
                                                      if base in known and len(submodules) < len(names) else [])
    return found


def test_imports_flow_one_way():
    """The import graph of the package's modules has no cycle (lazy imports inside functions included)."""
    graph = {name: {m for m, _ in imports(name, path) if m != name and m != "benign"} for name, path in modules().items()}
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", f"import cycle: {' → '.join(trail + [node])}"
        state[node] = "open"
        for child in sorted(graph.get(node, ())):
            visit(child, trail + [node])
        state[node] = "done"

    for name in sorted(graph):
        visit(name, [])


def test_no_module_takes_a_private_name_from_another():
    offences = [f"{name} imports {n} from {m}" for name, path in modules().items()
                for m, names in imports(name, path) for n in names if n.startswith("_") and m != name]
    assert not offences, offences


def test_modules_are_readable_in_one_sitting():
    long = {name: len(path.read_text().splitlines()) for name, path in modules().items()}
    assert all(lines <= 500 for lines in long.values()), {k: v for k, v in long.items() if v > 500}


CACHED = ("benign.synthetic", "benign.clock", "benign.encoder", "benign.authors", "benign.paper2",
          "benign.realdata.runs", "benign.realdata.image_backbone")  # the modules whose code keys a cache
PRESENTATION = ("benign.words", "benign.pages", "benign.plots", "benign.expected", "benign.textcheck")


def test_a_cache_is_keyed_by_the_code_that_computes_it_not_by_its_words():
    """Rewording a sentence must not make every run be computed again: no cached computation imports the modules
    that only say or show results."""
    from benign.records import code_modules

    for module in CACHED:
        keyed = {name for name, _ in code_modules(module)}
        assert module in keyed and not keyed & set(PRESENTATION), (module, sorted(keyed & set(PRESENTATION)))


def test_a_cache_key_changes_with_the_code_not_with_its_comments_or_docstrings(tmp_path, monkeypatch):
    """The fingerprint that keys every cache follows what the code runs: a kernel's imported module rewritten in its
    docstring and comments keeps the key (no recompute for a documentation edit); one changed constant changes it."""
    from benign.records import code_fingerprint

    package = tmp_path / "kernels"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package."""\n')
    (package / "kernel.py").write_text("from .helper import scale\n\n\ndef run(x):\n    return scale * x\n")
    helper = package / "helper.py"
    helper.write_text('"""Helpers."""\n\nscale = 2.0  # the factor\n\n\ndef f():\n    """Doc."""\n    return scale\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    before = code_fingerprint("kernels.kernel")
    helper.write_text('"""Helpers, reworded."""\n# a new comment\nscale = 2.0\n\n\ndef f():\n    # no docstring now\n'
                      '    return scale\n')
    assert code_fingerprint("kernels.kernel") == before
    helper.write_text('"""Helpers."""\n\nscale = 3.0  # the factor\n\n\ndef f():\n    """Doc."""\n    return scale\n')
    changed = code_fingerprint("kernels.kernel")
    assert changed != before
    (package / "__init__.py").write_text('"""A package, with a longer docstring that lists its modules."""\n'
                                         '__version__ = "1"\n__all__ = ["helper", "kernel", "other"]\n')
    assert code_fingerprint("kernels.kernel") == changed  # the package's index of modules, rewritten
    (package / "kernel.py").write_text("from . import helper\n\n\ndef run(x):\n    return helper.scale * x\n")
    imported = code_fingerprint("kernels.kernel")  # the helper module, not the package, whose version
    (package / "__init__.py").write_text('__version__ = "2"\n')
    assert code_fingerprint("kernels.kernel") == imported
    (package / "kernel.py").write_text("from . import __version__, helper\n\n\ndef run(x):\n"
                                       "    return helper.scale * x\n")
    imported = code_fingerprint("kernels.kernel")  # the package's version, now imported
    (package / "__init__.py").write_text('__version__ = "3"\n')
    assert code_fingerprint("kernels.kernel") != imported
