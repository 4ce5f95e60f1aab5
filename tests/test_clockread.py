"""The clock page's reading of its runs (`benign.clockread`) on a small hand-built grid with known answers."""

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from benign import clockread
from benign.clockread import ANALYSED, EXPERIMENTS, Condition, LineFit, SeedSlope, Share
from benign.words import plain

NAN = float("nan")
NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "theory_clock.py"
NOTEBOOK_KEYS = {"n_snr2_min", "n_snr2_max", "num_steps", "num_steps_trained_W", "delta", "attention_level", "block",
                 "growth_at_log_T", "factors_words", "training_wall_s", "runs_said"}  # the page's own, not the runs'
RULE_KEYS = {"select_benign_slope_p_only", "select_benign_slope_p_only_std", "select_bound_p_only",
             "select_bound_cells_p_only", "select_benign_at_p_only", "benign_first_latest", "benign_settled_share",
             "benign_met_share", "test_error_at_step0_share", "select_censored_benign", "delay_benign_runs", "delay_min_runs",
             "delayed_share", "gap_slope", "gap_slope_se", "fit_time_median", "select_time_median",
             "delay_unselected_runs", "delay_unselected_fit_latest", "delayed_share_all", "alpha_ratio_noisy",
             "alpha_ratio_select", "alpha_factor_ratio", "delay_benign_runs_test_error", "delayed_share_test_error",
             "gap_slope_test_error", "gap_slope_se_test_error", "fit_time_median_test_error",
             "select_time_median_test_error"}


def run(**given) -> dict:
    """One run as `clockread.annotate` leaves it: analysed model, main grid (α·d/n = 5), d = 2000, n = 20, every label
    fitted at step 10, fresh inputs never selecting within its 1,000 steps, the head's test accuracy 1 throughout
    (its test error below δ from step 0)."""
    row = dict(model=ANALYSED, train_W=False, factor=5.0, learning_rate=0.05, d=2000, n=20, seed=0, n_snr2=1.0,
               regime_by_order="benign", prefactor=1.0, kappa=0.5, num_steps=1000, tau_benign=10.0, tau_noisy=10.0,
               tau_select=NAN, tau_test_zero=0.0, t_fit=10.0, t_test=0.0, tau_theorem=NAN, test_acc=1.0, test_error_first=0,
               not_overfitting_first=0, not_overfitting_settled=NAN, noisy_fitted_first=10, benign_first=10,
               benign_settled=10, test_loss_min_step=1000, history={"test_acc": [1.0]})
    row.update(given)
    row["signal_norm"], row["inverse"] = row["n_snr2"], 1 / row["n_snr2"]  # the signal norm: one per n·SNR²
    if "t_select" not in given:
        row["t_select"] = row["tau_select"]
    return row


def grid() -> pd.DataFrame:
    """Two seeds at n·SNR² = 0.5 and 1 (the theory's benign region) and 2 (not overfitting), log τ_benign of slope
    0.1 and −0.1 against 1/(n·SNR²): fresh inputs select at step 5 at n·SNR² = 2 (before the last noisy fit at 10),
    at steps 100 and 200 at 1, never at 0.5. The experiments' model: two runs at n·SNR² = 1 selecting at 300. At a tenth of the step size, seed 0 fits the noise
    ten times later (τ·α unchanged) and selects at 2,000 at n·SNR² = 1 (τ·α doubled)."""
    rows = []
    for seed, at_1, k in ((0, 100.0, 0.1), (1, 200.0, -0.1)):  # k: the seed's slope of log τ_benign
        rows += [run(seed=seed, n_snr2=0.5, kappa=0.25, tau_benign=10 * math.exp(2 * k)),
                 run(seed=seed, n_snr2=1.0, tau_select=at_1, tau_benign=10 * math.exp(k)),
                 run(seed=seed, n_snr2=2.0, regime_by_order="not_overfitting", tau_select=5.0, kappa=1.0,
                     tau_benign=10 * math.exp(k / 2))]
    rows[3].update(test_acc=0.9, history={"test_acc": [1.0]})  # seed 1 at n·SNR² = 0.5 loses test accuracy
    rows += [run(model=EXPERIMENTS, train_W=True, seed=seed, t_fit=20.0, tau_select=300.0) for seed in (0, 1)]
    rows += [run(factor=0.5, learning_rate=0.005, n_snr2=x, tau_noisy=100.0, tau_select=t, t_fit=100.0)
             for x, t in ((0.5, NAN), (1.0, 2000.0))]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def result():
    cells = grid()
    return clockread.clock_result(cells, [5.0], clockread.alpha_grid(cells, [2000], [20]))


