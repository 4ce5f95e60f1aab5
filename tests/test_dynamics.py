"""Figure 3's reading (`benign.dynamics`) on hand-built runs: the plotted seed's numbers and the seeds' ranges, the
controls and what the flipped labels cost seed by seed, the draws against where the paper puts each setting, the
authors' rows where their script ran; and the tables read off a small real simulation."""

import math

import numpy as np
import pandas as pd
import pytest

from benign import data, dynamics, synthetic

SETTINGS = {"balanced": (2000, 20.0), "large_noise": (4500, 5.0), "large_signal": (1000, 80.0)}
COLUMNS = ("train_acc", "test_acc", "train_loss", "test_loss", "clean_fitted", "clean_count", "noisy_fitted",
           "noisy_count", "test_acc_step0", "test_gain", "clean_labels_test_acc", "noise_cost",
           "test_attention_relevant")
SEEDS = {  # setting → one row per seed (42, plotted, then 43), in the order of COLUMNS
    "balanced": [(1.0, 0.996, 0.4526, 0.5, 16, 16, 4, 4, 0.9, 0.096, 0.998, 0.002, 0.8),
                 (1.0, 0.990, 0.45, 0.5, 16, 16, 4, 4, 0.9, 0.090, 0.995, 0.005, 0.7)],
    "large_noise": [(1.0, 0.867, 0.4, 0.7, 16, 16, 4, 4, 0.88, -0.013, 0.880, 0.013, 0.3),
                    (1.0, 0.870, 0.4, 0.7, 16, 16, 4, 4, 0.88, -0.010, 0.875, 0.005, 0.4)],
    "large_signal": [(0.8, 1.0, 0.3, 0.2, 16, 16, 0, 4, 0.95, 0.05, 1.0, 0.0, 0.9),
                     (0.85, 1.0, 0.3, 0.2, 16, 16, 1, 4, 0.95, 0.05, 1.0, 0.0, 0.9)]}
FITTED = {"balanced": [4, 4, 3], "large_noise": [4, 4, 4], "large_signal": [0, 0, 1]}  # three draws, seeds 0 to 2


def seed_runs(seeds: dict = SEEDS) -> pd.DataFrame:
    return pd.DataFrame([{"setting": name, "seed": 42 + k, **dict(zip(COLUMNS, row))}
                         for name, rows in seeds.items() for k, row in enumerate(rows)])


def ends() -> pd.DataFrame:
    scores = dict(score_clean_relevant=0.9, score_noisy_relevant=0.25, score_noisy_weak_aligned=0.25,
                  score_noisy_weak_opposite=0.25, shown_noisy_on_irrelevant=0.2, shown_clean_relevant=0.95)
    return pd.DataFrame.from_dict({name: scores for name in SETTINGS}, orient="index")


def drawn(fitted: dict = FITTED) -> dynamics.Draws:
    return dynamics.Draws(pd.DataFrame(
        [{"setting": name, "seed": k, "noisy_fitted": f, "noisy_count": 4, "test_acc": 0.9 + 0.01 * k,
          "test_acc_step0": 0.88, "test_gain": 0.02 + 0.01 * k} for name, counts in fitted.items()
         for k, f in enumerate(counts)]), "final")


def reading(seeds: dict = SEEDS, authors: dict | None = None) -> dict:
    theirs = {"large_signal": {"train_acc": 0.8, "test_acc": 1.0, "train_loss": 0.31, "test_loss": 0.21}}
    return dynamics.Dynamics(SETTINGS, 20, [42, 43], seed_runs(seeds), ends(), drawn(),
                             theirs if authors is None else authors, 2000).metrics()


