"""Which flipped labels phase 2 could fit at all: the reach of the last layer's attention over its tokens.

Phase 2 trains only the last layer's query and key, so all it can change is the scores of the first token's query
row: how much each head takes of each token. Replace those scores by *free* ones — logits per sample and per head,
shared with nothing — keep the rest of the last layer, the final norm and the phase-1 head frozen exactly as phase 2
does (`firsttoken.mixed`, the same computation), and fit the noisy labels with Adam: a flipped label that free
scores cannot make the prediction is out of reach of any query and key (`free_attention_fit`, an upper bound of what
phase 2 can fit). A lower, simpler witness: does some single token, taken whole by every head, give the flipped
label (`single_token_fit`)? Both are per sample: each sample's scores are its own, so the fit of one sample never
depends on another's.

`reach` gives both for the flipped samples of a run; `runs` stores their shares beside the share phase 2 fitted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..checks import ParameterError
from .firsttoken import Tail, head_logits, mixed

STEPS = 300  # Adam steps of the free-score fit (the fit is per sample, so its cost grows with the flipped samples)
LEARNING_RATE = 0.1  # on logits of order one: a score moves by about this much per step


def _check(x: torch.Tensor, keep: torch.Tensor, h0: torch.Tensor, labels: torch.Tensor, tail: Tail,
           steps: int = 1, learning_rate: float = 1.0) -> None:
    if x.dim() != 3 or keep.shape != x.shape[:2] or h0.shape != (x.shape[0], x.shape[2]):
        raise ParameterError(f"reach needs tokens x (N, L, D), their mask (N, L) and h0 (N, D); got {tuple(x.shape)}, "
                             f"{tuple(keep.shape)} and {tuple(h0.shape)}")
    if labels.shape != (x.shape[0],):
        raise ParameterError(f"reach needs one label per sample: {x.shape[0]} samples, labels of shape "
                             f"{tuple(labels.shape)}")
    if x.shape[2] % tail.heads:
        raise ParameterError(f"the tokens' width {x.shape[2]} is not a multiple of the {tail.heads} heads")
    if not (isinstance(steps, int) and not isinstance(steps, bool) and steps >= 1):
        raise ParameterError(f"reach steps must be an integer >= 1, not {steps!r}")
    if not (isinstance(learning_rate, (int, float)) and not isinstance(learning_rate, bool) and
            np.isfinite(learning_rate) and learning_rate > 0):
        raise ParameterError(f"reach learning_rate must be a number > 0, not {learning_rate!r}")


def query_key_scores(x: torch.Tensor, keep: torch.Tensor, qk: dict, heads: int) -> torch.Tensor:
    """The scores phase 2's query and key give (N, H, L) (one run's Wq, bq, Wk, bk, unstacked): q_hᵀ k_{h,t} / √d_h
    of the first token's query against every token's key, padding at the dtype's lowest value."""
    N, L, D = x.shape
    dh = D // heads
    q = (x[:, 0] @ qk["Wq"].t() + qk["bq"]).view(N, heads, dh)
    k = (x @ qk["Wk"].t() + qk["bk"]).view(N, L, heads, dh)
    s = torch.einsum("nhd,nlhd->nhl", q, k) * dh ** -0.5
    return s.masked_fill(~keep[:, None, :], torch.finfo(x.dtype).min)


def free_attention_logits(x: torch.Tensor, keep: torch.Tensor, h0: torch.Tensor, scores: torch.Tensor, head: dict,
                          tail: Tail) -> torch.Tensor:
    """Class logits (N, C) when the first token's query row takes the free scores (N, H, L) (softmax over the real
    tokens), the rest frozen: the last layer's value, output, MLP and norms, the final norm and the head (one run's,
    unstacked) — phase 2's forward with the query and key replaced by the scores."""
    probs = torch.softmax(scores.masked_fill(~keep[:, None, :], torch.finfo(x.dtype).min), dim=-1)
    return _logits(torch.bmm(probs, x), h0, head, tail)


def _logits(m: torch.Tensor, h0: torch.Tensor, head: dict, tail: Tail) -> torch.Tensor:
    z, _ = mixed(m, h0, tail)
    return head_logits(z[None], {k: v[None] for k, v in head.items()}, tail.arch)[0]


def free_attention_fit(x: torch.Tensor, keep: torch.Tensor, h0: torch.Tensor, labels: torch.Tensor, head: dict,
                       tail: Tail, steps: int = STEPS, learning_rate: float = LEARNING_RATE) -> np.ndarray:
    """(N,) bool: free scores per sample and head, fitted with Adam (cross-entropy, from uniform attention), make
    the sample's label the prediction at some step. An upper bound of what any query and key can fit."""
    _check(x, keep, h0, labels, tail, steps, learning_rate)
    if len(labels) == 0:
        return np.zeros(0, dtype=bool)
    scores = torch.zeros(x.shape[0], tail.heads, x.shape[1], dtype=x.dtype, device=x.device, requires_grad=True)
    opt = torch.optim.Adam([scores], lr=learning_rate)
    reached = torch.zeros(len(labels), dtype=torch.bool, device=x.device)
    with torch.enable_grad():
        for _ in range(steps):
            logits = free_attention_logits(x, keep, h0, scores, head, tail)
            reached |= logits.argmax(-1) == labels
            if bool(reached.all()):
                break
            loss = torch.nn.functional.cross_entropy(logits, labels, reduction="sum")  # per sample: sum, not mean
            opt.zero_grad()
            loss.backward()
            opt.step()
        else:
            with torch.no_grad():
                reached |= free_attention_logits(x, keep, h0, scores, head, tail).argmax(-1) == labels
    return reached.cpu().numpy()


@torch.no_grad()
def single_token_fit(x: torch.Tensor, keep: torch.Tensor, h0: torch.Tensor, labels: torch.Tensor, head: dict,
                     tail: Tail) -> np.ndarray:
    """(N,) bool: some real token of the sample, taken whole by every head (each head's scores one-hot on it),
    makes the sample's label the prediction."""
    _check(x, keep, h0, labels, tail)
    N, L, D = x.shape
    found = np.zeros(N, dtype=bool)
    for t in range(L):
        m = x[:, t, None, :].expand(N, tail.heads, D).contiguous()
        found |= ((_logits(m, h0, head, tail).argmax(-1) == labels) & keep[:, t]).cpu().numpy()
    return found


@dataclass(frozen=True)
class Reach:
    """Per sample (the flipped ones of a run): can free scores fit its label, and does a single token give it."""

    free: np.ndarray
    token: np.ndarray

    @property
    def free_share(self) -> float | None:
        return float(self.free.mean()) if len(self.free) else None

    @property
    def token_share(self) -> float | None:
        return float(self.token.mean()) if len(self.token) else None


def reach(x: torch.Tensor, keep: torch.Tensor, h0: torch.Tensor, labels: torch.Tensor, head: dict, tail: Tail,
          steps: int = STEPS, learning_rate: float = LEARNING_RATE) -> Reach:
    """Both witnesses for samples (usually a run's flipped ones) with their (noisy) labels. A label a single token
    gives counts as within reach of free scores too (one-hot scores are their limit, which a finite fit from uniform
    attention may not approach), so `free` ⊇ `token`."""
    token = single_token_fit(x, keep, h0, labels, head, tail)
    return Reach(free_attention_fit(x, keep, h0, labels, head, tail, steps, learning_rate) | token, token)
