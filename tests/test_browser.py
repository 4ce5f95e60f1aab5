"""Open every page of the built book in headless Chromium with the network cut off, as an offline reader would.

Fails on what a reader would see wrong: a page that does not load, an image that does not load or is blank, an
internal link that points nowhere, a formula left as raw TeX (MathJax must come from the book itself), a machine or
temporary path, an error output in a code cell, a wall of printed text (a record dumped into the page), a notebook
page without a figure, or any request that leaves the book. Saves screenshots of the landing page and of one figure
page. Chromium and its driver are Debian's (`.ci/run` installs them); without them the test fails under CI and is
skipped elsewhere.
"""

import functools
import http.server
import json
import os
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from benign import paths

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
SCREENSHOTS = Path(os.environ.get("BENIGN_SCREENSHOTS", "_build/test-book/screenshots"))
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\$\$|\\frac|\\mathrm|\\operatorname|\\sum_|\\mu\b|\\alpha\b|\\eta\b")
MACHINE_PATH = re.compile("|".join(re.escape(p) for p in sorted({str(paths.ROOT), "/tmp/", "/work/", "/home/",
                                                                  "/root/", "site-packages", "/usr/share/"})))

if not (CHROMIUM and DRIVER):
    if os.environ.get("CI"):
        pytest.fail("CI must install Debian's chromium and chromium-driver (see .ci/run)", pytrace=False)
    pytest.skip("Debian's chromium and chromium-driver are not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def site(built_book):
    """The built html served on a loopback port, as a reader's browser would fetch it."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(built_book)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", built_book
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium that can reach only this machine: every other host fails to resolve, and whatever still
    tries goes to a proxy on a closed local port. Its network log records every request a page makes."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,1600", "--allow-file-access-from-files",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server=http://127.0.0.1:9"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


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
    walls = browser.execute_script("return Array.from(document.querySelectorAll('.output.text_plain'))"
                                   ".map(o => o.innerText.length).filter(n => n > 2500)")
    problems += [f"{page}: a wall of printed text in a cell output ({n} characters)" for n in walls]
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


def requests_made(browser) -> list[str]:
    """The URLs the browser asked for since the last call (Chromium's network log)."""
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


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
    """A page with raw TeX, a machine path, an error output, a blank figure and a printed dict of 400 entries is
    flagged on every count."""
    base, root = site
    from PIL import Image

    Image.new("RGB", (200, 120), "white").save(root / "_blank_check.png")
    page = root / "notebooks" / "_bad_check.html"
    page.write_text(f"<html><body><article><p>the scale \\(\\frac{{1}}{{2}}\\) lives in {paths.ROOT}/results</p>"
                    "<div class='cell_output'><img src='../_blank_check.png'></div>"
                    "<div class='output traceback'>Traceback (most recent call last)</div>"
                    f"<div class='output text_plain'><pre>{dict((f'key{i}', i) for i in range(400))}</pre></div>"
                    "</article></body></html>")
    try:
        open_page(browser, urljoin(base, "notebooks/_bad_check.html"))
        found = "\n".join(reader_problems(browser, "notebooks/_bad_check.html", root, base))
    finally:
        page.unlink()
        (root / "_blank_check.png").unlink()
    for expected in ("raw TeX", "machine path", "error output", "blank figure", "wall of printed text"):
        assert expected in found, found
    fetched = browser.execute_async_script("const done = arguments[arguments.length - 1];"
                                           "fetch('https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js')"
                                           ".then(() => done('reached'), () => done('blocked'));")
    assert fetched == "blocked"  # the browser really is offline


def test_screenshots_of_the_landing_page_and_a_figure_page(site, browser):
    base, _ = site
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for page, name in (("book/index.html", "landing"), ("notebooks/fig3_dynamics.html", "fig3_dynamics"),
                       ("book/model.html", "model")):
        open_page(browser, urljoin(base, page))
        path = SCREENSHOTS / f"{name}.png"
        assert browser.save_screenshot(str(path)) and path.stat().st_size > 10_000