def test_the_plotted_seed_and_the_range_over_the_seeds():
    m = reading()
    assert m["replicates"] == 2 and m["authors_max_d"] == 2000
    assert m["balanced_test_acc"] == 0.996 and (m["balanced_test_acc_min"], m["balanced_test_acc_max"]) == (0.99, 0.996)
    assert m["large_signal_noisy_fitted"] == 0 and isinstance(m["large_signal_noisy_fitted"], int)
    assert (m["large_signal_noisy_fitted_min"], m["large_signal_noisy_fitted_max"]) == (0.0, 1.0)
    assert m["balanced_fitted_words"] == "4 of 4 (every seed)"
    assert m["large_signal_fitted_words"] == "0 of 4 on the plotted seed (seeds: 0 to 1)"
    assert m["balanced_test_acc_words"] == "0.996 on the plotted seed (seeds: 0.990 to 0.996)"
    assert m["large_noise_test_gain_words"] == "−0.013 on the plotted seed (seeds: −0.013 to −0.010)"
    assert m["large_noise_clean_labels_test_acc_words"] == "0.880 on the plotted seed (seeds: 0.875 to 0.880)"


def test_the_settings_by_the_theorys_orders_and_by_what_they_do():
    m = reading()
    assert m["balanced_n_snr2"] == pytest.approx(4.0)  # 20 · 20² / 2000
    assert m["large_signal_n_snr2"] == pytest.approx(128.0)  # 20 · 80² / 1000
    assert m["large_noise_regime_by_order_words"] == "harmful"  # SNR 5/√4500 ≈ 0.075 below 4500^(−1/4) ≈ 0.122
    assert m["balanced_regime_by_order_words"] == "not overfitting"  # n·SNR² = 4 above 1
    assert m["balanced_observed_words"] == "benign by what they do, as the paper names it"
    assert m["large_noise_observed_words"] == "harmful by what they do, as the paper names it"
    fits_all = {**SEEDS, "large_signal": [(1.0, *SEEDS["large_signal"][0][1:]), SEEDS["large_signal"][1]]}
    assert reading(fits_all)["large_signal_observed_words"] == \
        "benign by what they do, where the paper names it not overfitting"


def test_the_controls_and_what_the_flipped_labels_cost_seed_by_seed():
    m = reading()
    assert m["large_noise_noise_cost"] == 0.013 and m["large_noise_noise_cost_free_seeds"] == 1
    assert m["balanced_noise_cost_free_seeds"] == 2
    at = {**SEEDS, "large_noise": [SEEDS["large_noise"][0][:11] + (0.89 - 0.88,) + SEEDS["large_noise"][0][12:],
                                   SEEDS["large_noise"][1]]}  # a loss of exactly 0.01, computed as 0.010000000000000009
    assert reading(at)["large_noise_noise_cost_free_seeds"] == 2  # is not more than 0.01 (`thresholds.beyond`)
    assert m["large_noise_cost_source"] == (
        "against the same run on clean labels the flipped labels cost +0.013 (seed 42, plotted) and +0.005 (seed 43): "
        "more than 0.01 on 1 of the 2 seeds, where the loss is theirs, and at most 0.01 on the other one, where it is "
        "training's")
    # of the 0.129 between balanced and large noise, 0.116 is the head's own (large noise's step 0 at 0.88)
    assert m["large_noise_head_share_of_gap"] == pytest.approx(0.116 / 0.129)
    level = {**SEEDS, "large_noise": [(1.0, 0.996, *SEEDS["large_noise"][0][2:])] * 2}  # no gap: no share of it
    assert math.isnan(reading(level)["large_noise_head_share_of_gap"])


def test_the_plotted_runs_attention_at_its_end():
    m = reading()
    assert m["balanced_score_clean_relevant"] == 0.9 and m["large_noise_noisy_on_irrelevant"] == 0.25
    assert m["large_signal_shown_noisy_on_irrelevant"] == 0.2 and m["balanced_shown_clean_relevant"] == 0.95


def test_the_authors_rows_only_where_their_script_ran_and_the_comparison():
    m = reading()
    assert m["authors_large_signal_train_loss"] == 0.31 and "authors_balanced_test_acc" not in m
    assert m["comparison_misses_words"] == "every row lies within its tolerance"
    assert not any(key.startswith("authors_") and key != "authors_max_d" for key in reading(authors={}))
    misses = {**SEEDS, "balanced": [(1.0, 0.9, *SEEDS["balanced"][0][2:]), SEEDS["balanced"][1]]}
    assert reading(misses)["comparison_misses_words"].startswith(
        "the row “balanced (d = 2000, ‖μ‖ = 20): test accuracy” misses")


