"""Figure 7's paper-profile grid on one device: chunks at sampled d timed, the whole grid extrapolated from them.

The `paper` profile of fig7_one_layer_heatmap: 39 × 39 cells (d = 250 … 5000 step 125, ‖μ‖ = 5 … 100 step 2.5),
MLP width 2000, n = 20, T = 8, 1000 SGD steps, each cell on flipped labels (η = 0.2) and on clean labels (the
control): one chunk per d of 78 runs, built as the notebook builds them (`encoder.grid_chunk`, in the batches the
device's memory holds). At each sampled d the chunk runs `--steps` steps and then 2 × `--steps` (the best of two
calls each; the same test evaluation at the end of both), so the difference is the cost of `--steps` steps, the rest
the chunk's fixed cost (data, initialisation, the 1000-sample test evaluation); both are fitted by a + b·d + c·d² and
summed over the grid's 39 d at 1000 steps. Also the peak device memory of each chunk
(torch.cuda.max_memory_allocated) and the batch size its memory allowed. The last line is `ratio N` = extrapolated time / the floor
`encoder_batched.py --estimate` counts (its FLOPs and weight traffic, at the rates it assumes, for both label sets).
It is an extrapolation from measured chunks, not a run of the whole grid.
Usage: python benchmarks/fig7_paper.py [--device cuda] [--steps 30] [--d 250 1250 2500 3750 5000]
"""

import argparse
import sys
from pathlib import Path

import torch

from benign import device, encoder, settings, speed, sweep
from benign.checks import ParameterError

sys.path.insert(0, str(Path(__file__).parent))
import encoder_batched  # noqa: E402  (its FLOP and traffic estimate)


def chunk_points(values: dict, d: int, steps: int, dev: str) -> list[dict]:
    """The notebook's points of one d (every ‖μ‖, η and the clean control), at `steps` steps on `dev`."""
    mu = sweep.arange("signal_norm_grid", values["signal_norm_grid"])
    etas = list(dict.fromkeys([values["noise_ratio"], 0.0]))
    points = sweep.grid_points(encoder.GRID_DEFAULTS, values, d=[d], signal_norm=mu, hidden=values["hidden"],
                               noise_ratio=etas)
    return [dict(p, num_steps=steps, device=dev) for p in points]


def timed(points: list[dict], dev: str) -> float:
    """The best of two calls of the chunk, each from the same free memory (so each splits it into the same batches)."""
    times = []
    for _ in range(2):
        if dev.startswith("cuda"):
            torch.cuda.empty_cache()
        times.append(speed.timed(lambda: encoder.grid_chunk(points), dev))
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--d", type=int, nargs="+", default=[250, 1250, 2500, 3750, 5000])
    args = parser.parse_args()
    try:
        device.resolve_device(args.device)
    except ParameterError as error:
        parser.error(f"{error} (the paper profile's grid is a GPU's work)")
    values = settings.Fig7OneLayerHeatmap.preset("paper").values()
    assert values["scale"] == 1 and values["num_steps"] == 1000
    d_grid = sweep.arange("d_grid", values["d_grid"])
    if len(set(args.d)) < 3 or min(args.d) > d_grid[0] or max(args.d) < d_grid[-1]:
        parser.error(f"--d needs at least 3 values from {d_grid[0]} to {d_grid[-1]}: the fit is read only over the "
                     "d it was sampled on")
    encoder.grid_chunk(chunk_points(values, 250, 2, args.device))  # warm-up
    per_step, fixed = [], []
    for d in args.d:
        if args.device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()
        short = timed(chunk_points(values, d, args.steps, args.device), args.device)
        longer = timed(chunk_points(values, d, 2 * args.steps, args.device), args.device)
        step = (longer - short) / args.steps
        per_step.append(step)
        fixed.append(max(short - args.steps * step, 0.0))
        peak = ""
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
            per_run = encoder.MEMORY_PER_PARAMETER * encoder.parameter_count(d, values["hidden"]) * 4
            batch = device.runs_that_fit(per_run, torch.device(args.device), 78)
            peak = (f", peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB, batches of up to "
                    f"{batch} runs")
        print(f"d={d}: {len(chunk_points(values, d, 1, 'cpu'))} runs, {1e3 * step:.1f} ms per step, "
              f"{1e3 * fixed[-1]:.0f} ms fixed (data, initialisation, test){peak}")
    total = float((values["num_steps"] * speed.quadratic_in_d(args.d, per_step, d_grid) +
                   speed.quadratic_in_d(args.d, fixed, d_grid)).sum())
    floor = encoder_batched.estimate()
    floor_s = 2 * (floor["seconds_flops"] + floor["seconds_bytes"])  # both label sets
    name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else args.device
    print(f"paper grid (39 d × 39 ‖μ‖ × 2 label sets, 1000 steps) on {name}, extrapolated: {total / 60:.1f} min")
    print(f"floor from encoder_batched's count at its assumed rates: {floor_s / 60:.1f} min")
    print(f"ratio {total / floor_s:.2f}")


if __name__ == "__main__":
    with speed.recorded("fig7_paper"):  # also saved as results/benchmarks/fig7_paper.json
        main()
