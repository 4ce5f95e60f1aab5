"""Reading the clock's runs (`clock.run`): the step at which a logged series crosses a level, least-squares slopes of
log times (their words: `benign.words`), and delayed generalization (fresh inputs select their relevant token only
after the last noisy label is fitted) with its rule, fixed before the run."""

import math

import numpy as np

from . import thresholds
from .words import percent, plain, plus_minus, share_words, signed


def crossing(steps, values, level: float) -> float:
    """The first step at which a logged series reaches `level`, interpolated linearly in log(step) between the two
    logged steps around it (NaN if it never does; 0 if it starts there)."""
    values = np.asarray(values, dtype=float)
    above = np.nonzero(values >= level)[0]
    if not len(above):
        return float("nan")
    i = above[0]
    if i == 0:
        return float(steps[0])
    lo, hi = max(steps[i - 1], 0.5), steps[i]  # step 0 stands at ½ on the log axis
    w = (level - values[i - 1]) / (values[i] - values[i - 1])
    return float(np.exp(np.log(lo) + w * (np.log(hi) - np.log(lo))))


def line_fit(x, y) -> tuple[float, float]:
    """The least-squares slope of y against x and its standard error (NaN unless x takes two values apart by more
    than rounding; the error NaN below three points)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not len(x) or np.ptp(x) <= 1e-9 * max(1.0, float(np.abs(x).max())):
        return float("nan"), float("nan")
    slope, intercept = np.polyfit(x, y, 1)
    if len(x) < 3:
        return float(slope), float("nan")
    residual = y - (intercept + slope * x)
    return float(slope), float(np.sqrt(residual @ residual / (len(x) - 2) / ((x - x.mean()) ** 2).sum()))


def fitted_slope(table, column: str) -> tuple[float, float, int]:
    """The theorem's clock read off a table of runs: the least-squares slope of log(τ·prefactor) against 1/(n·SNR²)
    (columns `inverse`, `prefactor`, and τ in `column`), fitted per seed over the runs not harmful by the theorem's
    order (`regime_by_order`) where τ > 0 was measured; the mean over seeds, their standard deviation, and the runs
    used (NaN, NaN, 0 where no seed has two values of 1/(n·SNR²)). The theorem gives slope one."""
    use = table[(table.regime_by_order != "harmful") & (table[column] > 0)]
    slopes = [np.polyfit(g.inverse, np.log(g[column] * g.prefactor), 1)[0]
              for _, g in use.groupby("seed") if g.inverse.round(9).nunique() >= 2]  # two values beyond rounding
    if not slopes:
        return float("nan"), float("nan"), 0
    return float(np.mean(slopes)), float(np.std(slopes)), len(use)


def lead(s, T: int):
    """The test selection lead L = log((T−1)·s / (1 − s)) of a mean attention s on the relevant token among T tokens:
    0 at uniform attention (s = 1/T), growing without bound as s → 1."""
    s = np.asarray(s, dtype=float)
    return np.log((T - 1) * s / (1 - s))


def lead_rate(history: dict, T: int) -> float:
    """κ: the least-squares slope of the test selection lead (`lead` of the logged `score_test_relevant`) against
    log(step) over a run's last logged decade of steps."""
    steps, s = np.asarray(history["step"], dtype=float), np.asarray(history["score_test_relevant"])
    late = steps >= steps[-1] / 10
    return float(np.polyfit(np.log(steps[late]), lead(s[late], T), 1)[0])


