"""The book: every notebook run at the smoke profile, the generated pages, a strict build, and failures reported."""

import re

import pytest
import yaml

from benign import book, notebooks, paths
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
    assert re.search(r"<strong>\d+ of \d+</strong> compared numbers match", summary)
    reproducibility = (built_book / "book" / "reproducibility.html").read_text()
    downloads = (built_book / "book" / "downloads.html").read_text()
    links = re.findall(r'href="([^"]*_downloads/[^"]+)"', downloads)
    assert links and all((built_book / "book" / link).resolve().exists() for link in links)
    for name in book.toc_notebooks():
        assert f">{name}<" in reproducibility
        assert any(link.endswith(f"/{name}.ipynb") for link in links), name
    assert any(link.endswith(".pdf") for link in links) and any(link.endswith(".png") for link in links)
    assert "torch" in reproducibility and "smoke" in reproducibility


def test_a_failing_notebook_stops_the_build_and_keeps_its_report(tmp_path, monkeypatch):
    executed = tmp_path / "work" / "fig1_token_selection.ipynb"
    executed.parent.mkdir()
    executed.write_text("{}")

    def failing(name, *args, **kwargs):
        raise NotebookFailed(f"{name} failed in cell 3: ValueError: boom", executed)

    monkeypatch.setattr(notebooks, "run", failing)
    with pytest.raises(RuntimeError, match="failed in cell 3: ValueError: boom — report: .*reports"):
        book.run_all("smoke", tmp_path / "reports")
    assert (tmp_path / "reports" / f"{book.toc_notebooks()[0]}.ipynb").exists()


def test_every_notebook_and_page_is_in_the_table_of_contents():
    toc = (paths.ROOT / "_toc.yml").read_text()
    files = {line.split("file:")[1].strip() for line in toc.splitlines() if "file:" in line}
    files.add(yaml.safe_load(toc)["root"])
    assert {f"notebooks/{name}" for name in notebooks.names()} <= files
    assert {f"book/{p.stem}" for p in (paths.ROOT / "book").glob("*.md")} <= files
    assert sorted(book.toc_notebooks()) == notebooks.names()
