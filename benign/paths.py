"""Every path the project uses, in one place."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
PROFILES = NOTEBOOKS / "profiles"
RESULTS = ROOT / "results"
BOOK_BUILD = ROOT / "_build"


def results_dir(notebook: str, profile: str = "book") -> Path:
    """Where a notebook's outputs go when no --out is given: results/<notebook>/<profile>/."""
    return RESULTS / notebook / profile
