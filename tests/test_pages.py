"""The book's generated tables carry, in each cell, its column's header: what a phone shows as the cell's label when
the table is laid out as cards (book/_static/benign.css, benign-tables.js)."""

import pandas as pd

from benign import expected, pages


def test_a_frame_labels_each_cell_with_its_header_escaped():
    html = pages.frame(pd.DataFrame({"test accuracy": [0.5], "a <b> & \"c\"": ["x"]}))
    assert '<td data-label="test accuracy">0.5</td>' in html
    assert '<td data-label="a &lt;b&gt; &amp; &quot;c&quot;">x</td>' in html
    assert "<th>a &lt;b&gt; &amp; &quot;c&quot;</th>" in html


def test_an_unnamed_index_is_a_column_with_no_header_and_no_label():
    html = pages.frame(pd.DataFrame({"seed": [1]}, index=["run a"]))
    assert "<th></th><th>seed</th>" in html and '<td data-label="">run a</td><td data-label="seed">1</td>' in html


def test_a_comparison_labels_each_cell_with_its_header():
    e = expected.Expected("acc", "test accuracy (benign)", 1.0, next(iter(expected.TOLERANCES)))
    html = pages.comparison([expected.Row(e, here=0.98, authors=None, match=True, cause="")])
    for header in ("quantity", "compared with", "authors&#x27; code", "here", "tolerance", "result", "cause of a miss"):
        assert f'<td data-label="{header}">' in html, header
    assert '<td data-label="quantity">test accuracy (benign)' in html and '<td data-label="here">0.98</td>' in html
