"""The claims ledger: every claim of the two papers that the book tests, with a verdict from rules over the runs'
records, never from prose.

A `Claim` names the claim in one sentence, where the paper makes it, the page (notebook) that tests it and how. Its
`rule` reads that notebook's metrics.json record and returns a verdict, one of `VERDICTS`, with the evidence as
numbers and, short of *holds*, the cause. The keys a rule reads are recorded, so a test can check that the page it
links to glues every number it quotes. A claim whose keys a profile does not compute is left out of that build.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

HOLDS, PART, NOT_SEEN, CONTRADICTED, OFFLINE = (
    "holds", "holds in part", "not seen at these sizes", "contradicted", "not testable offline")
VERDICTS = (HOLDS, PART, NOT_SEEN, CONTRADICTED, OFFLINE)


class Record(dict):
    """A notebook's metrics record that remembers which keys were read."""

    def __init__(self, values: dict):
        super().__init__(values)
        self.read: list[str] = []

    def __getitem__(self, key):
        value = super().__getitem__(key)
        if value is None or value != value:  # null or NaN: not computed at this profile
            raise KeyError(key)
        if key not in self.read:
            self.read.append(key)
        return value


@dataclass(frozen=True)
class Finding:
    verdict: str
    evidence: str
    cause: str = ""


@dataclass(frozen=True)
class Claim:
    paper: str  # "Sakamoto & Sato" or "Magen et al."
    where: str  # where the paper makes it
    claim: str  # one sentence
    page: str  # the notebook whose record holds the evidence
    test: str  # the book's test: setting, seeds
    rule: Callable[[Record], Finding]


@dataclass(frozen=True)
class Entry:
    claim: Claim
    finding: Finding
    keys: tuple[str, ...]  # the record's keys the rule read


def spread(m: Record, key: str, fmt: str = ".3f") -> str:
    """`key` of the plotted run, with the range over the seeds where the record holds it (`key_min`, `key_max`)."""
    value = format(m[key], fmt)
    if f"{key}_min" in m and f"{key}_max" in m:
        return f"{value} (seeds: {m[f'{key}_min']:{fmt}}–{m[f'{key}_max']:{fmt}})"
    return value


def fitted(m: Record, prefix: str) -> str:
    """'k of K' noisy labels fitted, with the range over seeds."""
    k, total = m[f"{prefix}_noisy_fitted"], m[f"{prefix}_noisy_count"]
    low, high = m[f"{prefix}_noisy_fitted_min"], m[f"{prefix}_noisy_fitted_max"]
    return f"{k:.0f} of {total:.0f} (seeds: {low:.0f}–{high:.0f})"


def regime_rule(prefix: str, named: str, n_test_tolerance: float = 0.05) -> Callable[[Record], Finding]:
    """A named setting is in its named regime on every seed: `benign` fits every label and tests near 1,
    `harmful` fits every label and tests clearly below the balanced setting, `not_overfitting` leaves noisy labels
    unfitted."""
    def rule(m: Record) -> Finding:
        low, high = m[f"{prefix}_noisy_fitted_min"], m[f"{prefix}_noisy_fitted_max"]
        total = m[f"{prefix}_noisy_count"]
        clean_all = m[f"{prefix}_clean_fitted_min"] == m[f"{prefix}_clean_count"]
        test = m[f"{prefix}_test_acc_min"]
        evidence = (f"noisy labels fitted {fitted(m, prefix)}; clean ones all fitted: {'yes' if clean_all else 'no'}; "
                    f"test accuracy {spread(m, f'{prefix}_test_acc')}")
        if named == "not_overfitting":
            if high == 0:
                return Finding(HOLDS, evidence)
            if low < total:
                return Finding(PART, evidence, "some noisy labels are fitted on some seeds")
            return Finding(CONTRADICTED, evidence, "every noisy label is fitted")
        every = low == total and clean_all
        if named == "benign":
            good = test >= 1 - n_test_tolerance
            if every and good:
                return Finding(HOLDS, evidence)
            return Finding(PART if (every or good) else CONTRADICTED, evidence,
                           "not every label is fitted" if not every else "the test accuracy drops")
        worse = m[f"{prefix}_test_acc_max"] < m["balanced_test_acc_min"] - n_test_tolerance
        evidence += f"; balanced setting {spread(m, 'balanced_test_acc')}"
        if every and worse:
            return Finding(HOLDS, evidence)
        return Finding(PART if (every or worse) else CONTRADICTED, evidence,
                       "not every label is fitted" if not every else "the test accuracy is not below the balanced one")
    return rule


