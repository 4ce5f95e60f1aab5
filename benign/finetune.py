"""The paper's real-data protocol (Table 2/6, Figures 8/9): noisy-label fine-tuning of the last attention layer.

Phase 1 trains only the head (ViT: classifier; BERT: pooler + classifier) for 300 epochs on a clean "pretrain"
subset. Phase 2 re-initialises the last layer's query and key (weights and biases, `reset_parameters`) and trains only
them for 2000 epochs on a "finetune" subset of size n whose labels were replaced with probability η by a random
*different* class. Batch 16; the optimizer the authors' runs actually used (the Hugging Face Trainer defaults: AdamW,
lr 5e-5 decaying linearly to 0, no weight decay, gradient clipping at 1.0), or their configured SGD (lr 1e-3,
momentum 0.9) by name.

Speed by caching, exactly: every layer below the last is frozen and deterministic (dropout 0), so the hidden states
entering the last layer are computed once per sample. Only the first token's output reaches the head, so phase 2
needs the first token's query, the keys and values of all tokens, and the frozen rest of the last layer for that one
token; the keys enter only through uₕ = W_Kₕᵀ qₕ, which makes a step O(D² + L·D·H) per sample instead of a full
forward pass. Phase 1 needs only the final first-token features. Runs of the same size n (seeds × noise rates) are
trained side by side as one batched program; `full_forward_phase2` is the literal reference through the Hugging Face
model, and the tests check that both give the same losses.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import warnings

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from . import __version__, realdata
from .checks import ParameterError, check_all
from .paths import cache_dir
from .records import write_atomic

warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm.auto inside Jupyter without widgets

SEEDS = (42, 314, 2718)
MAX_LENGTH = 128  # the authors' max_seq_length
OPTIMIZERS = {  # name: (class, keyword arguments)
    "adamw": ("AdamW", dict(lr=5e-5, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)),  # HF Trainer defaults
    "sgd": ("SGD", dict(lr=1e-3, momentum=0.9)),  # the authors' config (never passed to their Trainer)
}
MAX_GRAD_NORM = 1.0
RUNS_VERSION = 1  # of the cached runs' numbers and fields


@dataclass(frozen=True)
class Protocol:
    """Everything that decides a run besides data set, backbone, seed, η and n."""

    pretrain_num_epochs: int = 300
    num_epochs: int = 2000
    max_steps: int = 0  # phase 2 stops after this many optimizer steps (the HF Trainer's max_steps); 0: no cap
    batch_size: int = 16
    optimizer: str = "adamw"
    add_special_tokens: bool = False
    pretrain_size: int = 0  # 0: the paper's size for the data set
    max_test: int = 0  # 0: the whole test split

    def __post_init__(self):
        check_all(pretrain_num_epochs=self.pretrain_num_epochs, num_epochs=self.num_epochs, max_steps=self.max_steps,
                  batch_size=self.batch_size, optimizer=self.optimizer, add_special_tokens=self.add_special_tokens,
                  pretrain_size=self.pretrain_size, max_test=self.max_test)


# ------------------------------------------------------------------------------------------------ the backbone
class Backbone:
    """A pretrained BERT or ViT for sequence/image classification, frozen, dropout 0, eager attention."""

    def __init__(self, name: str, num_labels: int, vit_recipe: dict | None = None, progress: bool = False,
                 device: str = "cpu"):
        from transformers import AutoConfig

        from .device import resolve_device

        self.name = name
        self.device = resolve_device(device)
        self.folder, self.fingerprint = realdata.backbone_folder(name, vit_recipe, progress)
        self.num_labels = num_labels
        config = AutoConfig.from_pretrained(self.folder)
        if config.model_type not in ("bert", "vit"):
            raise ParameterError(f"backbone {name!r} is a {config.model_type} model: use a BERT or a ViT")
        self.arch = config.model_type
        self.kind = "text" if self.arch == "bert" else "image"
        self.model = self._load(seed=0).to(self.device)
        self.model.eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.layer = self._last_layer()
        attn = self._attention_modules()
        self.query, self.key, self.value = attn
        self.heads = self.model.config.num_attention_heads
        self.head_dim = self.model.config.hidden_size // self.heads
        self.hidden = self.model.config.hidden_size
        self.scaling = self.head_dim ** -0.5
        self._preprocessor = None

    def _load(self, seed: int):
        """from_pretrained after torch.manual_seed(seed), as the authors did: the new head's init follows the seed."""
        from transformers import BertForSequenceClassification, ViTForImageClassification
        from transformers.utils import logging as hf_logging

        cls = BertForSequenceClassification if self.arch == "bert" else ViTForImageClassification
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                return cls.from_pretrained(self.folder, num_labels=self.num_labels, attention_probs_dropout_prob=0.0,
                                           hidden_dropout_prob=0.0, attn_implementation="eager",
                                           ignore_mismatched_sizes=True)
        finally:
            hf_logging.set_verbosity(verbosity)

    def _last_layer(self):
        if self.arch == "bert":
            return self.model.bert.encoder.layer[-1]
        vit = self.model.vit
        return vit.layers[-1] if hasattr(vit, "layers") else vit.encoder.layer[-1]

    def _attention_modules(self):
        if self.arch == "bert":
            s = self.layer.attention.self
            return s.query, s.key, s.value
        a = self.layer.attention
        if hasattr(a, "q_proj"):  # transformers 5
            return a.q_proj, a.k_proj, a.v_proj
        return a.attention.query, a.attention.key, a.attention.value

    def qk_names(self) -> list[str]:
        """The parameter names of the last layer's query and key (weights and biases) in the full model."""
        names = {id(p): n for n, p in self.model.named_parameters()}
        return [names[id(m.weight)] for m in (self.query, self.key)] + [names[id(m.bias)] for m in (self.query,
                                                                                                     self.key)]

    def head_names(self) -> list[str]:
        """Phase 1's trainable parameters: ViT classifier; BERT pooler + classifier (weight, bias each)."""
        mods = ["bert.pooler.dense", "classifier"] if self.arch == "bert" else ["classifier"]
        return [f"{m}.{p}" for m in mods for p in ("weight", "bias")]

    def seeded_head(self, seed: int) -> dict[str, torch.Tensor]:
        """The head as from_pretrained initialises it after torch.manual_seed(seed) (pooler: pretrained weights)."""
        params = dict(self._load(seed).named_parameters())
        return {n: params[n].detach().clone().to(self.device) for n in self.head_names()}

    def reset_qk(self, seed: int) -> dict[str, torch.Tensor]:
        """Fresh query and key (weights, biases) from the modules' own reset_parameters, under a seeded RNG."""
        out = {}
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            for mod in (self.query, self.key):
                fresh = copy.deepcopy(mod).cpu()  # the CPU generator: the same draw on every device
                fresh.reset_parameters()
                out[mod] = fresh.to(self.device)
        q, k = out[self.query], out[self.key]
        return {"Wq": q.weight.detach().clone(), "bq": q.bias.detach().clone(),
                "Wk": k.weight.detach().clone(), "bk": k.bias.detach().clone()}

    def original_qk(self) -> dict[str, torch.Tensor]:
        return {"Wq": self.query.weight.detach(), "bq": self.query.bias.detach(),
                "Wk": self.key.weight.detach(), "bk": self.key.bias.detach()}

    # --------------------------------------------------------------------------------------------- inputs
    def preprocessor(self):
        if self._preprocessor is None:
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            if self.arch == "bert":
                from transformers import AutoTokenizer

                self._preprocessor = AutoTokenizer.from_pretrained(self.folder)
            else:
                from transformers import AutoImageProcessor

                self._preprocessor = AutoImageProcessor.from_pretrained(self.folder)
        return self._preprocessor

    def model_inputs(self, inputs, add_special_tokens: bool = False) -> dict[str, torch.Tensor]:
        """Tokenised text (max length 128, padded to the longest in the batch) or processed images."""
        if self.arch == "bert":
            enc = self.preprocessor()(list(inputs), padding=True, truncation=True, max_length=MAX_LENGTH,
                                      add_special_tokens=add_special_tokens, return_tensors="pt")
            return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
        images = list(realdata.to_rgb(np.asarray(inputs)))
        return {"pixel_values": self.preprocessor()(images, return_tensors="pt")["pixel_values"]}

    # ---------------------------------------------------------------------------------- the frozen layers
    @torch.no_grad()
    def last_layer_inputs(self, batch: dict[str, torch.Tensor]):
        """Hidden states entering the last layer (N, L, D) and the key mask (N, L) for one batch of model inputs.

        The last layer itself is skipped: the encoder's layer list is cut short for the call.
        """
        batch = {k: v.to(self.device) for k, v in batch.items()}
        with self._without_last_layer():
            if self.arch == "bert":
                h = self.model.bert(**batch, output_hidden_states=True).hidden_states[-1]
                return h, batch["attention_mask"].bool()
            h = self.model.vit(pixel_values=batch["pixel_values"], output_hidden_states=True).hidden_states[-1]
        return h, torch.ones(h.shape[:2], dtype=torch.bool, device=h.device)

    @contextlib.contextmanager
    def _without_last_layer(self):
        owner = self.model.bert.encoder if self.arch == "bert" else \
            (self.model.vit if hasattr(self.model.vit, "layers") else self.model.vit.encoder)
        attr = "layers" if hasattr(owner, "layers") else "layer"
        full = getattr(owner, attr)
        setattr(owner, attr, torch.nn.ModuleList(list(full)[:-1]))
        try:
            yield
        finally:
            setattr(owner, attr, full)

    def keys_input(self, h: torch.Tensor) -> torch.Tensor:
        """What query, key and value are applied to: BERT (post-LN) the hidden state, ViT (pre-LN) its LayerNorm."""
        return h if self.arch == "bert" else self.layer.layernorm_before(h)

    # ----------------------------------------------------- the last layer for the first token, many runs at once
    def first_row(self, x, mask, qk) -> torch.Tensor:
        """Softmax scores of the first token's query row, per run, sample and head: (R, B, H, L).

        x: (R, B, L, D) inputs of the last layer's projections; mask: (R, B, L); qk: Wq, Wk (R, D, D), bq, bk (R, D).
        The keys enter through uₕ = W_Kₕᵀ qₕ, so no key vector is formed.
        """
        R, B, L, D = x.shape
        H, dh = self.heads, self.head_dim
        q = torch.baddbmm(qk["bq"][:, None, :], x[:, :, 0], qk["Wq"].transpose(1, 2)).view(R, B, H, dh)
        u = torch.einsum("rbhe,rhed->rbhd", q, qk["Wk"].view(R, H, dh, D))
        c = torch.einsum("rbhe,rhe->rbh", q, qk["bk"].view(R, H, dh))
        s = (torch.einsum("rbhd,rbld->rbhl", u, x) + c[..., None]) * self.scaling
        s = s.masked_fill(~mask[:, :, None, :], torch.finfo(s.dtype).min)
        return torch.softmax(s, dim=-1)

    def first_token_output(self, x, h0, probs) -> torch.Tensor:
        """The last layer's output at the first token (ViT: after the final LayerNorm), from the scores: (R, B, D)."""
        R, B, L, D = x.shape
        H, dh = self.heads, self.head_dim
        mixed = torch.einsum("rbhl,rbld->rbhd", probs, x)  # Σₜ sₕₜ xₜ, then the value map per head
        ctx = torch.einsum("rbhd,hed->rbhe", mixed, self.value.weight.view(H, dh, D)) + self.value.bias.view(H, dh)
        ctx = ctx.reshape(R, B, D)
        if self.arch == "bert":
            a = self.layer.attention.output(ctx, h0)
            return self.layer.output(self.layer.intermediate(a), a)
        attn = self.layer.attention
        o_proj = attn.o_proj if hasattr(attn, "o_proj") else attn.output.dense
        a = o_proj(ctx) + h0
        mlp = self.layer.mlp(self.layer.layernorm_after(a)) if hasattr(self.layer, "mlp") else \
            self.layer.output.dense(self.layer.intermediate(self.layer.layernorm_after(a)))
        return self.model.vit.layernorm(a + mlp)

    def head_logits(self, z, head) -> torch.Tensor:
        """Classifier logits from first-token features z (R, B, D) with per-run head parameters (stacked)."""
        if self.arch == "bert":
            z = torch.tanh(torch.baddbmm(head["bert.pooler.dense.bias"][:, None], z,
                                         head["bert.pooler.dense.weight"].transpose(1, 2)))
        return torch.baddbmm(head["classifier.bias"][:, None], z, head["classifier.weight"].transpose(1, 2))


