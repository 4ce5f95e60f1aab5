"""What the theory of paper 1 predicts, as functions the book overlays on its figures.

The theorems are asymptotic (o(·), ω(·), Θ(·)); they fix which quantities matter, not the constants. The regime
boundaries here are the orders n·SNR² ≍ 1 and SNR ≍ d^{-1/4} times constants that default to 1; the book says so.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

REGIMES = ("harmful", "benign", "not_overfitting")


def snr(signal_norm, d, sigma: float = 1.0):
    """SNR = ‖μ‖ / (σ_ε √d)."""
    return np.asarray(signal_norm, dtype=float) / (sigma * np.sqrt(np.asarray(d, dtype=float)))


def n_snr2(signal_norm, d, n, sigma: float = 1.0):
    """n · SNR²: large → the signal is learned before the noise is memorised (no overfitting)."""
    return n * snr(signal_norm, d, sigma) ** 2


def harmful_snr(d):
    """The SNR below which overfitting turns harmful, of order d^{-1/4}."""
    return np.asarray(d, dtype=float) ** -0.25


def regime(signal_norm, d, n, sigma: float = 1.0, c_harmful: float = 1.0, c_overfit: float = 1.0):
    """'harmful' if SNR < c_harmful·d^{-1/4}; else 'not_overfitting' if n·SNR² > c_overfit; else 'benign'."""
    s = snr(signal_norm, d, sigma)
    label = np.where(s < c_harmful * harmful_snr(d), "harmful",
                     np.where(n * s ** 2 > c_overfit, "not_overfitting", "benign"))
    return label.item() if label.ndim == 0 else label


def observed_regime(train_acc, test_acc, test_threshold: float = 0.95):
    """What a trained run did: 'not_overfitting' if some training label is not fitted, else 'benign' if the test
    accuracy reaches `test_threshold`, else 'harmful'."""
    train_acc, test_acc = np.asarray(train_acc), np.asarray(test_acc)
    label = np.where(train_acc < 1.0, "not_overfitting", np.where(test_acc >= test_threshold, "benign", "harmful"))
    return label.item() if label.ndim == 0 else label


def signal_norm_at_n_snr2(d, n, value: float = 1.0, sigma: float = 1.0):
    """‖μ‖ on the curve n·SNR² = value, for drawing the boundary on a (d, ‖μ‖) map."""
    return sigma * np.sqrt(value * np.asarray(d, dtype=float) / n)


def signal_norm_at_harmful(d, sigma: float = 1.0, c_harmful: float = 1.0):
    """‖μ‖ on the curve SNR = c·d^{-1/4}, i.e. ‖μ‖ = c σ d^{1/4}."""
    return c_harmful * sigma * np.asarray(d, dtype=float) ** 0.25


def growth(x, T: int = 8):
    """The growth function g(x) = 2x + 2 sinh(x − log T) of the analysis."""
    return 2 * x + 2 * np.sinh(np.asarray(x, dtype=float) - math.log(T))


# The main theorem's time scales (the poster's "Main Result"). In the notation of the paper: α the step size, ‖ν‖
# the norm of the fixed head (here 1/‖μ‖, so ‖ν‖‖μ‖ = 1), σ_ε the token noise, σ_w² and σ_p² the initial variances
# of W and p (σ_n² in the not-overfitting case as the poster prints it). Our runs start from p = 0 (σ_p = 0); for W₀
# we take the mean squared entry: 1/d for W₀ = I, 1/(3d) for kaiming_uniform U(−1/√d, 1/√d).

def sigma_w2(W_init: str, d):
    """σ_w², the mean squared entry of W₀: 1/d for the identity, 1/(3d) for PyTorch's kaiming_uniform_(a=√5)."""
    return (1.0 if W_init == "identity" else 1.0 / 3.0) / np.asarray(d, dtype=float)


def benign_prefactor(alpha, n, d, signal_norm, nu_norm, sigma_w2, sigma_p2=0.0, sigma=1.0):
    """α n⁻¹ σ_ε² ‖ν‖ ‖μ‖ d² max{σ_w², σ_p²}: benign overfitting at τ = Θ(exp(n⁻¹SNR⁻²) / this)."""
    d = np.asarray(d, dtype=float)
    return alpha / n * sigma ** 2 * nu_norm * signal_norm * d ** 2 * np.maximum(sigma_w2, sigma_p2)


def benign_time(alpha, n, d, signal_norm, nu_norm, sigma_w2, sigma_p2=0.0, sigma=1.0):
    """The theorem's benign time scale exp(n⁻¹SNR⁻²) / (α n⁻¹ σ_ε² ‖ν‖ ‖μ‖ d² max{σ_w², σ_p²}), constants aside."""
    return np.exp(1.0 / n_snr2(signal_norm, d, n, sigma)) / benign_prefactor(
        alpha, n, d, signal_norm, nu_norm, sigma_w2, sigma_p2, sigma)


def not_overfitting_time(alpha, d, signal_norm, nu_norm, sigma_w2, sigma_n2=0.0):
    """The theorem's not-overfitting time scale 1 / (α ‖ν‖ ‖μ‖³ d max{σ_w², σ_n²}), constants aside."""
    return 1.0 / (alpha * nu_norm * np.asarray(signal_norm, dtype=float) ** 3 * np.asarray(d, dtype=float)
                  * np.maximum(sigma_w2, sigma_n2))


def theorem_time(alpha, n, d, signal_norm, nu_norm, sigma_w2, sigma=1.0, c_harmful: float = 1.0,
                 c_overfit: float = 1.0):
    """The main theorem's τ where it gives one (constants aside): `benign_time` in the benign regime,
    `not_overfitting_time` in the not-overfitting regime, NaN in the harmful one (`regime`, same constants)."""
    label = np.asarray(regime(signal_norm, d, n, sigma, c_harmful, c_overfit))
    benign = benign_time(alpha, n, d, signal_norm, nu_norm, sigma_w2, sigma=sigma)
    not_overfitting = not_overfitting_time(alpha, d, signal_norm, nu_norm, sigma_w2)
    out = np.where(label == "benign", benign, np.where(label == "not_overfitting", not_overfitting, np.nan))
    return out.item() if out.ndim == 0 else out


def head_test_accuracy(signal_norm: float, T: int) -> float:
    """The fixed head's test accuracy with uniform attention (p = 0), Φ(‖μ‖/√(2T)) at σ_ε = 1 (the model page): what
    the model classifies before any training, the control a hand-built query or a trained run is read against."""
    return NormalDist().cdf(signal_norm / math.sqrt(2 * T))
