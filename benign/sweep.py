"""Grids of runs: chunked, cached, resumable, and runnable on any `concurrent.futures.Executor`.

A *kernel* is a picklable function `kernel(points) -> rows` that computes a chunk of grid points in one go (for
paper 1, `benign.synthetic.grid_chunk`: every run of one d and seed in one tensor program). `run` splits the grid
into chunks by the `by` parameters, takes finished chunks from the cache (keyed by the points and by the code
that computes them, so a changed kernel is never served a stale result), computes the rest in-process or on an
executor (`dask.distributed`'s `client.get_executor()`, a submitit executor, a process pool), and writes each
chunk to the cache atomically as soon as it is done, so an interrupted sweep resumes where it stopped. Every
chunk runs with the CPU threads `benign.device`'s policy gives its worker (`in_threads`), never one per core of the
machine in each of several workers.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import itertools
import json
import math
import signal
import sys
import threading
import time
import warnings
from concurrent.futures import Future, as_completed
from pathlib import Path

import pandas as pd

from . import __version__
from .checks import GRID_RULE, RENAMED, REPLACED, RULES, ParameterError, check, rule_for, unknown_parameter
from .device import count_block, cpu_threads, given_cores, stop_workers, worker_processes
from .progress import bar
from .records import cache_key, code_fingerprint, read_cached, write_cached

CACHE_FORMAT = 1


MAX_RUNS = 10**6  # the largest grid `grid` and `arange` make: a million points hold about a gigabyte of rows


def arange(name: str, spec) -> list:
    """An inclusive range from a `[start, stop, step]` parameter: [250, 5000, 125] → 250, 375, …, 5000."""
    if not GRID_RULE[0](list(spec) if isinstance(spec, tuple) else spec):
        raise ParameterError(f"{name} = {spec!r} is not allowed: {name} must be {GRID_RULE[1]}")
    start, stop, step = spec
    count = int(round((stop - start) / step)) + 1
    if count > MAX_RUNS:
        raise ParameterError(f"{name} = {spec!r} has {count:,} values: at most {MAX_RUNS:,} (a larger step)")
    values = [start + i * step for i in range(count)]
    return [int(round(v)) for v in values] if all(isinstance(v, int) for v in spec) else [round(v, 10) for v in values]


def grid(**axes) -> list[dict]:
    """The cartesian product of the axes (a list, tuple, range or array of values each) with the fixed values
    (scalars), every name known and every value checked, at most `MAX_RUNS` points."""
    lists = {}
    for name, values in axes.items():
        if rule_for(name) is None:
            raise unknown_axis(name)
        values = [_plain(v) for v in values] if _is_axis(values) else [_plain(values)]
        if not values:
            raise ParameterError(f"grid axis {name!r} is empty: give at least one value")
        for value in values:
            check(name, value)
        lists[name] = values
    size = math.prod(len(v) for v in lists.values())
    if size > MAX_RUNS:
        shape = " × ".join(f"{len(v):,} {k}" for k, v in lists.items() if len(v) > 1)
        raise ParameterError(f"a grid of {size:,} runs ({shape}) is too large: at most {MAX_RUNS:,} (about "
                             f"{size * 1e3 / 1e9:,.0f} GB of rows); split it or take fewer values")
    return [dict(zip(lists, combo)) for combo in itertools.product(*lists.values())]


def unknown_axis(name: str) -> ParameterError:
    """The error for a grid axis no parameter rule knows: its new name if it was renamed, else the nearest names."""
    import difflib

    if name in RENAMED or name in REPLACED:
        return unknown_parameter(name, sorted(RULES), "a grid")
    near = difflib.get_close_matches(name, RULES, n=3)
    hint = f"did you mean {' or '.join(repr(n) for n in near)}?" if near else "see benign.checks.RULES"
    return ParameterError(f"unknown parameter {name!r} for a grid: an axis must be a parameter of the kernel; {hint}")


def _is_axis(values) -> bool:
    return isinstance(values, (list, tuple, range)) or (hasattr(values, "__array__") and getattr(values, "ndim", 0) == 1)


def _plain(value):
    """A numpy scalar as the Python number it holds (a cache key and a check see plain values)."""
    return value.item() if hasattr(value, "item") and getattr(value, "ndim", None) == 0 else value


def grid_points(defaults: dict, parameters: dict, **axes) -> list[dict]:
    """The points of a kernel's grid from a notebook's parameters: the swept `axes` (lists) and every other
    parameter the kernel knows (its `GRID_DEFAULTS`) as a fixed value."""
    return grid(**axes, **{k: v for k, v in parameters.items() if k in defaults and k not in axes})


def chunk_points(points: list[dict], defaults: dict, shared: tuple) -> tuple[list[dict], dict]:
    """A kernel's view of its chunk: every point completed with `defaults`, checked, and the values all points
    must share (the `shared` keys). Unknown parameters, a split chunk and bad values raise ParameterError."""
    if not points:
        raise ParameterError("points is empty: give at least one grid point")
    allowed = set(defaults)
    unknown = sorted({k for p in points for k in p} - allowed)
    if unknown:
        raise unknown_parameter(unknown[0], sorted(allowed), "this grid kernel")
    points = [{**defaults, **p} for p in points]
    common = {k: points[0][k] for k in shared}
    if any(p[k] != common[k] for p in points for k in shared):
        raise ParameterError(f"a grid chunk must share {', '.join(shared)}: chunk the grid by d and seed")
    for p in points:
        for name, value in p.items():
            check(name, value)
    return points, common


def chunks(points: list[dict], by=("d", "seed")) -> list[list[dict]]:
    """Points grouped by their values of `by`, in order of first appearance."""
    groups: dict[tuple, list[dict]] = {}
    for point in points:
        missing = [k for k in by if k not in point]
        if missing:
            raise ParameterError(f"grid points lack {', '.join(missing)}: every point needs the chunking keys {by}")
        groups.setdefault(tuple(point[k] for k in by), []).append(point)
    return list(groups.values())


def chunk_key(kernel, chunk: list[dict], code: str | None = None) -> str:
    """Hash of the kernel's name, the code that computes it (`records.code_fingerprint` of its module, given as
    `code` or computed here) and the chunk's points."""
    code = code or code_fingerprint(kernel.__module__)
    return cache_key({"kernel": f"{kernel.__module__}.{kernel.__qualname__}", "code": code, "points": chunk}, 32)