# --------------------------------------------------------------------------------------------- the feature cache
@dataclass
class Encoded:
    """Cached last-layer inputs of some samples: x (N, L, D) for query/key/value, h0 (N, D) residual, mask (N, L)."""

    x: torch.Tensor
    h0: torch.Tensor
    mask: torch.Tensor
    z: torch.Tensor  # (N, D): the final first-token features with the backbone's own query and key (phase 1)


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
    with torch.no_grad():
        for i in range(0, n, chunk):
            batch = backbone.model_inputs(inputs[i:i + chunk], add_special_tokens)
            h, mask = backbone.last_layer_inputs(batch)
            x = backbone.keys_input(h)
            probs = backbone.first_row(x[None], mask[None], original)
            zs.append(backbone.first_token_output(x[None], h[None, :, 0], probs)[0])
            if keep_tokens:
                xs.append(x)
                h0s.append(h[:, 0])
                masks.append(mask)
    back = torch.as_tensor(np.argsort(order), device=backbone.device)
    z = torch.cat(zs)[back]
    if not keep_tokens:
        empty = torch.empty(0, device=backbone.device)
        return Encoded(empty, empty, empty.bool(), z)
    L = max(t.shape[1] for t in xs)
    x = torch.cat([F.pad(t, (0, 0, 0, L - t.shape[1])) for t in xs])[back]
    mask = torch.cat([F.pad(m, (0, L - m.shape[1])) for m in masks])[back]
    return Encoded(x, torch.cat(h0s)[back], mask, z)


