"""The notebooks as runnable programs: their parameters, profiles, validation and headless execution.

A notebook is a jupytext percent file in notebooks/ with one `parameters` cell of plain literals, the `book` profile;
notebooks/profiles/<name>.yml holds the `smoke` and `paper` overrides. Every notebook begins so (see `start`):

    from benign import notebooks
    nb = notebooks.start("fig3_dynamics", globals())
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from .checks import ParameterError, check, unknown_parameter
from .paths import NOTEBOOKS, PROFILES, results_dir
from .progress import TTY_ENV, terminal_name
from .records import FIGURE_KEY, check_out, move_in, output_dir, remove_stale, save_figure, save_metrics, write_atomic

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

    def save_figure(self, fig, name: str = "", phone_columns: int = 1) -> None:
        """The figure as NAME.png and NAME.pdf in the output folder (NAME: the notebook's by default), its panels in
        `phone_columns` columns as NAME.phone.png where they lie wider (`plots.as_column`), each PNG recording what the
        browser check reads (`plots.describe`); shown as the saved PNG (its phone version noted) and closed."""
        import matplotlib.pyplot as plt
        from IPython.display import Image, display

        from .plots import DPI, alt_text, as_column, describe

        name = name or self.name
        saved = save_figure(fig, self.out, name, dpi=DPI, description=describe(fig))
        alt, phone = alt_text(fig), as_column(fig, ncols=phone_columns) is not None
        if phone:
            save_figure(fig, self.out, f"{name}.phone", dpi=DPI, formats=("png",),
                        description=describe(fig) | {"phone_columns": phone_columns})  # the columns it was laid in
        plt.close(fig)
        display(Image(filename=str(saved[0])),
                metadata={FIGURE_KEY: {"notebook": self.name, "name": name, "alt": alt, "phone": phone}})

    def save_metrics(self, metrics: dict, extra: dict | None = None) -> None:
        """Glue every headline number (one in [0, 1] also as KEY_pct: `words.share_text`) and word (a str, as
        Markdown, direction words marked); write metrics.json with them (words plain), parameters, seeds, versions."""
        from IPython.display import Markdown
        from myst_nb import glue

        from .device import thread_record
        from .words import plain, share_text

        for key, value in metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                glue(key, value, display=False)
                if value != value or 0 <= value <= 1:
                    glue(f"{key}_pct", Markdown(share_text(value)), display=False)
            elif isinstance(value, str):
                glue(key, Markdown(value), display=False)
        save_metrics(self.out, self.name, {k: plain(v) if isinstance(v, str) else v for k, v in metrics.items()},
                     self.parameters, self.device, dict(extra or {}, cpu_threads=self.cpu_threads, **thread_record()))

    def compare(self, metrics: dict):
        """The comparison table of this notebook, shown as HTML on the page (`benign.pages.Comparison`)."""
        from .expected import compare
        from .pages import Comparison

        rows = compare(self.name, metrics)
        return Comparison(rows, {name: title(name) for name in {r.expected.counted_on for r in rows} if name})


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
    check_together(name, parameters)
    style()
    show_tables_as_pages_do()
    interrupt_in_one_line()
    if parameters.get("cpu_threads"):  # fixed for every block of work in this kernel, its sweeps' workers included
        os.environ[CPU_THREADS_ENV] = str(parameters["cpu_threads"])
    threads = thread_count()
    torch.set_num_threads(threads)
    return Notebook(name, parameters, output_dir(name, namespace.get("out_dir", "")),
                    resolve_device(parameters.get("device", "cpu")), threads)


def kernel_shell():
    """The IPython shell this code runs in, or None outside one (a script, a test)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def interrupt_in_one_line() -> None:
    """Inside a notebook kernel, an interrupted cell shows one line ("SweepInterrupted: 3 of 12 chunks kept in …")
    and drops the figures it left open, so the kernel stops at once: IPython's traceback reads the source of every
    frame, and the inline backend draws every open figure after the cell (seconds, for a half-made 4 × 2 figure)."""
    shell = kernel_shell()
    if shell is None:
        return

    def one_line(shell, etype, value, tb, tb_offset=None):
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
        stb = [f"{etype.__name__}: {value}" if str(value) else etype.__name__]
        shell._showtraceback(etype, value, stb)  # IPython's hook that publishes the error (ename, evalue) to clients
        return stb

    shell.set_custom_exc((KeyboardInterrupt,), one_line)


def show_tables_as_pages_do() -> None:
    """Inside a notebook kernel, every pandas table a cell shows is rendered by `benign.pages.frame`: no index
    column, numbers at their precision, yes/no and a dash instead of True/False/None/NaN."""
    shell = kernel_shell()
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
    profiles = read_profiles(file) if file.exists() else {}
    if "profiles_of" in profiles:
        return profile(profiles["profiles_of"], profile_name)
    return dict(profiles.get(profile_name) or {})


def read_profiles(file: Path) -> dict:
    """A profile file: a mapping of profile names to mappings of parameters (or `profiles_of: NOTEBOOK`). One-line
    ParameterError naming the file (and the line) when it is not valid YAML or not of that shape."""
    try:
        profiles = yaml.safe_load(file.read_text())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ParameterError(f"profile file {file} is not valid YAML{where}: {problem}") from None
    profiles = {} if profiles is None else profiles
    if not isinstance(profiles, dict):
        raise ParameterError(f"profile file {file} holds a {_kind(profiles)}: it must map profile names "
                             f"({', '.join(PROFILE_NAMES)}) to parameters")
    for key, section in profiles.items():
        if key == "profiles_of":
            if not (isinstance(section, str) and section in names()):
                raise ParameterError(f"profile file {file}: profiles_of = {section!r} must name a notebook")
        elif key not in PROFILE_NAMES:
            raise ParameterError(f"profile file {file} has a section {key!r}: use {', '.join(PROFILE_NAMES)} or "
                                 "profiles_of")
        elif not (section is None or isinstance(section, dict)):
            raise ParameterError(f"profile file {file}: section {key!r} holds a {_kind(section)}: it must map "
                                 "parameter names to values (name: value, one per line)")
    return profiles


def _kind(value) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "truth value"}.get(type(value),
                                                                                                 type(value).__name__)


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
    check_together(name, params)
    return params