def fig1_rule(column: str) -> Callable[[Record], Finding]:
    """Figure 1's hand-built queries: benign fits all and tests near 1; harmful fits all and tests clearly lower;
    not overfitting leaves the flipped labels unfitted (train accuracy 1 − η) and tests near 1."""
    def rule(m: Record) -> Finding:
        train, test = m[f"{column}_train_acc_min"], m[f"{column}_test_acc_min"]
        evidence = f"train accuracy {spread(m, f'{column}_train_acc', '.2f')}, test {spread(m, f'{column}_test_acc', '.2f')}"
        if column == "harmful":
            ok_train, ok_test = train >= 0.99, m["harmful_test_acc_max"] < m["benign_test_acc_min"] - 0.1
        elif column == "benign":
            ok_train, ok_test = train >= 0.99, test >= 0.95
        else:
            ok_train = m["not_overfitting_train_acc_max"] <= 1 - m["noisy_share"] + 1e-9
            ok_test = test >= 0.95
        if ok_train and ok_test:
            return Finding(HOLDS, evidence)
        return Finding(PART if ok_train or ok_test else CONTRADICTED, evidence,
                       "the train accuracy is not as named" if not ok_train else "the test accuracy is not as named")
    return rule


def selection_rule(m: Record) -> Finding:
    """Figure 3, balanced: clean samples attend to their relevant token, noisy ones to the weak token of their
    flipped label."""
    clean, noisy = m["balanced_score_clean_relevant"], m["balanced_score_noisy_weak_opposite"]
    evidence = (f"mean final attention: clean samples on the relevant token {clean:.2f}, noisy samples on the weak "
                f"token of their flipped label {noisy:.2f}")
    if clean > 0.5 and noisy > 0.5:
        return Finding(HOLDS, evidence)
    return Finding(PART if clean > 0.5 or noisy > 0.5 else CONTRADICTED, evidence,
                   "one kind of sample does not put most of its attention where the claim says")


def regions_rule(m: Record) -> Finding:
    shares = {k: m[f"share_{k}"] for k in ("benign", "harmful", "not_overfitting")}
    evidence = ("share of the grid's cells at the last step: " +
                ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in shares.items()))
    present = sum(v > 0 for v in shares.values())
    return Finding(HOLDS if present == 3 else PART if present == 2 else CONTRADICTED, evidence,
                   "" if present == 3 else "not every regime appears on the grid")


def boundary_rule(key: str, theory: float, what: str) -> Callable[[Record], Finding]:
    """A boundary's measured slope (`key`: its fit on the step-1000 map, `key_at_T` at the long runs' last step T)
    against the theory's, within two standard errors."""
    def rule(m: Record) -> Finding:
        last = int(m["num_steps_long"])
        now, se = m[f"{key}_map"], m[f"{key}_se_map"]
        later, later_se = m[f"{key}_at_{last}"], m[f"{key}_se_at_{last}"]
        evidence = (f"{what}: slope {now:.2f} ± {se:.2f} at step {m['num_steps']:.0f}, {later:.2f} ± {later_se:.2f} "
                    f"at step {last} (theory: {theory:g})")
        if abs(now - theory) <= 2 * se:
            return Finding(HOLDS, evidence)
        if abs(later - theory) <= 2 * later_se:
            return Finding(PART, evidence, "the theory's slope appears only later in training, not at the paper's "
                           "snapshot")
        return Finding(NOT_SEEN, evidence, "the boundary does not have the theory's slope at these sizes and times "
                       "(the theory fixes orders, not finite-size constants)")
    return rule


def not_overfitting_stage_rule(m: Record) -> Finding:
    last = int(m["num_steps_long"])
    now, above, later = m["share_not_overfitting"], m["unfitted_share_above_1"], m[f"share_not_overfitting_at_{last}"]
    evidence = (f"share of cells not overfitting at step {m['num_steps']:.0f}: {now:.2f} ({above:.0%} of them above "
                f"n·SNR² = 1); at step {last}: {later:.2f}")
    if now > 0 and above >= 0.5:
        return Finding(HOLDS, evidence)
    return Finding(PART if now > 0 else NOT_SEEN, evidence, "the unfitted cells do not lie where n·SNR² is large")


