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

from .paper2_rules import paper2_below_rule, paper2_benign_rule, paper2_boundary_rule, paper2_harmful_rule
from .realdata_rules import attention_sharpens_rule, backbone_regimes_rule, noise_cost_grows_rule, realdata_rule
from .rules import (alpha_rule, boundary_rule, clock_condition_rule, clock_rule, delayed_condition_rule, delayed_rule,
                    encoder_regions_rule, encoder_rule, eq9_rule, eq10_rule, eta_rule, fig1_rule,
                    noisy_relevant_vanishes_rule, not_overfitting_stage_rule, regime_rule, regions_rule, selection_rule)
from .verdicts import CONTRADICTED, HOLDS, NOT_SEEN, PART, UNTESTABLE, VERDICTS, AbsentKey, Finding, Record
from .words import SettingsSaid

__all__ = ["CONTRADICTED", "HOLDS", "NOT_SEEN", "PART", "UNTESTABLE", "VERDICTS", "Finding", "Record", "Claim", "Entry",
           "CLAIMS", "SOURCES", "evaluate", "verdict_counts"]


@dataclass(frozen=True)
class Claim:
    paper: str  # whose claim: SOURCES (paper 1, paper 2, or the book's own hypothesis)
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


S, M, BOOK = "Sakamoto & Sato", "Magen et al.", "this book"  # whose claim it is
SOURCES = (S, M, BOOK)
ARXIV = {S: "2409.17625", M: "2410.07746"}  # each paper's arXiv identifier: a row links its paper and names the place
REPOSITORY = "https://github.com/keitaroskmt/benign-attention"  # Sakamoto & Sato's code, linked from its rows
REPOSITORY_PLACE = "the authors' repository"  # a row's place that is their code, not the paper
# A test's description is formatted with the record's parameters (`{p[name]}`): it says what this build ran.
SEEDS = "{p[replicates]} seeds from {p[seed]} (the first plotted)"
DRAWS = "{p[outcome_draws]} data draws from seed {p[seed]} (the first plotted)"
FIG1 = "p built by hand with noise weight c = {p[c_%s]}; d = {p[d]}, n = {p[n]}, " + DRAWS
FIG3 = ("(d, ‖μ‖) = ({p[d_%s]}, {p[signal_norm_%s]}); " + SEEDS + ", and {p[outcome_draws]} draws of (data, W₀); "
        "n = {p[n]}, {p[num_steps]} steps, W and p trained")