def check_together(name: str, params: dict) -> None:
    """Settings that pass their own rules but cannot run together, refused (ParameterError) before a kernel starts.
    Paper 1's label noise (deterministic, the authors') flips ⌈n·η⌉ // 2 labels of each class: a positive noise ratio
    η must flip at least one label of each class and leave one of each clean, or the page has no noisy sample to
    show (paper 2's notebooks draw their flips at random)."""
    eta = params.get("noise_ratio")
    if name.startswith("paper2") or not eta or params.get("label_noise", "deterministic") != "deterministic":
        return
    for key, value in params.items():
        if key == "n" or key.startswith("n_values"):
            for n in value if isinstance(value, list) else [value]:
                if not _flips_both_ways(n, eta):
                    least = next(m for m in range(2, 10**6) if _flips_both_ways(m, eta))
                    which = f"each of {key}" if isinstance(value, list) else key
                    raise ParameterError(f"{key} = {value!r} with noise_ratio = {eta} flips "
                                         f"{math.ceil(n * eta) // 2} of the {n // 2} labels of each class (⌈n·η⌉/2, "
                                         f"rounded down): {which} must be at least {least} at this noise ratio")


def _flips_both_ways(n: int, eta: float) -> bool:
    flips = math.ceil(n * eta) // 2
    return flips >= 1 and n // 2 - flips >= 1


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a notebook run (`run`) or a build: the message says what was kept."""


INTERRUPTS = ("KeyboardInterrupt", "SweepInterrupted")  # what a cell raises when its kernel is interrupted


def run(name: str, profile_name: str = "book", overrides: dict | None = None, out: str | Path | None = None,
        kernel: str = "python3", progress: bool | None = None, force: bool = False) -> Path:
    """Execute a notebook headless with papermill into `out` (default results/<name>/<profile>/).

    Runs in a temporary folder beside `out` and moves the results in only when the notebook succeeded, so a failed,
    rejected or interrupted run leaves `out` as it was. `out` must be empty or hold this notebook's own results
    (`force`: replace whatever it holds). Returns `out`. `progress` (default: whether stderr is a terminal) shows
    a bar of the cells executed and, unless the `progress` parameter is given, turns the notebook's own bars on,
    drawn on the terminal (`benign.progress`), never into the notebook.

    Ctrl-C (SIGINT, in the main thread) is passed to the kernel: the running cell stops (a sweep keeps its finished
    chunks), the temporary folder is removed, and `Interrupted` says what was kept. A second Ctrl-C stops at once.
    """
    import jupytext
    import papermill

    terminal = terminal_name()
    progress = terminal is not None if progress is None else progress
    params = resolve(name, profile_name, overrides)
    if progress and "progress" in params and "progress" not in (overrides or {}):
        params["progress"] = True
    out = Path(out) if out else results_dir(name, profile_name)
    foreign = check_out(name, out, force)
    remove_stale(out)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.{os.getpid()}.", dir=out.parent))
    sockets = tempfile.mkdtemp(prefix="benign-kernel-")  # short: a socket's path has at most 107 bytes
    kept = False  # the executed copy of a failed run stays for the reader
    try:
        source = work / f".{name}.source.ipynb"
        jupytext.write(jupytext.read(path(name)), source)
        started = time.perf_counter()
        with _environment({TTY_ENV: terminal if progress else None}), _interrupts_to_kernels() as kernels:
            try:
                papermill.execute_notebook(str(source), str(work / f"{name}.ipynb"),
                                           parameters={**params, "out_dir": str(work)}, kernel_name=kernel,
                                           progress_bar=progress, cwd=str(NOTEBOOKS),
                                           kernel_manager_class=_local_kernel_manager(os.path.join(sockets, "ipc"),
                                                                                      kernels))
            except papermill.PapermillExecutionError as err:
                if err.ename == "ParameterError":
                    raise ParameterError(str(err.evalue)) from None
                if err.ename in INTERRUPTS or kernels.interrupted:
                    said = f": {err.evalue}" if err.ename == "SweepInterrupted" else f"; {out} is unchanged"
                    raise Interrupted(f"interrupted {name} in cell {err.exec_count}{said}") from None
                kept = True
                raise NotebookFailed(f"{name} failed in cell {err.exec_count}: {err.ename}: {err.evalue} "
                                     f"(executed notebook kept in {work})", work / f"{name}.ipynb") from None
        source.unlink()
        _finish_record(work, out, profile_name, time.perf_counter() - started)
        move_in(work, out, replace=foreign)
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
        if not kept:
            shutil.rmtree(work, ignore_errors=True)
    return out


class _Kernels(list):
    """The kernel managers a run started, and whether Ctrl-C was passed to them."""

    interrupted = 0.0  # when (time.monotonic) the first Ctrl-C came; 0: none

    def signal(self, signum: int) -> None:
        """Send `signum` to every kernel's process group, but not to one shutting down (SIGINT would break its
        exit, and papermill would wait for it to time out)."""
        for manager in self:
            pgid = getattr(manager.provisioner, "pgid", None)
            if pgid and (signum == signal.SIGKILL or not manager.shutting_down):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signum)


@contextlib.contextmanager
def _interrupts_to_kernels():
    """Within the block, SIGINT goes to the kernels started (their process groups: a kernel and its workers, which
    ignore it) and the block goes on until the running cell ends with the interrupt; it is sent again every
    `RESEND_S` while the block runs (an interrupt that finds the kernel between cells is ignored by it). A second
    SIGINT from the user raises KeyboardInterrupt here, and the kernels are killed. Only in the main thread, and
    only where SIGINT is not ignored."""
    import threading

    kernels = _Kernels()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield kernels  # a process started with Ctrl-C ignored (nohup, a shell's background job) keeps ignoring it
        return
    done = threading.Event()

    def resend():
        while not done.wait(RESEND_S):
            kernels.signal(signal.SIGINT)

    def handler(signum, frame):
        if kernels.interrupted and time.monotonic() - kernels.interrupted > 1:  # a second, later Ctrl-C
            raise KeyboardInterrupt
        if not kernels.interrupted:
            kernels.interrupted = time.monotonic()
            kernels.signal(signal.SIGINT)
            threading.Thread(target=resend, daemon=True).start()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield kernels
    except KeyboardInterrupt as err:
        if not isinstance(err, Interrupted):  # stopped at once: papermill had no time to shut its kernels down
            kernels.signal(signal.SIGKILL)
        raise
    finally:
        done.set()
        signal.signal(signal.SIGINT, previous)


RESEND_S = 1.0


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


def _local_kernel_manager(sockets: str, kernels: list):
    """The kernel manager papermill starts kernels with: IPC sockets `sockets`-1 … -5 in a folder of this run's own;
    no SIGINT before a shutdown request (a kernel still answering logs "KeyboardInterrupt caught in kernel"); the
    kernel process's own stderr discarded (cells' output travels by messages; what the process logs as its sockets
    close, "Socket operation on non-socket", is noise). Each manager joins `kernels` (Ctrl-C reaches its kernel);
    once Ctrl-C came, its kernel is killed at shutdown."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum, Unicode

    class LocalKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc")
        ip = Unicode(sockets)

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            kernels.append(self)

        async def _async_launch_kernel(self, kernel_cmd, **kw) -> None:
            await super()._async_launch_kernel(kernel_cmd, **{**kw, "stderr": subprocess.DEVNULL})

        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

        async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            # interrupted: the run is abandoned and its finished work already saved, so its kernel (and workers)
            # are killed at once, not asked to exit (a second or more with torch loaded)
            await super().shutdown_kernel(now=now or bool(kernels.interrupted), restart=restart)

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
