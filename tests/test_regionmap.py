"""Figure 5's page as typed results: the map at its step and the long runs, read on known maps and on a small real
run; what a grid cannot measure is None and said in words, never NaN."""

import dataclasses
import math
import re

import numpy as np
import pandas as pd
import pytest

from benign import clock, regimes, regionmap, sweep, synthetic, theory

SETTING = dict(seed=3, n=7, n_test=80, T=8, noise_ratio=0.3, learning_rate=0.8, dtype="float64", device="cpu")
D_VALUES, SIGNAL_NORMS, THRESHOLD = [40, 70, 120], [1.0, 2.5, 6.0], 0.9


def no_nan(metrics: dict) -> bool:
    return not any(isinstance(v, float) and math.isnan(v) for v in metrics.values())


def test_fit_words_say_what_was_fitted_and_what_could_not_be():
    fit = {"slope": 0.523, "slope_se": 0.104, "rows": 7, "slope_d": float("nan"), "slope_d_se": float("nan"),
           "columns": 1}
    # the map draws d along x: a boundary ‖μ*‖ is found in each column (one d), a boundary d* in each row (one ‖μ‖)
    assert regionmap.fit_words(fit, total=39) == "0.52 ± 0.10 (over 7 of the 39 columns)"
    assert regionmap.fit_words(fit | {"slope": -0.001}) == "0.00 ± 0.10 (over 7 columns)"  # no sign on a zero
    assert regionmap.fit_words(fit, "slope_d", 9, " at step 1,000") == \
        "not measurable at step 1,000 (only one row of the 9 holds both regimes)"
    assert regionmap.fit_words(fit | {"rows": 0}) == "not measurable (no column holds both regimes)"
    assert regionmap.fit_words(fit, total=7) == "0.52 ± 0.10 (over all 7 columns)"
    assert regionmap.fit_words(fit | {"slope": 0.0, "slope_se": 0.0}, total=39, when=" at step 1,000") == (
        "0 at step 1,000 (flat: the boundary lies at the same ‖μ‖ in 7 of the 39 columns)")
    assert regionmap.fit_words(fit | {"slope": 3.0, "slope_se": float("nan"), "rows": 2}, total=7) == \
        "not measurable (only 2 columns of the 7 hold both regimes: no error to judge a line through two points by)"


def test_steps_are_whole_in_tables():
    assert [regionmap.step_text(t) for t in (154.6, 12.06, 41999.0, None, float("nan"))] == \
        ["155", "12", "41,999", "never", "never"]


def test_loss_trends_read_the_signs_of_a_known_plane():
    d, mu = np.meshgrid([100.0, 200, 400, 800], [2.0, 4, 8, 16], indexing="ij")
    noise = 1e-3 * (-1.0) ** np.add.outer(np.arange(4), np.arange(4))  # a checkerboard: no trend in either log
    cells = pd.DataFrame({"d": d.ravel(), "signal_norm": mu.ravel(),
                          "test_loss": (0.5 + 0.1 * np.log(d) - 0.05 * np.log(mu) + noise).ravel()})
    (slope_d, _), (slope_mu, _) = regionmap.loss_trends(cells)
    assert slope_d == pytest.approx(0.1, abs=1e-3) and slope_mu == pytest.approx(-0.05, abs=1e-3)
    assert re.sub("<[^>]+>", "", regionmap.trend_words(regionmap.loss_trends(cells))) == \
        "rising towards large d and falling towards a strong signal"
    flat = cells.assign(test_loss=0.5 + noise.ravel())
    assert re.sub("<[^>]+>", "", regionmap.trend_words(regionmap.loss_trends(flat))) == \
        "with no measurable trend in d and with no measurable trend in ‖μ‖"


