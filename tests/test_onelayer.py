"""Figures 6 and 7's readings and sentences (`benign.onelayer`) on hand-built numbers: a costless run near chance is
not benign, the claim's verdict follows how the attention moved, and numbers that read the same are said once."""

import numpy as np
import pandas as pd

from benign import onelayer, words


def test_a_run_near_chance_is_neither_benign_nor_harmful_unless_its_test_set_resolves_the_cost():
    # the book build's harmful seeds: at chance with and without the flipped labels; one pays 0.018, inside the
    # sampling noise of two runs near chance on 1000 test samples (onelayer.CHANCE_GAP)
    reading = onelayer.seed_reading([1.0] * 7, [0.52, 0.503, 0.524, 0.97, 0.99, 0.55, 0.60],
                                    [0.518, 0.499, 0.542, 0.975, 0.99, 0.62, 0.99])
    assert reading.tolist() == ["near_chance", "near_chance", "near_chance", "benign", "benign", "harmful",
                                "harmful"]
    assert onelayer.seed_reading([0.95], [0.99], [0.99]).tolist() == ["not_overfitting"]
    assert onelayer.resolved_cost([0.524, 0.93, 0.55], [0.542, 0.945, 0.62]).tolist() == [False, True, True]
    assert onelayer.readings_words(reading[:4]) == "3 of the 4 seeds near chance and 1 of the 4 seeds benign"
    assert onelayer.readings_words(["harmful"] * 3) == "all 3 seeds harmful"


def costs(clean, noisy) -> pd.DataFrame:
    return pd.DataFrame({"clean_test_acc": clean, "test_acc": noisy})


def test_cost_words_name_whose_loss_it_is():
    assert onelayer.cost_words(costs([0.99, 0.98, 0.99], [0.90, 0.91, 0.99]), 0.95) == (
        "the flipped labels cost more than 0.01 of test accuracy on 2 of the 3 seeds: the loss is theirs")
    assert onelayer.cost_words(costs([0.90, 0.92, 0.91], [0.90, 0.915, 0.91]), 0.95) == (
        "the flipped labels cost more than 0.01 of test accuracy on none of the 3 seeds: the clean-label runs "
        "end below 0.95 too, so the low accuracy is the encoder's own at this signal, not theirs")
    assert onelayer.cost_words(costs([0.80, 0.85], [0.70, 0.72]), 0.95) == (
        "the flipped labels cost more than 0.01 of test accuracy on both seeds: part of the loss is theirs, and the "
        "clean-label runs end below 0.95 too, so the rest is the encoder's own at this signal")
    assert onelayer.cost_words(costs([0.99], [0.985]), 0.95) == (
        "the flipped labels cost more than 0.01 of test accuracy on no seed")
    # the book build's harmful setting: one seed pays 0.018, but every clean-label run is near chance too, where
    # a gap that small is sampling
    near_chance = ("the clean-label runs end near chance too (below 0.75 on every seed), where two runs differ by up "
                   "to 0.05 by sampling alone: the flipped labels cost more than that on none of the 3 seeds, and at "
                   "this signal the encoder generalizes nothing, with or without them")
    assert onelayer.cost_words(costs([0.518, 0.499, 0.542], [0.52, 0.503, 0.524]), 0.95) == near_chance
    assert onelayer.cost_words(costs([0.70, 0.50], [0.60, 0.50]), 0.95) == near_chance.replace("none of the 3 seeds", "1 of the 2 seeds")


def scores_table(run: str, clean: dict, noisy: dict) -> pd.DataFrame:
    """A scores table of one run: per sample, its relevant-token attention at steps 0 and 10 (sample → (start,
    end)), and a second token holding the rest."""
    rows = []
    for is_noisy, samples in ((False, clean), (True, noisy)):
        for sample, ends in samples.items():
            for step, score in zip((0, 10), ends):
                rows += [(run, step, sample, is_noisy, 0, score), (run, step, sample, is_noisy, 1, 1 - score)]
    return pd.DataFrame(rows, columns=["run", "step", "sample", "noisy", "token", "score"])


