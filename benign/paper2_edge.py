"""Where benign overfitting starts on a paper-2 SNR sweep (`paper2.snr_sweep`): the edge per n, the slope of
SNR_edge ∝ n^b over every n and over the tail of large n, the rule on that slope, and the page's sentences built from
these numbers (symbols typeset as the page's own: $n$, $d$, $n^2$); the page's reading as a typed result
(`SnrMap`).

Paper 2 writes ρ for the signal norm; the book writes ‖μ‖ (book/model.md), and so do these tables and sentences."""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import thresholds
from .checks import check
from .paper2 import SYMBOLS, first_step_threshold
from . import words
from .words import and_list, plus_minus, signed

# The edge table's columns as a page shows them
EDGE_COLUMNS = {**SYMBOLS, "test_acc": "test accuracy", "sqrt_n_snr": "√n·SNR",
                "first_step_sqrt_n_snr": "first-step √n·SNR", "in_tail": "in the tail", "d_over_n2": "d/n²"}


def edge_slope(edge: pd.DataFrame, log_step: float, n_min: int = 0) -> tuple[float, float, int]:
    """The exponent b of SNR_edge ∝ n^b (the theorems: b = −1/2) fitted by least squares in log–log over the rows of
    `edge` with n ≥ `n_min`, its standard error and the number of n fitted. The error is the fit's own plus the
    grid's resolution: an edge known only to one step of the ‖μ‖ grid (`log_step` = log of its ratio), a uniform
    error of one log step per point. NaN with fewer than two values of n."""
    edge = edge[edge.n >= n_min]
    if len(edge) < 2:
        return float("nan"), float("nan"), len(edge)
    x, y = np.log(edge.n.to_numpy(float)), np.log(edge.snr.to_numpy(float))
    slope, intercept = np.polyfit(x, y, 1)
    spread = ((x - x.mean()) ** 2).sum()
    fit_var = ((y - slope * x - intercept) ** 2).sum() / max(len(x) - 2, 1) / spread
    return float(slope), float(np.sqrt(fit_var + log_step ** 2 / 12 / spread)), len(edge)


def benign_edge(grid: pd.DataFrame, min_test_acc: float = 0.95) -> pd.DataFrame:
    """Per n of an `snr_sweep` grid (cells averaged over seeds), the smallest ‖μ‖ whose cell interpolates (train
    accuracy 1) with test accuracy ≥ `min_test_acc`: columns n, signal_norm, snr, test_acc and sqrt_n_snr = √n·SNR
    there (the same for every n if the boundary is SNR ≍ 1/√n). An n without such a cell has no row."""
    check("min_test_acc", min_test_acc)
    benign = benign_cells(grid.groupby(["n", "signal_norm"], as_index=False)[["train_acc", "test_acc", "snr"]].mean(),
                          min_test_acc)
    edge = benign.loc[benign.groupby("n").signal_norm.idxmin(), ["n", "signal_norm", "snr", "test_acc"]]
    edge = edge.reset_index(drop=True)
    edge["sqrt_n_snr"] = np.sqrt(edge.n) * edge.snr
    return edge


def benign_cells(cells: pd.DataFrame, min_test_acc: float) -> pd.DataFrame:
    """The cells (averaged over seeds) that interpolate (train accuracy 1) with test accuracy ≥ `min_test_acc`."""
    return cells[(cells.train_acc == 1.0) & (cells.test_acc >= min_test_acc)]


