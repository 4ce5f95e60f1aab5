"""Outcomes over many draws (`benign.draws`): each draw is the authors' own draw, the fast trainer's table agrees with
the authors' script run on the same draws, Figure 1's table with the authors' construction on the same data, and the
headline numbers and words say what the table holds."""

import pandas as pd
import pytest
import torch

from benign import authors, data, draws, synthetic, theory
from benign.checks import ParameterError
from benign.device import cpu_threads

SMALL = dict(n=20, n_test=200, T=8, rho=0.1, noise_ratio=0.2, learning_rate=0.3, num_steps=200)
# a setting where the draws differ: at d = 40, ‖μ‖ = 3 and this step size some draws fit some of the noisy labels
SETTING = {"small": (40, 3.0)}
SEEDS = [3, 4, 5]
# float32 against float32 by another algorithm (autograd through (XW)p): the scores agree to a few float32 units
# (tests/test_authors.py measured up to 4.8e-7 after 1000 steps), so a count may differ only by samples whose margin
# lies within this of zero
ROUNDING = 1e-5


def test_a_draw_is_the_authors_main_py_draw_at_its_seed():
    run = draws.authors_run(30, 2.0, seed=7, n=10)
    theirs = authors.main(30, 2.0, n=10, seed=7, num_steps=1, evaluate_test=False)
    assert torch.equal(run.train.X, theirs["train"]["X"]) and torch.equal(run.train.y, theirs["train"]["y"])
    assert torch.equal(run.W0, theirs["W0"])  # their W₀, drawn right after torch.manual_seed(7)
    assert torch.equal(run.train.noisy, data.noise_mask(10, 0.2))


def test_the_test_set_is_a_stream_no_training_set_uses():
    test = draws.authors_test(30, 2.0, seed=7, n_test=40)
    assert not test.noisy.any() and torch.equal(test.y, data.balanced_labels(40).float())
    for seed in (7, 8):
        assert not torch.isclose(test.X[:, None], authors.dataset(20, 30, 2.0, seed=seed)["X"][None]).all(-1).any()


def near_zero(model, arrays: dict) -> int:
    """How many samples of a set the authors' trained model scores within ROUNDING of the decision boundary."""
    with torch.no_grad():
        return int((model(arrays["X"]).abs() < ROUNDING).sum())


def test_fast_outcomes_agree_with_the_authors_script_on_the_same_draws():
    with cpu_threads(1):
        ours = draws.dynamics_outcomes(SETTING, SEEDS, dtype="float32", device="cpu", **SMALL).set_index("seed")
    d, mu = SETTING["small"]
    test = draws.authors_test(d, mu, seed=SEEDS[0], n_test=SMALL["n_test"])
    their_test = {"X": test.X, "y": test.y, "y_clean": test.y_clean, "noisy": test.noisy}
    head_alone = float(((test.X.mean(1) @ authors.linear_head(d, mu)[:, 0]) * test.y > 0).double().mean())
    assert ours.noisy_fitted.nunique() > 1  # the draws differ: a single draw would not tell
    for seed in SEEDS:
        with cpu_threads(1):
            run = authors.main(d, mu, seed=seed, test=their_test, log_interval=SMALL["num_steps"],
                               **{k: v for k, v in SMALL.items() if k != "n_test"})
        train, model, row = run["train"], run["model"], ours.loc[seed]
        with torch.no_grad():
            fits = model(train["X"]) * train["y"] > 0
        slack = near_zero(model, train)
        assert abs(row.noisy_fitted - int(fits[train["noisy"]].sum())) <= slack
        assert abs(row.clean_fitted - int(fits[~train["noisy"]].sum())) <= slack
        assert abs(row.train_acc - run["final"]["train_accuracy"]) <= slack / SMALL["n"]
        assert abs(row.test_acc - run["final"]["test_accuracy"]) <= near_zero(model, their_test) / SMALL["n_test"]
        assert row.test_acc_step0 == pytest.approx(head_alone, abs=1e-12)  # p = 0: the head alone
        assert row.test_gain == pytest.approx(row.test_acc - head_alone, abs=1e-12)


