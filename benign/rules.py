"""The ledger's rules: each reads one notebook's metrics.json record (`Record`) and returns a `Finding` — a verdict,
one of `VERDICTS`, the evidence as numbers and, short of *holds*, the cause.

Every rule can reach *holds* and *contradicted* (tests/test_ledger.py feeds each hand-built records for both), and
says *not seen* only where the data are too weak to tell (a power condition, stated in the rule). Every threshold is
a `benign.thresholds` value, with its reason. Effects are measured against a control: the run's own step 0
(the fixed head alone) and, where labels are noisy, the same run on clean labels. The second paper's rules are in
`benign.paper2_rules`, the real-data claims' in `benign.realdata_rules`.
"""

from __future__ import annotations

import math
from typing import Callable

from . import thresholds, timing
from .theory import head_test_accuracy
from .verdicts import (CONTRADICTED, HOLDS, NOT_SEEN, PART, UNTESTABLE, Finding, Record, fitted, seeds_fit_every_label,
                       spread)
from .words import and_list, percent, plus_minus, share_text, share_words, signed, step_count, within_words


def regime_rule(prefix: str, named: str) -> Callable[[Record], Finding]:
    """A named setting of Figure 3 is in its regime on every seed, judged by what training adds
    (`synthetic.controls`): `benign` fits every label, loses no more than `HARM` against its own step 0 and makes
    fresh inputs select their relevant token (`SELECTED`); `harmful` fits every label and loses more than `HARM`
    both against its own step 0 and against the same run on clean labels; `not_overfitting` fits none of the noisy
    labels. Contradicted where every seed shows the opposite; in part where seeds or parts disagree."""
    harm, selected = thresholds.HARM.value, thresholds.SELECTED.value

    def rule(m: Record) -> Finding:
        total = m[f"{prefix}_noisy_count"]
        evidence = f"noisy labels fitted {fitted(m, prefix)}"
        if named == "not_overfitting":
            draws = m.maybe(f"{prefix}_draws")
            if draws == draws:  # the outcome distribution over draws of (data, W₀): a majority decides
                none, every_fitted = m[f"{prefix}_draws_none_fitted_share"], m[f"{prefix}_draws_all_fitted_share"]
                total = round(draws)
                unfitted, all_fitted = round(none * total), round(every_fitted * total)
                evidence += (f"; over {total} draws of (data, W₀) on the authors' stream, "
                             f"{_draws_doing(unfitted, total, 'leaves', 'leave')} every noisy label unfitted at the "
                             f"last step and {_draws_doing(all_fitted, total, 'fits', 'fit')} them all")
                if none > thresholds.MAJORITY.value:
                    return Finding(HOLDS, evidence)
                some = f"{_draws_doing(total - unfitted, total, 'fits', 'fit')} some noisy label by the last step"
                if 1 - none > thresholds.MAJORITY.value:
                    return Finding(CONTRADICTED, evidence, f"{some}: the setting is on its way to fitting them, not "
                                   "out of reach of them")
                return Finding(PART, evidence, some)
            low, high = m[f"{prefix}_noisy_fitted_min"], m[f"{prefix}_noisy_fitted_max"]
            if high == 0:
                return Finding(HOLDS, evidence)
            if low == total:
                return Finding(CONTRADICTED, evidence, "every noisy label is fitted on every seed")
            return Finding(PART, evidence, "some noisy labels are fitted on at least one seed")
        every, none = seeds_fit_every_label(m, prefix)
        # losses and costs beyond `harm` (`thresholds.beyond`: 10 samples in 1000 is not more than 0.01)
        lost_every, lost_some = (bool(thresholds.beyond(-m[f"{prefix}_test_gain_{e}"], harm)) for e in ("max", "min"))
        evidence += (f"; test accuracy {m[f'{prefix}_test_acc_step0']:.3f} at step 0 (head alone), "
                     f"{spread(m, f'{prefix}_test_acc')} at the end, so training adds "
                     f"{spread(m, f'{prefix}_test_gain', '+.3f')}")
        cost_every, cost_some = (bool(thresholds.beyond(m[f"{prefix}_noise_cost_{e}"], harm)) for e in ("min", "max"))
        if named == "benign":
            attention_low = m[f"{prefix}_test_attention_relevant_min"]
            attention_high = m[f"{prefix}_test_attention_relevant_max"]
            evidence += (f"; fresh inputs' attention on their relevant token "
                         f"{spread(m, f'{prefix}_test_attention_relevant', '.2f')}, 1/T = {1 / m.parameters['T']:.3f} "
                         "(uniform) at step 0")
            evidence += (f"; test accuracy of the same runs on clean labels minus theirs "
                         f"{spread(m, f'{prefix}_noise_cost', '+.3f')}")
            if every and not lost_some and attention_low > selected and not cost_some:
                return Finding(HOLDS, evidence)
            if none or lost_every or attention_high <= selected:
                return Finding(CONTRADICTED, evidence, "no seed fits every label" if none else
                               "training costs test accuracy on every seed" if lost_every else
                               "fresh inputs do not select their relevant token on any seed")
            return Finding(PART, evidence, "not every seed fits every label" if not every else
                           "training costs test accuracy on some seed" if lost_some else
                           "fresh inputs do not select their relevant token on every seed" if attention_low <= selected
                           else "the flipped labels cost test accuracy against the same runs on clean labels")
        evidence += (f"; test accuracy of the same runs on clean labels minus theirs "
                     f"{spread(m, f'{prefix}_noise_cost', '+.3f')}; balanced setting {spread(m, 'balanced_test_acc')}")
        if every and lost_every and cost_every:
            return Finding(HOLDS, evidence)
        if none or not lost_some or not cost_some:
            return Finding(CONTRADICTED, evidence, "no seed fits every label" if none else
                           "no seed loses test accuracy against its own step 0: its distance from the balanced "
                           "setting is the head's accuracy, there before training" if not lost_some else
                           "the flipped labels cost no seed test accuracy against the same run on clean labels")
        return Finding(PART, evidence, "not every seed fits every label" if not every else
                       "training costs test accuracy against step 0 on some seeds, not every one" if not lost_every else
                       "training costs test accuracy against step 0, but on " + share_words(
                           m[f"{prefix}_noise_cost_free_seeds"], round(m["replicates"]), "seed", "seeds") + " the "
                       "same run on clean labels loses as much: there the cost is training's, not the flipped labels'")
    return rule


