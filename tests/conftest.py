import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def benign_cli():
    """The installed console script, as a user calls it."""
    exe = BIN / "benign"
    assert exe.exists(), f"{exe} missing: install the package (make test does)"
    return str(exe)


@pytest.fixture(scope="session")
def built_book():
    """The whole book built at the smoke profile into _build/test-book/ (kept, with any execution reports, for
    reading after a failure); returns its html folder."""
    import shutil

    from benign import book, paths

    where = paths.BOOK_BUILD / "test-book"
    shutil.rmtree(where, ignore_errors=True)
    patch = pytest.MonkeyPatch()
    patch.setattr(paths, "RESULTS", where / "results")
    try:
        yield book.build("smoke", where) / "html"
    finally:
        patch.undo()
