"""The literal reference: phase 2 as the authors ran it, through the whole Hugging Face model at every step.

A fresh copy of the model gets the phase-1 head and the re-initialised query/key; every parameter but the last
layer's query and key is frozen; torch.optim's optimizer, `LambdaLR` with the linear decay, `clip_grad_norm_` and the
same batch order as the fast path. The tests check that `training.phase2` gives the same numbers, and the benchmark
times both.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from .backbones import Backbone
from .training import OPTIMIZERS, Schedule


def reference_fit(params: list[torch.Tensor], batch_loss, n: int, schedule: Schedule, seed: int, epoch_end=None):
    """One run trained the way the Hugging Face Trainer does it: torch.optim's optimizer, LambdaLR, clip_grad_norm_.

    batch_loss(idx) gets the sample indices (b,) and returns the mean loss; epoch_end() the epoch's max attention and
    whether every training label is predicted. Returns (loss per epoch, max attention per epoch) as arrays.
    """
    steps = math.ceil(n / schedule.batch_size)
    settings = {**OPTIMIZERS[schedule.optimizer], "lr": schedule.learning_rate(0, steps)}
    if schedule.optimizer == "adamw":
        opt = torch.optim.AdamW(params, weight_decay=0.0, **settings)
    else:
        opt = torch.optim.SGD(params, **settings)
    total = steps * schedule.num_epochs
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: max(0.0, (total - t) / total))  # the HF Trainer's
    gen = torch.Generator().manual_seed(seed)
    losses, attention = [], []
    for _ in range(schedule.epochs()):
        order = torch.randperm(n, generator=gen)
        running = 0.0
        for s in range(steps):
            loss = batch_loss(order[s * schedule.batch_size:(s + 1) * schedule.batch_size])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, schedule.max_grad_norm)
            opt.step()
            sched.step()
            running += loss.item()
        losses.append(running / steps)
        if epoch_end is not None:
            att, fitted = epoch_end()
            attention.append(att)
            if schedule.stop_when_fitted and fitted:
                break
    return np.array(losses), np.array(attention)


def with_parameters(backbone: Backbone, head: dict, qk: dict):
    """A copy of the full model with the given head and last-layer query/key (Wq, bq, Wk, bk) put in."""
    model = backbone.load(seed=0).to(backbone.device)  # a fresh instance: deepcopy would share output hooks
    model.load_state_dict(backbone.model.state_dict())
    model.eval()
    params = dict(model.named_parameters())
    names = dict(zip(("Wq", "Wk", "bq", "bk"), backbone.qk_names()))
    with torch.no_grad():
        for k, v in {**head, **{names[k]: v for k, v in qk.items()}}.items():
            params[k].copy_(v)
    return model


def full_forward_phase2(backbone: Backbone, inputs, labels: np.ndarray, head: dict, qk: dict, schedule: Schedule,
                        seed: int, add_special_tokens: bool = False):
    """Phase 2 of one run through the whole model. Returns (model, loss per epoch, max attention per epoch, wall s)."""
    started = time.perf_counter()
    model = with_parameters(backbone, head, qk)
    trainable = set(backbone.qk_names())
    for name, p in model.named_parameters():
        p.requires_grad_(name in trainable)
    named = dict(model.named_parameters())
    batch_all = {k: v.to(backbone.device) for k, v in backbone.model_inputs(inputs, add_special_tokens).items()}
    y = torch.as_tensor(labels, device=backbone.device)

    def batch_loss(rows):
        return F.cross_entropy(model(**{k: v[rows] for k, v in batch_all.items()}).logits, y[rows])

    @torch.no_grad()
    def epoch_end():
        out = model(**batch_all, output_attentions=True)
        att = float(out.attentions[-1][:, :, 0, :].amax(-1).mean())
        return att, bool((out.logits.argmax(-1) == y).all())

    losses, attention = reference_fit([named[n] for n in backbone.qk_names()], batch_loss, len(labels), schedule,
                                      seed, epoch_end)
    return model, losses, attention, time.perf_counter() - started


@torch.no_grad()
def full_logits(backbone: Backbone, inputs, head: dict, add_special_tokens: bool = False) -> torch.Tensor:
    """Logits of the whole Hugging Face model with the given head (the reference for the cached features)."""
    model = with_parameters(backbone, head, {})
    batch = {k: v.to(backbone.device) for k, v in backbone.model_inputs(inputs, add_special_tokens).items()}
    return model(**batch).logits