# ------------------------------------------------------------------------------------------------- training
def make_optimizer(params, optimizer: str):
    """The named optimizer; its fused implementation where this torch has one for the device (same update)."""
    name, kwargs = OPTIMIZERS[optimizer]
    cls = getattr(torch.optim, name)
    try:
        return cls(params, **kwargs, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return cls(params, **kwargs)


def clip_per_run(params: list[torch.Tensor], max_norm: float = MAX_GRAD_NORM) -> None:
    """clip_grad_norm_ for each run separately (parameters stacked along dim 0)."""
    R = params[0].shape[0]
    sq = sum(p.grad.reshape(R, -1).pow(2).sum(1) for p in params)
    coef = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
    if bool((coef == 1.0).all()):
        return
    for p in params:
        p.grad.mul_(coef.view(R, *([1] * (p.dim() - 1))))


@dataclass
class Fit:
    epoch_loss: np.ndarray  # (R, epochs): mean of the batch losses of each epoch (what the HF Trainer logs)
    epoch_max_attention: np.ndarray  # (R, epochs) or (R, 0)
    wall_s: float


def fit(params: list[torch.Tensor], batch_loss, n: int, epochs: int, batch_size: int, optimizer: str,
        generators: list[torch.Generator], epoch_end=None, progress: bool = False, stacked: bool = True,
        max_steps: int = 0) -> Fit:
    """The HF Trainer loop for R runs side by side: shuffled batches, linear decay to 0, per-run clipping at 1.0.

    batch_loss(idx) gets sample indices (R, b) and returns the mean loss of each run (R,). Parameters are stacked
    along dim 0 (one slice per run), or, with stacked=False, the parameters of a single run (R = 1). With max_steps,
    training stops after that many steps (the last epoch may be partial) and the learning rate decays over them.
    """
    R, device = len(generators), params[0].device
    steps = math.ceil(n / batch_size)
    total = steps * epochs if max_steps <= 0 else min(steps * epochs, max_steps)
    epochs = math.ceil(total / steps)
    opt = make_optimizer(params, optimizer)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: max(0.0, (total - t) / max(1, total)))
    losses, attention = np.zeros((R, epochs)), []
    started = time.perf_counter()
    bar = _bar(epochs, progress)
    for epoch in range(epochs):
        order = torch.stack([torch.randperm(n, generator=g) for g in generators]).to(device)
        running = torch.zeros(R, device=device)
        steps_now = min(steps, total - epoch * steps)
        for s in range(steps_now):
            loss = batch_loss(order[:, s * batch_size:(s + 1) * batch_size])
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()
            if stacked:
                clip_per_run(params)
            else:
                torch.nn.utils.clip_grad_norm_(params, MAX_GRAD_NORM)
            opt.step()
            sched.step()
            running += loss.detach()
        losses[:, epoch] = (running / steps_now).cpu().numpy()
        if epoch_end is not None:
            attention.append(epoch_end())
        bar.update(1)
    bar.close()
    att = np.stack(attention, 1) if attention else np.zeros((R, 0))
    return Fit(losses, att, time.perf_counter() - started)