def _draws_doing(k: int, total: int, one: str, many: str) -> str:
    """How many of `total` draws do something, the verb agreeing: 'no draw fits', '1 fits', '7 fit', 'every draw
    fits'."""
    return ("no draw " + one if k == 0 else f"every draw {one}" if k == total else
            f"{k} {one if k == 1 else many}")


def head_alone(m: Record) -> tuple[float, str]:
    """Figure 1's control, where the record holds its setting (else NaN and no words): the fixed head with p = 0
    (uniform attention), whose test accuracy Φ(‖μ‖/√(2T)) (σ_ε = 1: the model page) a query's is read against."""
    s = m.parameters
    if "signal_norm" not in s or "T" not in s:
        return float("nan"), ""
    head, z = head_test_accuracy(s["signal_norm"], s["T"]), s["signal_norm"] / math.sqrt(2 * s["T"])
    return head, f"; the head alone (p = 0, uniform attention) tests at Φ(‖μ‖/√(2T)) = Φ({z:.3g}) = {head:.2f}"


def fig1_rule(column: str) -> Callable[[Record], Finding]:
    """Figure 1's hand-built queries, over many data draws where the record has them (`benign.draws`), else over its
    replicates: benign fits every label (in most draws) and tests at `TEST_GOOD` or above; harmful fits every label
    and tests more than `HARM` below benign; not overfitting fits none of the flipped labels and tests at
    `TEST_GOOD` or above — not testable where the head alone (p = 0, `head_test_accuracy`) already tests at
    `TEST_GOOD`: then it is in that state before any query (as Theorem 4.2's not-overfitting case reads its step 0)."""
    harm, good, most = thresholds.HARM.value, thresholds.TEST_GOOD.value, thresholds.MAJORITY.value

    def rule(m: Record) -> Finding:
        draws = m.maybe(f"{column}_draws")
        if draws == draws:  # the outcome distribution over draws
            share = m[f"{column}_draws_none_fitted_share" if column == "not_overfitting" else
                      f"{column}_draws_all_fitted_share"]
            test = m[f"{column}_draws_test_acc_median"]
            evidence = (f"over {draws:.0f} data draws: " +
                        (f"{percent(share)} leave every flipped label unfitted" if column == "not_overfitting" else
                         f"{percent(share)} fit every label") +
                        f"; median test accuracy {test:.2f}")
            ok_train = share > most
            if column == "harmful":
                benign = m["benign_draws_test_acc_median"]
                evidence += f" (benign column: {benign:.2f})"
                ok_test = test < benign - harm
            else:
                ok_test = test >= good
        else:
            train, test = m[f"{column}_train_acc_min"], m[f"{column}_test_acc_min"]
            evidence = (f"train accuracy {spread(m, f'{column}_train_acc', '.2f')}, test "
                        f"{spread(m, f'{column}_test_acc', '.2f')}")
            if column == "harmful":
                ok_train, ok_test = train == 1, m["harmful_test_acc_max"] < m["benign_test_acc_min"] - harm
            elif column == "benign":
                ok_train, ok_test = train == 1, test >= good
            else:
                ok_train = m["not_overfitting_train_acc_max"] <= 1 - m["noisy_share"] + 1e-9
                ok_test = test >= good
        head, words = head_alone(m)
        evidence += words
        if column == "not_overfitting" and ok_train and ok_test and head >= good:
            return Finding(UNTESTABLE, evidence, f"the head alone (p = 0) is already in that state: it tests at "
                           f"{head:.2f}, at least {good:g}, and classifies the training samples by their signal, so it "
                           "leaves the flipped labels unfitted — the column shows nothing a query adds")
        if ok_train and ok_test:
            return Finding(HOLDS, evidence)
        causes = [c for c, ok in (("the train accuracy is not as named", ok_train),
                                  ("the test accuracy is not as named", ok_test)) if not ok]
        return Finding(PART if ok_train or ok_test else CONTRADICTED, evidence, "; ".join(causes))
    return rule