def eq9_rule(m: Record) -> Finding:
    share = m["eq9_share_holds"]
    evidence = f"Eq. 9 holds in a share {share:.2f} of the grid's cells (smallest ratio {m['eq9_min_ratio']:.2f})"
    return Finding(HOLDS, evidence) if share == 1 else Finding(PART if share > 0.5 else CONTRADICTED, evidence,
                                                               "it fails in some cells")


def eq10_rule(m: Record) -> Finding:
    low, high, share = m["eq10_min_ratio"], m["eq10_max_ratio"], m["eq10_share_within_0.5_2.5"]
    evidence = f"the class ratio spans {low:.2f}–{high:.2f} over the grid; a share {share:.2f} of the cells lies in 0.5–2.5"
    if share == 1:
        return Finding(HOLDS, evidence)
    if share >= 0.5:
        return Finding(PART, evidence, "most cells are balanced, some leave the paper's band")
    return Finding(CONTRADICTED, evidence, "most cells leave the paper's band")


def eta_rule(m: Record) -> Finding:
    largest, worst = m["largest_eta_ratio_above_1"], m["min_test_acc_ratio_above_1"]
    top = m["noise_ratio_max"]
    evidence = (f"the Eq. 9 ratio stays above one up to η = {largest:.2f}, with test accuracy at least {worst:.3f} "
                f"there (η swept up to {top:.2f})")
    if largest >= top:
        return Finding(PART, evidence, "no collapse: the ratio is above one at every η swept")
    if abs(largest - 0.6) <= 0.05 + 1e-9 and worst >= 0.95:
        return Finding(HOLDS, evidence)
    return Finding(PART, evidence, "the collapse comes at another η (the paper does not state n, which moves it)")


def encoder_rule(m: Record) -> Finding:
    names = {"balanced": "balanced", "harmful": "harmful", "not_overfitting": "not overfitting"}
    shares = {k: m[f"{k}_as_named_share"] for k in names}
    evidence = "share of seeds in the named regime: " + ", ".join(
        f"{label} {shares[k]:.2f} (test accuracy {spread(m, f'{k}_test_acc')})" for k, label in names.items())
    settled = [k for k, v in shares.items() if v == 1]
    if len(settled) == 3:
        return Finding(HOLDS, evidence)
    missed = ", ".join(names[k] for k in names if k not in settled)
    return Finding(PART if settled or any(shares.values()) else CONTRADICTED, evidence,
                   f"not every seed lands in the named regime: {missed}")


def attention_rises_rule(m: Record) -> Finding:
    share = m["max_attention_rises_share"]
    evidence = f"the mean maximum attention ends above its first epoch in a share {share:.2f} of the runs"
    return Finding(HOLDS if share == 1 else PART if share >= 0.5 else CONTRADICTED, evidence,
                   "" if share == 1 else "some runs end lower")


def alpha_rule(m: Record) -> Finding:
    ratio = m["alpha_ratio_noisy"]
    evidence = f"τ·α at the small step size over τ·α at the large one: {ratio:.2f} (median over cells)"
    return Finding(HOLDS if abs(ratio - 1) <= 0.1 else PART, evidence,
                   "" if abs(ratio - 1) <= 0.1 else "τ·α changes with α by more than 10 %")


def clock_rule(m: Record) -> Finding:
    share0, slope, std = m["test_error_at_step0_share"], m["benign_slope_p_only"], m["benign_slope_p_only_std"]
    evidence = (f"the test error is below δ at step 0 in a share {share0:.2f} of the runs; the time by which every "
                f"condition holds has slope {slope:.2f} ± {std:.2f} against 1/(n·SNR²) (theorem: 1)")
    if abs(slope - 1) <= 2 * std:
        return Finding(HOLDS, evidence)
    if share0 > 0.5:
        return Finding(NOT_SEEN, evidence, "the conditions hold long before the theorem's time: the fixed head "
                       "generalizes from step 0, so the time measured is the time to fit the noisy labels. The "
                       "theorem's τ is a time by which the conditions hold; reaching them earlier is no contradiction")
    return Finding(CONTRADICTED, evidence, "the measured slope is not the theorem's")