def test_handbuilt_outcomes_agree_with_the_authors_figure1_on_the_same_data():
    columns = {"harmful": 1.0, "benign": 0.06, "not_overfitting": 0.001}
    table = draws.handbuilt_outcomes(columns, [0, 1], d=400, n=40, n_test=40).set_index(["seed", "column"])
    for seed in (0, 1):
        train, test = data.make_train_test(40, 400, 20.0, n_test=40, seed=seed, rho=0.2, noise_ratio=0.2)
        arrays = {split: {"X": s.X, "y": s.y, "y_clean": s.y_clean, "noisy": s.noisy}
                  for split, s in (("train", train), ("test", test))}
        for name, c in columns.items():
            theirs = authors.figure1(c, d=400, signal_norm=20.0, rho=0.2, **arrays)  # float64, as our data
            row = table.loc[(seed, name)]
            # float64 against float64 summed in another order: a count may differ only by margins within 1e-8 of 0
            margins = {split: theirs[split]["f"] * arrays[split]["y"] for split in arrays}
            slack = {split: int((m.abs() < 1e-8).sum()) for split, m in margins.items()}
            fits = margins["train"] > 0
            assert abs(row.noisy_fitted - int(fits[train.noisy].sum())) <= slack["train"]
            assert abs(row.clean_fitted - int(fits[~train.noisy].sum())) <= slack["train"]
            assert abs(row.train_acc - theirs["train"]["accuracy"]) <= slack["train"] / 40
            assert abs(row.test_acc - theirs["test"]["accuracy"]) <= slack["test"] / 40
    by_column = table.groupby(level="column").noisy_fitted
    assert by_column.min()["harmful"] > 0 and by_column.max()["not_overfitting"] == 0  # the columns differ


def test_the_first_draw_is_the_page_s_own_query():
    columns = {"benign": 0.06}
    row = draws.handbuilt_outcomes(columns, [3], d=300, n=20, n_test=20).iloc[0]
    train, test = data.make_train_test(20, 300, 20.0, n_test=20, seed=3, rho=0.2, noise_ratio=0.2)
    p = synthetic.handbuilt_p(train, 0.06)
    assert (row.train_acc, row.test_acc) == (synthetic.attend(train, p)["acc"], synthetic.attend(test, p)["acc"])


TABLE = pd.DataFrame({"setting": ["a"] * 4 + ["b"] * 2, "noisy_fitted": [0, 4, 4, 3, 0, 0],
                      "noisy_count": [4] * 6, "test_acc": [0.9, 0.8, 1.0, 0.7, 1.0, 1.0]})


def test_spread_counts_the_draws_that_fit_none_and_all():
    out = draws.spread(TABLE, "setting", ["test_acc"])
    assert out["a_draws"] == 4 and out["b_draws"] == 2
    assert (out["a_draws_none_fitted_share"], out["a_draws_all_fitted_share"]) == (0.25, 0.5)
    assert (out["b_draws_none_fitted_share"], out["b_draws_all_fitted_share"]) == (1.0, 0.0)
    assert (out["a_draws_test_acc_min"], out["a_draws_test_acc_median"], out["a_draws_test_acc_max"]) == \
        pytest.approx((0.7, 0.85, 1.0))


def test_fitted_words_read_as_counts():
    words = draws.fitted_words(TABLE, "setting")
    assert words["a_draws_fitted_words"] == ("1 of the 4 draws leaves every noisy label unfitted, 2 of the 4 draws "
                                             "fit all 4 and 1 of the 4 draws fits some but not all (3 of the 4 in "
                                             "it)")  # each number said once
    assert words["b_draws_fitted_words"] == "both draws leave every noisy label unfitted and neither draw fits all 4"
    spread = pd.DataFrame({"setting": "c", "noisy_fitted": [19, 19, 18, 20], "noisy_count": 20})
    assert draws.fitted_words(spread, "setting")["c_draws_fitted_words"] == (
        "none of the 4 draws leave every noisy label unfitted, 1 of the 4 draws fits all 20 and 3 of the 4 draws fit "
        "some but not all (18 in 1 draw and 19 in 2 draws)")