def selection_rule(m: Record) -> Finding:
    """Figure 3, balanced: clean samples attend to their relevant token, noisy ones to the weak token of their
    flipped label."""
    clean, noisy = m["balanced_score_clean_relevant"], m["balanced_score_noisy_weak_opposite"]
    level = thresholds.SELECTED.value
    evidence = (f"mean final attention: clean samples on the relevant token {clean:.2f}, noisy samples on the weak "
                f"token of their flipped label {noisy:.2f} (a token is selected above {level:g}")
    evidence += f"; uniform attention at step 0: 1/T = {1 / m.parameters['T']:.3f})" if "T" in m.parameters else ")"
    if clean > level and noisy > level:
        return Finding(HOLDS, evidence)
    return Finding(PART if clean > level or noisy > level else CONTRADICTED, evidence,
                   "one kind of sample does not put most of its attention where the claim says")


def three_regions(shares: dict[str, float], evidence: str) -> Finding:
    """Holds when each of the three regimes holds at least `REGION` of a map's cells; in part with two."""
    present = [k for k, v in shares.items() if v >= thresholds.REGION.value]
    if len(present) == 3:
        return Finding(HOLDS, f"{evidence}; each a region, at least {percent(thresholds.REGION.value)} of the cells")
    missing = " or ".join(f"{k.replace('_', ' ')} ({percent(v, '.1%')} of the cells)" if v else
                          f"{k.replace('_', ' ')} (no cell)" for k, v in shares.items() if k not in present)
    needs = percent(thresholds.REGION.value)
    return Finding(PART if len(present) == 2 else CONTRADICTED, evidence,
                   f"no region of {missing}: a region needs at least {needs} of the grid's cells")


def papers_rule_words(m: Record) -> str:
    """The paper's threshold rule beside a map read against clean labels: its harmful share, and how many of those
    cells score as low on clean labels (so that the flipped labels are not what puts them there)."""
    clean, harmful = m.maybe("harmful_clean_below_share"), percent(m["share_harmful"], ".1%")
    return (f" (by the paper's rule, test accuracy at least {m['test_threshold_value']:g}: harmful {harmful}" +
            (f", of which {percent(clean)} are cells whose clean-label run scores below it{' too' * bool(clean)})"
             if m["share_harmful"] else ")"))


def regions_rule(m: Record) -> Finding:
    """Three regions on the step-1000 map judged against the same runs on clean labels (`regimes.trained_regime`:
    harmful = every label fitted and more than `HARM` of test accuracy lost to them): a regime is a region when it
    holds at least `REGION` of the cells."""
    shares = {k: m[f"share_{k}_trained"] for k in ("benign", "harmful", "not_overfitting")}
    return three_regions(shares, "share of the grid's cells at the last step, against the same run on clean labels: "
                         + ", ".join(f"{k.replace('_', ' ')} {percent(v, '.1%')}" for k, v in shares.items())
                         + papers_rule_words(m))


