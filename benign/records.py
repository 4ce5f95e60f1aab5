"""What every run leaves next to its results: metrics, parameters, seeds, versions and device, written atomically;
and the output folders that may receive them (writable, not another notebook's)."""

from __future__ import annotations

import ast
import datetime as _dt
import hashlib
import importlib.util
import json
import math
import os
import platform
import shutil
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path

from . import __version__
from .checks import ParameterError
from .paths import ROOT, results_dir

PACKAGES = ("torch", "numpy", "pandas", "matplotlib", "seaborn", "papermill", "jupytext", "jupyter-book")


def output_dir(notebook: str, out_dir: str = "") -> Path:
    """The folder a notebook writes to: `out_dir`, or results/<notebook>/book when it is empty."""
    path = Path(out_dir) if out_dir else results_dir(notebook, "book")
    path.mkdir(parents=True, exist_ok=True)
    return path


COMMIT_FILE = "COMMIT"  # in a source archive (`book.source_archive`): the commit it was made from


def git_commit() -> str | None:
    """The commit of the project this process runs: git's HEAD in a clone, the archive's COMMIT file in an unpacked
    source archive, else None."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        out = None
    if out is not None and out.returncode == 0:
        return out.stdout.strip()
    recorded = ROOT / COMMIT_FILE
    return recorded.read_text().strip() or None if recorded.is_file() else None


def environment(device=None) -> dict:
    """Package versions, Python, platform, the git commit and the compute device of this process."""
    versions = {"benign": __version__, "python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    env = {"versions": versions, "platform": platform.platform(), "processor": platform.machine(),
           "cpu_count": os.cpu_count(), "git_commit": git_commit()}
    if device is not None:
        env["device"] = str(device)
        if str(device).startswith("cuda"):
            import torch

            env["device_name"] = torch.cuda.get_device_name(torch.device(device))
    return env


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write a file through a temporary file in the same folder and a rename, so a reader never sees half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(folder: Path, flag: str) -> None:
    """Refuse, in one line (ParameterError), a folder that cannot be made or written (`flag` names the option that
    gave it): a file on its path, a read-only file system, no permission, no space left. Makes its parents."""
    folder = Path(folder)
    for above in [folder, *folder.parents]:
        if above.exists():
            if not above.is_dir():
                what = "is a file" if above == folder else f"cannot be made: {above} is a file"
                raise ParameterError(f"{flag} {folder} {what}: give a folder")
            break
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".benign-probe.", dir=folder.parent) as probe:
            (Path(probe) / "probe").write_bytes(bytes(65536))
        if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as err:
        raise ParameterError(f"{flag} {folder} cannot be written: {err.strerror or err}") from None


def check_out(name: str, out: Path, force: bool = False) -> bool:
    """Refuse (ParameterError, one line) an output folder that cannot be written, or that holds anything but this
    notebook's results, unless `force`. Whether it holds another's (which a forced run replaces)."""
    check_writable(out, "--out")
    held = [p for p in out.iterdir() if not p.name.startswith(".")] if out.is_dir() else []
    if not held:
        return False
    try:
        owner = json.loads((out / "metrics.json").read_text()).get("notebook")
    except (OSError, ValueError, AttributeError):
        owner = None
    if owner == name:
        return False
    if not force:
        files = f"{len(held)} files that are" if len(held) > 1 else "a file that is"
        what = f"{owner}'s results" if owner else f"{files} not {name}'s results"
        raise ParameterError(f"--out {out} holds {what}: give an empty folder or {name}'s own, or add --force to "
                             "replace what it holds")
    return True


def remove_stale(out: Path) -> None:
    """Remove the temporary folders `notebooks.run` left beside `out` (named .OUT.PID.*) from processes that no
    longer exist (a killed run)."""
    for folder in out.parent.glob(f".{out.name}.*.*"):
        pid = folder.name[len(out.name) + 2:].split(".")[0]
        if folder.is_dir() and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def move_in(work: Path, out: Path, replace: bool) -> None:
    """The finished run's files into `out` (`replace`: after removing what `out` held)."""
    if replace:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    for item in work.iterdir():
        target = out / item.name
        if target.is_dir() and not item.is_dir():
            shutil.rmtree(target)
        os.replace(item, target)


ATTENTION_WORDS = ("attention", "score", "shown")  # a headline key with one of these words is an attention share,
TOKEN_WORDS = ("relevant", "irrelevant", "weak", "aligned", "opposite", "signal")  # ... as is one with "on" + a token
NOT_A_SHARE = ("ratio", "step", "steps", "time", "count", "heads", "mask")  # ... unless a later word names another


def is_attention_share(key: str) -> bool:
    """Whether a headline key records an attention share (a softmax score, a sum of scores of one row, a mean of such,
    or the share of samples attending most to a token): its words (split at "_") hold "attention", "score" or "shown",
    or "on" followed by a token's name ("noisy_on_irrelevant"), and no word after the first such word is one of
    NOT_A_SHARE ("x_attention_select_step" is a step, "benign_steps_clean_signal_attention" a share)."""
    words = key.split("_")
    first = next((i for i, w in enumerate(words) if w in ATTENTION_WORDS
                  or (w == "on" and i + 1 < len(words) and words[i + 1] in TOKEN_WORDS)), None)
    return first is not None and not set(words[first + 1:]) & set(NOT_A_SHARE)


SHARE_TOLERANCE = 1e-5  # float32 rounding of a sum of a row's scores (or of one minus such a sum)


