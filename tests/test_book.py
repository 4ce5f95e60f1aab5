"""The book builds strictly (warnings are errors) with every notebook executed at the smoke profile."""

import re

from benign import book, notebooks


def test_book_builds_at_the_smoke_profile(tmp_path):
    built = book.build("smoke", tmp_path)
    html = built / "html"
    assert (html / "index.html").exists() and (html / "book" / "model.html").exists()
    for name in notebooks.names():
        page = (html / "notebooks" / f"{name}.html").read_text()
        assert "Paper vs here" in page
        assert re.search(r'<img[^>]+src="[^"]*\.png"', page), f"{name} page shows no figure"
        assert "Traceback" not in page


def test_staging_applies_the_profile_to_the_parameters_cell():
    staged = book.stage("smoke")
    text = (staged / "notebooks" / "fig3_dynamics.py").read_text()
    assert "# smoke profile:\nnum_steps = 60" in text
    assert "out_dir = '" in text and "results/fig3_dynamics/smoke" in text
    assert notebooks.defaults("fig3_dynamics")["num_steps"] == 1000  # the source stays as it was
