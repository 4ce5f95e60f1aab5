"""Paper 2's fast exact trainer against a faithful per-sample loop, side by side in one process.

1. The seed notebook's setting, fast path: n = 200, d = 40000, ρ = 30, η = 0.05, two steps β = (0.01, 1), plus a
   clean test set of 1000 inputs; data generation included; float32, best of 3. Then the per-sample loop's
   training alone on the same (projected) training data, to show where the seed's time goes.
2. At --d-loop (default 2000), both implementations from data generation to the two trained vectors, training
   set only (the seed has no test set): the fast path (`benign.paper2`), and the seed notebook's structure with
   correct gradients — a d × d covariance with `multivariate_normal` for the noise (12.8 GB at d = 40000), the
   p-gradient accumulated in a Python loop over samples (numpy, float64). The loop's v and p are checked against
   the fast path's on the same data.
Without `--sweep` the last line is `ratio N` = loop time / fast time at `--d-loop`, data generation included.
3. With --sweep: one seed of the SNR map's book grid (n = 50 … 1600, ρ from 2 to 256 in steps of 2^(1/8), d = 40000,
   500 test inputs), as `snr_sweep` runs it (one draw at the largest n, smaller n on its first inputs and Gram
   blocks) against one `snr_sweep` per n (a draw and Gram matrices per n), and whether the two find the same edge.
Usage: python benchmarks/paper2.py [--d-loop 2000] [--device cpu] [--sweep]
"""

import argparse
import time

import numpy as np
import pandas as pd
import torch

from benign import paper2, paper2_edge, speed
from benign.words import count

N, RHO, ETA, BETA = 200, 30.0, 0.05, [0.01, 1.0]


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def seed_style_data(n, d, rho, eta, seed=0):
    """The seed notebook's generate_data: μ± by Gram–Schmidt, noise from a d × d covariance."""
    rng = np.random.RandomState(seed)
    mu1 = rng.randn(d)
    mu1 = mu1 / np.linalg.norm(mu1) * rho
    mu2 = rng.randn(d)
    mu2 -= mu2 @ mu1 / np.linalg.norm(mu1) ** 2 * mu1
    mu2 = mu2 / np.linalg.norm(mu2) * rho
    y = rng.choice([+1, -1], size=n)
    covariance = np.eye(d) - (np.outer(mu1, mu1) + np.outer(mu2, mu2)) / rho ** 2
    noise = rng.multivariate_normal(np.zeros(d), covariance, size=n)
    X = np.zeros((n, 2, d))
    first = rng.choice([0, 1], size=n)
    X[np.arange(n), first] = np.where(y[:, None] == 1, mu1, mu2)
    X[np.arange(n), 1 - first] = noise
    return X, np.where(rng.rand(n) < eta, -y, y).astype(float)


def loop_train(X, y, beta):
    """The seed's train_model / compute_gradients with the correct p-gradient:
    ∂L/∂p = −(1/n) Σᵢ σ(−yᵢfᵢ) yᵢ Xᵢᵀ(diag sᵢ − sᵢsᵢᵀ)Xᵢ v, accumulated sample by sample."""
    n, _, d = X.shape
    v, p = np.zeros(d), np.zeros(d)
    for step_size in beta:
        r = np.einsum("ij,ijk->ik", softmax(X @ p), X)
        sigmoid = 1 / (1 + np.exp(-y * (r @ v)))
        grad_v = -np.dot((1 - sigmoid) * y, r) / n
        grad_p = np.zeros(d)
        for i in range(n):
            s = softmax(X[i] @ p)
            h = X[i] @ v
            grad_p -= (1 - sigmoid[i]) * y[i] * ((s * (h - s @ h)) @ X[i])
        v, p = v - step_size * grad_v, p - step_size * grad_p / n
    return v, p


