"""Where the work runs: the compute device, the float type and the number of CPU threads.

Every trainer and notebook resolves these three the same way:
- `device`: "auto" picks cuda, then mps, then cpu; a named device that is not available is a one-line error.
- `dtype`: "float32" or "float64" (mps has no float64).
- `cpu_threads`: torch's intra-op threads on the CPU for a block of work. A number fixes them
  ($BENIGN_CPU_THREADS fixes them for every block that is given none); 0 means the thread policy below.

The thread policy, chosen by measurement (`benchmarks/under_load.py`, its record on the book's Speed page): torch's
threads wait for each other at every parallel region, so one of them sharing its core with another program stalls
them all — two threads beside one busy process made the Figure-5 grid 3.4× slower than idle, one thread 1.2×. So
every block of work (a trainer call, a sweep chunk, a notebook's start) takes as many threads as there are cores
free of other work when it starts, and never more than the cores it was given: inside a dask task its worker's
threads shared among the tasks it runs at once, in a SLURM task its CPUs, else the process's CPU affinity. Idle that
is every core (two threads are 1.1–1.4× faster than one here); beside other work, fewer. "Other work" is every
runnable thread of another process, `nice`d ones included: two threads beside a nice-19 job made the Figure-3 run
3–11× slower (their barriers wait whenever the job gets its slice). OpenMP's wait policy is left at its default:
PASSIVE made two threads 2.3–2.9× slower idle on the trainers' small products. Work made of independent pieces (a
sweep's chunks, the encoder's runs) is split instead: one part per core given, each on one thread, in worker
processes (`sweep.local_processes`, each told its share of the cores) or Python threads (`side_by_side`) — parts
with no barrier between them lose only their own share of a core to other work, so they take every core given even
when other work holds some. Each process tallies the threads its blocks ran with, and every notebook's metrics.json
records them (`thread_record`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

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


def runs_that_fit(bytes_per_run: float, device: torch.device, runs: int) -> int:
    """How many of `runs` runs, each needing `bytes_per_run` bytes of device memory, one batch may hold: on a CUDA
    device as many as 90 % of its free memory holds (at least one), elsewhere all of them (the caller sized them).
    Free is what the driver has free and what torch's allocator keeps for reuse (reserved, not allocated): a batch
    just finished leaves its memory there, not with the driver."""
    if device.type != "cuda":
        return runs
    free, _ = torch.cuda.mem_get_info(device)
    free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return max(1, min(runs, int(0.9 * free // bytes_per_run)))


def thread_count(cpu_threads: int = 0) -> int:
    """The CPU threads for a block of work: `cpu_threads` when > 0, else $BENIGN_CPU_THREADS when set, else the
    policy: the cores free of other work right now, at least 1 and at most `given_cores()`."""
    check_all(cpu_threads=cpu_threads)
    fixed = cpu_threads or fixed_threads()
    if fixed:
        return fixed
    return max(1, min(given_cores(), len(_affinity()) - busy_cores()))


def fixed_threads() -> int:
    """$BENIGN_CPU_THREADS as a number (0 when unset)."""
    env = os.environ.get(CPU_THREADS_ENV, "").strip()
    if not env:
        return 0
    if not env.isdigit() or int(env) < 1:
        raise ParameterError(f"{CPU_THREADS_ENV} = {env!r} is not allowed: it must be an integer >= 1")
    return int(env)


_GIVEN: dict = {}  # the cores a worker process of a pool on this machine was given (`give_cores`)


def give_cores(cores: int) -> None:
    """Tell this process it was given `cores` cores (a pool of worker processes shares the machine's cores)."""
    _GIVEN["cores"] = max(1, cores)


def worker_processes(workers: int):
    """A pool of `workers` Python processes on this machine, each told its share of the cores given (`give_cores`),
    spawned, not forked: a process that holds torch's threads must not be forked. Its workers ignore Ctrl-C
    (`start_worker`): the process that owns the pool stops them (`stop_workers`)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=start_worker,
                               initargs=(given_cores() // workers,))


def start_worker(cores: int) -> None:
    """What a worker process does first: take its share of the cores, and leave SIGINT to its owner. Ctrl-C in a
    terminal reaches every process of the foreground group, and a kernel's interrupt (papermill's before every
    shutdown) its whole process group: a worker that took it would print a KeyboardInterrupt traceback for work its
    owner stops anyway."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    give_cores(cores)