def realdata_rule(kind: str) -> Callable[[Record], Finding]:
    """Over the rows of a kind that can test the claim (`realdata.report.row_checks`: clean labels fitted, most
    flipped labels within reach of free attention); with none, the claim is not testable on these backbones, and
    the measured reach is the cause."""
    def rule(m: Record) -> Finding:
        if m[f"{kind}_rows_testing"] == 0:
            reach, fitted = m[f"{kind}_reach_free_mean"] / 100, m[f"{kind}_flipped_fitted_mean"] / 100
            evidence = (f"{kind} rows, cells with flipped labels: free attention over the last layer's tokens can fit "
                        f"{reach:.0%} of them, phase 2 fitted {fitted:.0%} (means over cells and seeds)")
            return Finding(OFFLINE, evidence, "the backbones made here cannot test it: most flipped labels are out of "
                           "reach of any attention over their last layer's tokens, or the clean labels are not fitted")
        share, drop = m[f"{kind}_testing_flipped_fitted_mean"] / 100, m[f"{kind}_testing_test_vs_base_mean"]
        evidence = (f"{kind} rows, cells with flipped labels: {share:.0%} of them fitted; test accuracy minus base "
                    f"accuracy {drop:+.1f} points (means over cells and seeds)")
        if share >= 0.99 and drop > -5:
            return Finding(HOLDS, evidence)
        if share < 0.5:
            return Finding(NOT_SEEN, evidence, "within reach of attention, but phase 2 does not fit most flipped "
                           "labels in its schedule")
        if drop <= -5:
            return Finding(PART, evidence, "fitting the flipped labels costs test accuracy: harmful, not benign, "
                           "overfitting on this backbone")
        return Finding(PART, evidence, "the flipped labels are fitted only in part")
    return rule


def backbone_regimes_rule(m: Record) -> Finding:
    names = {"benign": "benign", "harmful": "harmful", "not_overfitting": "not overfitting"}
    counts = {k: m[f"backbones_{k}"] for k in names}
    evidence = (f"of {m['backbones']:.0f} image backbones made here: " +
                ", ".join(f"{label} {counts[k]:.0f}" for k, label in names.items()))
    present = sum(v > 0 for v in counts.values())
    if present == 3:
        return Finding(HOLDS, evidence)
    missing = ", ".join(label for k, label in names.items() if counts[k] == 0)
    return Finding(PART if present == 2 else NOT_SEEN, evidence, f"not every regime appears among these backbones: "
                   f"{missing}")


def paper2_benign_rule(m: Record) -> Finding:
    evidence = (f"train accuracy {m['benign_steps_train_acc']:.3f}, test {m['benign_steps_test_acc']:.3f}; weight on "
                f"the signal: clean inputs {m['benign_steps_clean_signal_attention']:.2f}, noisy inputs "
                f"{m['benign_steps_noisy_signal_attention']:.2f}")
    ok = (m["benign_steps_train_acc"] == 1 and m["benign_steps_test_acc"] >= 0.95
          and m["benign_steps_clean_signal_attention"] > 0.5 > m["benign_steps_noisy_signal_attention"])
    return Finding(HOLDS, evidence) if ok else Finding(PART, evidence, "one of the four properties fails")


def paper2_harmful_rule(m: Record) -> Finding:
    train, test = m["harmful_steps_train_acc"], m["harmful_steps_test_acc"]
    evidence = f"train accuracy {train:.3f}, test {test:.3f}"
    if train == 1 and test < 0.6:
        return Finding(HOLDS, evidence)
    return Finding(PART, evidence, "it does not both fit every label and test near chance")


def paper2_boundary_rule(m: Record) -> Finding:
    slope, std = m["edge_snr_slope"], m["edge_snr_slope_std"]
    evidence = (f"the SNR where benign overfitting starts scales as n^({slope:.2f} ± {std:.2f}) over "
                f"{m['edge_n_count']:.0f} values of n (theorem: −0.5)")
    if abs(slope + 0.5) <= 2 * std and abs(slope) > 2 * std:
        return Finding(HOLDS, evidence)
    if abs(slope + 0.5) <= 2 * std:
        return Finding(PART, evidence, "the fit cannot tell −0.5 from no dependence on n")
    return Finding(CONTRADICTED, evidence, "the boundary does not scale as 1/√n")


def paper2_below_rule(m: Record) -> Finding:
    test = m["below_boundary_test_acc"]
    evidence = f"mean test accuracy of the cells with SNR < 1/√n: {test:.3f}"
    return Finding(HOLDS if test < 0.75 else PART, evidence, "" if test < 0.75 else "well above chance there")


