"""What Figure 5's map shows, as typed results: the map at the paper's step (`MapResult`, from `map_result`) and the
same cells over training time (`TimeResult`, from `time_result`), each with the sentences its page prints.

A quantity a grid cannot measure (no harmful cell to bound, a boundary seen in fewer than two rows, one of the
paper's cells not on the grid) is None in the result, never NaN, and null in `metrics()` (not glued); the page's
sentences about it are built here from what was measured (`words`), so a small profile's page says what it could not
measure instead of printing "nan", and a page that glues a number the result lacks fails to build.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import regimes, sweep, theory, thresholds, timing
from .words import and_list, correlation_words, count, direction, share_text, signed, span, tiny

BOUNDARIES = {"overfit": ("benign", "not_overfitting"), "harmful": ("harmful", "benign")}  # (below, above) in ‖μ‖
PAPER_CELLS = {"balanced": (2000, 20.0), "large_noise": (4500, 5.0), "large_signal": (1000, 80.0)}  # Figure 3's
PAIR_WORDS = {"overfit": "benign / not-overfitting", "harmful": "harmful / benign"}


def _value(x):
    """A measured number as it is, or None where it is NaN (nothing to measure)."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def step_text(t: float | None) -> str:
    """A step as a table shows it: whole ('155', never an interpolated '154.6'), 'never' for none (None or NaN)."""
    return "never" if t is None or t != t else f"{t:,.0f}"


def _steps(t: float | None) -> str:
    return "never" if t is None else f"at step {step_text(t)}"


def _runs(by_step: dict[int, str]) -> list[tuple[str, list[int]]]:
    """Consecutive steps with the same value, in order: {1: a, 2: a, 3: b} → [(a, [1, 2]), (b, [3])]."""
    out = []
    for t, value in by_step.items():
        if out and out[-1][0] == value:
            out[-1][1].append(t)
        else:
            out.append((value, [t]))
    return out


UNITS = {"slope": "column", "slope_d": "row"}  # the map's picture: d along x (a column: one d), ‖μ‖ along y


def fit_words(fit: dict, way: str = "slope", total: int | None = None, when: str = "") -> str:
    """A boundary's fitted slope (`regimes.boundary_slope`; way "slope": log ‖μ*‖ found in each column of the map,
    one d, against log d; "slope_d": log d* found in each row, one ‖μ‖, against log ‖μ‖) as prose, `when` after the
    number: '0.52 ± 0.10 at step 1,000 (over 7 of the 39 columns)', 'not measurable (no column holds both regimes)';
    a line through two points has no error to judge it by, and is not measurable either."""
    n, unit = fit["rows" if way == "slope" else "columns"], UNITS[way]
    of = f" of the {total}" if total is not None else ""
    if n < 2 or math.isnan(fit[f"{way}_se"]):
        held = {0: f"no {unit} holds", 1: f"only one {unit}{of} holds"}.get(n, f"only {n} {unit}s{of} hold")
        return f"not measurable{when} ({held} both regimes" + (": no error to judge a line through two points by)"
                                                                if n == 2 else ")")
    over = f"all {n} {unit}s" if total == n else f"{n}{of} {unit}s"
    if abs(fit[f"{way}_se"]) < 1e-9 and abs(fit[way]) < 1e-9:  # every boundary point at one grid value
        along = "‖μ‖" if way == "slope" else "d"
        return f"0{when} (flat: the boundary lies at the same {along} in {over})"
    return f"{signed(fit[way], '.2f')} ± {fit[f'{way}_se']:.2f}{when} (over {over})"


