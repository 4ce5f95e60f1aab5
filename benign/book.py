"""Build the Jupyter Book with every notebook executed at one profile.

The source tree (top-level _config.yml, _toc.yml, book/, notebooks/) is staged into _build/stage/<profile>/; for a
profile other than `book` each notebook's parameters cell gets the profile's values appended, so the rendered page
shows what was run. Jupyter Book then executes the notebooks and fails on the first error or warning.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from . import notebooks
from .checks import ParameterError
from .paths import BOOK_BUILD, ROOT, results_dir

SOURCES = ("_config.yml", "_toc.yml", "references.bib", "book", "notebooks")


def stage(profile_name: str) -> Path:
    """A copy of the book's sources with the profile's parameters applied; returns its folder."""
    if profile_name not in notebooks.PROFILE_NAMES:
        raise ParameterError(f"unknown profile {profile_name!r}: use one of {', '.join(notebooks.PROFILE_NAMES)}")
    target = BOOK_BUILD / "stage" / profile_name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, target / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        elif src.exists():
            shutil.copy2(src, target / name)
    for name in notebooks.names():
        params = notebooks.resolve(name, profile_name)
        params["out_dir"] = str(results_dir(name, profile_name))
        _apply(target / "notebooks" / f"{name}.py", name, params, profile_name)
    return target


def _apply(file: Path, name: str, params: dict, profile_name: str) -> None:
    import jupytext

    nb, cell = notebooks._parameter_cell(name)
    changed = {k: v for k, v in params.items() if v != notebooks.defaults(name).get(k)}
    if changed:
        lines = "\n".join(f"{k} = {v!r}" for k, v in changed.items())
        cell.source = f"{cell.source}\n# {profile_name} profile:\n{lines}"
    jupytext.write(nb, file, fmt="py:percent")


def build(profile_name: str = "book", output: Path | None = None) -> Path:
    """Stage, execute and build; returns the folder holding html/ (default: the repository's _build/)."""
    staged = stage(profile_name)
    output = Path(output) if output else ROOT
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(staged), "--path-output", str(output),
           "-W", "-n", "--keep-going"]
    done = subprocess.run(cmd)
    if done.returncode != 0:
        reports = output / "_build" / "html" / "reports"
        raise RuntimeError(f"the book build failed (exit {done.returncode}); execution reports: {reports}")
    return output / "_build"
