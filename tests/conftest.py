import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def benign_cli():
    """The installed console script, as a user calls it."""
    exe = BIN / "benign"
    assert exe.exists(), f"{exe} missing: install the package (make test does)"
    return str(exe)
