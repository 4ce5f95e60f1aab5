"""The second paper's claims (Magen et al., single-head attention after two steps of gradient descent): what the
two-step page reads off its runs (`TwoSteps`), and the ledger's rules, each of which reads the paper2_two_steps or
paper2_snr_heatmap record and returns a `Finding`, as the rules of `benign.rules` do, with thresholds from
`benign.thresholds`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from . import thresholds
from .verdicts import CONTRADICTED, HOLDS, NOT_SEEN, PART, UNTESTABLE, Finding, Record
from .words import percent, share_words, signed, span, tiny, within_words

SHOWN_FLOOR = 1e-6  # a number below this reads "below 10⁻⁶" on the two-step page (its text and tables) and here


def weight_words(weight: float) -> str:
    """A softmax weight as the two-step page and the ledger say it: to two decimals ('0.55', '1.00'), or, where two
    decimals would read 0.00, as `words.tiny` says it with `SHOWN_FLOOR` ('below 10⁻⁶', '0.00123'). A softmax
    weight is never 0: a 0 is a float underflow of a tiny one, and reads 'below 10⁻⁶' too."""
    return f"{weight:.2f}" if weight >= 0.005 else tiny(weight or math.ulp(0.0), SHOWN_FLOOR)


FINAL = ("train_acc", "test_acc", "clean_signal_attention", "noisy_signal_attention", "test_signal_attention")


@dataclass(frozen=True)
class Schedule:
    """One step-size schedule's outcome after its two steps."""

    train_acc: float
    test_acc: float
    clean_signal_attention: float  # mean softmax weight on the signal token: clean training inputs
    noisy_signal_attention: float  # … training inputs with a flipped label
    test_signal_attention: float  # … fresh test inputs
    clean_fitted: float  # share of the clean training labels fitted (margin y·f > 0)
    flipped_fitted: float  # share of the flipped ones


@dataclass(frozen=True)
class TwoSteps:
    """What the two-step page reads off its runs: each schedule's outcome (`Schedule`, by the run's name), the
    setting's SNR = ‖μ‖/√d and n·SNR², the flipped labels its draw holds, and the first step's signal and noise
    values of a clean input under the benign schedule's β₁ (the page's derivation: β₁‖μ‖²(1 − 2η)/8 and β₁d/(4n))."""

    schedules: dict[str, Schedule]
    snr: float
    n_snr2: float
    flipped_count: int
    benign_signal_value: float
    benign_noise_value: float

    def metrics(self) -> dict:
        """The record's numbers and the page's words, under the keys the page glues and the ledger reads."""
        out = {f"{name}_{key}": value for name, schedule in self.schedules.items()
               for key, value in vars(schedule).items()}
        benign = self.schedules["benign_steps"]
        return out | dict(snr=self.snr, n_snr2=self.n_snr2, flipped_count=self.flipped_count,
                          benign_steps_signal_value=self.benign_signal_value,
                          benign_steps_noise_value=self.benign_noise_value,
                          benign_steps_clean_signal_weight_words=weight_words(benign.clean_signal_attention),
                          benign_steps_noisy_signal_weight_words=weight_words(benign.noisy_signal_attention))


def two_steps(final: pd.DataFrame, samples: pd.DataFrame, *, n: int, d: int, signal_norm: float, noise_ratio: float,
              benign_first_step: float) -> TwoSteps:
    """The two-step page's reading of `benign.paper2.simulate`'s `final` and `samples` tables (one run per schedule,
    its name in `run`, one of them `benign_steps`) at the setting (n, d, ‖μ‖, η) with the benign schedule's first
    step size β₁. A label is fitted where its margin y·f is positive."""
    train = samples[samples.split == "train"]
    fitted = (train.margin > 0).groupby([train.run, train.noisy]).mean()
    schedules = {}
    for name, row in final.set_index("run").iterrows():
        shares = {noisy: float(fitted.get((name, noisy), float("nan"))) for noisy in (False, True)}
        schedules[name] = Schedule(**{key: float(row[key]) for key in FINAL}, clean_fitted=shares[False],
                                   flipped_fitted=shares[True])
    snr = signal_norm / math.sqrt(d)
    flipped = train[train.run == final.run.iloc[0]].noisy
    return TwoSteps(schedules, snr, n * snr ** 2, int(flipped.sum()),
                    benign_first_step * signal_norm ** 2 * (1 - 2 * noise_ratio) / 8, benign_first_step * d / (4 * n))


