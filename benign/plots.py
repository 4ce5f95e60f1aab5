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


# Paper 2 (Magen et al.): attention on the signal token per input, and accuracy over an (n, ρ) grid.
ATTENTION_GROUPS = {"clean train": "#1f77b4", "noisy train": "#d62728", "test": "#7f7f7f"}


def signal_attention_strips(ax, samples, cases: dict) -> None:
    """The softmax weight on the signal token of every input after training, one column per case (run label →
    title): clean and noisy training inputs and test inputs."""
    group = np.where(samples.split == "test", "test", np.where(samples.noisy, "noisy train", "clean train"))
    sns.stripplot(data=samples.assign(group=group), x="run", y="signal_attention", hue="group", order=list(cases),
                  hue_order=list(ATTENTION_GROUPS), palette=ATTENTION_GROUPS, dodge=True, jitter=0.3, size=2.5,
                  alpha=0.7, ax=ax)
    ax.set_xticks(range(len(cases)), list(cases.values()))
    ax.set(xlabel="", ylabel="softmax weight on the signal token", ylim=(-0.03, 1.03))


def _log_edges(values) -> np.ndarray:
    """Cell edges halfway (in log scale) between sorted grid values."""
    v = np.log(np.asarray(values, dtype=float))
    mid = (v[1:] + v[:-1]) / 2 if len(v) > 1 else np.array([])
    first = v[0] - (mid[0] - v[0] if len(mid) else 0.35)
    last = v[-1] + (v[-1] - mid[-1] if len(mid) else 0.35)
    return np.exp(np.concatenate([[first], mid, [last]]))


def snr_heatmap(ax, grid, value: str, title: str, curves: dict):
    """Mean `value` over seeds on the (n, ρ) grid, both axes logarithmic, with curves ρ(n) drawn on it:
    `curves` maps a label to (n values, ρ values, line style). Returns the mesh (for a colour bar)."""
    table = grid.pivot_table(index="signal_norm", columns="n", values=value, aggfunc="mean")
    mesh = ax.pcolormesh(_log_edges(table.columns), _log_edges(table.index), table.to_numpy(), cmap="viridis",
                         vmin=0.5, vmax=1.0, shading="flat")
    for label, (n, signal_norm, style) in curves.items():
        ax.plot(n, signal_norm, style, color="#e41a1c", lw=2, label=label)
    ax.set(xscale="log", yscale="log", xlabel="n (training samples)", ylabel="ρ = ‖μ‖", title=title)
    ax.set_xticks(list(table.columns), [f"{n:g}" for n in table.columns])
    ax.set_yticks(list(table.index[::2]), [f"{r:g}" for r in table.index[::2]])
    ax.minorticks_off()
    return mesh


def accuracy_bars(ax, final, cases: dict) -> None:
    """Train and test accuracy of each run (a `final` table), one pair of bars per case (run label → tick label)."""
    table = final.melt(id_vars="run", value_vars=["train_acc", "test_acc"], var_name="split", value_name="accuracy")
    sns.barplot(data=table.replace({"train_acc": "train", "test_acc": "test"}), x="run", y="accuracy", hue="split",
                order=list(cases), palette=["#444444", "#ff7f0e"], ax=ax)
    ax.set_xticks(range(len(cases)), list(cases.values()))
    ax.set(xlabel="", ylim=(0, 1.15))
    ax.legend(loc="upper center", ncol=2)


NOISE_COLORS = {0.0: "#1f77b4", 0.2: "#d62728"}


def _noise_color(eta: float) -> str:
    return NOISE_COLORS.get(round(float(eta), 3), plt.cm.viridis(float(eta)))


def finetune_cells(ax_acc, ax_loss, summary, title: str) -> None:
    """Table 2 as a picture for one data set: test accuracy (± std over seeds) and final train loss against n."""
    for eta, part in summary.groupby("noise_ratio"):
        part = part.sort_values("n")
        color = _noise_color(eta)
        ax_acc.errorbar(part.n, 100 * part.test_acc, yerr=100 * part.test_acc_std, marker="o", capsize=3,
                        color=color, label=f"η = {eta:g}")
        ax_loss.plot(part.n, part.train_loss, marker="o", color=color, label=f"η = {eta:g}")
    ax_acc.axhline(100 * summary.base_acc.iloc[0], color="black", ls="--", lw=1, label="base (phase 1)")
    for ax in (ax_acc, ax_loss):
        ax.set_xscale("log")
        ax.set_xlabel("n (finetune samples)")
    ax_acc.set(title=title, ylabel="test accuracy (%)")
    ax_loss.set(title="final train loss (noisy labels)", ylabel="loss", ylim=(0, None))
    ax_acc.legend(fontsize=8)