def fast(d, n_test, device, dtype):
    """Data generation and two GD steps through benign.paper2; returns (seconds, simulation)."""
    t0 = time.perf_counter()
    if n_test:
        train, test = paper2.make_train_test(N, d, RHO, noise_ratio=ETA, n_test=n_test, seed=0)
    else:
        train, test = paper2.make_data(N, d, RHO, noise_ratio=ETA, seed=0), None
    sim = paper2.simulate([paper2.Run(train, test, BETA)], dtype=dtype, device=device)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t0, sim


def sweep(device):
    """Part 3: the SNR map's sweep, one draw sliced per n against a draw per n."""
    n_values, rho = [50, 100, 200, 400, 800, 1600], paper2.signal_norm_grid(2.0, 256.0, 8)
    fixed = dict(d=40000, noise_ratio=ETA, step_size_factors=[2.0, 200.0], n_test=500, device=device)
    t0 = time.perf_counter()
    sliced = paper2.snr_sweep(n_values, rho, **fixed)
    sliced_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    per_n = pd.concat([paper2.snr_sweep([n], rho, **fixed) for n in n_values], ignore_index=True)
    per_n_s = time.perf_counter() - t0
    same = paper2_edge.benign_edge(sliced).signal_norm.tolist() == paper2_edge.benign_edge(per_n).signal_norm.tolist()
    print(f"SNR map, one seed, {len(n_values)} n x {len(rho)} rho, {device}: one draw sliced {sliced_s:.1f} s, a draw "
          f"per n {per_n_s:.1f} s; same edge: {'yes' if same else 'no'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-loop", type=int, default=2000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sweep", action="store_true", help="also time the SNR map's sweep (part 3)")
    args = parser.parse_args()

    fast(2000, 100, args.device, "float32")  # warm-up
    seed_times = []
    for _ in range(3):
        seconds, sim = fast(40000, 1000, args.device, "float32")
        seed_times.append(seconds)
    final = sim.final.iloc[0]
    print(f"seed setting n={N} d=40000 rho={RHO:g} eta={ETA} beta={BETA} + 1000 test inputs, float32, {args.device}, "
          f"{count(torch.get_num_threads(), 'thread')}")
    print(f"fast, data + training: {min(seed_times):.3f} s (best of 3; trainer alone {sim.info['wall_s']:.3f} s), "
          f"train acc {final.train_acc:.3f}, test acc {final.test_acc:.3f}")
    train = sim.train[0]
    t0 = time.perf_counter()
    loop_train(train.inputs().numpy(), train.y.numpy(), BETA)
    print(f"per-sample loop, training alone on the same training data: {time.perf_counter() - t0:.3f} s "
          "(its d x d covariance would need 12.8 GB)")

    d = args.d_loop
    fast_s = min(fast(d, 0, args.device, "float64")[0] for _ in range(3))
    _, sim = fast(d, 0, "cpu", "float64")
    t0 = time.perf_counter()
    seed_style_data(N, d, RHO, ETA)
    data_s = time.perf_counter() - t0
    X, y = sim.train[0].inputs().numpy(), sim.train[0].y.numpy()
    t0 = time.perf_counter()
    v, p = loop_train(X, y, BETA)
    train_s = time.perf_counter() - t0
    v_fast, p_fast = (w.numpy() for w in sim.weights(0))
    agree = max(np.linalg.norm(v - v_fast) / np.linalg.norm(v), np.linalg.norm(p - p_fast) / np.linalg.norm(p))
    print(f"d={d}, training set only, float64: fast {fast_s:.4f} s (best of 3); per-sample loop "
          f"{data_s + train_s:.3f} s (d x d covariance data {data_s:.3f} s + loop training {train_s:.3f} s)")
    print(f"relative difference of v and p, loop vs fast on the same data: {agree:.1e}")
    print(f"ratio {(data_s + train_s) / fast_s:.0f}")
    if args.sweep:
        sweep(args.device)


if __name__ == "__main__":
    with speed.recorded("paper2"):  # also saved as results/benchmarks/paper2.json
        main()
