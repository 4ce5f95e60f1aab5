"""Reading the clock's runs: crossings in log steps, line fits, delayed generalization and its rule on known runs."""

import numpy as np
import pytest

from benign import timing


def test_crossing_interpolates_in_log_steps():
    assert timing.crossing([0, 10, 100], [0.1, 0.2, 0.6], 0.4) == pytest.approx(10 ** 1.5)
    assert timing.crossing([0, 10, 100], [0.5, 0.6, 0.7], 0.4) == 0
    assert np.isnan(timing.crossing([0, 10, 100], [0.1, 0.2, 0.3], 0.4))


def test_delayed_generalization_on_known_runs():
    nan = float("nan")
    inverse = [0.5, 1.0, 2.0, 0.5, 1.0, 1.0]
    t_fit = [10.0, 10.0, 10.0, 10.0, nan, 30.0]  # run 4: labels not all fitted at the end; run 5 selects first
    t_select = [10.0 + np.e, 10.0 + np.e ** 2, 10.0 + np.e ** 4, 10.0 + np.e, 500.0, 20.0]
    m = timing.delayed_generalization(t_fit, t_select, inverse)
    assert (m["benign_runs"], m["delayed_runs"]) == (5, 4) and m["delayed_share"] == pytest.approx(0.8)
    assert m["gap_slope"] == pytest.approx(2.0) and m["gap_slope_se"] == pytest.approx(0.0, abs=1e-9)  # log gap = 2x
    assert m["fit_time_median"] == 10.0 and m["select_time_median"] == pytest.approx(10.0 + np.e ** 2)
    assert timing.delay_verdict(m)[0] == "not seen"  # five benign runs: too few
    many = dict(m, benign_runs=timing.DELAY_MIN_RUNS)
    assert timing.delay_verdict(many)[0] == "holds"
    assert timing.delay_verdict(dict(many, delayed_share=0.5))[0] == "contradicted"
    assert timing.delay_verdict(dict(many, gap_slope=-1.0, gap_slope_se=0.2))[0] == "contradicted"
    assert timing.delay_verdict(dict(many, gap_slope=0.3, gap_slope_se=0.2))[0] == "not seen"  # not told from zero


def test_line_fit():
    slope, se = timing.line_fit([0, 1, 2, 3], [1, 2.1, 2.9, 4.2])
    assert slope == pytest.approx(1.04) and se == pytest.approx(np.sqrt(0.042 / 2 / 5))  # residuals .01 .07 −.17 .09
    assert np.isnan(timing.line_fit([1, 1], [0, 2])[0])
    assert np.isnan(timing.line_fit([0.3, 0.3 * (1 + 1e-14)], [0, 2])[0])  # one value up to rounding: no slope
