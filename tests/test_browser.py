"""Open every page of the built book in headless Chromium with the network cut off, as an offline reader would.

Fails on what a reader would see wrong: a page that does not load, an image that does not load or is blank, an
internal link that points nowhere, a formula left as raw TeX (MathJax must come from the book itself), a machine or
temporary path, an error output in a code cell, a wall of printed text (a record dumped into the page), code not
folded, a notebook page without a figure, or any request that leaves the book. At 1400 px: a figure whose smallest
text renders under 9 px (from the dpi and font size its PNG records and the width it is shown at), a figure without a
click to its full-size PNG and a link to its PDF. At both widths: a table not seen whole (one that scrolls sideways in
its box or is cut by it, one wider than its column, a cell right of the column or the screen, a cell whose content is
wider than the cell). At 390 px (a phone): anything wider than the screen. Saves screenshots of the landing page, a
figure page and the summary at both widths. The book is the smoke build the suite renders, or the build
`BENIGN_FULL_BOOK` points to (its html folder). Chromium and its driver are Debian's (`.ci/run` installs them); without
them the test fails under CI and is skipped elsewhere.
"""

import functools
import http.server
import os
import re
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from benign import paths
from benign.plots import MIN_TEXT_PX
from benign.records import figure_description
from conftest import CHROMEDRIVER, CHROMIUM, offline_chromium, requests_made

DESKTOP, PHONE = 1400, 390  # window widths (px): the book's reading width, and a phone's
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\$\$|\\frac|\\mathrm|\\operatorname|\\sum_|\\mu\b|\\alpha\b|\\eta\b")
MACHINE_PATH = re.compile("|".join(re.escape(p) for p in sorted({str(paths.ROOT), "/tmp/", "/work/", "/home/",
                                                                  "/root/", "site-packages", "/usr/share/"})))

if not (CHROMIUM and CHROMEDRIVER):
    if os.environ.get("CI"):
        pytest.fail("CI must install Debian's chromium and chromium-driver (see .ci/run)", pytrace=False)
    pytest.skip("Debian's chromium and chromium-driver are not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def site(book_html):
    """The built html served on a loopback port, as a reader's browser would fetch it."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(book_html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", book_html
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium that can reach only this machine (`conftest.offline_chromium`); its network log records
    every request a page makes."""
    with offline_chromium(loopback=True, file_access=True) as driver:
        yield driver


def pages(root: Path) -> list[str]:
    """Every html page of the book, relative to its root (the search page and Sphinx's index pages excepted)."""
    skip = {"search.html", "genindex.html"}
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.html")
                  if p.name not in skip and "_static" not in p.parts and "reports" not in p.parts)


def open_page(browser, url: str) -> None:
    """Load a page and wait until MathJax (if the page loads it) has typeset every formula."""
    browser.get(url)
    browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "if (window.MathJax && MathJax.startup && MathJax.startup.promise) {"
        "  MathJax.startup.promise.then(() => done(true), () => done(false)); } else { done(null); }")


BLANK_IMAGES = """
return Array.from(document.querySelectorAll('article img')).filter(img => {
  if (!(img.complete && img.naturalWidth > 0) || img.src.endsWith('.svg')) return false;
  const canvas = document.createElement('canvas');
  canvas.width = Math.min(img.naturalWidth, 400); canvas.height = Math.min(img.naturalHeight, 400);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
  const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  let inked = 0;
  for (let i = 0; i < px.length; i += 4) if (px[i] < 230 || px[i + 1] < 230 || px[i + 2] < 230) inked++;
  return inked < 0.01 * canvas.width * canvas.height;
}).map(img => img.src);
"""


FIGURES = """
return Array.from(document.querySelectorAll('article img')).filter(img => !img.src.endsWith('.svg')).map(img => {
  const box = img.closest('.cell_output, figure') || img.parentElement;
  const link = img.closest('a[href]');
  return {src: img.src, shown: img.getBoundingClientRect().width, natural: img.naturalWidth,
          href: link ? link.href : null,
          pdf: Array.from(box.querySelectorAll('a[href]')).map(a => a.href).filter(h => h.endsWith('.pdf'))};
});
"""

