"""What the theory of paper 1 predicts, as functions the book overlays on its figures.

The theorems are asymptotic (o(·), ω(·), Θ(·)); they fix which quantities matter, not the constants. The regime
boundaries here are the orders n·SNR² ≍ 1 and SNR ≍ d^{-1/4} times constants that default to 1; the book says so.
"""

from __future__ import annotations

import math

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
