"""Figure 5's map over training time with the long-run trainer, against the trainer that keeps every step.

The map is `benign.regimes` through `benign.clock`; the trainer keeping every step, `benign.synthetic.simulate`.

The book profile's long runs of the Figure 5 page: its 7 × 8 cells (d, ‖μ‖), n = 20, T = 8, W and p trained from the
kaiming W₀, α = 5e-3, 1000 test samples, float32, 10⁵ steps; every switch of every training and test condition exact
(so the regime at any step). The long runs are timed twice, at a tenth of the steps and at all of them: the
process's peak memory after each shows that it does not grow with the steps. The reference keeps everything, as
`simulate` does (the scores of every step, the test metrics at every step: the same information the switches need),
one d at a time (its test inputs take n_test·T·d numbers per run); it is timed on its first `--reference-steps`
steps and extrapolated linearly (its cost per step is constant), and the two are checked against each other on those
steps. Last line: `ratio N` = reference time (extrapolated) / long-run time.
Usage: python benchmarks/regime_map_long.py [--profile book] [--reference-steps 200] [--device cpu]
"""

import argparse
import resource
import time

import numpy as np
import torch

from benign import clock, data, notebooks, regimes, speed, synthetic
from benign.words import count


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="book")
    parser.add_argument("--reference-steps", type=int, default=200)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    p = notebooks.resolve("fig5_heatmap", args.profile)
    steps = p["num_steps_long"]
    fixed = {k: p[k] for k in ("seed", "n", "n_test", "T", "rho", "noise_ratio", "learning_rate", "label_noise",
                               "authors_test_seed", "dtype", "history_points", "block")}
    points = regimes.points(p["d_values_long"], p["signal_norm_values_long"], p["snapshot_steps"], num_steps=steps,
                            test_threshold=p["test_threshold"], device=args.device, **fixed)

    def long_runs(num_steps):
        t0 = time.perf_counter()
        rows = clock.grid_chunk([dict(q, num_steps=num_steps) for q in points])
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        return rows, time.perf_counter() - t0

    _, tenth = long_runs(steps // 10)
    peak_tenth = peak_mb()
    _, fast = long_runs(steps)
    peak_all = peak_mb()

    short, _ = long_runs(args.reference_steps)
    slow = worst = 0.0
    for d in p["d_values_long"]:  # one d at a time: the reference holds every run's test inputs (n_test × T × d)
        group = [(q, row) for q, row in zip(points, short) if q["d"] == d]
        runs = [data.make_run(d, q["signal_norm"], seed=q["seed"], n=q["n"], n_test=q["n_test"],
                              noise_ratio=q["noise_ratio"], W_init="kaiming", label=f"r{i}")
                for i, (q, _) in enumerate(group)]
        t0 = time.perf_counter()
        sim = synthetic.simulate(runs, learning_rate=p["learning_rate"], num_steps=args.reference_steps, log_every=1,
                                 train_W=True, dtype=p["dtype"], device=args.device)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        slow += (time.perf_counter() - t0) * steps / args.reference_steps
        for i, (_, row) in enumerate(group):
            ref = sim.history[sim.history.run == f"r{i}"].set_index("step").loc[row["history"]["step"]]
            for key in ("train_loss", "test_loss"):
                worst = max(worst, float(np.max(np.abs(np.array(row["history"][key]) - ref[key].to_numpy())
                                                / np.abs(ref[key].to_numpy()))))
    n, T = p["n"], p["T"]
    scores_gb = (steps + 1) * len(points) * n * T * 4 / 1e9  # float32 scores (n, T) per run and step

    print(f"config: {len(points)} runs ({len(p['d_values_long'])} d x {len(p['signal_norm_values_long'])} signal "
          f"norms, profile {args.profile}), n={n}, T={T}, W and p (kaiming W0), alpha={p['learning_rate']}, {steps} "
          f"steps, {p['n_test']} test samples, {p['dtype']}, {args.device}, {count(torch.get_num_threads(), 'thread')}")
    print(f"long runs: {fast:.1f} s for {steps} steps ({fast / steps / len(points) * 1e6:.1f} µs per run-step), "
          f"{tenth:.1f} s for {steps // 10}; peak RSS {peak_tenth:.0f} MB after {steps // 10} steps, {peak_all:.0f} MB "
          f"after {steps}")
    print(f"memory-bound path (simulate, test every step): {slow:.1f} s extrapolated from {args.reference_steps} "
          f"steps; its scores alone would take {scores_gb:.1f} GB at {steps} steps")
    print(f"agreement on the first {args.reference_steps} steps (history, {p['dtype']}): max relative difference "
          f"{worst:.1e}")
    print(f"ratio {slow / fast:.1f}")


if __name__ == "__main__":
    with speed.recorded("regime_map_long"):  # also saved as results/benchmarks/regime_map_long.json
        main()
