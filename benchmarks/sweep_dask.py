"""The book's dask example (the rerun page) against the same sweep in this process, side by side.

The Figure-5 grid (39 × 39 runs, d = 250 … 5000, ‖μ‖ = 5 … 100, 1000 steps) for `--seeds` seeds, no cache: once
in this process, once on `dask.distributed.LocalCluster(n_workers=--workers, threads_per_worker=1)` as the
rerun page writes it. Every chunk runs under `benign.device`'s thread policy, so a worker's task takes one thread
whatever the machine's cores. Prints both wall times, the threads the tasks ran with, and `ratio N` = in-process / dask.
Usage: python benchmarks/sweep_dask.py [--workers 4] [--seeds 1]
"""

import argparse
import os
import time

from benign import speed, sweep, synthetic


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    from dask.distributed import Client, LocalCluster

    points = sweep.grid(d=sweep.arange("d", [250, 5000, 125]),
                        signal_norm=sweep.arange("signal_norm", [5.0, 100.0, 2.5]), seed=list(range(args.seeds)),
                        num_steps=1000)
    started = time.perf_counter()
    here = sweep.run(synthetic.grid_chunk, points)
    in_process = time.perf_counter() - started
    with Client(LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None)) as client:
        started = time.perf_counter()
        remote = sweep.run(synthetic.grid_chunk, points, executor=client.get_executor())
        on_dask = time.perf_counter() - started
        threads = client.run(lambda: __import__("torch").get_num_threads())  # a worker's own default, for the record
    print(f"{len(points)} runs x 1000 steps on {len(os.sched_getaffinity(0))} cores")
    print(f"in this process: {in_process:.1f} s")
    print(f"dask, {args.workers} workers x 1 thread: {on_dask:.1f} s (workers' torch threads outside a task: "
          f"{sorted(set(threads.values()))})")
    print(f"largest |test loss| difference: {float((here['test_loss'] - remote['test_loss']).abs().max()):.2e}")
    print(f"ratio {in_process / on_dask:.2f}")


if __name__ == "__main__":
    with speed.recorded("sweep_dask"):  # also saved as results/benchmarks/sweep_dask.json
        main()
