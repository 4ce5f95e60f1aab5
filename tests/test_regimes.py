"""Figure 5's map over training time: the regime at a step from the clock's switches against Figure 5's own kernel
run to that step, the course of the test error, the boundary slopes, and bad grids."""

import numpy as np
import pandas as pd
import pytest

from benign import clock, regimes, sweep, synthetic, theory
from benign.checks import ParameterError

SETTING = dict(seed=3, n=7, n_test=80, T=8, noise_ratio=0.3, learning_rate=0.8, dtype="float64", device="cpu")
D_VALUES, SIGNAL_NORMS, THRESHOLD = [40, 70, 120], [1.0, 2.5, 6.0], 0.9


def test_the_regime_at_a_step_equals_figure_5s_map_run_to_that_step():
    cells = pd.DataFrame(clock.grid_chunk(regimes.points(D_VALUES, SIGNAL_NORMS, [0, 25, 150], num_steps=300,
                                                         test_threshold=THRESHOLD, block=16, **SETTING)))
    seen = set()
    for step in (25, 150):  # Figure 5's kernel, run for `step` steps on the same cells (its defaults: W and p)
        figure5 = pd.DataFrame([row for d in D_VALUES for row in synthetic.grid_chunk(
            sweep.grid(d=d, signal_norm=SIGNAL_NORMS, num_steps=step, **SETTING))])
        expected = theory.observed_regime(figure5.train_acc, figure5.test_acc, THRESHOLD)
        assert regimes.regime_at(cells, step).tolist() == expected.tolist(), step
        seen |= set(expected)
    assert len(seen) >= 2  # the maps are not one colour: the comparison decides something


def test_delta_of_threshold_turns_an_accuracy_into_an_error_count():
    assert regimes.delta_of_threshold(0.95, 1000) == pytest.approx(0.0505)  # at most 50 errors
    assert regimes.delta_of_threshold(0.9, 80) == pytest.approx(8.5 / 80)
    assert regimes.delta_of_threshold(1.0, 300) == pytest.approx(0.5 / 300)  # no error at all


def test_test_error_course_reads_the_switches():
    cells = pd.DataFrame({"test_error_first": [0, 0, 40, 0, None, 0, 3],
                          "test_error_switches": [[], [10, 30], [40], [10], [], [5, 9, 12], [3, 8]]})
    assert regimes.test_error_course(cells).tolist() == ["stays_below", "transient", "falls_below", "rises_above",
                                                         "stays_above", "rises_above", "stays_above"]


def test_first_noisy_fitted_is_where_no_noisy_fitted_first_fails():
    cells = pd.DataFrame({"noisy_unfitted_first": [0, 0, None, 12], "noisy_unfitted_switches": [[7, 12], [], [], [12]]})
    assert regimes.first_noisy_fitted(cells).tolist() == pytest.approx([7.0, np.nan, 0.0, 0.0], nan_ok=True)


def test_condition_at_flips_at_each_switch():
    assert clock.condition_at(0, [3, 7], [0, 2, 3, 6, 7, 100]).tolist() == [True, True, False, False, True, True]
    assert clock.condition_at(None, [], [0, 50]).tolist() == [False, False]
    assert clock.condition_at(4, [4], [3, 4]).tolist() == [False, True]


def test_boundary_slope_recovers_a_known_power_law_both_ways():
    d = np.unique(np.geomspace(250, 4000, 121).round())  # fine, log-spaced rows and columns: each boundary point
    mu = np.geomspace(2, 200, 201)  # lies within ±1.2 % of the true one
    for exponent, c in ((0.5, 0.3), (0.25, 2.0)):  # n·SNR² = const and SNR = const · d^(-1/4), inside the grid
        truth = c * d ** exponent
        regime_map = np.where(mu[None, :] >= truth[:, None], "not_overfitting", "benign")
        fit = regimes.boundary_slope(d, mu, regime_map, "benign", "not_overfitting")
        assert fit["rows"] == len(d) and fit["slope"] == pytest.approx(exponent, abs=0.01)
        assert fit["slope_d"] == pytest.approx(1 / exponent, rel=0.03)  # log d* against log ‖μ‖
        assert fit["slope_se"] < 0.01 and fit["slope_d_se"] < 0.05
    vertical = np.where(d[:, None] < 1000, "not_overfitting", np.full((len(d), len(mu)), "benign"))
    fit = regimes.boundary_slope(d, mu, vertical, "benign", "not_overfitting")
    assert fit["rows"] == 0 and np.isnan(fit["slope"])  # no row holds both regimes: no slope in ‖μ‖
    assert fit["columns"] == len(mu) and fit["slope_d"] == pytest.approx(0, abs=1e-12)  # d* the same in every column


