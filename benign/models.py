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


class SingleHeadAttention(nn.Module):
    """Paper 2's model f(X) = vᵀ Xᵀ softmax(X p), v and p trained from zero (Magen et al.)."""

    def __init__(self, d: int, dtype=torch.float64):
        super().__init__()
        self.v = nn.Parameter(torch.zeros(d, dtype=dtype))
        self.p = nn.Parameter(torch.zeros(d, dtype=dtype))

    def scores(self, X: torch.Tensor) -> torch.Tensor:
        """softmax(X p) over the tokens of each input."""
        return torch.softmax(X @ self.p, dim=-1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return (self.scores(X) * (X @ self.v)).sum(-1)  # vᵀXᵀs = Σ_t s_t (x_t·v)


class OneLayerEncoder(nn.Module):
    """Paper 1's one-layer Transformer encoder (appendix, Figures 6 and 7), as the authors build it.

    A learnable [CLS] token is prepended to the T input tokens; pre-LayerNorm single-head attention with fused,
    bias-free q, k, v projections scaled by d^{-1/2}; a residual connection around it and around a pre-LayerNorm GELU
    MLP (`skip=False`: no residuals, the MLP reads the attention output); a final LayerNorm; a linear head on the
    [CLS] position. The tracked attention is the [CLS] row of the softmax, restricted to the input tokens.
    """

    def __init__(self, d: int, hidden: int, skip: bool = True):
        super().__init__()
        self.skip = skip
        self.scale = d ** -0.5
        self.cls_token = nn.Parameter(torch.randn(d))
        self.attn_norm = nn.LayerNorm(d)
        self.to_qkv = nn.Linear(d, 3 * d, bias=False)
        self.mlp_norm = nn.LayerNorm(d)
        self.mlp_in = nn.Linear(d, hidden)
        self.mlp_out = nn.Linear(hidden, d)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)

    def forward_with_scores(self, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Outputs f (n,) and the [CLS] row's attention on the input tokens (n, T) for inputs X (n, T, d)."""
        cls = self.cls_token.expand(X.shape[0], 1, -1)
        x = torch.cat([cls, X], dim=1)  # (n, T + 1, d)
        q, k, v = self.to_qkv(self.attn_norm(x)).chunk(3, dim=-1)
        attention = torch.softmax(q @ k.transpose(-1, -2) * self.scale, dim=-1)
        out = attention @ v
        if self.skip:
            x = out + x
            x = self.mlp(x) + x
        else:
            x = self.mlp(out)
        f = self.head(self.norm(x)[:, 0]).squeeze(-1)
        return f, attention[:, 0, 1:]

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp_out(nn.functional.gelu(self.mlp_in(self.mlp_norm(x))))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.forward_with_scores(X)[0]