def _bar(total: int, progress: bool):
    if progress:
        from tqdm import tqdm

        return tqdm(total=total, leave=False)
    return _NoBar()


class _NoBar:
    def update(self, _):
        pass

    def close(self):
        pass


def _stack(dicts: list[dict]) -> dict[str, torch.Tensor]:
    return {k: torch.stack([d[k] for d in dicts]) for k in dicts[0]}


def phase1(backbone: Backbone, z: torch.Tensor, labels: torch.Tensor, heads: list[dict], epochs: int,
           batch_size: int, optimizer: str, seeds: list[int]) -> tuple[dict, Fit]:
    """Train the head (R runs) on cached first-token features z (R, P, D) with clean labels (R, P)."""
    params = {k: v.clone().requires_grad_(True) for k, v in _stack(heads).items()}
    plist = list(params.values())
    runs = torch.arange(z.shape[0], device=z.device)[:, None]

    def batch_loss(idx):
        logits = backbone.head_logits(z[runs, idx], params)
        return F.cross_entropy(logits.flatten(0, 1), labels[runs, idx].flatten(), reduction="none") \
            .view(idx.shape).mean(1)

    gens = [torch.Generator().manual_seed(s) for s in seeds]
    result = fit(plist, batch_loss, z.shape[1], epochs, batch_size, optimizer, gens)
    return {k: v.detach() for k, v in params.items()}, result


def phase2(backbone: Backbone, cache: Encoded, sample_idx: torch.Tensor, labels: torch.Tensor, heads: dict,
           qk: list[dict], epochs: int, batch_size: int, optimizer: str, seeds: list[int],
           track_attention: bool = True, progress: bool = False, max_steps: int = 0) -> tuple[dict, Fit]:
    """Train the last layer's query and key of R runs on cached last-layer inputs.

    sample_idx (R, n): rows of `cache` that form each run's finetune subset; labels (R, n): their noisy labels;
    heads: stacked phase-1 heads (R, ...); qk: the re-initialised query/key of each run.
    """
    params = {k: v.clone().requires_grad_(True) for k, v in _stack(qk).items()}
    plist = [params[k] for k in ("Wq", "bq", "Wk", "bk")]
    runs = torch.arange(sample_idx.shape[0], device=sample_idx.device)[:, None]

    def batch_loss(idx):
        rows = sample_idx[runs, idx]
        x, mask, h0 = cache.x[rows], cache.mask[rows], cache.h0[rows]
        z = backbone.first_token_output(x, h0, backbone.first_row(x, mask, params))
        logits = backbone.head_logits(z, heads)
        return F.cross_entropy(logits.flatten(0, 1), labels[runs, idx].flatten(), reduction="none") \
            .view(idx.shape).mean(1)

    def epoch_end():
        with torch.no_grad():
            return mean_max_attention(backbone, cache, sample_idx, params).cpu().numpy()

    gens = [torch.Generator().manual_seed(s) for s in seeds]
    result = fit(plist, batch_loss, sample_idx.shape[1], epochs, batch_size, optimizer, gens,
                 epoch_end if track_attention else None, progress, max_steps=max_steps)
    return {k: v.detach() for k, v in params.items()}, result


def mean_max_attention(backbone: Backbone, cache: Encoded, sample_idx: torch.Tensor, qk: dict,
                       chunk: int = 256) -> torch.Tensor:
    """Per run: the mean over heads and samples of the largest softmax score in the first token's query row."""
    R, n = sample_idx.shape
    total = torch.zeros(R, device=sample_idx.device)
    for i in range(0, n, chunk):
        rows = sample_idx[:, i:i + chunk]
        probs = backbone.first_row(cache.x[rows], cache.mask[rows], qk)
        total += probs.amax(-1).sum((1, 2))
    return total / (n * backbone.heads)


@torch.no_grad()
def predict(backbone: Backbone, cache: Encoded, rows: torch.Tensor, heads: dict, qk: dict,
            chunk: int = 256) -> torch.Tensor:
    """Predicted classes (R, len(rows)) of cached samples with per-run query/key and heads."""
    R = heads["classifier.weight"].shape[0]
    out = []
    for i in range(0, len(rows), chunk):
        r = rows[i:i + chunk]
        x = cache.x[r][None].expand(R, -1, -1, -1)
        mask, h0 = cache.mask[r][None].expand(R, -1, -1), cache.h0[r][None].expand(R, -1, -1)
        z = backbone.first_token_output(x, h0, backbone.first_row(x, mask, qk))
        out.append(backbone.head_logits(z, heads).argmax(-1))
    return torch.cat(out, 1)


