"""What the theorem's clock page reads off its runs (`clock.run`), as one typed result: `annotate` adds the times and
the theory's numbers to the runs' table, `clock_result` reads them into a `ClockResult` (one `ModelClock` per model,
a `Delay` per scope of the delayed-generalization rule), whose `metrics()` gives the flat record the page glues and
the claims ledger reads (`rules.clock_rule`, `rules.delayed_condition_rule`, `rules.delayed_rule`, `rules.alpha_rule`),
every key built in one place.

A quantity the runs cannot measure (a slope through one value of n·SNR², a share of no runs) is NaN, saved as null.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from . import theory, thresholds, timing
from .words import (and_list, count, direction, estimate, percent, plus_minus, share_words, slope_words, span_of,
                    spread_format)

MODELS = {"p_only": "p only (W = I)", "W_and_p": "W and p"}  # a model's key in the record → its name on the page
ANALYSED, EXPERIMENTS = MODELS.values()
NOT_MEASURABLY = "does not change measurably"


def annotate(cells: pd.DataFrame, T: int) -> pd.DataFrame:
    """The clock's runs with what the page reads and draws: the model's name, n·SNR² and its inverse, the region by
    the theorem's orders, the prefactor P (‖ν‖ = 1/‖μ‖) and the step-size factor α·d/n; the times τ_benign, τ_noisy,
    τ_select (the clock's exact events) and the logged first step without test error; κ, the test selection lead's
    rate (`timing.lead_rate`); t_fit, t_select and t_test (the test error below δ) of the delayed-generalization rules
    (NaN unless every label is fitted, and for t_select fresh inputs select, for t_test the test error is below δ, at
    the last step) and the theorem's τ with its constants one."""
    cells = cells.copy()
    cells["model"] = np.where(cells.train_W, EXPERIMENTS, ANALYSED)
    cells["n_snr2"] = theory.n_snr2(cells.signal_norm, cells.d, cells.n)
    cells["inverse"] = 1 / cells.n_snr2
    cells["regime_by_order"] = theory.regime(cells.signal_norm, cells.d, cells.n)
    cells["sigma_w2"] = [float(theory.sigma_w2(w, d)) for w, d in zip(cells.W_init, cells.d)]
    cells["prefactor"] = theory.benign_prefactor(cells.learning_rate, cells.n, cells.d, cells.signal_norm,
                                                 1 / cells.signal_norm, cells.sigma_w2)
    cells["factor"] = (cells.learning_rate * cells.d / cells.n).round(6)
    cells["tau_benign"] = cells.benign_first.astype(float)
    cells["tau_noisy"] = cells.noisy_fitted_first.astype(float)
    cells["tau_select"] = cells.test_selected_first.astype(float)
    cells["tau_test_zero"] = [timing.crossing(h["step"], h["test_acc"], 1.0) for h in cells.history]
    cells["kappa"] = [timing.lead_rate(h, T) for h in cells.history]
    fitted_end, selected_end = cells.all_fitted_settled.notna(), cells.test_selected_settled.notna()
    cells["t_fit"] = np.where(fitted_end, pd.to_numeric(cells.all_fitted_first, errors="coerce"), np.nan)
    cells["t_select"] = np.where(fitted_end & selected_end, cells.tau_select, np.nan)
    cells["t_test"] = np.where(fitted_end & cells.test_error_settled.notna(),
                               pd.to_numeric(cells.test_error_first, errors="coerce"), np.nan)
    cells["tau_theorem"] = theory.theorem_time(cells.learning_rate, cells.n, cells.d, cells.signal_norm,
                                               1 / cells.signal_norm, cells.sigma_w2)  # NaN where it gives none
    return cells


def alpha_grid(cells: pd.DataFrame, d_values, n_values) -> pd.DataFrame:
    """The analysed model's runs of the cells run at both step sizes (the test of τ ∝ 1/α)."""
    return cells[cells.d.isin(d_values) & cells.n.isin(n_values) & ~cells.train_W]


@dataclass(frozen=True)
class Share:
    """How many of some runs a condition holds in."""

    count: int
    total: int

    @classmethod
    def of(cls, mask) -> Share:
        mask = np.asarray(mask, dtype=bool)
        return cls(int(mask.sum()), len(mask))

    @property
    def share(self) -> float:
        return self.count / self.total if self.total else float("nan")

    def words(self) -> str:
        """'none of the 84 runs', '3 of the 84 runs', 'all 84 runs' (`words.share_words`)."""
        return share_words(self.count, self.total)


@dataclass(frozen=True)
class SeedSlope:
    """log(τ·prefactor) against 1/(n·SNR²), a line per seed (`timing.fitted_slope`): their mean ± their spread, and
    the runs fitted."""

    slope: float
    spread: float
    runs: int

    @classmethod
    def of(cls, table: pd.DataFrame, column: str) -> SeedSlope:
        return cls(*timing.fitted_slope(table, column))

    def words(self) -> str:
        """'6.4 ± 0.2', rounded to the spread (`words.plus_minus`)."""
        return plus_minus(self.slope, self.spread)

    def table_words(self) -> str:
        """As a table shows it, with the runs fitted: '6.4 ± 0.2 (48 runs)' (`words.estimate`)."""
        return estimate(self.slope, self.spread, self.runs, "run", spread_format(self.spread))

    def trend(self) -> str:
        """'grows', 'shrinks' or 'does not change measurably' as 1/(n·SNR²) rises (marked: `words.direction`)."""
        return direction(self.slope, self.spread, "grows", "shrinks", NOT_MEASURABLY)


@dataclass(frozen=True)
class LineFit:
    """A least-squares slope and its standard error (`timing.line_fit`)."""

    slope: float
    se: float

    @classmethod
    def of(cls, x, y) -> LineFit:
        return cls(*timing.line_fit(x, y))

    def words(self, rising: str = "rises", falling: str = "falls") -> str:
        """Its direction with its numbers rounded to what the error supports (`words.slope_words`): 'grows (slope
        8.8 ± 0.4)', 'rises (slope 2.00 from two points)', 'cannot be fitted (measured at one value only)'."""
        return slope_words(self.slope, self.se, rising, falling, NOT_MEASURABLY)


def at_values(n_snr2) -> str:
    """The values of n·SNR² of some runs, in words: 'n·SNR² = 1 only', 'n·SNR² = 0.5 and 1', 'no n·SNR²'."""
    values = sorted({float(f"{x:.3g}") for x in n_snr2})
    return "no n·SNR²" if not values else f"n·SNR² = {and_list([f'{x:g}' for x in values])}" + (
        " only" if len(values) == 1 else "")


@dataclass(frozen=True)
class ModelClock:
    """One model's times on the main grid: the slopes of its three times over the runs outside the harmful region,
    κ's log–log slope against n·SNR² (n·SNR² ≤ 1), and the selection time in the theory's benign region, with its
    censored bound (`timing.censored_bound`) and the rule's verdict (`timing.clock_verdict`)."""

    benign: SeedSlope  # every label fitted and test error < δ
    noisy: SeedSlope  # every noisy label fitted
    select: SeedSlope  # fresh inputs select their relevant token
    kappa: LineFit  # log κ against log n·SNR²
    select_benign: SeedSlope  # the selection time in the theory's benign region
    bound: float  # the smallest lower bound on that slope where runs do not select (NaN: none)
    bound_cells: int  # groups of one d, n and seed that give a bound
    region: Share  # the benign region's runs that select within the run
    selected_n_snr2: tuple[float, ...]  # their n·SNR²
    selected_steps: tuple[float, ...]  # their selection steps
    reached: tuple[int, int, int]  # runs outside the harmful region that select: all, not-overfitting, benign region

    def verdict(self) -> tuple[str, str]:
        """The rule's (verdict, reason), `timing.clock_verdict` on the benign region's slope and bound."""
        return timing.clock_verdict({"slope": self.select_benign.slope, "spread": self.select_benign.spread,
                                     "bound": self.bound})

    def metrics(self, key: str) -> dict:
        """The record's keys of this model (suffix `key`)."""
        out = {}
        for name in ("benign", "noisy", "select", "select_benign"):
            fit = getattr(self, name)
            out |= {f"{name}_slope_{key}": fit.slope, f"{name}_slope_{key}_std": fit.spread,
                    f"{name}_runs_{key}": fit.runs}
        out |= {f"{name}_slope_words_{key}": getattr(self, name).words() for name in ("benign", "noisy", "select")}
        verdict, reason = self.verdict()
        reached, not_overfitting, benign = self.reached
        return out | {
            f"kappa_slope_{key}": self.kappa.slope, f"kappa_slope_{key}_se": self.kappa.se,
            f"kappa_trend_{key}": direction(self.kappa.slope, self.kappa.se),
            f"benign_trend_{key}": self.benign.trend(),
            f"select_bound_{key}": self.bound, f"select_bound_cells_{key}": self.bound_cells,
            f"clock_verdict_{key}": verdict, f"clock_reason_{key}": reason,
            f"clock_said_{key}": timing.verdict_said(verdict, reason),
            f"select_benign_at_{key}": at_values(self.selected_n_snr2),
            f"select_benign_selected_{key}": self.region.words(),
            f"select_benign_steps_{key}": span_of(pd.Series(self.selected_steps, dtype=float),
                                                  lambda t: f"{t:,.0f}"),
            f"select_where_{key}": (f"{count(reached, 'run')}, {not_overfitting} of them in the theory's "
                                    f"not-overfitting region and {benign} in its benign region")}


def model_clock(main: pd.DataFrame, model: str) -> ModelClock:
    """Read one model's runs of the main grid (`annotate`'s frame)."""
    runs = main[main.model == model]
    fair = runs[runs.regime_by_order != "harmful"]
    rate = fair[(fair.kappa > 0) & (fair.n_snr2 <= 1)]
    region = runs[runs.regime_by_order == "benign"]
    selected = region[region.tau_select.notna()]
    reached = fair[fair.tau_select.notna()]
    return ModelClock(
        benign=SeedSlope.of(runs, "tau_benign"), noisy=SeedSlope.of(runs, "tau_noisy"),
        select=SeedSlope.of(runs, "tau_select"), kappa=LineFit.of(np.log(rate.n_snr2), np.log(rate.kappa)),
        select_benign=SeedSlope.of(region, "tau_select"), **dict(zip(("bound", "bound_cells"),
                                                                   timing.censored_bound(region, "tau_select"))),
        region=Share.of(region.tau_select.notna()), selected_n_snr2=tuple(selected.n_snr2),
        selected_steps=tuple(selected.tau_select),
        reached=(len(reached), int((reached.regime_by_order == "not_overfitting").sum()),
                 int((reached.regime_by_order == "benign").sum())))


HEADLINE = ("delayed_share", "delayed_runs", "gap_slope", "gap_slope_se", "select_time_median", "fit_time_median")


@dataclass(frozen=True)
class Delay:
    """Delayed generalization over one scope of benign runs (`timing.delayed_generalization`'s record), read by the
    selection time (the book's reading) or by the test error (the paper's: `Delay.of(runs, "t_test")`)."""

    benign_runs: int
    delayed_runs: int
    delayed_share: float
    fit_time_median: float
    select_time_median: float
    gap_slope: float
    gap_slope_se: float
    select_slope: float
    select_slope_se: float

    @classmethod
    def of(cls, runs: pd.DataFrame, time: str = "t_select") -> Delay:
        return cls(**timing.delayed_generalization(runs.t_fit, runs[time], runs.inverse))

    def metrics(self, suffix: str, rule=timing.delay_verdict) -> dict:
        """The record's keys of this scope (suffix `suffix`): the headline numbers under their own names, the rest
        as delay_NAME, with `rule`'s (verdict, reason) on them (`timing.delay_verdict`, or for the test error
        `timing.delay_condition_verdict`, which reads the fixed head's step 0 from `asdict`'s record too)."""
        verdict, reason = rule(asdict(self))
        record = asdict(self) | dict(verdict=verdict, reason=reason)
        return {(k if k in HEADLINE else f"delay_{k}") + suffix: v for k, v in record.items()} | {
            f"delay_said{suffix}": timing.verdict_said(verdict, reason),
            f"gap_words{suffix}": LineFit(self.gap_slope, self.gap_slope_se).words("grows", "shrinks"),
            f"delayed_words{suffix}": share_words(self.delayed_runs, self.benign_runs),
            f"delay_benign_words{suffix}": count(self.benign_runs, "benign run")}


@dataclass(frozen=True)
class Condition:
    """The theorem's own benign condition (every label fitted, test error below δ) over the runs of a region: how many
    meet it, the latest first step, how many hold it from then to the last step, and the rest — those that lose it
    again and those that never meet it — with their largest SNR as a multiple of the harmful boundary's d^{-1/4}
    beside the region's largest."""

    met: Share
    settled: Share
    first_latest: float
    lost_again: int
    never: int
    margin: float  # the unsettled runs' largest SNR·d^{1/4}; NaN where every run settles
    region_margin: float

    @classmethod
    def of(cls, region: pd.DataFrame) -> Condition:
        met, settled = region.benign_first.notna(), region.benign_settled.notna()
        margin = theory.snr(region.signal_norm, region.d) / theory.harmful_snr(region.d)
        return cls(Share.of(met), Share.of(settled), float(region.benign_first.max()), int((met & ~settled).sum()),
                   int((~met).sum()), float(margin[~settled].max()) if (~settled).any() else float("nan"),
                   float(margin.max()))

    def words(self) -> str:
        """'meets the condition in 31 of the 33 runs, by step 129 at the latest, and holds it from then to the last
        step in 28 of them; of the other 5, 3 lose it again (the test error rises above δ) and 2 never meet it, all at
        an SNR at most 1.5 times 1/∜d, the harmful boundary (the region's runs reach 3.8 times it)'."""
        said = f"meets the condition in {self.met.words()}"
        if not self.met.count:
            return said
        held = "every one of them" if self.settled.count == self.met.count else f"{self.settled.count} of them"
        said += f", by step {self.first_latest:,.0f} at the latest, and holds it from then to the last step in {held}"
        rest = self.lost_again + self.never
        if not rest:
            return said
        lost = "lose it again" if self.lost_again > 1 else "loses it again"
        parts = ([f"{self.lost_again} {lost} (the test error rises above δ)"] if self.lost_again else []) + (
            [f"{self.never} {'never meet' if self.never > 1 else 'never meets'} it"] if self.never else [])
        margin, region = f"{self.margin:.2g}", f"{self.region_margin:.2g}"
        where = f"an SNR at most {margin} times 1/∜d, the harmful boundary " + (
            "(as far as any run of the region reaches)" if margin == region else
            f"(the region's runs reach {region} times it)")
        if rest == 1:
            return said + f"; the other run {parts[0].split(' ', 1)[1]}, at {where}"
        return said + f"; of the other {rest}, {and_list(parts)}, all at {where}"


@dataclass(frozen=True)
class ClockResult:
    """What the clock page shows: the two models' times (`ModelClock`), the step sizes' test, the fixed head's test
    accuracy, the other candidates for the exponential, delayed generalization (`Delay`) in the theory's benign
    region (the headline), over every benign run and for the experiments' model, and the measured times against the
    theorem's τ. Counts are of the main grid outside the harmful region unless a field says otherwise."""

    analysed: ModelClock  # p only, W = I
    experiments: ModelClock  # W and p trained
    alpha_ratios: tuple[float, float]  # median τ·α at the small step size over the large one: noisy, select
    alpha_factor_ratio: float  # the large step size over the small one
    noisy_small_alpha: SeedSlope  # τ_noisy at the small step size
    select_medians: tuple[tuple[float, float], ...]  # analysed model: (n·SNR², median selection step)
    test_acc_step0: tuple[float, float]  # lowest, median
    test_acc_last_min: float
    test_acc_fell: Share  # runs whose test accuracy ends below its step-0 value
    test_acc_fell_most: float
    test_acc_fell_n_snr2: tuple[float, ...]
    test_error_at_step0: Share  # test error below δ at step 0
    not_overfitting_at_step0: Share
    not_overfitting_settled: Share  # not overfitting from some step to the end
    noisy_fitted: Share  # every noisy label fitted, over every run of the page
    benign_condition: Condition  # analysed model, theory's benign region: the theorem's own condition
    runs: int  # every run of the page
    benign_cells: int  # of them, in the theory's benign region
    test_zero_at_step0: Share  # no test error at all at step 0
    test_zero_never: Share
    test_zero_latest: float
    test_loss_turned: Share  # the test loss's minimum lies before the last step
    delay: Delay  # analysed model, theory's benign region: the headline
    delay_all: Delay  # analysed model, every benign run
    delay_experiments: Delay  # experiments' model, theory's benign region
    delay_test_error: Delay  # analysed model, theory's benign region, in test error: the paper's own reading
    unselected: tuple[int, float]  # headline region: runs that fit every label but never select, their latest fit
    benign_all: tuple[int, int]  # benign runs of the analysed model: all, in the not-overfitting region
    early: tuple[int, float]  # of them, those that select no later than the last noisy fit, their lowest n·SNR²
    select_after_theorem: Share  # theory's benign region: selection later than the theorem's τ (or never)
    fit_vs_theorem: LineFit  # log t_fit against log τ_theorem there
    select_vs_theorem: LineFit

    def metrics(self) -> dict:
        """The record's numbers and the page's words, under the keys the page glues and the ledger reads."""
        out = self.analysed.metrics("p_only") | self.experiments.metrics("W_and_p")
        for name in ("benign_trend", "kappa_trend"):
            out[f"{name}_words"] = timing.models_words(out[f"{name}_p_only"], out[f"{name}_W_and_p"])
        for name, share in (("test_error_at_step0", self.test_error_at_step0), ("noisy_fitted", self.noisy_fitted),
                            ("not_overfitting_at_step0", self.not_overfitting_at_step0),
                            ("not_overfitting_settled", self.not_overfitting_settled),
                            ("benign_settled", self.benign_condition.settled),
                            ("benign_met", self.benign_condition.met), ("test_zero_at_step0", self.test_zero_at_step0),
                            ("test_zero_never", self.test_zero_never)):
            out |= {f"{name}_share": share.share, f"{name}_words": share.words()}
        analysed_region, experiments_region = self.analysed.region, self.experiments.region
        censored = [Share(r.total - r.count, r.total) for r in (analysed_region, experiments_region)]
        out |= dict(
            alpha_ratio_noisy=self.alpha_ratios[0], alpha_ratio_select=self.alpha_ratios[1],
            alpha_factor_ratio=self.alpha_factor_ratio,
            select_medians_words="step " + and_list([f"{t:,.0f} at n·SNR² = {x:g}" if i == 0 else f"{t:,.0f} at {x:g}"
                                                     for i, (x, t) in enumerate(self.select_medians)]),
            test_acc_fell_words=self.test_acc_fell.words(), test_acc_fell_most=self.test_acc_fell_most,
            test_acc_fell_at=at_values(self.test_acc_fell_n_snr2),
            benign_first_latest=self.benign_condition.first_latest, benign_condition_words=self.benign_condition.words(),
            test_acc_step0_min=self.test_acc_step0[0], test_acc_step0_median=self.test_acc_step0[1],
            test_acc_last_min=self.test_acc_last_min, runs=self.runs, benign_cells=self.benign_cells,
            select_censored_benign=censored[0].share,
            select_censored_words=f"{censored[0].words()} of the analysed model and {censored[1].words()} of the "
                                  "experiments' model",
            noisy_slope_small_alpha=self.noisy_small_alpha.slope,
            noisy_slope_small_alpha_std=self.noisy_small_alpha.spread,
            noisy_slope_small_alpha_words=self.noisy_small_alpha.words(),
            noisy_trend_small_alpha=self.noisy_small_alpha.trend(), test_zero_latest=self.test_zero_latest,
            test_loss_turned_share=self.test_loss_turned.share,
            test_loss_turned_words=timing.lowest_at_end_words(self.test_loss_turned.count, self.test_loss_turned.total,
                                                              "outside the harmful region (both models)"))
        out |= self.delay.metrics("") | self.delay_all.metrics("_all") | self.delay_experiments.metrics("_W_and_p")
        step0 = self.test_error_at_step0.share
        out |= self.delay_test_error.metrics("_test_error", lambda m: timing.delay_condition_verdict(
            m | {"test_error_at_step0_share": step0}))
        alpha = dict(select=self.alpha_ratios[1], noisy=self.alpha_ratios[0], alternative=1 / self.alpha_factor_ratio)
        out["alpha_said"] = timing.verdict_said(*timing.alpha_verdict(alpha))
        out["alpha_match_words"] = percent(thresholds.ALPHA_MATCH.value)  # the rule's 'within 10 % of 1'
        (unselected, fit_latest), (benign_all, outside), (early, early_from) = self.unselected, self.benign_all, self.early
        of_them = {0: "none", benign_all: "all"}.get(outside, str(outside))
        out |= dict(delay_min_runs=timing.DELAY_MIN_RUNS, delay_unselected_runs=unselected,
                    delay_unselected_fit_latest=fit_latest, delay_unselected_words=count(unselected, "run"),
                    benign_all_words=f"{count(benign_all, 'run')}, {of_them} of them in the theory's not-overfitting "
                                     "region",
                    early_select_words="in none of the others" if not early else
                    f"in the other {early}, all at n·SNR² of {early_from:.3g} and above",
                    select_after_theorem_words=self.select_after_theorem.words())
        for name, fit in (("fit", self.fit_vs_theorem), ("select", self.select_vs_theorem)):
            out |= {f"{name}_vs_theorem_slope": fit.slope, f"{name}_vs_theorem_slope_se": fit.se,
                    f"{name}_vs_theorem_words": fit.words()}
        return out

    def slopes_table(self, attention_level: float) -> pd.DataFrame:
        """The three times' slopes per model, as the page's first table shows them (`words.estimate`, rounded to
        their spread)."""
        times = {"benign": "τ benign: every label fitted and test error < δ",
                 "noisy": "τ noisy: every noisy label fitted",
                 "select": f"τ select: test attention on the relevant token ≥ {attention_level:g}"}
        return pd.DataFrame({name: {label: getattr(clock, q).table_words() for q, label in times.items()}
                             for name, clock in ((ANALYSED, self.analysed), (EXPERIMENTS, self.experiments))}
                            ).rename_axis("time: slope ± spread over seeds")


def alpha_ratio(grid: pd.DataFrame, column: str) -> float:
    """The median over matched runs (one seed and ‖μ‖) of τ·α at the smaller step size over τ·α at the larger."""
    by_cell = grid.assign(t=grid[column] * grid.learning_rate).pivot_table(index=["seed", "signal_norm"],
                                                                         columns="factor", values="t")
    return float((by_cell[min(grid.factor)] / by_cell[max(grid.factor)]).median())


def clock_result(cells: pd.DataFrame, main_factors, alpha_runs: pd.DataFrame) -> ClockResult:
    """Read the clock's runs (`annotate`'s frame): the main grid is the runs at the step-size factors `main_factors`,
    `alpha_runs` the runs at both step sizes (`alpha_grid`)."""
    main = cells[cells.factor.isin(main_factors)]
    fair = main[main.regime_by_order != "harmful"]
    at0 = np.array([h["test_acc"][0] for h in fair.history])
    region = main[(main.model == ANALYSED) & (main.regime_by_order == "benign")]
    reached = fair[(fair.model == ANALYSED) & fair.tau_select.notna()]
    medians = reached.groupby(reached.n_snr2.round(6)).tau_select.agg(timing.median_step)
    fell = at0 - fair.test_acc.to_numpy() > 1e-9  # the test accuracy ends below its step-0 value
    small, large = min(alpha_runs.factor), max(alpha_runs.factor)
    small_alpha = cells[(cells.factor == small) & ~cells.train_W]
    unselected = region[region.t_fit.notna() & region.tau_select.isna()]
    benign_all = main[(main.model == ANALYSED) & main.t_select.notna() & main.t_fit.notna()]
    early = benign_all[benign_all.t_select <= benign_all.t_fit]  # fresh inputs select no later than the last fit
    theorem = region[region.tau_theorem.notna()]
    fit, select = (theorem[theorem[c] > 0] for c in ("t_fit", "t_select"))
    return ClockResult(
        analysed=model_clock(main, ANALYSED), experiments=model_clock(main, EXPERIMENTS),
        alpha_ratios=(alpha_ratio(alpha_runs, "tau_noisy"), alpha_ratio(alpha_runs, "tau_select")),
        alpha_factor_ratio=large / small, noisy_small_alpha=SeedSlope.of(small_alpha, "tau_noisy"),
        select_medians=tuple(medians.items()),
        test_acc_step0=(float(at0.min()), float(np.median(at0))), test_acc_last_min=float(fair.test_acc.min()),
        test_acc_fell=Share.of(fell), test_acc_fell_most=float((at0 - fair.test_acc.to_numpy()).max()),
        test_acc_fell_n_snr2=tuple(fair.n_snr2[fell]), test_error_at_step0=Share.of(fair.test_error_first == 0),
        not_overfitting_at_step0=Share.of(fair.not_overfitting_first == 0),
        not_overfitting_settled=Share.of(fair.not_overfitting_settled.notna()),
        noisy_fitted=Share.of(cells.noisy_fitted_first.notna()), benign_condition=Condition.of(region), runs=len(cells),
        benign_cells=int((cells.regime_by_order == "benign").sum()),
        test_zero_at_step0=Share.of(fair.tau_test_zero == 0), test_zero_never=Share.of(fair.tau_test_zero.isna()),
        test_zero_latest=float(fair.tau_test_zero.max()),
        test_loss_turned=Share.of(fair.test_loss_min_step < fair.num_steps),
        delay=Delay.of(region), delay_all=Delay.of(main[main.model == ANALYSED]),
        delay_experiments=Delay.of(main[(main.model == EXPERIMENTS) & (main.regime_by_order == "benign")]),
        delay_test_error=Delay.of(region, "t_test"),
        unselected=(len(unselected), float(unselected.t_fit.max())),
        benign_all=(len(benign_all), int((benign_all.regime_by_order == "not_overfitting").sum())),
        early=(len(early), float(early.n_snr2.min())),
        select_after_theorem=Share.of(theorem.t_select.fillna(np.inf) > theorem.tau_theorem),
        fit_vs_theorem=LineFit.of(np.log(fit.tau_theorem), np.log(fit.t_fit)),
        select_vs_theorem=LineFit.of(np.log(select.tau_theorem), np.log(select.t_select)))


def theorem_table(cells: pd.DataFrame, main_factors) -> pd.DataFrame:
    """The theorem's τ (constants one) beside the measured median times of the analysed model on the main grid, by
    n·SNR² and region, where the theorem gives a time."""
    main = cells[cells.factor.isin(main_factors)]
    theorem = main[(main.model == ANALYSED) & main.tau_theorem.notna()]
    table = theorem.assign(x=theorem.n_snr2.round(6)).groupby(["x", "regime_by_order"]).agg(
        theorem=("tau_theorem", "median"), fit=("t_fit", timing.median_step), select=("t_select", timing.median_step),
        selected=("t_select", lambda t: Share.of(t.notna()).words()))
    table.index = table.index.set_names(["n·SNR²", "regime (orders)"])
    table.columns = ["theorem's τ, constants one (steps)", "fitting, median run", "selection, median run",
                     "selecting within the run"]
    table = table.astype(object)
    table.iloc[:, 0] = table.iloc[:, 0].map(timing.order_steps)
    table.iloc[:, 1:3] = table.iloc[:, 1:3].map(lambda t: "—" if t != t else f"{t:,.0f}")
    return table
