"""Phase 2 of the real-data protocol: the fast batched first-token path against full forward passes, side by side.

Default: the offline text task (all-MiniLM-L6-v2 on Rotten-Tomatoes snippets), the six runs of one table cell group
(seeds 42/314/2718 × η 0/0.2) at n = 200, batch 16, AdamW as the authors ran it, CPU, 1 thread.

1. Fast: the frozen layers once (`encode`), then phase 2 of the six runs as one batched program for a few epochs.
   Its work is counted (`firsttoken.step_flops`: ≈ 8 MFLOP + 37 kFLOP per real token per sample-step for
   all-MiniLM-L6-v2) and set against the time: the achieved FLOP rate, beside the matrix-product rate of the device
   it ran on (a 1024³ sgemm and the MLP's 96×384×1536 product, same threads). Also: what checking every prediction
   (`stop_when_fitted`, at every epoch's end) costs against a training epoch, as a full forward pass over the
   training samples and as phase 2 makes it before a run fits (`training.all_predicted`, leaving at the first miss).
2. Full: the same runs through the whole Hugging Face model (`reference.full_forward_phase2`), one at a time, for
   a sample of steps (direct timing of everything is far too slow).
3. The whole paper schedule of one offline row (3 seeds × 2 η × n ∈ {20, 200, 1000}, 2000 epochs each, the
   max-attention pass every epoch), estimated for both paths from the measured costs per step and per pass.

The last line is `ratio N`: the full-forward estimate of that schedule over the fast one.
Usage: python benchmarks/finetune_cache.py [--task text|image] [--n 200] [--epochs 2] [--threads 1] [--device cpu]
"""

import argparse
import math
import os
import time

import numpy as np
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benign import speed  # noqa: E402
from benign.words import count  # noqa: E402
from benign.realdata import backbones, datasets, firsttoken, reference, training  # noqa: E402

TASKS = {"text": ("rotten_tomatoes", "all-minilm-l6-v2"), "image": ("mnist_5k", "vit-mnist-digits")}
SEEDS, ETAS, PAPER_SIZES, PAPER_EPOCHS = (42, 314, 2718), (0.0, 0.2), (20, 200, 1000), 2000


def clock():
    return time.perf_counter(), time.process_time()


