"""The speed benchmarks' records, and the book's Speed page built from them.

Every script in benchmarks/ times a fast path of the package against a reference computation, prints what it
measured and, last, `ratio N`. Run inside `recorded`, it also leaves what it printed as a record, written atomically
when it finishes, in results/benchmarks/<name>.json: the command line, the git commit, the machine (CPU model,
cores, the load before and after), the date, the printed lines and the ratio. The book's Speed page (`page`) shows,
for every script, what it measures, its command and its latest record, or says that the build has none.
"""

from __future__ import annotations

import ast
import contextlib
import datetime as _dt
import io
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from . import paths
from .records import environment, read_cached, write_atomic
from .words import count

BENCHMARKS = paths.ROOT / "benchmarks"
GPU_RECORDS = BENCHMARKS / "gpu"  # records made on a lent GPU (benchmarks/gpu.sh), kept: no build here can remake them
RATIO = re.compile(r"^\s*ratio\s+(\S+)\s*$")  # a benchmark's closing line: `ratio N`


def gemm_rate(m: int, k: int, n: int, repeats: int = 20, device="cpu") -> float:
    """`device`'s float32 rate (GFLOP/s) for an (m × k) @ (k × n) product, at the current torch threads on a CPU:
    the reference a benchmark sets the rates it achieved on that device against."""
    import torch

    a, b = torch.randn(m, k, device=device), torch.randn(k, n, device=device)
    timed(lambda: a @ b, device)  # a warm-up product, its queued work waited for

    def products():
        for _ in range(repeats):
            a @ b

    return 2 * m * k * n * repeats / timed(products, device) / 1e9


def timed(fn, device="cpu") -> float:
    """Seconds `fn()` takes; on a CUDA `device` its queued GPU work is waited for before and after, so it counts."""
    import torch

    cuda = str(device).startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
    started = time.perf_counter()
    fn()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - started


def quadratic_in_d(sample_d, values, grid_d) -> np.ndarray:
    """A cost measured at the dimensions `sample_d`, fitted by a + b·d + c·d² (least squares) and read at `grid_d`:
    how the benchmarks extrapolate a per-run cost from a few sampled d to a whole grid."""
    fit = np.linalg.lstsq(np.vander(np.asarray(sample_d, dtype=float), 3), np.asarray(values, dtype=float),
                          rcond=None)[0]
    return np.vander(np.asarray(grid_d, dtype=float), 3) @ fit


def record_path(name: str) -> Path:
    """Where a benchmark's record goes: <results>/benchmarks/<name>.json (`$BENIGN_RESULTS` moves the results)."""
    return paths.RESULTS / "benchmarks" / f"{name}.json"