def loss_trends(cells: pd.DataFrame, key: str = "test_loss") -> tuple[tuple[float, float], tuple[float, float]]:
    """How a loss changes over the map: a least-squares plane in log d and log ‖μ‖ through every cell, its slope
    along each with the standard error, ((slope_d, se_d), (slope_μ, se_μ)); NaN where the cells cannot fit a plane."""
    X = np.column_stack([np.ones(len(cells)), np.log(cells.d.astype(float)), np.log(cells.signal_norm.astype(float))])
    y = cells[key].to_numpy(float)
    if len(y) < 4 or np.linalg.matrix_rank(X) < 3:
        return (math.nan, math.nan), (math.nan, math.nan)
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ coef
    se = np.sqrt(np.diag(np.linalg.inv(X.T @ X)) * (residual @ residual) / (len(y) - 3))
    return (float(coef[1]), float(se[1])), (float(coef[2]), float(se[2]))


def trend_words(trends) -> str:
    """`loss_trends` as a phrase, each direction computed from its slope (`words.direction`, marked): 'rising towards
    large d and falling towards a strong signal', 'with no measurable trend in d and …'."""
    if any(math.isnan(slope) for slope, _ in trends):
        return "with too few cells to fit a trend"
    return and_list([direction(slope, se, f"rising towards {where}", f"falling towards {where}",
                               f"with no measurable trend in {what}")
                     for (slope, se), what, where in zip(trends, ("d", "‖μ‖"), ("large d", "a strong signal"))])


