"""The explorable page (book/explore.md) in headless Chromium, opened from file:// with the network cut off, as an
offline reader who downloaded the book would open it, and driven through its test hook `window.explorable`.

Checks what a reader relies on: the three presets of Figure 3 land in their regimes by the book's rule (balanced:
benign; large noise: harmful; large signal: not overfitting), the controls change the run, a new run cancels the old
one while the page stays responsive, the in-page fallback (no worker) gives the worker's numbers, a slider moves from
the keyboard, the page asks for nothing outside the book and logs no error of its own, and at 390 px (a phone)
nothing is wider than the screen and the plots stack one to a row. The book is the smoke build the suite renders, or
the build `BENIGN_FULL_BOOK` points to (its html folder). Chromium and its driver are Debian's: without them the test
fails under CI and is skipped elsewhere, as tests/test_browser.py does.
"""

import os
import time
from pathlib import Path

import pytest

from conftest import CHROMEDRIVER, CHROMIUM, offline_chromium, requests_made

DESKTOP, PHONE = 1400, 390  # window widths (px)

if not (CHROMIUM and CHROMEDRIVER):
    if os.environ.get("CI"):
        pytest.fail("CI must install Debian's chromium and chromium-driver (see .ci/run)", pytrace=False)
    pytest.skip("Debian's chromium and chromium-driver are not installed", allow_module_level=True)

# set parameters, run, and hand back the final metrics (or {cancelled: true} for a run a newer one stopped)
RUN = """
const done = arguments[arguments.length - 1];
window.explorable.set(arguments[0]);
window.explorable.run().then(done, (err) => done({error: String(err)}));
"""
SMALL = {"d": 400, "signalNorm": 6, "n": 12, "eta": 0.2, "rho": 0.1, "alpha": 0.02, "steps": 200, "nTest": 300,
         "W": "trained", "seed": 3}  # a run of a fraction of a second


@pytest.fixture(scope="module")
def html(request) -> Path:
    """The book's html folder: `BENIGN_FULL_BOOK` (a `make book` build, e.g. _build/html) or the smoke build."""
    full = os.environ.get("BENIGN_FULL_BOOK")
    root = Path(full).resolve() if full else request.getfixturevalue("built_book")
    assert (root / "book" / "explore.html").exists(), f"{root} holds no explorable page"
    return root


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium that can reach no other host, opening pages from file:// as a reader's browser does
    (`conftest.offline_chromium`); it logs every request and every console message."""
    with offline_chromium() as driver:
        yield driver


def open_page(browser, file: Path) -> None:
    browser.get(file.as_uri())
    browser.execute_script("window.explorable.set({})")  # stops the run the page starts on opening


def run(browser, params: dict) -> dict:
    return browser.execute_async_script(RUN, params)


def errors(browser, page: Path) -> set[str]:
    """The console's errors since the last call, with the page's own address taken out."""
    return {e["message"].replace(page.as_uri(), "PAGE") for e in browser.get_log("browser") if e["level"] == "SEVERE"}


def test_the_figure3_presets_land_in_their_regimes(html, browser):
    """Balanced is benign, large noise harmful and large signal not overfitting by the book's rule (against the
    run's own step 0); the paper's reading (test accuracy ≥ 0.95) is shown beside it, and the result line says
    both. The page asks for nothing outside the book and logs no error that the model page does not log too."""
    model, page = html / "book" / "model.html", html / "book" / "explore.html"
    browser.get(model.as_uri())
    theme_errors = errors(browser, model)  # the theme's own, on every page
    requests_made(browser)
    open_page(browser, page)
    presets = browser.execute_script("return window.explorable.presets")
    expected = {"balanced": ("benign", "benign"), "largeNoise": ("harmful", "harmful"),
                "largeSignal": ("not_overfitting", "not_overfitting")}
    for name, (regime, paper) in expected.items():
        m = run(browser, presets[name])
        assert m["mode"] == "worker", m
        assert (m["regime"], m["paperRegime"]) == (regime, paper), (name, m)
        shown = browser.execute_script("return document.querySelector('.bx-result').innerText")
        assert regime.replace("_", " ") in shown and "at least 0.95" in shown, shown
    assert m["trainAcc"] < 1 <= m["testAcc"] + 1e-12, m  # large signal: some noisy label unfitted, clean test
    outside = [u for u in requests_made(browser) if not u.startswith(("file:", "blob:", "data:"))]
    assert not outside, outside
    assert errors(browser, page) <= theme_errors, errors(browser, page)


def test_the_controls_change_the_run_and_the_fallback_agrees(html, browser):
    """W trained, frozen at W₀ and W = I give three different runs, and so does another d; the in-page fallback,
    used where no worker can be made, gives the worker's numbers (the same engine, the same arithmetic)."""
    open_page(browser, html / "book" / "explore.html")
    found = {}
    for W in ("trained", "frozen", "identity"):
        found[W] = run(browser, {**SMALL, "W": W})
        assert found[W]["params"]["W"] == W and found[W]["params"]["d"] == SMALL["d"]
    losses = sorted(m["trainLoss"] for m in found.values())
    assert losses[1] - losses[0] > 1e-4 and losses[2] - losses[1] > 1e-4, losses
    other = run(browser, {**SMALL, "d": 800})
    assert abs(other["testLoss"] - found["trained"]["testLoss"]) > 1e-4
    browser.execute_script("window.explorable.withoutWorker(true)")
    try:
        in_page = run(browser, SMALL)
    finally:
        browser.execute_script("window.explorable.withoutWorker(false)")
    assert in_page["mode"] == "page"
    for key in ("trainAcc", "testAcc", "testAccStep0", "trainLoss", "testLoss"):
        assert in_page[key] == pytest.approx(found["trained"][key], rel=1e-12, abs=1e-12), key


