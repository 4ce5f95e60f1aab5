"""benign: the companion package to Sakamoto & Sato, "Benign Overfitting in Token Selection of Attention Mechanism"
(ICML 2025), and Magen et al., "Benign Overfitting in Single-Head Attention"."""

__version__ = "0.1.0"