@dataclass(frozen=True)
class MapResult:
    """Figure 5's map at the paper's step: its regimes (`theory.observed_regime`), what training adds to the head's
    own accuracy, and what the flipped labels cost against the same runs on clean labels (`regimes.trained_regime`),
    read as the page and the claims ledger read them."""

    shares: dict[str, float]  # share of the cells in each regime (theory.REGIMES)
    trained_shares: dict[str, float]  # ... against the same runs on clean labels
    loss_range: dict[str, tuple[float, float]]  # train_loss / test_loss: (min, max) over the cells
    test_loss_trend: tuple  # slope and standard error along log d and log ‖μ‖ (`loss_trends`)
    unfitted_cells: int  # cells that leave a noisy label unfitted
    unfitted_share_above_1: float | None  # of them, the share above n·SNR² = 1
    unfitted_median_n_snr2: float | None
    harmful_cells: int
    harmful_max_snr_times_d_quarter: float | None  # how far above SNR = d^(-1/4) a harmful cell reaches
    harmful_head_below_share: float | None  # of the harmful cells, those whose head alone scores below the threshold
    harmful_clean_below_share: float | None  # ... those whose clean-label run scores below it too
    harmful_trained_cells: int
    harm_rows: dict[float, tuple[int, int, float, float]]  # ‖μ‖ of a row with a harmful cell against clean labels →
    # (its harmful cells, its cells that fit every label, their mean cost and its standard deviation across them)
    fitted_cells: int
    test_gain: tuple[float, float]  # test accuracy gained by training: (min, max) over the cells
    noise_cost: tuple[float, float]  # test accuracy the flipped labels cost against clean labels: (min, max)
    test_acc_step0_min: float
    head_below_max_signal_norm: float | None  # the largest ‖μ‖ with a cell whose head alone is below the threshold
    smallest_signal_norm: float  # the grid's smallest ‖μ‖
    fits: dict[str, dict]  # overfit, harmful, harmful_trained: `regimes.boundary_slope` on the map
    grid: tuple[int, int]  # rows of d, columns of ‖μ‖
    paper_cells: dict[str, tuple[float, float]]  # name → (test_acc, train_acc) of Figure 3's cells on the grid
    test_threshold: float

    def metrics(self) -> dict:
        """The numbers under the keys the page glues and the ledger reads (None: not measurable here), and the
        page's sentences (`words`)."""
        out = {f"share_{k}": v for k, v in self.shares.items()}
        out |= {f"share_{k}_trained": v for k, v in self.trained_shares.items()}
        for key, (low, high) in self.loss_range.items():
            out |= {f"{key}_min": low, f"{key}_max": high}
        for name, fit in self.fits.items():
            out |= {f"{name}_{k}_map": _value(v) for k, v in fit.items()}
        for name, (test_acc, train_acc) in self.paper_cells.items():
            out |= {f"{name}_test_acc": test_acc, f"{name}_train_acc": train_acc}
        out |= dict(unfitted_share_above_1=self.unfitted_share_above_1,
                    unfitted_median_n_snr2=self.unfitted_median_n_snr2,
                    harmful_max_snr_times_d_quarter=self.harmful_max_snr_times_d_quarter,
                    harm_threshold=thresholds.HARM.value, harmful_cells=self.harmful_cells,
                    harmful_head_below_share=self.harmful_head_below_share,
                    harmful_clean_below_share=self.harmful_clean_below_share,
                    noise_cost_min=self.noise_cost[0], noise_cost_max=self.noise_cost[1],
                    harmful_trained_cells=self.harmful_trained_cells, fitted_cells=self.fitted_cells,
                    test_gain_min=self.test_gain[0], test_gain_max=self.test_gain[1],
                    test_acc_step0_min=self.test_acc_step0_min,
                    head_below_max_signal_norm=self.head_below_max_signal_norm, grid_rows=self.grid[0],
                    grid_columns=self.grid[1], test_threshold_value=self.test_threshold)
        return out | self.words()

    def words(self) -> dict[str, str]:
        """The page's sentences about what may not be measurable on a small grid (glued as Markdown)."""
        side = "above" if self.unfitted_share_above_1 else "below"
        unfitted = ("Every cell fits every training label" if not self.unfitted_cells else
                    f"The only cell that leaves a training label unfitted lies {side} "
                    f"n·SNR² = 1 (at n·SNR² = {tiny(self.unfitted_median_n_snr2)})" if self.unfitted_cells == 1 else
                    f"Of the {self.unfitted_cells} cells that leave at least one training label unfitted (the map's "
                    "not overfitting, which counts a cell that fits some of its flipped labels), "
                    f"{share_text(self.unfitted_share_above_1)} lie above n·SNR² = 1 (their median n·SNR² is "
                    f"{float(f'{self.unfitted_median_n_snr2:.2g}'):g} at this training length)")  # two digits
        reach = ("no cell is harmful" if self.harmful_max_snr_times_d_quarter is None else
                 f"no harmful cell reaches beyond {self.harmful_max_snr_times_d_quarter:.2f} times SNR = $d^{{-1/4}}$")
        overfit = self.fits["overfit"]
        d_bounded = (overfit["columns"] >= 3 and not math.isnan(overfit["slope_d_se"])
                     and abs(overfit["slope_d"]) + thresholds.SLOPE_SE.value * overfit["slope_d_se"] < 1)
        head = ("the map has no harmful cell" if self.harmful_head_below_share is None else
                f"{share_text(self.harmful_head_below_share)} of the harmful cells are cells where the fixed head "
                "alone scores below the threshold before any training")
        below = f"it falls below {self.test_threshold:.2f}"
        head_below = (f"it is at least {self.test_threshold:.2f} in every cell"
                      if self.head_below_max_signal_norm is None else
                      f"{below} only in the grid's lowest row, ‖μ‖ = {self.head_below_max_signal_norm:g}"
                      if self.head_below_max_signal_norm <= self.smallest_signal_norm else
                      f"{below} in the rows up to ‖μ‖ = {self.head_below_max_signal_norm:g}")
        harmful_of = ("none of the cells is harmful" if not self.harmful_cells else
                      f"the only cell the map calls harmful is {'' if self.harmful_head_below_share else 'not '}a cell "
                      "whose head alone already scores below the threshold" if self.harmful_cells == 1 else
                      f"{share_text(self.harmful_head_below_share)} of the {self.harmful_cells} cells the map calls "
                      "harmful are cells whose head alone already scores below the threshold")
        clean = self.harmful_clean_below_share
        harmful_clean = ("" if not self.harmful_cells else
                         "; in each of them the same run on clean labels scores at or above it" if not clean else
                         f"; in {round(clean * self.harmful_cells)} of them the same run on clean labels scores below "
                         "it too, so the flipped labels are not what puts those cells there")
        return dict(
            test_loss_trend_words=trend_words(self.test_loss_trend), harmful_clean_words=harmful_clean,
            test_gain_span=span(*(signed(x, "+.3f") for x in self.test_gain)),  # one number where both ends read so
            noise_cost_span=span(*(signed(x, "+.3f") for x in self.noise_cost)),
            unfitted_words=unfitted, harmful_reach_words=reach,
            overfit_fit_d_words=fit_words(overfit, "slope_d", self.grid[1]),
            overfit_reading_words=(": the not-overfitting region is bounded by d far more than by ‖μ‖" if d_bounded
                                   else ""),
            overfit_fit_words=fit_words(overfit, "slope", self.grid[0]),
            harmful_fit_words=fit_words(self.fits["harmful"], "slope", self.grid[0]),
            harmful_head_words=head, head_below_words=head_below, harmful_of_words=harmful_of,
            harmful_trained_fit_words=fit_words(self.fits["harmful_trained"], "slope", self.grid[0]),
            harm_rows_words=self.harm_rows_words())

    def harm_rows_words(self) -> str:
        """Where the harm against clean labels lies, row by row, and how its cells' costs spread around the threshold
        (each cell is one run, so a cell near the threshold is not told apart from its row's other cells)."""
        if not self.harm_rows:
            return "No row holds such a cell"
        rows = [f"‖μ‖ = {mu:g}, {harmful} of the {fitted} cells that fit every label (their mean cost "
                f"{signed(mean, '+.3f')}, standard deviation {sd:.3f})"
                for mu, (harmful, fitted, mean, sd) in sorted(self.harm_rows.items())]
        said = f"They lie in {count(len(rows), 'row')}: {and_list(rows)}"
        wide = [f"{mu:g}" for mu, (*_, sd) in sorted(self.harm_rows.items()) if sd >= thresholds.HARM.value]
        where = "the row ‖μ‖ = " + wide[0] if len(wide) == 1 else "the rows ‖μ‖ = " + and_list(wide)
        return said + (f". Each cell is one run, and in {where} the costs spread from cell to cell by as much as the "
                       "threshold or more, so which of those cells cross it is not settled by one draw: the rows' mean "
                       "costs are the firmer reading" if wide else "")