def test_a_new_run_cancels_the_old_and_the_page_stays_responsive(html, browser):
    """While a long run trains in its worker, the page answers at once; starting a short run stops the long one
    (its promise says cancelled) and the short one's result comes back."""
    open_page(browser, html / "book" / "explore.html")
    browser.execute_script("window.longRun = null; window.explorable.set(arguments[0]);"
                           "window.explorable.run().then((m) => { window.longRun = m; });",
                           {**SMALL, "d": 5000, "n": 40, "steps": 4000})
    time.sleep(1.0)
    started = time.perf_counter()
    progress = browser.execute_script("return document.querySelector('.bx-progress').innerText")
    assert time.perf_counter() - started < 0.5  # the main thread is free while the worker trains
    assert "setting up" in progress or "step" in progress, progress
    short = run(browser, SMALL)
    assert short["params"]["d"] == SMALL["d"] and short["regime"] in ("benign", "harmful", "not_overfitting")
    assert browser.execute_script("return window.longRun") == {"cancelled": True}


def test_a_slider_moves_from_the_keyboard(html, browser):
    """Arrow keys on the d slider change d by its step, the typed box follows, and the new setting runs."""
    from selenium.webdriver.common.keys import Keys

    open_page(browser, html / "book" / "explore.html")
    browser.execute_script("window.explorable.set(arguments[0])", {**SMALL, "d": 400})
    slider = browser.find_element("id", "bx-d-range")
    slider.send_keys(Keys.ARROW_RIGHT)
    assert browser.find_element("id", "bx-d-number").get_attribute("value") == "450"
    assert browser.execute_script("return window.explorable.params().d") == 450
    deadline = time.time() + 30
    while "Done" not in browser.find_element("css selector", ".bx-progress").text and time.time() < deadline:
        time.sleep(0.2)
    assert "Done" in browser.find_element("css selector", ".bx-progress").text


WIDE = """
const width = document.documentElement.clientWidth, wide = [];
if (document.scrollingElement.scrollWidth > width + 1)
  wide.push('the page scrolls sideways to ' + document.scrollingElement.scrollWidth + ' px');
for (const e of document.querySelectorAll('article *')) {
  const r = e.getBoundingClientRect();
  if (r.width > 0 && r.right > width + 1) wide.push(e.tagName + '.' + e.className + ' reaches ' + Math.round(r.right));
}
return wide.slice(0, 10);
"""


def test_a_phone_sees_it_fit(html, browser):
    """At 390 px nothing reaches past the screen, the four plots stack one to a row, and each canvas draws at the
    width it is shown times the pixel ratio."""
    browser.set_window_size(PHONE, 1600)
    try:
        open_page(browser, html / "book" / "explore.html")
        run(browser, SMALL)
        assert browser.execute_script(WIDE) == []
        boxes = browser.execute_script(
            "return Array.from(document.querySelectorAll('#benign-explore canvas')).map(c => {"
            "const r = c.getBoundingClientRect(); return {left: r.left, top: r.top, width: r.width, "
            "buffer: c.width, ratio: window.devicePixelRatio}; })")
        assert len(boxes) == 4
        assert len({round(b["left"]) for b in boxes}) == 1 and len({round(b["top"]) for b in boxes}) == 4
        for b in boxes:
            assert abs(b["buffer"] - b["width"] * b["ratio"]) <= 1, b
    finally:
        browser.set_window_size(DESKTOP, 1600)
