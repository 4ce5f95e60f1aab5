"""The keys of the maps and composites (`plots.legend_above`, `category_map`, `category_key`, `theory_overlay`'s
labels) placed where they cover no cell, and a small single panel's width and plain log ticks."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from benign import heatmaps, plots  # noqa: E402

D, MU = [250, 500, 1000], [5.0, 10.0, 20.0]
REGIMES = np.array([["benign", "benign", "not_overfitting"], ["harmful", "benign", "benign"],
                    ["harmful", "harmful", "benign"]])


@pytest.fixture(autouse=True)
def styled():
    plots.style()
    yield
    plt.close("all")


def test_legend_above_gathers_several_axes_and_extra_entries_once():
    fig, (a, b) = plots.figure(1, 2)
    a.plot([0, 1], [0, 1], label="relevant")
    b.plot([0, 1], [1, 0], label="test")
    b.plot([0, 1], [0, 0], label="relevant")  # the same label again: one entry
    plots.legend_above(fig, a, b, ncols=3, extra=heatmaps.category_key({"stays_below": "green"}, "test error: "))
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["relevant", "test", "test error: stays below"]


def test_a_regime_map_keeps_its_key_off_its_cells_when_asked():
    fig, axes = plots.figure(1, 3)
    heatmaps.regime_map(axes[0], D, MU, REGIMES, "inside")
    heatmaps.regime_map(axes[1], D, MU, REGIMES, "no key", legend=False)
    heatmaps.category_map(axes[2], D, MU, REGIMES, heatmaps.REGIME_COLORS, "under", legend="below")
    assert axes[0].get_legend() is not None and axes[1].get_legend() is None
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    key, panel = axes[2].get_legend().get_window_extent(renderer), axes[2].get_window_extent(renderer)
    assert key.y1 <= panel.y0  # under the map, over none of its cells
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == ["harmful", "benign", "not overfitting"]


def test_setting_labels_get_a_box_only_when_asked_and_the_harmful_boundary_is_maths():
    fig, (plain, boxed) = plots.figure(1, 2)
    for ax, box in ((plain, False), (boxed, True)):
        ax.set(xlim=(250, 5000), ylim=(5, 100))
        heatmaps.theory_overlay(ax, [250, 5000], 20, settings={"balanced": (2000, 20.0)}, label_box=box)
    assert plain.texts[0].get_bbox_patch() is None and boxed.texts[0].get_bbox_patch() is not None
    assert "SNR = $d^{-1/4}$" in plain.get_legend_handles_labels()[1]


def test_a_small_panel_has_its_width_and_log_ticks_read_as_plain_numbers():
    fig, ax = plots.figure(width=plots.PHONE_WIDTH)
    assert fig.get_size_inches()[0] == pytest.approx(plots.PHONE_WIDTH)
    ax.semilogy([0, 1], [0.5, 2.5])
    plots.plain_log_ticks(ax.yaxis)
    fig.canvas.draw()
    labels = {t.get_text() for t in ax.yaxis.get_ticklabels(which="both") if t.get_text()}
    assert "2" in labels and not any("$" in t for t in labels)  # no mathtext powers such as 2×10⁰


def test_a_setting_on_the_bottom_rows_has_its_label_raised_and_tied_to_its_star():
    fig, ax = plots.figure()
    ax.set(xlim=(250, 5000), ylim=(2.5, 100))
    heatmaps.theory_overlay(ax, [250, 5000], 20, settings={"balanced": (2000, 20.0), "large noise": (4500, 5.0)},
                            label_box=True)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    balanced, tie, noise = ax.texts
    assert (balanced.arrow_patch, tie.get_text(), noise.arrow_patch) == (None, "", None)  # one line, no text
    assert tie.arrow_patch is not None and tie.xy == noise.xy == (4500, 5.0)  # ties the raised label to its star
    star = ax.transData.transform((4500, 5.0))[1]
    assert noise.get_window_extent(renderer).y0 > star + 20  # above the bottom rows, not on them
    assert plots.overlaps(fig) == []
    assert not any(c.get_clip_on() for c in ax.collections)  # a star on the frame is drawn whole


def test_unevenly_spaced_rows_are_drawn_on_a_log_axis_none_a_sliver():
    mu = [5.0, 7.5, 10.0, 15.0, 20.0, 40.0, 60.0, 80.0]  # the long runs' rows of Figure 5's book profile
    assert heatmaps.uneven(mu) and not heatmaps.uneven([5.0, 7.5, 10.0, 12.5]) and not heatmaps.uneven([5.0])
    fig, axes = plt.subplots(1, 2)
    for ax, log_mu in zip(axes, (False, True)):
        heatmaps.regime_map(ax, [250, 500], mu, np.full((2, len(mu)), "benign"), "rows", legend=False, log_mu=log_mu)
    fig.canvas.draw()

    def heights(ax):  # each row's height on the screen
        y = ax.transData.transform(ax.collections[0].get_coordinates()[:, 0])[:, 1]
        return np.diff(y)

    linear, logged = heights(axes[0]), heights(axes[1])
    assert linear.max() / linear.min() == pytest.approx(8, rel=0.01)  # 20 against 2.5: the low rows are slivers
    # edges halfway in log: the row at 40 spans half of log 2 and half of log 1.5, the row at 80 log(4/3)
    assert logged.max() / logged.min() == pytest.approx(np.log(3) / 2 / np.log(4 / 3), rel=0.01)
    assert axes[1].get_yscale() == "log" and [t.get_text() for t in axes[1].get_yticklabels()] == \
        ["5", "7.5", "10", "15", "20", "40", "60", "80"]
