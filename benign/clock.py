"""The theorem's clock: gradient descent for 10⁵–10⁶ steps at constant memory, timing the events of the theorem.

The paper's main theorem (the poster's "Main Result") claims a time τ at which every clean training sample is fitted,
every noisy one is fitted (benign overfitting) or none is (not overfitting), and the test error is below δ; in the
benign regime τ = Θ(exp(n⁻¹SNR⁻²) / (α n⁻¹ σ_ε² ‖ν‖ ‖μ‖ d² max{σ_w², σ_p²})). Timing such events takes long runs,
and `synthetic.simulate` keeps every step's scores. Here nothing grows with the number of steps:

- the recursion (`synthetic.Descent`, exactly the one `simulate` runs) goes in blocks of `block` steps; within a
  block only the training outputs f (block × R × n) and the trajectory of the coordinates b (the moving part of a,
  q = U a) are kept;
- at the end of a block, vectorised over its steps, each event's condition gives every step at which it switched
  (turned true or false), so its value at any step, the first step it held and the step from which it held to the
  end; the test error and the test inputs' attention on their relevant token are decided at every step (below);
- a log-spaced history (`history_points` steps) keeps train/test loss and accuracy and the attention per token type.

The test error at a step needs the test logits C b (C = X_test U, n_test·T × 2m, built once by `grams`), as much
work as n_test / n training steps, so it is computed exactly only at the two ends τ₀, τ₁ of every block. Within the
block, b(τ) − b(τ₀) = λ(τ) (b(τ₁) − b(τ₀)) + r(τ) (along the block's chord, and the rest), so a test logit moves by
at most λ_max |z(τ₁) − z(τ₀)|_jt + ‖C_jt‖ r_max, and a test output f_j = Σ_t s_t h_t by at most half the range of
h_j times the largest of its logits' moves (its gradient in the logits is s_t (h_t − f_j), of ℓ₁ norm at most half
the range of h_j). Test samples farther from the decision boundary than this keep their sign through the block; only
the others are evaluated at every step — or, when they are many, the block is halved with an exact evaluation at
its midpoint. The test error is thus exact at every step, at a cost that shrinks as training slows down.

The same bound on the logits' moves decides when fresh inputs select their relevant token: the mean attention S of
the test inputs on their relevant token(s) has, per sample, a logit-gradient s_R(1_R − s) of ℓ₁ norm 2 s_R(1 − s_R) ≤ ½,
so within a block S stays within ½ mean_j max_t (move of z_jt) of its value at τ₀. A block whose S(τ₀) lies farther
from the level than that keeps its side of the level; the others are halved, with an exact evaluation at the midpoint
of the runs still undecided, down to single steps. The first step at which S ≥ `attention_level` is thus exact too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from . import grams, sweep, tables, theory
from .checks import ParameterError, check_all
from .data import (DATA_DEFAULTS, RELEVANT, TOKEN_TYPES, balanced_labels, clean_test_stream, init_W, noise_mask,
                   observed_labels, signal_pattern, token_types)
from .device import resolve_device, resolve_dtype, with_cpu_threads
from .synthetic import Descent, outputs

EVENTS = {  # name: the condition whose switches (steps where it turns true or false) are recorded
    "clean_fitted": "every clean training sample fitted (Y f > 0)",
    "noisy_fitted": "every noisy training sample fitted",
    "noisy_unfitted": "no noisy training sample fitted (its first switch: the first noisy label fitted)",
    "all_fitted": "every training sample fitted, clean and noisy",
    "train_loss": "training loss < ε",
    "test_error": "test error < δ",
    "test_selected": "fresh inputs select their relevant token: the test inputs' mean attention on it ≥ attention_level",
    "benign": "every training sample fitted and test error < δ (the theorem's τ, benign overfitting)",
    "not_overfitting": "every clean sample fitted, no noisy one, test error < δ (the theorem's τ, not overfitting)",
}
HISTORY = ("train_loss", "train_acc", "noisy_acc", "test_loss", "test_acc", "score_test_relevant") + tuple(
    f"score_{g}_{t}" for g in ("clean", "noisy") for t in TOKEN_TYPES)

CLOCK_SHARED = ("n", "n_test", "T", "rho", "sigma", "n_relevant", "n_weak", "label_noise", "authors_test_seed",
                "W_init", "train_W", "num_steps", "dtype", "device", "delta", "epsilon", "attention_level",
                "history_points", "block")
CLOCK_DEFAULTS = dict(DATA_DEFAULTS, W_init="identity", train_W=False, learning_rate=5e-3, num_steps=100_000,
                      dtype="float64", device="auto", delta=0.01, epsilon=0.5, attention_level=0.5, history_points=120,
                      block=1024)


@dataclass
class Batch:
    """What the long recursion needs for R runs (n samples of T tokens each, n_test test samples)."""

    G: grams.GroupGram  # x ↦ x BBᵀ
    H: grams.GroupGram  # x ↦ x BK₀Bᵀ
    h: torch.Tensor  # (R, n, T) token values Xν
    y: torch.Tensor  # (R, n) observed labels
    noisy: torch.Tensor  # (R, n) bool
    alpha: torch.Tensor  # (R,) step sizes α
    kept: slice  # the part b of a whose trajectory is kept: a₂ when only p is trained, all of a otherwise
    tests: list  # [(GroupGram, slice of b)]: test logits = Σ C b[slice]
    h_test: torch.Tensor  # (R, n_test, T)
    y_test: torch.Tensor  # (n_test,) clean labels
    types: torch.Tensor  # (T,) token types

    def test_logits(self, b: torch.Tensor, runs=None) -> torch.Tensor:
        """Logits of every test token, (R, n_test·T), at the kept coordinates b (R, M); with `runs` (r,) only those
        runs', (r, n_test·T), from b (r, M)."""
        if runs is None:
            return sum(C.mv(b[:, None, part])[:, 0] for C, part in self.tests)
        return sum(gram_rows_times(C, runs, b[:, part]) for C, part in self.tests)

    def test_attention(self, logits: torch.Tensor, runs=None) -> torch.Tensor:
        """S: the mean attention of the test inputs on their relevant token(s), (r,), from their logits (r, n_test·T)
        (of the runs `runs` if given)."""
        h = self.h_test if runs is None else self.h_test[runs]
        s, _ = outputs(logits.view(h.shape), h)
        return (s * (self.types == RELEVANT)).sum(-1).mean(-1)

    def test_margins(self, logits: torch.Tensor, scores: bool = False, runs=None):
        """Y f of every test sample, (R, n_test), from its token logits (of the runs `runs` if given); with `scores`
        also the attention scores (R, n_test, T)."""
        h = self.h_test if runs is None else self.h_test[runs]
        s, f = outputs(logits.view(h.shape), h)
        return (self.y_test * f, s) if scores else self.y_test * f


