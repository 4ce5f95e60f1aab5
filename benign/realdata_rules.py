"""The ledger's rules for the real-data claims (Table 2, Figures 8 and 9, the backbone study): each reads the
table2_finetune, fig8_finetune_attention or backbone_reach record and returns a `Finding`, as the rules of
`benign.rules` do, with thresholds from `benign.thresholds` and effects against the clean-label cells."""

from __future__ import annotations

from typing import Callable

from . import thresholds
from .verdicts import CONTRADICTED, HOLDS, NOT_SEEN, PART, UNTESTABLE, Finding, Record
from .words import and_list, count, decimals, percent, plus_minus, signed


def realdata_rule(kind: str) -> Callable[[Record], Finding]:
    """Over the rows of a kind that can test the claim (`realdata.findings.row_checks`: clean labels fitted, most
    flipped labels within reach of free attention), against the right control: the same backbone, data and n on
    clean labels, over the cells whose fit is measured (`realdata.findings.capped`: a cell the epoch cap stopped
    before it fitted is left out). Holds when the flipped labels are fitted (`REAL_FITTED`) and no cell loses
    `REAL_COST` points to its clean cell; contradicted when the cells lose that much on average, fitted (harmful)
    or fitted in part (neither part of the claim holds); in part otherwise; with no row able to test it, the claim
    is not testable on these backbones, and the measured reach is the cause."""
    fitted_level, cost = 100 * thresholds.REAL_FITTED.value, thresholds.REAL_COST.value

    def rule(m: Record) -> Finding:
        if m[f"{kind}_rows_testing"] == 0:
            reach, fitted = m[f"{kind}_reach_free_mean"] / 100, m[f"{kind}_flipped_fitted_mean"] / 100
            evidence = (f"{kind} rows, cells with flipped labels: free attention over the last layer's tokens can fit "
                        f"{percent(reach)} of them, phase 2 fitted {percent(fitted)} (means over cells and seeds)")
            return Finding(UNTESTABLE, evidence, "the backbones made here cannot test it: most flipped labels are out of "
                           "reach of any attention over their last layer's tokens, or the clean labels are not fitted")
        share = m[f"{kind}_testing_flipped_fitted_mean"]
        mean, worst = m[f"{kind}_testing_test_vs_clean_mean"], m[f"{kind}_testing_test_vs_clean_worst"]
        capped = m.maybe(f"{kind}_testing_capped_cells")
        left_out = (f" ({count(int(capped), 'cell')} that the epoch cap stopped before fitting left out: what the "
                    "whole schedule would fit there is not measured)" if capped == capped and capped else "")
        # shares whole and points to the tenth, with the decimals that keep a number on its side of its threshold
        fitted_said = percent(share / 100, f".{decimals(share, fitted_level, 0)}%")
        evidence = (f"{kind} rows, cells with flipped labels{left_out}: {fitted_said} of them fitted; "
                    f"test accuracy minus the clean cell's {signed(mean, f'+.{decimals(mean, -cost, 1)}f')} points on "
                    f"average, {signed(worst, f'+.{decimals(worst, -cost, 1)}f')} at worst; minus the base accuracy "
                    f"{signed(m[f'{kind}_testing_test_vs_base_mean'], '+.1f')} (means over cells and seeds)")
        if share < 100 * thresholds.MAJORITY.value:
            return Finding(NOT_SEEN, evidence, "within reach of attention, but phase 2 does not fit most flipped "
                           "labels in its schedule")
        if share >= fitted_level and worst > -cost:
            return Finding(HOLDS, evidence)
        if share >= fitted_level and mean <= -cost:
            return Finding(CONTRADICTED, evidence, "fitting the flipped labels costs test accuracy against clean "
                           "labels: harmful, not benign, overfitting on this backbone")
        if share < fitted_level and mean <= -cost:
            return Finding(CONTRADICTED, evidence, "the flipped labels are fitted only in part, and the cells lose "
                           f"{cost:g} points or more on average to their clean cells: neither part of the claim holds")
        return Finding(PART, evidence, "the flipped labels are fitted only in part" if share < fitted_level else
                       "some cells lose more than the threshold to their clean cell")
    return rule


def noise_cost_grows_rule(m: Record) -> Finding:
    """Table 2: the flipped labels cost more test accuracy (against the clean cell) as n grows: the slope of the
    cost — the clean cell's test accuracy minus the noisy one's, the sign Table 2's page says it with — against log n
    over the text rows' cells, judged within `SLOPE_SE` standard errors of zero. (The record fits test accuracy
    minus the clean cell's: the cost's slope is its negative.)"""
    slope, se = -m.maybe("text_cost_slope_log_n"), m.maybe("text_cost_slope_log_n_se")
    k = thresholds.SLOPE_SE.value
    fit = (f"slope {plus_minus(slope, se)} points per unit of log n (a direction beyond {k:g} standard errors)"
           if se == se else "too few values of n to fit a slope")  # to the error's digit
    evidence = (f"the cost of the flipped labels, the clean cell's test accuracy minus the noisy one's, against log n "
                f"over the text rows' cells: {fit}")
    if se != se:
        return Finding(NOT_SEEN, evidence, "too few cells to fit a slope")
    if slope > k * se:
        return Finding(HOLDS, evidence)
    if slope < -k * se:
        return Finding(CONTRADICTED, evidence, "the cost shrinks as n grows")
    return Finding(NOT_SEEN, evidence, "the spread cannot tell the slope from zero")


