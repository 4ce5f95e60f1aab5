"""Regressions: bugs that reached a page, each pinned by a test that fails on the old code.

- Figure 6 reported attention "shares" of 1.75, 1.87 and 2.38: the plotted sample's final scores were summed over
  every run of the setting (its seed replicates too), not the plotted run (`tables.final_share`).
- The η sweep's seed replicates at the largest η ran the authors' model (W trained from a Kaiming draw, one weak
  token of each kind) instead of the page's: the page's point list had been rebound (`etasweep.replicate_points`).
- No recorded attention share may leave [0, 1] (`records.check_attention_shares`, run by `records.save_metrics`).
"""

import math

import numpy as np
import pandas as pd
import pytest

from benign import data, etasweep, records, sweep, synthetic, tables

# --- Figure 6: the plotted sample's share is read from the plotted run only ----------------------------------------


def two_run_scores(T=8):
    """A scores table of one setting run at two seeds: sample 0 of each run ends with 0.7 (seed 42) and 0.6 (seed
    43) of its row on the irrelevant tokens 3…7; each row sums to one."""
    rows = []
    for run, irrelevant in (("balanced", 0.7), ("balanced_seed43", 0.6)):
        for step in (0, 10):
            row = [1 / T] * T if step == 0 else [(1 - irrelevant) / 3] * 3 + [irrelevant / (T - 3)] * (T - 3)
            rows += [dict(run=run, step=step, sample=0, noisy=True, token=t, score=s) for t, s in enumerate(row)]
    return pd.DataFrame(rows)


def test_final_share_reads_the_named_run_only():
    scores = two_run_scores()
    end = scores[scores.step == 10]
    old = float(end[(end["sample"] == 0) & (end.token >= 3)].score.sum())  # the page's old sum, over both runs
    assert old > 1  # the fixture reproduces the bug: 0.7 + 0.6
    assert tables.final_share(scores, "balanced", 0, range(3, 8)) == pytest.approx(0.7, abs=1e-12)
    assert tables.final_share(scores, "balanced_seed43", 0, range(3, 8)) == pytest.approx(0.6, abs=1e-12)


def test_final_share_of_a_whole_row_is_one_in_a_real_simulation():
    """Two seeds of the token-selection model side by side: every tracked row's final share over all tokens is one
    (a softmax row), for each run separately."""
    runs = [data.make_run(40, 5.0, seed=s, n=6, n_test=10, noise_ratio=0.34, label=f"r{s}") for s in (0, 1)]
    sim = synthetic.simulate(runs, learning_rate=0.5, num_steps=20, log_every=10, track=[0, 1], dtype="float64",
                             device="cpu")
    for run in ("r0", "r1"):
        for sample in (0, 1):
            assert tables.final_share(sim.scores, run, sample, range(8)) == pytest.approx(1.0, abs=1e-12)


def test_final_share_of_an_untracked_sample_raises():
    with pytest.raises(ValueError, match="sample 5"):
        tables.final_share(two_run_scores(), "balanced", 5, [0])


# --- η sweep: the replicates at the largest η are the page's own model ---------------------------------------------

PAGE = dict(seed=0, d=300, signal_norm=20.0, n=20, n_test=50, T=8, n_relevant=2, n_weak=2, rho=0.1,
            learning_rate=0.005, num_steps=30, train_W=False, W_init="identity", label_noise="deterministic",
            authors_test_seed=False, dtype="float64", device="cpu")  # the page's parameters (p alone, W = I)


def page_points():
    return sweep.grid_points(synthetic.GRID_DEFAULTS, PAGE, noise_ratio=[0.6, 0.9])


def model(point):
    """Every setting a point gives the fast trainer, its defaults filled in, but the seed."""
    return {k: v for k, v in {**synthetic.GRID_DEFAULTS, **point}.items() if k != "seed"}