TABLES_UNSEEN = """
const article = document.querySelector('article');
if (!article) return [];
const column = Math.min(article.getBoundingClientRect().right, document.documentElement.clientWidth) + 1;
const seen = el => el.getClientRects().length > 0;
return Array.from(article.querySelectorAll('table')).filter(seen).map(table => {
  const head = table.innerText.slice(0, 60).replace(/\\s+/g, ' '), cells = Array.from(table.querySelectorAll('td, th'));
  for (let box = table; box && box !== article; box = box.parentElement)
    if (getComputedStyle(box).overflowX !== 'visible' && box.scrollWidth > box.clientWidth + 1)
      return [head, 'scrolls sideways in its box, or is cut by it'];
  if (table.getBoundingClientRect().right > column) return [head, 'is wider than its column'];
  if (cells.some(c => seen(c) && c.getBoundingClientRect().right > column))
    return [head, 'has a cell right of its column'];
  const spilt = cells.find(c => seen(c) && c.scrollWidth > c.clientWidth + 1);
  if (spilt) return [head, 'has a cell whose content is wider than the cell: ' + spilt.innerText.slice(0, 30)];
  return null;
}).filter(Boolean);
"""


def tables_unseen(browser, where: str) -> list[str]:
    """Each table of the loaded page a reader does not see whole at the window's width (`TABLES_UNSEEN`)."""
    return [f"{where}: a table that {why}: {head!r}" for head, why in browser.execute_script(TABLES_UNSEEN)]


def local_file(url: str, root: Path, base: str) -> Path | None:
    """The file of the build a URL of the served book names (None for any other URL)."""
    if not url or not url.startswith(base):
        return None
    return root / unquote(urlparse(url).path[len(urlparse(base).path):])


def figure_problems(browser, page: str, root: Path, base: str) -> list[str]:
    """Each figure shown (not one the style sheet hides at this width: a figure's wide or phone version): its smallest
    text at the width it is shown, its click to the full-size PNG and its PDF link; in a window of 700 px or less
    (benign.css shows phone versions there) its panels in the columns its phone version was laid in (one, or a pair
    side by side: `phone_columns`), and above it not a phone version."""
    from PIL import Image

    problems = []
    hidden = set(browser.execute_script(
        "return Array.from(document.querySelectorAll('article img')).filter(i => !i.getClientRects().length)"
        ".map(i => i.src)"))
    width = browser.execute_script("return window.innerWidth")
    for figure in browser.execute_script(FIGURES):
        if figure["src"] in hidden:
            continue
        file = local_file(figure["src"], root, base)
        described = figure_description(file) if file and file.suffix == ".png" and file.exists() else None
        if not described:
            problems.append(f"{page}: a figure that does not record its text sizes: {figure['src']}")
            continue
        if "overlaps" not in described or "columns" not in described:
            problems.append(f"{page}: a figure that does not record what overlaps on it or its columns of panels: "
                            f"{figure['src']}")
        if width <= 700 and described.get("columns", 1) > described.get("phone_columns", 1):  # laid for a phone so
            problems.append(f"{page}: a figure of {described['columns']} columns of panels at {width} px: "
                            f"{figure['src']}")
        if width > 700 and file.name.endswith(".phone.png"):
            problems.append(f"{page}: a figure's phone version at {width} px: {figure['src']}")
        problems += [f"{page}: {what} on {figure['src']}" for what in described.get("overlaps", [])]
        px = described["smallest_text_pt"] / 72 * described["dpi"] * figure["shown"] / figure["natural"]
        if px < MIN_TEXT_PX:
            problems.append(f"{page}: a figure's smallest text renders at {px:.1f} px (under {MIN_TEXT_PX}): "
                            f"{figure['src']}")
        target = local_file(figure["href"], root, base)
        if target is None or not target.is_file():
            problems.append(f"{page}: a click on the figure opens no full-size file: {figure['src']}")
        else:
            with Image.open(target) as full:
                if full.width < figure["natural"]:
                    problems.append(f"{page}: a figure's link opens a smaller picture: {figure['href']}")
        pdfs = [local_file(h, root, base) for h in figure["pdf"]]
        if not any(pdf is not None and pdf.is_file() for pdf in pdfs):
            problems.append(f"{page}: a figure without a link to its PDF: {figure['src']}")
    return problems