def test_a_slope_over_seeds_and_a_share_in_words():
    table = pd.DataFrame(run(seed=s, n_snr2=x, tau_noisy=math.exp(k / x)) for s, k in ((0, 2), (1, 3))
                         for x in (0.5, 1.0, 2.0))
    fit = SeedSlope.of(table, "tau_noisy")
    assert (fit.slope, fit.spread, fit.runs) == (pytest.approx(2.5), pytest.approx(0.5), 6)
    assert fit.words() == "2.5 ± 0.5" and plain(fit.trend()) == "grows"
    assert fit.table_words() == "2.5 ± 0.5 (6 runs)"
    assert Share.of([True, False, False]).words() == "1 of the 3 runs" and Share(1, 3).share == 1 / 3
    assert math.isnan(Share(0, 0).share) and Share(0, 2).words() == "neither run"


def test_a_line_fit_in_words_is_rounded_to_its_error():
    assert plain(LineFit(8.833, 0.4176).words("grows", "shrinks")) == "grows (slope 8.8 ± 0.4)"
    assert plain(LineFit(-0.0572, 0.039).words()) == "does not change measurably (slope −0.06 ± 0.04)"
    assert plain(LineFit(2.0, NAN).words()) == "does not change measurably (slope 2.00 from two points)"
    assert LineFit(NAN, NAN).words() == "cannot be fitted (measured at one value only)"


def test_the_models_times_and_the_clock_verdict(result):
    m = result.metrics()
    assert m["select_slope_p_only"] == pytest.approx(math.log(800))  # per seed 2 log 20 and 2 log 40
    assert m["select_slope_p_only_std"] == pytest.approx(math.log(2))
    assert m["select_slope_words_p_only"] == "6.7 ± 0.7" and m["select_runs_p_only"] == 4
    assert m["select_bound_p_only"] == pytest.approx(math.log(1000 / 200)) and m["select_bound_cells_p_only"] == 2
    assert m["clock_verdict_p_only"] == "contradicted" and "at least 1.6" in m["clock_reason_p_only"]
    assert m["clock_said_p_only"].startswith("**contradicted** — fresh inputs select later")
    assert math.isnan(m["select_benign_slope_p_only"]) and m["select_benign_runs_p_only"] == 0  # one n·SNR²: no line
    assert (m["select_benign_at_p_only"], m["select_benign_selected_p_only"], m["select_benign_steps_p_only"]) == (
        "n·SNR² = 1 only", "2 of the 4 runs", "100–200")
    assert m["select_where_p_only"] == ("4 runs, 2 of them in the theory's not-overfitting region and 2 in its "
                                        "benign region")
    assert m["kappa_slope_p_only"] == pytest.approx(1.0) and plain(m["kappa_trend_p_only"]) == "rises"
    assert m["benign_slope_words_p_only"] == "0.0 ± 0.1"
    assert plain(m["benign_trend_words"]) == ("does not change measurably for the analysed model and cannot be fitted "
                                              "for the experiments' model")
    assert m["select_medians_words"] == "step 100 at n·SNR² = 1 and 5 at 2"
    assert m["select_censored_words"] == "2 of the 4 runs of the analysed model and neither run of the experiments' model"
    assert m["select_censored_benign"] == 0.5 and m["clock_verdict_W_and_p"] == "not seen"


def test_the_step_sizes_the_head_and_the_other_candidates(result):
    m = result.metrics()
    assert (m["alpha_ratio_noisy"], m["alpha_ratio_select"], m["alpha_factor_ratio"]) == pytest.approx((1, 2, 10))
    assert m["alpha_said"].startswith("**holds in part** — τ·α changes with α by more than 10%")  # selection: τ·α doubled
    assert m["noisy_slope_small_alpha_words"] == "0.00"
    assert (m["test_acc_fell_words"], m["test_acc_fell_at"]) == ("1 of the 8 runs", "n·SNR² = 0.5 only")
    assert m["test_acc_fell_most"] == pytest.approx(0.1) and m["test_acc_last_min"] == 0.9
    assert (m["runs"], m["benign_cells"], m["noisy_fitted_words"]) == (10, 8, "all 10 runs")
    assert (m["benign_settled_words"], m["benign_first_latest"]) == ("all 4 runs", 10.0)
    assert m["benign_condition_words"] == ("meets the condition in all 4 runs, by step 10 at the latest, and holds it "
                                           "from then to the last step in every one of them")
    assert m["test_loss_turned_words"] == ("in none of the 8 runs outside the harmful region (both models): in every "
                                           "one its lowest value is at the last step")


