"""Figure 5's map over training time, as the page draws it: `benign.regimes.time_map`'s payload gives, at every step,
the regime `benign.regimes.regime_at` gives; the page's script (book/_static/explore/regime_time.js) computes the same
regimes from it in node; and in headless Chromium, from file://, the map is drawn, its slider moves it to the regime
counts the payload gives, and it fits a phone's screen.

The grid is the Figure 5 page's smoke grid run long enough (3000 steps) that its cells pass through all three
regimes. Node and Chromium are Debian's (`.ci/run` installs them): without them these tests fail under CI and are
skipped elsewhere.
"""

import json
import shutil
import subprocess
import time
from collections import Counter

import numpy as np
import pytest

from benign import clock, heatmaps, paths, plots, regimes
from conftest import NODE, offline_chromium, required

SCRIPT = paths.ROOT / "book" / "_static" / "explore" / "regime_time.js"
CSS = paths.ROOT / "book" / "_static" / "benign.css"
D_VALUES, MU_VALUES = [200, 400], [5.0, 25.0]  # the page's smoke grid
NUM_STEPS, START = 3000, 1000  # long enough for every regime to appear; the map opens at the page's snapshot
TEST_THRESHOLD = 0.95


@pytest.fixture(scope="module")
def grid():
    """The smoke grid's long runs (about a second) and their payload."""
    points = regimes.points(D_VALUES, MU_VALUES, [START], num_steps=NUM_STEPS, test_threshold=TEST_THRESHOLD,
                            seed=42, n=20, n_test=100, T=8, rho=0.1, noise_ratio=0.2, learning_rate=0.005,
                            dtype="float32", history_points=20, block=64)
    cells = clock.run(points, cache=None)
    payload = regimes.time_map(cells, D_VALUES, MU_VALUES, NUM_STEPS, heatmaps.REGIME_COLORS, TEST_THRESHOLD,
                               start_step=START)
    return cells, payload


def in_payload_order(cells, regimes_of_cells) -> list[str]:
    """`regime_at`'s answer (in `cells`' order) in the payload's order: rows d, columns ‖μ‖."""
    at = dict(zip(zip(cells.d, cells.signal_norm), regimes_of_cells))
    return [str(at[(d, mu)]) for d in D_VALUES for mu in MU_VALUES]


def steps_to_check(payload) -> list[int]:
    """Step 0, the last, the opening step and every switch of every record with the steps either side of it."""
    switches = {s for cell in payload["cells"] for record in cell["events"].values() for s in record["switches"]}
    around = {t for s in switches for t in (s - 1, s, s + 1)}
    return sorted(t for t in around | {0, START, NUM_STEPS} if 0 <= t <= NUM_STEPS)


def payload_regimes(payload, step: int) -> list[str]:
    """The rule of the page's script, written again from the payload alone: a condition holds at `step` when it held
    at step 0 XOR it switched an odd number of times up to `step`."""
    def held(record):
        return (record["first"] == 0) != (sum(s <= step for s in record["switches"]) % 2 == 1)

    out = []
    for cell in payload["cells"]:
        events = cell["events"]
        fitted = held(events["clean_fitted"]) and held(events["noisy_fitted"])
        out.append("not_overfitting" if not fitted else "benign" if held(events["test_error"]) else "harmful")
    return out


def test_the_payload_gives_regime_at_at_every_switch(grid):
    cells, payload = grid
    steps = steps_to_check(payload)
    seen = set()
    for step in steps:
        expected = in_payload_order(cells, regimes.regime_at(cells, step))
        assert payload_regimes(payload, step) == expected, f"step {step}"
        seen.add(tuple(expected))
    # the check has something to check: the regimes change over the run, and all three occur
    assert len(seen) >= 3
    assert {r for regimes_then in seen for r in regimes_then} == set(heatmaps.REGIME_COLORS)


