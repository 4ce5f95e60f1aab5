import contextlib
import os
import shutil
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

BIN = Path(sys.executable).parent
CHROMIUM, CHROMEDRIVER, NODE = shutil.which("chromium"), shutil.which("chromedriver"), shutil.which("node")


def required(program: str | None, package: str) -> str:
    """A system program the tests need, from Debian's `package`: under CI (whose .ci/run installs it) its absence fails
    the test, elsewhere it skips it."""
    if program:
        return program
    if os.environ.get("CI"):
        pytest.fail(f"CI must install Debian's {package} (see .ci/run)", pytrace=False)
    pytest.skip(f"Debian's {package} is not installed")


@contextlib.contextmanager
def offline_chromium(*, height: int = 1600, loopback: bool = False, file_access: bool = False):
    """Headless Chromium 1400 px wide that can reach no other host: every host fails to resolve (the loopback too,
    unless `loopback`: a book served on it), and whatever still tries goes to a proxy on a closed local port. It logs
    every request a page makes ("performance") and every console message ("browser"). `file_access` lets a page
    opened from file:// read other files, which a reader's browser does not."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    required(CHROMIUM and CHROMEDRIVER, "chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    hosts = "MAP * ~NOTFOUND" + (", EXCLUDE 127.0.0.1" if loopback else "")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--window-size=1400,{height}", f"--host-resolver-rules={hosts}",
                 "--proxy-server=http://127.0.0.1:9", *(["--allow-file-access-from-files"] if file_access else [])):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


def requests_made(browser) -> list[str]:
    """The URLs a browser from `offline_chromium` asked for since the last call (Chromium's network log)."""
    import json

    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@pytest.fixture(scope="session")
def benign_cli():
    """The installed console script, as a user calls it."""
    exe = BIN / "benign"
    assert exe.exists(), f"{exe} missing: install the package (make test does)"
    return str(exe)


@pytest.fixture(scope="session")
def book_html(request) -> Path:
    """The html folder under test: `BENIGN_FULL_BOOK` (a `make book` build, e.g. _build/html) or the smoke build."""
    full = os.environ.get("BENIGN_FULL_BOOK")
    if full:
        assert (Path(full) / "book" / "index.html").exists(), f"BENIGN_FULL_BOOK={full} holds no built book"
        return Path(full).resolve()
    return request.getfixturevalue("built_book")


@pytest.fixture(scope="session")
def built_book():
    """The whole book built at the smoke profile into _build/test-book/ (kept, with any execution reports, for
    reading after a failure); returns its html folder."""
    import shutil

    from benign import book, paths

    where = paths.BOOK_BUILD / "test-book"
    shutil.rmtree(where, ignore_errors=True)
    patch = pytest.MonkeyPatch()
    patch.setattr(paths, "RESULTS", where / "results")
    try:
        yield book.build("smoke", where) / "html"
    finally:
        patch.undo()