def test_the_attention_shift_is_the_mean_change_with_its_standard_error():
    scores = scores_table("a", {0: (0.1, 0.2), 1: (0.1, 0.4), 2: (0.1, 0.05)}, {3: (0.2, 0.1)})
    shift = onelayer.attention_shift(scores, "a", False)
    assert np.isclose(shift["start"], 0.1) and np.isclose(shift["end"], 0.65 / 3)
    assert np.isclose(shift["se"], np.std([0.1, 0.3, -0.05], ddof=1) / np.sqrt(3))
    assert (shift["rising"], shift["count"]) == (2, 3)
    assert np.isnan(onelayer.attention_shift(scores, "a", True)["se"])  # one noisy sample


def run(test, clean, noisy, reading="benign", cost=0.004):
    keys = ("start", "end", "se", "rising", "count")
    return {"reading": reading, "test_acc": test, "cost": cost, "clean": dict(zip(keys, clean)),
            "noisy": dict(zip(keys, noisy))}


def test_the_claim_verdict_follows_how_attention_moved_where_a_run_overfits_benignly():
    # the clean-label reading decides which runs count, not the 0.95 test threshold: the not-overfitting run's test
    # accuracy 0.963 is no benign run where its flipped labels cost it 0.037 against its clean-label twin
    runs = {"balanced": run(0.928, (0.11, 0.35, 0.03, 10, 16), (0.11, 0.08, 0.02, 2, 4), cost=0.003),
            "not_overfitting": run(0.963, (0.09, 0.25, 0.05, 8, 16), (0.10, 0.12, 0.05, 2, 4), "harmful", 0.037)}
    said = words.plain(onelayer.claim_words(runs))
    assert said.startswith(
        "On the plotted seed only the balanced setting's run overfits benignly by the clean-label reading the verdict "
        "uses (test accuracy 0.928, −0.003 against the same run on clean labels). There the mean attention of clean "
        "samples on their relevant token rises (0.11 at step 0, 0.35 at the end), 10 of the 16 samples rising, and "
        "the mean attention of noisy samples on their relevant token")
    assert "stays at or below 0.5, the level at which the book counts a token as selected" in said
    assert 'data-value="0.24' in onelayer.claim_words(runs)  # the word carries the change it comes from
    runs["balanced"] = run(0.928, (0.09, 0.25, 0.05, 8, 16), (0.10, 0.12, 0.05, 2, 4))
    assert words.plain(onelayer.claim_words(runs)).endswith(
        "The claim's picture is not seen in this build: neither do most clean samples move towards the relevant "
        "token nor most noisy samples away from it.")
    runs["balanced"] = run(0.928, (0.09, 0.25, 0.05, 12, 16), (0.10, 0.12, 0.05, 2, 4))
    assert words.plain(onelayer.claim_words(runs)).endswith(
        "seen only in part: noisy samples' attention does not leave the relevant token.")
    runs["balanced"] = run(0.928, (0.11, 0.7, 0.03, 16, 16), (0.11, 0.02, 0.02, 0, 4))
    said = words.plain(onelayer.claim_words(runs))
    assert said.endswith("The claim's picture is seen here.") and "selected" not in said
    runs["not_overfitting"]["reading"] = "benign"
    said = words.plain(onelayer.claim_words(runs))
    assert said.startswith("On the plotted seed the runs of the balanced and not overfitting settings overfit benignly "
                           "by the clean-label reading the verdict uses. In the balanced setting (test accuracy 0.928, "
                           "−0.004 against the same run on clean labels) the mean")
    assert said.endswith("seen only in part: not every benign run shows both moves.")
    assert words.plain(onelayer.claim_words({"harmful": run(0.6, (0, 0, 0, 0, 1), (0, 0, 0, 0, 1), "harmful")})) == (
        "On the plotted seed no setting's run overfits benignly by the clean-label reading the verdict uses, so the "
        "claim's condition never arises and its picture is not seen.")