def map_result(cells: pd.DataFrame, maps: dict, d_values, signal_norm_values, n: int,
               test_threshold: float) -> MapResult:
    """Read Figure 5's map: `cells` one row per (d, ‖μ‖) with train/test accuracy and loss, `test_acc_step0`,
    `regime`, `regime_trained` and the control's columns (`regimes.against_clean_labels`); `maps` those as (d, ‖μ‖)
    arrays (`sweep.maps`); n the training samples."""
    unfitted, harmful = cells[cells.regime == "not_overfitting"], cells[cells.regime == "harmful"]
    unfitted_n_snr2 = theory.n_snr2(unfitted.signal_norm, unfitted.d, n)
    head_low = cells.test_acc_step0 < test_threshold  # the head alone already below the paper's rule
    clean_low = cells.clean_test_acc < test_threshold  # ... or the same run on clean labels
    shares = {k: float(v) for k, v in cells.regime.value_counts(normalize=True)
              .reindex(theory.REGIMES, fill_value=0.0).items()}
    trained = {k: float(v) for k, v in cells.regime_trained.value_counts(normalize=True)
               .reindex(theory.REGIMES, fill_value=0.0).items()}
    fits = {key: regimes.boundary_slope(d_values, signal_norm_values, maps["regime"], *pair)
            for key, pair in BOUNDARIES.items()}
    fits["harmful_trained"] = regimes.boundary_slope(d_values, signal_norm_values, maps["regime_trained"],
                                                     *BOUNDARIES["harmful"])
    at = cells.set_index(["d", "signal_norm"])
    paper = {name: (float(at.loc[cell, "test_acc"]), float(at.loc[cell, "train_acc"]))
             for name, cell in PAPER_CELLS.items() if cell in at.index}
    gain = cells.test_acc - cells.test_acc_step0
    return MapResult(
        shares=shares, trained_shares=trained,
        loss_range={k: (float(cells[k].min()), float(cells[k].max())) for k in ("train_loss", "test_loss")},
        test_loss_trend=loss_trends(cells), unfitted_cells=len(unfitted),
        unfitted_share_above_1=float((unfitted_n_snr2 > 1).mean()) if len(unfitted) else None,
        unfitted_median_n_snr2=float(np.median(unfitted_n_snr2)) if len(unfitted) else None,
        harmful_cells=len(harmful),
        harmful_max_snr_times_d_quarter=float((theory.snr(harmful.signal_norm, harmful.d)
                                               / theory.harmful_snr(harmful.d)).max()) if len(harmful) else None,
        harmful_head_below_share=float(head_low[cells.regime == "harmful"].mean()) if len(harmful) else None,
        harmful_clean_below_share=float(clean_low[cells.regime == "harmful"].mean()) if len(harmful) else None,
        harmful_trained_cells=int((cells.regime_trained == "harmful").sum()), harm_rows=harm_rows(cells),
        fitted_cells=int((cells.train_acc >= 1).sum()), test_gain=(float(gain.min()), float(gain.max())),
        noise_cost=(float(cells.noise_cost.min()), float(cells.noise_cost.max())),
        test_acc_step0_min=float(cells.test_acc_step0.min()),
        head_below_max_signal_norm=float(cells.signal_norm[head_low].max()) if head_low.any() else None,
        smallest_signal_norm=float(min(signal_norm_values)),
        fits=fits, grid=(len(d_values), len(signal_norm_values)), paper_cells=paper, test_threshold=test_threshold)