def test_the_payload_holds_the_grid_the_courses_and_the_legend(grid):
    cells, payload = grid
    json.dumps(payload, allow_nan=False)  # JSON as a browser reads it: no NaN
    assert (payload["d"], payload["signal_norm"]) == (D_VALUES, MU_VALUES)
    assert (payload["num_steps"], payload["start_step"], payload["test_threshold"]) == (NUM_STEPS, START,
                                                                                        TEST_THRESHOLD)
    assert [(c["d"], c["signal_norm"]) for c in payload["cells"]] == [(d, mu) for d in D_VALUES for mu in MU_VALUES]
    assert [(r["key"], r["color"]) for r in payload["regimes"]] == list(heatmaps.REGIME_COLORS.items())
    by_cell = {(row.d, row.signal_norm): row.history for row in cells.itertuples()}
    for cell in payload["cells"]:
        history = by_cell[(cell["d"], cell["signal_norm"])]
        assert payload["steps"] == history["step"]
        assert np.allclose(cell["train"], history["train_acc"], atol=5e-5, rtol=0)  # rounded to 4 decimals
        assert np.allclose(cell["test"], history["test_acc"], atol=5e-5, rtol=0)


def test_the_payload_refuses_a_cell_it_does_not_hold(grid):
    cells, _ = grid
    with pytest.raises(ValueError, match="d = 300"):
        regimes.time_map(cells, [200, 300], MU_VALUES, NUM_STEPS, heatmaps.REGIME_COLORS, TEST_THRESHOLD)


def test_the_block_holds_the_payload_inline_and_names_the_script(grid):
    _, payload = grid
    odd = {**payload, "regimes": [{"key": "x", "label": "</script><b>", "color": "#000"}]}
    html = regimes.time_map_html(odd)
    inline = html.split('class="benign-regime-time-data">')[1].split("</script>")[0]
    assert json.loads(inline) == odd  # a "</" in the data cannot end the script element early
    assert html.endswith(f'<script src="{regimes.TIME_MAP_SCRIPT}"></script>')


# runs the page's script in a vm context with no DOM; reads {payload, steps, positions} on stdin
NODE_DRIVER = """
const vm = require("vm"), fs = require("fs");
const context = {};
vm.createContext(context);
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), context);
const api = context.benignRegimeTime;
let text = "";
process.stdin.on("data", (chunk) => (text += chunk));
process.stdin.on("end", () => {
  const e = JSON.parse(text);
  const slider = e.totals.map((N) => {
    const K = api.positionOf(N, N), steps = [];
    for (let k = 0; k <= K; k++) steps.push(api.stepAt(k, N));
    return {N, K, steps, back: steps.map((t) => api.stepAt(api.positionOf(t, N), N))};
  });
  console.log(JSON.stringify({regimes: e.steps.map((t) => api.regimesAt(e.payload, t)),
                              counts: e.steps.map((t) => api.counts(e.payload, t)), slider}));
});
"""


