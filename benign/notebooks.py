"""The notebooks as runnable programs: their parameters, profiles, validation and headless execution.

A notebook is a jupytext percent file in notebooks/ with one cell tagged `parameters` holding plain literals: its
defaults are the `book` profile. notebooks/profiles/<name>.yml holds the `smoke` and `paper` overrides. Inside,
every notebook begins the same way (see `start`):

    from benign import notebooks
    nb = notebooks.start("fig3_dynamics", globals())
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from .checks import ParameterError, check, unknown_parameter
from .paths import NOTEBOOKS, PROFILES, results_dir
from .progress import TTY_ENV, terminal_name
from .records import FIGURE_KEY, save_figure, save_metrics, output_dir, write_atomic

PROFILE_NAMES = ("smoke", "book", "paper")


class NotebookFailed(RuntimeError):
    """A notebook raised while it ran; `executed` is the executed copy, outputs and traceback included."""

    def __init__(self, message: str, executed: Path):
        super().__init__(message)
        self.executed = executed


def names() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("*.py"))


def path(name: str) -> Path:
    if name not in names():
        raise ParameterError(f"unknown notebook {name!r}: use one of {', '.join(names())}")
    return NOTEBOOKS / f"{name}.py"


def _parameter_cell(name: str):
    import jupytext

    nb = jupytext.read(path(name))
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise RuntimeError(f"{name} must have exactly one cell tagged 'parameters', found {len(cells)}")
    return nb, cells[0]


def defaults(name: str) -> dict:
    """The notebook's parameters and their default (book) values, read from its `parameters` cell."""
    _, cell = _parameter_cell(name)
    params = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            params[node.targets[0].id] = ast.literal_eval(node.value)
    return params


def current(name: str, namespace: dict) -> dict:
    """The values a running notebook holds for its parameters (out_dir aside): call with `globals()`."""
    return {k: namespace[k] for k in defaults(name) if k != "out_dir"}


@dataclass
class Notebook:
    """A running notebook: its name, checked parameters, output folder, compute device and CPU threads."""

    name: str
    parameters: dict
    out: Path
    device: object  # torch.device
    cpu_threads: int

    def save_figure(self, fig, name: str = "") -> None:
        """The figure as NAME.png and NAME.pdf in the output folder (NAME defaults to the notebook's name), shown as
        the saved PNG (the book links it to its full size and its PDF) and closed. The PNG records the size of its
        smallest text, which the book's browser check turns into pixels on the page. Returns nothing, so the page
        shows no list of paths."""
        import matplotlib.pyplot as plt
        from IPython.display import Image, display

        from .plots import DPI, smallest_text_pt

        name = name or self.name
        saved = save_figure(fig, self.out, name, dpi=DPI, description={"smallest_text_pt": smallest_text_pt(fig)})
        plt.close(fig)
        display(Image(filename=str(saved[0])), metadata={FIGURE_KEY: {"notebook": self.name, "name": name}})

    def save_metrics(self, metrics: dict, extra: dict | None = None) -> None:
        """Glue every headline number (a plain int or float, for the page's text) and every headline word (a str, as
        Markdown for `{glue:md}`), and write metrics.json with them, the parameters, seeds, versions, device and
        threads. Returns nothing, so the page shows no record dump."""
        from IPython.display import Markdown
        from myst_nb import glue

        from .device import thread_record

        for key, value in metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                glue(key, value, display=False)
            elif isinstance(value, str):
                glue(key, Markdown(value), display=False)
        save_metrics(self.out, self.name, metrics, self.parameters, device=self.device,
                     extra={"cpu_threads": self.cpu_threads, **thread_record(), **(extra or {})})

    def compare(self, metrics: dict):
        """The comparison table of this notebook, shown as HTML on the page (`benign.pages.Comparison`)."""
        from .expected import compare
        from .pages import Comparison

        return Comparison(compare(self.name, metrics))