def test_replicates_are_the_page_model_at_every_seed():
    top = page_points()[-1]
    replicates = etasweep.replicate_points(page_points(), [0, 1, 2], 0.9)
    assert [p["seed"] for p in replicates] == [0, 1, 2]
    assert all(model(p) == model(top) for p in replicates)
    # the old code drew them from the authors' points: to the fast trainer that is another model
    authors_top = [p for p in etasweep.authors_points(page_points()) if p["noise_ratio"] == 0.9]
    old = [dict(p, seed=s) for s in (0, 1, 2) for p in authors_top]
    assert all(model(p) != model(top) for p in old)
    assert {(model(p)["W_init"], model(p)["train_W"], model(p)["n_weak"]) for p in old} == {("kaiming", True, 1)}


def test_replicate_at_the_page_seed_is_the_page_run():
    """Run through the fast trainer, the replicate at the page's seed gives the page's own run at that η (chunks of
    other sizes: agreement to rounding, in float64)."""
    page = pd.DataFrame(synthetic.grid_chunk(page_points())).set_index("noise_ratio")
    again = pd.DataFrame(synthetic.grid_chunk(etasweep.replicate_points(page_points(), [0], 0.9)))
    for column in ("frak_clean", "frak_noisy", "train_loss", "test_loss"):
        assert again[column].iloc[0] == pytest.approx(page.loc[0.9, column], rel=1e-9)


def test_authors_points_only_in_their_setting():
    assert all(set(p) <= set(etasweep.AUTHORS_SETTINGS) for p in etasweep.authors_points(page_points()))
    with pytest.raises(ValueError, match="p alone"):
        etasweep.authors_points([dict(p, train_W=True) for p in page_points()])


# --- η sweep: where the Eq. 9 ratio collapses ----------------------------------------------------------------------


def test_same_run_at_n20_only():
    """The authors' deterministic noise flips 6 per class at both η = 0.6 and 0.65 when n = 20 (k = 12, 13)."""
    assert etasweep.same_run(20, 0.6, 0.65)
    assert int(data.noise_mask(20, 0.65).sum()) == 12
    assert not etasweep.same_run(50, 0.6, 0.65)
    assert not etasweep.same_run(20, 0.65, 0.7)


def test_ratio_above_one_up_to():
    eta = [0.0, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75]
    assert etasweep.ratio_above_one_up_to(eta, [math.inf, 3, 2, 1.2, 0.78, 0.5, 2.0]) == 0.6  # stays, not returns
    assert etasweep.ratio_above_one_up_to(eta[::-1], [2.0, 0.5, 0.78, 1.2, 2, 3, math.inf]) == 0.6  # any order
    assert etasweep.ratio_above_one_up_to(eta, [2] * 7) == 0.75
    assert math.isnan(etasweep.ratio_above_one_up_to(eta, [0.9] * 7))
    assert etasweep.ratio_above_one_up_to(eta, [2, 2, np.nan, 2, 2, 2, 2]) == 0.5  # a missing ratio is not above one


def paper_like(ratio_06=1.4, ratio_065=0.78, test_06=0.986, test_065=0.579):
    return pd.DataFrame({"noise_ratio": [0.5, 0.55, 0.6, 0.65, 0.7, 0.75],
                         "frak_ratio": [3.0, 2.0, ratio_06, ratio_065, 0.50, 0.4],
                         "test_acc": [0.99, 0.99, test_06, test_065, 0.505, 0.5]})


def test_collapse_as_the_paper():
    c = etasweep.collapse(paper_like(), n=500)
    assert c["as_paper"] and c["ratio_as_paper"] and not c["same_run"] and c["up_to"] == 0.6
    assert (c["ratio_0.65"], c["test_acc_0.65"], c["ratio_0.70"], c["test_acc_0.70"]) == (0.78, 0.579, 0.5, 0.505)
    assert etasweep.collapse(paper_like(), n=20)["same_run"]