# ------------------------------------------------------------------- the literal reference: full forward passes
def full_forward_phase2(backbone: Backbone, inputs, labels: np.ndarray, head: dict, qk: dict, epochs: int,
                        batch_size: int, optimizer: str, seed: int, add_special_tokens: bool = False,
                        track_attention: bool = True, max_steps: int = 0):
    """Phase 2 of one run as the authors ran it: the whole Hugging Face model, every layer, every step.

    A fresh copy of the model gets the phase-1 head and the re-initialised query/key; every parameter but the last
    layer's query and key is frozen; the same loop, schedule, clipping (clip_grad_norm_) and batch order as `phase2`.
    Returns the trained model and the Fit; used by the benchmark and the equivalence test.
    """
    model = with_parameters(backbone, head, qk)
    trainable = set(backbone.qk_names())
    for name, p in model.named_parameters():
        p.requires_grad_(name in trainable)
    named = dict(model.named_parameters())
    plist = [named[n] for n in backbone.qk_names()]
    batch_all = {k: v.to(backbone.device) for k, v in backbone.model_inputs(inputs, add_special_tokens).items()}
    y = torch.as_tensor(labels, device=backbone.device)

    def batch_loss(idx):
        rows = idx[0]
        logits = model(**{k: v[rows] for k, v in batch_all.items()}).logits
        return F.cross_entropy(logits, y[rows])[None]

    def epoch_end():
        with torch.no_grad():
            attentions = model(**batch_all, output_attentions=True).attentions
            return attentions[-1][:, :, 0, :].amax(-1).mean().reshape(1).cpu().numpy()

    gens = [torch.Generator().manual_seed(seed)]
    result = fit(plist, batch_loss, len(labels), epochs, batch_size, optimizer, gens,
                 epoch_end if track_attention else None, stacked=False, max_steps=max_steps)
    return model, result


def with_parameters(backbone: Backbone, head: dict, qk: dict):
    """A copy of the full model with the given head and last-layer query/key (Wq, bq, Wk, bk) put in."""
    model = backbone._load(seed=0).to(backbone.device)  # a fresh instance: deepcopy would share output hooks
    model.load_state_dict(backbone.model.state_dict())
    model.eval()
    params = dict(model.named_parameters())
    names = dict(zip(("Wq", "Wk", "bq", "bk"), backbone.qk_names()))
    with torch.no_grad():
        for k, v in {**head, **{names[k]: v for k, v in qk.items()}}.items():
            params[k].copy_(v)
    return model


@torch.no_grad()
def full_logits(backbone: Backbone, inputs, head: dict, add_special_tokens: bool = False) -> torch.Tensor:
    """Logits of the whole Hugging Face model with the given head (the reference for the cached features)."""
    model = with_parameters(backbone, head, {})
    batch = {k: v.to(backbone.device) for k, v in backbone.model_inputs(inputs, add_special_tokens).items()}
    return model(**batch).logits


# -------------------------------------------------------------------------------------- runs, cached on disk
def cache_version() -> str:
    """The package version and the version of the run format: part of every cache key (bump RUNS_VERSION when a
    change of the code changes the numbers; or delete .cache/finetune)."""
    return f"{__version__}/{RUNS_VERSION}"


def _key(parts: dict) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _runs_dir() -> Path:
    return cache_dir() / "finetune"


@dataclass
class Task:
    """One row of the table: a data set (by its short name) with the backbone of its kind."""

    dataset: str
    backbone: str
    data: realdata.RawData = field(repr=False)
    bb: Backbone = field(repr=False)

    @property
    def label(self) -> str:
        return f"{self.dataset} · {realdata.BACKBONE_LABELS.get(self.backbone, self.backbone)}"


def prepare(dataset: str, text_backbone: str, image_backbone: str, vit_recipe: dict | None = None,
            progress: bool = False, device: str = "auto") -> Task:
    """Load a data set and the backbone of its kind (text: BERT, images: ViT) with a head for its classes."""
    data = realdata.load(dataset)
    name = text_backbone if data.kind == "text" else image_backbone
    bb = Backbone(name, data.num_classes, vit_recipe, progress, device)
    if bb.kind != data.kind:
        raise ParameterError(f"backbone {name!r} reads {bb.kind}, but {dataset!r} holds {data.kind}: "
                             f"choose a {'text' if data.kind == 'text' else 'image'} backbone")
    return Task(data.name, name, data, bb)


def run_grid(task: Task, protocol: Protocol, seeds, noise_ratios, sample_sizes, progress: bool = False) -> pd.DataFrame:
    """Every (seed, η, n) run of one task, from the disk cache where possible; one row per run.

    Columns: dataset, backbone, seed, noise_ratio, n, pretrain_size, base_acc, train_loss, train_acc, test_acc,
    fitted_noisy (share of flipped labels fitted), loss (per epoch), max_attention (per epoch).
    """
    data, bb = task.data, task.bb
    seeds, noise_ratios = list(seeds), [float(v) for v in noise_ratios]
    pool = len(data.train_labels)
    pretrain = min(protocol.pretrain_size or data.pretrain_size, pool - min(sample_sizes))
    sample_sizes = sorted(n for n in sample_sizes if pretrain + n <= pool)  # larger n: n/a, as BreastMNIST's 1000
    if pretrain < 1 or not sample_sizes:
        raise ParameterError(f"{data.name} has {pool} training samples: too few for pretrain_size "
                             f"{protocol.pretrain_size or data.pretrain_size} and n = {min(sample_sizes)}")
    common = dict(dataset=data.name, data=data.fingerprint(), backbone=bb.fingerprint, protocol=protocol.__dict__,
                  pretrain=pretrain, version=cache_version())
    keys = {(s, eta, n): _key({**common, "seed": s, "noise_ratio": eta, "n": n})
            for s in seeds for eta in noise_ratios for n in sample_sizes}
    done = {k: _read(v) for k, v in keys.items()}
    missing = [k for k, v in done.items() if v is None]
    if missing:
        fresh = _compute(task, protocol, pretrain, seeds, missing, progress)
        for k, row in fresh.items():
            write_atomic(_runs_dir() / f"{keys[k]}.json", json.dumps(row) + "\n")
            done[k] = row
    rows = [done[(s, eta, n)] for n in sample_sizes for eta in noise_ratios for s in seeds]
    return pd.DataFrame(rows)


