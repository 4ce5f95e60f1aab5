"""Synthetic data of paper 1 (Sakamoto & Sato, Sec. 3): token selection under label noise.

Each input X ∈ R^{T×d} has tokens in rows:
  relevant         x_t = μ_{Y*} + ε_t          (t < n_relevant)
  weakly relevant  x_t = ρ μ_{Y*} + ε_t        (next n_weak tokens, "aligned")
  weakly relevant  x_t = ρ μ_{−Y*} + ε_t       (next n_weak tokens, "opposite")
  irrelevant       x_t = ε_t                   (the rest)
with ε_t ~ N(0, σ² I), μ₊ = ‖μ‖ e₁, μ₋ = ‖μ‖ e₂ and the observed label Y = −Y* for the noisy samples.
The fixed head is ν = (μ₊ − μ₋)/‖μ₊ − μ₋‖ · 1/‖μ‖, so νᵀμ_± = ±1/√2 and ‖ν‖ = 1/‖μ‖.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from .checks import ParameterError, check, check_all, check_flags, keywords

RELEVANT, WEAK_ALIGNED, WEAK_OPPOSITE, IRRELEVANT = 0, 1, 2, 3
TOKEN_TYPES = ("relevant", "weak_aligned", "weak_opposite", "irrelevant")
LABEL_NOISE = ("deterministic", "bernoulli")


@dataclass
class TokenData:
    """One data set: inputs, observed and clean labels, which samples are noisy, and the model's fixed head."""

    X: torch.Tensor  # (n, T, d)
    y: torch.Tensor  # (n,) observed labels ±1
    y_clean: torch.Tensor  # (n,) clean labels Y*
    noisy: torch.Tensor  # (n,) bool, y != y_clean
    token_type: torch.Tensor  # (T,) RELEVANT / WEAK_ALIGNED / WEAK_OPPOSITE / IRRELEVANT
    mu_pos: torch.Tensor  # (d,)
    mu_neg: torch.Tensor  # (d,)
    nu: torch.Tensor  # (d,)
    params: dict = field(default_factory=dict)


def token_types(T: int, n_relevant: int = 1, n_weak: int = 1) -> torch.Tensor:
    """The type of each token position (relevant first, then aligned and opposite weak tokens, then irrelevant)."""
    if n_relevant < 1 or n_weak < 0 or n_relevant + 2 * n_weak > T:
        raise ParameterError(
            f"n_relevant = {n_relevant}, n_weak = {n_weak} do not fit T = {T}: "
            "need n_relevant >= 1, n_weak >= 0 and n_relevant + 2*n_weak <= T"
        )
    types = torch.full((T,), IRRELEVANT, dtype=torch.long)
    types[:n_relevant] = RELEVANT
    types[n_relevant:n_relevant + n_weak] = WEAK_ALIGNED
    types[n_relevant + n_weak:n_relevant + 2 * n_weak] = WEAK_OPPOSITE
    return types


def signals(d: int, signal_norm: float, dtype=torch.float64):
    """μ₊ = ‖μ‖e₁, μ₋ = ‖μ‖e₂ and the head ν = (μ₊ − μ₋)/‖μ₊ − μ₋‖ · 1/‖μ‖ (the authors' scale)."""
    mu_pos = torch.zeros(d, dtype=dtype)
    mu_neg = torch.zeros(d, dtype=dtype)
    mu_pos[0] = signal_norm
    mu_neg[1] = signal_norm
    nu = (mu_pos - mu_neg) / torch.linalg.norm(mu_pos - mu_neg) / signal_norm
    return mu_pos, mu_neg, nu


def signal_pattern(y_clean: torch.Tensor, types: torch.Tensor, rho: float) -> torch.Tensor:
    """(n, T, 2) coefficients of the signal on (e₁, e₂): X = ε + ‖μ‖ (P[..., 0] e₁ + P[..., 1] e₂), i.e.
    μ_{Y*} on relevant tokens, ρ μ_{Y*} on aligned and ρ μ_{−Y*} on opposite weakly relevant tokens."""
    scale = torch.zeros(len(types), dtype=torch.float64)
    scale[types == RELEVANT] = 1.0
    scale[(types == WEAK_ALIGNED) | (types == WEAK_OPPOSITE)] = rho
    true_axis = (y_clean < 0).long()[:, None].expand(-1, len(types))  # μ₊ on e₁, μ₋ on e₂
    axis = torch.where(types == WEAK_OPPOSITE, 1 - true_axis, true_axis)
    P = torch.zeros(len(y_clean), len(types), 2, dtype=torch.float64)
    P.scatter_(2, axis[..., None], scale.expand(len(y_clean), -1)[..., None].clone())
    return P


