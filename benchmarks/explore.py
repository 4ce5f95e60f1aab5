"""The explorable page in headless Chromium against the book's Python trainer on the same work.

Per setting — the page's default (d = 2000, n = 20, T = 8, ‖μ‖ = 20, ρ = 0.1, η = 0.2, α = 5e-3, 1000 steps, W and p
trained, 1000 test samples evaluated every 10 steps) and the same at d = 5000 — it prints the page's wall time (data
drawn, trained and tested in its Web Worker, from the run's start to its result), the page's time to its first
curves, and `benign.synthetic.simulate` (float64, CPU) with the data drawn by `benign.data.make_run`, each the best
of `--repeat` runs. The last line is `ratio N` = browser / Python. The page is opened from file:// as a reader
would open it: a page in a temporary folder holding the explorable's block and its three scripts from
book/_static/explore (the engine's text written by `benign.book.write_engine_script`).
Usage: python benchmarks/explore.py [--repeat 2]
"""

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import torch

from benign import book, data, paths, speed, synthetic
from benign.words import count

STATIC = paths.ROOT / "book" / "_static" / "explore"
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>explorable</title>
<link rel="stylesheet" href="explore.css"></head><body><article>
<div id="benign-explore"></div>
<script src="engine-source.js"></script><script src="explore.js"></script></article></body></html>"""
DEFAULT = {"d": 2000, "signalNorm": 20, "n": 20, "eta": 0.2, "rho": 0.1, "alpha": 0.005, "steps": 1000,
           "nTest": 1000, "W": "trained", "seed": 42}
RUN = """
const done = arguments[arguments.length - 1];
window.explorable.set(arguments[0]);
window.explorable.run().then(done, (err) => done({error: String(err)}));
"""


def page(folder: Path) -> Path:
    for name in ("explore.js", "explore.css", "engine.mjs"):
        shutil.copy2(STATIC / name, folder / name)
    book.write_engine_script(folder)
    (folder / "explore.html").write_text(PAGE)
    return folder / "explore.html"


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1600",
                 "--host-resolver-rules=MAP * ~NOTFOUND"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_script_timeout(300)
    return driver


def python_seconds(p: dict) -> float:
    """Draw the data, train and test with the book's trainer, as the page does (float64, CPU)."""
    started = time.perf_counter()
    run = data.make_run(p["d"], float(p["signalNorm"]), seed=p["seed"], n=p["n"], n_test=p["nTest"], T=8,
                        rho=p["rho"], noise_ratio=p["eta"])
    synthetic.simulate([run], learning_rate=p["alpha"], num_steps=p["steps"], log_every=10, dtype="float64",
                       device="cpu")
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        driver = browser()
        try:
            driver.get(page(Path(folder)).as_uri())
            driver.execute_script("window.explorable.set({})")  # stops the run the page starts on opening
            print(f"chromium {driver.capabilities.get('browserVersion')}, torch {torch.__version__} with "
                  f"{count(torch.get_num_threads(), 'thread')}; a shared 2-core CPU: times vary with the other load")
            for d in (2000, 5000):
                p = {**DEFAULT, "d": d}
                runs = [driver.execute_async_script(RUN, p) for _ in range(args.repeat)]
                assert all("wallMs" in m for m in runs), runs
                best = min(runs, key=lambda m: m["wallMs"])
                python_seconds({**p, "d": 50, "steps": 5})  # warm-up
                py = min(python_seconds(p) for _ in range(args.repeat))
                print(f"d={d} n=20 T=8 steps=1000 test every 10 steps on 1000 samples, W and p trained:")
                print(f"  browser (worker, file://): {best['wallMs'] / 1000:.2f} s, first curves "
                      f"{best['firstCurvesMs'] / 1000:.2f} s, test accuracy {best['testAcc']:.3f} "
                      f"({best['regime'].replace('_', ' ')}), best of {args.repeat}")
                print(f"  python (benign.synthetic.simulate, float64, cpu, data drawn included): {py:.2f} s, "
                      f"best of {args.repeat}")
                print(f"  ratio {best['wallMs'] / 1000 / py:.2f}")
        finally:
            driver.quit()


if __name__ == "__main__":
    with speed.recorded("explore"):  # also saved as results/benchmarks/explore.json
        main()