def _read(key: str):
    file = _runs_dir() / f"{key}.json"
    return json.loads(file.read_text()) if file.exists() else None


@dataclass
class _Prepared:
    """The frozen layers' outputs for one task: finetune samples and test set with tokens, the rest features only."""

    fin: Encoded
    test: Encoded
    row_of: dict  # training-pool index -> row of `fin`
    z_of: dict  # training-pool index -> phase-1 feature
    encode_s: float


def _encode_all(task: Task, protocol: Protocol, splits: dict, test_rows: np.ndarray) -> _Prepared:
    data, bb = task.data, task.bb
    started = time.perf_counter()
    fin_union = np.unique(np.concatenate([fin for _, fin in splits.values()]))
    pre_union = np.setdiff1d(np.unique(np.concatenate([pre for pre, _ in splits.values()])), fin_union)
    take = _taker(data.train_inputs)
    fin = encode(bb, take(fin_union), protocol.add_special_tokens)
    test = encode(bb, _taker(data.test_inputs)(test_rows), protocol.add_special_tokens)
    z_of = {int(i): fin.z[r] for r, i in enumerate(fin_union)}
    if len(pre_union):
        pre = encode(bb, take(pre_union), protocol.add_special_tokens, keep_tokens=False)
        z_of.update({int(i): pre.z[r] for r, i in enumerate(pre_union)})
    return _Prepared(fin, test, {int(i): r for r, i in enumerate(fin_union)}, z_of, time.perf_counter() - started)


def _phase1_heads(task: Task, protocol: Protocol, splits: dict, seeds: list[int], prep: _Prepared,
                  test_y: torch.Tensor):
    """Phase 1 for every seed side by side; returns per-seed heads, base accuracies and the Fit."""
    bb, labels = task.bb, torch.as_tensor(task.data.train_labels)
    z = torch.stack([torch.stack([prep.z_of[int(i)] for i in splits[s][0]]) for s in seeds])
    y = torch.stack([labels[torch.as_tensor(splits[s][0])] for s in seeds]).to(bb.device)
    heads, result = phase1(bb, z, y, [bb.seeded_head(s) for s in seeds], protocol.pretrain_num_epochs,
                           protocol.batch_size, protocol.optimizer, seeds)
    logits = bb.head_logits(prep.test.z[None].expand(len(seeds), -1, -1), heads)
    base = (logits.argmax(-1) == test_y).double().mean(1).cpu().numpy()
    return {s: {k: v[i] for k, v in heads.items()} for i, s in enumerate(seeds)}, base, result


def _phase2_group(task: Task, protocol: Protocol, splits: dict, group: list[tuple], prep: _Prepared,
                  heads: dict, test_y: torch.Tensor, progress: bool) -> list[dict]:
    """Phase 2 of the runs (seed, η, n) of one n side by side; one result dict per run."""
    data, bb, dev = task.data, task.bb, task.bb.device
    rows, noisy, flipped = [], [], []
    for s, eta, n in group:
        idx = splits[s][1][:n]
        labels, flips = realdata.add_label_noise(data.train_labels[idx], eta, data.num_classes, s)
        rows.append(torch.as_tensor([prep.row_of[int(i)] for i in idx]))
        noisy.append(torch.as_tensor(labels))
        flipped.append(flips)
    sample_idx, y = torch.stack(rows).to(dev), torch.stack(noisy).to(dev)
    run_heads = _stack([heads[s] for s, _, _ in group])
    qk, result = phase2(bb, prep.fin, sample_idx, y, run_heads, [bb.reset_qk(s) for s, _, _ in group],
                        protocol.num_epochs, protocol.batch_size, protocol.optimizer, [s for s, _, _ in group],
                        progress=progress, max_steps=protocol.max_steps)
    test_pred = predict(bb, prep.test, torch.arange(len(test_y), device=dev), run_heads, qk)
    test_acc = (test_pred == test_y).double().mean(1).cpu().numpy()
    out = []
    for r in range(len(group)):
        one = lambda d: {k: v[r:r + 1] for k, v in d.items()}  # noqa: E731
        fitted = (predict(bb, prep.fin, sample_idx[r], one(run_heads), one(qk))[0] == y[r]).cpu().numpy()
        out.append(dict(train_loss=float(result.epoch_loss[r, -1]), train_acc=float(fitted.mean()),
                        fitted_noisy=float(fitted[flipped[r]].mean()) if flipped[r].any() else None,
                        n_flipped=int(flipped[r].sum()), test_acc=float(test_acc[r]),
                        epochs_run=int(result.epoch_loss.shape[1]), loss=result.epoch_loss[r].tolist(),
                        max_attention=result.epoch_max_attention[r].tolist(),
                        wall_s=round(result.wall_s / len(group), 2)))
    return out


