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
and the others go on without it. The check comes at the end of every epoch, after the pass that measures the
epoch's attention (Figures 8/9): each run's samples in chunks, those it got wrong last time first, the run leaving
at its first wrong prediction (`all_predicted`), so it costs a chunk until the run fits.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch.optim.adamw import adamw
from torch.optim.sgd import sgd

from ..progress import bar as progress_bar
from .backbones import Backbone
from .firsttoken import Tokens, features, first_row, forward, head_loss_and_grad, loss_and_grad


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
    own query and key (what phase 1 trains on). Encoded without its tokens: z and lengths only."""

    x: torch.Tensor
    h0: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor
    z: torch.Tensor

    def __post_init__(self):
        self.x0 = self.x[:, 0].contiguous() if self.x.numel() else self.x  # the first token's, gathered each step
        self.full = bool(self.mask.all())  # images: every sample has all its tokens

    def here(self, t: torch.Tensor) -> torch.Tensor:
        """`t` (sample rows, labels, flags) on the device the cache is on, where it indexes and is compared."""
        return t.to(self.lengths.device)

    def tokens(self, rows: torch.Tensor, group: int = 32) -> Tokens:
        """The samples `rows` (R, B) as `Tokens` (N = R·B, run by run): in groups of about `group` samples of
        similar length, each cut to its longest sample."""
        rows = rows.reshape(-1)
        first = (self.x0.index_select(0, rows), self.h0.index_select(0, rows))
        if self.full:  # one group
            return Tokens.whole(*first, self.x.index_select(0, rows), self.mask.index_select(0, rows))
        lengths = self.lengths[rows]
        order = lengths.argsort(stable=True)
        groups = []
        for part in order.tensor_split(max(1, len(rows) // group)):
            r, L = rows[part], int(lengths[part].max())
            groups.append((self.x[:, :L].index_select(0, r), self.mask[:, :L].index_select(0, r)))
        return Tokens(*first, groups, order, order.argsort())


@torch.no_grad()
def encode(backbone: Backbone, inputs, add_special_tokens: bool = False, chunk: int = 128,
           keep_tokens: bool = True) -> Encoded:
    """Run the frozen layers once: last-layer inputs (kept only if keep_tokens) and the phase-1 features.

    Texts are encoded in order of length (less padding), and the results put back in the order given.
    """
    xs, h0s, masks, zs, lengths = [], [], [], [], []
    n = len(inputs)
    order = np.argsort([len(t) for t in inputs], kind="stable") if backbone.arch == "bert" else np.arange(n)
    inputs = [inputs[i] for i in order] if isinstance(inputs, list) else inputs[order]
    original = {k: v[None] for k, v in backbone.original_qk().items()}
    for i in range(0, n, chunk):
        h, mask = backbone.last_layer_inputs(backbone.model_inputs(inputs[i:i + chunk], add_special_tokens))
        x = backbone.keys_input(h)
        zs.append(features(Tokens.whole(x[:, 0], h[:, 0], x, mask), original, backbone.tail)[0][0])
        lengths.append(mask.sum(1))
        if keep_tokens:
            xs.append(x)
            h0s.append(h[:, 0])
            masks.append(mask)
    back = torch.as_tensor(np.argsort(order), device=backbone.device)
    z, lengths = torch.cat(zs)[back], torch.cat(lengths)[back]
    if not keep_tokens:  # the features and lengths only
        empty = torch.empty(0, device=backbone.device)
        return Encoded(empty, empty, empty.bool(), lengths, z)
    L = max(t.shape[1] for t in xs)
    x = torch.cat([F.pad(t, (0, 0, 0, L - t.shape[1])) for t in xs])[back]
    mask = torch.cat([F.pad(m, (0, L - m.shape[1])) for m in masks])[back]
    return Encoded(x.contiguous(), torch.cat(h0s)[back], mask, lengths, z)


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
    """torch.optim's AdamW or SGD update for R runs stacked along dim 0 (their gradients come clipped per run:
    `firsttoken.loss_and_grad`, `head_loss_and_grad`).

    The update is elementwise, so one update over the stacked tensors makes each run's own; it calls torch.optim's
    functional form (`torch.optim.adamw.adamw`, `torch.optim.sgd.sgd`), fused into one kernel per tensor where this
    torch has one for the device, without the per-step bookkeeping of an Optimizer object.
    """

    def __init__(self, params: list[torch.Tensor], optimizer: str):
        self.kind, self.settings = optimizer, OPTIMIZERS[optimizer]
        self.params = [p.detach().clone() for p in params]
        self.state = [[torch.zeros_like(p) for p in self.params] for _ in range(2 if optimizer == "adamw" else 1)]
        self.steps = [torch.zeros((), device=p.device) for p in self.params]
        self.fused = self.params[0].device.type in ("cpu", "cuda") or None  # torch's fused kernels; else op by op

    @torch.no_grad()
    def step(self, grads: list[torch.Tensor], lr: float) -> None:
        if self.kind == "adamw":
            (b1, b2), eps = self.settings["betas"], self.settings["eps"]
            adamw(self.params, grads, *self.state, [], self.steps, fused=self.fused,
                  amsgrad=False, beta1=b1, beta2=b2, lr=lr, weight_decay=0.0, eps=eps, maximize=False)
        else:  # a zero momentum buffer makes the first step torch.optim.SGD's (whose buffer starts as the gradient)
            sgd(self.params, grads, self.state[0], weight_decay=0.0, momentum=self.settings["momentum"], lr=lr,
                dampening=0.0, nesterov=False, maximize=False)

    def keep(self, rows: torch.Tensor) -> None:
        """Only the runs `rows` go on (parameters and optimizer state)."""
        self.params = [p[rows] for p in self.params]
        self.state = [[s[rows] for s in states] for states in self.state]


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
    epoch_end_s: float = 0.0  # of wall_s, the passes at the epochs' ends (attention, the fit check)

    @property
    def epochs_run(self) -> np.ndarray:
        """(R,) the epochs each run trained."""
        return np.array([len(v) for v in self.epoch_loss])


def fit(params: dict[str, torch.Tensor], prepare, n: int, schedule: Schedule, generators: list[torch.Generator],
        progress: bool = False) -> Fit:
    """Train R runs (parameters stacked along dim 0) side by side on the same n, as the HF Trainer does each.

    prepare(active) gets the ids of the runs still training and returns (step, epoch_end): step(params, idx) the
    mean loss of each run on its batch idx (R', b), (R',), and its gradients (a dict like params), each run's clipped
    to norm ≤ schedule.max_grad_norm;
    epoch_end(params) the max attention per run (or None) and which runs predict every training label (or None).
    """
    names = list(params)
    R, B = len(generators), schedule.batch_size
    steps = math.ceil(n / B)
    active = torch.arange(R)
    opt = RunOptimizer([params[k] for k in names], schedule.optimizer)
    final = {k: params[k].detach().clone() for k in names}
    losses, attention = [[] for _ in range(R)], [[] for _ in range(R)]
    fitted, sample_steps, epoch_end_s = np.zeros(R, dtype=bool), 0, 0.0
    step_fn, epoch_end = prepare(active)
    device = params[names[0]].device
    started = time.perf_counter()
    bar = progress_bar(schedule.epochs(), "epochs", progress)
    for epoch in range(schedule.epochs()):
        order = torch.stack([torch.randperm(n, generator=generators[r]) for r in active.tolist()]).to(device)
        running = torch.zeros(len(active), device=device)
        current = dict(zip(names, opt.params))
        for s in range(steps):
            idx = order[:, s * B:(s + 1) * B]
            loss, grads = step_fn(current, idx)
            opt.step([grads[k] for k in names], schedule.learning_rate(epoch * steps + s, steps))
            running += loss.detach()
            sample_steps += idx.numel()
        mean_loss = (running / steps).cpu().numpy()
        ended = time.perf_counter()
        att, done = epoch_end(current) if epoch_end else (None, None)
        epoch_end_s += time.perf_counter() - ended
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
               time.perf_counter() - started, sample_steps, epoch_end_s)


def stack(dicts: list[dict]) -> dict[str, torch.Tensor]:
    """Per-run dicts of tensors → one dict of tensors stacked along a new dim 0."""
    return {k: torch.stack([d[k] for d in dicts]) for k in dicts[0]}


# ------------------------------------------------------------------------------------------ the phases
def phase1(backbone: Backbone, z: torch.Tensor, labels: torch.Tensor, heads: list[dict], schedule: Schedule,
           seeds: list[int]) -> Fit:
    """Train the head (R runs) on cached first-token features z (R, P, D) with clean labels (R, P)."""
    labels = labels.to(z.device)

    def prepare(active):
        za, ya = z[active.to(z.device)], labels[active.to(z.device)]
        runs = torch.arange(len(active), device=z.device)[:, None]

        @torch.no_grad()
        def step(params, idx):
            return head_loss_and_grad(za[runs, idx], ya[runs, idx], params, backbone.arch, schedule.max_grad_norm)[:2]

        return step, None

    gens = [torch.Generator().manual_seed(s) for s in seeds]
    return fit(stack(heads), prepare, z.shape[1], schedule, gens)


def phase2(backbone: Backbone, cache: Encoded, sample_idx: torch.Tensor, labels: torch.Tensor, heads: dict,
           qk: list[dict], schedule: Schedule, seeds: list[int], progress: bool = False) -> Fit:
    """Train the last layer's query and key of R runs on cached last-layer inputs.

    sample_idx (R, n): rows of `cache` that form each run's finetune subset; labels (R, n): their noisy labels;
    heads: stacked phase-1 heads (R, ...); qk: the re-initialised query/key of each run.
    """
    tail = backbone.tail
    sample_idx, labels = cache.here(sample_idx), cache.here(labels)
    wrong = torch.ones_like(labels, dtype=torch.bool)  # per run, the samples the last check found (or left) wrong

    def prepare(active):
        a = active.to(sample_idx.device)
        rows_a, y_a, head_a = sample_idx[a], labels[a], {k: v[a] for k, v in heads.items()}
        runs = torch.arange(len(active), device=sample_idx.device)[:, None]

        @torch.no_grad()
        def step(params, idx):
            return loss_and_grad(cache.tokens(rows_a[runs, idx]), y_a[runs, idx], params, head_a, tail,
                                 schedule.max_grad_norm)[:2]

        def epoch_end(params):
            att = mean_max_attention(backbone, cache, rows_a, params).cpu().numpy()
            if not schedule.stop_when_fitted:
                return att, None
            done, wrong_a = all_predicted(backbone, cache, rows_a, y_a, head_a, params, wrong[a])
            wrong[a] = wrong_a
            return att, done.cpu().numpy()

        return step, epoch_end

    gens = [torch.Generator().manual_seed(s) for s in seeds]
    return fit(stack(qk), prepare, sample_idx.shape[1], schedule, gens, progress)


@torch.no_grad()
def epoch_pass(backbone: Backbone, cache: Encoded, rows: torch.Tensor, heads: dict, qk: dict,
               chunk: int = 2048) -> tuple[torch.Tensor, torch.Tensor]:
    """One forward pass over cached samples, per run: the mean max attention (R,) and the predictions (R, m).

    rows (R, m): each run's samples, or (m,): the same samples for every run. The max attention is the paper's
    Figure-8 measure: the mean over heads and samples of the largest softmax score in the first token's query row.
    Each run's samples go through in order of length, so a chunk is padded only to its own longest sample.
    """
    R = heads["classifier.weight"].shape[0]
    rows = cache.here(rows.expand(R, -1) if rows.dim() == 1 else rows)
    order = cache.lengths[rows].argsort(dim=1, stable=True)  # chunks of similar length: less padding
    rows = rows.gather(1, order)
    total, pred, step = torch.zeros(R, device=rows.device), [], max(1, chunk // R)  # ≈ `chunk` samples at a time
    for i in range(0, rows.shape[1], step):
        logit, top, _ = forward(cache.tokens(rows[:, i:i + step]), qk, heads, backbone.tail)
        total += top.view(R, -1).sum(1)
        pred.append(logit.argmax(-1))
    return total / (rows.shape[1] * backbone.heads), torch.empty_like(rows).scatter_(1, order, torch.cat(pred, 1))


@torch.no_grad()
def all_predicted(backbone: Backbone, cache: Encoded, rows: torch.Tensor, labels: torch.Tensor, heads: dict,
                  qk: dict, wrong: torch.Tensor, first: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """Which runs predict every one of their samples rows (R, m) as labels (R, m): (R,) bool, exactly — a run is
    declared fitted only after every sample was predicted right — and the updated wrong flags (R, m).

    A run is decided by its first wrong sample, so each run's samples go through in chunks (`first` samples, then
    twice as many each time) with those `wrong` flags last time first, and a run leaves the pass at its first wrong
    prediction: before a run fits, the pass costs a chunk, not a forward pass over all its samples.
    """
    R, m = rows.shape
    rows, labels, wrong = cache.here(rows), cache.here(labels), cache.here(wrong)
    order = wrong.float().argsort(dim=1, descending=True, stable=True)  # last time's wrong samples first
    rows, labels, wrong = rows.gather(1, order), labels.gather(1, order), wrong.gather(1, order)
    undecided, start, size = torch.arange(R, device=rows.device), 0, first
    while len(undecided) and start < m:
        part = slice(start, start + size)
        qk_u, heads_u = ({k: v[undecided] for k, v in d.items()} for d in (qk, heads))
        logit = forward(cache.tokens(rows[undecided, part]), qk_u, heads_u, backbone.tail)[0]
        miss = logit.argmax(-1) != labels[undecided, part]
        wrong[undecided, part] = miss
        undecided = undecided[~miss.any(1)]
        start, size = start + size, size * 2
    done = torch.zeros(R, dtype=torch.bool, device=rows.device)
    done[undecided] = True
    return done, torch.empty_like(wrong).scatter_(1, order, wrong)


def predict(backbone: Backbone, cache: Encoded, rows: torch.Tensor, heads: dict, qk: dict) -> torch.Tensor:
    """Predicted classes (R, m) of cached samples: rows (R, m) per run, or (m,) the same samples for every run."""
    return epoch_pass(backbone, cache, rows, heads, qk)[1]


@torch.no_grad()
def mean_max_attention(backbone: Backbone, cache: Encoded, rows: torch.Tensor, qk: dict,
                       chunk: int = 2048) -> torch.Tensor:
    """The max attention alone (R,) for rows (R, m): the query and key's part of `epoch_pass`, without the rest."""
    R, n = rows.shape
    rows = cache.here(rows)
    rows = rows.gather(1, cache.lengths[rows].argsort(dim=1, stable=True))
    total, step = torch.zeros(R, device=rows.device), max(1, chunk // R)
    for i in range(0, n, step):
        total += first_row(cache.tokens(rows[:, i:i + step]), qk, backbone.heads)[1].view(R, -1).sum(1)
    return total / (n * backbone.heads)
