"""The ledger's rules for the second paper's claims (Magen et al., single-head attention after two steps of gradient
descent): each reads the paper2_two_steps or paper2_snr_heatmap record and returns a `Finding`, as the rules of
`benign.rules` do (which re-exports them for the ledger), with thresholds from `benign.thresholds`."""

from __future__ import annotations

from . import thresholds
from .verdicts import CONTRADICTED, HOLDS, NOT_SEEN, PART, Finding, Record
from .words import percent, signed, span


def paper2_benign_rule(m: Record) -> Finding:
    evidence = (f"train accuracy {m['benign_steps_train_acc']:.3f}, test {m['benign_steps_test_acc']:.3f}; weight on "
                f"the signal: clean inputs {m['benign_steps_clean_signal_attention']:.2f}, noisy inputs "
                f"{m['benign_steps_noisy_signal_attention']:.2f}")
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
    train, test = m["harmful_steps_train_acc"], m["harmful_steps_test_acc"]
    evidence = f"train accuracy {train:.3f}, test {test:.3f}"
    if train == 1 and test < thresholds.NEAR_CHANCE.value:
        return Finding(HOLDS, evidence)
    if test >= thresholds.TEST_GOOD.value:
        return Finding(CONTRADICTED, evidence, "the large first step generalizes")
    return Finding(PART, evidence, "it does not both fit every label and test near chance")


def paper2_boundary_rule(m: Record) -> Finding:
    """SNR at the benign edge ∝ 1/√n (a slope of −1/2 in log–log), fitted over the large-n tail (n ≥ `n_tail_min`,
    fixed before the run; the small n shown apart). The theorem assumes d large against n²: holds within
    `SLOPE_SE` standard errors of −1/2 and farther than that from 0 (no dependence on n) where d is above n² at
    every n of the tail; where it is at most n² at some of them, the same fit holds only in part (the scaling seen
    outside the theorem's assumption); contradicted farther than that from −1/2; not seen when the spread cannot
    tell −1/2 from 0."""
    slope, se = m.maybe("edge_snr_slope_tail"), m.maybe("edge_snr_slope_tail_se")
    k = thresholds.SLOPE_SE.value
    scales = (f"scales as a power of n with exponent {signed(slope, '.2f')} ± {se:.2f}" if se == se else
              "cannot be fitted against n (too few values)")
    evidence = (f"over the {m['edge_tail_n_count']:.0f} values of n from {m.parameters.get('n_tail_min', '?')} on, the "
                f"SNR where benign overfitting starts {scales} (theorem: −0.5, that is 1/√n); "
                f"√n·SNR there averages {m.maybe('edge_sqrt_n_snr_tail_mean'):.2f}")
    if m["edge_small_n_count"] > 0:
        evidence += (f", against {m.maybe('edge_sqrt_n_snr_small_mean'):.2f} at the {m['edge_small_n_count']:.0f} "
                     "smaller n")
    low, high = m.maybe("edge_tail_d_over_n2_min"), m.maybe("edge_tail_d_over_n2_max")
    evidence += (f"; d/n² over the tail is {span(f'{low:.3g}', f'{high:.3g}')} (the theorem assumes d large against "
                 "n²)")
    if se != se:
        return Finding(NOT_SEEN, evidence, "too few values of n in the tail to fit a slope")
    if abs(slope + 0.5) > k * se:
        return Finding(CONTRADICTED, evidence, "the tail's boundary does not scale as 1/√n")
    if k * se >= thresholds.POWER.value * 0.5:
        return Finding(NOT_SEEN, evidence, "the spread cannot tell −0.5 from no dependence on n")
    if not low > 1.02:  # d at most n² (n² itself within 2%) somewhere in the tail
        return Finding(PART, evidence, "the slope is the theorem's, but fitted where d is at most n² at some n, "
                       "outside the theorem's assumption: the scaling is seen there, the theorem is not tested")
    return Finding(HOLDS, evidence)


def paper2_below_rule(m: Record) -> Finding:
    """Below SNR = 1/√n the overfitting is harmful in the paper's sense: every label fitted and a test error that
    does not vanish (mean test accuracy below `NEAR_CHANCE`); contradicted where those cells reach `TEST_GOOD`.
    The clean-label control (the same cells, no label flipped) is quoted: what the flipped labels cost there."""
    test = m["below_boundary_test_acc"]
    evidence = f"mean test accuracy of the cells with SNR < 1/√n: {test:.3f}"
    clean = m.maybe("below_boundary_clean_test_acc")
    if clean == clean:
        evidence += (f"; the same cells on clean labels: {clean:.3f} (the flipped labels cost "
                     f"{signed(m['below_boundary_noise_cost'], '+.3f')} on average, more than "
                     f"{thresholds.HARM.value:g} in {percent(m['below_boundary_costly_share'])} of the cells)")
    if test < thresholds.NEAR_CHANCE.value:
        return Finding(HOLDS, evidence)
    if test >= thresholds.TEST_GOOD.value:
        return Finding(CONTRADICTED, evidence, "the cells below the boundary generalize")
    return Finding(PART, evidence, "well above chance there")