def test_numbers_that_read_the_same_are_said_once():
    assert onelayer.per_setting({"balanced": 0.5, "harmful": 0.5, "not_overfitting": 0.5}, ".3f") == (
        "0.500 in every setting")
    assert onelayer.per_setting({"balanced": 0.5, "not_overfitting": 0.52}, ".3f") == (
        "0.500 (balanced) and 0.520 (not overfitting)")
    assert onelayer.value_span([1.0, 1.0, 1.0]) == "1.000"
    assert onelayer.value_span([0.928, 0.711, 0.923]) == "0.711 to 0.928"
    assert onelayer.fitted_words({"balanced": 1.0, "harmful": 1.0}) == (
        "Every setting's plotted run ends with every training label fitted (train accuracy 1.000).")
    assert onelayer.fitted_words({"balanced": 1.0, "harmful": 0.95}) == (
        "The plotted runs end at train accuracy 1.000 (balanced) and 0.950 (harmful): only the balanced setting's run "
        "fits every training label.")
    assert onelayer.fitted_words({"balanced": 0.55, "harmful": 0.7}) == (
        "No setting's plotted run fits every training label: train accuracy 0.550 (balanced) and 0.700 (harmful).")


def test_the_authors_losses_and_ours_against_the_paper_colour_range_in_one_clause():
    assert onelayer.against(0.002, 0.016, (0.405, 0.55)) == "below"
    assert onelayer.against(0.017, 1.43, (0.41, 0.64)) == "partly inside"
    assert onelayer.ranges_words("below", "below", "train") == (
        "like ours, its train losses lie below the paper's train-loss colour range")
    assert onelayer.ranges_words("within", "below", "train") == (
        "its train losses lie below the paper's train-loss colour range, ours within it")


def test_whether_the_settings_land_as_named_is_said_as_the_ledger_judges_it():
    assert onelayer.landed_words({"balanced": 0.0, "harmful": 1 / 3, "not_overfitting": 0.0}) == (
        "No setting lands in the regime it is named after on most of its seeds.")
    assert onelayer.landed_words({"balanced": 2 / 3, "harmful": 1 / 3}) == (
        "Only the balanced setting lands in the regime it is named after on most of its seeds.")
    assert onelayer.landed_words({"balanced": 1.0, "harmful": 1.0}) == (
        "Every setting lands in the regime it is named after on every seed.")


def test_a_table_gives_its_numbers_to_the_digits_of_its_prose():
    frame = pd.DataFrame({"test_acc": [0.52, 1.0], "d": [200, 500], "regime": ["not_overfitting", "harmful"]})
    shown = onelayer.formatted(frame, {"test_acc": ".3f", "regime": words.reader_name})
    assert shown.to_dict("list") == {"test_acc": ["0.520", "1.000"], "d": [200, 500],
                                     "regime": ["not overfitting", "harmful"]}
    assert frame.test_acc.tolist() == [0.52, 1.0]  # the frame itself untouched


def test_a_map_marks_the_settings_on_its_grid_and_says_where_the_others_lie():
    settings = {"balanced": (200, 11.246826503806983), "harmful": (500, 2.811706625951745),
                "not_overfitting": (100, 56.23413251903491)}
    d, mu = [50, 125, 500], [2.811706625951745, 53.42242589308317]
    assert list(onelayer.on_grid(settings, d, mu)) == ["balanced", "harmful"]
    assert onelayer.marked_words(settings, d, mu) == (
        "balanced (d = 200, ‖μ‖ = 11.2) and harmful (d = 500, ‖μ‖ = 2.81); not overfitting (d = 100, ‖μ‖ = 56.2) "
        "lies above the grid's largest ‖μ‖, 53.4, and has no star")
    assert onelayer.marked_words({"harmful": (600, 1.0)}, d, mu) == (
        "none of them; harmful (d = 600, ‖μ‖ = 1) lies above the grid's largest d, 500 and below the grid's smallest "
        "‖μ‖, 2.81, and has no star")
    assert onelayer.grid_words(d, mu) == "d = 50 to 500 and ‖μ‖ = 2.81 to 53.4, 3 × 2 cells"


