"""One visual style for every figure of the companion."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

TOKEN_LABELS = {"relevant": "relevant", "weak_aligned": "weakly relevant (aligned)",
                "weak_opposite": "weakly relevant (opposite)", "irrelevant": "irrelevant"}
TOKEN_COLORS = {"relevant": "#1f77b4", "weak_aligned": "#2ca02c", "weak_opposite": "#d62728", "irrelevant": "#7f7f7f"}


def style() -> None:
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "axes.titleweight": "bold"})


def token_color(token: int, types) -> str:
    from .data import TOKEN_TYPES

    return TOKEN_COLORS[TOKEN_TYPES[int(types[token])]]


def score_dynamics(ax, scores, run: str, sample: int, types, title: str) -> None:
    """Softmax score of each token of one training sample over the GD steps (Figure 3's panels)."""
    sub = scores[(scores.run == run) & (scores["sample"] == sample)]
    seen = set()
    for token, rows in sub.groupby("token"):
        kind = int(types[token])
        label = None if kind in seen else list(TOKEN_LABELS.values())[kind]
        seen.add(kind)
        ax.plot(rows.step, rows.score, color=token_color(token, types), lw=1.6 if kind < 3 else 0.8, label=label)
    ax.set(title=title, xlabel="step", ylabel="softmax score", ylim=(-0.02, 1.02))


def accuracy_curves(ax, history, run: str, title: str) -> None:
    logged = history[(history.run == run) & history.test_acc.notna()]
    ax.plot(logged.step, logged.train_acc, label="train", color="#444444")
    ax.plot(logged.step, logged.test_acc, label="test", color="#ff7f0e")
    ax.set(title=title, xlabel="step", ylabel="accuracy", ylim=(0.45, 1.02))


def attended_scatter(ax, coords, correct, title: str) -> None:
    """The argmax-attended token in the (μ₋, μ₊) plane with ν's decision line (Figure 1's panels)."""
    coords = np.asarray(coords)
    correct = np.asarray(correct, dtype=bool)
    ax.scatter(*coords[correct].T, s=14, c="#1f77b4", label="correctly classified", alpha=0.8)
    ax.scatter(*coords[~correct].T, s=22, c="#d62728", marker="x", label="misclassified")
    lim = np.abs(coords).max() * 1.1 + 1e-9
    ax.plot([-lim, lim], [-lim, lim], color="black", lw=1, ls="--", label="ν decision line")
    ax.set(title=title, xlabel="⟨x, μ₋⟩ / ‖μ‖", ylabel="⟨x, μ₊⟩ / ‖μ‖", xlim=(-lim, lim), ylim=(-lim, lim))
    ax.set_aspect("equal")