def reader_problems(browser, page: str, root: Path, base: str) -> list[str]:
    """What a reader of one loaded page would see wrong."""
    problems = []
    source = (root / page).read_text()
    if "<article" not in browser.page_source:
        problems.append(f"{page}: no article content")
    broken = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    problems += [f"{page}: image does not load: {src}" for src in broken]
    problems += [f"{page}: blank figure: {src}" for src in browser.execute_script(BLANK_IMAGES)]
    text = browser.execute_script("return document.querySelector('article') ? "
                                  "document.querySelector('article').innerText : document.body.innerText")
    for found in sorted(set(RAW_TEX.findall(text))):
        problems.append(f"{page}: raw TeX in the visible text: {found!r}")
    if ("\\(" in source or "\\[" in source or "math notranslate" in source) and not browser.execute_script(
            "return document.querySelectorAll('mjx-container').length"):
        problems.append(f"{page}: its formulas were not typeset")
    for found in sorted(set(MACHINE_PATH.findall(text))):
        problems.append(f"{page}: a machine path in the visible text: {found!r}")
    errors = browser.execute_script(
        "return Array.from(document.querySelectorAll('.output.traceback, .output.error')).length")
    if errors or "Traceback (most recent call last)" in text:
        problems.append(f"{page}: an error output in a code cell")
    walls = browser.execute_script("return Array.from(document.querySelectorAll('.output.text_plain, .output.stream'))"
                                   ".map(o => o.innerText).filter(t => t.length > 2500 || t.split('\\n').length > 25)"
                                   ".map(t => t.length + ' characters, ' + t.split('\\n').length + ' lines')")
    problems += [f"{page}: a wall of printed text in a cell output ({n})" for n in walls]
    unfolded = browser.execute_script(
        "return Array.from(document.querySelectorAll('article .cell_input'))"
        ".filter(c => !c.closest('details:not([open])')).length")
    if unfolded:
        problems.append(f"{page}: {unfolded} code cells shown unfolded")
    problems += figure_problems(browser, page, root, base)
    problems += tables_unseen(browser, page)
    if page.startswith("notebooks/") and not browser.execute_script(
            "return document.querySelectorAll('article .cell_output img').length"):
        problems.append(f"{page}: a notebook page without a figure")
    if page.startswith("notebooks/") and "injected-parameters" in browser.page_source:
        problems.append(f"{page}: shows papermill's injected-parameters cell")
    hrefs = browser.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
    for href in hrefs:
        parsed = urlparse(href)
        if not href.startswith(base) or not parsed.path:
            continue
        target = root / unquote(parsed.path[len(urlparse(base).path):])
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            problems.append(f"{page}: link to a missing page {href}")
        elif parsed.fragment and target.suffix == ".html" and f'id="{parsed.fragment}"' not in target.read_text():
            problems.append(f"{page}: link to a missing anchor {href}")
    return problems


def test_every_page_reads_right_offline(site, browser):
    base, root = site
    problems, outside = [], set()
    requests_made(browser)
    for page in pages(root):
        redirect = re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', (root / page).read_text(), re.I)
        if redirect:  # Jupyter Book's root index.html only forwards to the landing page
            if not (root / page).parent.joinpath(redirect.group(1)).exists():
                problems.append(f"{page}: redirects to a missing page {redirect.group(1)}")
            continue
        open_page(browser, urljoin(base, page))
        problems += reader_problems(browser, page, root, base)
        outside |= {u for u in requests_made(browser) if not u.startswith((base, "data:", "blob:", "about:"))}
    problems += [f"a page asked the network for {url}" for url in sorted(outside)]
    assert not problems, "\n".join(problems[:40])