def encoder_regions_rule(m: Record) -> Finding:
    """Figure 7: the one-layer encoder's map shows Figure 5's three regions where the theory puts them. Two parts:
    each regime holds at least `REGION` of the cells (`three_regions`) against the same runs on clean labels, read as
    Figure 6 reads its seeds (`onelayer.seed_reading`: near chance is neither), the paper's rule beside it; and the
    test loss is ordered as the theory orders harm (SNR ≍ d^(−1/4)): it grows towards large d and falls towards large
    ‖μ‖ (slopes against log d and log ‖μ‖, a direction beyond `SLOPE_SE` standard errors). Holds when both hold;
    contradicted when fewer than two regions appear or the test loss moves against the theory on either axis; in
    part otherwise, the cause naming every part that fails."""
    shares = {k: m[f"share_{k}_trained"] for k in ("benign", "harmful", "not_overfitting")}
    near = m.maybe("share_near_chance_trained")  # neither benign nor harmful (`onelayer.seed_reading`)
    errors = thresholds.SLOPE_SE.value
    slopes = {axis: (m[f"test_loss_slope_log_{axis}"], m[f"test_loss_slope_log_{axis}_se"])
              for axis in ("d", "signal_norm")}
    evidence = ("share of the encoder grid's cells by what training with the flipped labels adds, against the same "
                "run on clean labels (harmful: every label fitted and more than "
                f"{percent(thresholds.HARM.value)} of test accuracy lost): " +
                ", ".join(f"{k.replace('_', ' ')} {percent(v, '.1%')}" for k, v in shares.items()) +
                (f", near chance (neither: the run and its clean-label run both end below {thresholds.NEAR_CHANCE.value:g}"
                 f", a loss within sampling) {percent(near, '.1%')}" if near > 0 else "") +
                papers_rule_words(m) +
                "; the test loss against log d: slope {}, against log ‖μ‖: slope {} (the theory: above zero, below "
                "zero); its largest at d = {:g}, ‖μ‖ = {:.3g}".format(
                    *(f"{signed(b, '+.2f')} ± {se:.2f}" for b, se in slopes.values()), m["test_loss_max_d"],
                    m["test_loss_max_signal_norm"]) +
                f"; final losses inside the paper's colour limits: train {percent(m['share_train_loss_in_paper_limits'])}, "
                f"test {percent(m['share_test_loss_in_paper_limits'])} of the cells")
    regions = three_regions(shares, evidence)
    wanted = {"d": (1, "grow towards large d"), "signal_norm": (-1, "fall towards large ‖μ‖")}
    trend = {axis: (0 if abs(b) <= errors * se else 1 if b > 0 else -1) for axis, (b, se) in slopes.items()}
    unordered = [f"it does not {words} (no measurable trend)" if trend[axis] == 0 else f"it does not {words}: it "
                 f"{'falls' if trend[axis] < 0 else 'grows'} instead" for axis, (sign, words) in wanted.items()
                 if trend[axis] != sign]
    if regions.verdict == HOLDS and not unordered:
        return Finding(HOLDS, regions.evidence)  # with what counts as a region, as `three_regions` says it
    causes = ([regions.cause] if regions.cause else []) + (
        ["the test loss is not ordered as the theory orders harm: " + "; ".join(unordered)] if unordered else [])
    against = any(trend[axis] == -sign for axis, (sign, _) in wanted.items())
    return Finding(CONTRADICTED if regions.verdict == CONTRADICTED or against else PART, evidence, "; ".join(causes))