GRID = "d {p[d_grid]} and ‖μ‖ {p[signal_norm_grid]}; {p[num_steps]} steps"
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
    Claim(S, "Poster", "For noisy samples the relevant token's score goes to zero.", "fig3_dynamics",
          "(d, ‖μ‖) = ({p[d_balanced]}, {p[signal_norm_balanced]}), seed {p[seed]}", noisy_relevant_vanishes_rule),
    Claim(S, "Figure 5", "On the (d, ‖μ‖) grid the balance of dimension and signal strength decides the regime: "
          "benign, harmful and not-overfitting regions.", "fig5_heatmap", GRID + ", one seed per cell", regions_rule),
    Claim(S, "Figure 5, Theorem 4.2", "The benign / not-overfitting boundary follows n·SNR² = const: along it, log d "
          "grows as twice log ‖μ‖.", "fig5_heatmap", GRID + "; long runs of {p[num_steps_long]} steps on "
          "d = {p[d_values_long]}, ‖μ‖ = {p[signal_norm_values_long]}",
          boundary_rule("overfit_slope_d", 2.0, 4.0, "log d* against log ‖μ‖ along the boundary",
                        "SNR ≍ 1/∜d")),
    Claim(S, "the authors' repository, its figure of the three regions", "The harmful / benign boundary follows "
          "SNR ≍ 1/∜d: along it, log ‖μ‖ grows as a quarter of log d.", "fig5_heatmap",
          GRID + "; harmful read as the flipped labels costing test accuracy against the same run on clean labels",
          boundary_rule("harmful_trained_slope", 0.25, 0.0, "log ‖μ*‖ against log d along the boundary",
                        "a boundary at one ‖μ‖ for every d (where the fixed head's accuracy at step 0 alone "
                        "puts it)")),
    Claim(S, "Theorem 4.2 (not-overfitting case)", "Where n·SNR² is large there is a time at which the clean labels are "
          "fitted, the noisy ones are not, and the test error is small.", "fig5_heatmap",
          GRID + "; long runs of {p[num_steps_long]} steps", not_overfitting_stage_rule),
    Claim(S, "Theorem 4.2, appendix (Eq. 9)", "Clean samples' cumulative 𝔖 dominates noisy samples' in every setting "
          "of the grid.", "conditions_heatmap", GRID + ", W trained: {p[train_W]}, seed {p[seed]}", eq9_rule),
    Claim(S, "Theorem 4.2, appendix (Eq. 10)", "The classes' cumulative 𝔖 stay balanced (ratio about 0.5–2.5).",
          "conditions_heatmap", GRID + ", seed {p[seed]}", eq10_rule),
    Claim(S, "Appendix, η sweep", "Token selection absorbs label noise up to about η = 0.6 and collapses beyond it.",
          "eta_sweep", "d = {p[d]}, ‖μ‖ = {p[signal_norm]}, η {p[noise_ratio_grid]} at each of n = {p[n_values]} (the "
          "appendix states no n), seed {p[seed]}; {p[replicates]} seeds from it at the largest η",
          eta_rule),
    Claim(S, "Theorem 4.2 (benign case)", "Generalization after fitting the noise arrives by a time "
          "τ = Θ(exp(1/(n·SNR²))/P): every label fitted and the test error below δ (the error the theorem allows), "
          "with P = α n⁻¹σ_ε²‖ν‖‖μ‖d² max{σ_w², σ_p²} the theorem's prefactor (α·d/n in these runs).", "theory_clock",
          "long runs over n·SNR²: p only ({p[num_steps]} steps) and W and p ({p[num_steps_trained_W]} steps); the "
          "first step that meets the theorem's condition, beside the fixed head's test error at step 0",
          clock_condition_rule),
    Claim(BOOK, "Theorem 4.2, by what training adds", "Read by the time that training sets — the step at which "
          "fresh inputs come to select their relevant token — the benign time grows as exp(1/(n·SNR²)): log τ against "
          "1/(n·SNR²) has slope 1.", "theory_clock",
          "long runs over n·SNR², p only ({p[num_steps]} steps), in the theory's benign region; the step at which "
          "fresh inputs' mean attention on their relevant token reaches {p[attention_level]}", clock_rule),
    Claim(S, "Abstract; poster", "Generalization is delayed: the noise is fitted first, the test error falls below δ "
          "later, and the delay grows as n·SNR² falls.", "theory_clock",
          "long runs over n·SNR² ({p[num_steps]} steps), p only, in the theory's benign region; the first step with "
          "the test error below δ against the first with every label fitted, beside the fixed head's test error at "
          "step 0", delayed_condition_rule),
    Claim(BOOK, "Abstract; poster, by what training adds", "Delayed generalization, read by the time that training "
          "sets: the noise is fitted first, fresh inputs come to select their relevant token later, and the delay grows "
          "as n·SNR² falls.", "theory_clock", "long runs over n·SNR² ({p[num_steps]} steps), p only, in the theory's "
          "benign region; the step at which fresh inputs' mean attention on their relevant token reaches "
          "{p[attention_level]}", delayed_rule),
    Claim(S, "Theorem 4.2", "The time scale is inversely proportional to the step size α.", "theory_clock",
          "two step sizes on the same cells of the analysed model: the selection time, beside the time to fit every "
          "noisy label as its control", alpha_rule),
    Claim(S, "Figure 6", "A one-layer Transformer encoder trained end to end lands in the named regime at each of the "
          "three settings.", "fig6_one_layer_dynamics", "the three settings shrunk: d and the MLP width divided by "
          "{p[scale]}, ‖μ‖ by its fourth root; " + SEEDS,
          encoder_rule),
    Claim(S, "Figure 7", "A one-layer Transformer encoder trained end to end shows the same three regions on the "
          "(d, ‖μ‖) grid.", "fig7_one_layer_heatmap", "the Figure-5 grid shrunk: d and the MLP width divided by "
          "{p[scale]}, ‖μ‖ by its fourth root; seed {p[seed]}",
          encoder_regions_rule),
    Claim(S, "Table 2", "Fine-tuning the last attention layer of a pretrained text model fits flipped labels and tests "
          "about as well as the same fine-tuning on clean labels (benign).", "table2_finetune",
          "all-MiniLM-L6-v2 on Rotten Tomatoes; seeds {p[seeds]}", realdata_rule("text")),
    Claim(S, "Table 2", "The flipped labels cost more test accuracy as n grows (text rows).", "table2_finetune",
          "all-MiniLM-L6-v2 on Rotten Tomatoes, n = {p[sample_sizes]}; seeds {p[seeds]}", noise_cost_grows_rule),
    Claim(S, "Table 2", "The same holds for a pretrained image model.", "table2_finetune",
          "a small ViT made here on MNIST digits and Fashion-MNIST; seeds {p[seeds]}", realdata_rule("image")),
    Claim(BOOK, "after Figure 5, on real backbones", "On pretrained backbones, too, fine-tuning attention overfits label "
          "noise benignly, harmfully or not at all, as what its attention can reach allows.", "backbone_reach",
          "small ViTs of depths {p[vit_depths]} made here on MNIST digits, beside Table 2's text rows "
          "(all-MiniLM-L6-v2 on Rotten Tomatoes), n = {p[sample_sizes]}, seeds and protocol of Table 2's "
          "{p[table2_profile]} profile", backbone_regimes_rule),
    Claim(S, "Figures 8, 9", "During fine-tuning the last layer's attention sharpens onto fewer tokens.",
          "fig8_finetune_attention", "the Table-2 runs", attention_sharpens_rule),
    Claim(M, "Theorem (two steps)", "Two gradient steps of suitable sizes interpolate noisy data and generalize: clean "
          "inputs attend to the signal, noisy inputs to their noise.", "paper2_two_steps",
          "n = {p[n]}, d = {p[d]}, β = {p[step_sizes_benign]}", paper2_benign_rule),
    Claim(BOOK, "after the two-step theorem", "A first step that is too large fits every label by its noise and "
          "classifies fresh inputs nearer chance than perfect (harmful).", "paper2_two_steps",
          "β = {p[step_sizes_harmful]}, on the data of the two-step theorem's row", paper2_harmful_rule),
    Claim(M, "Theorems (SNR threshold)", "Benign overfitting needs SNR of order 1/√n: the boundary's SNR falls as "
          "1/√n.", "paper2_snr_heatmap", "n = {p[n_values]}, the slope fitted from n = {p[n_tail_min]} on; ‖μ‖ from "
          "{p[signal_norm_min]} to {p[signal_norm_max]} on a geometric grid of {p[signal_norm_steps_per_doubling]} "
          "points per doubling; {p[num_seeds]} data draws per cell", paper2_boundary_rule),
    Claim(BOOK, "after the SNR threshold (the paper's harmful result is for max-margin interpolators)",
          "Below the boundary SNR = 1/√n, two steps of gradient descent still fit every training label but classify "
          "fresh inputs nearer chance than perfect (harmful).", "paper2_snr_heatmap",
          "the cells of the same map with SNR < 1/√n, averaged", paper2_below_rule),
]
OFFLINE_CLAIMS = [  # claims whose test needs what this machine cannot reach
    (S, "Table 2", "The paper's own backbones and data sets (ViT-B/16-in21k, bert-base-uncased; MNIST, CIFAR10, "
     "STL10, MedMNIST, SST-2, AG-news, TREC) show the same.", "table2_finetune",
     "the model and dataset hubs are unreachable here; the `paper` profile runs them where they are reachable"),
]