def test_a_downloaded_copy_typesets_its_maths_from_disk(site, browser):
    """Opened as files (a downloaded _build/html), the model page still typesets every formula."""
    _, root = site
    open_page(browser, (root / "book" / "model.html").as_uri())
    assert browser.execute_script("return document.querySelectorAll('mjx-container').length") > 10
    assert not RAW_TEX.findall(browser.execute_script("return document.querySelector('article').innerText"))


def test_the_checks_see_what_they_look_for(site, browser, tmp_path):
    """A page with raw TeX, a machine path, an error output, a blank figure that records no text sizes, a figure
    whose text renders at 4 px with no link to a PDF, a printed dict of 400 entries, a log of 40 lines, unfolded code,
    a wide table cut off by its box and one that scrolls in its box is flagged on every count."""
    base, root = site
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from benign.records import save_figure

    Image.new("RGB", (200, 120), "white").save(root / "_blank_check.png")
    fig, ax = plt.subplots(figsize=(20, 3))  # 3000 px wide, shown at the window's width: 6-pt text under 6 px
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=6)
    save_figure(fig, root, "_tiny_check", description={"smallest_text_pt": 6, "overlaps": ["text 'a' overlaps 'b'"]})
    plt.close(fig)
    page = root / "notebooks" / "_bad_check.html"
    log = "<br>".join(f"step {i}" for i in range(40))
    page.write_text(f"<html><body><article><p>the scale \\(\\frac{{1}}{{2}}\\) lives in {paths.ROOT}/results</p>"
                    "<div class='cell_output'><img src='../_blank_check.png'></div>"
                    "<div class='cell_output'><a href='../_tiny_check.png'><img src='../_tiny_check.png' "
                    "style='width: 100%'></a></div>"
                    "<div class='output traceback'>Traceback (most recent call last)</div>"
                    f"<div class='output text_plain'><pre>{dict((f'key{i}', i) for i in range(400))}</pre></div>"
                    f"<div class='output stream'><pre>{log}</pre></div>"
                    "<div class='cell_input'><pre>x = 1</pre></div>"
                    "<div style='overflow: hidden'><table><tr>" + "<td>a_long_unbreakable_cell</td>" * 60 +
                    "</tr></table></div><div style='overflow-x: auto'><table><tr>" +
                    "<td>a_long_unbreakable_cell</td>" * 60 + "</tr></table></div></article></body></html>")
    try:
        open_page(browser, urljoin(base, "notebooks/_bad_check.html"))
        found = "\n".join(reader_problems(browser, "notebooks/_bad_check.html", root, base))
    finally:
        page.unlink()
        for name in ("_blank_check.png", "_tiny_check.png", "_tiny_check.pdf"):
            (root / name).unlink()
    for expected in ("raw TeX", "machine path", "error output", "blank figure", "does not record its text sizes",
                     "smallest text renders at", "without a link to its PDF", "40 lines", "code cells shown unfolded",
                     "text 'a' overlaps 'b'"):
        assert expected in found, (expected, found)
    assert found.count("wall of printed text") == 2, found  # the dict and the log
    assert found.count("a table that scrolls sideways in its box, or is cut by it") == 2, found  # cut, and scrolling
    fetched = browser.execute_async_script("const done = arguments[arguments.length - 1];"
                                           "fetch('https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js')"
                                           ".then(() => done('reached'), () => done('blocked'));")
    assert fetched == "blocked"  # the browser really is offline