def harm_rows(cells: pd.DataFrame) -> dict[float, tuple[int, int, float, float]]:
    """`MapResult.harm_rows`: per ‖μ‖ row holding a cell harmful against clean labels, its harmful cells, its cells
    that fit every label, and those cells' mean cost and its standard deviation (0 for one cell)."""
    fitted = cells[cells.train_acc >= 1]
    rows = {}
    for mu, row in fitted.groupby("signal_norm"):
        harmful = int((row.regime_trained == "harmful").sum())
        if harmful:
            rows[float(mu)] = (harmful, len(row), float(row.noise_cost.mean()), float(row.noise_cost.std(ddof=0)))
    return rows


def annotate_long(long: pd.DataFrame, steps: list[int], attention_level: float) -> pd.DataFrame:
    """The long runs (`benign.clock`) with what the page draws: the regime at each of `steps` (`regime_T`), the test
    error's course (`regimes.COURSES`), the steps at which the first and the last noisy label are fitted (NaN: never)
    and the first logged step at which the mean test attention on the relevant token reaches `attention_level`."""
    long = long.copy()
    for t in steps:
        long[f"regime_{t}"] = regimes.regime_at(long, t)
    long["course"] = regimes.test_error_course(long)
    long["first_noisy_step"] = regimes.first_noisy_fitted(long)
    long["noisy_fitted_step"] = long.noisy_fitted_first.astype(float)
    long["select_step"] = [timing.crossing(h["step"], h["score_test_relevant"], attention_level) for h in long.history]
    return long


@dataclass(frozen=True)
class CellOverTime:
    """One of Figure 3's cells in the long runs."""

    regimes: dict[int, str]  # step → regime
    first_noisy_step: float | None  # None: never
    noisy_fitted_step: float | None
    select_step: float | None  # first logged step with test attention on the relevant token ≥ the level
    test_acc_long: float  # at the last step


