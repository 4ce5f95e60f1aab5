"""Gram matrices of paper 1's tokens, as the exact trainers use them: one per run, or shared by runs of one noise draw.

The recursion of `benign.synthetic` needs, per run, products with Gram matrices of tokens: x ↦ x Cᵀ for
C = X_L K X_Rᵀ, where X_L, X_R are token sets (rows) and K is I or K₀ = W₀W₀ᵀ. Runs of one (d, seed) share every
token's noise E and W₀ and differ in ‖μ‖ and in their labels: a token is x = ε + ‖μ‖ (P₀ e₁ + P₁ e₂) with its signal
pattern P (`data.signal_pattern`). With J = [e₁ e₂],

    X_L K X_Rᵀ = E_L K E_Rᵀ + ‖μ‖ (E_L K J P_Rᵀ + P_L Jᵀ K E_Rᵀ) + ‖μ‖² P_L (JᵀKJ) P_Rᵀ
               = base + F_L C(‖μ‖) F_Rᵀ,   F = [E K J, P] (rows × 4),   C = [[0, ‖μ‖ I], [‖μ‖ I, ‖μ‖² JᵀKJ]].

So a group of V runs shares one base product (one GEMM for all of them, read once per step) and each run adds a
rank-4 term. `GroupGram` holds Gb such groups of V runs each (R = Gb·V runs, run r in group r // V);
`GroupGram.symmetric` holds one full symmetric matrix per run (Gb = R, V = 1, no low-rank part).
"""

from __future__ import annotations

import numpy as np
import torch

from .data import balanced_labels, gaussian_noise, signal_pattern


class GroupGram:
    """Per-run matrices C_r = base[r // V] + F_L[r // V] core[r] F_R[r // V]ᵀ, applied as x ↦ x C_rᵀ."""

    def __init__(self, base, V: int = 1, left=None, core=None, right=None, symmetric: bool = False):
        self.base = base  # (Gb, N, M), its rows at hand for `rows`
        # base = baseᵀ when symmetric: products use it as it is (a transposed operand is ≈ 2× slower)
        self.baseT = base if symmetric else base.transpose(1, 2).contiguous()
        self.V = V
        self.left, self.right, self.core = left, right, core  # (Gb, N, k), (Gb, M, k), (Gb, V, k, k) or None
        if core is not None:  # F_R Cᵀ of every run (R, M, k): x C_rᵀ = x baseᵀ + (x F_R Cᵀ) F_Lᵀ
            self.right_core = (right[:, None] @ core.transpose(-1, -2)).flatten(0, 1)

    @classmethod
    def symmetric(cls, C: torch.Tensor) -> "GroupGram":
        """One full symmetric matrix per run, C (R, m, m)."""
        return cls(C, symmetric=True)

    def mv(self, x: torch.Tensor) -> torch.Tensor:
        """x (R, j, M) ↦ x C_rᵀ (R, j, N) for every run r: one batched product per group, plus the rank-k terms."""
        R, j, M = x.shape
        Gb = self.base.shape[0]
        xg = x.reshape(Gb, self.V * j, M)
        out = torch.bmm(xg, self.baseT)
        if self.left is not None:
            t = torch.bmm(x, self.right_core)  # (x F_R) Cᵀ, (R, j, k)
            out = torch.baddbmm(out, t.view(Gb, self.V * j, -1), self.left.transpose(1, 2))
        return out.view(R, j, -1)

    def rows(self, runs: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        """Rows `index` (r, k) of the matrices C_r of the runs `runs` (r,), as a dense (r, k, M) tensor."""
        g = runs // self.V  # each run's group
        out = self.base[g[:, None], index]
        if self.left is not None:
            out = out + self.left[g[:, None], index] @ self.right_core[runs].transpose(1, 2)
        return out

    def row_norms(self, chunk: int = 512) -> torch.Tensor:
        """‖row‖₂ of every row of every run's C_r, (R, N)."""
        Gb, N, M = self.base.shape
        runs = torch.arange(Gb * self.V, device=self.base.device)
        parts = [self.rows(runs, torch.arange(i, min(i + chunk, N), device=runs.device).expand(len(runs), -1))
                 .norm(dim=-1) for i in range(0, N, chunk)]
        return torch.cat(parts, -1)


def signal_core(mu: torch.Tensor, JKJ: torch.Tensor) -> torch.Tensor:
    """C(‖μ‖) = [[0, ‖μ‖I], [‖μ‖I, ‖μ‖² JᵀKJ]] for every run: mu (Gb, V), JKJ (Gb, 2, 2) → (Gb, V, 4, 4)."""
    Gb, V = mu.shape
    eye = torch.eye(2, dtype=mu.dtype, device=mu.device)
    core = torch.zeros(Gb, V, 4, 4, dtype=mu.dtype, device=mu.device)
    core[..., :2, 2:] = mu[..., None, None] * eye
    core[..., 2:, :2] = mu[..., None, None] * eye
    core[..., 2:, 2:] = mu[..., None, None] ** 2 * JKJ[:, None]
    return core


def signal_gram(base, noise_L, P_L, noise_R, P_R, JKJ, mu, symmetric: bool = False) -> GroupGram:
    """The group form of X_L K X_Rᵀ = base + F_L C(‖μ‖) F_Rᵀ for Gb groups of V runs: base = E_L K E_Rᵀ
    (Gb, N, M), noise_L = E_L K J (Gb, N, 2), noise_R = E_R K J (Gb, M, 2), signal patterns P_L, P_R, JKJ = JᵀKJ
    (Gb, 2, 2) and the signal norms mu (Gb, V). `symmetric`: L = R (a Gram matrix of the training tokens)."""
    return GroupGram(base, mu.shape[1], torch.cat([noise_L, P_L], -1), signal_core(mu, JKJ),
                     torch.cat([noise_R, P_R], -1), symmetric)


def noise_products(n_samples: int, T: int, d: int, stream, sigma: float, right: torch.Tensor, chunk: int = 128):
    """E @ right for the noise E (n_samples·T, d) that `data.gaussian_noise` draws from `stream`, drawn in chunks of
    samples so that E is never held whole (the draws are prefix-stable: the same numbers as one draw)."""
    rng = np.random.default_rng(stream)
    parts = []
    for start in range(0, n_samples, chunk):
        k = min(chunk, n_samples - start)
        E = torch.from_numpy(rng.standard_normal((k, T, d))).reshape(k * T, d) * sigma
        parts.append(E.to(right) @ right)
    return torch.cat(parts)


def tokens(n_samples: int, T: int, d: int, stream, types, rho: float, sigma: float):
    """The noise E (n_samples·T, d) of a data set's tokens, from the stream `make_data` draws them from, and their
    signal pattern P (n_samples·T, 2) (balanced labels, as `make_data`)."""
    E = gaussian_noise(n_samples, T, d, stream, sigma).reshape(n_samples * T, d)
    P = signal_pattern(balanced_labels(n_samples), types, rho).reshape(n_samples * T, 2)
    return E, P


def head_values(E: torch.Tensor, P: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """h = Xν per run with ν = (e₁ − e₂)/(√2‖μ‖): E (…, rows, d), P (…, rows, 2), mu (…, V) → (…, V, rows)."""
    return ((E[..., 0] - E[..., 1])[..., None, :] / (2 ** 0.5 * mu[..., :, None])
            + ((P[..., 0] - P[..., 1]) / 2 ** 0.5)[..., None, :])
