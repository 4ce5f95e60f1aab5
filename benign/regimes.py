"""Figure 5's regime map over training time, from the event switches of the theorem's clock.

Figure 5 classifies each (d, ‖μ‖) cell after 1000 steps (`theory.observed_regime`): *not overfitting* while some
training label is unfitted, else *benign* if the test accuracy reaches `test_threshold`, else *harmful*. Run the same
cells (same data, same W₀, W and p trained) for 10⁵–10⁶ steps with `benign.clock`, which records every step at which
a condition switches, and the regime at any step t follows exactly, with nothing stored per step: every clean and
every noisy label fitted at t, and the test error below δ at t, with δ chosen so that "error < δ" on n_test samples is
"accuracy ≥ test_threshold" (`delta_of_threshold`).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from . import clock, sweep, thresholds
from .checks import ParameterError, check_all

COURSES = {  # the test error over a whole run, read off its switches
    "stays_below": "below δ from step 0 to the end",
    "transient": "below δ at step 0, above it for a while, below again at the end",
    "falls_below": "above δ at step 0, below at the end",
    "rises_above": "below δ at step 0, above at the end",
    "stays_above": "above δ at step 0 and at the end",
}


def delta_of_threshold(test_threshold: float, n_test: int) -> float:
    """The δ with "test error < δ" ⟺ "test accuracy ≥ test_threshold" on n_test samples: the largest allowed number
    of errors, ⌊(1 − test_threshold)·n_test⌋, plus one half, over n_test."""
    allowed = np.floor((1 - test_threshold) * n_test + 1e-9)
    return float((allowed + 0.5) / n_test)


def points(d_values, signal_norm_values, snapshot_steps, *, num_steps: int, test_threshold: float, **fixed) -> list:
    """The clock's grid points for Figure 5's cells (W and p trained from the kaiming W₀, as Figure 5 trains them):
    every (d, ‖μ‖), run for `num_steps` steps, with δ from `test_threshold`; `fixed`: any other parameter of
    `clock.CLOCK_DEFAULTS` (seed, n, n_test, α, …). Refuses snapshot steps outside the run and a grid of one cell,
    which has no map and no boundary."""
    check_all(d_values=d_values, signal_norm_values=signal_norm_values, snapshot_steps=snapshot_steps,
              num_steps=num_steps, test_threshold=test_threshold)
    outside = [t for t in snapshot_steps if t > num_steps]
    if outside:
        raise ParameterError(f"snapshot_steps = {snapshot_steps} is not allowed: {outside} lie after the run's last "
                             f"step ({num_steps}); use steps from 0 to {num_steps}")
    if len(set(d_values)) < 2 or len(set(signal_norm_values)) < 2:
        raise ParameterError(f"the grid d_values = {d_values} × signal_norm_values = {signal_norm_values} is not a "
                             "map: give at least two values of d and two of the signal norm")
    n_test = fixed.get("n_test", clock.CLOCK_DEFAULTS["n_test"])
    return sweep.grid(d=list(d_values), signal_norm=[float(v) for v in signal_norm_values], num_steps=num_steps,
                      W_init="kaiming", train_W=True, delta=delta_of_threshold(test_threshold, n_test), **fixed)


def against_clean_labels(runs: pd.DataFrame, noise_ratio: float) -> pd.DataFrame:
    """A sweep that ran every cell at `noise_ratio` and on clean labels (η = 0: same inputs, W₀ and steps; Figures 5
    and 7) as one row per cell at η, with its clean-label run's test accuracy (`clean_test_acc`) and what the flipped
    labels cost against it (`noise_cost`), the control `trained_regime` reads."""
    cells = runs[runs.noise_ratio == noise_ratio].reset_index(drop=True)
    control = (runs[runs.noise_ratio == 0.0].set_index(["d", "signal_norm"]).test_acc
               .reindex(pd.MultiIndex.from_frame(cells[["d", "signal_norm"]])).to_numpy())
    if np.isnan(control).any():
        raise ValueError(f"the clean-label runs miss {int(np.isnan(control).sum())} of the map's cells")
    return cells.assign(clean_test_acc=control, noise_cost=control - cells.test_acc)


def trained_regime(train_acc, test_acc, control_test_acc, harm: float = thresholds.HARM.value) -> np.ndarray:
    """The regime by what the flipped labels cost: *not overfitting* while some training label is unfitted, else
    *harmful* if the run ends more than `harm` of test accuracy below its control, else *benign*. The control is the
    same run on clean labels (same inputs, W₀ and steps: Figures 5 and 7), so a cost that training alone pays, or an
    accuracy the fixed head already lacks at step 0, is not harm. Unlike Figure 5's rule (`theory.observed_regime`, a
    test accuracy threshold), a run whose control scores low is not harmful unless the flipped labels make it worse."""
    fitted = np.asarray(train_acc) >= 1
    lost = thresholds.beyond(np.asarray(control_test_acc) - np.asarray(test_acc), harm)
    return np.where(~fitted, "not_overfitting", np.where(lost, "harmful", "benign"))


def condition(cells: pd.DataFrame, name: str, step: int) -> np.ndarray:
    """Whether the event condition `name` (`clock.EVENTS`) held at `step`, for every cell."""
    return np.array([bool(clock.condition_at(first, switches, step))
                     for first, switches in zip(cells[f"{name}_first"], cells[f"{name}_switches"])])


def regime_at(cells: pd.DataFrame, step: int) -> np.ndarray:
    """Figure 5's regime of every cell at `step` (`theory.observed_regime` of its train and test accuracy then)."""
    fitted = condition(cells, "clean_fitted", step) & condition(cells, "noisy_fitted", step)
    below = condition(cells, "test_error", step)
    return np.where(~fitted, "not_overfitting", np.where(below, "benign", "harmful"))


