"""Where the work runs: the compute device, the float type and the number of CPU threads.

Every trainer and notebook resolves these three the same way:
- `device`: "auto" picks cuda, then mps, then cpu; a named device that is not available is a one-line error.
- `dtype`: "float32" or "float64" (mps has no float64).
- `cpu_threads`: torch's intra-op threads on the CPU for a block of work; 0 means the default, which is
  $BENIGN_CPU_THREADS when it is set and torch's own choice (one per core) otherwise.
"""

from __future__ import annotations

import contextlib
import os

import torch

from .checks import ParameterError, check_all

CPU_THREADS_ENV = "BENIGN_CPU_THREADS"


def resolve_device(device: str = "auto") -> torch.device:
    """cuda → mps → cpu for "auto"; otherwise the named device, with a clear error if it is not available."""
    check_all(device=device)
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ParameterError(f"device = {device!r} is not available here: use auto or cpu")
    if device == "mps" and not torch.backends.mps.is_available():
        raise ParameterError("device = 'mps' is not available here: use auto or cpu")
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """The torch float type of a `dtype` name on `device`."""
    check_all(dtype=dtype)
    if dtype == "float64" and device.type == "mps":
        raise ParameterError("dtype = 'float64' is not supported on mps: use float32")
    return getattr(torch, dtype)


def thread_count(cpu_threads: int = 0) -> int:
    """The number of CPU threads `cpu_threads` stands for (0: $BENIGN_CPU_THREADS, else torch's default)."""
    check_all(cpu_threads=cpu_threads)
    if cpu_threads:
        return cpu_threads
    env = os.environ.get(CPU_THREADS_ENV, "").strip()
    if env:
        if not env.isdigit() or int(env) < 1:
            raise ParameterError(f"{CPU_THREADS_ENV} = {env!r} is not allowed: it must be an integer >= 1")
        return int(env)
    return _DEFAULT_THREADS


_DEFAULT_THREADS = torch.get_num_threads()  # torch's choice at import, before anything changed it


@contextlib.contextmanager
def cpu_threads(cpu_threads: int = 0):
    """Run a block with `thread_count(cpu_threads)` CPU threads, and restore the previous number after it."""
    before = torch.get_num_threads()
    torch.set_num_threads(thread_count(cpu_threads))
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
