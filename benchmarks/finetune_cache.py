"""Phase 2 of the real-data protocol on cached last-layer inputs against full forward passes, side by side.

Default: the offline text task (all-MiniLM-L6-v2 on Rotten-Tomatoes snippets), one run, n = 64 samples, batch 16,
AdamW as the authors ran it, the per-epoch max-attention measure on, CPU. Both start from the same phase-1 head and
re-initialised query/key and see the same batches. The cached side pays for running the frozen layers once
(included in its time). The last line is `ratio N` = full time / cached time.
Usage: python benchmarks/finetune_cache.py [--task text|image] [--n 64] [--epochs 3] [--device cpu]
"""

import argparse
import os
import time

import numpy as np
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benign import finetune, realdata  # noqa: E402

TASKS = {"text": ("rotten_tomatoes", "all-minilm-l6-v2"), "image": ("mnist_5k", "vit-fashion-mnist")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(TASKS), default="text")
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    dataset, backbone = TASKS[args.task]
    data = realdata.load(dataset)
    bb = finetune.Backbone(backbone, data.num_classes, device=args.device)
    _, idx = realdata.split_indices(len(data.train_labels), 0, args.n, seed=42)
    inputs = finetune._taker(data.train_inputs)(idx)
    labels, _ = realdata.add_label_noise(data.train_labels[idx], 0.2, data.num_classes, seed=42)
    head, qk = bb.seeded_head(42), bb.reset_qk(42)
    kwargs = dict(epochs=args.epochs, batch_size=16, optimizer="adamw")

    t0 = time.perf_counter()
    cache = finetune.encode(bb, inputs)
    encode_s = time.perf_counter() - t0
    rows = torch.arange(args.n, device=bb.device)[None]
    y = torch.as_tensor(labels, device=bb.device)[None]
    _, cached = finetune.phase2(bb, cache, rows, y, {k: v[None] for k, v in head.items()}, [qk], seeds=[42], **kwargs)
    cached_s = encode_s + cached.wall_s

    t0 = time.perf_counter()
    _, full = finetune.full_forward_phase2(bb, inputs, labels, head, qk, seed=42, **kwargs)
    full_s = time.perf_counter() - t0

    print(f"config: {dataset} with {realdata.BACKBONE_LABELS[backbone]}, n={args.n}, {args.epochs} epochs of "
          f"phase 2, batch 16, adamw, max attention every epoch, {args.device}, {torch.get_num_threads()} threads")
    print("epoch  loss cached  loss full   max-att cached  max-att full")
    for e in range(args.epochs):
        print(f"{e + 1:5d}  {cached.epoch_loss[0, e]:.7f}  {full.epoch_loss[0, e]:.7f}  "
              f"{cached.epoch_max_attention[0, e]:.7f}       {full.epoch_max_attention[0, e]:.7f}")
    diff = np.abs(cached.epoch_loss - full.epoch_loss).max()
    print(f"largest loss difference: {diff:.1e}")
    print(f"cached: {cached_s:.2f} s (frozen layers once {encode_s:.2f} s + training {cached.wall_s:.2f} s)")
    print(f"full forward passes: {full_s:.2f} s ({full_s / args.epochs:.2f} s per epoch, "
          f"cached {cached.wall_s / args.epochs:.3f} s per epoch)")
    print(f"ratio {full_s / cached_s:.1f}")


if __name__ == "__main__":
    main()