def test_the_script_computes_regime_at_in_node(grid):
    cells, payload = grid
    steps = steps_to_check(payload)
    totals = [50, 240, 3000, 100000, 1000000]
    done = subprocess.run([required(NODE, "nodejs"), "-e", NODE_DRIVER, str(SCRIPT)], capture_output=True, text=True,
                          input=json.dumps({"payload": payload, "steps": steps, "totals": totals}), timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for step, got, counted in zip(steps, out["regimes"], out["counts"]):
        expected = in_payload_order(cells, regimes.regime_at(cells, step))
        assert got == expected, f"step {step}"
        assert counted == {key: expected.count(key) for key in heatmaps.REGIME_COLORS}
    for slider in out["slider"]:
        N, steps_of = slider["N"], slider["steps"]
        assert steps_of[0] == 0 and steps_of[-1] == N and slider["K"] == min(240, N)
        assert all(a <= b for a, b in zip(steps_of, steps_of[1:]))  # a log scale, never backwards
        assert slider["back"] == steps_of  # a step the slider shows, set back, puts it where it was


@pytest.fixture(scope="module")
def browser():
    with offline_chromium(height=1200) as driver:
        yield driver


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="../_static/benign.css">
<style>body {{ margin: 0; padding: 0 16px; font-family: sans-serif; }} article {{ max-width: 760px; }}</style>
</head><body><article><p>Figure 5 over training time.</p>{block}</article></body></html>
"""

INKED = """
const canvas = document.querySelector('.benign-regime-time canvas'), ctx = canvas.getContext('2d');
const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
let inked = 0;
for (let i = 0; i < px.length; i += 4) if (px[i] < 230 || px[i + 1] < 230 || px[i + 2] < 230) inked++;
return inked / (canvas.width * canvas.height);
"""


def test_the_page_draws_the_map_and_its_slider_moves_it(grid, browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    cells, payload = grid
    (tmp_path / "_static" / "explore").mkdir(parents=True)
    shutil.copy(SCRIPT, tmp_path / "_static" / "explore" / SCRIPT.name)
    shutil.copy(CSS, tmp_path / "_static" / CSS.name)
    page = tmp_path / "notebooks" / "fig5_heatmap.html"  # where the book puts a notebook's page
    page.parent.mkdir()
    page.write_text(PAGE.format(block=regimes.time_map_html(payload)))

    def counted(step):
        found = Counter(in_payload_order(cells, regimes.regime_at(cells, step)))
        return {key: found[key] for key in heatmaps.REGIME_COLORS}

    browser.set_window_size(1400, 1200)
    browser.get(page.as_uri())
    map_ = "return window.benignRegimeTime.maps[0]"
    assert browser.execute_script(f"{map_}.step()") == START
    assert browser.execute_script(INKED) > 0.2  # the map and the panel are drawn
    assert browser.execute_script(f"{map_}.counts()") == counted(START)
    slider = browser.find_element(By.CSS_SELECTOR, ".benign-regime-time input[type=range]")
    slider.send_keys(Keys.END)  # the keyboard: the last step
    assert browser.execute_script(f"{map_}.step()") == NUM_STEPS
    assert browser.execute_script(f"{map_}.counts()") == counted(NUM_STEPS) != counted(START)
    slider.send_keys(Keys.ARROW_LEFT)
    one_back = browser.execute_script(f"return window.benignRegimeTime.stepAt(239, {NUM_STEPS})")
    assert browser.execute_script(f"{map_}.step()") == one_back < NUM_STEPS
    typed = browser.find_element(By.CSS_SELECTOR, ".benign-regime-time input[type=number]")
    typed.clear()
    typed.send_keys("0", Keys.ENTER)
    assert browser.execute_script(f"{map_}.step()") == 0
    assert browser.execute_script(f"{map_}.counts()") == counted(0)

    # pointing at a cell follows it: the bottom-left cell of the map is the smallest d and ‖μ‖
    canvas = browser.find_element(By.CSS_SELECTOR, ".benign-regime-time canvas")
    box = browser.execute_script("const b = arguments[0].getBoundingClientRect(); return [b.width, b.height]", canvas)
    ActionChains(browser).move_to_element_with_offset(canvas, -box[0] / 2 + 60, -box[1] / 2 + 20).perform()
    assert browser.execute_script(f"{map_}.selected()") == len(MU_VALUES) - 1  # top-left: smallest d, largest ‖μ‖
    said = browser.find_element(By.CSS_SELECTOR, ".benign-rt-cell").text
    assert f"d = {D_VALUES[0]}, ‖μ‖ = {MU_VALUES[-1]:g}" in said

    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors

    # a phone, 390 CSS px wide (a headless window is never narrower than 500): the map redraws at the column's width
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    try:
        time.sleep(0.5)
        widths = browser.execute_script("return [window.innerWidth, document.documentElement.scrollWidth, "
                                        "document.querySelector('.benign-regime-time canvas').getBoundingClientRect()"
                                        ".right, document.querySelector('.benign-regime-time input[type=number]')"
                                        ".getBoundingClientRect().right]")
        assert widths[0] == 390 and max(widths[1:]) <= 390, widths
        assert browser.execute_script(INKED) > 0.2
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