TIME_MAP_EVENTS = ("clean_fitted", "noisy_fitted", "test_error")  # the conditions `regime_at` reads
TIME_MAP_SCRIPT = "../_static/explore/regime_time.js"  # the map's script, as a notebook page of the book names it


def time_map(cells: pd.DataFrame, d_values, signal_norm_values, num_steps: int, colors: dict,
             test_threshold: float, start_step: int | None = None) -> dict:
    """The map over training time as a JSON-able dict, for the page's interactive map (book/_static/explore/
    regime_time.js): the grid (`d`, `signal_norm`), `num_steps`, the step it opens at (`start_step`, default the last),
    the test accuracy threshold, the logged steps, and per cell (rows d, columns ‖μ‖, row by row) the records of the
    three conditions `regime_at` reads (first step, None: never; switches) and its train and test accuracy at the
    logged steps (to 4 decimals); `regimes`: each regime's name and colour (`colors`: regime → colour, the legend's
    order). The regime at any step follows from the records exactly, as in `regime_at`. Refuses a grid cell missing
    from `cells` and cells logged at different steps."""
    by_cell = {(int(row.d), float(row.signal_norm)): row for row in cells.itertuples()}
    steps = [int(t) for t in cells.history.iloc[0]["step"]]
    out = []
    for d in d_values:
        for mu in signal_norm_values:
            row = by_cell.get((int(d), float(mu)))
            if row is None:
                raise ValueError(f"the cell d = {d}, ‖μ‖ = {mu:g} is not among the cells")
            if [int(t) for t in row.history["step"]] != steps:
                raise ValueError(f"the cell d = {d}, ‖μ‖ = {mu:g} is logged at other steps than the first cell")
            events = {}
            for name in TIME_MAP_EVENTS:
                first = getattr(row, f"{name}_first")
                held_never = first is None or (isinstance(first, float) and math.isnan(first))
                events[name] = {"first": None if held_never else int(first),
                                "switches": [int(t) for t in getattr(row, f"{name}_switches")]}
            out.append({"d": int(d), "signal_norm": float(mu), "events": events,
                        **{key: [round(float(a), 4) for a in row.history[f"{key}_acc"]] for key in ("train", "test")}})
    return {"d": [int(d) for d in d_values], "signal_norm": [float(mu) for mu in signal_norm_values],
            "num_steps": int(num_steps), "start_step": int(num_steps if start_step is None else start_step),
            "test_threshold": float(test_threshold), "steps": steps, "cells": out,
            "regimes": [{"key": key, "label": key.replace("_", " "), "color": color} for key, color in colors.items()]}