def test_no_draw_is_one_clear_error():
    with pytest.raises(ParameterError, match=r"^seeds = \[\] is not allowed: give at least one draw, each seed once$"):
        draws.handbuilt_outcomes({"benign": 0.06}, [], d=30)
    with pytest.raises(ParameterError, match="each seed once"):
        draws.dynamics_outcomes(SETTING, [1, 1])


def test_gain_words_name_only_the_cases_that_occur():
    table = pd.DataFrame({"setting": ["a"] * 3 + ["b"] * 2, "test_gain": [-0.02, -0.01, 0.0, 0.0, 0.0]})
    words = draws.gain_words(table, "setting")
    assert words == {"a_draws_gain_words": "2 of the 3 draws end below it and 1 of the 3 draws ends level with it",
                     "b_draws_gain_words": "both draws end level with it"}


def test_spread_words_say_one_number_where_every_draw_gives_it():
    table = pd.DataFrame({"setting": ["a"] * 3 + ["b"] * 2, "test_acc": [0.47, 0.6, 0.72, 1.0, 1.0]})
    words = draws.spread_words(table, "setting", "test_acc", ".2f")
    assert words == {"a_draws_test_acc_span": "0.47 to 0.72", "a_draws_test_acc_median_words": "0.60 (0.47 to 0.72)",
                     "b_draws_test_acc_span": "1.00 in every draw", "b_draws_test_acc_median_words": "1.00 in every draw"}


def test_sides_words_count_the_draws_about_a_line():
    assert draws.sides_words(4, 4) == "all 4 draws lie above it"
    assert draws.sides_words(31, 50) == "31 of the 50 draws lie above it and the other 19 are at chance"
    assert draws.sides_words(49, 50) == "49 of the 50 draws lie above it and the other 1 is at chance"
    assert draws.sides_words(0, 50) == "no draw lies above it: all 50 are at chance"
    assert draws.sides_words(1, 1) == "the only draw lies above it"


def test_what_the_flipped_labels_cost_is_said_seed_by_seed():
    assert draws.cost_by_seed_words([0.014, 0.006, 0.012], [42, 43, 44], 0.01) == (
        "against the same run on clean labels the flipped labels cost +0.014 (seed 42, plotted), +0.006 (seed 43) and "
        "+0.012 (seed 44): more than 0.01 on 2 of the 3 seeds, where the loss is theirs, and at most 0.01 on the other "
        "one, where it is training's")
    assert draws.cost_by_seed_words([0.004, -0.002], [1, 2], 0.01).endswith(
        "more than 0.01 on neither seed, so the loss is training's, not the flipped labels'")
    assert draws.cost_by_seed_words([0.02], [1], 0.01).endswith("more than 0.01 on the only seed, where the loss is theirs")


def test_the_head_level_words_name_the_columns_at_the_heads_own_test_accuracy():
    """A column is at the fixed head's level when its median is at least the head's accuracy minus the harm margin;
    the words count and name them, and say so when none is."""
    head = theory.head_test_accuracy(20.0, 8)  # Φ(20/4) = Φ(5)
    assert head == pytest.approx(0.9999997133, abs=1e-9)
    assert theory.head_test_accuracy(4.0, 8) == pytest.approx(0.8413447461, abs=1e-9)  # Φ(1)
    both = draws.head_level_words({"benign": 1.0, "not_overfitting": 0.96}, head, 0.05)
    assert both == ("the benign and not-overfitting columns test at that level (median over the draws), the head's "
                    "own")
    assert draws.head_level_words({"benign": 0.99, "not_overfitting": 0.90}, head, 0.05) == (
        "the benign column tests at that level (median over the draws), the head's own")
    assert draws.head_level_words({"benign": 0.6, "not_overfitting": 0.5}, head, 0.05) == (
        "no column tests at that level (median over the draws)")