OVERFLOW = """
const width = document.documentElement.clientWidth, wide = [];
if (document.scrollingElement.scrollWidth > width + 1)
  wide.push('the page scrolls sideways to ' + document.scrollingElement.scrollWidth + ' px');
const article = document.querySelector('article');
for (const e of article ? article.querySelectorAll('*') : []) {
  const r = e.getBoundingClientRect();
  if (r.width === 0 || r.right <= width + 1) continue;
  let held = false;  // inside a box that scrolls it (one that clips it hides it: a formula cut at the edge)
  for (let box = e.parentElement; box && box !== article && !held; box = box.parentElement)
    held = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
  if (!held) wide.push(e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' reaches '
                       + Math.round(r.right) + ' px');
}
return wide.slice(0, 10);
"""
SHOWN = (("book/index.html", "landing"), ("notebooks/fig3_dynamics.html", "fig3_dynamics"),
         ("book/summary.html", "summary"))


def screenshots(book_html: Path) -> Path:
    """Where the screenshots go: BENIGN_SCREENSHOTS, or screenshots/ beside the html folder, under _build."""
    return Path(os.environ.get("BENIGN_SCREENSHOTS") or book_html.parent / "screenshots")


def save_screenshot(browser, page: str, path: Path) -> None:
    """The window as a PNG; a figure page scrolled to its first figure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if page.startswith("notebooks/"):
        browser.execute_script("document.querySelector('article img').scrollIntoView()")
    assert browser.save_screenshot(str(path)) and path.stat().st_size > 10_000


def test_a_phone_sees_every_page_fit_its_screen(site, browser):
    """At 390 px, on every page, the text reflows, nothing reaches past the screen's right edge or is cut at it,
    figures fit the width (and still open at full size) with their text readable (a phone version where the wide one
    would shrink it), and every table is seen whole, with no sideways scroll (`TABLES_UNSEEN`; a table too wide for
    the screen is laid out as cards)."""
    base, root = site
    problems = []
    browser.set_window_size(PHONE, 1600)
    try:
        for page in pages(root):
            if re.search(r'http-equiv="refresh"', (root / page).read_text(), re.I):
                continue  # Jupyter Book's root index.html only forwards to the landing page
            open_page(browser, urljoin(base, page))
            problems += [f"{page} at {PHONE} px: {wide}" for wide in browser.execute_script(OVERFLOW)]
            problems += figure_problems(browser, page, root, base)
            problems += tables_unseen(browser, f"{page} at {PHONE} px")
            shown = dict(SHOWN).get(page)
            if shown:
                save_screenshot(browser, page, screenshots(root) / f"{shown}-{PHONE}.png")
    finally:
        browser.set_window_size(DESKTOP, 1600)
    assert not problems, "\n".join(problems[:40])


ONE_SHOWN = """
return Array.from(document.querySelectorAll('article img.benign-figure-phone, article .benign-figure-phone img'))
    .filter(phone => {
  const box = phone.closest('.cell_output') || phone.closest('figure').parentElement;
  return Array.from(box.querySelectorAll('img')).filter(img => img.getClientRects().length).length !== 1;
}).map(phone => phone.src);
"""


def test_a_phone_is_shown_every_figure_in_one_column(site, browser):
    """At 390 px every figure shown on the landing page and the notebook pages is one column of panels (a figure
    whose panels sit side by side shows its phone version), nothing overprinted on it, and a phone version's smallest
    text renders at 9 px or more; at 1400 px the wide version again. Of a figure's two versions one is shown."""
    base, root = site
    problems, phone_versions = [], 0
    checked = ["book/index.html", *(p for p in pages(root) if p.startswith("notebooks/"))]
    try:
        for width in (PHONE, DESKTOP):
            browser.set_window_size(width, 1600)
            for page in checked:
                open_page(browser, urljoin(base, page))
                problems += [f"{page} at {width} px: both or neither version of {src}"
                             for src in browser.execute_script(ONE_SHOWN)]
                problems += [p for p in figure_problems(browser, page, root, base)
                             if "smallest text" not in p or (width == PHONE and ".phone.png" in p)]
                if width == PHONE:
                    phone_versions += browser.execute_script(
                        "return Array.from(document.querySelectorAll('article img')).filter(i => i.getClientRects()"
                        ".length && i.src.endsWith('.phone.png')).length")
    finally:
        browser.set_window_size(DESKTOP, 1600)
    assert phone_versions > 0, "no phone version shown at 390 px"
    assert not problems, "\n".join(problems)