def max_attention_curves(ax, curves, title: str) -> None:
    """Mean over heads and training samples of the largest first-token attention score, per phase-2 epoch.

    One line per noise rate (mean over seeds), the band spans the seeds.
    """
    for eta, part in curves.groupby("noise_ratio"):
        stats = part.groupby("epoch").max_attention.agg(["mean", "min", "max"])
        color = _noise_color(eta)
        ax.plot(stats.index, stats["mean"], color=color, label=f"η = {eta:g}")
        ax.fill_between(stats.index, stats["min"], stats["max"], color=color, alpha=0.2, lw=0)
    ax.set(title=title, xlabel="phase-2 epoch", ylabel="mean max attention")


REGIME_COLORS = {"harmful": "#d62728", "benign": "#2ca02c", "not_overfitting": "#1f77b4"}


def _edges(values):
    values = np.asarray(values, dtype=float)
    if len(values) == 1:
        return np.array([values[0] - 0.5, values[0] + 0.5])
    mids = (values[1:] + values[:-1]) / 2
    return np.concatenate([[2 * values[0] - mids[0]], mids, [2 * values[-1] - mids[-1]]])


def heatmap(ax, d_values, mu_values, Z, title: str, cmap="viridis", vmin=None, vmax=None, label=None, log=False):
    """A (d, ‖μ‖) map: Z has one row per d value and one column per ‖μ‖ value (`log`: a logarithmic colour scale;
    NaN cells stay blank)."""
    from matplotlib.colors import LogNorm

    norm = LogNorm(vmin=vmin, vmax=vmax) if log else None
    mesh = ax.pcolormesh(_edges(d_values), _edges(mu_values), np.asarray(Z, dtype=float).T, cmap=cmap, norm=norm,
                         vmin=None if log else vmin, vmax=None if log else vmax, shading="flat")
    ax.figure.colorbar(mesh, ax=ax, label=label)
    ax.set(title=title, xlabel="d", ylabel="‖μ‖")
    return mesh


def category_map(ax, d_values, mu_values, labels, colors: dict, title: str) -> None:
    """Categorical (d, ‖μ‖) map: `labels` (rows d, columns ‖μ‖) are keys of `colors` (label → colour); the legend
    shows a key with its underscores as spaces."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    names = list(colors)
    codes = np.vectorize(names.index)(np.asarray(labels))
    ax.pcolormesh(_edges(d_values), _edges(mu_values), codes.T, cmap=ListedColormap(list(colors.values())),
                  vmin=-0.5, vmax=len(names) - 0.5, shading="flat")
    ax.legend(handles=[Patch(color=colors[k], label=k.replace("_", " ")) for k in names], loc="upper right",
              fontsize=8, framealpha=0.9)
    ax.set(title=title, xlabel="d", ylabel="‖μ‖")


def regime_map(ax, d_values, mu_values, regimes, title: str) -> None:
    """Categorical map of the observed regime of each cell."""
    category_map(ax, d_values, mu_values, regimes, REGIME_COLORS, title)


COURSE_COLORS = {"stays_below": "#2ca02c", "transient": "#ff7f0e", "falls_below": "#9467bd", "rises_above": "#d62728",
                 "stays_above": "#8c564b"}


def theory_overlay(ax, d_values, n: int, sigma: float = 1.0, settings: dict | None = None) -> None:
    """The theory's boundaries n·SNR² = 1 and SNR = d^{-1/4}, and marked settings {label: (d, ‖μ‖)}."""
    from . import theory

    d = np.linspace(min(d_values), max(d_values), 200)
    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    top = ylim[1]
    ax.plot(d, np.minimum(theory.signal_norm_at_n_snr2(d, n, sigma=sigma), top), color="white", lw=1.8, ls="--",
            label="n·SNR² = 1")
    ax.plot(d, np.minimum(theory.signal_norm_at_harmful(d, sigma=sigma), top), color="white", lw=1.8, ls=":",
            label="SNR = d^(-1/4)")
    for label, (d0, mu0) in (settings or {}).items():
        ax.scatter([d0], [mu0], marker="*", s=140, color="white", edgecolor="black", zorder=5)
        right = d0 > xlim[0] + 0.75 * (xlim[1] - xlim[0])  # label to the left near the right edge
        ax.annotate(label, (d0, mu0), textcoords="offset points", xytext=(-6 if right else 6, 4), color="white",
                    fontsize=8, fontweight="bold", ha="right" if right else "left")
    ax.set(xlim=xlim, ylim=ylim)