def start(name: str, namespace: dict) -> Notebook:
    """What every notebook does first: check its parameters (read from `namespace`, i.e. `globals()`), set the plot
    style, make its output folder, resolve its device (parameter `device`; cpu for a notebook without one) and set
    its CPU threads (parameter `cpu_threads`: a number fixes them for every block of work, 0 leaves each block
    to the thread policy of `benign.device`)."""
    import torch

    from .device import CPU_THREADS_ENV, resolve_device, thread_count
    from .plots import style

    parameters = current(name, namespace)
    for pname, value in parameters.items():
        check(pname, value)
    style()
    show_tables_as_pages_do()
    if parameters.get("cpu_threads"):  # fixed for every block of work in this kernel, its sweeps' workers included
        os.environ[CPU_THREADS_ENV] = str(parameters["cpu_threads"])
    threads = thread_count()
    torch.set_num_threads(threads)
    return Notebook(name, parameters, output_dir(name, namespace.get("out_dir", "")),
                    resolve_device(parameters.get("device", "cpu")), threads)


def show_tables_as_pages_do() -> None:
    """Inside a notebook kernel, every pandas table a cell shows is rendered by `benign.pages.frame`: no index
    column, numbers at their precision, yes/no and a dash instead of True/False/None/NaN."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    import pandas as pd

    from .pages import frame

    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame)


def title(name: str) -> str:
    """The first markdown heading of the notebook."""
    for line in path(name).read_text().splitlines():
        if line.startswith("# # "):
            return line[4:].strip()
    return name


def profile(name: str, profile_name: str) -> dict:
    """The overrides a profile applies to the defaults (`book` applies none). A profile file holding only
    `profiles_of: OTHER` uses OTHER's profiles (two notebooks that must read the same runs share one file)."""
    if profile_name not in PROFILE_NAMES:
        raise ParameterError(f"unknown profile {profile_name!r}: use one of {', '.join(PROFILE_NAMES)}")
    file = PROFILES / f"{name}.yml"
    overrides = (yaml.safe_load(file.read_text()) or {}) if file.exists() else {}
    if "profiles_of" in overrides:
        return profile(overrides["profiles_of"], profile_name)
    return dict(overrides.get(profile_name) or {})


def _describe(default) -> str:
    return {bool: "True or False", int: "an integer", float: "a number", str: "a string",
            list: "a list, e.g. [1, 2]"}.get(type(default), type(default).__name__)


