"""Every path the project uses, in one place."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
PROFILES = NOTEBOOKS / "profiles"
RESULTS_ENV = "BENIGN_RESULTS"  # another results folder (a test build's); the book passes it to its notebooks
RESULTS = Path(os.environ.get(RESULTS_ENV) or ROOT / "results")
SWEEP_CACHE = ROOT / "results" / ".cache" / "sweeps"  # finished sweep chunks, keyed by parameters and code
BOOK_BUILD = ROOT / "_build"


def results_dir(notebook: str, profile: str = "book") -> Path:
    """Where a notebook's outputs go when no --out is given: results/<notebook>/<profile>/."""
    return RESULTS / notebook / profile


def cache_dir() -> Path:
    """Git-ignored cache of made assets and finished runs: $BENIGN_CACHE, or .cache/ in the repository."""
    return Path(os.environ.get("BENIGN_CACHE") or ROOT / ".cache")