@dataclass(frozen=True)
class TimeResult:
    """Figure 5's cells over training time (`annotate_long`'s frame), read at the map's snapshot steps."""

    steps: list[int]  # the snapshot steps drawn
    num_steps: int  # the map's own step (the paper's snapshot)
    num_steps_long: int
    shares_at: dict[int, dict[str, float]]  # step → regime → share of the cells
    fits_at: dict[int, dict[str, dict]]  # step → boundary (`BOUNDARIES`) → `regimes.boundary_slope`
    grid: tuple[int, int]  # rows of d, columns of ‖μ‖
    runs: int
    noisy_fitted_share: float  # cells that fit every noisy label within the run
    noisy_fitted_steps: tuple[float, float] | None  # (median, latest) of those steps; None: no cell fits
    fitted_step_d_rank_corr: float | None  # rank correlation of d with that step (None: fewer than three cells)
    not_overfitting_end_cells: int
    not_overfitting_end_max_d: float | None
    d_min: float
    test_below_at_step0_share: float
    courses: dict[str, float]  # `regimes.COURSES` → share of the cells
    selected_share: float  # cells whose test attention reaches the level within the run
    paper_cells: dict[str, CellOverTime | None]  # Figure 3's cells; None: not among the long runs
    attention_level: float
    compared: int  # cells shared with the map (`map_cells`) read at its step
    agreement: float | None  # share of them in the same regime there (None: none shared, or its step not run)
    map_not_overfitting_share: float  # the share of the whole map's cells not overfitting at its own step
    map_size: int  # the map's cells
    medians: tuple[float, float]  # the long runs' median d and median ‖μ‖ (over their grid's values)
    map_medians: tuple[float, float]  # the same over the map's values

    def metrics(self) -> dict:
        """The numbers under the keys the page glues and the ledger reads (None: not measurable here), and the
        page's sentences (`words`)."""
        out = {}
        for t in self.steps:
            out |= {f"share_{k}_at_{t}": v for k, v in self.shares_at[t].items()}
            for key, fit in self.fits_at[t].items():
                out |= {f"{key}_{k}_at_{t}": _value(v) for k, v in fit.items()}
        median, latest = self.noisy_fitted_steps or (None, None)
        out |= dict(long_runs=self.runs, noisy_fitted_share_long=self.noisy_fitted_share,
                    noisy_fitted_median_step=median, noisy_fitted_latest_step=latest,
                    fitted_step_d_rank_corr=self.fitted_step_d_rank_corr,
                    not_overfitting_end_cells=self.not_overfitting_end_cells,
                    not_overfitting_end_max_d=self.not_overfitting_end_max_d, d_long_min=self.d_min,
                    test_below_at_step0_share=self.test_below_at_step0_share, attention_level=self.attention_level,
                    selected_share_long=self.selected_share, num_steps=self.num_steps,
                    num_steps_long=self.num_steps_long, long_compared=self.compared, long_agreement=self.agreement,
                    long_grid_rows=self.grid[0], long_grid_columns=self.grid[1])
        out |= {f"course_{k}_share": v for k, v in self.courses.items()}
        for name, cell in self.paper_cells.items():
            if cell is not None:
                out |= {f"{name}_{k}": getattr(cell, k) for k in ("first_noisy_step", "noisy_fitted_step",
                                                                  "select_step", "test_acc_long")}
                out |= {f"{name}_regime_at_{t}": r for t, r in cell.regimes.items()}
        return out | self.words()

    def _at(self, t: int) -> str:
        return f"step {t:,}" + (f" (on the whole map at that step: {share_text(self.map_not_overfitting_share)})"
                                if t == self.num_steps else "")

    def words(self) -> dict[str, str]:
        """The page's sentences about the long runs, for the steps and cells this profile has."""
        shares = and_list([f"{share_text(self.shares_at[t]['not_overfitting'])}"
                           f"{' of their cells' if i == 0 else ''} at {self._at(t)}" for i, t in enumerate(self.steps)])
        (d, mu), (map_d, map_mu) = self.medians, self.map_medians
        grid = ("The long runs are every cell of the map" if self.compared == self.map_size == self.runs else
                f"The long runs are {count(self.runs, 'cell')} of the map's {self.map_size:,}, {self.grid[0]} values "
                f"of d by {self.grid[1]} of ‖μ‖, whose median d is {d:,g} and median ‖μ‖ {mu:g}, against {map_d:,g} "
                f"and {map_mu:g} over the map: their shares are this subgrid's, not the map's")
        if self.noisy_fitted_steps is None:
            fitted = "No cell fits every noisy label within the run"
        else:
            fitted = (f"Every noisy label is fitted within the run in {share_text(self.noisy_fitted_share)} of the "
                      f"long runs' cells (median step {self.noisy_fitted_steps[0]:,.0f}, latest "
                      f"{self.noisy_fitted_steps[1]:,.0f}; the panel *last noisy label fitted*)")
        r = self.fitted_step_d_rank_corr
        fitted_cells = round(self.noisy_fitted_share * self.runs)
        corr = ("Too few cells fit every noisy label to correlate that step with d" if fitted_cells < 3 else
                "The cells that fit every noisy label share one d or one step, so that step has no rank correlation "
                "with d" if r is None else
                f"The rank correlation of d with that step over the cells that fit is {signed(r, '.2f')} "
                f"({correlation_words(r, 'the smaller d', 'the later', 'the earlier')})")
        end = (f"At step {self.steps[-1]:,} no cell is left not overfitting" if not self.not_overfitting_end_cells
               else f"At step {self.steps[-1]:,}, {count(self.not_overfitting_end_cells, 'cell')} "
               f"{'is' if self.not_overfitting_end_cells == 1 else 'are'} left not overfitting, none with d above "
               f"{self.not_overfitting_end_max_d:,.0f} (the long runs start at d = {self.d_min:,.0f})")
        agree = (f"The long runs stop before step {self.num_steps:,}, the map's step, so they are not compared with it"
                 if self.num_steps > self.num_steps_long else
                 "The long runs share no cell with the map above" if not self.compared else
                 f"At step {self.num_steps:,} they give the map above again: {share_text(self.agreement)} of the "
                 f"{count(self.compared, 'cell')} the two computations share {'has' if self.compared == 1 else 'have'} "
                 "the same regime")
        return dict(agreement_words=agree, not_overfitting_over_time_words=shares, long_grid_words=grid,
                    noisy_fitted_words=fitted,
                    fitted_step_corr_words=corr, not_overfitting_end_words=end,
                    boundaries_over_time_words=self.boundary_words(), paper_cells_over_time_words=self.cell_words())

    def boundary_words(self) -> str:
        """Each boundary's slope at every snapshot step, against the theory's."""
        overfit = and_list([fit_words(self.fits_at[t]["overfit"], "slope_d", self.grid[1], f" at step {t:,}")
                            for t in self.steps])
        harmful = and_list([fit_words(self.fits_at[t]["harmful"], "slope", self.grid[0], f" at step {t:,}")
                            for t in self.steps])
        return (f"Along the benign / not-overfitting boundary the slope of log d* against log ‖μ‖ is {overfit}; "
                f"n·SNR² = const would give 2. Along the harmful / benign boundary the slope of log ‖μ*‖ against "
                f"log d is {harmful}; SNR ≍ $d^{{-1/4}}$ would give ¼.")

    def cell_words(self) -> str:
        """A list item per Figure 3 cell: its regimes over time and when its events happen (or that it is not among
        this profile's long runs)."""
        items = []
        for name, (d, mu) in PAPER_CELLS.items():
            label = f"{name.replace('_', ' ')} ({d}, {mu:g})"
            cell = self.paper_cells.get(name)
            if cell is None:
                items.append(f"- {label}: not among this profile's long runs.")
                continue
            over = and_list([f"{regime.replace('_', ' ')} at step{'s' if len(ts) > 1 else ''} "
                             f"{and_list([f'{t:,}' for t in ts])}" for regime, ts in _runs(cell.regimes)])
            last = ("every noisy label fitted " + _steps(cell.noisy_fitted_step) if cell.noisy_fitted_step is not None
                    else "not every noisy label fitted within the run")
            select = (f"its test attention on the relevant token never reaches {self.attention_level:g} at a logged "
                      "step" if cell.select_step is None else f"its test attention on the relevant token reaches "
                      f"{self.attention_level:g} {_steps(cell.select_step)}")
            items.append(f"- {label}: {over}; first noisy label fitted {_steps(cell.first_noisy_step)}, {last}; "
                         f"test accuracy {cell.test_acc_long:.3f} at the end; {select}.")
        return "\n".join(items)