def first_step_cells(n, signal_norm_values, d: int, noise_ratio: float) -> np.ndarray:
    """Per n, √n·SNR at the first grid cell on or above the book's first-step estimate n·SNR² = 2/(1 − 2η)
    (`paper2.first_step_threshold`): the edge that estimate predicts on this grid, a control computed without any
    run. With step sizes β_t = c_t·n/d the first step's signal and noise values, c₁(1 − 2η)·n·SNR²/8 and c₁/4,
    depend on n·SNR² alone, so this control's √n·SNR is the same at every n up to the grid's step; NaN where the
    estimate lies above the grid."""
    grid = np.sort(np.unique(np.asarray(signal_norm_values, float)))
    n = np.asarray(n, float)
    needed = np.sqrt(first_step_threshold(noise_ratio) * d / n) * (1 - 1e-12)  # n·SNR² exactly at it counts
    index = np.searchsorted(grid, needed)
    first = np.where(index < len(grid), grid[np.minimum(index, len(grid) - 1)], np.nan)  # NaN: above the grid
    return first / np.sqrt(d) * np.sqrt(n)


def above_band(cells: pd.DataFrame, min_test_acc: float) -> dict:
    """What the cells above the benign band show: per n, those with ‖μ‖ above its largest benign cell (`benign_cells`;
    an n without one has none). Their count, mean train and test accuracy and fresh inputs' mean weight on their
    signal token; how many fit every training label, their mean test accuracy (NaN if none), how many of those test
    below `thresholds.NEAR_CHANCE` and the largest n with one (0 if none)."""
    top = benign_cells(cells, min_test_acc).groupby("n").signal_norm.max()
    above = cells[cells.signal_norm > cells.n.map(top)]  # NaN for an n with no benign cell: never above
    fitted = above[above.train_acc == 1.0]
    return {"above_band_cell_count": len(above), "above_band_train_acc": float(above.train_acc.mean()),
            "above_band_test_acc": float(above.test_acc.mean()),
            "above_band_test_signal_attention": float(above.test_signal_attention.mean()),
            "above_band_fitted_count": len(fitted), "above_band_fitted_test_acc": float(fitted.test_acc.mean()),
            "above_band_fitted_harmful_count": int((fitted.test_acc < thresholds.NEAR_CHANCE.value).sum()),
            "above_band_fitted_n_max": int(fitted.n.max()) if len(fitted) else 0}


def grid_log_step(signal_norm_values) -> float:
    """The log of the ‖μ‖ grid's ratio (the median over neighbours): the resolution of the edge."""
    return float(np.median(np.diff(np.log(np.sort(np.unique(signal_norm_values))))))


