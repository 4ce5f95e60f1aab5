"""Reading the clock's runs: crossings in log steps, line fits, delayed generalization and its rule on known runs."""

import numpy as np
import pandas as pd
import pytest

from benign import timing, words


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
    assert timing.delay_verdict(dict(many, gap_slope=0.3, gap_slope_se=0.2)) == (
        "holds in part", "how the delay grows is untested: the spread cannot tell the gap's growth from none")
    assert timing.delay_verdict(dict(many, gap_slope=float("nan"), gap_slope_se=float("nan")))[0] == "holds in part"


def test_censored_bound_reads_the_step_to_the_first_run_that_never_arrives():
    nan = float("nan")
    table = pd.DataFrame({"d": 100, "n": 10, "seed": [0, 0, 0, 1, 1, 1], "inverse": [0.5, 1.0, 2.0] * 2,
                          "num_steps": 1000, "tau": [5.0, 10.0, nan, 5.0, 20.0, nan]})
    bound, groups = timing.censored_bound(table, "tau")
    assert groups == 2 and bound == pytest.approx(np.log(1000 / 20))  # the smaller of log(100) and log(50), Δ = 1
    assert type(bound) is float  # glued as a number
    assert np.isnan(timing.censored_bound(table.assign(tau=5.0), "tau")[0])  # every run arrives: no bound


def test_clock_verdict():
    nan = float("nan")
    assert timing.clock_verdict({"slope": nan, "spread": nan, "bound": 3.0})[0] == "contradicted"
    assert timing.clock_verdict({"slope": nan, "spread": nan, "bound": 0.5})[0] == "not seen"
    assert timing.clock_verdict({"slope": 1.1, "spread": 0.1, "bound": nan}) == ("holds", "")
    assert timing.clock_verdict({"slope": 2.0, "spread": 0.1, "bound": nan})[0] == "contradicted"
    assert timing.clock_verdict({"slope": 0.2, "spread": 0.1, "bound": nan})[0] == "holds in part"


def test_plus_minus_rounds_to_the_spread():
    assert words.plus_minus(6.434, 0.244) == "6.4 ± 0.2"
    assert words.plus_minus(-0.127, 0.267) == "−0.1 ± 0.3"
    assert words.plus_minus(12.3, 3.1) == "12 ± 3"
    assert words.plus_minus(0.5, float("nan")) == "0.50" and words.spread_format(0.0) == ".2f"


def test_models_words_and_verdict_said():
    assert timing.models_words("rises", "rises") == "rises for both models"
    assert timing.models_words("does not change measurably", "does not change measurably") == (
        "does not change measurably for either model")
    assert timing.models_words("rises", "falls") == "rises for the analysed model and falls for the experiments' model"
    assert timing.verdict_said("holds", "") == "**holds**"
    assert timing.verdict_said("not seen", "too few runs") == "**not seen** — too few runs"


def test_line_fit():
    slope, se = timing.line_fit([0, 1, 2, 3], [1, 2.1, 2.9, 4.2])
    assert slope == pytest.approx(1.04) and se == pytest.approx(np.sqrt(0.042 / 2 / 5))  # residuals .01 .07 −.17 .09
    assert np.isnan(timing.line_fit([1, 1], [0, 2])[0])
    assert np.isnan(timing.line_fit([0.3, 0.3 * (1 + 1e-14)], [0, 2])[0])  # one value up to rounding: no slope


def test_lead_is_zero_at_uniform_attention_and_inverts_to_the_attention():
    T = 8
    assert timing.lead(1 / T, T) == pytest.approx(0.0, abs=1e-15)
    L = timing.lead([0.5, 0.9], T)
    assert np.exp(L) / (T - 1 + np.exp(L)) == pytest.approx([0.5, 0.9])  # s = e^L / (T − 1 + e^L)


def test_lead_rate_recovers_kappa_over_the_last_decade():
    T, kappa = 8, 0.3
    steps = np.unique(np.geomspace(1, 10**5, 60).round())
    L = np.where(steps < 10**4, 0.0, kappa * np.log(steps) + 0.1)  # only the last decade follows κ·log(step)
    s = np.exp(L) / (T - 1 + np.exp(L))
    assert timing.lead_rate({"step": steps, "score_test_relevant": s}, T) == pytest.approx(kappa, rel=1e-9)


def test_fitted_slope_is_the_per_seed_mean_over_non_harmful_measured_runs():
    inverse = np.tile([0.5, 1.0, 2.0], 2)
    seed = np.repeat([0, 1], 3)
    slope = np.where(seed == 0, 1.0, 1.4)
    table = pd.DataFrame({"seed": seed, "inverse": inverse, "prefactor": 2.0,
                          "tau": np.exp(slope * inverse + 0.3) / 2.0, "regime_by_order": "benign"})
    harmful = table.iloc[:1].assign(regime_by_order="harmful", tau=1e9)  # left out, as is a τ not measured
    unmeasured = table.iloc[:1].assign(tau=np.nan)
    mean, spread, used = timing.fitted_slope(pd.concat([table, harmful, unmeasured]), "tau")
    assert (mean, spread, used) == (pytest.approx(1.2), pytest.approx(0.2), 6)
    assert np.isnan(timing.fitted_slope(table.iloc[:1], "tau")[0])  # one value of 1/(n·SNR²): no slope


def test_order_steps_rounds_an_order_to_whole_steps():
    assert [timing.order_steps(x) for x in (4405.3, 29.68, 1.478, 0.5437, 0.01, float("nan"))] == \
        ["4,400", "30", "1", "under 1", "under 1", "—"]


def test_median_step_is_a_step_a_run_reached():
    assert timing.median_step([24, 25, 30, 31]) == 25.0  # not 27.5
    assert timing.median_step([3, float("nan"), 1, 2]) == 2.0 and np.isnan(timing.median_step([float("nan")]))


def test_lowest_at_end_words():
    where = "outside the harmful region"
    assert timing.lowest_at_end_words(0, 84, where) == ("in none of the 84 runs outside the harmful region: in every "
                                                        "one its lowest value is at the last step")
    assert timing.lowest_at_end_words(3, 84, where) == ("in 3 of the 84 runs outside the harmful region; in every "
                                                        "other run its lowest value is at the last step")
    assert timing.lowest_at_end_words(84, 84, where) == "in all 84 runs outside the harmful region"