def _compute(task: Task, protocol: Protocol, pretrain: int, seeds: list[int], wanted: list[tuple],
             progress: bool) -> dict:
    """The wanted runs: frozen layers once, phase 1 once per seed, phase 2 by groups of equal n."""
    data = task.data
    need_seeds = sorted({s for s, _, _ in wanted}, key=seeds.index)
    n_max = max(n for _, _, n in wanted)
    splits = {s: realdata.split_indices(len(data.train_labels), pretrain, n_max, s) for s in need_seeds}
    test_rows = np.arange(len(data.test_labels))[:protocol.max_test or None]
    test_y = torch.as_tensor(data.test_labels[test_rows], device=task.bb.device)
    prep = _encode_all(task, protocol, splits, test_rows)
    heads, base, p1 = _phase1_heads(task, protocol, splits, need_seeds, prep, test_y)
    out = {}
    for n in sorted({n for _, _, n in wanted}):
        group = [k for k in wanted if k[2] == n]
        for (s, eta, _), result in zip(group, _phase2_group(task, protocol, splits, group, prep, heads, test_y,
                                                              progress)):
            i = need_seeds.index(s)
            out[(s, eta, n)] = dict(dataset=task.dataset, backbone=task.backbone, seed=s, noise_ratio=eta, n=n,
                                    pretrain_size=pretrain, n_test=len(test_rows), base_acc=float(base[i]),
                                    phase1_loss=float(p1.epoch_loss[i, -1]), **result,
                                    encode_s=round(prep.encode_s, 2), phase1_s=round(p1.wall_s, 2),
                                    protocol=protocol.__dict__, benign_version=__version__)
    return out


def _taker(inputs):
    if isinstance(inputs, list):
        return lambda idx: [inputs[int(i)] for i in idx]
    return lambda idx: inputs[np.asarray(idx, dtype=np.int64)]


# --------------------------------------------------------------------------------------------------- summaries
def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std over seeds per (dataset, η, n): train loss, test accuracy, base accuracy (std with ddof 0)."""
    g = runs.groupby(["dataset", "backbone", "noise_ratio", "n"], sort=False)
    out = g.agg(train_loss=("train_loss", "mean"), train_loss_std=("train_loss", lambda v: float(np.std(v))),
                test_acc=("test_acc", "mean"), test_acc_std=("test_acc", lambda v: float(np.std(v))),
                train_acc=("train_acc", "mean"), base_acc=("base_acc", "mean"), seeds=("seed", "count"))
    return out.reset_index()


def table(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 2's layout: rows data sets, columns base and (η, n) cells 'loss, acc ± std' (accuracy in %)."""
    rows = {}
    for (ds, bb), part in summary.groupby(["dataset", "backbone"], sort=False):
        row = {"base": f"{100 * part.base_acc.iloc[0]:.2f}"}
        for _, r in part.iterrows():
            row[f"η={r.noise_ratio:g}, n={r.n}"] = (f"{r.train_loss:.2f}, {100 * r.test_acc:.1f}"
                                                     f"±{100 * r.test_acc_std:.1f}")
        rows[ds] = row
    frame = pd.DataFrame(rows).T.fillna("n/a")
    cells = sorted((c for c in frame.columns if c != "base"), key=_cell_of)
    return frame[["base", *cells]]


def curves(runs: pd.DataFrame) -> pd.DataFrame:
    """The max-attention curves in long form: dataset, noise_ratio, n, seed, epoch, max_attention, loss."""
    parts = []
    for _, r in runs.iterrows():
        e = np.arange(1, len(r.max_attention) + 1)
        parts.append(pd.DataFrame({"dataset": r.dataset, "noise_ratio": r.noise_ratio, "n": r.n, "seed": r.seed,
                                   "epoch": e, "max_attention": r.max_attention, "loss": r.loss[:len(e)]}))
    return pd.concat(parts, ignore_index=True)


PAPER_GRID = dict(seeds=list(SEEDS), noise_ratios=[0.0, 0.2], sample_sizes=[20, 200, 1000])


def differences(protocol: Protocol, seeds, noise_ratios, sample_sizes) -> pd.DataFrame:
    """Where a run departs from the paper's protocol: setting, paper, here (one row saying so if nowhere)."""
    paper = {**Protocol().__dict__, **PAPER_GRID}
    here = {**protocol.__dict__, "seeds": list(seeds), "noise_ratios": [float(v) for v in noise_ratios],
            "sample_sizes": list(sample_sizes)}
    labels = {"pretrain_num_epochs": "phase 1 epochs", "num_epochs": "phase 2 epochs",
              "max_steps": "phase 2 steps at most (0: no cap)", "batch_size": "batch size",
              "optimizer": "optimizer", "add_special_tokens": "BERT special tokens",
              "pretrain_size": "pretrain subset (0: the paper's size)", "max_test": "test samples (0: all)",
              "seeds": "seeds", "noise_ratios": "η", "sample_sizes": "n"}
    rows = [{"setting": labels[k], "paper": paper[k], "here": here[k]} for k in labels if paper[k] != here[k]]
    if protocol.max_steps:
        run = {n: min(protocol.num_epochs, protocol.max_steps / math.ceil(n / protocol.batch_size))
               for n in here["sample_sizes"]}
        rows.append({"setting": "phase 2 epochs run, per n", "paper": f"{paper['num_epochs']} for every n",
                     "here": ", ".join(f"n={n}: {e:.3g}" for n, e in run.items())})
    if not rows:
        rows = [{"setting": "none", "paper": "the authors' protocol", "here": "the authors' protocol"}]
    return pd.DataFrame(rows)