def delayed_generalization(t_fit, t_select, inverse) -> dict:
    """Delayed generalization over the benign runs of one model and step size: runs in which, at the last step, every
    training label is fitted and fresh inputs select their relevant token. Per run, t_fit is the first step at which
    every training label is fitted, t_select the first at which the test inputs' mean attention on their relevant
    token reaches the level (NaN where the condition does not hold at the last step); inverse is 1/(n·SNR²).

    Returns benign_runs; delayed_runs and delayed_share, the runs with t_select > t_fit (the last noisy label fitted
    before fresh inputs select); fit_time_median and select_time_median (`median_step`: a step a run reached);
    gap_slope ± gap_slope_se, the least-squares slope of log(t_select − t_fit) against inverse over the delayed runs,
    and select_slope ± select_slope_se, that of log t_select over the benign runs selecting after step 0."""
    t_fit, t_select, inverse = (np.asarray(v, dtype=float) for v in (t_fit, t_select, inverse))
    benign = ~np.isnan(t_fit) & ~np.isnan(t_select)
    t_fit, t_select, inverse = t_fit[benign], t_select[benign], inverse[benign]
    delayed = t_select > t_fit
    gap_slope, gap_se = line_fit(inverse[delayed], np.log(t_select[delayed] - t_fit[delayed]))
    late = t_select > 0
    select_slope, select_se = line_fit(inverse[late], np.log(t_select[late]))
    nan = float("nan")
    return dict(benign_runs=int(benign.sum()), delayed_runs=int(delayed.sum()),
                delayed_share=float(delayed.mean()) if benign.any() else nan,
                fit_time_median=median_step(t_fit), select_time_median=median_step(t_select),
                gap_slope=gap_slope, gap_slope_se=gap_se, select_slope=select_slope, select_slope_se=select_se)


DELAY_MIN_RUNS = int(thresholds.DELAY_MIN_RUNS.value)  # benign runs below which the delay is "not seen"


SELECT_EVENT, TEST_ERROR_EVENT = "fresh inputs select", "the test error falls below δ"  # a delay's two readings


def delay_verdict(m: dict, event: str = SELECT_EVENT, majority: float = thresholds.MAJORITY.value,
                  errors: float = thresholds.SLOPE_SE.value) -> tuple[str, str]:
    """The rule for delayed generalization, fixed before the run (the ledger's `rules.delayed_rule` and the clock page
    both judge by it), on `delayed_generalization`'s record of the time at which `event` (the reasons say it), as
    (verdict, reason). The claim has two parts: (i) more than `majority` of the benign runs fit their last noisy label
    before `event`, and (ii) the gap grows as n·SNR² falls, its slope against 1/(n·SNR²) above zero by more than
    `errors` standard errors. 'holds' when both do; 'contradicted' when (i) fails or the slope lies more than `errors`
    standard errors below zero; 'holds in part' when (i) holds and (ii) cannot be told (no slope: `event` at one
    n·SNR² only, or one its spread cannot tell from none); 'not seen' with fewer than `DELAY_MIN_RUNS` benign runs.
    The reason is empty where it holds."""
    if m["benign_runs"] < DELAY_MIN_RUNS:
        return "not seen", f"too few benign runs in which {event} within the run"
    slope, se = m["gap_slope"], m["gap_slope_se"]
    if m["delayed_share"] <= majority:
        return "contradicted", f"in most benign runs {event} before the last noisy label is fitted"
    if math.isnan(se):
        return "holds in part", (f"how the delay grows is untested: {event} within the run at one value of n·SNR² "
                                 "only, so the gap's growth cannot be fitted")
    if slope + errors * se < 0:
        return "contradicted", "the gap shrinks as n·SNR² falls"
    if slope - errors * se > 0:
        return "holds", ""
    return "holds in part", "how the delay grows is untested: the spread cannot tell the gap's growth from none"


def delay_scope(m, suffix: str, ends: str, when: str) -> tuple[dict, str]:
    """One scope of the clock page's delay record (`clockread.Delay`'s keys ending `suffix`, in the ledger's
    `verdicts.Record`) as `delay_verdict` reads it, with the ledger's evidence: the theory's benign region's runs that
    fit every label and `ends` by the end, the share that fit the last noisy label before `when` (medians of both
    steps), and the gap's slope."""
    runs = m[f"delay_benign_runs{suffix}"]
    evidence = f"in the theory's benign region, the runs that fit every label and {ends} by the end: {runs:.0f}"
    if runs < m["delay_min_runs"]:
        return {"benign_runs": runs}, evidence
    scope = {k: m.maybe(f"{k}{suffix}") for k in ("delayed_share", "gap_slope", "gap_slope_se")} | {"benign_runs": runs}
    slope, se = scope["gap_slope"], scope["gap_slope_se"]
    return scope, evidence + (
        f"; the last noisy label is fitted first in {percent(scope['delayed_share'])} of them (median: every label "
        f"fitted at step {m[f'fit_time_median{suffix}']:,.0f}, {when} at step {m[f'select_time_median{suffix}']:,.0f}); "
        "the gap against 1/(n·SNR²): " + (f"slope {plus_minus(slope, se)}" if se == se else "no slope fitted "
                                          "(fewer than three delayed runs, or all at one n·SNR²)"))