def boundary_rule(key: str, theory: float, alternative: float, what: str,
                  against: str) -> Callable[[Record], Finding]:
    """A boundary's measured slope (`key`: its fit on the step-1000 map, `key_at_T` at the long runs' last step T)
    against the theory's, within `SLOPE_SE` standard errors. The fit has power when `POWER` times the distance
    between the theory's slope and its `alternative` (the slope `against` would give) exceeds two standard errors;
    without power at either time the verdict is 'not seen'; with power and no match at either, 'contradicted'."""
    k, power = thresholds.SLOPE_SE.value, thresholds.POWER.value * abs(theory - alternative)

    def rule(m: Record) -> Finding:
        last = int(m["num_steps_long"])
        fits = [(m.maybe(f"{key}_map"), m.maybe(f"{key}_se_map"), f"step {step_count(m['num_steps'])}")]
        if dict.get(m, f"{key}_at_{last}", "absent") != "absent":  # the long runs' map has this boundary
            fits.append((m.maybe(f"{key}_at_{last}"), m.maybe(f"{key}_se_at_{last}"), f"step {step_count(last)}"))
        evidence = f"{what}: " + ", ".join(
            (f"{signed(slope, '.2f')} ± {se:.2f} at {when}" if se == se else f"no fit at {when}")
            for slope, se, when in fits) + (
            f" (the theory's slope: {theory:g}; " +
            ", ".join(f"at {when} {within_words(slope, se, theory, k)}" for slope, se, when in fits) +
            f"; {against} would give {alternative:g})")
        powered = [(slope, se) for slope, se, _ in fits if se == se and k * se < power]
        if not powered:
            return Finding(NOT_SEEN, evidence, f"the spread cannot tell the theory's slope from that of {against}")
        now_powered = fits[0][1] == fits[0][1] and k * fits[0][1] < power
        if now_powered and abs(fits[0][0] - theory) <= k * fits[0][1]:
            return Finding(HOLDS, evidence)
        if any(abs(slope - theory) <= k * se for slope, se in powered):
            return Finding(PART, evidence, "the theory's slope appears only later in training, not at the paper's "
                           "snapshot" if now_powered else "only the later fit has the power to tell, and it matches")
        return Finding(CONTRADICTED, evidence, "the boundary's slope is measured well enough and is not the theory's")
    return rule


def not_overfitting_stage_rule(m: Record) -> Finding:
    """Figure 5's not-overfitting region lies where n·SNR² is large (most of its cells above n·SNR² = 1), and the
    long runs say whether it lasts: their cells' shares at the map's step and the last, the same cells at both, in
    the page's words (`share_text`). Its control is the fixed head at step 0 (`not_overfitting_at_step0_share`, where
    the record has it): where the head alone is in that state in most cells, the time exists before any training and
    the claim is not testable here, as the clock's benign condition is not."""
    first, last = int(m["num_steps"]), int(m["num_steps_long"])
    now, above = m["share_not_overfitting"], m.maybe("unfitted_share_above_1")
    long = (f"; of the {m['long_runs']:.0f} cells run longer, {share_text(m[f'share_not_overfitting_at_{first}'])} at "
            f"step {step_count(first)} and {share_text(m[f'share_not_overfitting_at_{last}'])} at step {step_count(last)}")
    evidence = (f"cells not overfitting at step {step_count(first)} by the map's rule (a training label unfitted): "
                f"{share_text(now)} of the map")
    if now == 0:
        return Finding(NOT_SEEN, evidence + long, "no cell leaves a noisy label unfitted")
    evidence += f" ({percent(above)} of them above n·SNR² = 1)" + long
    head = m.maybe("not_overfitting_at_step0_share")
    if head == head:
        evidence += (f"; the fixed head alone, at step 0, is in the theorem's not-overfitting state (every clean "
                     f"label fitted, no noisy one, the test error below δ = {m['delta_map']:.4g}, the map's rule) in "
                     f"{share_text(head)} of the cells run longer")
    if head > thresholds.MAJORITY.value:
        return Finding(UNTESTABLE, evidence, "the fixed head is in the theorem's state before any training in most "
                       "cells: such a time exists at step 0, so it says nothing of what training does")
    if above > thresholds.MAJORITY.value:
        return Finding(HOLDS, evidence)
    return Finding(CONTRADICTED, evidence, "most unfitted cells lie where n·SNR² is small, not large")


def eq9_rule(m: Record) -> Finding:
    """Eq. 9's ratio above one in every cell, beside its control: at step 0 every sample's 𝔖 is the same (uniform
    attention), so the cumulative ratio starts at the count of clean samples over noisy ones, above one before any
    training (`eq9_ratio_step0`, where the record has it)."""
    share = m["eq9_share_holds"]
    evidence = f"Eq. 9 holds in {percent(share)} of the grid's cells (smallest ratio {m['eq9_min_ratio']:.2f}"
    start = m.maybe("eq9_ratio_step0")
    if start == start:
        evidence += (f"; at step 0, before any training, {start:.3g}: the {m['clean_samples']:.0f} clean samples' "
                     f"count over the {m['noisy_samples']:.0f} noisy ones', every sample's 𝔖 being the same")
    evidence += ")"
    if share == 1:
        return Finding(HOLDS, evidence)
    return Finding(PART if share > thresholds.MAJORITY.value else CONTRADICTED, evidence, "it fails in some cells")


