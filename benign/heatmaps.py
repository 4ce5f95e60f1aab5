"""The maps of the papers' figures: a measure over the (d, ‖μ‖) grid (or paper 2's (n, ‖μ‖) grid) as colours, a regime
or a course of each cell as a category with its key, and the theory's boundaries and the named settings drawn on
them. Their style and layout are `benign.plots`'."""

from __future__ import annotations

import numpy as np

from .plots import FONT_SIZES


REGIME_COLORS = {"harmful": "#d62728", "benign": "#2ca02c", "not_overfitting": "#1f77b4"}
NEAR_CHANCE_COLOR = "#5f5f5f"  # a run that is neither (`onelayer.seed_reading`): dark grey, under the white lines


def _edges(values, half: float = 0.5, log: bool = False) -> np.ndarray:
    """Cell edges halfway between sorted grid values (a single value: `half` either side); `log`: halfway in log."""
    if log:
        return np.exp(_edges(np.log(np.asarray(values, dtype=float)), half=0.1))
    values = np.asarray(values, dtype=float)
    if len(values) == 1:
        return np.array([values[0] - half, values[0] + half])
    mids = (values[1:] + values[:-1]) / 2
    return np.concatenate([[2 * values[0] - mids[0]], mids, [2 * values[-1] - mids[-1]]])


def uneven(values) -> bool:
    """Whether a grid's spacing varies by more than a factor of two (5, 7.5, 10, 15, 20, 40 does; 5, 7.5, 10 does
    not): such rows are drawn on a logarithmic axis (`mu_axis`)."""
    steps = np.diff(np.sort(np.asarray(values, dtype=float)))
    return len(steps) > 1 and steps.max() > 2 * steps.min()


def mu_axis(ax, mu_values, log: bool) -> None:
    """The ‖μ‖ axis of a map: `log` (for rows spaced unevenly, such as 5, 7.5, 10, 15, 20, 40: each row as tall as
    its log spacing, not a sliver beside the wide ones; or a grid's lowest rows drawn larger) ticks at the rows' own
    values, at most about ten of them: on a longer grid, each the first at least twice the one below."""
    if log:
        ticks = sorted(mu_values)
        if len(ticks) > 10:
            kept = ticks[:1]
            for v in ticks[1:]:
                if v >= 2 * kept[-1] - 1e-9:
                    kept.append(v)
            ticks = kept
        ax.set_yscale("log")
        ax.set_yticks(ticks, [f"{v:g}" for v in ticks])
        ax.minorticks_off()


def map_labels(ax, title: str) -> None:
    """A (d, ‖μ‖) map's title and axis labels; ‖μ‖ upright, since turned on its side its bars read as '≡'."""
    ax.set(title=title, xlabel="d")
    ax.set_ylabel("‖μ‖", rotation=0, ha="right", va="center")


def heatmap(ax, d_values, mu_values, Z, title: str, cmap="viridis", vmin=None, vmax=None, label=None, log=False,
            marks=(), log_mu=False):
    """A (d, ‖μ‖) map: Z has one row per d value and one column per ‖μ‖ value (`log`: a logarithmic colour scale;
    `log_mu`: a logarithmic ‖μ‖ axis, `mu_axis`; NaN cells stay blank). `marks`: another source's colour limits (the
    paper's, say), drawn as cyan lines on the colour bar where they fall inside the data's range and named above or
    below the bar where they fall outside it; the scale stays the data's, so nothing is clipped."""
    from matplotlib.colors import LogNorm

    norm = LogNorm(vmin=vmin, vmax=vmax) if log else None
    mesh = ax.pcolormesh(_edges(d_values), _edges(mu_values, log=log_mu), np.asarray(Z, dtype=float).T, cmap=cmap,
                         norm=norm, vmin=None if log else vmin, vmax=None if log else vmax, shading="flat")
    mu_axis(ax, mu_values, log_mu)
    bar = ax.figure.colorbar(mesh, ax=ax, label=label)
    low, high = mesh.get_clim()
    for value in [m for m in marks if low <= m <= high]:
        bar.ax.axhline(value, color="cyan", lw=2)
    for side, outside, y in (("above", [m for m in marks if m > high], 1.02), ("below", [m for m in marks if m < low],
                                                                               -0.02)):
        if outside:
            bar.ax.text(0.5, y, "paper:\n" + "–".join(f"{m:g}" for m in outside) + f"\n{side}", ha="center",
                        va="bottom" if side == "above" else "top", transform=bar.ax.transAxes, color="#0097a7",
                        fontsize=FONT_SIZES["xtick.labelsize"])
    map_labels(ax, title)
    return mesh


def category_key(colors: dict, prefix: str = "") -> list:
    """The legend entries of a categorical map: a patch of each key's colour, labelled `prefix` and the key with its
    underscores as spaces; each patch edged in white, so that a dark one (near chance) stands out of the grey box
    that a legend of white lines needs (`plots.OVERLAY_LEGEND`)."""
    from matplotlib.patches import Patch

    return [Patch(facecolor=color, edgecolor="white", linewidth=0.8, label=prefix + key.replace("_", " "))
            for key, color in colors.items()]