def test_screenshots_at_the_reading_width(site, browser):
    """The landing page, a figure page (at its first figure) and the summary at 1400 px, for a person to look at."""
    base, root = site
    for page, name in SHOWN:
        open_page(browser, urljoin(base, page))
        save_screenshot(browser, page, screenshots(root) / f"{name}-{DESKTOP}.png")


RAW_CELLS = re.compile(r"None|NaN|nan|<NA>|NaT|True|False")
EXPONENT = re.compile(r"[-+]?\d+(\.\d+)?[eE][-+]?\d+")
TABLES = """
return Array.from(document.querySelectorAll(arguments[0])).map(t => {
  const corner = t.querySelector('thead tr > th:first-child');
  return {index: t.querySelectorAll('tbody tr > th').length > 0 || (corner !== null && corner.innerText.trim() === ''),
          cells: Array.from(t.querySelectorAll('td')).map(c => c.innerText.trim()),
          head: t.innerText.slice(0, 50).replace(/\\s+/g, ' ')};
});
"""


def table_problems(browser, page: str, scope: str) -> list[str]:
    """Tables that read as a dump: an index column, a None/NaN/True/False cell, an exponent where a plain number
    fits (1e-4 to 1e6), a cell cut with an ellipsis."""
    problems = []
    for table in browser.execute_script(TABLES, scope):
        where = f"{page}: table {table['head']!r}"
        if table["index"]:
            problems.append(f"{where} has an index column")
        for cell in table["cells"]:
            if RAW_CELLS.fullmatch(cell):
                problems.append(f"{where} has a cell {cell!r}")
            elif EXPONENT.fullmatch(cell) and (float(cell) == 0 or 1e-4 <= abs(float(cell)) < 1e6):
                problems.append(f"{where} writes {cell} where a plain number fits")
            elif cell.endswith(("…", "...")):
                problems.append(f"{where} has a cell cut short: {cell[-40:]!r}")
    return problems


def test_tables_read_as_tables(site, browser):
    """Every table in a notebook page's outputs and on the summary page reads like the summary's: no index
    column, no None/NaN/True/False, no 1.000000e+00, no cell cut with "…"."""
    base, root = site
    problems = []
    for page in [p for p in pages(root) if p.startswith("notebooks/")] + ["book/summary.html"]:
        open_page(browser, urljoin(base, page))
        problems += table_problems(browser, page, "article .cell_output table" if page.startswith("notebooks/")
                                   else "article table")
    assert not problems, "\n".join(problems[:60])


def test_the_table_check_sees_a_dataframe_dump(site, browser):
    base, root = site
    page = root / "notebooks" / "_dump_check.html"
    page.write_text("<html><head><meta charset='utf-8'></head><body><article><div class='cell_output'><table>"
                    "<thead><tr><th></th><th>a</th></tr></thead>"
                    "<tbody><tr><th>0</th><td>None</td></tr><tr><th>1</th><td>1.000000e+00</td></tr>"
                    "<tr><th>2</th><td>a note cut…</td></tr><tr><th>3</th><td>2.5e-12</td></tr></tbody></table>"
                    "</div></article></body></html>")
    try:
        open_page(browser, urljoin(base, "notebooks/_dump_check.html"))
        found = "\n".join(table_problems(browser, "_dump_check", "article .cell_output table"))
    finally:
        page.unlink()
    for expected in ("index column", "a cell 'None'", "writes 1.000000e+00", "cut short"):
        assert expected in found, (expected, found)
    assert "writes 2.5e-12" not in found  # too small for a plain number