def paper2_benign_rule(m: Record) -> Finding:
    """The two-step theorem: every label fitted, test accuracy at least `TEST_GOOD`, clean inputs on their signal
    and noisy ones off it (`SELECTED`). Its control, where the record has it, is the same data after two small steps
    (attention near 1/2, no flipped label fitted): where that run tests as well (within `HARM`), the generalization
    is there without the fitting, and the evidence says that what the steps add is the fitted flipped labels."""
    evidence = (f"train accuracy {m['benign_steps_train_acc']:.3f}, test {m['benign_steps_test_acc']:.3f}; weight on "
                f"the signal: clean inputs {weight_words(m['benign_steps_clean_signal_attention'])}, noisy inputs "
                f"{weight_words(m['benign_steps_noisy_signal_attention'])}")
    small_train, small_test = m.maybe("small_steps_train_acc"), m.maybe("small_steps_test_acc")
    if small_test == small_test:
        evidence += (f"; the same data after two small steps, β = (0.01, 0.01), attention near 1/2: train "
                     f"{small_train:.3f}, test {small_test:.3f}")
        if small_test >= m["benign_steps_test_acc"] - thresholds.HARM.value:
            evidence += ", so what the suitable steps add is the fitted flipped labels, not the test accuracy"
    level = thresholds.SELECTED.value
    interpolates, generalizes = m["benign_steps_train_acc"] == 1, m["benign_steps_test_acc"] >= thresholds.TEST_GOOD.value
    routes = m["benign_steps_clean_signal_attention"] > level > m["benign_steps_noisy_signal_attention"]
    if interpolates and generalizes and routes:
        return Finding(HOLDS, evidence)
    failed = [what for what, ok in (("it does not fit every label", interpolates),
                                    (f"its test accuracy is below {thresholds.TEST_GOOD.value:g}", generalizes),
                                    ("clean and noisy inputs do not attend as the theorem says", routes)) if not ok]
    if not interpolates and not generalizes:
        return Finding(CONTRADICTED, evidence, "; ".join(failed))
    return Finding(PART, evidence, "; ".join(failed))


def paper2_harmful_rule(m: Record) -> Finding:
    """The book's hypothesis on a first step too large: every label fitted, by the noise (clean and noisy training
    inputs both put less than `SELECTED` on their signal token), and fresh inputs classified nearer chance than
    perfect (test accuracy below `NEAR_CHANCE`), where the control — the same data with the theorem's suitable step
    sizes — generalizes (`TEST_GOOD`), so the loss is the large step's; contradicted where the run generalizes, in
    part otherwise, naming what fails."""
    train, test = m["harmful_steps_train_acc"], m["harmful_steps_test_acc"]
    clean, noisy = m["harmful_steps_clean_signal_attention"], m["harmful_steps_noisy_signal_attention"]
    control = m["benign_steps_test_acc"]
    evidence = (f"train accuracy {train:.3f}, test {test:.3f} (the same data with the suitable step sizes: test "
                f"{control:.3f}); weight on the signal: clean inputs {weight_words(clean)}, noisy inputs "
                f"{weight_words(noisy)}")
    if test >= thresholds.TEST_GOOD.value:
        return Finding(CONTRADICTED, evidence, "the large first step generalizes")
    level, near, good = thresholds.SELECTED.value, thresholds.NEAR_CHANCE.value, thresholds.TEST_GOOD.value
    failed = [what for what, ok in (("it does not fit every label", train == 1),
                                    ("the training inputs do not attend to their noise", max(clean, noisy) < level),
                                    (f"its test accuracy is at least {near:g}", test < near),
                                    (f"the suitable step sizes test below {good:g} on the same data too: the loss is "
                                     "not the large step's alone", control >= good)) if not ok]
    return Finding(PART, evidence, "; ".join(failed)) if failed else Finding(HOLDS, evidence)


