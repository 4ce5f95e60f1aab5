"""The fast exact trainer against the direct autograd computation through (X @ W) @ p, side by side in one process.

Default Figure-3 configuration: d = 2000, n = 20, T = 8, ρ = 0.1, η = 0.2, α = 5e-3, 1000 steps, test evaluation
every 10 steps on 1000 test samples, float32, CPU. Both start from the same data and W₀; the last line is
`ratio N` = direct time / fast time. Usage: python benchmarks/fast_trainer.py [--steps 1000] [--device cpu]
"""

import argparse
import time

import torch

from benign import data, models, speed, synthetic
from benign.words import count


def direct(run, steps, log_every, lr, device, dtype):
    """What the authors' script computes: autograd GD on W and p, test metrics every `log_every` steps."""
    X, y = run.train.X.to(device, dtype), run.train.y.to(device, dtype)
    Xt, yt = run.test.X.to(device, dtype), run.test.y.to(device, dtype)
    model = models.TokenSelectionAttention(run.W0.to(device, dtype), run.train.nu.to(device, dtype))
    test_acc = None
    for step in range(steps + 1):
        if step % log_every == 0 or step == steps:
            with torch.no_grad():
                test_acc = float((model(Xt) * yt > 0).double().mean())
        if step == steps:
            break
        loss = models.logistic_loss(model(X), y)
        gW, gp = torch.autograd.grad(loss, [model.W, model.p])
        with torch.no_grad():
            model.W -= lr * gW
            model.p -= lr * gp
    return (model.W @ model.p).detach(), test_acc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(torch.get_num_threads())
    run = data.make_run(2000, 20.0, seed=42, n=20, n_test=1000, T=8, rho=0.1, noise_ratio=0.2)
    kwargs = dict(learning_rate=5e-3, num_steps=args.steps, log_every=10, dtype="float32", device=args.device)

    synthetic.simulate([run], **{**kwargs, "num_steps": 5})  # warm-up
    fast_times = []
    for _ in range(3):
        t0 = time.perf_counter()
        sim = synthetic.simulate([run], **kwargs)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        fast_times.append(time.perf_counter() - t0)
    fast = min(fast_times)

    t0 = time.perf_counter()
    q_direct, acc_direct = direct(run, args.steps, 10, 5e-3, torch.device(args.device), torch.float32)
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    slow = time.perf_counter() - t0

    agree = float((sim.q[0].to(q_direct) - q_direct).norm() / q_direct.norm())
    print(f"config: d=2000 n=20 T=8 steps={args.steps} test every 10 steps on 1000 samples, float32, {args.device}, "
          f"{count(torch.get_num_threads(), 'thread')}")
    print(f"fast trainer:   {fast:.3f} s (best of 3), final test acc {sim.final.test_acc[0]:.3f}")
    print(f"direct autograd: {slow:.3f} s, final test acc {acc_direct:.3f}")
    print(f"relative difference of q = Wp (float32): {agree:.2e}")
    print(f"ratio {slow / fast:.1f}")


if __name__ == "__main__":
    with speed.recorded("fast_trainer"):  # also saved as results/benchmarks/fast_trainer.json
        main()
