"""The book: every notebook run at the smoke profile, the generated pages, a strict build, and failures reported."""

import json
import re
import time

import numpy as np
import pytest

from benign import book, expected, notebooks, paths, records
from benign.notebooks import NotebookFailed


def test_every_notebook_page_shows_its_figure_and_table(built_book):
    assert (built_book / "index.html").exists() and (built_book / "book" / "model.html").exists()
    for name in notebooks.names():
        page = (built_book / "notebooks" / f"{name}.html").read_text()
        assert "Paper vs here" in page or "paper vs here" in page.lower(), name
        assert re.search(r'<img[^>]+src="[^"]*\.png"', page), f"{name} page shows no figure"
        assert "Traceback" not in page


def test_generated_pages_gather_every_notebook(built_book):
    summary = (built_book / "book" / "summary.html").read_text()
    assert re.search(r"Of the \d+ claims of the two papers this build tests", summary)
    assert re.search(r"paper: \d+ of \d+ match", summary)
    reproducibility = (built_book / "book" / "reproducibility.html").read_text()
    downloads = (built_book / "book" / "downloads.html").read_text()
    links = re.findall(r'href="([^"]*_downloads/[^"]+)"', downloads)
    assert links and all((built_book / "book" / link).resolve().exists() for link in links)
    for name in book.toc_notebooks():
        assert f">{name}<" in reproducibility
        assert any(link.endswith(f"/{name}.ipynb") for link in links), name
        assert any(link.endswith(f"/{name}.metrics.json") for link in links), name  # records named by notebook
    assert not any(link.endswith("/metrics.json") for link in links)
    assert any(link.endswith(".pdf") for link in links) and any(link.endswith(".png") for link in links)
    assert "torch" in reproducibility and "smoke" in reproducibility


def test_the_landing_page_and_the_summary_lead_with_the_verdict_matrix(built_book):
    """Before any figure, the landing page shows the verdicts; every verdict on both pages is in words on its colour."""
    from benign import ledger, pages

    for page in ("index", "summary"):
        text = (built_book / "book" / f"{page}.html").read_text()
        article = text[text.index("<article"):]
        assert 'class="benign-matrix"' in article, page
        figures = [article.find(tag) for tag in ("<img", "<figure") if tag in article]
        assert not figures or article.index('class="benign-matrix"') < min(figures), page
        chips = re.findall(r'<span class="benign-verdict ([\w-]+)">([^<]+)</span>', article)
        assert chips and all(words in ledger.VERDICTS and css == pages.verdict_class(words) for css, words in chips)
        rows = re.findall(r'<details class="benign-row"><summary><span class="benign-verdict', article)
        assert len(rows) == article.count('<details class="benign-row">'), page  # the verdict first in every row


def test_a_failing_notebook_keeps_its_report_and_stops_the_build(tmp_path, monkeypatch):
    executed = tmp_path / "work" / "fig1_token_selection.ipynb"
    executed.parent.mkdir()
    executed.write_text("{}")

    def failing(name, *args, **kwargs):
        raise NotebookFailed(f"{name} failed in cell 3: ValueError: boom", executed)

    monkeypatch.setattr(notebooks, "run", failing)
    with pytest.raises(RuntimeError, match="failed in cell 3: ValueError: boom — report: .*reports"):
        book.run_one("fig1_token_selection", "smoke", tmp_path / "reports")
    assert (tmp_path / "reports" / "fig1_token_selection.ipynb").exists()

    started = []

    def second_fails(name, profile_name, reports, children=None):
        started.append(name)
        return f"{name}: boom" if len(started) == 2 else fake_run(tmp_path, name)

    monkeypatch.setattr(book, "results_dir", lambda name, profile: tmp_path / name)
    monkeypatch.setattr(book, "run_in_process", second_fails)
    with pytest.raises(RuntimeError, match=f"{book.start_order()[1]}: boom"):
        book.run_all("smoke", tmp_path / "reports", jobs=1)
    assert len(started) == 2  # nothing started after the failure