def stop_workers(pool) -> None:
    """Stop a `worker_processes` pool now: work not started is dropped and running work is killed (a worker's
    unfinished chunk or run is lost, nothing it finished). `shutdown` alone waits for every running task.

    It returns once the pool's manager thread has ended (or after waiting 5 s for it, and for each worker): one still
    ending when Python exits can close its wake-up pipe while `concurrent.futures`' exit hook writes to it, an
    "Exception ignored … Bad file descriptor" traceback on stderr after the one-line message (Python 3.11, 1 exit in
    many)."""
    manager = getattr(pool, "_executor_manager_thread", None)  # no public handle before 3.14
    if hasattr(pool, "terminate_workers"):  # Python 3.14
        pool.terminate_workers()
    else:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=5)
    if manager is not None:
        manager.join(timeout=5)


def given_cores() -> int:
    """The cores this block of work was given: a pool worker's share (`give_cores`), inside a dask task its
    worker's threads shared among the tasks it is running, in a SLURM task its CPUs, else this process's CPU
    affinity."""
    if _GIVEN:
        return _GIVEN["cores"]
    if "distributed" in sys.modules:
        from distributed import get_worker

        try:
            state = get_worker().state
        except ValueError:  # not inside a dask worker
            pass
        else:
            return max(1, state.nthreads // max(1, len(state.executing)))
    slurm = os.environ.get("SLURM_CPUS_PER_TASK", "")
    if slurm.isdigit() and int(slurm) > 0:
        return min(int(slurm), len(_affinity()))
    return len(_affinity())


def _affinity() -> set:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))


def busy_cores(samples: int = 3, gap_s: float = 0.002) -> int:
    """How many cores other work keeps busy now: the runnable threads of other processes (their
    /proc/<pid>/task/<tid>/stat), the median of `samples` looks `gap_s` apart. 0 without /proc."""
    if not os.path.isdir("/proc/self/task"):
        return 0
    counts = []
    for k in range(samples):
        if k:
            time.sleep(gap_s)
        counts.append(_others_running())
    return sorted(counts)[len(counts) // 2]


def _others_running() -> int:
    me = str(os.getpid())
    running = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:  # the process ended meanwhile
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            after_name = stat.rindex(b")") + 2  # the state follows the process's name in parentheses
            running += stat[after_name:after_name + 1] == b"R"
    return running


_USED = Counter()  # threads → blocks of work that ran with them, in this process
_inside = threading.local()  # the thread count of the block this Python thread is in, if any


@contextlib.contextmanager
def cpu_threads(cpu_threads: int = 0):
    """Run a block with `thread_count(cpu_threads)` CPU threads and restore the previous number after it. A block
    given no number inside another block keeps the outer block's threads (a trainer called by a sweep kernel)."""
    outer = getattr(_inside, "threads", None)
    before = torch.get_num_threads()
    threads = outer if outer and not cpu_threads else thread_count(cpu_threads)
    if outer is None:
        count_block(threads)
    torch.set_num_threads(threads)
    _inside.threads = threads
    try:
        yield threads
    finally:
        _inside.threads = outer
        torch.set_num_threads(before)


def side_parts(count: int) -> int:
    """How many parts `count` independent pieces of work run in side by side (`side_by_side`): one per core given,
    or per fixed thread ($BENIGN_CPU_THREADS), whether or not other work holds the cores: parts on one thread each
    have no barrier to stall at, so other work costs each of them only its own share of a core."""
    return max(1, min(count, fixed_threads() or given_cores()))


def side_by_side(fn, parts: list) -> list:
    """`fn(part)` for every part, each in a Python thread of its own running torch on one thread, in order.

    torch lets go of Python's lock inside its kernels, so the parts run on separate cores with no barrier between
    them: beside other work each part loses only its own share of a core, where one program on as many threads
    stalls at every parallel region (the encoder's 16-run benchmark beside two busy processes: 2.2× its idle time
    split in two, 3.3× on one thread; idle the split is also the faster of the two). A part's own blocks of work keep
    its one thread."""
    if len(parts) == 1:
        return [fn(parts[0])]
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # a new thread takes torch's number of threads from here at its first parallel region

    def one(part):
        _inside.threads = 1
        return fn(part)

    try:
        with ThreadPoolExecutor(len(parts)) as pool:  # fresh threads: each reads the one-thread setting
            return list(pool.map(one, parts))
    finally:
        torch.set_num_threads(before)


def count_block(threads: int) -> None:
    """Tally a block of work that ran elsewhere (a sweep's worker process) with `threads` threads."""
    _USED[threads] += 1


def with_cpu_threads(fn):
    """`fn` run as a block of work under the thread policy (`cpu_threads()`), unless a block is already running."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with cpu_threads():
            return fn(*args, **kwargs)
    return wrapper


def thread_record() -> dict:
    """What metrics.json records of the threads: the policy, the cores given, the blocks run per thread count and
    OpenMP's wait policy."""
    fixed = fixed_threads()
    return {"thread_policy": f"fixed {fixed}" if fixed else "free cores",
            "cores_given": given_cores(), "blocks_by_threads": {str(k): v for k, v in sorted(_USED.items())},
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default")}
