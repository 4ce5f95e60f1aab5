"""The notebooks as runnable programs: their settings, profiles and headless execution.

A notebook is a jupytext percent file in notebooks/ whose one `parameters` cell names a profile and overrides of
its settings (`benign.settings`, where every setting, default and preset is written); papermill sets them:

    profile = "book"  # smoke, book or paper
    overrides = {}  # e.g. {"seed": 7}
    out_dir = ""

and the notebook begins so (see `start`): its settings made, checked, and given to the notebook as names.

    from benign import notebooks
    nb = notebooks.start("fig3_dynamics", globals())
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .checks import ParameterError
from .paths import NOTEBOOKS, ROOT, ROOT_ENV, results_dir
from .progress import TTY_ENV, terminal_name
from .records import FIGURE_KEY, check_out, move_in, output_dir, remove_stale, save_figure, save_metrics, write_atomic
from .settings import SETTINGS, Settings


class NotebookFailed(RuntimeError):
    """A notebook raised while it ran; `executed` is the executed copy, outputs and traceback included."""

    def __init__(self, message: str, executed: Path):
        super().__init__(message)
        self.executed = executed


def names() -> list[str]:
    if not NOTEBOOKS.is_dir():
        raise ParameterError(f"no notebooks folder at {NOTEBOOKS}: run benign in the project's folder (a clone or "
                             f"the book's source archive), or set {ROOT_ENV} to it")
    return sorted(p.stem for p in NOTEBOOKS.glob("*.py"))


def path(name: str) -> Path:
    if name not in names():
        raise ParameterError(f"unknown notebook {name!r}: use one of {', '.join(names())}")
    return NOTEBOOKS / f"{name}.py"


def settings_type(name: str) -> type[Settings]:
    """The settings type of a notebook (`benign.settings`)."""
    path(name)
    return SETTINGS[name]


def defaults(name: str) -> dict:
    """The notebook's settings and their default (book) values."""
    return settings_type(name)().values()


@dataclass
class Notebook:
    """A running notebook: its name, settings (and their values by name), output folder, compute device and CPU
    threads."""

    name: str
    settings: Settings
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
        """The comparison table of this notebook, shown as HTML on the page (`benign.pages.Comparison`); nothing on a
        page the papers print no number for (none in `expected.EXPECTED`), whose own prose says so."""
        from .expected import EXPECTED, compare
        from .pages import Comparison

        if self.name not in EXPECTED:
            return None
        rows = compare(self.name, metrics)
        return Comparison(rows, {name: title(name) for name in {r.expected.counted_on for r in rows} if name})


def start(name: str, namespace: dict) -> Notebook:
    """What every notebook does first: make its settings from `profile` and `overrides` in `namespace` (i.e.
    `globals()`: the parameters cell) and give every setting to the notebook as a name (`n`, `rho`, …, as the maths
    writes them), set the plot style, make its output folder, resolve its device (setting `device`; cpu for a
    notebook without one) and set its CPU threads (setting `cpu_threads`: a number fixes them for every block of
    work, 0 leaves each block to the thread policy of `benign.device`).

    A setting assigned by name before this call (plain papermill's `-p seed 7`) overrides the profile too; a name
    this call set itself before (a notebook's cells run again) does not."""
    import torch

    from .device import CPU_THREADS_ENV, resolve_device, thread_count
    from .plots import style

    settings = settings_type(name).preset(namespace.get("profile", "book"), given(name, namespace), where=name)
    parameters = settings.values()
    namespace.update(parameters, **{GIVEN_KEY: dict(parameters)})
    style()
    show_tables_as_pages_do()
    interrupt_in_one_line()
    if parameters.get("cpu_threads"):  # fixed for every block of work in this kernel, its sweeps' workers included
        os.environ[CPU_THREADS_ENV] = str(parameters["cpu_threads"])
    threads = thread_count()
    torch.set_num_threads(threads)
    return Notebook(name, settings, parameters, output_dir(name, namespace.get("out_dir", "")),
                    resolve_device(parameters.get("device", "cpu")), threads)


GIVEN_KEY = "_benign_settings_set"  # the values `start` gave a notebook's namespace last time


def given(name: str, namespace: dict) -> dict:
    """The overrides a notebook's namespace holds: `overrides` (a dict), and any setting assigned by name that
    `start` did not set itself."""
    overrides = namespace.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise ParameterError(f"overrides = {overrides!r} is not allowed: overrides must be a dict of setting names "
                             "to values, e.g. {'seed': 7}")
    earlier = namespace.get(GIVEN_KEY, {})
    named = {k: namespace[k] for k in defaults(name)
             if k in namespace and not (k in earlier and earlier[k] == namespace[k])}
    return {**named, **overrides}


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


def resolve(name: str, profile_name: str = "book", overrides: dict | None = None) -> dict:
    """Defaults, then the profile, then `overrides`; every name known, every value of the right type and range."""
    return settings_type(name).preset(profile_name, overrides, where=name).values()


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
    chosen = {k: params[k] for k in overrides or {}}  # read as their types
    if progress and "progress" in params and "progress" not in chosen:
        chosen["progress"] = True
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
        with (_environment({TTY_ENV: terminal if progress else None, ROOT_ENV: str(ROOT)}),
              _interrupts_to_kernels() as kernels):
            try:
                papermill.execute_notebook(str(source), str(work / f"{name}.ipynb"),
                                           parameters={"profile": profile_name, "overrides": chosen,
                                                       "out_dir": str(work)}, kernel_name=kernel,
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
