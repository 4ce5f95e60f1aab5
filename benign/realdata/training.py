"""Training on cached last-layer inputs: the frozen layers once (`encode`), then phase 1 and phase 2 for many runs
side by side, with the schedule the authors' runs used.

The schedule is the Hugging Face Trainer's: shuffled batches of 16, AdamW (lr 5e-5, β = (0.9, 0.999), ε = 1e-8, no
weight decay) or the authors' configured SGD (lr 1e-3, momentum 0.9), the learning rate decaying linearly to 0 over
`num_epochs` epochs, each run's gradient clipped to norm 1. R runs whose parameters are stacked along dim 0 advance
together: one gradient computation (`firsttoken`), one clipping and one optimizer step for all of them, no Python
loop over runs.

With `stop_when_fitted` a run stops at the end of the first epoch after which it predicts every training label
(the noisy ones included), or after `max_epochs`; the decay stays laid over the full `num_epochs`, so a stopped run
saw exactly the learning rates of the full schedule up to where it stopped. A fitted run leaves the batched program
and the others go on without it. The check is one forward pass over the training samples at the end of every
epoch, the same pass that measures the epoch's attention (Figures 8/9).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from .backbones import Backbone
from .firsttoken import features, first_row, forward, head_loss_and_grad, loss_and_grad

warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm.auto inside Jupyter without widgets

OPTIMIZERS = {
    "adamw": dict(lr=5e-5, betas=(0.9, 0.999), eps=1e-8),  # the HF Trainer's defaults (weight decay 0)
    "sgd": dict(lr=1e-3, momentum=0.9),  # the authors' config (never passed to their Trainer)
}
MAX_GRAD_NORM = 1.0


# ---------------------------------------------------------------------------------------- the frozen layers
@dataclass
class Encoded:
    """Cached last-layer inputs of N samples: x (N, L, D) for query/key/value, h0 (N, D) the first token's hidden
    state, mask (N, L) and lengths (N,) of the real tokens; z (N, D) the first-token features with the backbone's
    own query and key (what phase 1 trains on)."""

    x: torch.Tensor
    h0: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor
    z: torch.Tensor

    def tokens(self, rows: torch.Tensor):
        """x (N, L, D), mask (N, L) and h0 (N, D) of the samples `rows` (R, B) in order (N = R·B), cut to the
        longest of them."""
        rows = rows.reshape(-1)
        L = int(self.lengths[rows].max())
        return self.x[:, :L].index_select(0, rows), self.mask[:, :L].index_select(0, rows), self.h0[rows]


@torch.no_grad()
def encode(backbone: Backbone, inputs, add_special_tokens: bool = False, chunk: int = 128,
           keep_tokens: bool = True) -> Encoded:
    """Run the frozen layers once: last-layer inputs (kept only if keep_tokens) and the phase-1 features.

    Texts are encoded in order of length (less padding), and the results put back in the order given.
    """
    xs, h0s, masks, zs = [], [], [], []
    n = len(inputs)
    order = np.argsort([len(t) for t in inputs], kind="stable") if backbone.arch == "bert" else np.arange(n)
    inputs = [inputs[i] for i in order] if isinstance(inputs, list) else inputs[order]
    original = {k: v[None] for k, v in backbone.original_qk().items()}
    for i in range(0, n, chunk):
        h, mask = backbone.last_layer_inputs(backbone.model_inputs(inputs[i:i + chunk], add_special_tokens))
        x = backbone.keys_input(h)
        zs.append(features(x, mask, h[:, 0], original, backbone.tail)[0][0])
        if keep_tokens:
            xs.append(x)
            h0s.append(h[:, 0])
            masks.append(mask)
    back = torch.as_tensor(np.argsort(order), device=backbone.device)
    z = torch.cat(zs)[back]
    if not keep_tokens:
        empty = torch.empty(0, device=backbone.device)
        return Encoded(empty, empty, empty.bool(), empty.long(), z)
    L = max(t.shape[1] for t in xs)
    x = torch.cat([F.pad(t, (0, 0, 0, L - t.shape[1])) for t in xs])[back]
    mask = torch.cat([F.pad(m, (0, L - m.shape[1])) for m in masks])[back]
    return Encoded(x.contiguous(), torch.cat(h0s)[back], mask, mask.sum(1), z)


# ------------------------------------------------------------------------------- schedule and optimizer
@dataclass(frozen=True)
class Schedule:
    """How long and how a phase trains (the defaults are the paper's phase 2)."""

    num_epochs: int = 2000  # the learning rate decays linearly to 0 over this many epochs
    batch_size: int = 16
    optimizer: str = "adamw"
    max_epochs: int = 0  # stop after this many epochs at most; 0: num_epochs
    stop_when_fitted: bool = False  # stop a run once it predicts every training label (checked each epoch)
    max_grad_norm: float = MAX_GRAD_NORM
    peak_learning_rate: float = 0.0  # where the decay starts; 0: the optimizer's (AdamW 5e-5, SGD 1e-3)

    def epochs(self) -> int:
        return min(self.num_epochs, self.max_epochs or self.num_epochs)

    def learning_rate(self, step: int, steps_per_epoch: int) -> float:
        """The HF Trainer's linear decay: lr₀ (T − t) / T at step t of T = num_epochs × steps per epoch."""
        total = steps_per_epoch * self.num_epochs
        peak = self.peak_learning_rate or OPTIMIZERS[self.optimizer]["lr"]
        return peak * max(0.0, (total - step) / total)


class RunOptimizer:
    """torch.optim's AdamW or SGD for R runs stacked along dim 0, each run's gradient clipped separately.

    The update is elementwise, so one torch optimizer over the stacked tensors makes each run's own update; its fused
    implementation (one kernel per tensor) where this torch has one for the device.
    """

    def __init__(self, params: list[torch.Tensor], optimizer: str, max_grad_norm: float = MAX_GRAD_NORM):
        self.kind, self.max_grad_norm = optimizer, max_grad_norm
        self.params, self.opt = params, self._make(params)

    def _make(self, params):
        settings = OPTIMIZERS[self.kind]
        cls, extra = (torch.optim.AdamW, {"weight_decay": 0.0}) if self.kind == "adamw" else (torch.optim.SGD, {})
        try:
            return cls(params, **settings, **extra, fused=True)
        except (RuntimeError, TypeError, ValueError):  # no fused kernel here: the same update, op by op
            return cls(params, **settings, **extra)

    def clip(self) -> torch.Tensor:
        """clip_grad_norm_ per run: scale each run's gradients to norm ≤ max_grad_norm; returns the norms (R,)."""
        R = self.params[0].shape[0]
        norm = sum(p.grad.reshape(R, -1).pow(2).sum(1) for p in self.params).sqrt()
        coef = (self.max_grad_norm / (norm + 1e-6)).clamp(max=1.0)
        for p in self.params:
            p.grad.mul_(coef.view(R, *([1] * (p.dim() - 1))))
        return norm

    def step(self, lr: float) -> None:
        for group in self.opt.param_groups:
            group["lr"] = lr
        self.opt.step()

    def keep(self, rows: torch.Tensor) -> list[torch.Tensor]:
        """Only the runs `rows` go on: new (leaf) parameters with their rows of the optimizer's state."""
        params = [p.detach()[rows].requires_grad_(True) for p in self.params]
        opt = self._make(params)
        for old, new in zip(self.params, params):
            opt.state[new] = {k: v[rows] if v.dim() else v.clone() for k, v in self.opt.state.get(old, {}).items()}
        self.params, self.opt = params, opt
        return params


# ------------------------------------------------------------------------------------------- the loop
@dataclass
class Fit:
    """What a phase did, per run (runs may stop after different numbers of epochs)."""

    params: dict[str, torch.Tensor]  # final parameters, stacked (R, ...)
    epoch_loss: list[np.ndarray]  # mean of the batch losses of each epoch (what the HF Trainer logs)
    epoch_max_attention: list[np.ndarray]  # per epoch (empty when not tracked)
    fitted: np.ndarray  # (R,) bool: stopped because every training label was predicted
    wall_s: float
    sample_steps: int = 0  # Σ over optimizer steps of the samples in the batches of all runs
    epochs_run: np.ndarray = field(default=None)

    def __post_init__(self):
        self.epochs_run = np.array([len(v) for v in self.epoch_loss])


def fit(params: dict[str, torch.Tensor], prepare, n: int, schedule: Schedule, generators: list[torch.Generator],
        progress: bool = False) -> Fit:
    """Train R runs (parameters stacked along dim 0) side by side on the same n, as the HF Trainer does each.

    prepare(active) gets the ids of the runs still training and returns (step, epoch_end): step(params, idx) sets
    the gradients (`.grad`) of the mean loss of each run on its batch idx (R', b) and returns those losses (R',);
    epoch_end(params) the max attention per run (or None) and which runs predict every training label (or None).
    """
    names = list(params)
    R, B = len(generators), schedule.batch_size
    steps = math.ceil(n / B)
    active = torch.arange(R)
    opt = RunOptimizer([params[k].detach().clone().requires_grad_(True) for k in names], schedule.optimizer,
                       schedule.max_grad_norm)
    final = {k: params[k].detach().clone() for k in names}
    losses, attention = [[] for _ in range(R)], [[] for _ in range(R)]
    fitted, sample_steps = np.zeros(R, dtype=bool), 0
    step_fn, epoch_end = prepare(active)
    device = params[names[0]].device
    started = time.perf_counter()
    bar = _bar(schedule.epochs(), progress)
    for epoch in range(schedule.epochs()):
        order = torch.stack([torch.randperm(n, generator=generators[r]) for r in active.tolist()]).to(device)
        running = torch.zeros(len(active), device=device)
        current = dict(zip(names, opt.params))
        for s in range(steps):
            idx = order[:, s * B:(s + 1) * B]
            loss = step_fn(current, idx)
            opt.clip()
            opt.step(schedule.learning_rate(epoch * steps + s, steps))
            running += loss.detach()
            sample_steps += idx.numel()
        mean_loss = (running / steps).cpu().numpy()
        att, done = epoch_end(current) if epoch_end else (None, None)
        for i, r in enumerate(active.tolist()):
            losses[r].append(float(mean_loss[i]))
            if att is not None:
                attention[r].append(float(att[i]))
        bar.update(1)
        if done is not None and done.any():
            for i in np.flatnonzero(done):
                r = int(active[i])
                fitted[r] = True
                for k, p in zip(names, opt.params):
                    final[k][r] = p.detach()[i]
            keep = torch.as_tensor(np.flatnonzero(~done))
            if len(keep) == 0:
                break
            active = active[keep]
            opt.keep(keep.to(device))
            step_fn, epoch_end = prepare(active)
    bar.close()
    for i, r in enumerate(active.tolist()):
        if not fitted[r]:
            for k, p in zip(names, opt.params):
                final[k][r] = p.detach()[i]
    return Fit(final, [np.array(v) for v in losses], [np.array(v) for v in attention], fitted,
               time.perf_counter() - started, sample_steps)


def _bar(total: int, progress: bool):
    if progress:
        from tqdm.auto import tqdm

        return tqdm(total=total, leave=False)
    return _NoBar()


class _NoBar:
    def update(self, _):
        pass

    def close(self):
        pass


def stack(dicts: list[dict]) -> dict[str, torch.Tensor]:
    """Per-run dicts of tensors → one dict of tensors stacked along a new dim 0."""
    return {k: torch.stack([d[k] for d in dicts]) for k in dicts[0]}


# ------------------------------------------------------------------------------------------ the phases
def phase1(backbone: Backbone, z: torch.Tensor, labels: torch.Tensor, heads: list[dict], schedule: Schedule,
           seeds: list[int]) -> Fit:
    """Train the head (R runs) on cached first-token features z (R, P, D) with clean labels (R, P)."""

    def prepare(active):
        za, ya = z[active.to(z.device)], labels[active.to(z.device)]
        runs = torch.arange(len(active), device=z.device)[:, None]

        @torch.no_grad()
        def step(params, idx):
            loss, grads = head_loss_and_grad(za[runs, idx], ya[runs, idx], params, backbone.arch)
            for k, g in grads.items():
                params[k].grad = g
            return loss

        return step, None

    gens = [torch.Generator().manual_seed(s) for s in seeds]
    return fit(stack(heads), prepare, z.shape[1], schedule, gens)


def phase2(backbone: Backbone, cache: Encoded, sample_idx: torch.Tensor, labels: torch.Tensor, heads: dict,
           qk: list[dict], schedule: Schedule, seeds: list[int], track_attention: bool = True,
           progress: bool = False) -> Fit:
    """Train the last layer's query and key of R runs on cached last-layer inputs.

    sample_idx (R, n): rows of `cache` that form each run's finetune subset; labels (R, n): their noisy labels;
    heads: stacked phase-1 heads (R, ...); qk: the re-initialised query/key of each run.
    """
    tail = backbone.tail

    def prepare(active):
        a = active.to(sample_idx.device)
        rows_a, y_a, head_a = sample_idx[a], labels[a], {k: v[a] for k, v in heads.items()}
        runs = torch.arange(len(active), device=sample_idx.device)[:, None]

        @torch.no_grad()
        def step(params, idx):
            x, mask, h0 = cache.tokens(rows_a[runs, idx])
            loss, grads = loss_and_grad(x, mask, h0, y_a[runs, idx], params, head_a, tail)
            for k, g in grads.items():
                params[k].grad = g
            return loss

        def epoch_end(params):
            if schedule.stop_when_fitted:
                att, pred = epoch_pass(backbone, cache, rows_a, head_a, params)
                return att.cpu().numpy(), (pred == y_a).all(1).cpu().numpy()
            return (mean_max_attention(backbone, cache, rows_a, params).cpu().numpy() if track_attention else None,
                    None)

        return step, epoch_end

    gens = [torch.Generator().manual_seed(s) for s in seeds]
    return fit(stack(qk), prepare, sample_idx.shape[1], schedule, gens, progress)


@torch.no_grad()
def epoch_pass(backbone: Backbone, cache: Encoded, rows: torch.Tensor, heads: dict, qk: dict,
               chunk: int = 2048) -> tuple[torch.Tensor, torch.Tensor]:
    """One forward pass over cached samples, per run: the mean max attention (R,) and the predictions (R, m).

    rows (R, m): each run's samples, or (m,): the same samples for every run. The max attention is the paper's
    Figure-8 measure: the mean over heads and samples of the largest softmax score in the first token's query row.
    """
    R = heads["classifier.weight"].shape[0]
    rows = rows.expand(R, -1) if rows.dim() == 1 else rows
    total, pred, step = torch.zeros(R, device=rows.device), [], max(1, chunk // R)  # ≈ `chunk` samples at a time
    for i in range(0, rows.shape[1], step):
        x, mask, h0 = cache.tokens(rows[:, i:i + step])
        logit, probs, _ = forward(x, mask, h0, qk, heads, backbone.tail)
        total += probs.amax(-1).view(R, -1).sum(1)
        pred.append(logit.argmax(-1))
    return total / (rows.shape[1] * backbone.heads), torch.cat(pred, 1)


def predict(backbone: Backbone, cache: Encoded, rows: torch.Tensor, heads: dict, qk: dict) -> torch.Tensor:
    """Predicted classes (R, m) of cached samples: rows (R, m) per run, or (m,) the same samples for every run."""
    return epoch_pass(backbone, cache, rows, heads, qk)[1]


@torch.no_grad()
def mean_max_attention(backbone: Backbone, cache: Encoded, rows: torch.Tensor, qk: dict,
                       chunk: int = 2048) -> torch.Tensor:
    """The max attention alone (R,) for rows (R, m): the query and key's part of `epoch_pass`, without the rest."""
    R, n = rows.shape
    total, step = torch.zeros(R, device=rows.device), max(1, chunk // R)
    for i in range(0, n, step):
        x, mask, _ = cache.tokens(rows[:, i:i + step])
        total += first_row(x, mask, qk, backbone.heads, R)[0].amax(-1).view(R, -1).sum(1)
    return total / (n * backbone.heads)
