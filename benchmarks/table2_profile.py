"""Table 2's book profile from empty caches: each part's time beside its counted work and the least time it can take.

Computes every run of Table 2 at the `book` profile as its notebook does (`runs.runs_from`: the rows side by side in
worker processes, one thread each) in a new, empty cache, so the image backbone is pre-trained and every row's frozen
layers, phase 1, phase 2, evaluation and reach diagnostic are computed. Prints the wall time and the CPU time, then
the split the runs' records give (`report.time_split`): per data set and part, the seconds of the thread that
computed it, the counted work (FLOPs: the frozen layers, the head's steps, phase 2's training steps) and its floor on
this machine, the work at this machine's one-thread sgemm rate (a 1024³ product) over the cores. Last, `ratio N`:
the wall time over the floor of the whole (the counted work over all cores at the sgemm rate) — how far the build
is from its counted floor, the reference it is measured against.
Usage: python benchmarks/table2_profile.py [--cache DIR] [--processes 2]  (DIR kept; default a temporary folder,
removed afterwards)
"""

import argparse
import os
import resource
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from benign import notebooks, paths, speed  # noqa: E402
from benign.realdata import report, runs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", help="cache folder, kept (default: a new temporary one, removed afterwards)")
    parser.add_argument("--processes", type=int, default=0, help="worker processes (default: the book profile's)")
    args = parser.parse_args()
    if args.cache:
        profile(args.cache, args.processes, f"the cache {args.cache}")
    else:  # a new, empty cache, removed afterwards (on Ctrl-C too)
        with tempfile.TemporaryDirectory(prefix="table2-profile-") as folder:
            profile(folder, args.processes, "a new, empty cache")


def profile(cache: str, processes: int, said: str) -> None:
    """Table 2's runs computed into the cache folder `cache` (`said`: it in words, for the printout), timed, and the
    split printed."""
    os.environ[paths.CACHE_ENV] = cache
    parameters = notebooks.resolve("table2_finetune", "book", {"processes": processes} if processes else {})
    cores = min(parameters["processes"], len(os.sched_getaffinity(0)))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    rate = speed.gemm_rate(1024, 1024, 1024, 10)  # on one thread, as each worker computes
    torch.set_num_threads(threads)
    started, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime + time.process_time()
    _, tasks, grid = runs.runs_from(parameters)
    wall = time.perf_counter() - started
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime + time.process_time() - cpu
    split = report.time_split(grid, tasks)
    split["floor (s)"] = split["counted work (GFLOP)"] / rate
    per_process = parameters["cpu_threads"] or "the thread policy's"
    print(f"Table 2, book profile, {said}: {len(grid)} runs in {wall:.1f} s wall, "
          f"{cpu:.1f} s CPU ({parameters['processes']} processes, threads per process: {per_process}); "
          f"sgemm {rate:.1f} GFLOP/s on one thread")
    print(split.round(2).to_string(index=False))
    work, seconds = split["counted work (GFLOP)"].sum(), split["time (s)"].sum()
    floor = work / (rate * cores)
    print(f"all parts: {seconds:.1f} thread-seconds, {work:.0f} GFLOP counted, floor {floor:.1f} s on {cores} "
          f"cores; counted parts {split.dropna()['time (s)'].sum():.1f} s against their floor "
          f"{split['floor (s)'].sum():.1f} s")
    print(f"ratio {wall / floor:.2f}")


if __name__ == "__main__":
    with speed.recorded("table2_profile"):  # also saved as results/benchmarks/table2_profile.json
        main()