def eq10_rule(m: Record) -> Finding:
    low, high, share = m["eq10_min_ratio"], m["eq10_max_ratio"], m["eq10_share_within_0.5_2.5"]
    evidence = (f"the class ratio spans {low:.2f}–{high:.2f} over the grid; {percent(share)} of the cells lie in "
                "0.5–2.5")
    start = m.maybe("eq10_ratio_step0")
    if start == start:  # the control: every sample's 𝔖 the same at step 0, the ratio the classes' clean counts'
        evidence += f" (at step 0, before any training, {start:.3g}: the classes' counts of clean samples)"
    if share == 1:
        return Finding(HOLDS, evidence)
    if share > thresholds.MAJORITY.value:
        return Finding(PART, evidence, "most cells are balanced, some leave the paper's band")
    return Finding(CONTRADICTED, evidence, "most cells leave the paper's band")


def eta_rule(m: Record) -> Finding:
    """The appendix's η sweep, judged at the n the page ran and no other (the appendix states no n). An n shows the
    paper's pattern when the Eq.-9 ratio's edge (the largest η up to which it stays above one) lies within `ETA_BAND`
    of 0.6, the ratio stays below one after it up to η = 0.7, and the test accuracy is below `NEAR_CHANCE` at 0.65
    and 0.7, where the paper reports its collapse (`etasweep.collapse`; each threshold's reason in `thresholds`). Holds when some n run shows it; in
    part when some n shows the ratio's collapse alone; contradicted when no n run shows even that. The evidence names
    each n's edge."""
    edges = {int(n): m.maybe(f"eta_ratio_above_1_up_to_n{n}") for n in m.parameters.get("n_values", [])}
    edges = {n: e for n, e in edges.items() if e == e}
    if not edges:
        return Finding(NOT_SEEN, "no sweep over n in this record", "the page swept no n")
    hits, collapsed = ([n for n in edges if m.maybe(f"{key}_n{n}") == 1]
                       for key in ("collapse_as_paper", "ratio_collapse_as_paper"))
    evidence = "the Eq.-9 ratio stays above one up to η = " + and_list([f"{e:.2f} at n = {n:,}" for n, e in edges.items()])
    evidence += ("; where it collapses as in the paper, the highest test accuracy at η = 0.65 and 0.7 is " +
                 and_list([f"{m.maybe(f'test_acc_fallen_max_n{n}'):.3f} at n = {n:,}" for n in collapsed]) if collapsed
                 else "")
    if hits:
        return Finding(HOLDS, evidence + "; the paper's pattern at n = " + and_list([f"{n:,}" for n in hits]))
    if collapsed:
        return Finding(PART, evidence, "the ratio collapses as in the paper at n = " + and_list([f"{n:,}" for n in collapsed])
                       + f", but the test accuracy does not fall below {thresholds.NEAR_CHANCE.value:g} with it")
    return Finding(CONTRADICTED, evidence, f"at none of the n run does the ratio's edge lie within "
                   f"{thresholds.ETA_BAND.value:g} of η = 0.6 with the ratio below one after it up to η = 0.7")


def encoder_rule(m: Record) -> Finding:
    """Figure 6: each seed's regime against the same run on clean labels (the encoder's head starts at chance, so its
    step 0 says nothing; a run near chance whose cost its test set cannot resolve reads 'near chance', neither benign
    nor harmful: `onelayer.seed_reading`). A setting lands as named when more than `MAJORITY` of its seeds do: holds
    when every seed of every setting lands as named, contradicted when no setting lands, in part otherwise. The
    paper's test threshold is quoted beside it, and named in the cause where it reads otherwise; it does not decide."""
    names = {"balanced": "balanced", "harmful": "harmful", "not_overfitting": "not overfitting"}
    seeds, most = int(m["replicates"]), thresholds.MAJORITY.value

    def as_named(key: str) -> str:
        return share_words(round(m[key] * seeds), seeds, "seed", "seeds")

    shares = {k: m[f"{k}_as_named_trained_share"] for k in names}
    evidence = ("against the same runs on clean labels, the reading the verdict uses, the seeds read: " +
                "; ".join(f"{label} setting: {m[f'{k}_regime_trained_words']}" for k, label in names.items()) +
                ". In the named regime by the paper's test threshold alone, which the verdict does not use: " +
                "; ".join(f"{label} setting: {as_named(f'{k}_as_named_share')}" for k, label in names.items()) +
                ". Test accuracy: " +
                "; ".join(f"{label} setting {spread(m, f'{k}_test_acc')}, on clean labels "
                          f"{spread(m, f'{k}_clean_test_acc')}" for k, label in names.items()))
    if all(v == 1 for v in shares.values()):
        return Finding(HOLDS, evidence)
    landed = [k for k, v in shares.items() if v > most]
    by_threshold = [names[k] for k in names if k not in landed and m[f"{k}_as_named_share"] > most]
    aside = (f"; by the paper's test threshold alone the {and_list(by_threshold)} setting"
             f"{'s' if len(by_threshold) > 1 else ''} would land there" if by_threshold else "")
    missed = [names[k] for k in names if k not in landed]
    if not landed:
        return Finding(CONTRADICTED, evidence, "against the same runs on clean labels, no setting lands in its named "
                       "regime on most of its seeds" + aside)
    return Finding(PART, evidence, (f"against the same runs on clean labels, most seeds of the {and_list(missed)} "
                                    f"setting{'s' if len(missed) > 1 else ''} land outside the named regime" if missed
                                    else "some seeds land outside the named regime") + aside)


