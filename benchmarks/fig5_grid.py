"""The full Figure-5 grid with the batched exact sweep, against the direct computation on sampled grid points.

Fast: 39 × 39 runs (d = 250 … 5000 step 125, ‖μ‖ = 5 … 100 step 2.5), n = 20, T = 8, 1000 GD steps on W and p,
test loss and accuracy at the last step on 1000 test samples per run, float32, no cache. Direct: autograd GD
through (X @ W) @ p, as the authors compute it, timed per step and for one test evaluation at a few sampled d
(the median of a few steps each, after a warm-up step; its cost does not depend on ‖μ‖) and extrapolated to the grid with a fitted a + b·d + c·d²
per-step cost. The last line is `ratio N` = estimated direct time / measured fast time.
Usage: python benchmarks/fig5_grid.py [--device cpu] [--sample-steps 5]
"""

import argparse
import time

import numpy as np
import torch

from benign import data, models, speed, sweep, synthetic
from benign.words import count


def direct_costs(d, steps, device):
    """Seconds per GD step and for one test evaluation of the direct computation at dimension d: the median of
    `steps` steps timed one by one, and the median of three evaluations (a hiccup, such as the machine reclaiming
    the sweep's memory, moves one step, not the estimate), after an untimed warm-up step (a GPU's first kernels
    carry its start-up: 53 ms of a 1.2 ms step, seen on an H100)."""
    run = data.make_run(d, 20.0, seed=0, n=20, n_test=1000, noise_ratio=0.2)
    X, y = run.train.X.float().to(device), run.train.y.float().to(device)
    model = models.TokenSelectionAttention(run.W0.float().to(device), run.train.nu.float().to(device))
    test_X = run.test.X.float().to(device)

    def step():
        gW, gp = torch.autograd.grad(models.logistic_loss(model(X), y), [model.W, model.p])
        with torch.no_grad():
            model.W -= 5e-3 * gW
            model.p -= 5e-3 * gp

    def evaluate():
        with torch.no_grad():
            model(test_X)

    step()
    evaluate()
    return (float(np.median([speed.timed(step, device) for _ in range(steps)])),
            float(np.median([speed.timed(evaluate, device) for _ in range(3)])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sample-steps", type=int, default=5)
    args = parser.parse_args()
    d_values = sweep.arange("d", [250, 5000, 125])
    points = sweep.grid(d=d_values, signal_norm=sweep.arange("signal_norm", [5.0, 100.0, 2.5]), seed=42,
                        device=args.device)
    t0 = time.perf_counter()
    cells = sweep.run(synthetic.grid_chunk, points)
    fast = time.perf_counter() - t0
    print(f"fast: {len(cells)} runs x 1000 steps in {fast:.1f} s ({args.device}, "
          f"{count(torch.get_num_threads(), 'thread')})")

    sample = [250, 1250, 2500, 3750, 5000]
    costs = [direct_costs(d, args.sample_steps, args.device) for d in sample]
    for d, (step, test) in zip(sample, costs):
        print(f"direct at d={d}: {step * 1e3:.1f} ms per step, {test * 1e3:.1f} ms per test evaluation")
    per_run = (1000 * speed.quadratic_in_d(sample, [c[0] for c in costs], d_values) +
               speed.quadratic_in_d(sample, [c[1] for c in costs], d_values))
    direct = 39 * float(per_run.sum())
    print(f"direct, extrapolated: {direct:.0f} s ({direct / 3600:.1f} h) for the grid")
    print(f"ratio {direct / fast:.0f}")


if __name__ == "__main__":
    with speed.recorded("fig5_grid"):  # also saved as results/benchmarks/fig5_grid.json
        main()