def balanced_labels(n: int) -> torch.Tensor:
    """First n//2 samples +1, the rest −1, as in the authors' code."""
    return torch.cat([torch.ones(n // 2), -torch.ones(n - n // 2)]).double()


def observed_labels(noisy: torch.Tensor) -> torch.Tensor:
    """The labels a learner sees: the balanced labels with the noisy ones flipped, noisy (…, n) bool → (…, n) ±1."""
    return torch.where(noisy, -1.0, 1.0).double() * balanced_labels(noisy.shape[-1]).to(noisy.device)


def noise_mask(n: int, noise_ratio: float, label_noise: str = "deterministic", seed: int = 0) -> torch.Tensor:
    """Which samples get a flipped label.

    deterministic (the authors'): k = ceil(n·η) noisy samples, the first k//2 of each class (so an odd k loses
    one flip); bernoulli: each sample independently with probability η.
    """
    mask = torch.zeros(n, dtype=torch.bool)
    if label_noise == "deterministic":
        k = math.ceil(n * noise_ratio)
        mask[: k // 2] = True
        mask[n // 2: n // 2 + k // 2] = True
    elif label_noise == "bernoulli":
        rng = np.random.default_rng([seed, 2])
        mask = torch.from_numpy(rng.random(n) < noise_ratio)
    else:
        raise ParameterError(f"label_noise = {label_noise!r} is not allowed: use one of {', '.join(LABEL_NOISE)}")
    return mask


def gaussian_noise(n: int, T: int, d: int, seed, sigma: float = 1.0) -> torch.Tensor:
    """ε ~ N(0, σ²I) for every token, float64, drawn row-major from one numpy stream (prefixes are reproducible)."""
    return torch.from_numpy(np.random.default_rng(seed).standard_normal((n, T, d))) * sigma


@keywords
def make_data(
    n: int,
    d: int,
    signal_norm: float,
    *,
    noise_ratio: float,
    seed: int = 0,
    T: int = 8,
    rho: float = 0.1,
    sigma: float = 1.0,
    n_relevant: int = 1,
    n_weak: int = 1,
    label_noise: str = "deterministic",
    noise_seed=None,
) -> TokenData:
    """Draw a data set of paper 1 (float64 on CPU): n inputs X ∈ R^{T×d} with ‖μ‖ = `signal_norm`.

    `noise_ratio` η (required; 0.0: clean labels) is the share of flipped labels; the other keywords are those of
    `make_run`. `noise_seed` overrides the stream of the noise ε (default: `seed`).
    """
    check_all(n=n, d=d, signal_norm=signal_norm, T=T, rho=rho, noise_ratio=noise_ratio, seed=seed, sigma=sigma)
    types = token_types(T, n_relevant, n_weak)
    mu_pos, mu_neg, nu = signals(d, signal_norm)
    y_clean = balanced_labels(n)
    noisy = noise_mask(n, noise_ratio, label_noise, seed)
    y = observed_labels(noisy)

    X = gaussian_noise(n, T, d, seed if noise_seed is None else noise_seed, sigma)
    X[..., :2] += signal_norm * signal_pattern(y_clean, types, rho)
    params = dict(n=n, d=d, signal_norm=signal_norm, T=T, rho=rho, noise_ratio=noise_ratio, seed=seed, sigma=sigma,
                  n_relevant=n_relevant, n_weak=n_weak, label_noise=label_noise, noise_seed=noise_seed)
    return TokenData(X, y, y_clean, noisy, types, mu_pos, mu_neg, nu, params)


@keywords
def make_train_test(
    n: int,
    d: int,
    signal_norm: float,
    *,
    noise_ratio: float,
    n_test: int = 1000,
    seed: int = 0,
    T: int = 8,
    rho: float = 0.1,
    sigma: float = 1.0,
    n_relevant: int = 1,
    n_weak: int = 1,
    label_noise: str = "deterministic",
    authors_test_seed: bool = False,
) -> tuple[TokenData, TokenData]:
    """A training set of n inputs with a share η = `noise_ratio` (required; 0.0: clean labels) of flipped labels,
    and a clean test set of `n_test` inputs (its noise from `clean_test_stream`). Keywords: those of `make_run`."""
    check("n_test", n_test)
    check_flags(authors_test_seed=authors_test_seed)
    shared = dict(T=T, rho=rho, sigma=sigma, n_relevant=n_relevant, n_weak=n_weak, label_noise=label_noise)
    train = make_data(n, d, signal_norm, noise_ratio=noise_ratio, seed=seed, **shared)
    test = make_data(n_test, d, signal_norm, noise_ratio=0.0, seed=seed,
                     noise_seed=clean_test_stream(seed, authors_test_seed), **shared)
    return train, test


def clean_test_stream(seed: int, authors_test_seed: bool = False):
    """The random stream of the test set's noise: its own by default. `authors_test_seed=True` reproduces the
    authors' quirk: the test set reuses the training seed, so its first n/2 inputs are the first n/2 training inputs,
    with their clean labels."""
    return seed if authors_test_seed else [seed, 1]


def init_W(d: int, seed: int) -> torch.Tensor:
    """W₀ as PyTorch's kaiming_uniform_(a=√5) draws it, U(−1/√d, 1/√d), but seeded (float64, CPU)."""
    W = torch.empty(d, d, dtype=torch.float64)
    torch.nn.init.kaiming_uniform_(W, a=math.sqrt(5), generator=torch.Generator().manual_seed(seed))
    return W


@dataclass
class Run:
    """One training run of paper 1's models: its training data, test data and W₀ (None: W₀ = I)."""

    train: TokenData
    test: TokenData | None
    W0: torch.Tensor | None
    label: str = ""


@keywords
def make_run(d: int, signal_norm: float, *, noise_ratio: float, seed: int = 0, n: int = 20, n_test: int = 1000,
             T: int = 8, rho: float = 0.1, sigma: float = 1.0, n_relevant: int = 1, n_weak: int = 1,
             label_noise: str = "deterministic", authors_test_seed: bool = False, W_init: str = "kaiming",
             label: str = "") -> Run:
    """One setting of paper 1, ready for `benign.synthetic.simulate` or `benign.encoder.simulate`: a training set
    with noisy labels, a clean test set and W₀. Every draw follows from `seed`: the same call gives the same data.

        run = make_run(d=2000, signal_norm=20.0, noise_ratio=0.2, seed=0)
        sim = synthetic.simulate([run], learning_rate=5e-3, num_steps=1000)

    Parameters (the defaults are `DATA_DEFAULTS`, the grid kernels', except η, which has none):
    - d: the token dimension; signal_norm: ‖μ‖, the norm of the class signals μ₊ = ‖μ‖e₁, μ₋ = ‖μ‖e₂;
    - noise_ratio: η, the share of training labels flipped (required: 0.0 for clean labels; the notebooks use 0.2);
    - seed: the seed of every draw (the noise ε, the flips with bernoulli noise, W₀); n: training inputs;
      n_test: test inputs (clean labels, their own random stream);
    - T: tokens per input; rho: ρ, the signal scale of the weakly relevant tokens (ρμ); sigma: σ, the noise's
      standard deviation (ε ~ N(0, σ²I)); n_relevant: relevant tokens per input (they carry μ_{Y*});
      n_weak: weakly relevant tokens per input of each kind (aligned ρμ_{Y*}, opposite ρμ_{−Y*});
    - label_noise: deterministic (the authors': ⌈nη⌉ flips shared by the two classes, the first samples of
      each; an odd count loses one) or bernoulli (each label flipped with probability η);
    - authors_test_seed: True reuses the training seed for the test set, as the authors' code does
      (`clean_test_stream`);
    - W_init: kaiming draws W₀ ~ U(−1/√d, 1/√d) with `seed` (`init_W`); identity fixes W₀ = I (the authors'
      p-only experiments), stored as None;
    - label: the run's name in the tables of a simulation (default: run0, run1, … by position).

    Returns a `Run`: train and test (`TokenData`: X (n, T, d), observed labels y, clean labels y_clean, the noisy
    mask, token_type, μ₊, μ₋, the head ν and the parameters), W0 (d, d) or None, and label.
    """
    check_all(W_init=W_init)
    train, test = make_train_test(n, d, signal_norm, noise_ratio=noise_ratio, n_test=n_test, seed=seed, T=T, rho=rho,
                                  sigma=sigma, n_relevant=n_relevant, n_weak=n_weak, label_noise=label_noise,
                                  authors_test_seed=authors_test_seed)
    return Run(train, test, init_W(d, seed) if W_init == "kaiming" else None, label)


# The data parameters of a grid point (sweep kernels of both trainers), and those every point of a chunk shares.
DATA_DEFAULTS = dict(d=None, signal_norm=None, seed=0, n=20, n_test=1000, T=8, rho=0.1, sigma=1.0, n_relevant=1,
                     n_weak=1, noise_ratio=0.2, label_noise="deterministic", authors_test_seed=False)
DATA_SHARED = ("d", "seed", "n", "n_test", "T", "rho", "sigma", "n_relevant", "n_weak", "label_noise",
               "authors_test_seed")