def fake_run(folder, name, wait_s=0.0):
    """What a notebook's process leaves: its metrics.json."""
    time.sleep(wait_s)
    (folder / name).mkdir(parents=True)
    (folder / name / "metrics.json").write_text(json.dumps({"notebook": name}))
    return ""


def test_a_failing_notebook_process_reports_its_last_line(tmp_path):
    error = book.run_in_process("no_such_notebook", "smoke", tmp_path)
    assert error.startswith("no_such_notebook: ") and "log: " in error
    assert (tmp_path / "no_such_notebook.log").exists()


def test_every_notebook_and_page_is_in_the_table_of_contents():
    files = set(book.toc_files())
    assert {f"notebooks/{name}" for name in notebooks.names()} <= files
    assert {f"book/{p.stem}" for p in (paths.ROOT / "book").glob("*.md")} <= files
    assert sorted(book.toc_notebooks()) == notebooks.names()


def test_building_the_sources_by_hand_stops_and_points_to_make_book(tmp_path):
    """`jupyter-book build .` would render notebooks that never ran: the configuration refuses, in one message."""
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(paths.ROOT),
                           "--path-output", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode != 0
    assert "build the book with `make book` (benign book)" in done.stdout + done.stderr
    assert not list(tmp_path.rglob("*.html"))


