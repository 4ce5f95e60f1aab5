"""The thread policy of `benign.device`: a block of work takes the cores free of other work, at most the cores it was
given (a dask worker's threads, a SLURM task's CPUs), and a fixed number overrides both."""

import os
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from benign import device, sweep
from benign.checks import ParameterError

CORES = len(os.sched_getaffinity(0))


@pytest.fixture
def policy(monkeypatch):
    """The policy as it is without an override."""
    monkeypatch.delenv(device.CPU_THREADS_ENV, raising=False)
    monkeypatch.delenv("SLURM_CPUS_PER_TASK", raising=False)


@pytest.fixture
def busy_loops():
    """Start `k` single-thread busy loops at this process's priority; stopped after the test."""
    started = []

    def start(k: int):
        started.extend(subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k))
        time.sleep(0.5)  # running, past the interpreter's start-up

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def test_a_fixed_number_overrides_the_policy(policy, monkeypatch):
    assert device.thread_count(1) == 1
    monkeypatch.setenv(device.CPU_THREADS_ENV, "3")
    assert device.thread_count() == 3
    assert device.thread_count(2) == 2  # a number given to the block wins over the environment
    with device.cpu_threads() as threads:
        assert threads == torch.get_num_threads() == 3


def test_a_bad_fixed_number_is_one_line(policy, monkeypatch):
    monkeypatch.setenv(device.CPU_THREADS_ENV, "two")
    with pytest.raises(ParameterError, match="BENIGN_CPU_THREADS = 'two' is not allowed: it must be an integer >= 1"):
        device.thread_count()
    with pytest.raises(ParameterError, match="cpu_threads"):
        device.thread_count(-1)


def test_busy_processes_are_counted_and_take_threads_away(policy, busy_loops):
    """One busy loop per core of this process: every one is seen, and a block gets a single thread."""
    busy_loops(CORES)
    assert device.busy_cores() >= CORES
    assert device.thread_count() == 1
    with device.cpu_threads() as threads:
        assert threads == torch.get_num_threads() == 1


def test_the_threads_never_exceed_the_cores_given(policy, monkeypatch):
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "1")
    assert device.given_cores() == 1
    assert device.thread_count() == 1


def test_a_block_inside_a_block_keeps_its_threads_and_both_restore(policy):
    before = torch.get_num_threads()
    with device.cpu_threads(1):
        with device.cpu_threads() as inner:
            assert inner == torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_side_by_side_runs_each_part_on_one_thread_in_order(policy):
    def part(k):
        with device.cpu_threads() as inner:  # a block inside a part keeps the part's one thread
            return k, torch.get_num_threads(), inner

    with device.cpu_threads(2):
        assert device.side_by_side(part, [0, 1, 2]) == [(0, 1, 1), (1, 1, 1), (2, 1, 1)]
        assert torch.get_num_threads() == 2  # restored after the parts
        with pytest.raises(ZeroDivisionError):
            device.side_by_side(lambda k: 1 / k, [1, 0])
        assert torch.get_num_threads() == 2


def test_independent_parts_take_every_core_given_even_beside_other_work(policy, monkeypatch, busy_loops):
    busy_loops(CORES)
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "3")
    assert device.side_parts(10) == min(3, len(os.sched_getaffinity(0)))
    assert device.side_parts(1) == 1
    monkeypatch.setenv(device.CPU_THREADS_ENV, "4")
    assert device.side_parts(10) == 4 and device.side_parts(2) == 2


def test_the_record_names_the_policy_and_tallies_the_blocks(policy, monkeypatch):
    with device.cpu_threads(1):
        pass
    record = device.thread_record()
    assert record["thread_policy"] == "free cores"
    assert record["blocks_by_threads"]["1"] >= 1 and record["cores_given"] == CORES
    assert record["omp_wait_policy"] == os.environ.get("OMP_WAIT_POLICY", "default")
    monkeypatch.setenv(device.CPU_THREADS_ENV, "1")
    assert device.thread_record()["thread_policy"] == "fixed 1"


KERNEL = '''
import torch
from benign import device

def threads(points):
    """A sweep kernel that reports the torch threads its task ran with and the cores its process was given."""
    return [dict(p, threads=torch.get_num_threads(), given=device.given_cores()) for p in points]
'''


@pytest.fixture
def thread_kernel(tmp_path, monkeypatch):
    """`KERNEL` as a module that worker processes can import."""
    (tmp_path / "thread_kernel.py").write_text(textwrap.dedent(KERNEL))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.syspath_prepend(str(tmp_path))
    import thread_kernel

    return thread_kernel


@pytest.mark.skipif(CORES < 2, reason="needs two cores to share them among workers")
def test_this_machines_worker_processes_each_take_their_share_of_the_cores(policy, thread_kernel):
    """Without an executor a sweep runs in one worker process per core, each given one core and so one thread
    (two workers starting together must not both take every core)."""
    table = sweep.run(thread_kernel.threads, [{"d": d, "seed": 0} for d in (10, 20, 30, 40)])
    assert list(table["given"]) == [1] * 4 and list(table["threads"]) == [1] * 4


@pytest.mark.skipif(CORES < 2, reason="needs two cores to tell a worker's threads from one per core")
def test_a_dask_task_runs_with_its_workers_threads(policy, thread_kernel):
    """Single-thread dask workers on this machine run each task's torch on one thread, not one per core."""
    distributed = pytest.importorskip("distributed")
    points = [{"d": d, "seed": 0} for d in (10, 20, 30, 40)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            table = sweep.run(thread_kernel.threads, points, executor=client.get_executor())
    assert list(table["threads"]) == [1, 1, 1, 1]


def test_stopped_workers_leave_no_thread_that_could_write_to_a_closed_pipe_at_exit():
    """`stop_workers` returns once the pool is wholly ended: its workers and its manager thread, whose wake-up pipe
    `concurrent.futures`' exit hook would otherwise write to while the thread closes it (a "Bad file descriptor"
    traceback after Ctrl-C's one line)."""
    pool = device.worker_processes(1)
    pool.submit(time.sleep, 30)
    manager, processes = pool._executor_manager_thread, list(pool._processes.values())
    device.stop_workers(pool)
    assert not manager.is_alive()
    assert not any(process.is_alive() for process in processes)