def test_the_collapse_counts_within_one_grid_step_of_the_papers_edge_and_no_further():
    later = etasweep.collapse(paper_like(ratio_065=1.4), n=500)  # edge 0.65: one step late, below one at 0.7
    assert later["up_to"] == 0.65 and later["as_paper"]
    earlier = etasweep.collapse(paper_like(ratio_06=0.9, test_06=0.7), n=500)  # edge 0.55, below one from 0.6 on
    assert earlier["up_to"] == 0.55 and earlier["as_paper"]
    too_early = paper_like(ratio_06=0.9, test_06=0.7).assign(frak_ratio=[3.0, 0.9, 0.9, 0.78, 0.5, 0.4])  # edge 0.5
    assert not etasweep.collapse(too_early, n=500)["ratio_as_paper"]
    too_late = paper_like(ratio_065=1.4).assign(frak_ratio=[3.0, 2.0, 1.4, 1.3, 1.2, 0.4])  # edge 0.7
    assert not etasweep.collapse(too_late, n=500)["ratio_as_paper"]
    back_above = paper_like(ratio_065=0.9).assign(frak_ratio=[3.0, 2.0, 1.4, 0.9, 1.1, 0.4])  # not below one at 0.7
    assert not etasweep.collapse(back_above, n=500)["ratio_as_paper"]


def test_the_test_accuracy_must_fall_where_the_paper_reports_its_collapse():
    held = etasweep.collapse(paper_like(test_065=0.95), n=500)  # the ratio collapses, the test accuracy holds at 0.65
    assert held["ratio_as_paper"] and not held["as_paper"] and held["test_acc_fallen_max"] == 0.95
    # the book's n = 500: the ratio below one from 0.6 on (edge 0.55), the test accuracy 0.976 there, falling at 0.65
    early = etasweep.collapse(paper_like(ratio_06=0.9, test_06=0.976, test_065=0.72), n=500)
    assert early["as_paper"] and early["test_acc_fallen_max"] == 0.72
    late = etasweep.collapse(paper_like().assign(test_acc=[0.99, 0.99, 0.986, 0.579, 0.8, 0.5]), n=500)
    assert late["ratio_as_paper"] and not late["as_paper"]  # back above 0.75 at η = 0.7


def test_collapse_sentence():
    hit = {"as_paper": True, "ratio_as_paper": True, "up_to": 0.6}
    miss = {"as_paper": False, "ratio_as_paper": False, "up_to": 0.85}
    sentence = etasweep.collapse_sentence({"this page's trainer": {20: miss, 500: hit, 1000: miss},
                                           "the authors' script": {20: miss}, "nobody": {}})
    assert sentence == ("this page's trainer reproduces it at n = 500 (of n = 20, 500 and 1,000); "
                        "the authors' script does not reproduce it at n = 20, the only n it ran.")
    misses = {20: miss, 200: dict(miss, up_to=0.75), 500: dict(miss, up_to=0.45)}
    assert etasweep.collapse_sentence({"ours": misses}) == (  # each n's edge, and no word of an n not run
        "ours reproduces it at none of n = 20, 200 and 500: its ratio stays above one up to η = 0.85 at n = 20, 0.75 "
        "at n = 200 and 0.45 at n = 500.")
    ratio_only = {**misses, 300: dict(miss, up_to=0.6, ratio_as_paper=True)}
    assert etasweep.collapse_sentence({"ours": ratio_only}) == (
        "ours reproduces the ratio's collapse at n = 300 but not the fall of the test accuracy (of n = 20, 200, 300 "
        "and 500).")


def test_unstated_n_said():
    hit = {"as_paper": True}
    miss = {"as_paper": False}
    assert etasweep.unstated_n_said({20: miss, 200: hit}) == (
        "The sweep over n above reproduces the paper's collapse at n = 200, so the unstated n can account for the "
        "table's misses.")
    assert etasweep.unstated_n_said({20: miss, 50: miss, 500: miss}) == (
        "None of the n run here accounts for the table's misses: the sweep over n above reproduces the paper's "
        "collapse at none of n = 20, 50 and 500.")