def category_map(ax, d_values, mu_values, labels, colors: dict, title: str, legend: bool | str = True,
                 log_mu: bool = False) -> None:
    """Categorical (d, ‖μ‖) map: `labels` (rows d, columns ‖μ‖) are keys of `colors` (label → colour); the legend
    (`category_key`, in the upper right) shows a key with its underscores as spaces. So that it covers no cell:
    `legend="below"` sets it under the map (under its axis label), `legend=False` leaves it to the caller, such as
    one key above a figure of several maps (`legend_above`'s `extra`); `log_mu`: as `heatmap`'s."""
    from matplotlib.colors import ListedColormap

    names = list(colors)
    codes = np.vectorize(names.index)(np.asarray(labels))
    ax.pcolormesh(_edges(d_values), _edges(mu_values, log=log_mu), codes.T,
                  cmap=ListedColormap(list(colors.values())), vmin=-0.5, vmax=len(names) - 0.5, shading="flat")
    mu_axis(ax, mu_values, log_mu)
    if legend == "below":
        ax.legend(handles=category_key(colors), loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2,
                  frameon=False)
    elif legend:
        ax.legend(handles=category_key(colors), loc="upper right", framealpha=0.9)
    map_labels(ax, title)


def regime_map(ax, d_values, mu_values, regimes, title: str, legend: bool = True, log_mu: bool = False) -> None:
    """Categorical map of the observed regime of each cell (`legend`, `log_mu`: as `category_map`'s)."""
    category_map(ax, d_values, mu_values, regimes, REGIME_COLORS, title, legend, log_mu)


COURSE_COLORS = {"stays_below": "#2ca02c", "transient": "#ff7f0e", "falls_below": "#9467bd", "rises_above": "#d62728",
                 "stays_above": "#8c564b"}


LOW_SETTING = 0.1  # a marked setting in this bottom share of a map sits on its lowest rows and the theory's lines
RAISED_AT = 0.45  # … so its label is raised to this height (share of the map), clear of the other settings' labels


def theory_overlay(ax, d_values, n: int, sigma: float = 1.0, settings: dict | None = None,
                   color: str = "white", label_box: bool = False, raised_at: float = RAISED_AT) -> None:
    """The theory's boundaries n·SNR² = 1 and SNR = d^{-1/4}, and marked settings {label: (d, ‖μ‖)}, drawn in
    `color` (white on dark maps; black on a map whose middle is white, as a diverging one); `label_box` sets each
    setting's label on a box of the opposite shade, so that a boundary drawn through it does not overprint it. A
    setting near the bottom edge (`LOW_SETTING`) has its label raised and tied to its star by a line, so that it
    covers neither the bottom rows (a map's harmful strip) nor the boundaries drawn there (`raised_at`: its height, a
    share of the map, for a page whose regimes change at `RAISED_AT` in that column); a star on the frame is drawn
    whole."""
    from . import theory

    d = np.linspace(min(d_values), max(d_values), 200)
    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    ax.plot(d, np.minimum(theory.signal_norm_at_n_snr2(d, n, sigma=sigma), ylim[1]), color=color, lw=1.8, ls="--",
            label="n·SNR² = 1")
    ax.plot(d, np.minimum(theory.signal_norm_at_harmful(d, sigma=sigma), ylim[1]), color=color, lw=1.8, ls=":",
            label="SNR = $d^{-1/4}$")
    ax.set(xlim=xlim, ylim=ylim)  # the map's, before a setting's place in it is read
    for label, (d0, mu0) in (settings or {}).items():
        ax.scatter([d0], [mu0], marker="*", s=140, color="white", edgecolor="black", zorder=5, clip_on=False)
        right = d0 > xlim[0] + 0.75 * (xlim[1] - xlim[0])  # label to the left near the right edge
        height = ax.transAxes.inverted().transform(ax.transData.transform((d0, mu0)))[1]
        low, top = height < LOW_SETTING, height > 1 - LOW_SETTING  # a label under a star at the top, clear of the title
        box = dict(boxstyle="round,pad=0.15", lw=0, alpha=0.85, fc="black" if color == "white" else "white")
        place = dict(xytext=(d0, raised_at), textcoords=("data", "axes fraction")) if low else dict(
            xytext=(-6 if right else 6, -6 if top else 4), textcoords="offset points", va="top" if top else "baseline")
        if low:  # the tie, apart from the label: a label's box is its text alone
            ax.annotate("", (d0, mu0), arrowprops=dict(arrowstyle="-", color=color, lw=1.2, shrinkB=6), zorder=6,
                        **place)
        ax.annotate(label, (d0, mu0), color=color, fontweight="bold", ha="right" if right else "left",
                    bbox=box if label_box else None, zorder=6, **place)
    ax.set(xlim=xlim, ylim=ylim)


def snr_heatmap(ax, grid, value: str, title: str, curves: dict):
    """Mean `value` over seeds on the (n, ‖μ‖) grid (paper 2's ρ is ‖μ‖ here), both axes logarithmic, with curves
    ‖μ‖(n) drawn on it: `curves` maps a label to (n values, ‖μ‖ values, line style). Returns the mesh (for a colour
    bar)."""
    table = grid.pivot_table(index="signal_norm", columns="n", values=value, aggfunc="mean")
    edges = [np.exp(_edges(np.log(v), half=0.35)) for v in (table.columns, table.index)]  # halfway in log scale
    mesh = ax.pcolormesh(*edges, table.to_numpy(), cmap="viridis", vmin=0.5, vmax=1.0, shading="flat")
    for label, (n, signal_norm, style) in curves.items():
        ax.plot(n, signal_norm, style, color="#e41a1c", lw=2, label=label)
    ax.set(xscale="log", yscale="log", xlabel="n (training samples)", ylabel="‖μ‖ (signal norm)", title=title)
    ax.set_xticks(list(table.columns), [f"{n:g}" for n in table.columns])
    ax.set_yticks(list(table.index[::2]), [f"{r:g}" for r in table.index[::2]])
    ax.minorticks_off()
    return mesh