def time_map_html(payload: dict, script: str = TIME_MAP_SCRIPT) -> str:
    """The page's block for the interactive map: `time_map`'s payload inline as JSON (a page opened from file://
    cannot fetch a file beside it) and the classic script that draws every such block on the page."""
    text = json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")
    return (f'<div class="benign-regime-time"><script type="application/json" class="benign-regime-time-data">{text}'
            '</script><p class="benign-regime-time-fallback">The interactive map is drawn by the book\'s own script: '
            f'open this page in the built book.</p></div>\n<script src="{script}"></script>')


def first_noisy_fitted(cells: pd.DataFrame) -> np.ndarray:
    """The step at which each cell first fitted a noisy label: where its event `noisy_unfitted` first failed (NaN:
    never within the run)."""
    out = []
    for first, switches in zip(cells.noisy_unfitted_first, cells.noisy_unfitted_switches):
        held0 = first == 0
        out.append(float(switches[0]) if held0 and switches else (np.nan if held0 else 0.0))
    return np.array(out)


def test_error_course(cells: pd.DataFrame) -> np.ndarray:
    """Each cell's course of the test error against δ over the run (a key of `COURSES`)."""
    start = (cells.test_error_first == 0).to_numpy()
    switches = cells.test_error_switches.map(len).to_numpy()
    end = start ^ (switches % 2 == 1)
    return np.select([start & end & (switches == 0), start & end, ~start & end, start], ["stays_below", "transient",
                     "falls_below", "rises_above"], "stays_above")


def boundary(signal_norm_values, regimes, lower: str, upper: str) -> float:
    """The ‖μ‖ at which one row of a map (regimes over ascending ‖μ‖) turns from `lower` to `upper`: the threshold
    that misplaces fewest of the row's cells of these two regimes, midway in log between the grid values around it.
    NaN unless the row holds both regimes."""
    mu, regimes = np.asarray(signal_norm_values, dtype=float), np.asarray(regimes)
    keep = np.isin(regimes, [lower, upper])
    mu, is_upper = mu[keep], regimes[keep] == upper
    if is_upper.all() or not is_upper.any():
        return float("nan")
    # threshold between mu[j-1] and mu[j]: cells below it should be `lower`, from it on `upper`
    misplaced = [int(is_upper[:j].sum() + (~is_upper[j:]).sum()) for j in range(1, len(mu))]
    j = 1 + int(np.argmin(misplaced))
    return float(np.sqrt(mu[j - 1] * mu[j]))


def boundary_slope(d_values, signal_norm_values, regime_map, lower: str, upper: str) -> dict:
    """The boundary between `lower` and `upper` on a map (rows d, columns ‖μ‖, both ascending) as a power law, fitted
    both ways, each a least-squares line with its slope's standard error:

    - `slope`: log ‖μ*‖ against log d, through the `boundary` ‖μ*‖ of each row of d that holds both regimes (`rows`);
      n·SNR² = const gives ½, SNR ∝ d^(-1/4) gives ¼;
    - `slope_d`: log d* against log ‖μ‖, through the boundary d* of each column (`columns`) — `lower` at small d,
      `upper` at large d, as the not-overfitting region lies at small d — which stays finite where the boundary
      runs along ‖μ‖ (a vertical one gives 0); the theory's curves give 2 and 4.

    A slope is NaN below 2 points, its error below 3."""
    regime_map = np.asarray(regime_map)
    out = {}
    for name, count, x_values, lines in (
            ("slope", "rows", d_values, [boundary(signal_norm_values, row, lower, upper) for row in regime_map]),
            ("slope_d", "columns", signal_norm_values,
             [boundary(d_values, column, upper, lower) for column in regime_map.T])):
        y = np.asarray(lines)
        x = np.asarray(x_values, dtype=float)[~np.isnan(y)]
        y = y[~np.isnan(y)]
        out.update({name: float("nan"), f"{name}_se": float("nan"), count: len(x)})
        if len(np.unique(x)) < 2:
            continue
        x, y = np.log(x), np.log(y)
        slope, intercept = np.polyfit(x, y, 1)
        out[name] = float(slope)
        if len(x) >= 3:
            residual = y - (intercept + slope * x)
            out[f"{name}_se"] = float(np.sqrt(residual @ residual / (len(x) - 2) / ((x - x.mean()) ** 2).sum()))
    return out