def coerce(pname: str, raw, default):
    """A command-line string turned into the type of the parameter's default."""
    if not isinstance(raw, str):
        value = raw
    elif isinstance(default, bool):
        lowered = raw.lower()
        if lowered not in ("true", "false", "1", "0"):
            raise ParameterError(f"{pname} = {raw!r} is not allowed: {pname} must be True or False")
        value = lowered in ("true", "1")
    elif isinstance(default, (int, float, list)):
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
    else:
        value = raw
    ok = (isinstance(value, type(default)) and not (isinstance(value, bool) and not isinstance(default, bool))) or (
        isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        raise ParameterError(f"{pname} = {raw!r} is not allowed: {pname} must be {_describe(default)}"
                             f" (default {default!r})")
    return float(value) if isinstance(default, float) else value


def resolve(name: str, profile_name: str = "book", overrides: dict | None = None) -> dict:
    """Defaults, then the profile, then `overrides`; every name known, every value of the right type and range."""
    params = defaults(name)
    chosen = {**profile(name, profile_name), **(overrides or {})}
    for pname, raw in chosen.items():
        if pname not in params:
            raise unknown_parameter(pname, list(params), name)
        params[pname] = coerce(pname, raw, params[pname])
    for pname, value in params.items():
        check(pname, value)
    return params


def run(name: str, profile_name: str = "book", overrides: dict | None = None, out: str | Path | None = None,
        kernel: str = "python3", progress: bool | None = None) -> Path:
    """Execute a notebook headless with papermill into `out` (default results/<name>/<profile>/).

    Runs in a temporary folder beside `out` and moves the results in only when the notebook succeeded, so a failed
    or rejected run leaves `out` as it was. Returns `out`. `progress` (default: whether stderr is a terminal) shows
    a bar of the cells executed and, unless the `progress` parameter is given, turns the notebook's own bars on,
    drawn on the terminal (`benign.progress`), never into the notebook.
    """
    import jupytext
    import papermill

    terminal = terminal_name()
    progress = terminal is not None if progress is None else progress
    params = resolve(name, profile_name, overrides)
    if progress and "progress" in params and "progress" not in (overrides or {}):
        params["progress"] = True
    out = Path(out) if out else results_dir(name, profile_name)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    source = work / f".{name}.source.ipynb"
    jupytext.write(jupytext.read(path(name)), source)
    started = time.perf_counter()
    sockets = tempfile.mkdtemp(prefix="benign-kernel-")  # short: a socket's path has at most 107 bytes
    try:
        with _environment({TTY_ENV: terminal if progress else None}):
            papermill.execute_notebook(str(source), str(work / f"{name}.ipynb"),
                                       parameters={**params, "out_dir": str(work)}, kernel_name=kernel,
                                       progress_bar=progress, cwd=str(NOTEBOOKS),
                                       kernel_manager_class=_local_kernel_manager(os.path.join(sockets, "ipc")))
    except papermill.PapermillExecutionError as err:
        if err.ename == "ParameterError":
            shutil.rmtree(work, ignore_errors=True)
            raise ParameterError(str(err.evalue)) from None
        raise NotebookFailed(f"{name} failed in cell {err.exec_count}: {err.ename}: {err.evalue} "
                             f"(executed notebook kept in {work})", work / f"{name}.ipynb") from None
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    source.unlink()
    _finish_record(work, out, profile_name, time.perf_counter() - started)
    out.mkdir(parents=True, exist_ok=True)
    for item in work.iterdir():
        target = out / item.name
        if target.is_dir() and not item.is_dir():
            shutil.rmtree(target)
        os.replace(item, target)
    work.rmdir()
    return out


@contextlib.contextmanager
def _environment(values: dict):
    """Environment variables set (a value) or unset (None) for a block, as they were after it."""
    def apply(settings: dict) -> None:
        for key, value in settings.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    before = {k: os.environ.get(k) for k in values}
    apply(values)
    try:
        yield
    finally:
        apply(before)


def _local_kernel_manager(sockets: str):
    """The kernel manager papermill starts kernels with.

    It talks to the kernel over local (IPC) sockets named `sockets`-1 … -5 (a folder of this run's own, so notebooks
    run side by side never share a socket): the kernel is on this machine, so no TCP port is opened (and
    ipykernel has nothing to warn about). And it shuts a kernel down without interrupting it first: jupyter_client
    sends SIGINT before every shutdown request, and a kernel still answering a message then logs "KeyboardInterrupt
    caught in kernel" on the terminal. When papermill shuts a kernel down its cells have all finished; the shutdown
    request alone stops it (and a kernel that does not stop is still killed after the wait)."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum, Unicode

    class LocalKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc")
        ip = Unicode(sockets)

        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

    return LocalKernelManager


def _finish_record(work: Path, out: Path, profile_name: str, wall_s: float) -> None:
    """Add the profile, the real output folder and the wall time to the metrics.json the notebook wrote."""
    metrics = work / "metrics.json"
    if not metrics.exists():
        raise RuntimeError(f"the notebook wrote no metrics.json into {work}")
    record = json.loads(metrics.read_text())
    record["profile"] = profile_name
    record["wall_s"] = round(wall_s, 2)
    record.setdefault("parameters", {})["out_dir"] = str(out)
    write_atomic(metrics, json.dumps(record, indent=2) + "\n")
