"""Every path the project uses, in one place."""

import os
from pathlib import Path

ROOT_ENV = "BENIGN_ROOT"  # the project's folder, where the package is installed apart from it (`pip install .`)


def project_root() -> Path:
    """The project's folder (notebooks/, book/, results/, .cache/): $BENIGN_ROOT; else the folder the package sits
    in where it holds the notebooks (a clone, the source archive, an editable install); else the working folder (the
    package installed on its own, run from the project's folder). A notebook's kernel is given $BENIGN_ROOT."""
    if os.environ.get(ROOT_ENV):
        return Path(os.environ[ROOT_ENV]).resolve()
    beside = Path(__file__).resolve().parents[1]
    return beside if (beside / "notebooks").is_dir() else Path.cwd()


ROOT = project_root()
NOTEBOOKS = ROOT / "notebooks"
RESULTS_ENV = "BENIGN_RESULTS"  # another results folder (a test build's); the book passes it to its notebooks
RESULTS = Path(os.environ.get(RESULTS_ENV) or ROOT / "results")
BOOK_BUILD = ROOT / "_build"


def results_dir(notebook: str, profile: str = "book") -> Path:
    """Where a notebook's outputs go when no --out is given: results/<notebook>/<profile>/."""
    return RESULTS / notebook / profile


CACHE_ENV = "BENIGN_CACHE"  # another cache folder (a benchmark's empty one, a test's own)


def cache_dir(kind: str = "") -> Path:
    """The one cache of computed things, each kind in a folder of its own (sweeps: finished sweep chunks; finetune:
    fine-tuning runs; backbones: made backbones): $BENIGN_CACHE, or .cache/ in the repository (git-ignored). Every
    entry is keyed by all that decides it, the code included (`records.cache_key`), so results folders
    ($BENIGN_RESULTS) share it safely: a result is served only to the same computation."""
    return Path(os.environ.get(CACHE_ENV) or ROOT / ".cache") / kind