def machine() -> dict:
    """The CPU model, its cores (all, and those this process may use), the GPU if torch sees one, and the load."""
    model = None
    with contextlib.suppress(OSError):
        names = re.findall(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        model = names[0].strip() if names else None
    given = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()  # Linux only
    found = {"cpu": model or platform.processor() or platform.machine(), "cores": os.cpu_count(), "cores_given": given,
             "load_1min": round(os.getloadavg()[0], 2)}
    torch = sys.modules.get("torch")  # only when the benchmark imported it: a GPU it may have used
    if torch is not None and torch.cuda.is_available():
        found["gpu"] = torch.cuda.get_device_name(0)
    return found


def command() -> str:
    """This process's command line, the interpreter and script relative to the repository when inside it."""
    def relative(arg: str) -> str:
        path = Path(arg)
        return str(path.relative_to(paths.ROOT)) if path.is_absolute() and path.is_relative_to(paths.ROOT) else arg

    return shlex.join([relative(sys.executable), relative(sys.argv[0]), *sys.argv[1:]])


def local_changes() -> bool | None:
    """Whether tracked files differ from the commit (so the commit alone does not say what ran); None outside git."""
    try:
        out = subprocess.run(["git", "-C", str(paths.ROOT), "status", "--porcelain", "--untracked-files=no"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out.stdout.strip()) if out.returncode == 0 else None


def write(name: str, lines: list[str], load_before: float | None = None) -> Path:
    """Save a benchmark's record atomically as <results>/benchmarks/<name>.json and return its path.

    `name` is the script's name without `.py` (`"fast_trainer"`), `lines` what it printed; the ratio is the number
    of its last `ratio N` line (None without one). `load_before`: the 1-minute load when it started (`recorded`
    passes it). The record holds the command line, the git commit (and whether tracked files differed from it), the
    machine, the date (UTC) and the package versions."""
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    ratios = [m.group(1) for m in map(RATIO.match, lines) if m]
    try:
        ratio = float(ratios[-1]) if ratios else None
    except ValueError:
        ratio = None
    env = environment()
    now = machine()
    now["load_1min_before"], now["load_1min_after"] = load_before, now.pop("load_1min")
    record = {"benchmark": name, "command": command(), "git_commit": env["git_commit"],
              "local_changes": local_changes(), "machine": now,
              "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "lines": lines, "ratio": ratio, "versions": env["versions"], "platform": env["platform"]}
    path = record_path(name)
    write_atomic(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path


class _Tee(io.TextIOBase):
    """A stream that writes to another and keeps a copy."""

    def __init__(self, stream):
        self.stream, self.kept = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


@contextlib.contextmanager
def recorded(name: str):
    """Print as usual, and save what was printed as the benchmark's record (`write`) when the block finishes
    without an error. Ctrl-C ends it in one line on stderr and exit code 130, with no record saved. A benchmark's
    whole change: `with speed.recorded("fast_trainer"): main()`."""
    load_before = round(os.getloadavg()[0], 2)
    tee = _Tee(sys.stdout)
    try:
        with contextlib.redirect_stdout(tee):
            yield
    except KeyboardInterrupt as stopped:  # its own words, if it has any (a sweep says what it kept)
        print(f"{name}: interrupted{f' ({stopped})' if str(stopped) else ''}; no record saved", file=sys.stderr)
        raise SystemExit(130) from None
    write(name, tee.kept.getvalue().splitlines(), load_before)


def read(name: str, folder: Path | None = None) -> dict | None:
    """A benchmark's record in this build's results (or in `folder`: `GPU_RECORDS`), or None where there is none or
    it cannot be read (a damaged file is no record)."""
    record = read_cached(folder or record_path(name).parent, name)
    if not isinstance(record, dict) or not isinstance(record.get("lines"), list):
        return None
    return record


def said() -> str:
    """How fast the fast trainers are, as the landing page can say it: how many benchmarks have a record in this
    results folder (the Speed page shows them), or that `make bench` makes them, and how many have a record kept
    from a GPU (`GPU_RECORDS`)."""
    made = [name for name in scripts() if read(name) is not None]
    kept = [name for name in scripts() if read(name, GPU_RECORDS) is not None]
    on_gpu = f"; {count(len(kept), 'benchmark')} measured on a GPU, kept with the code" if kept else ""
    if not made:
        return ("`make bench` measures by how much on your machine, and the {doc}`speed` page shows its records "
                f"(this build has none of its own yet{on_gpu})")
    return (f"the {{doc}}`speed` page shows by how much, from this machine's records ({len(made)} of its "
            f"{len(scripts())} benchmarks measured{on_gpu})")


def scripts() -> dict[str, str]:
    """Every benchmark script by name, with the first line of its docstring: what it measures."""
    found = {}
    for script in sorted(BENCHMARKS.glob("*.py")):
        doc = ast.get_docstring(ast.parse(script.read_text())) or script.stem
        found[script.stem] = doc.strip().splitlines()[0]
    return found


def ratio_said(name: str) -> str:
    """The sentence of a benchmark script's docstring that says what its `ratio N` is (the first that names it)."""
    doc = ast.get_docstring(ast.parse((BENCHMARKS / f"{name}.py").read_text())) or ""
    ends = r"(?<=[.!?])\s+(?=[A-Z`]|\d+\.\s)"  # a sentence's end: before a capital, code or a numbered item
    sentences = (s for part in doc.split("\n\n") for s in re.split(ends, " ".join(part.split())))
    return next((s for s in sentences if "`ratio N`" in s), "")


def measured(record: dict) -> str:
    """Where and when a record was measured, in one line of prose with every value as code."""
    where = record.get("machine") or {}
    cores = f"{where.get('cores_given')} of {where.get('cores')} cores"
    loads = [f"{where[k]} {when}" for k, when in (("load_1min_before", "before"), ("load_1min_after", "after"))
             if where.get(k) is not None]
    load = f", 1-minute load `{', '.join(loads)}`" if loads else ""
    gpu = f", GPU `{where['gpu']}`" if where.get("gpu") else ""
    commit = f"`{(record.get('git_commit') or 'unknown')[:10]}`"
    if record.get("local_changes"):
        commit += " with changes not committed"
    date = str(record.get("date", "unknown"))[:16].replace("T", " ")
    return (f"Measured by `{record.get('command', 'unknown')}` at commit {commit} on `{where.get('cpu')}` "
            f"(`{cores}`{load}){gpu}, `{date} UTC`:")


def page() -> str:
    """The Speed page: each benchmark's purpose, command and latest record."""
    lines = ["# Speed", "",
             "Generated by `benign book` from the records the scripts in `benchmarks/` leave in `results/benchmarks/`",
             "when they finish. Each times a fast path of the package against the computation it replaces (or the",
             "same work beside other programs), side by side in one process, prints what it measured and ends with",
             "`ratio N`, the ratio defined under its heading. `make bench` runs most of them one after the other;",
             "the wall time of every notebook of this build is on the {doc}`reproducibility` page. Records made on",
             "a GPU (`make gpu` on a machine that has one), which no build without one can remake, are kept in",
             "`benchmarks/gpu/` and shown after this machine's.", ""]
    for name, purpose in scripts().items():
        lines += [f"## {purpose.rstrip('.')}", "", ratio_said(name), "",
                  f"`.venv/bin/python benchmarks/{name}.py`", ""]
        record = read(name)
        if record is None:
            lines += ["This build has no measurement of it: run the command above, which writes",
                      f"`results/benchmarks/{name}.json`, then build the book again.", ""]
        else:
            lines += [measured(record), "", "```text", *record["lines"], "```", ""]
        on_gpu = read(name, GPU_RECORDS)
        if on_gpu is not None:
            lines += [f"On a GPU, kept in `benchmarks/gpu/{name}.json`. {measured(on_gpu)}", "", "```text",
                      *on_gpu["lines"], "```", ""]
            if on_gpu.get("note"):  # written when the record was kept: what is known about it since
                lines += [f"**Note, written when this record was kept.** {on_gpu['note']}", ""]
    return "\n".join(lines)
