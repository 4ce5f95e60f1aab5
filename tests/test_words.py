"""Words built from numbers: lists, true minus signs, counts out of a total and a slope's direction."""

import numpy as np
import pytest

from benign import words


def test_lists_and_signed_numbers_read_as_a_reader_says_them():
    assert [words.and_list(p) for p in (["a"], ["a", "b"], ["a", "b", "c"])] == ["a", "a and b", "a, b and c"]
    assert words.signed(-0.0571, ".2f") == "−0.06" and words.signed(0.5, "+.1f") == "+0.5"
    assert [words.percent(x) for x in (0.0, 1.0, 0.354)] == ["none", "all", "35%"]
    assert words.percent(0.49, ".1%") == "49.0%"


def test_a_count_takes_its_noun_in_the_right_number():
    assert [words.count(n, "layer") for n in (0, 1, 4)] == ["0 layers", "1 layer", "4 layers"]
    assert words.count(1, "patch", "patches") == "1 patch" and words.count(49, "patch", "patches") == "49 patches"


def test_a_fitted_number_in_a_table_reads_without_nan_or_negative_zero():
    nan = float("nan")
    assert words.estimate(0.2512, 0.031, 5, "row") == "0.25 ± 0.03 (5 rows)"
    assert words.estimate(-0.31, 0.1, 4, "column") == "−0.31 ± 0.10 (4 columns)"
    assert words.estimate(-0.001, nan, 2, "row") == "0.00 (2 rows, no spread)"
    assert words.estimate(nan, nan, 1, "row") == "— (1 row)" and words.estimate(nan, nan, 0, "row") == "— (0 rows)"


def test_a_slopes_direction_and_counts_in_words():
    assert words.trend(0.76, 0.1) == "rises" and words.trend(-0.5, 0.1) == "falls"
    assert words.trend(0.1, 0.1) == "does not change measurably" and words.trend(np.nan, np.nan) == "cannot be fitted"
    rises = '<span class="benign-direction" data-value="0.764" data-se="0.0488">rises</span>'
    assert words.direction(0.764, 0.0488) == rises and words.slope_words(0.764, 0.0488) == rises + " (slope 0.76 ± 0.05)"
    assert words.slope_words(-0.057, 0.039) == words.marked("does not change measurably", -0.057, 0.039) + \
        " (slope −0.06 ± 0.04)"
    assert words.direction(np.float64(0.5), np.nan) == (
        '<span class="benign-direction" data-value="0.5" data-se="nan">does not change measurably</span>')
    assert words.slope_words(np.nan, np.nan).startswith("cannot be fitted") and words.direction(np.nan, 1) == (
        "cannot be fitted")  # no number, no mark
    assert [words.share_words(k, t) for k, t in ((0, 48), (48, 48), (3, 48), (1, 1), (2, 2), (0, 2), (0, 1))] == [
        "none of the 48 runs", "all 48 runs", "3 of the 48 runs", "the only run", "both runs", "neither run", "no run"]


def test_names_from_code_read_as_words_on_a_page():
    assert words.reader_name("noise_ratio") == "η"
    assert words.reader_name("not_overfitting") == "not overfitting"  # any other identifier: spaces
    assert words.reader_name("large_noise_seed43") == "large noise, seed 43"
    assert words.reader_name("balanced_seed43_clean") == "balanced, seed 43, clean labels"
    assert words.reader_name("not_overfitting_clean") == "not overfitting, clean labels"
    assert words.reader_name("rotten_tomatoes_3class") == "Rotten Tomatoes (3 classes)"
    for kept in ("n", "d", "balanced", "ViT, 2 layers", "0.25 ± 0.03", "fig_3 is here"):  # not one identifier
        assert words.reader_name(kept) == kept


