"""`plots.as_column`: a figure's panels re-laid as one column for a phone, and what its saved PNG then records."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from benign import plots  # noqa: E402
from benign.records import figure_description, save_figure  # noqa: E402


@pytest.fixture(autouse=True)
def styled():
    plots.style()
    yield
    plt.close("all")


def grid_2x3():
    """A 2×3 figure as the notebooks make them: shared y (inner tick labels hidden), a colour bar on one panel, a
    legend above the figure, a panel left empty (axis off) and a title too wide for a phone."""
    fig, axes = plots.figure(2, 3, sharey=True)
    x = np.linspace(1, 10, 20)
    for k, ax in enumerate(axes.flat[:5]):
        ax.plot(x, x * (k + 1), label="rising line")
        ax.plot(x, 60 - x, label="a falling reference line")
        ax.set(title=f"panel {k}", xlabel=f"x of panel {k}")
    axes[0, 0].set_ylabel("shared y")
    axes[0, 1].set_title("a long panel title that a phone's column is too narrow to hold on one line")
    mesh = axes[1, 1].pcolormesh(np.linspace(0, 10, 6), np.linspace(0, 60, 6), np.arange(25.0).reshape(5, 5))
    fig.colorbar(mesh, ax=axes[1, 1], label="colour bar")
    axes[1, 2].axis("off")  # the grid's unused place
    plots.legend_above(fig, axes[0, 0], ncols=2)
    return fig, axes


def test_a_grid_becomes_one_phone_wide_column_in_reading_order_with_every_text_kept():
    fig, axes = grid_2x3()
    before = plots.describe(fig)
    assert before["columns"] == 3
    titles = [" ".join(ax.get_title().split()) for ax in axes.flat[:5]]
    assert plots.as_column(fig) is fig
    assert plots.columns(fig) == 1
    shown = [panel[0] for panel in plots.panels(fig)]
    assert [" ".join(ax.get_title().split()) for ax in shown] == titles  # row by row, the empty place dropped
    assert [ax.get_xlabel() for ax in shown] == [f"x of panel {k}" for k in range(5)]
    assert all(ax.get_ylabel() == "shared y" for ax in shown)  # the shared axis labelled on every panel
    fig.canvas.draw()
    assert all(any(t.get_visible() and t.get_text() for t in ax.get_yticklabels()) for ax in shown)
    tops = [ax.get_position().y0 for ax in shown]
    assert tops == sorted(tops, reverse=True)  # one under another
    assert max(ax.get_position().x1 for ax in shown) - min(ax.get_position().x0 for ax in shown) < 1
    bar = next(ax for ax in fig.axes if ax not in shown)  # the colour bar stays beside its panel
    assert bar.get_ylabel() == "colour bar"
    assert shown[4].get_position().y0 - 0.01 < bar.get_position().y0 < shown[4].get_position().y1
    assert bar.get_position().x0 > shown[4].get_position().x1
    assert abs(fig.get_figwidth() - plots.PHONE_WIDTH) < 1e-9 and fig.get_figheight() > 4 * plots.ROW_HEIGHT
    after = plots.describe(fig)
    assert after == {"smallest_text_pt": before["smallest_text_pt"], "overlaps": [], "columns": 1}
    fig.canvas.draw()
    assert fig.legends[0].get_window_extent().width <= fig.bbox.width  # the legend in as many columns as fit
    assert all(fig.bbox.x0 <= ax.title.get_window_extent().x0 and ax.title.get_window_extent().x1 <= fig.bbox.x1
               for ax in shown)  # the long title wrapped


def test_rows_of_panels_each_under_its_row_title_become_one_column():
    fig, axes = plots.figure_rows(["first row", "second row"], 2)
    for k, ax in enumerate(axes.flat):
        ax.scatter([0, 1], [1, 0], label="points")
        ax.set(title=f"panel {k}", aspect="equal")
    plots.legend_above(fig, axes[0, 0])
    assert plots.columns(fig) == 2
    plots.as_column(fig)
    assert plots.columns(fig) == 1 and plots.suptitles(fig) == ["", "first row", "second row"]
    order = [ax.get_title() for sub in fig.subfigs for ax in (p[0] for p in plots.panels(sub))]
    assert order == ["panel 0", "panel 1", "panel 2", "panel 3"]
    fig.canvas.draw()
    heights = [ax.get_window_extent() for ax in axes.flat]
    assert sorted(heights, key=lambda b: -b.y0) == heights  # one under another, in reading order
    assert all(abs(b.width - b.height) < 2 for b in heights)  # square panels stay square
    assert plots.overlaps(fig) == []


def test_a_one_column_figure_as_narrow_as_a_phone_is_left_as_it_is(tmp_path):
    fig, axes = plt.subplots(2, 1, figsize=(plots.PHONE_WIDTH, 5), layout="constrained")
    for ax in axes:
        ax.plot([0, 1], [0, 1])
    size, places = fig.get_size_inches().copy(), [ax.get_subplotspec() for ax in axes]
    assert plots.as_column(fig) is None
    assert (fig.get_size_inches() == size).all() and [ax.get_subplotspec() for ax in axes] == places
    save_figure(fig, tmp_path, "column", description=plots.describe(fig), formats=("png",))
    assert figure_description(tmp_path / "column.png")["columns"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["column.png"]


def test_a_notebook_saves_a_phone_version_of_a_grid_and_the_page_shows_both_versions(tmp_path, monkeypatch):
    import IPython.display

    from benign import book, notebooks, settings
    from benign.records import FIGURE_KEY

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda image, metadata: shown.append(metadata[FIGURE_KEY]))
    nb = notebooks.Notebook("fig5_heatmap", settings.Fig5Heatmap(), {}, tmp_path, "cpu", 1)
    nb.save_figure(grid_2x3()[0])
    fig, axes = plt.subplots(2, 1, figsize=(plots.PHONE_WIDTH, 5), layout="constrained")  # as narrow as a phone
    axes[0].plot([0, 1], [0, 1])
    nb.save_figure(fig, "column")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["column.pdf", "column.png", "fig5_heatmap.pdf",
                                                          "fig5_heatmap.phone.png", "fig5_heatmap.png"]
    wide, phone = (figure_description(tmp_path / f"fig5_heatmap{v}.png") for v in ("", ".phone"))
    assert wide["columns"] == 3 and phone["columns"] == 1 and phone["overlaps"] == [] and phone["dpi"] == wide["dpi"]
    assert [s["phone"] for s in shown] == [True, False]
    page = {"cells": [{"cell_type": "code", "metadata": {}, "source": "", "outputs": [
        {"output_type": "display_data", "data": {}, "metadata": {FIGURE_KEY: s}} for s in shown]}]}
    grid, column = (o["data"]["text/markdown"] for o in book.link_figures(page)["cells"][0]["outputs"])
    where = "../downloads/fig5_heatmap/fig5_heatmap"
    assert f"```{{image}} {where}.png\n" in grid and ":class: benign-figure benign-figure-wide\n" in grid
    assert f"```{{image}} {where}.phone.png\n" in grid and ":class: benign-figure benign-figure-phone\n" in grid
    assert grid.count(f":alt: {notebooks.title('fig5_heatmap')}: ") == 2  # both versions say what they show
    assert grid.count("{download}`PNG") == 1 and grid.count("{download}`PDF") == 1  # the links once
    assert f"{where}.png>`" in grid and "phone.png>`" not in grid
    assert column.count("```{image}") == 1 and ":class: benign-figure\n" in column


def test_a_wide_one_column_figure_is_narrowed_to_a_phone_with_its_text_readable():
    """Paper 2's figures were one column 8 inches wide: shown at 358 px on a phone, their text was 3 px high."""
    fig, axes = plots.figure(2, 1)  # the page's width, 8 inches
    for ax in axes:
        ax.plot([0, 1, 2], [0, 1, 0.5], label="a curve")
        ax.set(title="a panel", xlabel="n (training samples)", ylabel="accuracy")
    places = [ax.get_subplotspec().rowspan.start for ax in axes]
    assert plots.as_column(fig) is fig
    assert fig.get_figwidth() == pytest.approx(plots.PHONE_WIDTH)
    assert [ax.get_subplotspec().rowspan.start for ax in axes] == places  # one under another, as before
    assert plots.overlaps(fig) == [] and plots.smallest_text_pt(fig) >= 8