def test_boundary_ignores_other_regimes_and_rows_without_both():
    mu = [5.0, 10.0, 20.0, 40.0]
    assert regimes.boundary(mu, ["harmful", "benign", "benign", "not_overfitting"], "benign",
                            "not_overfitting") == pytest.approx(np.sqrt(800))
    assert regimes.boundary(mu, ["harmful", "benign", "not_overfitting", "benign"], "benign",  # one misplaced cell
                            "not_overfitting") in (pytest.approx(np.sqrt(200)), pytest.approx(np.sqrt(800)))
    assert np.isnan(regimes.boundary(mu, ["benign"] * 4, "benign", "not_overfitting"))
    fit = regimes.boundary_slope([100, 200], mu, [["benign"] * 4, ["benign"] * 3 + ["harmful"]], "benign",
                                 "not_overfitting")
    assert fit["rows"] == fit["columns"] == 0 and np.isnan(fit["slope"]) and np.isnan(fit["slope_d_se"])


@pytest.mark.parametrize("args,message", [
    (([250, 500], [5.0, 10.0], [1000, 200000]), r"snapshot_steps = \[1000, 200000\] is not allowed: \[200000\] lie "
                                                r"after the run's last step \(100000\)"),
    (([250], [5.0], [1000]), r"is not a map: give at least two values of d and two of the signal norm"),
    (([250, 500], [5.0], [1000]), r"is not a map"),
    (([250, 500], [5.0, 10.0], [-1]), r"snapshot_steps = \[-1\] is not allowed"),
])
def test_bad_grids_are_refused_in_one_line(args, message):
    with pytest.raises(ParameterError, match=message):
        regimes.points(*args, num_steps=100_000, test_threshold=0.95)


def test_the_trained_regime_judges_harm_against_the_control():
    # fitted and 0.88 at the end: harmful by the paper's 0.95 rule, but the same run on clean labels scored 0.885 (no
    # harm) in the first cell and 0.95 in the second (harm); an unfitted cell is not overfitting whatever its accuracy
    got = regimes.trained_regime([1.0, 1.0, 0.9, 1.0], [0.88, 0.88, 0.5, 1.0], [0.885, 0.95, 1.0, 1.0], harm=0.01)
    assert list(got) == ["benign", "harmful", "not_overfitting", "benign"]


def test_a_loss_of_exactly_the_threshold_is_not_more_than_it():
    # 0.89 − 0.88 is 0.010000000000000009 in floating point: 10 test samples in 1000, not more than 0.01
    assert 0.89 - 0.88 > 0.01
    assert list(regimes.trained_regime([1.0, 1.0], [0.88, 0.879], [0.89, 0.89], harm=0.01)) == ["benign", "harmful"]


def test_each_cell_is_set_beside_its_clean_label_run_and_a_missing_one_is_refused():
    cell = pd.DataFrame({"d": [250, 250, 500], "signal_norm": [5.0, 10.0, 5.0]})
    runs = pd.concat([cell.assign(noise_ratio=0.0, test_acc=[0.95, 0.99, 0.9])[::-1],
                      cell.assign(noise_ratio=0.2, test_acc=[0.9, 0.99, 0.92])])
    cells = regimes.against_clean_labels(runs, 0.2)
    assert cells.clean_test_acc.tolist() == [0.95, 0.99, 0.9]  # matched by cell, not by row order
    assert cells.noise_cost.round(3).tolist() == [0.05, 0.0, -0.02] and len(cells) == 3
    with pytest.raises(ValueError, match="the clean-label runs miss 1 of the map's cells"):
        regimes.against_clean_labels(runs.iloc[1:], 0.2)