def test_the_threshold_s_harmful_cells_are_said_against_their_clean_label_runs():
    assert onelayer.clean_below_words(25, 12, 0.95) == "12 of which have a clean-label run below 0.95 too"
    assert onelayer.clean_below_words(25, 1, 0.95) == "1 of which has a clean-label run below 0.95 too"
    assert onelayer.clean_below_words(25, 25, 0.95) == "all of which have a clean-label run below 0.95 too"
    assert onelayer.clean_below_words(25, 0, 0.95) == "none of which has a clean-label run below 0.95"
    assert onelayer.clean_below_words(1, 1, 0.95) == "and its clean-label run scores below 0.95 too"
    assert onelayer.clean_below_words(1, 0, 0.95) == "and its clean-label run scores at least 0.95"
    assert onelayer.clean_below_words(0, 0, 0.95) == "so no cell is set against its clean-label run"


def test_figure_7s_map_reads_a_known_grid():
    # a 2 × 2 grid as the sweep returns it (every cell at η = 0.2 and on clean labels, rows in any order):
    # (50, 2.8) near chance both ways, (50, 28) benign, (500, 2.8) harmful by 0.37, (500, 28) leaves labels unfitted
    cell = pd.DataFrame({"d": [50, 50, 500, 500], "signal_norm": [2.8, 28.0, 2.8, 28.0]})
    noisy = cell.assign(noise_ratio=0.2, train_acc=[1.0, 1.0, 1.0, 0.9], test_acc=[0.51, 0.99, 0.6, 0.97],
                        train_loss=[0.50, 0.45, 0.44, 0.52], test_loss=[0.70, 0.42, 0.66, 0.43])
    clean = cell.assign(noise_ratio=0.0, train_acc=1.0, test_acc=[0.52, 0.99, 0.97, 0.98], train_loss=0.4,
                        test_loss=0.4)
    cells = onelayer.against_clean_runs(pd.concat([clean[::-1], noisy]), 0.2, 0.95)
    assert cells.noise_cost.round(3).tolist() == [0.01, 0.0, 0.37, 0.01]
    assert cells.regime_trained.tolist() == ["near_chance", "benign", "harmful", "not_overfitting"]
    named = {"balanced": (50, 28.0), "harmful": (500, 2.8), "not_overfitting": (999, 1.0)}  # the last off the grid
    m = onelayer.EncoderMap(cells, [50, 500], [2.8, 28.0], named, 0.95).metrics()
    assert (m["share_harmful"], m["share_benign"], m["share_not_overfitting"]) == (0.5, 0.25, 0.25)  # paper's rule
    assert (m["share_harmful_trained"], m["share_near_chance_trained"]) == (0.25, 0.25)
    assert m["harmful_clean_below_share"] == 0.5  # (50, 2.8) scores 0.52 on clean labels too; (500, 2.8) 0.97
    assert m["noise_cost_max"] == 0.37 and m["test_loss_max_cell"] == "d = 50, ‖μ‖ = 2.8"
    assert m["test_loss_slope_log_signal_norm"] < 0 and m["share_test_loss_in_paper_limits"] == 0.5
    assert m["balanced_as_named"] == 1.0 and m["harmful_as_named"] == 1.0 and "not_overfitting_as_named" not in m
    assert m["share_harmful_words"] == "50%" and m["harmful_by_rule_words"] == "2 of the 4 cells"