def test_the_page_hides_papermill_s_injected_cell_and_the_download_keeps_it():
    cell = {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": "out_dir = '/tmp/x'"}
    other = {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "out_dir = ''"}
    page = book.hide_injected_parameters({"cells": [dict(other), dict(cell, metadata={"tags": ["injected-parameters"]})]})
    assert page["cells"][1]["metadata"]["tags"] == ["injected-parameters", "remove-cell"]
    assert page["cells"][0]["metadata"]["tags"] == ["parameters"]


def test_built_pages_show_parameters_once_and_downloads_keep_the_injected_cell(built_book):
    import json

    for name in notebooks.names():
        html = (built_book / "notebooks" / f"{name}.html").read_text()
        assert html.count("tag_parameters") == 1 and "injected-parameters" not in html, name
        executed = next((built_book / "_downloads").rglob(f"{name}.ipynb"))
        tags = [c.get("metadata", {}).get("tags", []) for c in json.loads(executed.read_text())["cells"]]
        assert ["injected-parameters"] in tags, name


def test_the_build_prints_one_line_per_notebook_and_reuses_runs_only_once_made(tmp_path, monkeypatch, capsys):
    """Two notebooks side by side; a notebook that reuses another's runs (`book.AFTER`) starts once that one ended."""
    events = []

    def recorded(name, profile_name, reports, children=None):
        events.append(("start", name))
        fake_run(tmp_path, name, wait_s=0.05)
        events.append(("end", name))
        return ""

    monkeypatch.setattr(book, "run_in_process", recorded)
    monkeypatch.setattr(book, "results_dir", lambda name, profile: tmp_path / name)
    records = book.run_all("smoke", tmp_path / "reports", jobs=2)
    lines = capsys.readouterr().out.splitlines()
    names = book.toc_notebooks()
    assert list(records) == names and len(lines) == len(names)
    finished = [re.fullmatch(rf"\[{k}/{len(names)}\] (\w+)  \d+\.\d s", line).group(1)
                for k, line in enumerate(lines, 1)]
    assert sorted(finished) == sorted(names)
    assert [name for kind, name in events if kind == "start"][:2] == list(book.FIRST)  # the longest chains first
    for later, first in book.AFTER.items():
        assert events.index(("end", first)) < events.index(("start", later)), later
    assert max(sum(1 for kind, _ in events[:k] if kind == "start") - sum(1 for kind, _ in events[:k] if kind == "end")
               for k in range(len(events) + 1)) == 2  # two at a time, never more


def test_the_source_archive_holds_what_a_downloaded_notebook_needs(tmp_path):
    import tarfile

    archive = book.source_archive(tmp_path)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    root = archive.name.removesuffix(".tar.gz")
    for needed in ("pyproject.toml", "Makefile", "constraints.txt", "benign/notebooks.py", "notebooks/fig3_dynamics.py",
                   "benign/settings.py"):
        assert f"{root}/{needed}" in names, needed
    assert not [n for n in names if "__pycache__" in n or "/results" in n or "/.venv" in n]


def test_runs_of_an_unpacked_source_archive_record_the_commit_it_was_made_from(tmp_path):
    """The archive holds no .git: its COMMIT file (the commit it was made from) is what its runs record."""
    import subprocess
    import sys
    import tarfile

    head = records.git_commit()
    if head is None:
        pytest.skip("not a git clone: nothing to record")
    archive = book.source_archive(tmp_path / "downloads")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    root = tmp_path / "unpacked" / archive.name.removesuffix(".tar.gz")
    assert (root / records.COMMIT_FILE).read_text() == head + "\n"
    seen = subprocess.run([sys.executable, "-c", "from benign import records; print(records.git_commit())"],
                          cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=120)
    assert seen.returncode == 0 and seen.stdout.strip() == head, seen.stderr


def test_a_figure_page_shows_the_saved_png_linked_to_its_full_size_and_pdf_and_folds_code():
    shown = {"output_type": "display_data", "data": {"image/png": "iVBOR"},
             "metadata": {records.FIGURE_KEY: {"notebook": "fig3_dynamics", "name": "fig3_dynamics",
                                               "alt": "balanced; large noise"}}}
    other = {"output_type": "stream", "name": "stdout", "text": "12 runs\n"}
    page = {"cells": [{"cell_type": "code", "metadata": {}, "source": "nb.save_figure(fig)", "outputs": [other, shown]},
                      {"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "source": "x", "outputs": []},
                      {"cell_type": "markdown", "metadata": {}, "source": "text"}]}
    page = book.fold_code(book.link_figures(page))
    first, removed, text = page["cells"]
    assert first["outputs"][0] == other
    markdown = first["outputs"][1]["data"]["text/markdown"]
    assert "```{image} ../downloads/fig3_dynamics/fig3_dynamics.png" in markdown and ":width: 100%" in markdown
    assert "{download}`PDF <../downloads/fig3_dynamics/fig3_dynamics.pdf>`" in markdown
    assert f":alt: {notebooks.title('fig3_dynamics')}: balanced; large noise\n" in markdown  # what it shows
    assert first["metadata"]["tags"] == ["hide-input"] and removed["metadata"]["tags"] == ["remove-cell"]
    assert "tags" not in text["metadata"]


def test_a_figures_alt_text_names_its_title_and_panels_in_plain_words():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benign import plots

    fig, axes = plt.subplots(1, 3)
    fig.suptitle("Figure 3")
    axes[0].set_title(r"balanced, $\|\mu\| = 20$")
    axes[1].set_title(r"balanced, $\|\mu\| = 20$")  # repeated: said once
    axes[2].set_visible(False)
    assert plots.alt_text(fig) == "Figure 3; balanced, ‖μ‖ = 20"
    plt.close(fig)


def test_overlaps_finds_texts_on_texts_and_a_legend_on_data_and_nothing_in_a_clean_layout():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benign import plots

    fig, ax = plots.figure()
    ax.plot(range(10), range(10), label="rising")
    ax.scatter([0.3], [8.6], label="point")
    ax.legend(loc="lower right")  # clear of the line and the point
    assert plots.overlaps(fig) == []
    ax.legend(loc="center")  # on the line's middle
    assert plots.overlaps(fig) == ["the legend of '' covers 'rising'"]
    ax.legend(loc="upper left")  # on the point (the line's points are clear of it)
    assert plots.overlaps(fig) == ["the legend of '' covers 'point'"]
    ax.legend(loc="lower right")
    ax.text(4, 1, "one label here")
    ax.text(4.3, 1, "another label")
    assert plots.overlaps(fig) == ["text 'one label here' overlaps 'another label'"]
    plt.close(fig)


def test_a_legend_crowding_a_large_marker_covers_it_and_the_saved_figure_moves_it_off():
    """The check reads a point's whole marker (and a margin), not its centre alone: the clock page's large step-size
    points sat at the edge of their legend's frame. `describe`, run on every saved figure and its phone version,
    moves such a legend to a clear place before it records the overlaps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benign import plots

    fig, ax = plots.figure()
    ax.set(xlim=(0, 10), ylim=(0, 10))
    legend = ax.legend(handles=[ax.scatter([9.0], [1.0], s=70, label="large")], loc="upper left")
    fig.canvas.draw()
    frame = legend.get_window_extent(fig.canvas.get_renderer()).transformed(ax.transData.inverted())
    ax.collections[0].set_offsets([[frame.x1 + 0.1, frame.y0 + frame.height / 2]])  # centre just right of the frame
    assert plots.overlaps(fig) == ["the legend of '' covers 'large'"]
    assert plots.describe(fig)["overlaps"] == [] and ax.get_legend() is legend  # moved, not remade
    plt.close(fig)


def test_legend_clear_finds_a_free_place_or_makes_room_and_log_ticks_are_relabelled_when_they_collide():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benign import plots

    fig, ax = plots.figure()
    x = np.linspace(0, 1, 50)
    ax.plot(x, x, label="rising")  # the upper-left and lower-right corners are free
    plots.legend_clear(ax)
    assert plots.overlaps(fig) == []
    for level in np.linspace(0, 1, 4):  # lines across the whole panel: no place is free, the top is raised
        ax.plot(x, np.full_like(x, level), label=f"level {level:g}")
    top = ax.get_ylim()[1]
    plots.legend_clear(ax)
    assert ax.get_ylim()[1] > top and plots.overlaps(fig) == []
    plt.close(fig)
    fig, ax = plots.figure(1, 3)
    ax[0].loglog([0.45, 5.5], [1, 2], "o")  # a decade: matplotlib labels minor ticks that collide in a narrow panel
    assert any(o.startswith("text") for o in plots.overlaps(fig))
    plots.readable_log_ticks(fig)
    assert plots.overlaps(fig) == []
    plt.close(fig)


def test_a_saved_figure_records_its_smallest_text_and_dpi(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benign import plots

    plots.style()
    fig, ax = plots.figure()
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend()
    ax.annotate("small", (0.5, 0.5), fontsize=7)
    assert fig.get_size_inches()[0] == plots.PAGE_WIDTH
    assert plots.smallest_text_pt(fig) == 7
    ax.texts[0].set_visible(False)  # hidden text does not count
    assert plots.smallest_text_pt(fig) == plots.FONT_SIZES["xtick.labelsize"]
    png, pdf = records.save_figure(fig, tmp_path, "f", description={"smallest_text_pt": 9.0})
    plt.close(fig)
    assert pdf.exists() and records.figure_description(png) == {"smallest_text_pt": 9.0, "dpi": 150}
    from PIL import Image

    Image.new("RGB", (4, 4)).save(tmp_path / "plain.png")
    assert records.figure_description(tmp_path / "plain.png") is None


def test_metrics_json_is_strict_json_with_nan_as_null_in_extra_records_too(tmp_path):
    """A table with a missing value (the backbone study's text rows have no control) is written, NaN as null."""
    import math

    records.save_metrics(tmp_path, "nb", {"a": math.nan}, {"p": 1},
                         extra={"rows": [{"whole": math.nan, "n": 20}], "inf": math.inf})
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["a"] is None and saved["rows"] == [{"whole": None, "n": 20}] and saved["inf"] is None


def test_the_model_page_says_which_harm_threshold_applies_where_from_the_package():
    said = book.harm_thresholds()  # the synthetic pages' share, the real-data pages' points and share
    assert said == {"harm_threshold": "0.01", "real_cost_points": "5", "real_cost_threshold": "0.05"}
    model = (paths.ROOT / "book" / "model.md").read_text()
    assert all(f"{{{{ {key} }}}}" in model for key in said)
    assert "counts a cost as harm beyond {{ harm_threshold }} of\ntest accuracy, a real-data page" in model