def assets(tasks: list[Task]) -> pd.DataFrame:
    """What each row of the table ran on: data, backbone, sizes and where they came from."""
    rows = []
    for t in tasks:
        record = realdata.backbone_record(t.bb.folder)
        made = ""
        if record:
            made = (f"pre-trained here: {record['recipe']['epochs']} epochs on {record['data']['train_samples']} "
                    f"Fashion-MNIST images, test accuracy {record['fashion_mnist_test_accuracy']:.3f}")
        rows.append({"dataset": t.dataset, "source": t.data.source, "classes": t.data.num_classes,
                     "train pool": len(t.data.train_labels), "test split": len(t.data.test_labels),
                     "backbone": realdata.BACKBONE_LABELS.get(t.backbone, t.backbone),
                     "layers": t.bb.model.config.num_hidden_layers, "hidden": t.bb.hidden, "heads": t.bb.heads,
                     "made": made})
    return pd.DataFrame(rows)


def with_paper(ours: pd.DataFrame, paper: dict, nearest: dict) -> pd.DataFrame:
    """Our table with the paper's row for the same data set (or the nearest one, named) under each of our rows."""
    rows = {}
    for ds, row in ours.iterrows():
        rows[f"{ds} (here)"] = row
        ref = ds if ds in paper else nearest.get(ds)
        if ref is None:
            continue
        base, cells = paper[ref]
        prow = {"base": f"{base:.2f}"}
        for col in ours.columns:
            if col == "base":
                continue
            eta, n = _cell_of(col)
            cell = cells.get((eta, n))
            prow[col] = "n/a" if cell is None else (f"{cell[0]:.2f}, {cell[1]:.1f}" +
                                                    (f"±{cell[2]:.1f}" if cell[2] is not None else ""))
        rows[f"{ref} (paper)" if ref == ds else f"{ref} (paper, nearest)"] = pd.Series(prow)
    return pd.DataFrame(rows).T[ours.columns]


def _cell_of(column: str) -> tuple[float, int]:
    eta, n = column.split(", ")
    return float(eta.split("=")[1]), int(n.split("=")[1])


def table_metrics(summary: pd.DataFrame) -> dict:
    """Flat metrics.json keys: <dataset>_base_acc and <dataset>_noise<η>_n<n>_<quantity>."""
    from .expected import table2_key

    metrics = {}
    for _, r in summary.iterrows():
        metrics[f"{r.dataset}_base_acc"] = float(r.base_acc)
        for q in ("train_loss", "test_acc", "test_acc_std", "train_acc"):
            metrics[table2_key(r.dataset, r.noise_ratio, r.n, q)] = float(r[q])
    return metrics


def attention_ends(curves: pd.DataFrame) -> pd.DataFrame:
    """Per data set, η and n: the mean (over seeds) max attention after the first and after the last epoch."""
    g = curves.groupby(["dataset", "noise_ratio", "n", "epoch"], sort=False).max_attention.mean().reset_index()
    ends = g.groupby(["dataset", "noise_ratio", "n"], sort=False).max_attention.agg(["first", "last"])
    return ends.reset_index()


def uniform_attention(task: Task) -> float:
    """1 / (mean number of tokens) over a few training inputs: the max score of uniform attention."""
    sample = _taker(task.data.train_inputs)(np.arange(min(256, len(task.data.train_labels))))
    batch = task.bb.model_inputs(sample)
    if "attention_mask" in batch:
        return float((1 / batch["attention_mask"].sum(1).float()).mean())
    h, _ = task.bb.last_layer_inputs(batch)
    return 1 / h.shape[1]


def headline(runs: pd.DataFrame, summary: pd.DataFrame) -> dict:
    """The numbers the table's text quotes: the first data set at the largest η and the smallest n."""
    first = summary.dataset.iloc[0]
    cell = summary[(summary.dataset == first) & (summary.noise_ratio == summary.noise_ratio.max())]
    cell = cell[cell.n == cell.n.min()].iloc[0]
    mask = (runs.dataset == first) & (runs.noise_ratio == cell.noise_ratio) & (runs.n == cell.n)
    fitted = runs[mask].fitted_noisy.dropna()
    return {"eta": float(cell.noise_ratio), "n": float(cell.n), "train_loss": float(cell.train_loss),
            "test_acc": 100 * float(cell.test_acc), "base_acc": 100 * float(cell.base_acc),
            "fitted": 100 * float(fitted.mean()) if len(fitted) else float("nan")}



PROTOCOL_PARAMETERS = ("pretrain_num_epochs", "num_epochs", "max_steps", "batch_size", "optimizer",
                       "add_special_tokens", "pretrain_size", "max_test")


def runs_from(parameters: dict) -> tuple[Protocol, list, pd.DataFrame]:
    """What a notebook's parameters ask for: the protocol, the prepared tasks and every (cached) run, one per row."""
    p = parameters
    protocol = Protocol(**{k: p[k] for k in PROTOCOL_PARAMETERS})
    recipe = dict(epochs=p["vit_pretrain_epochs"], samples=p["vit_pretrain_samples"])
    tasks = [prepare(name, p["text_backbone"], p["image_backbone"], recipe, p["progress"], p["device"])
             for name in p["datasets"]]
    runs = pd.concat([run_grid(task, protocol, p["seeds"], p["noise_ratios"], p["sample_sizes"], p["progress"])
                      for task in tasks], ignore_index=True)
    return protocol, tasks, runs