def tally(counts: dict[str, float]) -> str:
    """Counts by label as a reader says them, the ones found first and the absent ones as 'none': '1 harmful,
    3 not overfitting and none benign', '2 benign and none harmful or not overfitting'."""
    found = [f"{n:.0f} {label}" for label, n in counts.items() if n]
    absent = [label for label, n in counts.items() if not n]
    if not absent:
        return and_list(found)
    none = "none " + " or ".join(absent)
    return ", ".join(found) + " and " + none if found else none


def backbone_regimes_rule(m: Record) -> Finding:
    """The backbone study: each of the three regimes appears among the backbones the page reads: the image backbones
    made here and Table 2's text rows beside them (`text_rows_…`, where the record has them). The evidence says
    how many of the image backbones that do not overfit could have, by reach: free attention fits `REAL_FITTED` of
    their flipped labels, so reach does not keep them from overfitting (it bounds what attention fits; it does not
    make it fit). The claim says reach decides the regime: with all three regimes present it holds only where no
    backbone that does not overfit had its flipped labels within reach, and holds in part where one did."""
    names = {"benign": "benign", "harmful": "harmful", "not_overfitting": "not overfitting"}
    counts = {k: m[f"backbones_{k}"] for k in names}
    said = lambda found: tally({label: found[k] for k, label in names.items()})  # noqa: E731
    evidence = f"of {m['backbones']:.0f} image backbones made here: {said(counts)}"
    reachable = m.maybe("backbones_not_overfitting_reachable")
    if counts["not_overfitting"] and reachable == reachable:
        evidence += (f" ({reachable:.0f} of the {counts['not_overfitting']:.0f} that do not overfit with enough of "
                     f"the flipped labels within reach of free attention to overfit, "
                     f"{percent(thresholds.REAL_FITTED.value)} or more)")
    text = {k: m.maybe(f"text_rows_{k}") for k in names}
    read = m["backbones"]
    if all(v == v for v in text.values()):
        sizes = m.parameters.get("sample_sizes")
        at = f" at n = {and_list([str(n) for n in sizes])} (Table 2's own row reads every n)" if sizes else ""
        evidence += f"; of Table 2's {m['text_rows']:.0f} text rows beside them{at}: {said(text)}"
        counts, read = {k: counts[k] + text[k] for k in names}, read + m["text_rows"]
    present = sum(v > 0 for v in counts.values())
    if present == 3 and reachable > 0:  # the regimes appear, but reach does not account for every one
        return Finding(PART, evidence, f"{reachable:.0f} of the {m['backbones_not_overfitting']:.0f} image backbones "
                       "that do not overfit had enough of their flipped labels within reach to overfit: there, what "
                       "attention can reach does not decide the regime")
    if present == 3:
        return Finding(HOLDS, evidence)
    missing = ", ".join(label for k, label in names.items() if counts[k] == 0)
    if read < 3:
        return Finding(NOT_SEEN, evidence, "fewer backbones than regimes: the build cannot show all three")
    return Finding(PART if present == 2 else CONTRADICTED, evidence, f"not every regime appears among these "
                   f"backbones: {missing}")


def attention_sharpens_rule(m: Record) -> Finding:
    """Figures 8, 9 against each curve's own first epoch (near-uniform attention: a mere rise cannot fail): a curve
    sharpens when its largest score grows by `SHARPER`; holds when every curve does, contradicted when at most
    `MAJORITY` do. The clean-label fine-tuning is quoted as the control."""
    share, curves = m["sharpened_share"], m["sharpening_curves"]
    evidence = (f"by the end of phase 2 the largest score was ×{m['sharpening_factor_min']:.2f} to "
                f"×{m['sharpening_factor_max']:.2f} its first epoch's; {percent(share)} of the {curves:.0f} curves "
                f"at least ×{thresholds.SHARPER.value:g}")
    pairs = m.maybe("sharpening_pairs")
    if pairs and pairs > 0:
        evidence += (f"; with flipped labels the curve ended sharper than on clean labels in "
                     f"{round(m['noisy_sharper_share'] * pairs):.0f} of {pairs:.0f} pairs")
    if share == 1:
        return Finding(HOLDS, evidence)
    if share > thresholds.MAJORITY.value:
        return Finding(PART, evidence, f"some curves end below ×{thresholds.SHARPER.value:g} their first epoch's "
                       "largest score: attention moved there, but did not concentrate onto fewer tokens")
    return Finding(CONTRADICTED, evidence, f"most curves end below ×{thresholds.SHARPER.value:g} their first "
                   "epoch's largest score: fitting the labels did not concentrate attention onto fewer tokens")