def known_map(regime: np.ndarray) -> tuple[pd.DataFrame, dict]:
    """Cells of a 4 × 4 grid (d 250…2000, ‖μ‖ 5…40) with the given regimes (rows d, columns ‖μ‖)."""
    d_values, mu_values = [250, 500, 1000, 2000], [5.0, 10.0, 20.0, 40.0]
    d, mu = np.meshgrid(d_values, mu_values, indexing="ij")
    regime = np.asarray(regime)
    fitted = regime != "not_overfitting"
    cells = pd.DataFrame({"d": d.ravel(), "signal_norm": mu.ravel(), "regime": regime.ravel(),
                          "train_acc": np.where(fitted, 1.0, 0.8).ravel(),
                          "test_acc": np.where(regime == "harmful", 0.9, 0.99).ravel(),
                          "test_acc_step0": np.where(mu < 10, 0.93, 0.99).ravel(),
                          "train_loss": 0.6 + 0.001 * d.ravel() / 2000, "test_loss": 0.5 + 0.1 * np.log(d).ravel()})
    clean = cells[["d", "signal_norm"]].assign(noise_ratio=0.0, test_acc=np.where(mu < 10, 0.905, 0.99).ravel())
    cells = regimes.against_clean_labels(pd.concat([clean[::-1], cells.assign(noise_ratio=0.2)]), 0.2)  # any order
    cells["regime_trained"] = regimes.trained_regime(cells.train_acc, cells.test_acc, cells.clean_test_acc)
    _, _, maps = sweep.maps(cells, ["regime", "regime_trained"])
    return cells, maps


def test_map_result_reads_a_known_map():
    regime = [["benign", "benign", "not_overfitting", "not_overfitting"],
              ["benign", "benign", "benign", "not_overfitting"],
              ["harmful", "benign", "benign", "benign"],
              ["harmful", "harmful", "benign", "benign"]]
    cells, maps = known_map(regime)
    result = regionmap.map_result(cells, maps, [250, 500, 1000, 2000], [5.0, 10.0, 20.0, 40.0], n=20,
                                  test_threshold=0.95)
    assert result.shares == pytest.approx({"harmful": 3 / 16, "benign": 10 / 16, "not_overfitting": 3 / 16})
    assert result.harmful_cells == 3 and result.unfitted_cells == 3 and result.fitted_cells == 13
    assert result.fits["overfit"]["rows"] == 2 and result.fits["harmful"]["rows"] == 2
    assert result.harmful_head_below_share == pytest.approx(2 / 3)  # two of the harmful cells have ‖μ‖ = 5
    assert result.harmful_clean_below_share == pytest.approx(2 / 3)  # ... and score 0.905 on clean labels too
    assert result.noise_cost == pytest.approx((0.905 - 0.99, 0.99 - 0.9))
    # against clean labels only (2000, 10) loses more than 0.01 (its step 0, 0.93, would have called three harmful)
    assert result.trained_shares["harmful"] == pytest.approx(1 / 16) and result.harmful_trained_cells == 1
    assert result.head_below_max_signal_norm == 5.0
    # its row, ‖μ‖ = 10: four cells fit every label, costing 0, 0, 0 and 0.09 (mean 0.0225, sd √0.00151875)
    assert list(result.harm_rows) == [10.0] and result.harm_rows[10.0][:2] == (1, 4)
    assert result.harm_rows[10.0][2:] == pytest.approx((0.0225, 0.00151875 ** 0.5))
    assert result.metrics()["harm_rows_words"] == (
        "They lie in 1 row: ‖μ‖ = 10, 1 of the 4 cells that fit every label (their mean cost +0.022, standard "
        "deviation 0.039). Each cell is one run, and in the row ‖μ‖ = 10 the costs spread from cell to cell by as "
        "much as the threshold or more, so which of those cells cross it is not settled by one draw: the rows' mean "
        "costs are the firmer reading")
    assert result.paper_cells == {"balanced": (0.99, 1.0)}  # (2000, 20) is on this grid, the others are not
    metrics = result.metrics()
    assert no_nan(metrics) and metrics["harmful_cells"] == 3 and metrics["balanced_test_acc"] == 0.99
    assert metrics["harmful_of_words"] == ("67% of the 3 cells the map calls harmful are cells whose head alone "
                                           "already scores below the threshold")
    assert metrics["harmful_clean_words"] == ("; in 2 of them the same run on clean labels scores below it too, "
                                              "so the flipped labels are not what puts those cells there")
    assert metrics["head_below_words"] == "it falls below 0.95 only in the grid's lowest row, ‖μ‖ = 5"
    assert metrics["noise_cost_span"] == "−0.085 to +0.090" and metrics["test_gain_span"] == "−0.090 to +0.060"
    assert isinstance(metrics["overfit_rows_map"], int)  # counts stay counts in the record
    marked_d = float(re.search(r'data-value="([^"]+)"', metrics["test_loss_trend_words"]).group(1))
    assert marked_d == pytest.approx(0.1)  # the word is marked with its slope: 0.1 per unit of log d
    assert re.sub("<[^>]+>", "", metrics["test_loss_trend_words"]).startswith("rising towards large d")