def test_the_theorems_condition_counts_the_runs_that_never_meet_it_and_says_where_the_unsettled_lie():
    region = pd.DataFrame(dict(benign_first=[10.0, 20.0, 129.0, 30.0, NAN], benign_settled=[10.0, 20.0, 129.0, NAN, NAN],
                               signal_norm=[20.0, 20.0, 20.0, 7.5, 7.5], d=[10000.0] * 5))  # SNR·d^{1/4}: 2 and 0.75
    condition = Condition.of(region)
    assert (condition.met.words(), condition.settled.words(), condition.first_latest) == (
        "4 of the 5 runs", "3 of the 5 runs", 129.0)
    assert condition.words() == ("meets the condition in 4 of the 5 runs, by step 129 at the latest, and holds it from "
                                 "then to the last step in 3 of them; of the other 2, 1 loses it again (the test error "
                                 "rises above δ) and 1 never meets it, all at an SNR at most 0.75 times 1/∜d, the "
                                 "harmful boundary (the region's runs reach 2 times it)")
    one = Condition.of(region.iloc[:4])
    assert one.words().endswith("in 3 of them; the other run loses it again (the test error rises above δ), at an SNR "
                                "at most 0.75 times 1/∜d, the harmful boundary (the region's runs reach 2 times it)")
    assert Condition.of(region.iloc[3:]).words().endswith("at an SNR at most 0.75 times 1/∜d, the harmful boundary "
                                                          "(as far as any run of the region reaches)")
    assert Condition.of(region.iloc[:3]).words() == ("meets the condition in all 3 runs, by step 129 at the latest, and "
                                                     "holds it from then to the last step in every one of them")


def test_delayed_generalization_in_three_scopes(result):
    m = result.metrics()
    assert (m["delay_benign_runs"], m["delayed_runs"], m["delayed_words"]) == (2, 2, "both runs")
    assert (m["fit_time_median"], m["select_time_median"]) == (10.0, 100.0)
    assert m["gap_words"] == "cannot be fitted (measured at one value only)" and math.isnan(m["gap_slope"])
    assert m["delay_said"] == "**not seen** — too few benign runs in which fresh inputs select within the run"
    assert (m["delayed_words_all"], m["delayed_share_all"]) == ("2 of the 4 runs", 0.5)
    assert m["benign_all_words"] == "4 runs, 2 of them in the theory's not-overfitting region"
    assert m["early_select_words"] == "in the other 2, all at n·SNR² of 2 and above"
    assert (m["delay_unselected_words"], m["delay_unselected_fit_latest"]) == ("2 runs", 10.0)
    assert m["delay_benign_words_W_and_p"] == "2 benign runs" and m["fit_time_median_W_and_p"] == 20.0
    # the paper's reading, in test error: below δ from step 0 in most runs, so not testable here, whatever the runs
    assert (m["delay_benign_runs_test_error"], m["delayed_runs_test_error"]) == (4, 0)
    assert m["delay_said_test_error"].startswith("**not testable here** — the fixed head's test error is below δ")


def test_every_key_the_page_glues_and_the_ledger_reads_is_in_the_record(result):
    keys = set(result.metrics())
    glued = {re.sub(r"_pct$", "", k) for k in re.findall(r"\{glue:(?:text|md)}`([A-Za-z0-9_]+)", NOTEBOOK.read_text())}
    assert not glued - keys - NOTEBOOK_KEYS, sorted(glued - keys - NOTEBOOK_KEYS)
    assert not RULE_KEYS - keys, sorted(RULE_KEYS - keys)
    assert not NOTEBOOK_KEYS & keys  # one place for each key


def test_the_theorem_table():
    cells = pd.DataFrame([run(n_snr2=1.0, tau_theorem=4400.0, tau_select=s) for s in (100.0, NAN)])
    table = clockread.theorem_table(cells, [5.0])
    assert table.iloc[0].tolist() == ["4,400", "10", "100", "1 of the 2 runs"]