def test_the_draws_against_where_the_paper_puts_each_setting():
    draws = drawn()
    assert draws.histogram("balanced") == [0, 0, 0, 1, 2] and draws.histogram("large_signal") == [2, 1, 0, 0, 0]
    m = draws.metrics()
    assert m["balanced_draws_landed_words"] == "2 of the 3 draws"
    assert m["large_noise_draws_landed_words"] == "all 3 draws"
    assert m["draws_landed_words"] == ("balanced in 2 of the 3 draws, large noise in all 3 draws and large signal in 2 "
                                       "of the 3 draws")
    assert m["draw_seeds"] == "0 to 2" and m["draw_stream"] == "the final main.py's data stream"
    assert m["balanced_draws_test_acc_step0"] == 0.88 and m["balanced_draws"] == 3
    assert m["large_noise_draws_all_fitted_share"] == 1.0
    assert dynamics.Draws(drawn().outcomes, "january").metrics()["draw_stream"] == \
        "the January scripts' data stream"
    assert set(reading()) >= set(m)  # the page's record holds every draw's key
    with pytest.raises(KeyError):
        dynamics.Draws(drawn().outcomes, "jan").metrics()  # a misspelt stream fails, never reads as nothing


def test_a_misspelt_column_fails_instead_of_reading_as_nan():
    with pytest.raises((KeyError, AttributeError)):
        dynamics.Dynamics(SETTINGS, 20, [42, 43], seed_runs().drop(columns="noise_cost"), ends(), drawn(), {},
                          2000).metrics()


def test_the_tables_read_off_a_small_simulation():
    settings = {"balanced": (40, 6.0), "large_signal": (30, 12.0)}
    seeds = [3, 4]
    common = dict(n=10, n_test=50, T=8, rho=0.1)
    runs = [data.make_run(d, mu, seed=s, noise_ratio=0.2, label=name if s == 3 else f"{name}_seed{s}", **common)
            for s in seeds for name, (d, mu) in settings.items()]
    clean = [data.make_run(d, mu, seed=s, noise_ratio=0.0, label=f"{name}_seed{s}", **common)
             for s in seeds for name, (d, mu) in settings.items()]
    sim = synthetic.simulate(runs, learning_rate=0.5, num_steps=5, log_every=5, track=list(range(10)),
                             dtype="float64")
    clean_sim = synthetic.simulate(clean, learning_rate=0.5, num_steps=5, log_every=5, track=[0], dtype="float64")
    table = dynamics.seed_table(sim, runs, clean_sim, clean, settings, seeds)
    assert table[["setting", "seed"]].values.tolist() == [["balanced", 3], ["balanced", 4], ["large_signal", 3],
                                                          ["large_signal", 4]]
    assert (table.clean_count + table.noisy_count == 10).all() and (table.noisy_count == 2).all()
    assert np.allclose(table.noise_cost, table.clean_labels_test_acc - table.test_acc)
    assert np.allclose(table.test_gain, table.test_acc - table.test_acc_step0)
    assert table.test_acc.tolist() == sim.final.set_index("run").test_acc[
        ["balanced", "balanced_seed4", "large_signal", "large_signal_seed4"]].tolist()
    noisy = runs[0].train.noisy.numpy()
    shown = dynamics.shown_samples(sim.scores, noisy, settings)
    assert all(not noisy[clean_one] and noisy[noisy_one] for clean_one, noisy_one in shown.values())
    ends_ = dynamics.plotted_ends(sim, shown, runs[0].train.token_type)
    assert ends_.index.tolist() == ["balanced", "large_signal"]
    assert ends_.shown_clean_relevant.between(0, 1).all() and ends_.shown_noisy_on_irrelevant.between(0, 1).all()
    shown_table = dynamics.settings_table(sim.final, settings, 10)
    assert shown_table.setting.tolist() == ["balanced", "large_signal"]
    assert shown_table.n_snr2.tolist() == [9.0, 48.0]  # 10 · 6² / 40 and 10 · 12² / 30