def test_a_map_without_harm_or_boundaries_says_so_in_words():
    cells, maps = known_map(np.full((4, 4), "not_overfitting"))
    result = regionmap.map_result(cells, maps, [250, 500, 1000, 2000], [5.0, 10.0, 20.0, 40.0], n=20,
                                  test_threshold=0.95)
    metrics = result.metrics()
    assert result.harmful_max_snr_times_d_quarter is None and result.harmful_head_below_share is None
    assert metrics["overfit_slope_map"] is None and no_nan(metrics)
    assert metrics["harmful_reach_words"] == "no cell is harmful" and metrics["harm_rows_words"] == "No row holds such a cell"
    assert metrics["overfit_fit_d_words"] == "not measurable (no row holds both regimes)"
    assert not any("nan" in v.lower() for v in result.words().values())


def test_time_result_reads_the_long_runs_as_regime_at_does():
    steps = [25, 150]
    long = pd.DataFrame(clock.grid_chunk(regimes.points(D_VALUES, SIGNAL_NORMS, steps, num_steps=300,
                                                        test_threshold=THRESHOLD, block=16, history_points=8,
                                                        **SETTING)))
    long = regionmap.annotate_long(long, steps, attention_level=0.5)
    figure5 = pd.DataFrame([row for d in D_VALUES for row in synthetic.grid_chunk(
        sweep.grid(d=d, signal_norm=SIGNAL_NORMS, num_steps=25, **SETTING))])  # the map at its own step, 25
    figure5["regime"] = theory.observed_regime(figure5.train_acc, figure5.test_acc, THRESHOLD)
    result = regionmap.time_result(long, steps, 25, 300, 0.5, figure5)
    for t in steps:
        at = regimes.regime_at(long, t)
        assert result.shares_at[t] == pytest.approx({k: float((at == k).mean()) for k in theory.REGIMES})
    assert result.compared == 9 and result.agreement == 1.0  # the same cells, the same regimes at step 25
    assert result.words()["agreement_words"] == ("At step 25 they give the map above again: all of the 9 cells the "
                                                 "two computations share have the same regime")
    assert result.paper_cells == {"balanced": None, "large_noise": None, "large_signal": None}
    metrics = result.metrics()
    assert no_nan(metrics) and metrics["long_grid_rows"] == 3
    assert "balanced (2000, 20): not among this profile's long runs." in metrics["paper_cells_over_time_words"]
    assert metrics["not_overfitting_over_time_words"].endswith("at step 150")
    assert "at step 25 (on the whole map at that step: " in metrics["not_overfitting_over_time_words"]
    assert metrics["long_grid_words"] == "The long runs are every cell of the map"
    part = dataclasses.replace(result, runs=4, compared=4, grid=(2, 2), medians=(55.0, 1.75))
    assert part.words()["long_grid_words"] == ("The long runs are 4 cells of the map's 9, 2 values of d by 2 of ‖μ‖, "
                                               "whose median d is 55 and median ‖μ‖ 1.75, against 70 and 2.5 over the "
                                               "map: their shares are this subgrid's, not the map's")
    cell = regionmap.CellOverTime(regimes={25: "not_overfitting", 150: "benign"}, first_noisy_step=12.0,
                                  noisy_fitted_step=None, select_step=None, test_acc_long=0.9875)
    words = dataclasses.replace(result, paper_cells={"balanced": cell}).cell_words()
    assert words.splitlines()[0] == (
        "- balanced (2000, 20): not overfitting at step 25 and benign at step 150; first noisy label fitted at step "
        "12, not every noisy label fitted within the run; test accuracy 0.988 at the end; its test attention on the "
        "relevant token never reaches 0.5 at a logged step.")
    assert words.splitlines()[1] == "- large noise (4500, 5): not among this profile's long runs."


def test_one_cell_reads_as_one_cell():
    regime = np.full((4, 4), "benign").astype(object)
    regime[0, 3], regime[3, 0] = "not_overfitting", "harmful"  # (250, 40) unfitted; (2000, 5): head below 0.95
    cells, maps = known_map(regime.astype(str))
    words = regionmap.map_result(cells, maps, [250, 500, 1000, 2000], [5.0, 10.0, 20.0, 40.0], n=20,
                                 test_threshold=0.95).words()
    assert words["unfitted_words"] == ("The only cell that leaves a training label unfitted lies above n·SNR² = 1 (at "
                                       "n·SNR² = 128)")  # 20 · 40² / 250, never in exponent notation
    assert words["harmful_of_words"] == ("the only cell the map calls harmful is a cell whose head alone already "
                                         "scores below the threshold")