def gram_rows_times(C: grams.GroupGram, runs: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """C_r x_r for the runs `runs` (r,) only, x (r, M) → (r, N): what `C.mv` gives for every run, at the cost of
    these runs."""
    g = runs // C.V  # each run's group
    out = torch.bmm(x[:, None], C.baseT[g])[:, 0]
    if C.left is not None:
        t = torch.bmm(x[:, None], C.right_core[runs])  # (x F_R) Cᵀ, (r, 1, k)
        out = out + torch.bmm(t, C.left[g].transpose(1, 2))[:, 0]
    return out


class _Events:
    """Every step at which a condition switched (turned true or false), for R runs, fed one block at a time: the
    condition at any step is its value at step 0 flipped once per switch up to that step. The lists grow with the
    number of switches, not of steps."""

    def __init__(self, R: int):
        self.at0, self.last = {}, {}  # (R,) bool: each condition at step 0 and at the last step fed
        self.switches = {e: [[] for _ in range(R)] for e in EVENTS}

    def update(self, conditions: dict, start: int) -> None:
        for name, cond in conditions.items():  # cond: (K, R) bool over steps start … start + K − 1
            if name not in self.at0:
                self.at0[name] = self.last[name] = cond[0].cpu()
            previous = torch.cat([self.last[name].to(cond.device)[None], cond[:-1]])
            steps, runs = torch.nonzero(cond != previous, as_tuple=True)
            for step, r in zip((start + steps).tolist(), runs.tolist()):
                self.switches[name][r].append(step)
            self.last[name] = cond[-1].cpu()

    def times(self, name: str, r: int) -> dict:
        """Run r's record of a condition: its switches, the first step it held and the step from which it held to
        the end (None where it never did)."""
        switches = self.switches[name][r]
        held0, held_last = bool(self.at0[name][r]), bool(self.last[name][r])
        first = 0 if held0 else (switches[0] if switches else None)
        settled = (switches[-1] if switches else 0) if held_last else None
        return {f"{name}_first": first, f"{name}_settled": settled, f"{name}_switches": switches}


def condition_at(first, switches, steps):
    """A condition at each of `steps` from its record (`first`, `switches`): held at step 0 (first = 0), flipped at
    each switch up to the step."""
    steps = np.asarray(steps)
    flips = np.searchsorted(np.asarray(switches, dtype=np.int64), steps, side="right")
    return (flips % 2 == 1) != (first == 0)


def _train_conditions(F, y, noisy, epsilon):
    """The training-set conditions at every step of a block: F (K, R, n) outputs → (K, R) bools."""
    margin = y * F
    fit = margin > 0
    return {"clean_fitted": (fit | noisy).all(-1), "noisy_fitted": (fit | ~noisy).all(-1),
            "noisy_unfitted": (~fit | ~noisy).all(-1), "all_fitted": fit.all(-1),
            "train_loss": torch.nn.functional.softplus(-margin).mean(-1) < epsilon}


class _LogitMoves:
    """Bounds, per test logit, on how far it moves within a block τ₀ … τ₁ (see the module's docstring).

    b(τ) − b(τ₀) = λ(τ) (b(τ₁) − b(τ₀)) + r(τ), its part along the block's chord and the rest, so each test logit moves
    by λ(τ) (z₁ − z₀)_jt + C_jt r(τ): at most λ_max |z₁ − z₀|_jt + ‖C_jt‖ r_max. Nearly straight blocks make the bound
    nearly tight."""

    def __init__(self, batch: Batch):
        self.row_norms = torch.stack([C.row_norms() for C, _ in batch.tests]).norm(dim=0)  # ‖C_jt‖, (R, N)
        self.scratch = None  # b(τ) − b(τ₀) over a block, kept between blocks (fresh memory costs page faults)

    def __call__(self, B: torch.Tensor, lo: int, hi: int, runs: torch.Tensor, z_lo, z_hi) -> torch.Tensor:
        """B (K+1, R, M): b over a block; the bound for steps lo … hi of the runs `runs` (r,), (r, N), from their
        test logits z_lo, z_hi (r, N) at lo and hi."""
        tiny = torch.finfo(B.dtype).tiny
        Bk = B[lo:hi + 1] if len(runs) == B.shape[1] else B[lo:hi + 1, runs]  # (k + 2, r, M), a view for all runs
        chord = Bk[-1] - Bk[0]  # (r, M)
        length = chord.norm(dim=-1)
        if self.scratch is None or self.scratch.numel() < Bk[1:-1].numel():
            self.scratch = torch.empty(B.shape, dtype=B.dtype, device=B.device)
        inner = torch.sub(Bk[1:-1], Bk[0], out=self.scratch.view(-1)[:Bk[1:-1].numel()].view(Bk[1:-1].shape))
        lam = torch.bmm(inner.transpose(0, 1), (chord / length.clamp_min(tiny)[:, None])[..., None])[..., 0]
        sq = torch.linalg.vector_norm(inner, dim=-1).T ** 2  # (r, k): ‖b(τ) − b(τ₀)‖²
        lam_max = lam.abs().amax(-1) / length.clamp_min(tiny)  # along the chord, relative to its length
        r_max = (sq - lam ** 2 + 4 * torch.finfo(B.dtype).eps * sq).clamp_min(0).amax(-1).sqrt()  # the rest
        return lam_max[:, None] * (z_hi - z_lo).abs() + self.row_norms[runs] * r_max[:, None]


class _TestError:
    """Decides exactly, at every step of a block, whether the test error is below δ (see the module's docstring).

    A block runs from τ₀ to τ₁, where the test logits z₀, z₁ are computed exactly; `_LogitMoves` bounds how far each
    test logit moves in between, and only test samples with a margin at τ₀ within ½ (max h − min h) × that bound may
    change sign.
    """

    def __init__(self, batch: Batch, delta: float, moves: _LogitMoves):
        self.batch, self.moves = batch, moves
        R, n_test, T = batch.h_test.shape
        self.half_range = 0.5 * (batch.h_test.amax(-1) - batch.h_test.amin(-1))  # (R, n_test)
        self.limit = delta * n_test  # the error count must stay below this
        self.n_test, self.T = n_test, T
        self.slack = 1e3 * torch.finfo(batch.h.dtype).eps  # rounding of the margins themselves

    def below(self, B: torch.Tensor, z0: torch.Tensor, m0: torch.Tensor, z1: torch.Tensor):
        """B (K+1, R, M): b over a block τ₀ … τ₁; z0, z1 the test logits at both ends and m0 the test margins at τ₀
        → (K, R) bool, test error < δ at τ₀+1 … τ₁, and the test margins at τ₁."""
        ok = torch.empty(B.shape[0], B.shape[1], dtype=torch.bool, device=B.device)
        m1 = self.batch.test_margins(z1)
        self._fill(B, ok, 0, B.shape[0] - 1, torch.arange(B.shape[1], device=B.device), z0, m0, z1, m1)
        return ok[1:], m1

    def errors(self, margins: torch.Tensor) -> torch.Tensor:
        """The number of misclassified test samples (Y f ≤ 0) of each run."""
        return (margins <= 0).sum(-1)

    def _fill(self, B, ok, lo, hi, runs, z_lo, m_lo, z_hi, m_hi):
        """Decide steps lo+1 … hi for `runs`; z, m: the test logits and margins of these runs at lo and hi."""
        ok[hi, runs] = self.errors(m_hi) < self.limit
        if hi - lo == 1:
            return
        moves = self.moves(B, lo, hi, runs, z_lo, z_hi)  # per logit
        reach = self.half_range[runs] * moves.view(len(runs), self.n_test, self.T).amax(-1)
        cand = m_lo.abs() <= reach * (1 + 1e-6) + self.slack  # may change sign in the block
        fixed = ((m_lo <= 0) & ~cand).sum(-1)
        count = cand.sum(-1)
        bad, good = fixed >= self.limit, fixed + count < self.limit
        ok[lo + 1:hi, runs[bad]] = False
        ok[lo + 1:hi, runs[good]] = True
        rest = ~(bad | good)
        if not rest.any():
            return
        runs, cand, fixed = runs[rest], cand[rest], fixed[rest]
        if int(count[rest].max()) * 8 <= self.n_test:  # few: evaluate them at every step
            Bk = B[lo + 1:hi, runs]
            ok[lo + 1:hi, runs] = fixed + self._candidate_errors(Bk, runs, cand) < self.limit
            return
        mid = (lo + hi) // 2  # many: halve the block, with an exact evaluation at its midpoint
        z_mid = self.batch.test_logits(B[mid])[runs]
        m_mid = self.batch.test_margins(z_mid, runs=runs)
        rest_lo = (z_lo[rest], m_lo[rest])
        self._fill(B, ok, lo, mid, runs, *rest_lo, z_mid, m_mid)
        self._fill(B, ok, mid, hi, runs, z_mid, m_mid, z_hi[rest], m_hi[rest])

    def _candidate_errors(self, Bk, runs, cand):
        """Errors among the candidate test samples at each step, (k, r): their logits from dense rows of C."""
        T = self.T
        k = int(cand.sum(-1).max())
        idx = torch.sort(cand.int(), stable=True, dim=-1, descending=True).indices[:, :k]  # candidates first
        valid = torch.gather(cand, 1, idx)
        tokens = (idx[..., None] * T + torch.arange(T, device=idx.device)).flatten(1)
        logits = sum(torch.einsum("krm,rjm->krj", Bk[..., part], C.rows(runs, tokens))
                     for C, part in self.batch.tests)
        h = self.batch.h_test[runs[:, None], idx]  # (r, k, T)
        _, f = outputs(logits.view(*logits.shape[:2], k, T), h)
        return ((self.batch.y_test[idx] * f <= 0) & valid).sum(-1)


class _TestSelection:
    """Decides exactly, at every step of a block, whether fresh inputs select their relevant token: whether S, the
    mean attention of the test inputs on their relevant token(s), is at least `level` (see the module's docstring).

    Per test sample, the attention on the relevant tokens has a logit-gradient of ℓ₁ norm 2 s_R (1 − s_R) ≤ ½, so
    within a block S stays within ½ mean_j max_t (the bound of `_LogitMoves` on z_jt) of S(τ₀). Blocks that this
    does not settle are halved, with an exact evaluation of their undecided runs at the midpoint.
    """

    def __init__(self, batch: Batch, level: float, moves: _LogitMoves):
        self.batch, self.level, self.moves = batch, level, moves
        self.shape = batch.h_test.shape[1:]  # (n_test, T)
        self.slack = 1e3 * torch.finfo(batch.h.dtype).eps  # rounding of S itself

    def selected(self, B: torch.Tensor, z0: torch.Tensor, S0: torch.Tensor, z1: torch.Tensor):
        """B (K+1, R, M): b over a block τ₀ … τ₁; z0, z1 the test logits at both ends and S0 the mean test attention
        on the relevant token at τ₀ → (K, R) bool, S ≥ level at τ₀+1 … τ₁, and S at τ₁."""
        ok = torch.empty(B.shape[0], B.shape[1], dtype=torch.bool, device=B.device)
        S1 = self.batch.test_attention(z1)
        self._fill(B, ok, 0, B.shape[0] - 1, torch.arange(B.shape[1], device=B.device), z0, S0, z1, S1)
        return ok[1:], S1

    def _fill(self, B, ok, lo, hi, runs, z_lo, S_lo, z_hi, S_hi):
        """Decide steps lo+1 … hi for `runs`; z, S: the test logits and S of these runs at lo and hi."""
        ok[hi, runs] = S_hi >= self.level
        if hi - lo == 1:
            return
        moves = self.moves(B, lo, hi, runs, z_lo, z_hi).view(len(runs), *self.shape)
        reach = 0.5 * moves.amax(-1).clamp_max(2.0).mean(-1) + self.slack  # |S(τ) − S(lo)| ≤ reach (and ≤ 1)
        above, below = S_lo - reach >= self.level, S_lo + reach < self.level
        ok[lo + 1:hi, runs[above]] = True
        ok[lo + 1:hi, runs[below]] = False
        rest = ~(above | below)
        if not rest.any():
            return
        runs = runs[rest]
        mid = (lo + hi) // 2  # halve the block, with an exact evaluation of the undecided runs at its midpoint
        z_mid = self.batch.test_logits(B[mid, runs], runs)
        S_mid = self.batch.test_attention(z_mid, runs)
        self._fill(B, ok, lo, mid, runs, z_lo[rest], S_lo[rest], z_mid, S_mid)
        self._fill(B, ok, mid, hi, runs, z_mid, S_mid, z_hi[rest], S_hi[rest])


def log_steps(num_steps: int, points: int) -> list[int]:
    """Step 0, then `points` steps spaced evenly in log between 1 and num_steps (rounded, distinct)."""
    return sorted({0, num_steps} | {int(round(x)) for x in np.geomspace(1, num_steps, points)})


def descend(batch: Batch, *, train_W: bool, num_steps: int, delta: float, epsilon: float, attention_level: float,
            history_points: int, block: int):
    """Run the recursion for `num_steps` steps; return the events (`_Events`: every switch of every condition),
    the log-spaced steps and the history {column: (L, R)} there."""
    R, n, T = batch.h.shape
    dev, dt = batch.h.device, batch.h.dtype
    gd = Descent(batch.G, batch.H, batch.h, batch.y, alpha=batch.alpha, train_W=train_W)
    M = gd.a[:, batch.kept].shape[1]
    F = torch.empty(block + 1, R, n, device=dev, dtype=dt)  # the only per-step buffers: constant memory
    B = torch.empty(block + 1, R, M, device=dev, dtype=dt)
    moves = _LogitMoves(batch)
    events, test, selection = _Events(R), _TestError(batch, delta, moves), _TestSelection(batch, attention_level, moves)
    steps = log_steps(num_steps, history_points)
    history = {k: torch.empty(len(steps), R, dtype=torch.float64) for k in HISTORY}

    s, f = gd.forward()
    F[0], B[0] = f, gd.a[:, batch.kept]
    z0 = batch.test_logits(B[0])
    m0, S0 = batch.test_margins(z0), batch.test_attention(z0)
    _record(history, 0, batch, s, f, z0)
    _update(events, _train_conditions(F[:1], batch.y, batch.noisy, epsilon), (test.errors(m0) < test.limit)[None],
            (S0 >= attention_level)[None], 0)
    logged = 1
    for start in range(0, num_steps, block):  # block start … start + K; its first entry ends the previous block
        K = min(block, num_steps - start)
        for k in range(1, K + 1):
            gd.step(s, f)
            s, f = gd.forward()
            F[k], B[k] = f, gd.a[:, batch.kept]
            if start + k == steps[logged]:
                _record(history, logged, batch, s, f, batch.test_logits(B[k]))
                logged += 1
        z1 = batch.test_logits(B[K])
        below, m1 = test.below(B[:K + 1], z0, m0, z1)
        selected, S1 = selection.selected(B[:K + 1], z0, S0, z1)
        _update(events, _train_conditions(F[1:K + 1], batch.y, batch.noisy, epsilon), below, selected, start + 1)
        F[0], B[0], z0, m0, S0 = F[K], B[K], z1, m1, S1
    return events, steps, history


def _update(events, cond, below, selected, start):
    """Feed one block's conditions (K, R) for steps start … start + K − 1 to the events: the training conditions
    `cond`, test error < δ (`below`) and S ≥ attention_level (`selected`)."""
    events.update({**cond, "test_error": below, "test_selected": selected, "benign": cond["all_fitted"] & below,
                   "not_overfitting": cond["clean_fitted"] & cond["noisy_unfitted"] & below}, start)


def _record(history, i, batch, s, f, logits):
    """One history row: train and test metrics and the mean attention per token type, at one step."""
    margin = batch.y * f
    test = batch.test_margins(logits)
    noisy = batch.noisy
    row = {"train_loss": torch.nn.functional.softplus(-margin).mean(-1), "train_acc": (margin > 0).double().mean(-1),
           "noisy_acc": ((margin > 0) & noisy).sum(-1) / noisy.sum(-1),
           "test_loss": torch.nn.functional.softplus(-test).mean(-1), "test_acc": (test > 0).double().mean(-1),
           "score_test_relevant": batch.test_attention(logits)}
    means = tables.type_means(s[None], noisy, batch.types)[0]  # (R, 2, 4)
    for g, group in enumerate(("clean", "noisy")):
        for t, name in enumerate(TOKEN_TYPES):
            row[f"score_{group}_{name}"] = means[:, g, t]
    for key, value in row.items():
        history[key][i] = value.double().cpu()


def _group(points: list[dict], shared: dict, dev, dt) -> dict:
    """The Gram pieces of one (d, seed): its training tokens, its test tokens and W₀ (see `grams`)."""
    d, seed, n, T, N = points[0]["d"], points[0]["seed"], shared["n"], shared["T"], shared["n_test"] * shared["T"]
    m = n * T
    types = token_types(T, shared["n_relevant"], shared["n_weak"])
    E, P = (x.to(dev, dt) for x in grams.tokens(n, T, d, seed, types, shared["rho"], shared["sigma"]))
    J = torch.zeros(d, 2, device=dev, dtype=dt)
    J[0, 0] = J[1, 1] = 1.0  # [e₁ e₂]
    right = [E.T, J]
    if shared["W_init"] == "kaiming":
        W0 = init_W(d, seed).to(dev, dt)
        Z, V = W0.T @ E.T, W0[:2].T  # W₀ᵀEᵀ, W₀ᵀJ
        right += [W0 @ Z, W0 @ V]  # K₀Eᵀ, K₀J
    test = grams.noise_products(shared["n_test"], T, d, clean_test_stream(seed, shared["authors_test_seed"]),
                                shared["sigma"], torch.cat(right, 1))  # E_t [Eᵀ, J, K₀Eᵀ, K₀J], never E_t whole
    Pt = signal_pattern(balanced_labels(shared["n_test"]), types, shared["rho"]).reshape(N, 2).to(dev, dt)
    out = dict(G=E @ E.T, EJ=E[:, :2], P=P, C1=test[:, :m], EtJ=test[:, m:m + 2], Pt=Pt,
               mu=[float(p["signal_norm"]) for p in points])
    if shared["W_init"] == "kaiming":
        out.update(H=Z.T @ Z, EKJ=Z.T @ V, VV=V.T @ V, C2=test[:, m + 2:2 * m + 2], EtKJ=test[:, 2 * m + 2:])
    return out


def build(points: list[dict], shared: dict, dev, dt) -> tuple[Batch, list[int]]:
    """The batch of a chunk's points: groups of one (d, seed) share their Gram products (`grams.signal_gram`),
    padded to equal size by repeating their last point. Returns it and each point's run index in it."""
    groups = sweep.chunks(points, by=("d", "seed"))
    V = max(len(g) for g in groups)
    padded = [g + [g[-1]] * (V - len(g)) for g in groups]
    where = {id(p): gi * V + vi for gi, g in enumerate(groups) for vi, p in enumerate(g)}
    index = [where[id(p)] for p in points]
    parts = [_group(g, shared, dev, dt) for g in padded]
    S = {k: torch.stack([p[k] for p in parts]) if k != "mu" else torch.tensor([p[k] for p in parts]).to(dev, dt)
         for k in parts[0]}
    mu, eye = S["mu"], torch.eye(2, device=dev, dtype=dt).expand(len(parts), 2, 2)
    G = grams.signal_gram(S["G"], S["EJ"], S["P"], S["EJ"], S["P"], eye, mu, symmetric=True)
    C1 = grams.signal_gram(S["C1"], S["EtJ"], S["Pt"], S["EJ"], S["P"], eye, mu)
    m = G.base.shape[-1]
    if shared["W_init"] == "kaiming":
        H = grams.signal_gram(S["H"], S["EKJ"], S["P"], S["EKJ"], S["P"], S["VV"], mu, symmetric=True)
        C2 = grams.signal_gram(S["C2"], S["EtKJ"], S["Pt"], S["EKJ"], S["P"], S["VV"], mu)
    else:
        H, C2 = G, C1  # K₀ = I
    if shared["train_W"]:
        kept, tests = slice(0, 2 * m), [(C1, slice(0, m)), (C2, slice(m, 2 * m))]  # q = Bᵀa₁ + K₀Bᵀa₂
    else:
        kept, tests = slice(m, 2 * m), [(C2, slice(0, m))]  # a₁ stays 0: q = K₀Bᵀa₂
    flat = [p for g in padded for p in g]
    n, T = shared["n"], shared["T"]
    masks = torch.stack([noise_mask(n, p["noise_ratio"], shared["label_noise"], p["seed"]) for p in flat]).to(dev)
    y = observed_labels(masks).to(dev, dt)
    batch = Batch(G=G, H=H, h=grams.head_values(S["EJ"], S["P"], mu).reshape(len(flat), n, T), y=y, noisy=masks,
                  alpha=torch.tensor([float(p["learning_rate"]) for p in flat], device=dev, dtype=dt),
                  kept=kept, tests=tests,
                  h_test=grams.head_values(S["EtJ"], S["Pt"], mu).reshape(len(flat), shared["n_test"], T),
                  y_test=balanced_labels(shared["n_test"]).to(dev, dt),
                  types=token_types(T, shared["n_relevant"], shared["n_weak"]).to(dev))
    return batch, index


@with_cpu_threads
def grid_chunk(points: list[dict]) -> list[dict]:
    """Event times and log-spaced history of every point of a chunk (one n, T and model; any d, seed, ‖μ‖, η, α),
    all runs in one batch. A sweep kernel (`benign.sweep.run(grid_chunk, points, by=CHUNK_BY)`)."""
    points, shared = sweep.chunk_points(points, CLOCK_DEFAULTS, CLOCK_SHARED)
    dev = resolve_device(shared["device"])
    dt = resolve_dtype(shared["dtype"], dev)
    started = time.perf_counter()
    with torch.inference_mode():
        batch, index = build(points, shared, dev, dt)
        events, steps, history = descend(batch, train_W=shared["train_W"], num_steps=shared["num_steps"],
                                         delta=shared["delta"], epsilon=shared["epsilon"],
                                         attention_level=shared["attention_level"],
                                         history_points=shared["history_points"], block=shared["block"])
    wall = time.perf_counter() - started
    rows = []
    for p, r in zip(points, index):
        row = dict(p)
        for name in EVENTS:
            row.update(events.times(name, r))
        series = {k: history[k][:, r].tolist() for k in HISTORY}
        row.update({k: v[-1] for k, v in series.items()})  # final metrics
        best = int(np.nanargmin(series["test_loss"]))
        row.update(test_loss_min=series["test_loss"][best], test_loss_min_step=steps[best],
                   chunk_wall_s=wall, history={"step": steps, **series})
        rows.append(row)
    return rows


CHUNK_BY = ("n", "T", "train_W", "W_init")  # one batch per model and sample shape


def run(points: list[dict], *, cache=None, executor=None, progress: bool = False) -> pd.DataFrame:
    """`grid_chunk` over a grid, one batch per (n, T, model), through `benign.sweep.run` (cached, resumable)."""
    points = [{**{k: CLOCK_DEFAULTS[k] for k in CHUNK_BY}, **p} for p in points]
    return sweep.run(grid_chunk, points, by=CHUNK_BY, cache=cache, executor=executor, progress=progress)


def theorem_grid(d_values, n_values, n_snr2_values, seeds, learning_rate_factors, **fixed) -> list[dict]:
    """Grid points for the theorem's clock: every (d, n, n·SNR², seed, α factor), with ‖μ‖ = σ √(n·SNR² · d / n) and
    α = factor · n / d (so α d / n, the theorem's unit of time with W₀ = I, is the factor). `fixed`: any other
    `CLOCK_DEFAULTS` parameter. A grid with no cell in the theory's benign regime (`theory.regime`) is refused."""
    check_all(d_values=d_values, n_values=n_values, n_snr2_values=n_snr2_values, seeds=seeds,
              learning_rate_factors=learning_rate_factors)
    sigma = fixed.get("sigma", CLOCK_DEFAULTS["sigma"])
    points = [dict(fixed, d=d, n=n, seed=seed, signal_norm=float(sigma * np.sqrt(x * d / n)),
                   learning_rate=float(factor * n / d))
              for d in d_values for n in n_values for x in n_snr2_values for seed in seeds
              for factor in learning_rate_factors]
    regimes = {theory.regime(p["signal_norm"], p["d"], p["n"], sigma) for p in points}
    if "benign" not in regimes:
        raise ParameterError(f"the grid d_values = {d_values}, n_values = {n_values}, n_snr2_values = "
                             f"{n_snr2_values} has no benign cell: it needs some n·SNR² < 1 with SNR > d^(-1/4), "
                             "i.e. n·SNR² between n/√d and 1")
    return points