def delay_condition_verdict(m: dict, majority: float = thresholds.MAJORITY.value) -> tuple[str, str]:
    """The paper's delayed generalization as it states it, in test error (the ledger's
    `rules.delayed_condition_rule` and the clock page both judge by it): 'not testable here' where the fixed head's
    test error is below δ at step 0 in more than `majority` of the runs outside the harmful region
    (`test_error_at_step0_share`), for then training makes no delay in test error; elsewhere `delay_verdict` on the
    step at which the test error falls below δ (`TEST_ERROR_EVENT`)."""
    if m["test_error_at_step0_share"] > majority:
        return "not testable here", ("the fixed head's test error is below δ before any training, so training makes "
                                     "no delay in test error: the delay it makes is in the time at which fresh inputs "
                                     "select, the book's reading")
    return delay_verdict(m, TEST_ERROR_EVENT)


def alpha_verdict(m: dict, match: float = thresholds.ALPHA_MATCH.value) -> tuple[str, str]:
    """The rule for τ ∝ 1/α, written after earlier builds of the clock page had been read (the ledger's
    `rules.alpha_rule` and the clock page both judge by it; its threshold is `ALPHA_MATCH`), on τ·α at the small step size over τ·α at the large one: `select`, the selection time's (the book's reading
    of the theorem's τ), beside `noisy`, the time to fit every noisy label, its control: with small steps, gradient
    descent follows its gradient flow, whose clock is α·step, so any event time scales as 1/α. 'holds' when the
    selection time's ratio is 1 within `match` and the control's is not; 'not testable here' when both are (the law
    is the descent's, shared by every event time, and does not identify the theorem's clock); 'contradicted' when
    the ratio lies nearer in log to `alternative`, a τ that ignores α (α_small/α_large); 'holds in part' between."""
    select, near = abs(math.log(m["select"])), math.log(1 + match)
    if select <= near:
        return ("holds", "") if abs(math.log(m["noisy"])) > near else ("not testable here", (
            "the time to fit the noisy labels, which is not the theorem's clock, scales as 1/α as well: with small "
            "steps every event time of gradient descent does, so the law does not single out the theorem's time"))
    if select < abs(math.log(m["select"] / m["alternative"])):
        return "holds in part", (f"τ·α changes with α by more than {match:.0%}, but less than a τ that ignores α")
    return "contradicted", "τ·α follows a time that ignores α more closely than the theorem's"


def censored_bound(table, column: str, by=("d", "n", "seed")) -> tuple[float, int]:
    """How fast a time rises as n·SNR² falls, from runs that never reach it: per group of runs `by` (one d, n and
    seed), the smallest n·SNR² at which the time (`column`, NaN where the run never reached it) was measured, t, and
    the next smaller n·SNR² of the group, at which it was not reached within the run's `num_steps`, N; there the
    slope of log(time) against 1/(n·SNR²) (column `inverse`) is at least log(N / t) / (the step in 1/(n·SNR²)).
    Returns the smallest such bound over the groups that have one and how many do (NaN, 0 for none)."""
    bounds = []
    for _, g in table.sort_values("inverse").groupby(list(by)):
        measured = g[g[column].notna()]
        if measured.empty:
            continue
        last = measured.iloc[-1]  # the measured run at the largest 1/(n·SNR²)
        beyond = g[(g.inverse > last.inverse) & g[column].isna()]
        if len(beyond):
            nxt = beyond.iloc[0]
            bounds.append(math.log(nxt.num_steps / max(last[column], 1)) / (nxt.inverse - last.inverse))
    return (float(min(bounds)), len(bounds)) if bounds else (float("nan"), 0)


