"""The batched encoder trainer against plain autograd on the same runs one at a time, and a paper-scale GPU estimate.

Runs: 16 encoder runs at d = 500 (‖μ‖ = 5, 7.5, …, 42.5, seed 0), n = 20, T = 8, η = 0.2, hidden 2000 (the
paper's), α = 5e-3, `--steps` SGD steps on every parameter, test loss and accuracy at the first and last step on
`--n-test` clean samples, float32. Three ways, timed on the same runs:
  batched    `benign.encoder.simulate` on all 16 runs at once (vmap over runs of the [CLS]-path gradient);
  one by one the same trainer called on each run alone (what batching alone buys);
  literal    plain autograd SGD on `benign.models.OneLayerEncoder`, one run after the other (the obvious loop).
The last line is `ratio N` = the literal computation's wall time, one run at a time, over the batched one.

`--estimate` adds the paper-scale estimate for one GPU (39 × 39 grid, d = 250 … 5000, hidden 2000, 1000 steps,
one 1000-sample test evaluation per run): matmul FLOPs per SGD step counted with torch's FlopCounterMode at three
d and fitted exactly by a quadratic in d, weight traffic from the parameter count, and the time under the stated
sustained rates. It is an estimate, not a measurement.
`--threads` (default 1) sets torch's CPU threads: on a shared 2-core machine two threads contend with other work
and the timings swing several-fold between runs.
Usage: python benchmarks/encoder_batched.py [--steps 20] [--n-test 100] [--device cpu] [--threads 1] [--estimate]
"""

import argparse

import numpy as np
import torch
from torch.func import grad_and_value, vmap
from torch.utils.flop_counter import FlopCounterMode

from benign import data, encoder, models, speed, sweep
from benign.words import count

D, HIDDEN, N = 500, 2000, 20
H100 = {"flops": 30e12, "bytes": 2.5e12}  # assumed sustained float32 matmul rate and memory bandwidth on one H100


def literal_loop(runs, steps, lr, device):
    for run in runs:
        model = models.OneLayerEncoder(D, HIDDEN).to(device)
        model.load_state_dict(encoder.initial_parameters(D, HIDDEN, run.train.params["seed"]))
        X, y = run.train.X.float().to(device), run.train.y.float().to(device)
        Xt, yt = run.test.X.float().to(device), run.test.y.float().to(device)
        with torch.no_grad():
            models.logistic_loss(model(Xt), yt)
        models.train_autograd(model, X, y, learning_rate=lr, num_steps=steps)
        with torch.no_grad():
            models.logistic_loss(model(Xt), yt)


def step_flops(d, hidden, runs=2):
    """Matmul FLOPs of one batched SGD step per run, and of one test forward per sample, at dimension d."""
    params = encoder.repeat_parameters(encoder.initial_parameters(d, hidden, 0), runs, "cpu", torch.float32)
    X, y = torch.randn(runs, N, 8, d), torch.ones(runs, N)
    step = vmap(grad_and_value(encoder.training_loss, has_aux=True), in_dims=(0, 0, 0, None))
    with FlopCounterMode(display=False) as train:
        step(params, X, y, True)
    with FlopCounterMode(display=False) as test, torch.no_grad():
        encoder.cls_forward({k: v[0] for k, v in params.items()}, X[0], True)
    return train.get_total_flops() / runs, test.get_total_flops() / N


def estimate(hidden=HIDDEN, steps=1000, n_test=1000):
    """Seconds for the paper's 39 × 39 grid on one H100 under the assumed rates (FLOPs and weight traffic)."""
    sample = np.array([100, 200, 300])
    counts = np.array([step_flops(int(d), hidden) for d in sample])
    train_fit = np.polyfit(sample, counts[:, 0], 2)
    test_fit = np.polyfit(sample, counts[:, 1], 2)
    d = np.array(sweep.arange("d_grid", [250, 5000, 125]), dtype=float)
    runs_per_d = 39
    flops = runs_per_d * (steps * np.polyval(train_fit, d) + n_test * np.polyval(test_fit, d))
    weights = 3 * d * d + 2 * d * hidden + hidden + 8 * d + 1  # parameters per run
    # per step each weight is read twice (forward, backward) and its gradient written, then SGD reads both and
    # writes the weight: about 6 float32 passes
    traffic = runs_per_d * steps * 6 * 4 * weights
    return {"flops": float(flops.sum()), "bytes": float(traffic.sum()),
            "flops_per_step_d5000": float(np.polyval(train_fit, 5000)),
            "seconds_flops": float(flops.sum() / H100["flops"]), "seconds_bytes": float(traffic.sum() / H100["bytes"])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--n-test", type=int, default=100)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--estimate", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    runs = [data.make_run(D, 5.0 + 2.5 * i, seed=0, n=N, n_test=args.n_test, noise_ratio=0.2, W_init="identity",
                               label=f"mu{5.0 + 2.5 * i:g}") for i in range(16)]
    kwargs = dict(hidden=HIDDEN, num_steps=args.steps, log_every=args.steps, device=args.device)
    encoder.simulate(runs[:1], **{**kwargs, "num_steps": 1})  # warm-up
    batched = speed.timed(lambda: encoder.simulate(runs, **kwargs), args.device)
    one_by_one = speed.timed(lambda: [encoder.simulate([run], **kwargs) for run in runs], args.device)
    literal = speed.timed(lambda: literal_loop(runs, args.steps, 5e-3, args.device), args.device)
    print(f"{len(runs)} runs, d={D}, hidden={HIDDEN}, {args.steps} steps, {args.device}, "
          f"{count(torch.get_num_threads(), 'thread')}")
    print(f"batched:    {batched:.2f} s")
    print(f"one by one: {one_by_one:.2f} s (same trainer; batching alone: {one_by_one / batched:.2f}x)")
    print(f"literal:    {literal:.2f} s (autograd on the module, one run at a time)")
    if args.estimate:
        est = estimate()
        print(f"paper grid on one H100 (ESTIMATE): {est['flops'] / 1e15:.2f} PFLOP of matmuls "
              f"({est['flops_per_step_d5000'] / 1e9:.2f} GFLOP per run-step at d=5000) -> "
              f"{est['seconds_flops'] / 60:.1f} min at {H100['flops'] / 1e12:g} TFLOP/s; "
              f"{est['bytes'] / 1e12:.0f} TB of weight traffic -> {est['seconds_bytes'] / 60:.1f} min at "
              f"{H100['bytes'] / 1e12:g} TB/s; sum {(est['seconds_flops'] + est['seconds_bytes']) / 60:.1f} min")
    print(f"ratio {literal / batched:.2f}")


if __name__ == "__main__":
    with speed.recorded("encoder_batched"):  # also saved as results/benchmarks/encoder_batched.json
        main()
