"""The last attention layer at the first token, for R runs side by side: the computation phase 2 repeats.

Only the first token's output reaches the classification head, so a phase-2 step needs the first token's query
q = W_Q x₀ + b_Q, the keys of all tokens, the values, and the frozen rest of the last layer for that one token.
The keys enter only through the scores s_{ht} = q_hᵀ(W_{K,h} x_t + b_{K,h}) / √d_h. Two facts make them cheap:
q_hᵀ W_{K,h} x_t = u_h · x_t with u_h = W_{K,h}ᵀ q_h, so no key vector is ever formed (a sample costs O(D² + H·L·D)
instead of O(L·D²)); and q_h · b_{K,h} adds the same number to every score of a row, which the softmax ignores, so
the key bias drops out exactly (its gradient is zero: it stays where it was initialised, in the authors' runs too).

`forward` and `backward` are written out by hand — the backward of every operation on the first token's path,
with the frozen weights shared by all runs as single large matrix products and the per-run query and key as
batched ones — because autograd spends much of such a small step on bookkeeping and layout copies. The tests check
both against the Hugging Face model and autograd.

Shapes: N = R·B samples (`Tokens`, the samples of run r at rows r·B … r·B + B − 1); per-run query and key
Wq, Wk (R, D, D), bq (R, D); heads (R, ...) per run. A sample's tokens are the inputs of the last layer's projections
(BERT: its hidden states; ViT: their LayerNorm); the samples are grouped by length, and each group is padded only to
its own longest sample (the score and mixing products, the only ones that see every token, cost H·L·D per sample).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..checks import ParameterError

ACTIVATIONS = {"gelu": "none", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh"}  # HF name: F.gelu approximation


@dataclass
class Tail:
    """The frozen parts of the last layer after the scores, and the norm after it (ViT: the final LayerNorm).

    BERT (post-LN): a = LN₁(W_O c + b_O + h₀), z = LN₂(W₂ gelu(W₁ a + b₁) + b₂ + a).
    ViT (pre-LN):   A = W_O c + b_O + h₀,      z = LN₂(A + W₂ gelu(W₁ LN₁(A) + b₁) + b₂)  (LN₂: the final norm).
    """

    arch: str
    heads: int
    Wv: torch.Tensor
    bv: torch.Tensor
    Wo: torch.Tensor
    bo: torch.Tensor
    norm1: torch.nn.LayerNorm
    W1: torch.Tensor
    b1: torch.Tensor
    W2: torch.Tensor
    b2: torch.Tensor
    norm2: torch.nn.LayerNorm
    approximate: str  # GELU: "none" (erf) or "tanh"

    @staticmethod
    def activation(hidden_act: str) -> str:
        if hidden_act not in ACTIVATIONS:
            raise ParameterError(f"the backbone's activation {hidden_act!r} is not supported: use a BERT or ViT with "
                                 f"one of {', '.join(ACTIVATIONS)}")
        return ACTIVATIONS[hidden_act]


def _ln(x, ln):
    return torch.native_layer_norm(x, ln.normalized_shape, ln.weight, ln.bias, ln.eps)


def _ln_back(grad, x, mean, rstd, ln):
    return torch.ops.aten.native_layer_norm_backward(grad, x, ln.normalized_shape, mean, rstd, ln.weight, ln.bias,
                                                     [True, False, False])[0]


@dataclass
class Tokens:
    """The last layer's inputs of N samples: the first token's (x0, and h0 its hidden state, the residual), and every
    token in groups of similar length — group g holds the samples order[g's slice] as x (n_g, L_g, D) with the mask
    of real tokens keep (n_g, L_g)."""

    x0: torch.Tensor  # (N, D)
    h0: torch.Tensor  # (N, D)
    groups: list[tuple[torch.Tensor, torch.Tensor]]
    order: torch.Tensor | None  # (N,) the samples in the order of the groups; None: one group in sample order
    inverse: torch.Tensor | None  # (N,) where each sample is in that order

    @classmethod
    def whole(cls, x0: torch.Tensor, h0: torch.Tensor, x: torch.Tensor, keep: torch.Tensor) -> "Tokens":
        """All N samples as one group, in their own order (no order: nothing to gather or put back)."""
        return cls(x0, h0, [(x, keep)], None, None)

    def per_group(self, fn, values: torch.Tensor) -> torch.Tensor:
        """fn(values of a group's samples, x, keep) for every group, put back in sample order (N, ...)."""
        if self.order is None:
            return fn(values, *self.groups[0])
        parts, start = [], 0
        for x, keep in self.groups:
            parts.append(fn(values.index_select(0, self.order[start:start + len(x)]), x, keep))
            start += len(x)
        return torch.cat(parts).index_select(0, self.inverse)


def first_row(tokens: Tokens, qk: dict, heads: int) -> tuple[list, torch.Tensor, torch.Tensor]:
    """Softmax scores of the first token's query row, per group (n_g, H, L_g); the largest score of each sample and
    head (N, H); and q/√dₕ (R, H, B, dₕ) for the backward."""
    R = qk["Wq"].shape[0]
    N, D = tokens.x0.shape
    B, dh = N // R, D // heads
    q = torch.baddbmm(qk["bq"][:, None, :], tokens.x0.view(R, B, D), qk["Wq"].transpose(1, 2))  # (R, B, D)
    q4 = (q * dh ** -0.5).view(R, B, heads, dh).transpose(1, 2)  # (R, H, B, dₕ): qₕ/√dₕ
    u = torch.matmul(q4, qk["Wk"].view(R, heads, dh, D)).transpose(1, 2).reshape(N, heads, D)  # W_Kₕᵀ qₕ/√dₕ
    probs = []

    def scores(u_g, x, keep):
        s = torch.bmm(u_g, x.transpose(1, 2)).masked_fill_(~keep[:, None, :], torch.finfo(x.dtype).min)
        probs.append(torch.softmax(s, dim=-1))
        return probs[-1].amax(-1)

    return probs, tokens.per_group(scores, u), q4


def features(tokens: Tokens, qk: dict, tail: Tail, save: bool = False):
    """The last layer's output at the first token z (R, B, D) (ViT: after the final norm), the largest score per
    sample and head (N, H) and, with save, what `backward` needs."""
    R = qk["Wq"].shape[0]
    N, D = tokens.x0.shape
    probs, top, q4 = first_row(tokens, qk, tail.heads)
    p = iter(probs)
    m = tokens.per_group(lambda _, x, keep: torch.bmm(next(p), x), tokens.x0)  # (N, H, D): Σₜ sₕₜ xₜ
    z, kept = mixed(m, tokens.h0, tail)
    return z.view(R, N // R, D), top, ((tokens, probs, q4, *kept) if save else None)


def mixed(m: torch.Tensor, h0: torch.Tensor, tail: Tail) -> tuple[torch.Tensor, tuple]:
    """The frozen rest of the last layer from each head's mix of the tokens m (N, H, D) (m_h = Σₜ sₕₜ xₜ) and the
    first token's hidden state h0 (N, D): the first token's output z (N, D) and what `backward` needs. Whatever
    chooses the scores — the query and key, or free scores (`reach`) — the rest is this one computation."""
    N, H, D = m.shape
    dh = D // H
    ctx = torch.bmm(m.transpose(0, 1), tail.Wv.view(H, dh, D).transpose(1, 2)).transpose(0, 1).reshape(N, D)
    A = torch.addmm(h0 + tail.bo, ctx + tail.bv, tail.Wo.t())  # each head's value map, output, residual
    a, mu1, r1 = _ln(A, tail.norm1)
    pre = torch.addmm(tail.b1, a, tail.W1.t())
    y2 = torch.addmm(a if tail.arch == "bert" else A, F.gelu(pre, approximate=tail.approximate), tail.W2.t())
    z, mu2, r2 = _ln(y2.add_(tail.b2), tail.norm2)
    return z, (A, mu1, r1, pre, y2, mu2, r2)


def forward(tokens: Tokens, qk: dict, head: dict, tail: Tail, save: bool = False):
    """Logits (R, B, C), the largest score per sample and head (N, H) and, with save, what `backward` needs."""
    z, top, saved = features(tokens, qk, tail, save)
    pooled = _pool(z, head) if tail.arch == "bert" else None
    logits = _classify(z if pooled is None else pooled, head)
    return logits, top, (saved + (pooled,) if save else None)


def _pool(z, head: dict) -> torch.Tensor:
    """BERT's pooler on the first token: tanh(W_P z + b_P), per run."""
    return torch.tanh(torch.baddbmm(head["bert.pooler.dense.bias"][:, None], z,
                                    head["bert.pooler.dense.weight"].transpose(1, 2)))


def _classify(features, head: dict) -> torch.Tensor:
    return torch.baddbmm(head["classifier.bias"][:, None], features, head["classifier.weight"].transpose(1, 2))


def head_logits(z, head: dict, arch: str) -> torch.Tensor:
    """Classifier logits from first-token features z (R, B, D) with per-run heads (BERT: pooler + classifier)."""
    return _classify(_pool(z, head) if arch == "bert" else z, head)


def cross_entropy(logits, y) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean cross-entropy per run (R,) of logits (R, B, C) on labels y (R, B), and its gradient ∂/∂logits."""
    logp = torch.log_softmax(logits, -1)
    loss = -logp.gather(-1, y[..., None]).squeeze(-1).mean(1)
    dlogits = logp.exp_().scatter_add_(-1, y[..., None], torch.full_like(logp[..., :1], -1.0)).div_(y.shape[1])
    return loss, dlogits


def loss_and_grad(tokens: Tokens, y, qk: dict, head: dict, tail: Tail,
                  max_grad_norm: float = math.inf) -> tuple[torch.Tensor, dict, torch.Tensor]:
    """Phase 2: the loss per run (R,) on labels y (R, B), its gradient with respect to Wq, bq, Wk (bk: 0), clipped
    per run to norm ≤ `max_grad_norm` as `clip_grad_norm_` does, and the norm before clipping (R,)."""
    logits, _, saved = forward(tokens, qk, head, tail, save=True)
    loss, dlogits = cross_entropy(logits, y)
    return (loss, *backward(saved, dlogits, qk, head, tail, max_grad_norm))


def head_loss_and_grad(z, y, head: dict, arch: str,
                       max_grad_norm: float = math.inf) -> tuple[torch.Tensor, dict, torch.Tensor]:
    """Phase 1: the loss per run (R,) of the head on fixed features z (R, B, D), its gradient clipped per run to norm
    ≤ `max_grad_norm`, and the norm before clipping (R,). Each weight's gradient is a product of (R, B, ·) factors
    (dlogitsᵀ feats, dpreᵀ z): the norm comes from them, and the clipping scales them before the products."""
    pooled = _pool(z, head) if arch == "bert" else None
    feats = z if pooled is None else pooled
    loss, dlogits = cross_entropy(_classify(feats, head), y)
    factors = {"classifier": (dlogits, feats)}
    if pooled is not None:
        factors["bert.pooler.dense"] = (torch.bmm(dlogits, head["classifier.weight"]).mul_(1 - pooled * pooled), z)
    norm = sum(outer_norm_sq(d, f) + d.sum(1).square().sum(1) for d, f in factors.values()).clamp_(min=0).sqrt()
    coef = clip_coef(norm, max_grad_norm).view(-1, 1, 1)
    grads = {}
    for name, (d, f) in factors.items():  # a layer's weight gradient dᵀf and bias gradient Σ d, d scaled by coef
        d = d * coef
        grads.update({f"{name}.weight": torch.bmm(d.transpose(1, 2), f), f"{name}.bias": d.sum(1)})
    return loss, grads, norm


def outer_norm_sq(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """‖aᵀ b‖²_F for each leading index of a (…, B, P) and b (…, B, Q), from the B × B Gram matrices:
    Σ_ij (a aᵀ)_ij (b bᵀ)_ij — O(B²·(P + Q)) instead of forming the P × Q product. Never below zero in exact
    arithmetic (the sum of a product of two positive semidefinite matrices); rounding can take a norm that is zero
    in all but rounding a hair below it, so callers clamp the sum at zero before the square root."""
    return (a @ a.mT).mul_(b @ b.mT).sum((-2, -1))


def clip_coef(norm: torch.Tensor, max_grad_norm: float) -> torch.Tensor:
    """`clip_grad_norm_`'s factor per run: max_norm / (norm + 10⁻⁶), at most 1."""
    return (max_grad_norm / (norm + 1e-6)).clamp_(max=1.0)


def backward(saved, dlogits, qk: dict, head: dict, tail: Tail,
             max_grad_norm: float = math.inf) -> tuple[dict, torch.Tensor]:
    """The gradient of Σ_runs loss with respect to each run's Wq, bq, Wk, bk, given ∂loss/∂logits (R, B, C), clipped
    per run to norm ≤ `max_grad_norm`; and the norm before clipping (R,). The weights' gradients are products of
    (R, B, ·) factors — dqᵀ x₀ and, per head, qₕᵀ duₕ — so the norm comes from those factors (`outer_norm_sq`) and
    the clipping scales them, never a D × D gradient: a step passes over each D × D matrix in the optimizer only."""
    tokens, probs, q4, A, mu1, r1, pre, y2, mu2, r2, pooled = saved
    R, B, _ = dlogits.shape
    N, D = tokens.x0.shape
    H, dh = tail.heads, D // tail.heads
    dfeat = torch.bmm(dlogits, head["classifier.weight"])  # (R, B, D)
    if tail.arch == "bert":
        dfeat = torch.bmm(dfeat * (1 - pooled * pooled), head["bert.pooler.dense.weight"])
    dy2 = _ln_back(dfeat.reshape(N, D), y2, mu2, r2, tail.norm2)
    dpre = torch.ops.aten.gelu_backward(dy2 @ tail.W2, pre, approximate=tail.approximate)
    if tail.arch == "bert":
        dA = _ln_back(torch.addmm(dy2, dpre, tail.W1), A, mu1, r1, tail.norm1)
    else:
        dA = _ln_back(dpre @ tail.W1, A, mu1, r1, tail.norm1).add_(dy2)
    dctx = (dA @ tail.Wo).view(N, H, dh)
    dm = torch.bmm(dctx.transpose(0, 1), tail.Wv.view(H, dh, D)).transpose(0, 1)  # (N, H, D)
    p = iter(probs)

    def scores_back(dm_g, x, keep):
        p_g = next(p)
        dp = torch.bmm(dm_g, x.transpose(1, 2))  # (n_g, H, L_g)
        return torch.bmm(p_g * (dp - (p_g * dp).sum(-1, keepdim=True)), x)  # the softmax's backward, then Σₜ · xₜ

    du = tokens.per_group(scores_back, dm).view(R, B, H, D).transpose(1, 2).contiguous()  # (R, H, B, D)
    dq = torch.matmul(du, qk["Wk"].view(R, H, dh, D).transpose(2, 3)).transpose(1, 2).reshape(R, B, D)
    dq *= dh ** -0.5
    x0 = tokens.x0.view(R, B, D)
    norm = (outer_norm_sq(dq, x0) + dq.sum(1).square().sum(1) + outer_norm_sq(q4, du).sum(1)).clamp_(min=0).sqrt()
    coef = clip_coef(norm, max_grad_norm)
    dq, q4 = dq * coef.view(R, 1, 1), q4 * coef.view(R, 1, 1, 1)  # each product scaled through its smaller factor
    grads = {"Wq": torch.bmm(dq.transpose(1, 2), x0), "bq": dq.sum(1),
             "Wk": torch.matmul(q4.transpose(2, 3), du).reshape(R, D, D), "bk": torch.zeros_like(qk["bk"])}
    return grads, norm


def step_flops(tail: Tail, lengths: torch.Tensor, classes: int) -> float:
    """Floating-point operations of one phase-2 step, forward and backward, for samples of `lengths` real tokens.

    Multiply-adds per sample: forward q, u (= W_Kᵀq), value, output projection (and BERT's pooler): 4–5 D²; the MLP
    2·D·F; scores and mixing 2·H·L·D; classifier C·D. Backward: the input gradients through the frozen parts (the
    same again, pooler to value) and the weight gradients of W_Q and W_K (2 D²) and dq (D²). Twice that in FLOPs.
    """
    D, F_ = tail.W1.shape[1], tail.W1.shape[0]
    squares = 11 if tail.arch == "bert" else 9
    per_sample = squares * D * D + 4 * D * F_ + 2 * classes * D
    return 2.0 * float(per_sample * len(lengths) + 4 * tail.heads * D * lengths.sum())


def frozen_flops(tail: Tail, layers: int, tokens: int, token_pairs: int) -> float:
    """Floating-point operations of `layers` whole Transformer layers (the frozen ones, run once by `encode`) over
    samples of `tokens` real tokens in all and Σ L² = `token_pairs`: per token the four D×D projections and the MLP,
    2·(4·D² + 2·D·F); per pair of tokens the scores and the mixing, 4·D."""
    D, F_ = tail.W1.shape[1], tail.W1.shape[0]
    return 2.0 * layers * ((4 * D * D + 2 * D * F_) * tokens + 2 * D * token_pairs)


def head_flops(tail: Tail, classes: int) -> float:
    """Floating-point operations of one phase-1 sample-step (the head on fixed features), forward and the weight
    gradients: the classifier 2·C·D (BERT: with its pooler, 2·D² more)."""
    D = tail.W1.shape[1]
    return 2.0 * 2 * (classes * D + (D * D if tail.arch == "bert" else 0))