def check_attention_shares(headline: dict) -> None:
    """Raise ValueError naming the key and value of any attention share (`is_attention_share`) outside [0, 1] (by
    more than SHARE_TOLERANCE) or not a number; a missing value (None or NaN) passes."""
    for key, value in headline.items():
        if not is_attention_share(key) or value is None:
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"metric {key!r} = {value!r} is an attention share and must be a number") from None
        if not math.isnan(number) and not -SHARE_TOLERANCE <= number <= 1.0 + SHARE_TOLERANCE:
            raise ValueError(f"metric {key!r} = {number!r} is an attention share and must lie in [0, 1]")


def save_metrics(out: Path, notebook: str, headline: dict, parameters: dict, device=None, extra: dict | None = None):
    """metrics.json: headline numbers as flat keys, then the parameters, versions and device (NaN as null, anywhere).
    An attention share outside [0, 1] among the headline numbers raises ValueError (`check_attention_shares`)."""
    check_attention_shares(headline)
    record = {**{k: _plain(v) for k, v in headline.items()},
              "notebook": notebook,
              "parameters": {k: _plain(v) for k, v in parameters.items()},
              "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              **environment(device), **{k: _plain(v) for k, v in (extra or {}).items()}}
    write_atomic(Path(out) / "metrics.json", json.dumps(record, indent=2, allow_nan=False) + "\n")
    return record


FIGURE_KEY = "benign-figure"  # the PNG text chunk describing a saved figure (see `save_figure`)


def save_figure(fig, out: Path, name: str, dpi: int = 150, description: dict | None = None,
                formats=("png", "pdf")) -> list[Path]:
    """Save a matplotlib figure as NAME.png and NAME.pdf (`formats`) in `out`, each atomically. The PNG carries
    `description` (with its dpi) as JSON in its text chunk FIGURE_KEY, so a reader of the file alone (the book's
    browser check) knows what it holds; `figure_description` reads it back."""
    paths = []
    for ext in formats:
        path = Path(out) / f"{name}.{ext}"
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=f".{ext}")
        os.close(fd)
        metadata = {FIGURE_KEY: json.dumps({**(description or {}), "dpi": dpi})} if ext == "png" else None
        try:
            fig.savefig(tmp, format=ext, dpi=dpi, bbox_inches="tight", metadata=metadata)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        paths.append(path)
    return paths


def figure_description(png: Path) -> dict | None:
    """What `save_figure` wrote into a PNG (None for any other image)."""
    from PIL import Image

    with Image.open(png) as image:
        text = getattr(image, "text", {}).get(FIGURE_KEY)
    return json.loads(text) if text else None


def _plain(value):
    """JSON-friendly: numpy / torch scalars and arrays become Python numbers and lists; NaN and ±inf become null."""
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def cache_key(parts: dict, length: int = 20) -> str:
    """The key of a cache entry (`paths.cache_dir`): a hash of everything that decides it as sorted JSON — the
    parameters, the data and the code that computes it (`code_fingerprint`)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:length]


def read_cached(folder: Path, key: str) -> dict | None:
    """The cached JSON entry `key` in `folder`, or None when it is missing or damaged (then it is computed again)."""
    try:
        return json.loads((Path(folder) / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None


def write_cached(folder: Path, key: str, entry) -> None:
    """Store a JSON entry under `key` in `folder`, atomically (a reader never sees half of it)."""
    write_atomic(Path(folder) / f"{key}.json", json.dumps(entry) + "\n")


def code_fingerprint(module: str, packages=("torch", "numpy")) -> str:
    """A hash of the code that computes a cached result: the source of `module` and of every module of its own
    package that it imports, directly or through others (`code_modules`), plus the versions of `packages`.

    Caches key their entries by it, so a change of a kernel, or of anything the kernel imports, is recomputed and
    never served from an older result. A source counts by what it runs (`code_text`): a comment or a docstring
    rewritten is the same code, so editing the package's documentation recomputes nothing.
    """
    digest = hashlib.sha256()
    for name, origin in code_modules(module):
        digest.update(name.encode() + b"\0" + code_text(Path(origin).read_bytes()).encode() + b"\0")
    for name in packages:
        try:
            digest.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=none".encode())
    return digest.hexdigest()[:20]


def code_text(source: bytes) -> str:
    """What a module's source runs, as text: its syntax tree without comments, docstrings or line numbers (`ast.dump`
    of the tree with each module's, class's and function's docstring taken out), nor its `__all__` (the names a
    star import takes: a package's list of its modules). Any change of a statement, a name or a constant changes it;
    rewording a comment or a docstring, listing a new module, or moving code between lines, does not."""
    tree = ast.parse(source)
    tree.body = [node for node in tree.body if not _sets_all(node)]
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _sets_all(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)


def code_modules(module: str) -> list[tuple[str, str]]:
    """`module` and every module of its own package that it imports, directly or through others, as (name, source
    file), in the order they are found."""
    top = module.split(".")[0]
    seen, todo, found = set(), [module], []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # an import that names no module (it would fail when run)
            continue
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        found.append((name, spec.origin))
        package = name if spec.submodule_search_locations else name.rpartition(".")[0]
        todo += [m for m in _imported(Path(spec.origin).read_bytes(), package) if m.split(".")[0] == top]
    return found


def _imported(source: bytes, package: str) -> list[str]:
    """The modules a source imports, relative ones resolved. A name imported from a package is its submodule where it
    is one (`from . import words` reads benign.words, not the package's index of modules in benign/__init__.py),
    else the module that defines it."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                names.append(f"{base}.{alias.name}" if _is_module(f"{base}.{alias.name}") else base)
    return names


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # `base.function`: its parent is a module, not a package
        return False