def test_the_eta_table_says_where_no_label_is_flipped_and_a_floor_of_one_is_one():
    assert etasweep.ratio_cells([float("inf"), 2.4871, 1.37]) == [etasweep.NO_FLIP, "2.487", "1.370"]
    assert (etasweep.digits(0.85, ".2f"), etasweep.digits(float("nan"))) == ("0.85", "—")
    assert etasweep.at_least_words([1.0, 1.0]) == "1.000"
    assert etasweep.at_least_words([0.986, 1.0]) == "at least 0.986"
    assert etasweep.at_least_words([0.9996]) == "1.000"  # reads as one: said as one


# --- records: no attention share outside [0, 1] -------------------------------------------------------------------


@pytest.mark.parametrize("key", ["balanced_shown_noisy_on_irrelevant", "harmful_attention_clean_relevant",
                                 "authors_balanced_attention_noisy_relevant", "large_noise_score_clean_relevant",
                                 "benign_steps_clean_signal_attention", "text_max_attention_last_mean",
                                 "balanced_test_attention_relevant_min", "large_noise_noisy_on_irrelevant",
                                 "benign_test_on_relevant"])
def test_attention_share_keys(key):
    assert records.is_attention_share(key)


@pytest.mark.parametrize("key", ["noise_ratio_0.65_frak_ratio", "balanced_test_acc", "x_attention_select_step",
                                 "trainer_wall_s", "eta_ratio_above_1_up_to_n20", "scored",
                                 "ours_on_their_cells_eq10_min_ratio", "ours_on_their_cells", "num_attention_heads"])
def test_not_attention_share_keys(key):
    assert not records.is_attention_share(key)


def test_save_metrics_refuses_a_share_above_one(tmp_path):
    with pytest.raises(ValueError, match=r"'balanced_shown_noisy_on_irrelevant' = 1\.75 .* \[0, 1\]"):
        records.save_metrics(tmp_path, "nb", {"balanced_shown_noisy_on_irrelevant": 1.75}, {})
    with pytest.raises(ValueError, match="harmful_attention_clean_relevant"):
        records.save_metrics(tmp_path, "nb", {"harmful_attention_clean_relevant": np.float32(-0.2)}, {})
    with pytest.raises(ValueError, match="must be a number"):
        records.save_metrics(tmp_path, "nb", {"balanced_shown_clean_relevant": "high"}, {})
    assert not (tmp_path / "metrics.json").exists()


def test_save_metrics_keeps_good_shares(tmp_path):
    good = {"balanced_shown_noisy_on_irrelevant": 0.42, "harmful_attention_noisy_relevant": math.nan,
            "not_overfitting_attention_noisy_relevant": None, "balanced_score_clean_relevant": 1.0 + 1e-7,
            "noisy_on_irrelevant": 0.0, "noise_ratio_0.65_frak_ratio": 1.43, "trainer_wall_s": 12.5}
    record = records.save_metrics(tmp_path, "nb", good, {})
    assert record["balanced_shown_noisy_on_irrelevant"] == 0.42 and record["harmful_attention_noisy_relevant"] is None
    assert (tmp_path / "metrics.json").exists()


def test_conditions_heatmap_words():
    from benign import conditions

    table = pd.DataFrame({"d": [250, 750, 1000], "signal_norm": [5.0, 85.0, 100.0], "r": [0.9, 0.19, 1.4]})
    assert conditions.smallest_cell(table, "r") == "(d, ‖μ‖) = (750, 85)"
    assert conditions.bar_words(0.19, 1.43, (0.5, 2.5)) == ("reaches below its lower end 0.5 and stays short of its "
                                                          "upper end 2.5")
    assert conditions.bar_words(0.6, 3.0, (0.5, 2.5)) == ("stays above its lower end 0.5 and reaches above its upper "
                                                        "end 2.5")