def alpha_rule(m: Record) -> Finding:
    """τ ∝ 1/α by `timing.alpha_verdict` (the one the clock page glues): the selection time's τ·α at two step sizes in
    ratio 1, beside its control, the time to fit every noisy label, which small-step descent scales as 1/α too."""
    ratios = dict(select=m["alpha_ratio_select"], noisy=m["alpha_ratio_noisy"], alternative=1 / m["alpha_factor_ratio"])
    evidence = ("τ·α at the small step size over τ·α at the large one, median over matched runs: {select:.2f} for the "
                "selection time (fresh inputs select their relevant token), {noisy:.2f} for the time to fit every noisy "
                "label (1 if τ ∝ 1/α, {alternative:g} if τ ignores α); with small steps, gradient descent follows its "
                "gradient flow, whose clock is α × step, so any event time scales as 1/α").format(**ratios)
    verdict, cause = timing.alpha_verdict(ratios)
    return Finding(VERDICT_OF[verdict], evidence, cause)


def clock_condition_rule(m: Record) -> Finding:
    """Theorem 4.2's benign time by the theorem's own condition (every label fitted, test error below δ), on the
    analysed model: where the fixed head's test error is below δ at step 0 in most runs outside the harmful region
    (`MAJORITY`), the condition times the fitting of the noisy labels, not a generalization training adds, and it
    cannot measure the theorem's exponent: not testable here (the book's reading by the time training sets is
    `clock_rule`'s row). Elsewhere the first step that meets it is judged on the theorem's axes by `timing.clock_verdict`."""
    evidence = (f"the theorem's condition (every label fitted, test error below δ = {m['delta']:g}) is met in "
                f"{percent(m['benign_met_share'])} of the theory's benign region's runs (by step "
                f"{m['benign_first_latest']:,.0f} at the latest, at every n·SNR²) and holds from then to the last step "
                f"in {percent(m['benign_settled_share'])} of the region's runs; the first step that meets it has "
                f"slope {plus_minus(m['benign_slope_p_only'], m['benign_slope_p_only_std'])} against "
                f"1/(n·SNR²) (theorem: 1); the fixed head's test error is below δ at step 0 in "
                f"{percent(m['test_error_at_step0_share'])} of the runs outside the harmful region")
    if m["test_error_at_step0_share"] > thresholds.MAJORITY.value:
        return Finding(UNTESTABLE, evidence, "the fixed head generalizes before any training, so the condition times "
                       "only the fitting of the noisy labels: it cannot measure the theorem's time (the next row "
                       "reads the time that training sets)")
    verdict, cause = timing.clock_verdict({"slope": m["benign_slope_p_only"], "spread": m["benign_slope_p_only_std"],
                                           "bound": float("nan")})
    return Finding(VERDICT_OF[verdict], evidence, cause)