S, M = "Sakamoto & Sato", "Magen et al."
# A test's description is formatted with the record's parameters (`{p[name]}`): it says what this build ran.
SEEDS = "{p[replicates]} seeds from {p[seed]} (the first plotted)"
FIG1 = "hand-built p, c = {p[c_%s]}; d = {p[d]}, n = {p[n]}, " + SEEDS.replace("seeds", "data draws")
FIG3 = "(d, ‖μ‖) = ({p[d_%s]}, {p[signal_norm_%s]}); " + SEEDS + "; n = {p[n]}, {p[num_steps]} steps, W and p trained"
GRID = "the (d, ‖μ‖) grid of d_grid = {p[d_grid]}, signal_norm_grid = {p[signal_norm_grid]}; {p[num_steps]} steps"
CLAIMS = [
    Claim(S, "Figure 1", "A query that memorises noise moderately fits every training label and classifies fresh "
          "samples (benign overfitting exists).", "fig1_token_selection", FIG1 % "benign", fig1_rule("benign")),
    Claim(S, "Figure 1", "Memorising too much noise fits every label but misroutes fresh samples (harmful).",
          "fig1_token_selection", FIG1 % "harmful", fig1_rule("harmful")),
    Claim(S, "Figure 1", "Memorising too little leaves the flipped labels unfitted and generalizes (not overfitting).",
          "fig1_token_selection", FIG1 % "not_overfitting", fig1_rule("not_overfitting")),
    Claim(S, "Figure 3(a)", "At a balanced SNR, gradient descent fits every label and generalizes (benign).",
          "fig3_dynamics", FIG3 % ("balanced", "balanced"), regime_rule("balanced", "benign")),
    Claim(S, "Figure 3(a)", "Attention selects the relevant token of clean samples and, to fit a noisy sample, the "
          "weakly relevant token of its flipped label.", "fig3_dynamics",
          "(d, ‖μ‖) = ({p[d_balanced]}, {p[signal_norm_balanced]}), seed {p[seed]}", selection_rule),
    Claim(S, "Figure 3(b)", "With a large noise dimension it fits every label but generalizes worse (harmful).",
          "fig3_dynamics", FIG3 % ("large_noise", "large_noise"), regime_rule("large_noise", "harmful")),
    Claim(S, "Figure 3(c)", "With a large signal it does not fit the noisy labels (not overfitting).",
          "fig3_dynamics", FIG3 % ("large_signal", "large_signal"), regime_rule("large_signal", "not_overfitting")),
    Claim(S, "Figure 5", "On the (d, ‖μ‖) grid the balance of dimension and signal strength decides the regime: "
          "benign, harmful and not-overfitting regions.", "fig5_heatmap", GRID + ", one seed per cell", regions_rule),
    Claim(S, "Figure 5, Theorem 4.2", "The benign / not-overfitting boundary follows n·SNR² = const: along it, log d "
          "grows as twice log ‖μ‖.", "fig5_heatmap", GRID + "; long runs of {p[num_steps_long]} steps on "
          "d = {p[d_values_long]}, ‖μ‖ = {p[signal_norm_values_long]}",
          boundary_rule("overfit_slope_d", 2.0, "log d* against log ‖μ‖ along the boundary")),
    Claim(S, "Figure 5, Theorem 4.2", "The harmful / benign boundary follows SNR ≍ d^(−1/4): along it, log ‖μ‖ grows "
          "as a quarter of log d.", "fig5_heatmap", GRID + "; long runs of {p[num_steps_long]} steps",
          boundary_rule("harmful_slope", 0.25, "log ‖μ*‖ against log d along the boundary")),
    Claim(S, "Theorem 4.2 (not-overfitting case)", "Where n·SNR² is large there is a time at which the clean labels are "
          "fitted, the noisy ones are not, and the test error is small.", "fig5_heatmap",
          GRID + "; long runs of {p[num_steps_long]} steps", not_overfitting_stage_rule),
    Claim(S, "Theorem 4.2, appendix (Eq. 9)", "Clean samples' cumulative 𝔖 dominates noisy samples' in every setting "
          "of the grid.", "conditions_heatmap", GRID + ", W trained: {p[train_W]}, seed {p[seed]}", eq9_rule),
    Claim(S, "Theorem 4.2, appendix (Eq. 10)", "The classes' cumulative 𝔖 stay balanced (ratio about 0.5–2.5).",
          "conditions_heatmap", GRID + ", seed {p[seed]}", eq10_rule),
    Claim(S, "Appendix, η sweep", "Token selection absorbs label noise up to about η = 0.6 and collapses beyond it.",
          "eta_sweep", "d = {p[d]}, ‖μ‖ = {p[signal_norm]}, n = {p[n]}, η grid {p[noise_ratio_grid]}, seed {p[seed]}",
          eta_rule),
    Claim(S, "Theorem 4.2 (benign case)", "Generalization after fitting the noise arrives by a time "
          "τ = Θ(exp(1/(n·SNR²))/prefactor).", "theory_clock", "long runs over n·SNR² ({p[num_steps]} steps), p only "
          "and W and p", clock_rule),
    Claim(S, "Theorem 4.2", "The time scale is inversely proportional to the step size α.", "theory_clock",
          "two step sizes on the same cells", alpha_rule),
    Claim(S, "Figure 6", "A one-layer Transformer encoder trained end to end lands in the named regime at each of the "
          "three settings.", "fig6_one_layer_dynamics", "the three settings shrunk by scale = {p[scale]}; " + SEEDS,
          encoder_rule),
    Claim(S, "Table 2", "Fine-tuning the last attention layer of a pretrained text model fits flipped labels and keeps "
          "its test accuracy near the base accuracy.", "table2_finetune",
          "all-MiniLM-L6-v2 on Rotten Tomatoes; seeds {p[seeds]}", realdata_rule("text")),
    Claim(S, "Table 2", "The same holds for a pretrained image model.", "table2_finetune",
          "a small ViT made here on MNIST digits and Fashion-MNIST; seeds {p[seeds]}", realdata_rule("image")),
    Claim(S, "Figure 5, on real backbones", "On pretrained backbones, too, fine-tuning attention overfits label "
          "noise benignly, harmfully or not at all, as what its attention can reach allows.", "backbone_reach",
          "small ViTs of depths {p[vit_depths]} made here on MNIST digits, n in {p[sample_sizes]}, seeds and protocol "
          "of Table 2's {p[table2_profile]} profile", backbone_regimes_rule),
    Claim(S, "Figures 8, 9", "During fine-tuning the last layer's attention sharpens onto fewer tokens.",
          "fig8_finetune_attention", "the Table-2 runs", attention_rises_rule),
    Claim(M, "Theorem (two steps)", "Two gradient steps of suitable sizes interpolate noisy data and generalize: clean "
          "inputs attend to the signal, noisy inputs to their noise.", "paper2_two_steps",
          "n = {p[n]}, d = {p[d]}, β = {p[step_sizes_benign]}", paper2_benign_rule),
    Claim(M, "Theorem (two steps)", "A first step that is too large fits every label by its noise and generalizes "
          "at chance (harmful).", "paper2_two_steps", "β = {p[step_sizes_harmful]}", paper2_harmful_rule),
    Claim(M, "Theorems (SNR threshold)", "Benign overfitting needs SNR of order 1/√n: the boundary scales as "
          "n^(−1/2).", "paper2_snr_heatmap", "n in {p[n_values]}, {p[num_seeds]} seeds per cell", paper2_boundary_rule),
    Claim(M, "Theorems (SNR threshold)", "Below that boundary overfitting is harmful.", "paper2_snr_heatmap",
          "cells with SNR < 1/√n", paper2_below_rule),
]
OFFLINE_CLAIMS = [  # claims whose test needs what this machine cannot reach
    (S, "Table 2", "The paper's own backbones and data sets (ViT-B/16-in21k, bert-base-uncased; MNIST, CIFAR10, "
     "STL10, MedMNIST, SST-2, AG-news, TREC) show the same.", "table2_finetune",
     "the model and dataset hubs are unreachable here; the `paper` profile runs them where they are reachable"),
]


def evaluate(records: dict[str, dict]) -> list[Entry]:
    """Every claim whose page ran, with its verdict; claims the profile does not compute are left out."""
    entries = []
    for claim in CLAIMS:
        if claim.page not in records:
            continue
        record = Record(records[claim.page])
        try:
            finding = claim.rule(record)
            test = claim.test.format(p=records[claim.page].get("parameters", {}))
        except KeyError:
            continue
        entries.append(Entry(replace(claim, test=test), finding, tuple(record.read)))
    for paper, where, text, page, why in OFFLINE_CLAIMS:
        if page in records:
            entries.append(Entry(Claim(paper, where, text, page, why, lambda m: None), Finding(OFFLINE, "—", why), ()))
    return entries


def verdict_counts(entries: list[Entry]) -> dict[str, int]:
    counts = dict.fromkeys(VERDICTS, 0)
    for entry in entries:
        counts[entry.finding.verdict] += 1
    return {k: v for k, v in counts.items() if v}