def sweep_summary(grid: pd.DataFrame, min_test_acc: float = 0.95, n_tail_min: int = 2,
                  clean: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    """Where benign overfitting starts on an `snr_sweep` grid (`benign_edge`, with columns in_tail = n ≥ `n_tail_min`
    and d_over_n2 = d/n²) and the headline numbers: the slope b of SNR_edge ∝ n^b over every n and over the tail
    alone (with standard errors and counts), √n·SNR at the edge per n, its mean and spread (max/min) over every n
    and over the tail, the mean over the small n, the first-step estimate √(2/(1 − 2η)), the grid's ratio, d/n² per
    n and its range over the tail, the number of cells below SNR = 1/√n with their mean train and test accuracy and
    test inputs' mean weight on their signal token, the same train and test accuracy and weight at the largest ‖μ‖,
    and what the cells above the benign band show (`above_band`). The control of the edge's slope: the edge the
    first-step estimate predicts on the grid (`first_step_cells`, a column of the edge table), its slope over the
    tail and the number of tail n whose measured edge is that cell.

    `clean`: the same sweep on clean labels (`snr_sweep` with noise_ratio 0: the same draws, no label flipped), the
    control of the cells below the boundary: their mean test accuracy there, the mean cost of the flipped labels
    (clean minus flipped, cell by cell) and the share of those cells where it exceeds `thresholds.HARM`."""
    check("n_tail_min", n_tail_min)
    edge = benign_edge(grid, min_test_acc)
    d, noise_ratio = int(grid.d.iloc[0]), float(grid.noise_ratio.iloc[0])
    edge.insert(edge.columns.get_loc("sqrt_n_snr") + 1, "first_step_sqrt_n_snr",
                first_step_cells(edge.n, grid.signal_norm, d, noise_ratio))  # the control beside the measured
    edge["in_tail"] = edge.n >= n_tail_min
    edge["d_over_n2"] = d / edge.n.astype(float) ** 2
    cells = grid.groupby(["n", "signal_norm"], as_index=False)[["train_acc", "test_acc", "snr",
                                                                "test_signal_attention"]].mean()
    below = cells[np.sqrt(cells.n) * cells.snr < 1]
    twin = {}
    if clean is not None:
        twins = clean.groupby(["n", "signal_norm"]).test_acc.mean()
        cost = twins.loc[list(zip(below.n, below.signal_norm))].to_numpy() - below.test_acc.to_numpy()
        twin = {"below_boundary_clean_test_acc": float((below.test_acc + cost).mean()),
                   "below_boundary_noise_cost": float(cost.mean()),
                   "below_boundary_costly_share": float(thresholds.beyond(cost, thresholds.HARM.value).mean())}
    top = cells[cells.signal_norm == cells.signal_norm.max()]
    log_step = grid_log_step(grid.signal_norm)
    slope, slope_std, count = edge_slope(edge, log_step)
    tail_slope, tail_se, tail_count = edge_slope(edge, log_step, n_tail_min)
    tail, small = edge[edge.in_tail], edge[~edge.in_tail]
    control = edge.assign(snr=edge.first_step_sqrt_n_snr / np.sqrt(edge.n)).dropna(subset="snr")
    metrics = {"edge_snr_slope": slope, "edge_snr_slope_std": slope_std,
               "edge_snr_slope_tail": tail_slope, "edge_snr_slope_tail_se": tail_se,
               "edge_tail_n_count": tail_count, "edge_small_n_count": len(small),
               "edge_sqrt_n_snr_mean": float(edge.sqrt_n_snr.mean()),
               "edge_sqrt_n_snr_spread": float(edge.sqrt_n_snr.max() / edge.sqrt_n_snr.min()),
               "edge_sqrt_n_snr_tail_mean": float(tail.sqrt_n_snr.mean()),
               "edge_sqrt_n_snr_tail_spread": float(tail.sqrt_n_snr.max() / tail.sqrt_n_snr.min()),
               "edge_sqrt_n_snr_small_mean": float(small.sqrt_n_snr.mean()),
               "first_step_sqrt_n_snr": float(np.sqrt(first_step_threshold(noise_ratio))),
               "first_step_edge_slope_tail": edge_slope(control, log_step, n_tail_min)[0],
               "edge_tail_on_first_step_count": int(np.isclose(tail.sqrt_n_snr, tail.first_step_sqrt_n_snr).sum()),
               "signal_norm_grid_ratio": float(np.exp(log_step)),
               "edge_n_count": count,
               **{f"edge_sqrt_n_snr_n{n}": float(v) for n, v in zip(edge.n, edge.sqrt_n_snr)},
               **{f"d_over_n2_n{n}": d / n ** 2 for n in sorted(cells.n.unique())},
               "below_boundary_cell_count": len(below),
               "below_boundary_train_acc": float(below.train_acc.mean()),
               "below_boundary_test_acc": float(below.test_acc.mean()),
               "below_boundary_test_signal_attention": float(below.test_signal_attention.mean()),
               "largest_signal_norm_train_acc": float(top.train_acc.mean()),
               "largest_signal_norm_test_acc": float(top.test_acc.mean()),
               "largest_signal_norm_test_signal_attention": float(top.test_signal_attention.mean()),
               "edge_tail_d_over_n2_min": float(tail.d_over_n2.min()),
               "edge_tail_d_over_n2_max": float(tail.d_over_n2.max()), **above_band(cells, min_test_acc), **twin}
    return edge, metrics


# The page's symbols as its sentences typeset them (glued Markdown typesets maths, as the page's own prose does)
N, D, N2 = "$n$", "$d$", "$n^2$"
SQRT_N_SNR = r"$\sqrt n\,\mathrm{SNR}$"


def at_n(n: int) -> str:
    """'$n = 50$'."""
    return f"$n = {n}$"


def at_each_n(ns, values, fmt: str = ".2f") -> str:
    """Values per n as prose says them: '2.26 at $n = 50$ and 2.07 at $n = 100$', or, where every one reads the same,
    '1.60 at every $n$ from 200 to 1600' ('… at both $n = 200$ and $n = 400$' for two)."""
    ns, shown = [int(n) for n in ns], [format(v, fmt) for v in values]
    if len(set(shown)) == 1 and len(ns) > 1:
        where = f"both {at_n(ns[0])} and {at_n(ns[1])}" if len(ns) == 2 else f"every {N} from {ns[0]} to {ns[-1]}"
        return f"{shown[0]} at {where}"
    return and_list([f"{v} at {at_n(n)}" for n, v in zip(ns, shown)])


def edge_table(edge: pd.DataFrame) -> pd.DataFrame:
    """`sweep_summary`'s edge table as a page shows it: each number written to the digits the grid supports, trailing
    zeros kept so that a column reads at one precision (‖μ‖, SNR and d/n² to three significant digits, the test
    accuracy, a mean over seeds, to three decimals, √n·SNR and the first-step control's to two, as the text gives
    them), and the columns named as a reader reads them (`EDGE_COLUMNS`)."""
    shown = edge.assign(**{column: [say(float(x)) for x in edge[column]] for column, say in (
        ("signal_norm", three_significant), ("snr", three_significant), ("d_over_n2", three_significant),
        ("test_acc", lambda x: f"{x:.3f}"), ("sqrt_n_snr", lambda x: f"{x:.2f}"),
        ("first_step_sqrt_n_snr", lambda x: f"{x:.2f}"))})
    return shown.rename(columns=EDGE_COLUMNS)


def three_significant(x: float) -> str:
    """A number to three significant digits as a table writes it, trailing zeros kept and never an exponent:
    '8.00', '41.5', '0.0156', '128', '1230'."""
    text = format(x, "#.3g")
    return f"{float(f'{x:.3g}'):.0f}" if "e" in text or text.endswith(".") else text


SMALL_COUNTS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _count(k: int) -> str:
    """A count in words up to ten, in digits above."""
    return SMALL_COUNTS[k] if k < len(SMALL_COUNTS) else str(k)


def _times_n2(ratio: float) -> str:
    """d/n² in words of n²: '16 times $n^2$', '$n^2$ itself', '$n^2/4$'."""
    if np.isclose(ratio, 1.0, rtol=0.02):
        return f"{N2} itself"
    if ratio > 1:
        return f"{ratio:.3g} times {N2}"
    return f"$n^2/{1 / ratio:.3g}$"


def tail_verdict(slope: float, se: float) -> str:
    """What the tail's slope b ± se says of SNR_edge ∝ n^(−1/2), with two standard errors as the threshold: 'holds'
    (within 2 se of −1/2, farther than 2 se from 0), 'contradicted' (farther than 2 se from −1/2), 'not seen' (the
    spread cannot tell −1/2 from 0, or no fit)."""
    if not (np.isfinite(slope) and np.isfinite(se)):
        return "not seen"
    near_half, away_from_zero = abs(slope + 0.5) <= 2 * se, abs(slope) > 2 * se
    if near_half:
        return "holds" if away_from_zero else "not seen"
    return "contradicted"


def d_vs_n2_words(edge: pd.DataFrame, d: int, n_values, slope_tail: float, se_tail: float) -> dict[str, str]:
    """Sentences (Markdown) for the page, from a `sweep_summary` edge table: `d_outside_assumption_words`, the n of
    the grid at which d is at most n² (outside the theorem's d large against n²), from the parameters alone;
    `d_vs_n2_words`, d against n² at every n; `d_vs_n2_finding`, what the edge shows where d is below n² and where
    it is above."""
    n_values = sorted(int(n) for n in n_values)
    listing = and_list([f"{_times_n2(d / n ** 2)} at {at_n(n)}" for n in n_values])
    outside = [n for n in n_values if d / n ** 2 <= 1.02]  # d at most n² (n² itself within 2%)
    if outside:
        columns = "that column lies" if len(outside) == 1 else "those columns lie"
        outside_words = (f"At $d = {d}$, {D} is at most {N2} for $n =$ {and_list([str(n) for n in outside])} of this "
                         f"grid: {columns} outside the theorem's assumption that {D} is large against {N2}, and the "
                         f"section on {D} against {N2} below reads the edge there.")
    else:
        outside_words = (f"At $d = {d}$, {D} is above {N2} for every {N} of this grid (at least "
                         f"{_times_n2(d / n_values[-1] ** 2)}); whether that is large enough for the theorem's "
                         "assumption is not known here.")
    tail = edge[edge.in_tail]
    tail_below = [int(n) for n in tail.n if d < n ** 2]
    above = edge[edge.d_over_n2 > 1.02]  # d clearly above n²
    verdict = tail_verdict(slope_tail, se_tail)
    said_d = f"$d = {d}$ is {listing}."
    if tail.empty:
        return {"d_outside_assumption_words": outside_words, "d_vs_n2_words": said_d,
                "d_vs_n2_finding": f"No value of {N} in the tail has a benign cell, so the tail says nothing here."}
    count = len(tail)
    values = f"{_count(count)} {'value' if count == 1 else 'values'} of {N}"
    if tail_below:
        share = "every one" if len(tail_below) == count else _count(len(tail_below))
        where = f"{D} is below {N2} at {share} of the tail's {values}"
    else:
        where = f"{D} is at least {N2} at every one of the tail's {values}"
    shows = {"holds": r"the edge scales as $1/\sqrt n$ there (slope within two standard errors of −1/2 and clear of 0)",
             "contradicted": r"the edge does not scale as $1/\sqrt n$ there (slope more than two standard errors "
                             "from −1/2)",
             "not seen": rf"the fit cannot tell $1/\sqrt n$ from no dependence on {N} there"}[verdict]
    finding = f"Here {where}, and {shows}"
    if tail_below and verdict == "holds":
        finding += f": the scaling does not need {D} far above {N2} on this grid"
        if np.isclose(tail.sqrt_n_snr, tail.first_step_sqrt_n_snr).all():
            finding += (", though there the edge is the first-step control's cell at every such value, so it shows "
                        "the step sizes' scaling, not the theorem's")
    if not above.empty:
        values = at_each_n(above.n, above.sqrt_n_snr)
        finding += (f". Where {D} is above {N2} the edge's {SQRT_N_SNR} is {values}, against "
                    f"{tail.sqrt_n_snr.mean():.2f} on average in the tail")
    return {"d_outside_assumption_words": outside_words, "d_vs_n2_words": said_d, "d_vs_n2_finding": finding + "."}


def below_boundary_words(metrics: dict) -> str:
    """What the cells below SNR = 1/√n show, in words computed from `sweep_summary`'s numbers: whether the training
    labels are fitted, the mean test accuracy against `thresholds.NEAR_CHANCE` (nearer chance than perfect below it:
    harmful as the book's hypothesis reads it, a test error that does not vanish) and `thresholds.TEST_GOOD`, the
    mean weight test inputs put on their signal token, and, where the record has the clean-label control, what the
    flipped labels cost against it (`thresholds.HARM`, the book's reading of harm) and whose the low accuracy is:
    'near chance' is said only as `NEAR_CHANCE` says it, nearer chance than perfect, with its value."""
    count, train = metrics["below_boundary_cell_count"], metrics["below_boundary_train_acc"]
    test = metrics["below_boundary_test_acc"]
    if count == 0:
        return "No cell of this grid lies below the boundary."
    attention = metrics["below_boundary_test_signal_attention"]
    fitted = (f"every training label is fitted (mean train accuracy {train:.2f})" if train == 1
              else f"the training labels are fitted only in part (mean train accuracy {train:.2f})")
    near, good = thresholds.NEAR_CHANCE.value, thresholds.TEST_GOOD.value
    if test < near:
        how = f"below {near:g}, nearer chance (0.5) than perfect (1)" + (
            ": harmful overfitting as the book's hypothesis reads it, a test error that stays large" if train == 1
            else "")
    elif test < good:
        how = f"above chance, though below the {good:g} that counts as generalizing here"
    else:
        how = f"at least the {good:g} that counts as generalizing here: this overfitting is not harmful"
    out = (f"Below the boundary ({words.count(count, 'cell')} averaged) {fitted}; fresh inputs put a mean weight of "
           f"{attention:.2f} on their signal token and {1 - attention:.2f} on their noise token, and are classified "
           f"with mean test accuracy {test:.2f}, {how}.")
    if "below_boundary_clean_test_acc" not in metrics:
        return out
    clean, cost = metrics["below_boundary_clean_test_acc"], metrics["below_boundary_noise_cost"]
    costly, harm = metrics["below_boundary_costly_share"], thresholds.HARM.value
    out += (f" On clean labels the same cells (same draws, no label flipped) test at {clean:.2f}: the flipped labels "
            f"cost {signed(cost, '+.3f')} of test accuracy on average, more than {harm:g} in "
            f"{words.percent(costly)} of the cells.")
    if clean < near:
        whose = ("Most of the shortfall from a perfect 1 is the SNR's" if 1 - clean > cost else
                 "The flipped labels cost more of it than the SNR does")
        return out + (f" That {clean:.2f} is below {near:g} too, nearer chance than perfect: even without flipped "
                      f"labels two steps generalize little at this SNR. {whose}"
                      + (", and the flipped labels add their cost to it." if costly > thresholds.MAJORITY.value and
                         1 - clean > cost else "."))
    if costly > thresholds.MAJORITY.value:
        return out + " In most cells the flipped labels cause part of the loss: harm by the book's reading too."
    return out + " In most cells they cost nothing: the low accuracy is the SNR's, not theirs."


def above_band_words(metrics: dict) -> str:
    """What the cells above the benign band and at the largest ‖μ‖ show, in words computed from `sweep_summary`'s
    numbers (`above_band`): whether two steps fit their training labels there ('do not fit their training labels'
    where the train accuracy is below 1), the test accuracy and fresh inputs' weight on their signal token, and
    whether the band's upper limit is mostly a failure to interpolate (most cells, `thresholds.MAJORITY`, leave
    labels unfitted) or overfitting; how many of the cells that fit every label test below `thresholds.NEAR_CHANCE`,
    not called harm without their clean-label runs."""
    train, test = metrics["largest_signal_norm_train_acc"], metrics["largest_signal_norm_test_acc"]
    fits = "every training label is fitted there" if train == 1 else "two steps do not fit their training labels there"
    largest = (rf"At the largest $\|\mu\|$ the mean train accuracy is {train:.2f}: {fits}; the mean test accuracy is "
               f"{test:.2f}, and fresh inputs put a mean weight of "
               f"{metrics['largest_signal_norm_test_signal_attention']:.2f} on their signal token.")
    count, fitted = metrics["above_band_cell_count"], metrics["above_band_fitted_count"]
    if count == 0:
        return f"{largest} No cell of this grid lies above the benign band."
    cells = words.share_words(fitted, count, "cell", "cells")
    out = (f"{largest} Above the benign band (the cells of each {N} above its largest benign one, "
           f"{words.count(count, 'cell')}) the mean train accuracy is {metrics['above_band_train_acc']:.2f} and every "
           f"training label is fitted in {cells}, and the mean test accuracy is {metrics['above_band_test_acc']:.2f}, "
           f"fresh inputs putting {metrics['above_band_test_signal_attention']:.2f} on their signal token.")
    if fitted:
        harmful, near = metrics["above_band_fitted_harmful_count"], thresholds.NEAR_CHANCE.value
        out += (f" The cells that fit every label, all at $n \\le {metrics['above_band_fitted_n_max']}$, test at "
                f"{metrics['above_band_fitted_test_acc']:.2f} on average, below {near:g} (nearer chance than perfect) "
                f"in {words.share_words(harmful, fitted, 'cell', 'cells')}; their clean-label runs are not read here, "
                "so the page does not call that harm.")
    if fitted <= thresholds.MAJORITY.value * count:
        return out + (" So the band's upper limit on this map is mostly a failure to fit the training labels, not "
                      "overfitting, harmful or benign.")
    return out + " So above the band two steps mostly still fit every label: the upper limit there is overfitting."


def slope_title(metrics: dict, n_tail_min: int) -> str:
    """The edge plot's title: the tail's slope with its standard error, both to the error's first digit, beside the
    theorems' −0.5 and the first-step control's slope on the same grid (the verdict turns on it): 'slope over
    n ≥ 200: −0.50 ± 0.02 (theorems: −0.5; the control's: −0.50)'."""
    slope = plus_minus(metrics["edge_snr_slope_tail"], metrics["edge_snr_slope_tail_se"])
    control = metrics["first_step_edge_slope_tail"]
    said = f"; the control's: {words.minus(f'{control:.2f}')}" if control == control else ""  # NaN: none measured
    return f"slope over n ≥ {n_tail_min}: {slope} (theorems: −0.5{said})"


def edge_words(edge: pd.DataFrame, metrics: dict, n_tail_min: int) -> dict[str, str]:
    """Sentences (Markdown) for the page from `sweep_summary`'s edge table and metrics: `edge_tail_words`, the tail's
    slope and √n·SNR at its edges; `edge_small_words`, the small n reported apart; `edge_all_words`, the slope over
    every n; `first_step_words`, the tail's edge against the first-step estimate √(2/(1 − 2η)), to the grid's
    resolution, and the tail's slope against that control's (`first_step_control_words`)."""
    tail, small = edge[edge.in_tail], edge[~edge.in_tail]
    count = len(tail)
    if count >= 2:
        tail_words = (rf"Over the tail, $n \ge {n_tail_min}$ (a bound fixed before the run; {_count(count)} values of "
                      f"{N}), the SNR of the first benign cell scales as a power of {N}, "
                      rf"$\mathrm{{SNR}} \propto n^b$, with $b =$ "
                      f"{plus_minus(metrics['edge_snr_slope_tail'], metrics['edge_snr_slope_tail_se'])} (± the fit's "
                      "standard error, the grid's step included, both rounded to the error's first digit), "
                      f"and {SQRT_N_SNR} there is {at_each_n(tail.n, tail.sqrt_n_snr)}.")
    else:
        tail_words = (rf"The tail, $n \ge {n_tail_min}$, has {'one value' if count == 1 else 'no value'} of {N} with "
                      "a benign cell: too few for a slope.")
    small_words = (f"The small {N}, below {n_tail_min}, are reported apart: {SQRT_N_SNR} at the edge is "
                   f"{at_each_n(small.n, small.sqrt_n_snr)}." if len(small) else
                   f"No {N} below {n_tail_min} has a benign cell in this run.")
    estimate, ratio = metrics["first_step_sqrt_n_snr"], metrics["signal_norm_grid_ratio"]
    if tail.empty:
        first_words = f"The first-step estimate is {estimate:.2f}; the tail has no edge to compare it with."
    else:
        high = tail.sqrt_n_snr.mean()
        low = high / ratio  # the grid point below the edge: not benign
        if low < estimate <= high:
            where = (f"lies within the last grid step below the tail's edge: the edge is between {low:.2f} (not "
                     f"benign) and {high:.2f}")
        elif estimate <= low:
            where = f"lies below the tail's edge by more than one grid step ({estimate / high:.2f} of it)"
        else:
            where = f"lies above the tail's edge ({estimate / high:.2f} times it)"
        first_words = f"The book's first-step estimate, {estimate:.2f}, {where}. {first_step_control_words(tail, metrics)}"
    slope, se = metrics["edge_snr_slope"], metrics["edge_snr_slope_std"]
    all_words = (f"Over every {N} together the slope is {plus_minus(slope, se)}." if np.isfinite(slope)
                 else f"Over every {N} together there are too few edges for a slope.")
    return {"edge_tail_words": tail_words, "edge_small_words": small_words, "edge_all_words": all_words,
            "first_step_words": first_words}


STEP_SIZES = (r"with step sizes $\beta_t = c_t\,n/d$ the book's first-step signal and noise values, "
              r"$c_1(1-2\eta)\,n\,\mathrm{SNR}^2/8$ and $c_1/4$, depend on $n\,\mathrm{SNR}^2$ alone")


def first_step_control_words(tail: pd.DataFrame, metrics: dict) -> str:
    """The tail's edge against its control, the edge the first-step estimate predicts on the grid (`first_step_cells`,
    computed without any run): that cell's √n·SNR per n, at how many of the tail's n the measured edge is that cell,
    the control's slope, and whether the measured slope lies within `thresholds.SLOPE_SE` standard errors of it (the
    test `paper2_rules.paper2_boundary_rule` makes), so whether the slope says more than the step sizes' choice."""
    control, k = metrics["first_step_edge_slope_tail"], thresholds.SLOPE_SE.value
    slope, se = metrics["edge_snr_slope_tail"], metrics["edge_snr_slope_tail_se"]
    on = words.share_words(metrics["edge_tail_on_first_step_count"], len(tail), f"value of {N}", f"values of {N}")
    said = (rf"On this grid that estimate's own edge, the first cell with $n\,\mathrm{{SNR}}^2 \ge 2/(1-2\eta)$, has "
            f"{SQRT_N_SNR} {at_each_n(tail.n, tail.first_step_sqrt_n_snr)}; the measured edge is that cell at {on} of "
            "the tail.")
    if not (np.isfinite(control) and np.isfinite(se)):
        return said
    agrees = abs(slope - control) <= k * se
    return (f"{said} That control, computed without any run, has a slope of {signed(control, '.2f')} over the tail, "
            f"and the measured slope lies {words.within_words(slope, se, control, k)}: {STEP_SIZES}, so "
            + ("the control already predicts the measured slope, which is therefore no evidence for the theorem "
               "beyond the choice of step sizes." if agrees else
               "the measured slope is not the control's alone."))


@dataclass(frozen=True)
class SnrMap:
    """The SNR map's page as it reads (`metrics()`: every key it glues and the claims ledger's rules read): `edge` and
    `summary`, `sweep_summary`'s edge table and headline numbers; the grid's d, its n and its number of runs; the
    rule's `min_test_acc` and `n_tail_min`."""

    edge: pd.DataFrame
    summary: dict
    d: int
    n_values: list
    runs: int
    min_test_acc: float
    n_tail_min: int

    def metrics(self) -> dict:
        s = self.summary
        slope, se = s["edge_snr_slope_tail"], s["edge_snr_slope_tail_se"]
        return {**s, **edge_words(self.edge, s, self.n_tail_min),
                **d_vs_n2_words(self.edge, self.d, self.n_values, slope, se),
                "below_boundary_words": below_boundary_words(s), "above_band_words": above_band_words(s),
                "runs": self.runs, "min_test_acc": self.min_test_acc, "n_tail_min": self.n_tail_min}


def snr_map(grid: pd.DataFrame, min_test_acc: float, n_tail_min: int, clean: pd.DataFrame | None = None) -> SnrMap:
    """The SNR map's reading of an `snr_sweep` grid and of its clean-label twin `clean` (`sweep_summary`)."""
    edge, summary = sweep_summary(grid, min_test_acc, n_tail_min, clean)
    return SnrMap(edge, summary, int(grid.d.iloc[0]), sorted(int(n) for n in grid.n.unique()), len(grid),
                  min_test_acc, n_tail_min)