def test_a_pages_table_shows_headers_and_names_in_words():
    import pandas as pd

    from benign import pages

    df = pd.DataFrame({"noise_ratio": [0.2], "regime_by_order": ["not_overfitting"], "seed": [43]},
                      index=["large_noise_seed43"])
    html = pages.frame(df)
    for header in ("<th>η</th>", "<th>regime by the theorem&#x27;s order</th>", "<th>seed</th>"):
        assert header in html
    assert "large noise, seed 43" in html and "not overfitting" in html
    assert "_" not in html.replace("benign-frame", "") and ">index<" not in html  # an unnamed index: no header
    renamed = pd.DataFrame({"seed": [1, 2]}).rename(index=lambda i: i)  # a numbering that lost its RangeIndex
    assert pages.frame(renamed).count("<th>") == 1  # dropped: no column of 0, 1


def test_a_vanishing_number_reads_without_an_exponent():
    assert words.tiny(1.5e-13) == "below 10⁻¹²" and words.tiny(5.1e-28) == "below 10⁻¹²"
    assert words.tiny(-3e-15) == "above −10⁻¹²" and words.tiny(0.0) == "0"
    assert words.tiny(1.6e-10, floor=1e-6) == "below 10⁻⁶" and words.tiny(2e-7, floor=1e-6) == "below 10⁻⁶"
    assert [words.tiny(x) for x in (0.000153, 0.45, 1.0, 0.98765, 0.99996, -2.3, 123.4)] == [
        "0.000153", "0.450", "1.00", "0.988", "1.00", "−2.30", "123"]
    assert words.tiny(1.6e-10) == "0.000000000160"  # above the floor: positional, three significant digits
    assert words.power_of_ten(3) == "10³"
    with pytest.raises(ValueError):
        words.tiny(0.1, floor=5e-3)


def test_a_correlations_sign_reads_as_the_relation_it_states():
    assert words.correlation_words(-0.4, "the smaller d", "the later", "the earlier") == (
        '<span class="benign-direction" data-value="-0.4">negative</span>: the smaller d, the later')
    assert words.correlation_words(0.2, "the smaller d", "the later", "the earlier") == (
        '<span class="benign-direction" data-value="0.2">positive</span>: the smaller d, the earlier')
    assert words.correlation_words(0.0, "x", "a", "b") == words.marked("zero", 0.0)
    assert words.correlation_words(float("nan"), "x", "a", "b") == "not measured: too few values"


def test_a_share_that_rounds_to_none_or_all_says_so_without_lying():
    assert (words.percent(0), words.percent(1), words.percent(0.49)) == ("none", "all", "49%")
    assert (words.percent(0.996), words.percent(0.004)) == ("over 99%", "under 1%")
    assert (words.percent(0.9996, ".1%"), words.percent(0.0004, ".1%")) == ("over 99.9%", "under 0.1%")
    assert [words.share_text(x) for x in (0.025, 0.49, 1.0, float("nan"), 0.01, 0.0004)] == [
        "2.5%", "49%", "all", "—", "1%", "under 0.1%"]
    # a half rounds up, as a reader rounds the decimal they see: 7 of 56 and 49 of 56 read 13% and 88%, not 12% and
    # 88% (binary half-even); 0.0125 is below the float 1.25 % but reads as the decimal it prints
    assert [words.percent(x) for x in (7 / 56, 49 / 56)] == ["13%", "88%"]
    assert (words.share_text(0.0125), words.percent(0.985)) == ("1.3%", "99%")


def test_plain_takes_the_marks_off_and_keeps_the_words():
    text = f"κ {words.slope_words(0.5, 0.1)}, and {words.correlation_words(-0.3, 'the smaller d', 'the later', 'x')}"
    assert "benign-direction" in text
    assert words.plain(text) == "κ rises (slope 0.5 ± 0.1), and negative: the smaller d, the later"


def test_a_slope_is_said_to_the_precision_its_error_supports():
    assert words.plain(words.slope_words(8.834, 0.42, "grows")) == "grows (slope 8.8 ± 0.4)"
    assert words.plain(words.slope_words(0.764, 0.05)) == "rises (slope 0.76 ± 0.05)"
    assert words.plain(words.slope_words(-0.02, 0.3)) == "does not change measurably (slope 0.0 ± 0.3)"  # no signed zero
    assert words.plain(words.slope_words(2.0, float("nan"))).endswith("(slope 2.00 from two points)")  # no error


