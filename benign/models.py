"""The literal models, written as the papers write them. They are the reference the fast trainers are tested against."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.functional import softplus


class TokenSelectionAttention(nn.Module):
    """Paper 1's model f(X) = νᵀ Xᵀ softmax(X W p), ν fixed, W and p trained (Sakamoto & Sato, Eq. 1)."""

    def __init__(self, W0: torch.Tensor, nu: torch.Tensor, p0: torch.Tensor | None = None):
        super().__init__()
        self.W = nn.Parameter(W0.clone())
        self.p = nn.Parameter(torch.zeros_like(nu) if p0 is None else p0.clone())
        self.register_buffer("nu", nu.clone())

    def scores(self, X: torch.Tensor) -> torch.Tensor:
        """softmax(X W p) over the T tokens of each input, computed as the authors do: (X @ W) @ p."""
        return torch.softmax((X @ self.W) @ self.p, dim=-1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return (self.scores(X) * (X @ self.nu)).sum(-1)  # νᵀXᵀs = Σ_t s_t (x_t·ν)


def logistic_loss(f: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean of ℓ(y f) with ℓ(z) = log(1 + e^{−z})."""
    return softplus(-y * f).mean()


def train_autograd(model: nn.Module, X, y, *, learning_rate: float, num_steps: int, params=None) -> list[float]:
    """Plain full-batch gradient descent by autograd on `params` (default: all parameters); the loss before each step
    and after the last one."""
    params = list(model.parameters()) if params is None else list(params)
    losses = []
    for _ in range(num_steps):
        loss = logistic_loss(model(X), y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for param, grad in zip(params, grads):
                param -= learning_rate * grad
        losses.append(loss.item())
    with torch.no_grad():
        losses.append(logistic_loss(model(X), y).item())
    return losses
