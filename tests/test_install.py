"""A light, correct install: every third-party module the package imports is declared in pyproject.toml, in the core
or in the extra of the module that imports it (`book`, `realdata`, `cluster`).

Two checks on the installed environment, against the dependency closure of what pyproject.toml declares (each
declared distribution with everything it requires, from the installed metadata):
- every import in the package's source, at the top of a module or inside a function, names a distribution of the
  closure of the core plus the module's extra;
- each module imports in a fresh interpreter where every distribution outside that closure is hidden (an import of
  one fails as if it were not installed): the core modules with the core alone, each extra's modules with that extra.
"""

import ast
import importlib.metadata as metadata
import json
import subprocess
import sys
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from benign import paths

PYPROJECT = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]
EXTRA_OF_MODULE = {"benign.book": "book", "benign.notebooks": "book", "benign.plots": "book", "benign.heatmaps": "book",
                   "benign.textcheck": "book", "benign.realdata": "realdata"}  # a package's name covers its modules
EXTRA_OF_IMPORT = {("benign.records", "PIL"): "book",  # figure_description reads the book's PNGs
                   ("benign.device", "distributed"): "cluster"}  # reached only inside a running dask worker


def extra_of(module: str) -> str | None:
    for name, extra in EXTRA_OF_MODULE.items():
        if module == name or module.startswith(name + "."):
            return extra
    return None


def modules() -> list[str]:
    return sorted(".".join(p.relative_to(paths.ROOT).with_suffix("").parts).removesuffix(".__init__")
                  for p in (paths.ROOT / "benign").rglob("*.py"))


def declared(extras: tuple[str, ...]) -> list[Requirement]:
    """The requirements of the core and these extras, the extras' references to benign[...] expanded."""
    out, todo, seen = [], list(PYPROJECT["dependencies"]), set()
    for extra in extras:
        todo += PYPROJECT["optional-dependencies"][extra]
    while todo:
        req = Requirement(todo.pop())
        if canonicalize_name(req.name) == "benign":
            todo += [r for e in req.extras - seen for r in PYPROJECT["optional-dependencies"][e]]
            seen |= req.extras
        else:
            out.append(req)
    return out


def closure(extras: tuple[str, ...]) -> set[str]:
    """The installed distributions these requirements pull, recursively (markers evaluated for this Python and the
    extras asked of each distribution)."""
    found, todo = set(), [(r, frozenset(r.extras)) for r in declared(extras)]
    while todo:
        req, wanted = todo.pop()
        name = canonicalize_name(req.name)  # its marker, if any, was read where it was required
        if (name, wanted) in found:
            continue
        found.add((name, wanted))
        for line in metadata.requires(req.name) or []:
            sub = Requirement(line)
            if sub.marker and not any(sub.marker.evaluate({"extra": e}) for e in (wanted | {""})):
                continue
            todo.append((sub, frozenset(sub.extras)))
    return {name for name, _ in found}


def distributions_of(top_level: str) -> set[str]:
    return {canonicalize_name(d) for d in metadata.packages_distributions().get(top_level, [])}


def third_party_imports(module: str) -> set[str]:
    source = paths.ROOT / (module.replace(".", "/") + ".py")
    if not source.exists():
        source = paths.ROOT / module.replace(".", "/") / "__init__.py"
    names = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("benign", "__future__")}


def allowed(extra: str | None) -> set[str]:
    return closure(("book", "realdata", "cluster") if extra == "all" else (extra,) if extra else ())


def test_the_closures_are_what_the_extras_say():
    """The check can fail: torch is in the core, matplotlib and papermill only with `book`, transformers only with
    `realdata`, distributed only with `cluster`."""
    core, book, realdata, cluster = allowed(None), allowed("book"), allowed("realdata"), allowed("cluster")
    assert "torch" in core and "matplotlib" not in core and "papermill" not in core and "transformers" not in core
    assert {"matplotlib", "papermill", "jupyter-book"} <= book and "transformers" in realdata
    assert "distributed" in cluster and "distributed" not in core


@pytest.mark.parametrize("module", modules())
def test_every_import_is_declared(module):
    for name in third_party_imports(module):
        extra = EXTRA_OF_IMPORT.get((module, name), extra_of(module))
        dists = distributions_of(name)
        assert dists, f"{module} imports {name}, which no installed distribution provides"
        assert dists & allowed(extra), (f"{module} imports {name} ({', '.join(sorted(dists))}), which is not declared "
                                        f"in pyproject.toml's {'extra ' + extra if extra else 'core dependencies'}")


# hides every top-level module whose distributions are all outside the allowed set, then imports the module
HIDDEN_IMPORT = """
import importlib, importlib.abc, importlib.metadata, json, sys
allowed = set(json.loads(sys.argv[2])) | {"benign"}  # and the package itself
providers = importlib.metadata.packages_distributions()
canon = lambda n: n.lower().replace("_", "-").replace(".", "-")
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        dists = {canon(d) for d in providers.get(top, [])}
        if dists and not dists & allowed:
            raise ModuleNotFoundError(f"No module named {top!r} (hidden: not declared)", name=top)
        return None
sys.meta_path.insert(0, Hide())
for module in sys.argv[1].split(","):
    try:
        importlib.import_module(module)
    except ImportError as err:
        sys.exit(f"{module}: {err}")
"""


@pytest.mark.parametrize("extra", [None, "book", "realdata"])  # no module needs `cluster` to import (see above)
def test_each_module_imports_with_only_its_declared_dependencies(extra):
    chosen = [m for m in modules() if extra_of(m) == extra]
    assert chosen
    done = subprocess.run([sys.executable, "-c", HIDDEN_IMPORT, ",".join(chosen), json.dumps(sorted(allowed(extra)))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"with {extra or 'the core'} only: {done.stderr.strip().splitlines()[-1]}"


def test_the_hidden_import_fails_where_a_dependency_is_not_declared():
    """benign.plots (matplotlib, the book extra) with the core alone: matplotlib is hidden and the import fails."""
    done = subprocess.run([sys.executable, "-c", HIDDEN_IMPORT, "benign.plots", json.dumps(sorted(allowed(None)))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "benign.plots: No module named 'matplotlib' (hidden" in done.stderr


def test_the_command_line_says_which_extra_it_needs():
    """With the core alone, `benign list` lists every notebook's settings (they live in the package) and
    `benign run` ends in one line naming the book extra, not in a traceback."""
    def cli(*argv):
        script = HIDDEN_IMPORT.replace("for module in sys.argv[1].split(\",\"):", "for module in []:") + (
            f"from benign import cli\nsys.exit(cli.main({list(argv)!r}))\n")
        return subprocess.run([sys.executable, "-c", script, "", json.dumps(sorted(allowed(None)))],
                              capture_output=True, text=True, timeout=300)

    listed = cli("list")
    assert listed.returncode == 0 and "fig3_dynamics" in listed.stdout and "learning_rate=0.005" in listed.stdout
    done = cli("run", "fig3_dynamics", "--profile", "smoke")
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("benign: error: benign run needs the book extra (") and "benign[book]" in done.stderr


def test_the_text_check_knows_the_extras_as_typed_names():
    """The downloads page names the extras as code a reader types; the rendered-text check leaves exactly them."""
    from benign import textcheck

    assert set(PYPROJECT["optional-dependencies"]) <= set(textcheck.TYPED_NAMES)