def test_the_table_check_sees_a_table_not_seen_whole(site, browser):
    """At 1400 px and 390 px, with no rule of the book's, a wide table in a scroll box (it scrolls), one outside any
    box (wider than its column) and a cell whose fixed width is narrower than its formula (spilt) are flagged; under
    the book's CSS and script, the same wide tables (a generated one, with labels, and a Markdown one, without) are
    not: they fit at 1400 px, and at 390 px they are cards, each cell labelled with its column's header, while a table
    that fits a phone stays a table; a formula wider than a phone is shrunk to fit its card."""
    base, root = site
    heads = [f"column {k} of the results" for k in range(12)]
    cells = ["benign.synthetic.simulate_many_runs_at_once", "a sentence that wraps in its cell", "0.4213"] * 4

    def wide(labels: bool) -> str:
        label = (lambda h: f' data-label="{h}"') if labels else (lambda h: "")
        return ("<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr></thead><tbody>"
                + "<tr>" + "".join(f"<td{label(h)}>{c}</td>" for h, c in zip(heads, cells)) + "</tr></tbody></table>")

    small = ("<table><thead><tr><th>η</th><th>ratio</th></tr></thead><tbody><tr><td>0.1</td><td>2</td></tr></tbody>"
             "</table>")
    spilt = ("<table style='table-layout: fixed; width: 100px'><tr><td><span style='display: inline-block; "
             "width: 200px'>x</span></td></tr></table>")
    formula = ("<table><thead><tr><th>event</th><th>condition</th></tr></thead><tbody><tr><td>fitted</td><td>"
               "<mjx-container style='display: inline-block; width: 30em'>x</mjx-container></td></tr></tbody></table>")
    book = "<link rel='stylesheet' href='../_static/benign.css'><script src='../_static/benign-tables.js'></script>"
    pages_ = {"_unseen_check.html": f"<article><div style='overflow-x: auto'>{wide(True)}</div>"
                                    f"{wide(False)}{spilt}</article>",
              "_unseen_fixed.html": f"{book}<article><div class='benign-table-box'>{wide(True)}</div>"
                                    f"<div class='pst-scrollable-table-container' style='overflow-x: auto'>"
                                    f"{wide(False)}</div>{small}{formula}</article>"}  # 480 px of formula
    found, cards, scaled = {}, {}, None
    label = """return Array.from(document.querySelectorAll('table')).map(t => [t.classList.contains('benign-cards'),
        Array.from(t.querySelectorAll('tbody td')).slice(1).map(c => getComputedStyle(c, '::before').content)])"""
    try:
        for name, body in pages_.items():
            (root / "notebooks" / name).write_text(f"<html><head><meta charset='utf-8'>{body}</html>")
            for width in (DESKTOP, PHONE):
                browser.set_window_size(width, 1600)
                open_page(browser, urljoin(base, f"notebooks/{name}"))
                found[name, width] = "\n".join(tables_unseen(browser, name))
                cards[name, width] = browser.execute_script(label)
                if name == "_unseen_fixed.html" and width == PHONE:
                    scaled = browser.execute_script("return document.querySelector('mjx-container').style.fontSize")
    finally:
        browser.set_window_size(DESKTOP, 1600)
        for name in pages_:
            (root / "notebooks" / name).unlink(missing_ok=True)
    for width in (DESKTOP, PHONE):
        check = found["_unseen_check.html", width]
        for expected in ("scrolls sideways in its box", "is wider than its column", "wider than the cell: x"):
            assert expected in check, (width, expected, check)
        assert found["_unseen_fixed.html", width] == "", (width, found)
    labels = [f'"{h}"' for h in heads[1:]]
    assert cards["_unseen_fixed.html", DESKTOP] == [[False, ["none"] * 11]] * 2 + [[False, ["none"]]] * 2, cards
    assert cards["_unseen_fixed.html", PHONE] == [[True, labels]] * 2 + [[False, ["none"]], [True, ['"condition"']]]
    assert scaled and float(scaled.removesuffix("%")) < 100, scaled  # the formula, shrunk to its card's width