def paper2_boundary_rule(m: Record) -> Finding:
    """SNR at the benign edge ∝ 1/√n (a slope of −1/2 in log–log), fitted over the large-n tail (n ≥ `n_tail_min`,
    fixed before the run; the small n shown apart). The theorem assumes d large against n²: holds within
    `SLOPE_SE` standard errors of −1/2 and farther than that from 0 (no dependence on n) where d is above n² at
    every n of the tail; where it is at most n² at some of them, the same fit holds only in part (the scaling seen
    outside the theorem's assumption; the cause says whether at every n of the tail or at some); contradicted
    farther than that from −1/2; not seen when the spread cannot tell −1/2 from 0. Its control is the edge the book's
    first-step estimate predicts on the same grid without any run (`paper2_edge.first_step_cells`): with step sizes
    β_t = c_t·n/d that estimate's √n·SNR is flat, so where the measured slope lies within `SLOPE_SE` standard errors
    of the control's (or the record has no control) the theorem's slope is not testable here."""
    slope, se = m.maybe("edge_snr_slope_tail"), m.maybe("edge_snr_slope_tail_se")
    k = thresholds.SLOPE_SE.value
    scales = (f"scales as a power of n with exponent {signed(slope, '.2f')} ± {se:.2f}" if se == se else
              "cannot be fitted against n (too few values)")
    evidence = (f"over the {m['edge_tail_n_count']:.0f} values of n from {m.parameters.get('n_tail_min', '?')} on, the "
                f"SNR where benign overfitting starts {scales} (theorem: −0.5, that is 1/√n; the fit "
                f"{within_words(slope, se, -0.5, k)}); "
                f"√n·SNR there averages {m.maybe('edge_sqrt_n_snr_tail_mean'):.2f}")
    if m["edge_small_n_count"] > 0:
        evidence += (f", against {m.maybe('edge_sqrt_n_snr_small_mean'):.2f} at the {m['edge_small_n_count']:.0f} "
                     "smaller n")
    low, high = m.maybe("edge_tail_d_over_n2_min"), m.maybe("edge_tail_d_over_n2_max")
    evidence += (f"; d/n² over the tail is {span(f'{low:.2g}', f'{high:.2g}')} (the theorem assumes d large against "
                 "n²)")
    control = m.maybe("first_step_edge_slope_tail")
    if control == control:
        evidence += (f"; the control, the edge the book's first-step estimate n·SNR² = 2/(1 − 2η) predicts on the same "
                     f"grid without any run, has slope {signed(control, '.2f')}, the measured fit "
                     f"{within_words(slope, se, control, k)}; it is the measured edge at "
                     + share_words(round(m["edge_tail_on_first_step_count"]), round(m["edge_tail_n_count"]), "n", "n")
                     + " of the tail")
    if se != se:
        return Finding(NOT_SEEN, evidence, "too few values of n in the tail to fit a slope")
    if abs(slope + 0.5) > k * se:
        return Finding(CONTRADICTED, evidence, "the tail's boundary does not scale as 1/√n")
    if k * se >= thresholds.POWER.value * 0.5:
        return Finding(NOT_SEEN, evidence, "the spread cannot tell −0.5 from no dependence on n")
    where = "" if low > 1.02 else "every n of the tail" if not high > 1.02 else "some n of the tail"  # d ≤ n² (±2%)
    outside = f"fitted where d is at most n² at {where}, outside the theorem's assumption" if where else ""
    if not abs(slope - control) > k * se:  # a NaN control too: what the step sizes alone give is not measured
        said = ("the first-step control predicts the same slope: with step sizes βₜ = cₜ·n/d the book's first-step "
                "signal and noise values depend on n·SNR² alone, so a flat √n·SNR follows from the choice of step "
                "sizes, and the slope is no evidence for the theorem beyond it" if control == control else
                "the record has no first-step control: whether the step sizes alone give this slope is not measured")
        return Finding(UNTESTABLE, evidence, f"{said}; besides, it is {outside}" if outside else said)
    if outside:
        return Finding(PART, evidence, f"the slope is the theorem's, but {outside}: the scaling is seen there, the "
                       "theorem is not tested")
    return Finding(HOLDS, evidence)


def paper2_below_rule(m: Record) -> Finding:
    """The book's hypothesis: below SNR = 1/√n two steps overfit harmfully, in the sense of the paper's result for the
    max-margin interpolator: every label fitted (mean train accuracy 1) and a test error that does not vanish (mean
    test accuracy below `NEAR_CHANCE`, nearer chance than perfect); contradicted where those cells reach `TEST_GOOD`,
    in part otherwise (the labels fitted only in part, or a test accuracy between the two). Harm is what the flipped
    labels cost against the clean-label control (the same cells, no label flipped): it holds only where most cells
    (`MAJORITY`) lose more than `HARM` to their control and the control itself is nearer perfect than chance; where
    not, the low accuracy is mostly the SNR's, and the hypothesis holds in part."""
    train, test = m["below_boundary_train_acc"], m["below_boundary_test_acc"]
    evidence = f"cells with SNR < 1/√n: mean train accuracy {train:.3f}, mean test accuracy {test:.3f}"
    clean = m.maybe("below_boundary_clean_test_acc")
    if clean == clean:
        evidence += (f"; the same cells on clean labels: {clean:.3f} (the flipped labels cost "
                     f"{signed(m['below_boundary_noise_cost'], '+.3f')} on average, more than "
                     f"{thresholds.HARM.value:g} in {percent(m['below_boundary_costly_share'])} of the cells)")
    if test >= thresholds.TEST_GOOD.value:
        return Finding(CONTRADICTED, evidence, "the cells below the boundary generalize")
    if train < 1:
        return Finding(PART, evidence, "the training labels are fitted only in part there")
    if test < thresholds.NEAR_CHANCE.value:
        if clean != clean:
            return Finding(PART, evidence, "no clean-label control was run: what the flipped labels cost is not measured")
        if m["below_boundary_costly_share"] <= thresholds.MAJORITY.value:
            return Finding(PART, evidence, "on clean labels most of the same cells score as low: the shortfall is the "
                           "SNR's, not the flipped labels'")
        if clean < thresholds.NEAR_CHANCE.value:
            return Finding(PART, evidence, f"on clean labels the same cells score nearer chance than perfect too "
                           f"({clean:.3f}): the flipped labels add to a shortfall that is mostly the SNR's")
        return Finding(HOLDS, evidence)
    return Finding(PART, evidence, f"the test accuracy is at least {thresholds.NEAR_CHANCE.value:g}: nearer perfect "
                   "than chance")
