"""One visual style for every figure of the companion."""

from __future__ import annotations

import itertools
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.text import Text

TOKEN_LABELS = {"relevant": "relevant", "weak_aligned": "weakly relevant (aligned)",
                "weak_opposite": "weakly relevant (opposite)", "irrelevant": "irrelevant"}
TOKEN_COLORS = {"relevant": "#1f77b4", "weak_aligned": "#2ca02c", "weak_opposite": "#d62728", "irrelevant": "#7f7f7f"}


# The sizes every figure shares. The book's content column is about 760 px wide (Chromium at 1400 px), and a figure
# wider than that is shrunk to it, so a figure's text renders at (size in pt) × 760 / (72 × width in inches) px: at
# PAGE_WIDTH and the smallest size below, about 11 px. MIN_TEXT_PX is what the browser check demands of every figure
# on every page; a composite that needs more room is a grid of rows at this width, never a wider figure.
PAGE_WIDTH = 8.0  # inches
ROW_HEIGHT = 3.0  # inches per row of panels (`figure`)
DPI = 150  # the saved PNG (and the picture on the page: it is the saved file)
MIN_TEXT_PX = 9
FONT_SIZES = {"font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10, "xtick.labelsize": 9,
              "ytick.labelsize": 9, "legend.fontsize": 9, "legend.title_fontsize": 9, "figure.titlesize": 11}


def style() -> None:
    sns.set_theme(context="notebook", style="whitegrid")
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": DPI, "axes.titleweight": "bold",
                         "figure.figsize": (PAGE_WIDTH, ROW_HEIGHT), **FONT_SIZES})


def figure(nrows: int = 1, ncols: int = 1, row_height: float = ROW_HEIGHT, width: float = PAGE_WIDTH, **kwargs):
    """`plt.subplots` at the page's width (or `width` inches: a single small panel at `PHONE_WIDTH` is shown at its
    own size on a wide page and stays legible on a phone, where no one-column version is made for it): `nrows` rows
    of `row_height` inches, laid out by matplotlib's constrained layout (no `tight_layout` needed). Returns
    (figure, axes)."""
    return plt.subplots(nrows, ncols, figsize=(width, row_height * nrows), layout="constrained", **kwargs)


def figure_rows(titles, ncols: int, row_height: float = ROW_HEIGHT, **kwargs):
    """A page-wide composite laid out as rows: one row of `ncols` panels per title, the title above its row.
    Returns (figure, axes of shape (rows, ncols))."""
    fig = plt.figure(figsize=(PAGE_WIDTH, row_height * len(titles)), layout="constrained")
    rows = np.atleast_1d(fig.subfigures(len(titles), 1))
    axes = np.array([np.atleast_1d(row.subplots(1, ncols, **kwargs)) for row in rows])
    for row, title in zip(rows, titles):
        row.suptitle(title, fontweight="bold", fontsize=FONT_SIZES["axes.titlesize"])
    return fig, axes