def clock_rule(m: Record) -> Finding:
    """The book's reading of Theorem 4.2's benign time τ = Θ(exp(1/(n·SNR²))/prefactor) by what training adds: the
    step at which fresh inputs select their relevant token (mean test attention ≥ `SELECTED`), in the theory's
    benign region, decided by `timing.clock_verdict` (the one the clock page glues) on the analysed model's runs
    there: a slope fitted where they select at several n·SNR², and a lower bound on it where they select at one
    n·SNR² and not within the run at the next smaller one."""
    slope, spread, bound = (m.maybe(k) for k in ("select_benign_slope_p_only", "select_benign_slope_p_only_std",
                                                 "select_bound_p_only"))
    evidence = (f"the theory's benign region, analysed model, {step_count(m.parameters.get('num_steps', 0))} steps per run: "
                f"fresh inputs' mean attention on their relevant token reaches {thresholds.SELECTED.value:g} within "
                f"the run in {percent(1 - m['select_censored_benign'])} of the region's runs, at "
                f"{m['select_benign_at_p_only']}")
    if spread == spread:
        evidence += f"; log τ against 1/(n·SNR²): slope {plus_minus(slope, spread)} (theorem: 1)"
    if bound == bound:
        evidence += (f"; where they reach it at one n·SNR² and not within the run at the next smaller one, the slope "
                     f"of log τ against 1/(n·SNR²) is at least {bound:.1f} (the smallest over "
                     f"{m['select_bound_cells_p_only']:.0f} cells of one d, n and seed; theorem: 1)")
    verdict, cause = timing.clock_verdict({"slope": slope, "spread": spread, "bound": bound})
    return Finding(VERDICT_OF[verdict], evidence, cause)


VERDICT_OF = {**{v: v for v in (HOLDS, PART, CONTRADICTED, UNTESTABLE)}, "not seen": NOT_SEEN}  # timing's words


def delayed_condition_rule(m: Record) -> Finding:
    """The headline (abstract, poster) as the paper states it: generalization, the test error below δ, comes only
    after the noise is fitted, the later the smaller n·SNR². Its control is the fixed head, as in
    `clock_condition_rule`: `timing.delay_condition_verdict` (the one the clock page glues) finds it not testable
    here where the head's test error is below δ at step 0 in most runs; elsewhere it judges the step at which the
    test error falls below δ as `delayed_rule` (the book's reading, the next row) judges the selection step."""
    scope, evidence = timing.delay_scope(m, "_test_error", f"have the test error below δ = {m['delta']:g}", "test error "
                                  "below δ")
    evidence += (f"; the fixed head's test error is below δ at step 0 in {percent(m['test_error_at_step0_share'])} of "
                 "the runs outside the harmful region")
    verdict, cause = timing.delay_condition_verdict(scope | {"test_error_at_step0_share": m["test_error_at_step0_share"]})
    return Finding(VERDICT_OF[verdict], evidence, cause)


def delayed_rule(m: Record) -> Finding:
    """The book's reading of the headline by what training adds: the noise is fitted before fresh inputs select their
    relevant token. In the theory's benign region (n·SNR² ≤ 1, SNR ≥ d^(−1/4)), among runs that fit every label and
    whose fresh inputs select by the end, `timing.delay_verdict` (the one the clock page glues) judges (i) most fit
    the last noisy label before they select and (ii) the gap grows as n·SNR² falls. Runs that fit every label but
    never select within the run are quoted, not counted."""
    scope, evidence = timing.delay_scope(m, "", "their fresh inputs select (mean attention on the relevant token at least "
                                  f"{thresholds.SELECTED.value:g})", "selection")
    unselected = m.maybe("delay_unselected_runs")
    if unselected > 0:
        evidence += (f". Not counted, the region's runs that fit every label by step "
                     f"{m['delay_unselected_fit_latest']:,.0f} and do not select within the run: {unselected:.0f}")
    evidence += f". Over every benign run, wherever it lies: {percent(m.maybe('delayed_share_all'))} delayed"
    verdict, cause = timing.delay_verdict(scope)
    return Finding(VERDICT_OF[verdict], evidence, cause)


def noisy_relevant_vanishes_rule(m: Record) -> Finding:
    """The poster: for noisy samples the relevant token's score goes to zero (from 1/T at step 0)."""
    score, uniform = m["balanced_score_noisy_relevant"], 1 / m.parameters["T"]
    evidence = f"mean final attention of noisy training samples on their relevant token: {score:.3f} (1/T = {uniform:.3f} at step 0)"
    if score < thresholds.VANISHED.value * uniform:
        return Finding(HOLDS, evidence)
    if score >= uniform:
        return Finding(CONTRADICTED, evidence, "it does not fall below its step-0 value")
    return Finding(PART, evidence, "it falls, but stays above a tenth of its step-0 value")
