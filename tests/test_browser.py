"""Open every page of the built book in headless Chromium, as a reader would.

Fails on a page that does not load, an image that does not load, or an internal link that points nowhere; saves
screenshots of the landing page and of one figure page. Chromium and its driver are Debian's (`.ci/run` installs
them); without them the test fails under CI and is skipped elsewhere.
"""

import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
SCREENSHOTS = Path(os.environ.get("BENIGN_SCREENSHOTS", "_build/test-book/screenshots"))

if not (CHROMIUM and DRIVER):
    if os.environ.get("CI"):
        pytest.fail("CI must install Debian's chromium and chromium-driver (see .ci/run)", pytrace=False)
    pytest.skip("Debian's chromium and chromium-driver are not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def site(built_book):
    """The built html served on a loopback port, as a reader's browser would fetch it."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(built_book))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", built_book
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def pages(root: Path) -> list[str]:
    """Every html page of the book, relative to its root (the search page and Sphinx's index pages excepted)."""
    skip = {"search.html", "genindex.html"}
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.html")
                  if p.name not in skip and "_static" not in p.parts and "reports" not in p.parts)


def test_every_page_loads_with_its_images_and_links(site, browser):
    base, root = site
    problems = []
    for page in pages(root):
        redirect = re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', (root / page).read_text(), re.I)
        if redirect:  # Jupyter Book's root index.html only forwards to the landing page
            if not (root / page).parent.joinpath(redirect.group(1)).exists():
                problems.append(f"{page}: redirects to a missing page {redirect.group(1)}")
            continue
        url = urljoin(base, page)
        browser.get(url)
        if "<article" not in browser.page_source:
            problems.append(f"{page}: no article content")
        broken = browser.execute_script(
            "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        problems += [f"{page}: image does not load: {src}" for src in broken]
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
    assert not problems, "\n".join(problems[:30])


def test_screenshots_of_the_landing_page_and_a_figure_page(site, browser):
    base, _ = site
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for page, name in (("book/index.html", "landing"), ("notebooks/fig3_dynamics.html", "fig3_dynamics")):
        browser.get(urljoin(base, page))
        path = SCREENSHOTS / f"{name}.png"
        assert browser.save_screenshot(str(path)) and path.stat().st_size > 10_000