def _digest(rows) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def _load(cache: Path, key: str):
    """The rows of a cached chunk, or None when absent; a truncated or altered file is reported and ignored."""
    path = cache / f"{key}.json"
    if not path.exists():
        return None
    record = read_cached(cache, key)  # None when damaged
    try:
        if record["format"] == CACHE_FORMAT and record["key"] == key and record["sha256"] == _digest(record["rows"]):
            return record["rows"]
    except (KeyError, TypeError):
        pass
    warnings.warn(f"sweep cache file {path} is corrupt: recomputing it", stacklevel=3)
    return None


def _store(cache: Path, key: str, rows) -> None:
    record = {"format": CACHE_FORMAT, "key": key, "version": __version__, "sha256": _digest(rows), "rows": rows}
    write_cached(cache, key, record)


def run(kernel, points: list[dict], *, by=("d", "seed"), executor=None, cache=None, progress=False) -> pd.DataFrame:
    """Compute every point of a grid; one row per point, in the order of `points`' chunks.

    `executor`: any concurrent.futures-style executor; None: this machine's, `local_processes` worker processes
    when more than one chunk is to be computed and a core is given to each (chunks side by side on one thread each
    share cores with other work far better than one chunk on two threads), else this process, chunk after chunk.
    `cache`: a folder for finished chunks (None: no cache). `progress`: a bar over chunks (`benign.progress`). The
    table's `attrs` record the number of chunks, how many were computed (not cached) and the wall time.

    Ctrl-C (KeyboardInterrupt) stops it at once: chunks not started are dropped, this machine's workers are killed
    with their running chunks, every finished chunk stays cached, and `SweepInterrupted` (a KeyboardInterrupt) says
    how many were kept and where.
    """
    started = time.perf_counter()
    groups = chunks(points, by)
    code = code_fingerprint(kernel.__module__)
    keys = [chunk_key(kernel, g, code) for g in groups]
    cache = Path(cache) if cache else None
    results = [_load(cache, k) if cache else None for k in keys]
    todo = [i for i, rows in enumerate(results) if rows is None]
    chunk_bar = bar(len(groups), "sweep chunks", progress, initial=len(groups) - len(todo))

    def finish(i, rows):
        if cache:
            _store(cache, keys[i], rows)
        results[i] = rows
        chunk_bar.update()

    workers = given_cores()
    own_pool = executor is None and len(todo) > 1 and workers > 1 and _picklable(kernel)
    if own_pool:
        executor = local_processes(workers, code)
    futures = {}
    try:
        if executor is None:
            for i in todo:
                finish(i, in_threads(kernel, groups[i])[1])
        else:
            task = functools.partial(in_threads, kernel)
            futures = {executor.submit(task, groups[i]): i for i in todo}
            for future in _completed(list(futures)):
                threads, rows = future.result()
                count_block(threads)  # this process's record of the threads its work ran with
                finish(futures[future], rows)
    except KeyboardInterrupt:
        with _no_interrupts():  # a second Ctrl-C must not leave workers running
            if own_pool:
                close_pool()
            for future in futures:
                future.cancel()
        raise SweepInterrupted(_interrupted(results, cache)) from None
    finally:
        chunk_bar.close()
    table = pd.DataFrame([row for rows in results for row in rows])
    table.attrs.update(chunks=len(groups), computed_chunks=len(todo), wall_s=time.perf_counter() - started)
    return table


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (or a kernel's interrupt) stopped a sweep: its message says how many chunks are kept, and where."""


def _interrupted(results: list, cache: Path | None) -> str:
    if cache is None:
        return f"none of {len(results)} chunks kept: no cache folder was given"
    kept = sum(rows is not None for rows in results)
    return f"{kept} of {len(results)} chunks kept in {cache}; rerun the same command to resume"


@contextlib.contextmanager
def _no_interrupts():
    """SIGINT ignored for a block of clean-up (in the main thread; elsewhere signals cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def in_threads(kernel, chunk: list[dict]) -> tuple[int, list[dict]]:
    """`kernel(chunk)` as one block of work under `benign.device`'s thread policy, wherever it runs (a dask worker's
    task takes at most the worker's threads, a SLURM task its CPUs, and fewer when other work holds the cores); the
    threads it ran with and its rows."""
    with cpu_threads() as threads:
        return threads, kernel(chunk)


_POOL: dict = {}  # the one kept pool: its key and the pool


def local_processes(workers: int, code: str):
    """`device.worker_processes(workers)`, kept for later sweeps while the kernel's code (`code`, its fingerprint)
    and `sys.path` stay the same. A worker imports a module once, so another code gets fresh workers: a cached chunk
    is always computed by the code its key names."""
    key = (workers, code, tuple(sys.path))
    if _POOL.get("key") != key or "pool" not in _POOL or _POOL["pool"]._broken:
        if "pool" in _POOL:
            _POOL.pop("pool").shutdown(wait=True)  # idle between sweeps: its workers exit at once
        if "key" not in _POOL:  # the first pool: registered after multiprocessing's own exit hook, run before it
            atexit.register(_shut_at_exit)
        _POOL.update(key=key, pool=worker_processes(workers))
    return _POOL["pool"]


def close_pool() -> None:
    """Stop the kept pool's workers now (running chunks are dropped) and forget the pool."""
    if "pool" in _POOL:
        stop_workers(_POOL.pop("pool"))


def _shut_at_exit() -> None:
    if "pool" in _POOL:
        _POOL.pop("pool").shutdown(wait=True)


def _picklable(kernel) -> bool:
    """Whether a worker process can be sent `kernel` (a module-level function can; one defined in a test cannot)."""
    import pickle

    try:
        pickle.dumps(kernel)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


def _completed(futures, poll_s: float = 0.5):
    """Futures as they finish: concurrent.futures' own, or anything with done()/result() (submitit jobs)."""
    if all(isinstance(f, Future) for f in futures):
        yield from as_completed(futures)
        return
    pending = list(futures)
    while pending:
        state = [(f, f.done()) for f in pending]
        finished = [f for f, done in state if done]
        pending = [f for f, done in state if not done]
        yield from finished
        if pending and not finished:
            time.sleep(poll_s)


def maps(table: pd.DataFrame, keys, rows: str = "d", columns: str = "signal_norm"):
    """A sweep table as maps: its row values, its column values, and one 2-D array (rows × columns) per metric."""
    wide = table.set_index([rows, columns])[list(keys)].unstack(columns).sort_index()
    column_values = sorted(wide.columns.get_level_values(1).unique())
    return wide.index.to_list(), column_values, {k: wide[k][column_values].to_numpy() for k in keys}