def since(start):
    return time.perf_counter() - start[0], time.process_time() - start[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(TASKS), default="text")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    dataset, name = TASKS[args.task]
    data = datasets.load(dataset)
    bb = backbones.Backbone(name, data.num_classes, device=args.device)
    runs = [(s, eta) for s in SEEDS for eta in ETAS]
    subsets = {s: datasets.split_indices(len(data.train_labels), 0, args.n, s)[1] for s in SEEDS}
    union = np.unique(np.concatenate(list(subsets.values())))
    where = {int(i): r for r, i in enumerate(union)}
    rows = torch.stack([torch.as_tensor([where[int(i)] for i in subsets[s]]) for s, _ in runs])
    noisy = [datasets.add_label_noise(data.train_labels[subsets[s]], eta, data.num_classes, s)[0] for s, eta in runs]
    y = torch.as_tensor(np.stack(noisy))
    heads = [bb.seeded_head(s) for s, _ in runs]
    qks = [bb.reset_qk(s) for s, _ in runs]
    schedule = training.Schedule(num_epochs=PAPER_EPOCHS, max_epochs=args.epochs)

    # 1. fast: frozen layers once, then the six runs as one program
    start = clock()
    cache = training.encode(bb, datasets.take(data.train_inputs, union))
    encode_wall, encode_cpu = since(start)
    stacked = training.stack(heads)
    start = clock()
    fast = training.phase2(bb, cache, rows, y, stacked, qks, schedule, [s for s, _ in runs])
    fast_wall, fast_cpu = since(start)
    steps = math.ceil(args.n / 16) * args.epochs
    flops = args.epochs * firsttoken.step_flops(bb.tail, cache.lengths[rows.flatten()], data.num_classes)
    start = clock()
    training.epoch_pass(bb, cache, rows, stacked, fast.params)
    pass_wall, _ = since(start)
    start = clock()
    training.mean_max_attention(bb, cache, rows, fast.params)
    attention_wall, _ = since(start)
    start = clock()  # stop_when_fitted's check as phase 2 makes it: a run leaves at its first wrong prediction
    training.all_predicted(bb, cache, rows, y, stacked, fast.params, torch.ones_like(y, dtype=torch.bool))
    check_wall, _ = since(start)
    epoch_wall = fast_wall / args.epochs
    train_wall = epoch_wall - attention_wall  # phase2 measured the attention every epoch

    # 2. full forward passes: the same runs, one at a time, a sample of steps (one epoch of the first two runs)
    sample_runs = runs[:2]
    full_wall = 0.0
    for r, (s, _) in enumerate(sample_runs):
        inputs = datasets.take(data.train_inputs, union[rows[r].numpy()])
        start = clock()
        _, full_loss, full_att, _ = reference.full_forward_phase2(
            bb, inputs, y[r].numpy(), heads[r], qks[r], training.Schedule(num_epochs=PAPER_EPOCHS, max_epochs=1), s)
        full_wall += since(start)[0]
        np.testing.assert_allclose(fast.epoch_loss[r][:1], full_loss, rtol=1e-4)  # the same numbers
    start = clock()  # the reference's set-up (a copy of the model, the tokenised inputs), timed to be taken out
    model = reference.with_parameters(bb, heads[0], qks[0])
    inputs = datasets.take(data.train_inputs, union[rows[0].numpy()])
    batch = {k: v.to(bb.device) for k, v in bb.model_inputs(inputs).items()}
    setup_wall = since(start)[0]
    full_epoch_wall = full_wall / len(sample_runs) - setup_wall  # one run's epoch with its attention pass, full model
    start = clock()
    with torch.no_grad():
        model(**batch, output_attentions=True)
    full_pass_wall = since(start)[0]
    full_step_wall = (full_epoch_wall - full_pass_wall) / math.ceil(args.n / 16)

    # 3. the paper schedule of one row, estimated from the costs per step and per pass, both paths
    fast_step = train_wall / math.ceil(args.n / 16)  # one step of all six runs
    attention_per_sample = attention_wall / (len(runs) * args.n)
    full_pass_per_sample = full_pass_wall / args.n
    fast_total = sum(PAPER_EPOCHS * (math.ceil(n / 16) * fast_step + len(runs) * n * attention_per_sample)
                     for n in PAPER_SIZES)
    full_total = sum(PAPER_EPOCHS * len(runs) * (math.ceil(n / 16) * full_step_wall + n * full_pass_per_sample)
                     for n in PAPER_SIZES)
    peak = speed.gemm_rate(1024, 1024, 1024, 5, bb.device)  # on the device the fast path ran on
    mlp_rate = speed.gemm_rate(16 * len(runs), bb.hidden, bb.tail.W1.shape[0], 20, bb.device)

    L_real = cache.lengths[rows].float().mean().item()
    print(f"config: {dataset} with {backbones.BACKBONE_LABELS[name]}, {len(runs)} runs (seeds {SEEDS} × η {ETAS}) at "
          f"n={args.n}, {args.epochs} epochs, batch 16, adamw, {args.device}, "
          f"{count(torch.get_num_threads(), 'thread')}")
    print(f"frozen layers once for {len(union)} samples: {encode_wall:.2f} s (cpu {encode_cpu:.2f} s)")
    print(f"fast phase 2: {fast_wall:.2f} s (cpu {fast_cpu:.2f} s) for {steps} steps of all {len(runs)} runs: "
          f"{1e3 * fast_step:.1f} ms per step, {1e3 * fast_step / (16 * len(runs)):.3f} ms per sample-step")
    print(f"work: {flops / fast.sample_steps / 1e6:.2f} MFLOP per sample-step (mean {L_real:.1f} real tokens); "
          f"achieved {flops / (train_wall * args.epochs) / 1e9:.1f} GFLOP/s against the {args.device} device's "
          f"{peak:.0f} GFLOP/s (1024³ sgemm) and {mlp_rate:.0f} GFLOP/s (the MLP's product), same device and threads")
    print(f"per epoch: training {train_wall:.3f} s, attention pass {attention_wall:.3f} s; stop_when_fitted's check "
          f"of every prediction: a full pass {pass_wall:.3f} s ({100 * (pass_wall - attention_wall) / epoch_wall:.0f} % "
          f"of an epoch), as phase 2 makes it before a run fits (leaving at the first wrong one) {check_wall:.3f} s "
          f"({100 * check_wall / epoch_wall:.0f} %)")
    print(f"full forward passes (Hugging Face model, one run at a time): {1e3 * full_step_wall:.1f} ms per step of "
          f"one run, {full_pass_wall:.3f} s per epoch pass; first-epoch losses agree with the fast path (rtol 1e-4)")
    print(f"per sample-step: full {1e3 * full_step_wall / 16:.3f} ms, fast {1e3 * fast_step / (16 * len(runs)):.3f} "
          f"ms ({full_step_wall * len(runs) / fast_step:.0f}×)")
    print(f"paper schedule of one row (n ∈ {PAPER_SIZES}, {PAPER_EPOCHS} epochs, {len(runs)} runs each, attention "
          f"every epoch; encoding and phase 1 not included), estimated: fast {fast_total / 3600:.2f} h, "
          f"full forward {full_total / 3600:.1f} h")
    print(f"ratio {full_total / fast_total:.0f}")


if __name__ == "__main__":
    with speed.recorded("finetune_cache"):  # also saved as results/benchmarks/finetune_cache.json
        main()
