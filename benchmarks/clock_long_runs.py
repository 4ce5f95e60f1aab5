"""The long-run trainer, which keeps only a log-spaced history, against the trainer that keeps every step, side by side.

The long-run mode is `benign.clock`; the trainer keeping every step, `benign.synthetic.simulate`.

40 runs × 10⁶ gradient-descent steps of the analysed model (p only, W = I), n = 20, T = 8, d = 2000, 4 seeds × 10
signal norms, α = 5e-3, 1000 test samples, float64: every step's training events and test error (< δ) exact, and a
log-spaced history. The reference keeps everything, as `simulate` does: the scores of every step and the test
metrics at every step (the same information the events need); at 10⁶ steps that is 51 GB of scores, so it is timed
on its first `--reference-steps` steps and extrapolated linearly (its cost per step is constant), and the two are
checked against each other on those steps. Last line: `ratio N` = reference time (extrapolated) / long-run time.

Where the time goes (measured on the 2-core CPU under load): a step is ~17 small tensor operations on all runs at
once, of which one batched product with the shared Gram matrices (4 groups of 10 runs) is the largest (≈ 1/3);
the rest is per-operation overhead, so more runs per batch cost little extra. Per-run Gram matrices instead of
shared ones make that product 10× slower (memory-bound); torch.softmax over T = 8 scores is ≈ 3.5× slower than the
written-out softmax; torch.compile of the elementwise part was 3× slower than eager, after a 10–50 s compile.
Usage: python benchmarks/clock_long_runs.py [--steps 1000000] [--reference-steps 2000] [--device cpu]
"""

import argparse
import resource
import time

import numpy as np
import torch

from benign import clock, data, speed, sweep, synthetic
from benign.words import count

SEEDS = [0, 1, 2, 3]
SIGNAL_NORMS = [4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0]
SETTING = dict(d=2000, n=20, T=8, n_test=1000, noise_ratio=0.2, learning_rate=5e-3, W_init="identity", train_W=False,
               dtype="float64", delta=0.01, history_points=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--reference-steps", type=int, default=2000)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    points = sweep.grid(seed=SEEDS, signal_norm=SIGNAL_NORMS, device=args.device, **SETTING)

    t0 = time.perf_counter()
    clock.grid_chunk([dict(p, num_steps=args.steps) for p in points])
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    fast = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    short = clock.grid_chunk([dict(p, num_steps=args.reference_steps) for p in points])
    runs = [data.make_run(p["d"], p["signal_norm"], seed=p["seed"], n=p["n"], n_test=p["n_test"],
                          noise_ratio=p["noise_ratio"], W_init=p["W_init"], label=f"r{i}") for i, p in enumerate(points)]
    t0 = time.perf_counter()
    sim = synthetic.simulate(runs, learning_rate=SETTING["learning_rate"], num_steps=args.reference_steps, log_every=1,
                             train_W=SETTING["train_W"], dtype=SETTING["dtype"], device=args.device)
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    slow = (time.perf_counter() - t0) * args.steps / args.reference_steps
    worst = 0.0
    for i, row in enumerate(short):
        ref = sim.history[sim.history.run == f"r{i}"].set_index("step").loc[row["history"]["step"]]
        for key in ("train_loss", "test_loss", "score_clean_relevant"):
            worst = max(worst, float(np.max(np.abs(np.array(row["history"][key]) - ref[key].to_numpy())
                                            / np.abs(ref[key].to_numpy()))))
    scores_gb = (args.steps + 1) * len(runs) * SETTING["n"] * SETTING["T"] * 8 / 1e9  # float64 scores (n, T) per run

    print(f"config: {len(points)} runs (d=2000, 4 seeds x 10 signal norms), n=20, T=8, p only (W = I), alpha=5e-3, "
          f"{args.steps} steps, 1000 test samples, float64, {args.device}, {count(torch.get_num_threads(), 'thread')}")
    print(f"long-run mode: {fast:.1f} s ({fast / args.steps * 1e6:.0f} µs per step for all runs), "
          f"peak RSS {peak_mb:.0f} MB")
    print(f"memory-bound path (simulate, test every step): {slow:.1f} s extrapolated from {args.reference_steps} "
          f"steps; its scores alone would take {scores_gb:.0f} GB at {args.steps} steps")
    print(f"agreement on the first {args.reference_steps} steps (history, float64): max relative difference "
          f"{worst:.1e}")
    print(f"ratio {slow / fast:.1f}")


if __name__ == "__main__":
    with speed.recorded("clock_long_runs"):  # also saved as results/benchmarks/clock_long_runs.json
        main()