def evaluate(records: dict[str, dict], strict: bool = False) -> list[Entry]:
    """Every claim whose page ran, with its verdict; claims the profile does not compute are left out. `strict` (a
    build's records, which hold every key their notebooks write): a rule that reads a key the record does not hold,
    or a test that names a setting it does not hold, stops the ledger with one line (AbsentKey) — a misspelt name,
    not a claim left out; hand-built records in tests may hold only the keys of the claim they test."""
    entries = []
    for claim in CLAIMS:
        if claim.page not in records:
            continue
        record = Record(records[claim.page], strict)
        try:
            finding = claim.rule(record)
        except AbsentKey as err:
            raise AbsentKey(f"the ledger's rule {claim.rule.__name__} for {claim.page} reads {err}") from None
        except KeyError:
            continue  # not computed at this profile
        try:
            test = claim.test.format(p=SettingsSaid(records[claim.page].get("parameters", {})))
        except KeyError as err:
            if strict:
                raise AbsentKey(f"the ledger's test for {claim.page} names the setting {err}, which its record does "
                                "not hold") from None
            continue
        entries.append(Entry(replace(claim, test=test), finding, tuple(record.read)))
    for paper, where, text, page, why in OFFLINE_CLAIMS:
        if page in records:
            entries.append(Entry(Claim(paper, where, text, page, why, lambda m: None), Finding(UNTESTABLE, "—", why), ()))
    return entries


def verdict_counts(entries: list[Entry]) -> dict[str, int]:
    counts = dict.fromkeys(VERDICTS, 0)
    for entry in entries:
        counts[entry.finding.verdict] += 1
    return {k: v for k, v in counts.items() if v}