def legend_above(fig, *axes, ncols: int = 4, extra=(), **kwargs) -> None:
    """The legend of the axes `axes` (their entries in order, each label once, then the labelled artists `extra`,
    such as `category_key`'s patches) once, above the whole figure (a composite's panels are too small to hold it);
    `kwargs` style it (the white lines of `theory_overlay` need a dark box: `OVERLAY_LEGEND`)."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    for handle in extra:
        entries.setdefault(handle.get_label(), handle)
    fig.legend(list(entries.values()), list(entries), **{"loc": "outside upper center", "ncols": ncols,
                                                         "frameon": False, **kwargs})


OVERLAY_LEGEND = {"frameon": True, "facecolor": "gray", "labelcolor": "white"}  # a legend of white lines


def smallest_text_pt(fig) -> float:
    """The font size (pt) of the smallest text the figure draws: tick labels, legends, titles, annotations."""
    fig.canvas.draw()  # tick labels get their text only once drawn
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]
    return float(min(sizes)) if sizes else float(plt.rcParams["font.size"])


TEX_WORDS = {r"\mathfrak{S}": "𝔖", r"\log_{10}": "log₁₀", "log_10": "log₁₀", r"\|": "‖", r"\mu": "μ", r"\eta": "η",
             r"\alpha": "α", r"\rho": "ρ", r"\nu": "ν", r"\tau": "τ", r"\delta": "δ", r"\mathrm": "", r"\cdot": "·",
             "{": "", "}": "", "$": "", "\\": ""}  # maths in a title as plain Unicode, in this order


def suptitles(fig) -> list[str]:
    """The figure's title and its subfigures' (`figure_rows`' row titles), outermost first."""
    return [fig.get_suptitle()] + [t for sub in fig.subfigs for t in suptitles(sub)]


def unshown_tick_labels(axis) -> list:
    """The labels of an axis's ticks that lie outside its view (matplotlib keeps them, visible, but draws nothing)."""
    lo, hi = sorted(axis.get_view_interval())
    slack = 1e-9 * (hi - lo)
    ticks = [*zip(axis.get_majorticklocs(), axis.get_major_ticks()),
             *zip(axis.get_minorticklocs(), axis.get_minor_ticks())]
    return [label for loc, tick in ticks if not lo - slack <= loc <= hi + slack for label in (tick.label1, tick.label2)]


LEGEND_MARGIN_PT = 5.0  # a marker whose edge comes nearer a legend's frame than this reads as crowded by it


def legend_covers(ax, renderer) -> list[str]:
    """The labels of the plotted lines (more than two points: not a reference line) and scattered points of `ax`
    that its legend is drawn over (a line's segments sampled, not only its points; a point's whole marker and
    `LEGEND_MARGIN_PT` around it, not only its centre); empty with no legend."""
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D

    legend = ax.get_legend()
    if legend is None or not legend.get_visible() or not ax.get_visible():
        return []
    frame = legend.get_window_extent(renderer)
    data = [line for line in ax.lines if len(line.get_xydata()) > 2]  # not a reference line (axhline: 2 points)
    data += [c for c in ax.collections if isinstance(c, PathCollection)]  # scattered points
    covered = []
    for artist in data:
        line = isinstance(artist, Line2D)
        xy = artist.get_xydata() if line else artist.get_offsets()
        transform = artist.get_transform() if line else artist.get_offset_transform()
        points = transform.transform(np.asarray(xy, dtype=float))
        points = points[np.isfinite(points).all(1)]
        if line and artist.get_linestyle() not in ("None", "none", "", " "):
            t = np.linspace(0, 1, 16)[:, None, None]  # the segments between the points, not only their ends
            points = (points[:-1] * (1 - t) + points[1:] * t).reshape(-1, 2)
        sizes = [] if line else artist.get_sizes()  # a marker's area in pt², its radius √s/2 pt, and a margin
        reach = 0.0 if line else float(np.sqrt(max(sizes, default=0.0)) / 2 + LEGEND_MARGIN_PT) * ax.figure.dpi / 72
        if frame.padded(reach).count_contains(points):
            covered.append(str(artist.get_label()))
    return covered


LEGEND_PLACES = ("best", "upper right", "upper left", "lower right", "lower left", "center right", "center left",
                 "upper center", "lower center")


def legend_clear(ax, **kwargs) -> None:
    """`ax.legend(**kwargs)` at the first place inside the axes where it covers no data (`legend_covers`); with none,
    the y axis is raised by the legend's height and the legend put in the room made at the top ('best' if even that
    covers data: the figure then records the overlap). Never outside: constrained layout would narrow every panel of
    the grid to make room for it."""
    place_clear(ax, ax.legend(**kwargs))


def place_clear(ax, legend) -> None:
    """`legend`, a legend of `ax`, moved to a place where it covers no data, as `legend_clear` says."""
    ax.figure.canvas.draw()  # limits and layout settled once: each place is then measured, not drawn
    renderer = ax.figure.canvas.get_renderer()

    def first_clear(places) -> bool:
        for loc in places:
            legend.set_loc(loc)
            if not legend_covers(ax, renderer):
                return True
        return False

    if first_clear(LEGEND_PLACES):
        return
    bottom, top = ax.get_ylim()  # no clear place: raise the top by the legend's height and put it there
    share = min(0.6, legend.get_window_extent(renderer).height / ax.get_window_extent(renderer).height + 0.05)
    if ax.get_yscale() == "log":
        ax.set_ylim(bottom, top * (top / bottom) ** (share / (1 - share)))
    else:
        ax.set_ylim(bottom, top + (top - bottom) * share / (1 - share))
    first_clear(("upper left", "upper right", "upper center", "best"))


def tick_labels_overlap(axis, renderer) -> bool:
    """Whether two drawn tick labels of `axis` overlap."""
    undrawn = {id(label) for label in unshown_tick_labels(axis)}
    boxes = [t.get_window_extent(renderer).padded(-1) for t in axis.get_ticklabels(which="both")
             if t.get_visible() and t.get_text().strip() and id(t) not in undrawn]
    return any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))