def test_pairs_of_square_panels_stay_side_by_side_on_a_phone_when_asked():
    """Figure 1's layout: one row of a train and a test panel per query (`figure_rows`), square panels; with
    `ncols=2` each pair keeps its row at the phone's width, the panels square, rows one under another."""
    fig, axes = plots.figure_rows(["first query", "second query", "third query"], 2, row_height=3.6)
    for ax in axes.flat:
        ax.scatter([0, 1, 2], [2, 1, 0])
        ax.set(aspect="equal", xlabel="x", ylabel="y", title="accuracy 1.00")
    assert plots.as_column(fig, ncols=2) is fig
    assert plots.columns(fig) == 2 and abs(fig.get_figwidth() - plots.PHONE_WIDTH) < 1e-9
    fig.canvas.draw()
    boxes = [[ax.get_window_extent() for ax in row] for row in axes]
    for left, right in boxes:
        assert abs(left.y0 - right.y0) < 1 and left.x1 < right.x0  # a pair side by side
        assert 0.8 < left.height / left.width < 1.25 and left.width > 0.3 * fig.bbox.width  # square, half the width
    assert boxes[0][0].y0 > boxes[1][0].y1 and boxes[1][0].y0 > boxes[2][0].y1  # rows one under another
    assert fig.get_figheight() < 3 * plots.PHONE_WIDTH  # a third of the one-column height, about
    assert plots.describe(fig)["overlaps"] == []
