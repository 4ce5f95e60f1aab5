"""The trainers beside other work: wall time idle, beside one busy process and beside two, as loaded / idle.

Three workloads, each timed in a fresh Python process under `benign.device`'s thread policy (no override):
  fig3     the default Figure-3 run: `synthetic.simulate`, d = 2000, n = 20, T = 8, 1000 steps, test every 10 steps
           on 1000 samples, float32 (median of `--reps`);
  fig5     the full Figure-5 grid: 39 × 39 runs × 1000 steps through `sweep.run(synthetic.grid_chunk)`, no cache;
  encoder  one batched encoder run: 16 runs at d = 500, hidden 2000, `encoder.simulate`, 20 steps (median of `--reps`).
Loads, started and stopped here: "one" is a single-thread Python busy loop; "two" adds a torch program multiplying
300 × 300 matrices in a loop with torch's default threads (one per core). Targets: beside one within 2× of idle,
beside two within 3×. `--baseline` also times each workload with the threads fixed to one per core (torch's default,
the project's behaviour before the policy), side by side. The last line is `ratio N`, the worst loaded / idle ratio
of the policy.
Usage: python benchmarks/under_load.py [--reps 3] [--only fig3,encoder] [--baseline]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

from benign import speed

WORK = r'''
import sys, time
from benign import data, encoder, sweep, synthetic

def fig3():
    run = data.make_run(2000, 20.0, seed=42, n=20, n_test=1000, T=8, rho=0.1, noise_ratio=0.2)
    return lambda: synthetic.simulate([run], learning_rate=5e-3, num_steps=1000, log_every=10, dtype="float32",
                                      device="cpu")

def fig5():
    points = sweep.grid(d=sweep.arange("d", [250, 5000, 125]), signal_norm=sweep.arange("signal_norm", [5.0, 100.0, 2.5]),
                        seed=42, device="cpu")
    return lambda: sweep.run(synthetic.grid_chunk, points)

def enc():
    runs = [data.make_run(500, 5.0 + 2.5 * k, seed=0, n=20, n_test=100, noise_ratio=0.2) for k in range(16)]
    return lambda: encoder.simulate(runs, hidden=2000, num_steps=20, device="cpu")

name, reps = sys.argv[1], int(sys.argv[2])
work = {"fig3": fig3, "fig5": fig5, "encoder": enc}[name]()
if name != "fig5":
    work()  # warm-up
times = []
for _ in range(reps):
    started = time.perf_counter()
    work()
    times.append(time.perf_counter() - started)
print(" ".join(f"{t:.4f}" for t in times))
'''

BUSY_LOOP = [sys.executable, "-c", "while True: pass"]
TORCH_LOOP = [sys.executable, "-c", "import torch\na = torch.randn(300, 300)\nwhile True: a @ a"]
LOADS = {"idle": [], "one": [BUSY_LOOP], "two": [BUSY_LOOP, TORCH_LOOP]}
TARGET = {"one": 2.0, "two": 3.0}


def timed(name: str, reps: int, fixed: int) -> float:
    """Median wall time of `name` in a fresh process (`fixed` > 0: $BENIGN_CPU_THREADS = fixed)."""
    env = {k: v for k, v in os.environ.items() if k != "BENIGN_CPU_THREADS"}
    if fixed:
        env["BENIGN_CPU_THREADS"] = str(fixed)
    done = subprocess.run([sys.executable, "-c", WORK, name, str(reps)], env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{name} failed: {done.stderr.strip().splitlines()[-1]}")
    return statistics.median(float(t) for t in done.stdout.split())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", default="fig3,fig5,encoder")
    parser.add_argument("--baseline", action="store_true")
    args = parser.parse_args()
    names = args.only.split(",")
    unknown = set(names) - {"fig3", "fig5", "encoder"}
    if unknown or args.reps < 1:
        print(f"under_load: error: --only takes fig3, fig5, encoder (got {sorted(unknown)}), --reps >= 1",
              file=sys.stderr)
        sys.exit(2)
    cores = len(os.sched_getaffinity(0))
    modes = {"policy": 0, **({f"fixed {cores}": cores} if args.baseline else {})}
    seconds = {}
    for load, commands in LOADS.items():
        others = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in commands]
        time.sleep(2.0)  # the loads past their start-up
        try:
            for name in names:
                for mode, fixed in modes.items():
                    seconds[load, name, mode] = timed(name, 1 if name == "fig5" else args.reps, fixed)
                    print(f"{load:5s} {name:8s} {mode:8s} {seconds[load, name, mode]:8.3f} s", flush=True)
        finally:
            for proc in others:
                proc.kill()
                proc.wait()
    print(f"\n{cores} cores; load 'one' = a busy Python loop, 'two' = that and a {cores}-thread torch matmul loop")
    print(f"{'workload':8s} {'threads':9s} {'idle s':>8s} {'one s':>8s} {'×':>5s} {'two s':>8s} {'×':>5s}")
    worst = 0.0
    for name in names:
        for mode in modes:
            idle = seconds["idle", name, mode]
            ratios = {load: seconds[load, name, mode] / idle for load in TARGET}
            if mode == "policy":
                worst = max(worst, *ratios.values())
            print(f"{name:8s} {mode:9s} {idle:8.3f} {seconds['one', name, mode]:8.3f} {ratios['one']:5.2f} "
                  f"{seconds['two', name, mode]:8.3f} {ratios['two']:5.2f}")
    print(f"targets: beside one ≤ {TARGET['one']}×, beside two ≤ {TARGET['two']}× (policy rows)")
    print(f"ratio {worst:.2f}")


if __name__ == "__main__":
    with speed.recorded("under_load"):  # also saved as results/benchmarks/under_load.json
        main()