def plain_log_ticks(axis) -> None:
    """A log axis's tick labels as plain numbers ('3', '0.6'), not as powers of ten (3×10⁰, 6×10⁻¹)."""
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")
    axis.set_major_formatter(plain)
    axis.set_minor_formatter(plain)


def readable_log_ticks(fig) -> None:
    """On a log axis whose tick labels overlap (a range of a decade or two shows minor labels such as 3×10⁰ beside
    4×10⁰), the labels as plain numbers (`plain_log_ticks`); if they still overlap, the minor ticks unlabelled."""
    from matplotlib.ticker import NullFormatter

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log" or not tick_labels_overlap(axis, renderer):
                continue
            plain_log_ticks(axis)
            fig.canvas.draw()
            if tick_labels_overlap(axis, renderer):
                axis.set_minor_formatter(NullFormatter())
                fig.canvas.draw()


def overlaps(fig, tolerance_px: float = 1.0) -> list[str]:
    """What a reader cannot read on the saved figure: two drawn texts whose boxes overlap by more than
    `tolerance_px` each way, and a legend drawn over plotted points or lines of its axes. Empty when the layout
    holds."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    undrawn = {id(label) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for label in unshown_tick_labels(axis)}
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in undrawn
             and (t.axes is None or t.axes.get_visible()) and t.get_window_extent(renderer).width > 0]
    boxes = [(t.get_text(), t.get_window_extent(renderer).padded(-tolerance_px)) for t in texts]
    found = [f"text {a!r} overlaps {b!r}" for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
             if box_a.overlaps(box_b)]
    for ax in fig.axes:
        found += [f"the legend of {ax.get_title()!r} covers {label!r}" for label in legend_covers(ax, renderer)]
    return found


PHONE_WIDTH = 4.2  # inches (`as_column`): the smallest text drawn (8.3 pt) at 9 px or more on a 390-px phone


def panels(fig) -> list[list]:
    """A figure's (or subfigure's) panels row by row: each the axes at a place of its grid (a twin with its axes)."""
    places = {}
    for ax in [ax for ax in fig.axes if ax.get_subplotspec() and ax.get_figure(root=False) is fig]:
        places.setdefault((ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start), []).append(ax)
    return [places[key] for key in sorted(places)]


def columns(fig) -> int:
    """How many columns of panels the figure (or a subfigure of it: `figure_rows`' rows) lays side by side."""
    return max([len({p[0].get_subplotspec().colspan.start for p in panels(fig)}), *map(columns, fig.subfigs)])


def as_column(fig, width: float = PHONE_WIDTH, ncols: int = 1):
    """The figure re-laid in place for a phone: its panels (each with its colour bar) one under another, row by row,
    `width` inches wide, each at its aspect (at most square); a shared axis labelled on every panel, a title too wide
    wrapped, a figure legend (`legend_above`) in the columns that fit. `ncols` panels side by side instead of one
    (small square panels, such as a train/test pair, whose text still fits half the width). A figure of one column of
    panels is only narrowed to `width` the same way; None (untouched) when it is no wider than that already."""
    if columns(fig) <= 1 and fig.get_figwidth() <= width:
        return None
    fig.canvas.draw()
    aspects = {}  # each panel's main axes: the height over the width of its drawn box (equal aspect: square)
    for box in [fig, *fig.subfigs]:  # the figure's panels, or those of each of `figure_rows`' rows
        laid = [p for p in panels(box) if any(ax.get_visible() and (ax.axison or ax.has_data()) for ax in p)]
        for ax in [ax for p in panels(box) if p not in laid for ax in p]:
            ax.remove()  # an empty place of the grid (axis off, nothing drawn)
        aspects |= {p[0]: min(b.height / b.width, 1.0) for p in laid for b in [p[0].get_window_extent()]}
        grid = box.add_gridspec(max(-(-len(laid) // ncols), 1), ncols)
        for place, ax in ((place, ax) for place, p in enumerate(laid) for ax in p):
            ax.set_subplotspec(grid[divmod(place, ncols)])
            for name, side in (("x", "labelbottom"), ("y", "labelleft")):  # `subplots(sharey=True)` labels the
                axis, shared = getattr(ax, f"{name}axis"), getattr(ax, f"get_shared_{name}_axes")()  # outer ones
                if len(shared.get_siblings(ax)) > 1:
                    axis.set_tick_params(which="both", **{side: True})
                    labels = [getattr(a, f"{name}axis").get_label_text() for a in shared.get_siblings(ax)]
                    axis.set_label_text(axis.get_label_text() or max(labels, key=bool))  # the first one given
    fig.set_size_inches(width, sum(width / ncols * aspect + 1 / ncols for aspect in aspects.values()))  # refined
    for legend in list(fig.legends):  # remade in as many columns as fit the width
        for ncols in range(len(legend.get_texts()), 0, -1):
            legend.remove()
            legend = fig.legend(legend.legend_handles, [t.get_text() for t in legend.get_texts()], ncols=ncols,
                                loc="outside upper center", frameon=legend.get_frame_on(),
                                facecolor=legend.get_frame().get_facecolor(),
                                labelcolor=[t.get_color() for t in legend.get_texts()])
            if legend.get_window_extent(fig.canvas.get_renderer()).width <= fig.bbox.width:  # its width, not place
                break
    fig.canvas.draw()
    for text in fig.findobj(Text):  # a title wider than the column, wrapped to fit (constrained layout makes room)
        for chars in range(len(text.get_text()), 8, -4):
            box = text.get_window_extent()
            if text.get_rotation() or not text.get_visible() or fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1:
                break
            kept = "$".join(p.replace(" ", "\xa0") if k % 2 else p for k, p in enumerate(text.get_text().split("$")))
            text.set_text(textwrap.fill(kept, chars).replace("\xa0", " "))  # no line break inside maths ($…$)
    for _ in range(3):  # the height at which the panels have their aspects at the width the layout leaves them
        places = {ax: ax.get_position(original=True).transformed(ax.get_figure(root=False).transSubfigure)
                  for ax in aspects}
        fig.set_size_inches(width, fig.get_figheight() + sum(aspects[ax] * b.width - b.height  # a row's panels
                                                              for ax, b in places.items()) / fig.dpi / ncols)  # alike
        fig.canvas.draw()
    return fig


def clear_legends(fig) -> None:
    """Every legend of the figure's panels that covers data as the figure is finally laid out (the layout moves a
    panel's data after its legend was placed; `as_column` re-lays the panels) moved to the first clear place
    (`place_clear`)."""
    fig.canvas.draw()
    for ax in [ax for ax in fig.axes if legend_covers(ax, fig.canvas.get_renderer())]:
        place_clear(ax, ax.get_legend())


def describe(fig) -> dict:
    """What its PNG records for the browser check (log ticks made readable and legends moved off the data first):
    smallest text, overlaps, columns."""
    readable_log_ticks(fig)
    clear_legends(fig)
    return {"smallest_text_pt": smallest_text_pt(fig), "overlaps": overlaps(fig), "columns": columns(fig)}


def alt_text(fig) -> str:
    """What the figure shows, for a reader who cannot see it: its title and its panels' titles (maths in plain
    Unicode, repeated titles said once), one line."""
    titles = suptitles(fig) + [ax.get_title() for ax in fig.axes if ax.get_visible()]
    for tex, word in TEX_WORDS.items():
        titles = [t.replace(tex, word) for t in titles]
    return "; ".join(dict.fromkeys(" ".join(t.split()) for t in titles if t.strip()))


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


def accuracy_curves(ax, history, run: str, title: str, head_alone: bool = False) -> None:
    """Train and test accuracy over the logged steps; `head_alone`: the test accuracy at step 0 (p = 0, uniform
    attention, the fixed head alone) as a dotted line, the level training is measured against."""
    logged = history[(history.run == run) & history.test_acc.notna()]
    ax.plot(logged.step, logged.train_acc, label="train", color="#444444")
    ax.plot(logged.step, logged.test_acc, label="test", color="#ff7f0e")
    if head_alone:
        ax.axhline(logged.test_acc.iloc[0], color="#ff7f0e", lw=1, ls=":", label="test at step 0 (head alone)")
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


# Paper 2 (Magen et al.): attention on the signal token per input, and train and test accuracy per run.
ATTENTION_GROUPS = {"clean train": "#1f77b4", "noisy train": "#d62728", "test": "#7f7f7f"}


def signal_attention_strips(ax, samples, cases: dict) -> None:
    """The softmax weight on the signal token of every input after training, one column per case (run label →
    title): clean and noisy training inputs and test inputs. The points are labelled for a figure legend
    (`legend_above`); the axes keep none, which would cover points."""
    group = np.where(samples.split == "test", "test", np.where(samples.noisy, "noisy train", "clean train"))
    sns.stripplot(data=samples.assign(group=group), x="run", y="signal_attention", hue="group", order=list(cases),
                  hue_order=list(ATTENTION_GROUPS), palette=ATTENTION_GROUPS, dodge=True, jitter=0.3, size=2.5,
                  alpha=0.7, ax=ax)
    ax.set_xticks(range(len(cases)), list(cases.values()))
    ax.set(xlabel="", ylabel="softmax weight\non the signal token", ylim=(-0.03, 1.03))  # two lines: a phone panel is short
    ax.get_legend().remove()


def accuracy_bars(ax, final, cases: dict) -> None:
    """Train and test accuracy of each run (a `final` table), one pair of bars per case (run label → tick label). The
    bars are labelled for a figure legend (`legend_above`); the axes keep none: a bar reaches the top at accuracy 1,
    and a legend inside would cover it on a narrow (phone) figure."""
    table = final.melt(id_vars="run", value_vars=["train_acc", "test_acc"], var_name="split", value_name="accuracy")
    sns.barplot(data=table.replace({"train_acc": "train accuracy", "test_acc": "test accuracy"}), x="run",
                y="accuracy", hue="split", order=list(cases), palette=["#444444", "#ff7f0e"], ax=ax)
    ax.set_xticks(range(len(cases)), list(cases.values()))
    ax.set(xlabel="", ylim=(0, 1.05))
    ax.get_legend().remove()


NOISE_COLORS = {0.0: "#1f77b4", 0.2: "#d62728"}


def _noise_color(eta: float) -> str:
    return NOISE_COLORS.get(round(float(eta), 3), plt.cm.viridis(float(eta)))


def finetune_cells(ax_acc, ax_loss, summary, capped, cap_label: str) -> None:
    """Table 2 as a picture for one data set (its title is its row's: `figure_rows`): test accuracy (± std over
    seeds) and the train loss of the last epoch each run ran, against n. A cell the epoch cap stopped (`capped`, a
    boolean Series on `summary`'s index) is drawn with an open marker and the key's entry `cap_label`: its numbers are not
    the schedule's end. Every row draws the same things, so their key is the figure's (`legend_above` over every
    panel, the loss panels first), never inside a panel, where it would hide the dashed base line or raise the accuracy axis past 100 %."""
    for eta, part in summary.groupby("noise_ratio"):
        part = part.sort_values("n")
        color, cap = _noise_color(eta), np.asarray(capped[part.index], dtype=bool)
        ax_acc.errorbar(part.n, 100 * part.test_acc, yerr=100 * part.test_acc_std, marker="o", capsize=3, color=color)
        ax_loss.plot(part.n, part.train_loss, marker="o", color=color, label=f"η = {eta:g}")
        for ax, y in ((ax_acc, 100 * part.test_acc), (ax_loss, part.train_loss)):
            ax.plot(part.n[cap], y[cap], "o", mfc="white", mec=color, mew=1.5, zorder=3)  # over the filled one
    if capped.any():
        ax_loss.plot([], [], "o", mfc="white", mec="black", mew=1.5, label=cap_label)
    ax_acc.axhline(100 * summary.base_acc.iloc[0], color="black", ls="--", lw=1, label="base (phase 1)")
    for ax in (ax_acc, ax_loss):
        ax.set(xscale="log", xlabel="n (finetune samples)")
    ax_acc.set(title="test accuracy", ylabel="test accuracy (%)")
    ax_loss.set(title="train loss, last epoch run", ylabel="loss on the training labels", ylim=(0, None))


def max_attention_curves(ax, curves, title: str) -> None:
    """Mean over heads and training samples of the largest first-token attention score, per phase-2 epoch: one line
    per noise rate (mean over seeds), the band spans the seeds."""
    for eta, part in curves.groupby("noise_ratio"):
        stats = part.groupby("epoch").max_attention.agg(["mean", "min", "max"])
        color = _noise_color(eta)
        ax.plot(stats.index, stats["mean"], color=color, label=f"η = {eta:g}")
        ax.fill_between(stats.index, stats["min"], stats["max"], color=color, alpha=0.2, lw=0)
    ax.set(title=title, xlabel="phase-2 epoch", ylabel="mean max attention")


SIZE_MARKERS = ("o", "s", "^", "D", "v")  # one marker per n, in increasing n
MOST_SHIFT = 0.02  # the most a point of the backbone study moves sideways (a share), against the differences it shows


def dodged(x, step: float, most: float, low=None, high=None, within=(-np.inf, np.inf)) -> np.ndarray:
    """`x` with the points closer than `step` to each other set apart sideways, none by more than `most` nor past
    `within`; where each point spans [`low`, `high`] on the y axis (its marks), only points whose spans overlap crowd
    each other (one backbone's two n as two backbones'). A cluster of crowding points is placed by `_spread`; where
    it then crowds another point, the two merge and are placed again, until none crowds another."""
    x = np.asarray(x, dtype=float)
    low = np.full(len(x), -np.inf) if low is None else np.asarray(low, dtype=float)
    high = np.full(len(x), np.inf) if high is None else np.asarray(high, dtype=float)
    cluster, out = np.arange(len(x)), x.copy()  # each point's cluster (merged over crowding pairs, never split)
    while True:
        crowding = [(i, j) for i, j in itertools.combinations(range(len(x)), 2) if cluster[i] != cluster[j]
                    and abs(out[i] - out[j]) < step - 1e-9 and low[i] <= high[j] and low[j] <= high[i]]
        if not crowding:
            return out
        for i, j in crowding:
            cluster[cluster == cluster[j]] = cluster[i]
        for label in set(cluster):
            order = sorted(np.flatnonzero(cluster == label), key=lambda k: (x[k], k))
            out[order] = _spread(x[order], step, most, within)


def _spread(x: np.ndarray, step: float, most: float, within) -> np.ndarray:
    """Places for the sorted `x` (ties in the order given), each within `most` of it and inside `within`, neighbours
    the largest gap up to `step` those allow apart: about the mean of `x` where they let them, nearest it if not."""
    lo, hi, rank = np.maximum(x - most, within[0]), np.minimum(x + most, within[1]), np.arange(len(x))
    gap = min([step] + [(hi[i] - lo[j]) / (i - j) for i in rank for j in rank[:i]])
    left = np.array([max(lo[j] + (i - j) * gap for j in rank[:i + 1]) for i in rank])
    right = np.array([min(hi[j] - (j - i) * gap for j in rank[i:]) for i in rank])
    return np.clip(x.mean() + (rank - (len(x) - 1) / 2) * gap, left, right)


def study_points(ax, points, x: str, xlabel: str, low: float, high: float, cost: float) -> float:
    """The backbone study on the paper's axes: per backbone a colour (text rows with hollow markers), per n a
    marker, its points joined in increasing n; y = test minus base accuracy (points). Below or above each point, its
    clean-label cell (same backbone and n on clean labels: `points.clean_minus_base`) as a dash of its colour joined
    to it by a dotted line, and `cost` points below that dash a grey one: the point's harmful level. Points at nearly
    the same x whose marks share a height, of two backbones or of one backbone's two n, are set apart sideways
    (`dodged`), each by at most `MOST_SHIFT` and never past 0 or 1 (a share); hollow markers are see-through and a
    larger n's larger, under a smaller n's. Returns the largest shift (in units of x) and whether points still crowd."""
    sizes = sorted(points.n.unique())
    colors = dict(zip(points.backbone_label.unique(), sns.color_palette("deep")))
    box = ax.get_window_extent()  # the panel in pixels: a mark's size in data units follows from it
    pad = (high - low) * 5 * ax.figure.dpi / 72 / box.height  # a marker's half height (5 pt)
    step = 1.1 * 12 * ax.figure.dpi / 72 / box.width  # a circle beside a dash (12 pt) on an x axis 1.1 wide
    low_mark = np.minimum(points.test_minus_base, points.clean_minus_base - cost) - pad  # the point or its grey dash
    high_mark = np.maximum(points.test_minus_base, points.clean_minus_base) + pad
    points = points.assign(shown=dodged(points[x], step, MOST_SHIFT, low=low_mark, high=high_mark, within=(0, 1)))
    crowded = any(abs(a - b) < step - 1e-9 and la <= hb and lb <= ha for (a, la, ha), (b, lb, hb)
                  in itertools.combinations(zip(points.shown, low_mark, high_mark), 2))  # more than MOST_SHIFT parts
    for name, part in points.groupby("backbone_label", sort=False):
        part = part.sort_values("n")
        face = "none" if part.kind.iloc[0] == "text" else colors[name]
        ax.plot(part.shown, part.test_minus_base, color=colors[name], label=name)
        for n, row in part.groupby("n"):
            rank = sizes.index(n)  # filled markers edged in white
            ax.plot(row.shown, row.test_minus_base, linestyle="none", color=colors[name], markerfacecolor=face,
                    markeredgecolor=colors[name] if face == "none" else "white", markersize=7 + 3 * rank,
                    markeredgewidth=1.5, marker=SIZE_MARKERS[rank % len(SIZE_MARKERS)], zorder=4 + len(sizes) - rank)
        for at, y, level in zip(part.shown, part.test_minus_base, part.clean_minus_base):
            ax.plot([at, at], [y, level], color=colors[name], linestyle=":", linewidth=1)
        ax.plot(part.shown, part.clean_minus_base, linestyle="none", marker="_", markersize=10, markeredgewidth=2,
                color=colors[name])
        ax.plot(part.shown, part.clean_minus_base - cost, linestyle="none", marker="_", markersize=8,
                markeredgewidth=1.5, color="grey")
    for rank, n in enumerate(sizes):  # the markers' key, with no line
        ax.plot([], [], linestyle="none", marker=SIZE_MARKERS[rank % len(SIZE_MARKERS)], color="black",
                markersize=7 + 3 * rank, label=f"n = {n}")
    ax.plot([], [], linestyle="none", marker="_", markersize=10, markeredgewidth=2, color="black",
            label="clean-label cell")
    ax.plot([], [], linestyle="none", marker="_", markersize=8, markeredgewidth=1.5, color="grey",
            label=f"harmful level ({cost:g} below)")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set(xlim=(-0.05, 1.05), ylim=(low, high),
           xticks=np.linspace(0, 1, 6), xlabel=xlabel, ylabel="test − base accuracy (points)")
    return float((points.shown - points[x]).abs().max()), crowded