def test_a_range_whose_ends_read_the_same_is_one_number():
    assert words.span("0.80", "0.95") == "0.80 to 0.95" and words.span("1.000", "1.000") == "1.000"
    assert words.span("4", "4", "–") == "4" and words.span("2", "3", "–") == "2–3"


def test_numbers_get_a_true_minus_and_a_zero_no_sign():
    assert words.minus("-0.025 (seeds -0.025 to -0.021), +0.000 and −0.00") == (
        "−0.025 (seeds −0.025 to −0.021), 0.000 and 0.00")
    untouched = "a 1-layer ViT, steps 1-10, x-1, -p seed 7, +0.5"
    assert words.minus(untouched) == untouched
    assert [words.signed(x, f) for x, f in ((-1.5, ".1f"), (-0.0004, ".2f"), (0.0, "+.3f"), (0.25, "+.2f"))] == [
        "−1.5", "0.00", "0.000", "+0.25"]


def test_a_notebooks_settings_read_as_a_sentence_says_them():
    said = words.SettingsSaid(d_grid=[250, 5000, 125], seeds=[42, 314, 2718], train_W=False,
                          step_sizes_benign=[0.01, 1.0], signal_norm=20.0, n=20, noise_ratio_grid=[0.0, 0.9, 0.05],
                          vit_depths=[1])
    test = ("d {p[d_grid]}; seeds {p[seeds]}; W trained: {p[train_W]}; β = {p[step_sizes_benign]}; "
            "‖μ‖ = {p[signal_norm]}, n = {p[n]}; η {p[noise_ratio_grid]}; depth {p[vit_depths]}")
    assert test.format(p=said) == ("d from 250 to 5000 in steps of 125; seeds 42, 314 and 2718; W trained: no; "
                                   "β = (0.01, 1); ‖μ‖ = 20, n = 20; η from 0 to 0.9 in steps of 0.05; depth 1")
    # a number of steps reads as the ledger's evidence writes a step, thousands separated (seeds and d do not)
    steps = words.SettingsSaid(num_steps=1000, num_steps_long=100000, num_steps_trained_W=10000)
    assert "{p[num_steps]}; {p[num_steps_long]}; {p[num_steps_trained_W]}".format(p=steps) == "1,000; 100,000; 10,000"
    assert words.step_count(50000.0) == "50,000"


def test_a_sweeps_making_reads_as_a_sentence():
    import pandas as pd

    table = pd.DataFrame({"x": range(1521)})
    table.attrs.update(chunks=39, computed_chunks=39, wall_s=58.49)
    assert words.sweep_said(table) == "1,521 runs in 39 chunks, all computed in this build, in 58.5 s"
    table.attrs.update(chunks=1, computed_chunks=0)
    assert words.sweep_said(table.iloc[:1]) == "1 run in 1 chunk, every one read from the cache"


def test_decimals_keep_a_number_on_its_side_of_a_threshold():
    assert [words.decimals(v, 95, 0) for v in (94.97, 95.27, 63.0, 95.0)] == [2, 1, 0, 0]
    assert [words.decimals(v, -5, 1) for v in (-4.97, -5.03, -5.1, -2.8)] == [2, 2, 1, 1]


def test_within_words_say_how_far_a_fit_lies_from_its_target():
    assert words.within_words(0.26, 0.05, 2.0, 2) == "more than 2 standard errors from it"  # 35 errors away
    assert words.within_words(-0.5, 0.02, -0.5, 2) == "within 2 standard errors of it"
    assert words.within_words(0.3, 0.025, 0.25, 2) == "within 2 standard errors of it"  # exactly 2 away counts
    assert words.within_words(0.3, float("nan"), 0.25, 2) == "no fit"