def time_result(long: pd.DataFrame, steps: list[int], num_steps: int, num_steps_long: int, attention_level: float,
                map_cells: pd.DataFrame) -> TimeResult:
    """Read the long runs (`annotate_long`'s frame: a grid of d × ‖μ‖) at the snapshot `steps`, and against the map
    at its own step `num_steps` (`map_cells`: d, signal_norm, regime)."""
    d_values, signal_norm_values, maps = sweep.maps(long, [f"regime_{t}" for t in steps])
    fits_at = {t: {key: regimes.boundary_slope(d_values, signal_norm_values, maps[f"regime_{t}"], *pair)
                   for key, pair in BOUNDARIES.items()} for t in steps}
    shares_at = {t: {k: float((long[f"regime_{t}"] == k).mean()) for k in theory.REGIMES} for t in steps}
    shared = long.merge(map_cells[["d", "signal_norm", "regime"]], on=["d", "signal_norm"])
    agreement = (float((regimes.regime_at(shared, num_steps) == shared.regime).mean())
                 if len(shared) and num_steps <= num_steps_long else None)
    fitted = long[long.noisy_fitted_step.notna()]
    end = long[f"regime_{steps[-1]}"] == "not_overfitting"
    paper = {}
    for name, (d, mu) in PAPER_CELLS.items():
        row = long[(long.d == d) & (long.signal_norm == mu)]
        paper[name] = None if row.empty else CellOverTime(
            regimes={t: row[f"regime_{t}"].iloc[0] for t in steps},
            **{k: _value(float(row[k].iloc[0])) for k in ("first_noisy_step", "noisy_fitted_step", "select_step")},
            test_acc_long=float(row.test_acc.iloc[0]))
    return TimeResult(
        steps=list(steps), num_steps=num_steps, num_steps_long=num_steps_long, shares_at=shares_at, fits_at=fits_at,
        grid=(len(d_values), len(signal_norm_values)), runs=len(long),
        noisy_fitted_share=float(long.noisy_fitted_step.notna().mean()),
        noisy_fitted_steps=(float(fitted.noisy_fitted_step.median()), float(fitted.noisy_fitted_step.max()))
        if len(fitted) else None,
        fitted_step_d_rank_corr=_value(float(fitted.d.rank().corr(fitted.noisy_fitted_step.rank())))
        if len(fitted) > 2 else None,
        not_overfitting_end_cells=int(end.sum()), not_overfitting_end_max_d=float(long.d[end].max()) if end.any()
        else None, d_min=float(min(d_values)), test_below_at_step0_share=float((long.test_error_first == 0).mean()),
        courses={k: float((long.course == k).mean()) for k in regimes.COURSES},
        selected_share=float(long.select_step.notna().mean()), paper_cells=paper, attention_level=attention_level,
        compared=len(shared), agreement=agreement,
        map_not_overfitting_share=float((map_cells.regime == "not_overfitting").mean()), map_size=len(map_cells),
        medians=(float(np.median(d_values)), float(np.median(signal_norm_values))),
        map_medians=(float(np.median(map_cells.d.unique())), float(np.median(map_cells.signal_norm.unique()))))