def clock_verdict(m: dict, errors: float = thresholds.SLOPE_SE.value,
                  power: float = thresholds.POWER.value) -> tuple[str, str]:
    """The rule for the theorem's benign time τ = Θ(exp(1/(n·SNR²))/prefactor), read as a straight line of slope one
    of log τ against 1/(n·SNR²) in the theory's benign region, on the step at which fresh inputs select their
    relevant token (the page's stand-in: the fixed head's test error is below δ from step 0, so the theorem's own
    condition times nothing that training does). `m` holds `slope` ± `spread` (fitted over the region's runs that
    select within the run) and `bound` (`censored_bound`: where they select at one n·SNR² and not within the run
    at the next smaller one). A time reached earlier is no contradiction of a time *by which* generalization comes;
    a later one is: 'contradicted' when the bound exceeds one, or the slope exceeds one by more than `errors`
    spreads; 'holds in part' when it lies that far below one; 'holds' within it; 'not seen' without a bound above
    one and without a slope whose spread tells one from zero (`power`). Returns (verdict, reason)."""
    slope, spread, bound = m["slope"], m["spread"], m["bound"]
    if bound > 1:
        return "contradicted", (f"fresh inputs select later than the theorem's time allows: where they do not select "
                                f"within the run, the slope of log τ against 1/(n·SNR²) is at least {bound:.1f}, the "
                                f"formula's is 1 (unless its exponent carries a constant its statement does not "
                                f"give)")
    if math.isnan(spread) or errors * spread >= power:
        return "not seen", ("fresh inputs select within the run at too few values of n·SNR² in the theory's benign "
                            "region to tell the theorem's slope from no exponential law")
    if slope - errors * spread > 1:
        return "contradicted", (f"fresh inputs select later than the theorem's time allows: the slope of log τ "
                                f"against 1/(n·SNR²) is {slope:.1f}, the formula's is 1")
    if slope + errors * spread < 1:
        return "holds in part", ("fresh inputs select earlier than the theorem's time scale: within a time by which "
                                 "generalization comes, but not at its exponential rate")
    return "holds", ""


def order_steps(x: float) -> str:
    """A time the theorem gives only as an order (its constants set to one), in steps as a table shows it: whole
    steps, to two significant digits from 100 on ('4,400', '30', '1'), 'under 1' below one step, '—' where there is
    none (NaN)."""
    if math.isnan(x):
        return "—"
    return "under 1" if x < 1 else f"{float(f'{x:.2g}') if x >= 100 else x:,.0f}"


def median_step(steps) -> float:
    """The median of measured steps as a step one of the runs reached: the lower of the two middle ones for an even
    count (never a fraction such as 28.5); NaN for none."""
    steps = np.sort(np.asarray(steps, dtype=float)[~np.isnan(np.asarray(steps, dtype=float))])
    return float(steps[(len(steps) - 1) // 2]) if len(steps) else float("nan")


def lowest_at_end_words(turned: int, total: int, where: str) -> str:
    """Where a run's test loss turns (its minimum before the last step), in words for `total` runs `where`: 'in
    none of the 84 runs outside the harmful region: in every one its lowest value is at the last step', 'in 3 of
    the 84 runs …; in every other run its lowest value is at the last step', 'in all 84 runs …'."""
    runs = share_words(turned, total)  # "none of the 84 runs" for no run
    rest = {0: ": in every one its lowest value is at the last step", total: ""}.get(
        turned, "; in every other run its lowest value is at the last step")
    return f"in {runs} {where}{rest}"


def models_words(first: str, second: str, names=("the analysed model", "the experiments' model")) -> str:
    """Two models' words said once where they read alike: 'rises for both models', 'does not change measurably for
    either model'; else 'rises for the analysed model and falls for the experiments' model' (direction words may be
    marked: compared without their marks)."""
    if plain(first) == plain(second):  # a negative reads 'for either model' ('does not change … for both' misleads)
        return f"{first} for {'either model' if plain(first).startswith(('does not', 'cannot')) else 'both models'}"
    return f"{first} for {names[0]} and {second} for {names[1]}"


def verdict_said(verdict: str, reason: str) -> str:
    """A rule's verdict with its reason, as a page says it: '**holds in part** — how the delay grows is untested …',
    '**holds**' where there is no reason."""
    return f"**{verdict}**" + (f" — {reason}" if reason else "")
