"""The numbers the book compares with, what kind of target each one is, the tolerance of each (with its reason) and
the cause of every miss.

A *target* is one of `KINDS`: a number the paper reports (in its text, a table, or read off a plot: `where` says
which), a theorem's rate or statement (no number in the paper), the authors' published code measured on this
machine, a value of the second paper's seed notebook, or the book's own estimate. Each kind is counted apart: only
"paper" rows count as the paper's numbers. A number shown on two pages (Figure 5's cells are Figure 3's settings)
is counted on one of them (`counted_on`).

Tolerances live in `TOLERANCES`, each with its reason, fixed before any run. On top of the distance, a value on the
other side of a regime boundary from its target is a miss whatever its distance (`regime`): a train accuracy is a
count of fitted labels (another count is another outcome), a test accuracy is at chance or above it, an Eq.-9 ratio
is above one or not.

Each row holds three numbers: the target, the authors' code's (a transcription of their script, `benign.authors`,
run by the notebook at the paper's stated setting and stored in its metrics as `authors_<key>`) and ours. A miss
gets a cause, one of `CAUSES`: a static one where the numbers cannot decide (an offline substitute), else what the
authors' number decides — within the tolerance of ours and on our side of every regime boundary means their
published code agrees with us; missing the paper's number itself, it misses too; otherwise ours differs from their
code.

A row's `quantity` may name numbers of the record (`{n_train:.0f}`, formatted when the row is compared), so that it
says the setting the page ran.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from . import thresholds
from .words import and_list, percent, reader_name

OURS_DIFFER = "ours differs from the authors' code"
AUTHORS_AGREE = "the authors' published code agrees with us"
AUTHORS_MISS = "the authors' published code misses the paper's number too"
SUBSTITUTE = "an offline substitute"
UNEXAMINED = "not examined"  # a miss with no authors' number and no static cause
NOT_TESTABLE = "not testable with this backbone"  # measured on the page (`untestable`): not counted
# Figure 1's hand-built query is the book's construction (no such code is in the authors' repository): its
# "authors'" number is that construction on the authors' data stream, and its causes say so
CONSTRUCTION_AGREES = "the book's construction on the authors' data stream agrees with us"
CONSTRUCTION_DIFFERS = "ours differs from the book's construction on the authors' data stream"
CONSTRUCTION_MISSES = "the book's construction on the authors' data stream misses the paper's number too"
CONSTRUCTED = {"fig1_token_selection"}
CAUSES = (OURS_DIFFER, AUTHORS_AGREE, AUTHORS_MISS, SUBSTITUTE, NOT_TESTABLE, CONSTRUCTION_AGREES,
          CONSTRUCTION_DIFFERS, CONSTRUCTION_MISSES)

PAPER, THEOREM, AUTHORS, ESTIMATE, NEAREST, LIMIT = (
    "paper", "theorem", "authors' code here", "book's estimate", "nearest paper row", "plot limit")
KINDS = {
    PAPER: "a number the paper reports",
    LIMIT: "a limit of a colour bar or axis in the paper, not a value it reports: a value of ours matches when it "
           "lies on the inner side of it, up to the tolerance (above a lower end, below an upper one, inside a "
           "colour range)",
    NEAREST: "the paper's number for its nearest data set, against an offline substitute",
    AUTHORS: "the authors' published code, run on this machine (the paper reports no number)",
    THEOREM: "what a theorem states, as a number (the paper reports none)",
    ESTIMATE: "the book's own estimate",
}


@dataclass(frozen=True)
class Tolerance:
    value: float
    reason: str


def sampling(p: float, n_test: int, sets: int = 2) -> float:
    """Three standard deviations of the difference of two test accuracies near p, each on n_test fresh samples; with
    `sets` = 1, of one test accuracy against an exact target (a theorem's, chance)."""
    return 3 * math.sqrt(sets * max(p * (1 - p), 1 / n_test) / n_test)


TOLERANCES = {
    "count": Tolerance(0.0, "a train accuracy counts fitted labels: another count is another outcome"),
    "test1000_mid": Tolerance(round(sampling(0.55, 1000), 3), "two test sets of 1000 fresh samples: 3 standard "
                              "deviations of their difference near 0.55"),
    "fitted_share": Tolerance(0.0, "a share of fitted labels counts them: another count is another outcome"),
    "test1000_low": Tolerance(round(sampling(0.85, 1000), 3), "two test sets of 1000 fresh samples: 3 standard "
                              "deviations of their difference near 0.85"),
    "test1000_high": Tolerance(round(sampling(0.99, 1000), 3), "two test sets of 1000 fresh samples: 3 standard "
                               "deviations of their difference near 0.99, a near-perfect accuracy"),
    "exact1000_high": Tolerance(round(sampling(0.99, 1000, 1), 3), "one test set of 1000 fresh samples against an "
                                "exact target: 3 standard deviations of its accuracy near 0.99, a near-perfect one"),
    "exact1000_chance": Tolerance(round(sampling(0.5, 1000, 1), 3), "one test set of 1000 fresh samples against an "
                                  "exact target: 3 standard deviations of its accuracy near 0.5, chance"),
    "test100": Tolerance(round(sampling(0.99, 100), 3), "two test sets of 100 fresh samples: 3 standard deviations "
                         "of their difference near 0.99"),
    "test100_mid": Tolerance(round(sampling(0.6, 100), 3), "two test sets of 100 fresh samples: 3 standard "
                             "deviations of their difference near 0.6"),
    "loss": Tolerance(0.01, "a final logistic loss near 0.45 moves by less than this between draws of the data"),
    "plot": Tolerance(0.05, "read off the paper's plot: about one tick of its axis"),
    "colour": Tolerance(0.25, "read off the paper's colour bar: about one of its colour steps"),
    "ratio": Tolerance(0.1, "a ratio the paper quotes to two digits, from one run at an n it does not state"),
    "eta": Tolerance(0.05, "one step of the η grid"),
    "edge_grid": Tolerance(round(1.5 * (2 ** (1 / 8) - 1), 2), "the edge is read on a signal-norm grid whose "
                           "ratio is the eighth root of 2 (1.09): one grid step at √n·SNR ≈ 1.5"),
    "table2": Tolerance(0.02, "the paper's spread over seeds is at most 1 point for most cells; 2 points"),
    "table2_std": Tolerance(0.0, "twice the paper's std over seeds, at least 2 points"),
    "table2_loss": Tolerance(0.05, "a final training loss below 0.05 means the labels are fitted"),
    "nearest": Tolerance(0.10, "another model and data set: a rough guide only"),
    "nearest_loss": Tolerance(0.05, "another model and data set, a rough guide only; a final training loss below 0.05 "
                              "means the labels are fitted, so a loss is read to that band, not to an accuracy's "
                              "10 points, which would match a run that leaves labels unfitted with one that fits "
                              "them all"),
}


@dataclass(frozen=True)
class Expected:
    key: str  # the metrics.json key it is compared with
    quantity: str
    target: float
    tolerance: str  # a name in TOLERANCES
    kind: str = PAPER  # one of KINDS
    where: str = ""  # where the paper gives it: "text", "Table 2", "read off Figure 1", ...
    regime: str = ""  # "count:N" (N labels), "chance:N" (N test samples) or "ratio1": a boundary that decides alone
    note: str = ""
    cause: str = ""  # a static cause of a miss (one of CAUSES), overriding the derived one
    counted_on: str = ""  # the notebook whose row counts this same number (shown here, counted there)
    tolerance_value: float | None = None  # overrides TOLERANCES[tolerance].value (Table 2's per-cell spread)
    testable: str = ""  # a Table-2 row's data set: its cells count only where its runs can test the claim
    limits: tuple[float, float] = ()  # a colour range, `target` one of its ends (bound "inside": ours within it)
    bound: str = ""  # a plot limit's side: "lower" (ours matches at or above it) or "upper" (at or below it)
    authors_key: str = ""  # the record's key of the authors' number, where it is not authors_<key>

    @property
    def allowed(self) -> float:
        return TOLERANCES[self.tolerance].value if self.tolerance_value is None else self.tolerance_value

    @property
    def resolution(self) -> float:
        """The step of the row's values: 1/N for a share of N labels or test inputs (`regime` count:N or chance:N),
        else 0 (not known)."""
        name, _, size = self.regime.partition(":")
        return 1 / int(size) if name in ("count", "chance") else 0.0


def chance_line(n_test: int) -> float:
    """The test accuracy below which a value on `n_test` balanced test samples is chance (`regime_of`): one half plus
    two standard deviations of a coin's accuracy."""
    return 0.5 + 2 * math.sqrt(0.25 / n_test)


def regime_of(regime: str, value: float) -> str:
    """The side of the row's regime boundary a value is on (empty for a row without one)."""
    if not regime:
        return ""
    name, _, size = regime.partition(":")
    if name == "count":  # fitted labels out of `size`
        return f"{round(value * int(size))} of {size}"
    if name == "chance":  # a test accuracy on `size` samples: chance, or above it (two standard deviations)
        return "chance" if value < chance_line(int(size)) else "above chance"
    if name == "ratio1":
        return "above 1" if value > 1 else "at most 1"
    raise ValueError(f"unknown regime {regime!r}")


def within(a: float, b: float, tolerance: float) -> bool:
    """|a − b| ≤ tolerance, up to rounding (a tolerance of 0 accepts equal numbers)."""
    return bool(abs(a - b) <= tolerance + 1e-12)


def limit_side(e: Expected, value: float) -> str:
    """Where a value lies against a plot-limit row's limit, up to the tolerance: 'inside' (its inner side, or within
    the colour range of an 'inside' row), 'below' or 'above'."""
    slack = e.allowed + 1e-12
    low, high = {"lower": (e.target, math.inf), "upper": (-math.inf, e.target)}.get(e.bound, e.limits)
    return "below" if value < low - slack else "above" if value > high + slack else "inside"


def agrees(e: Expected, value: float, target: float) -> bool:
    """Within the row's tolerance of the target and on the same side of its regime boundary; for a plot limit,
    on its inner side (`limit_side`)."""
    if e.bound:
        return limit_side(e, value) == "inside"
    return within(value, target, e.allowed) and regime_of(e.regime, value) == regime_of(e.regime, target)


def miss_cause(e: Expected, authors: float | None, here: float) -> str:
    """Why a row misses: its static cause, else what the authors' number decides (see the module's docstring): it
    agrees with ours (against a plot's range: on the same side of it), or else meets the paper's number (ours differs
    from it) or misses it too."""
    if e.cause:
        return e.cause
    if authors is None:
        return UNEXAMINED
    if limit_side(e, authors) == limit_side(e, here) if e.bound else agrees(e, authors, here):
        return AUTHORS_AGREE
    return OURS_DIFFER if agrees(e, authors, e.target) else AUTHORS_MISS


# A Table-2 row tests the paper's claim only if phase 2 fits (nearly) all its clean labels (train accuracy at η = 0,
# mean over cells, at least `thresholds.REAL_FITTED`) and free attention reaches most of its flipped labels
# (`realdata.reach`, more than `thresholds.MAJORITY`).


def untestable(dataset: str, metrics: dict) -> str:
    """Why a Table-2 row's runs cannot test the paper's claim, measured (`realdata.findings.row_checks`), or "": its
    clean labels are not fitted, or most of its flipped labels are out of reach of any attention over the backbone's
    last-layer tokens (free scores per sample and head, the rest frozen as in phase 2)."""
    if metrics.get(f"{dataset}_tests_claim", 1) != 0:
        return ""
    clean, reach = metrics.get(f"{dataset}_clean_train_acc"), metrics.get(f"{dataset}_reach_free_mean")
    if clean is not None and clean < thresholds.REAL_FITTED.value:
        return (f"{NOT_TESTABLE}: on clean labels (η = 0) phase 2 fits {percent(clean)} of the training labels, fewer "
                f"than the {percent(thresholds.REAL_FITTED.value)} that count as fitted")
    return (f"{NOT_TESTABLE}: free attention over its last layer's tokens reaches {percent(reach)} of the flipped "
            f"labels, fewer than the {percent(thresholds.MAJORITY.value)} a test of the claim needs")


@dataclass(frozen=True)
class Row:
    expected: Expected
    here: float
    authors: float | None
    match: bool
    cause: str
    testable: bool = True

    @property
    def counted(self) -> bool:
        return not self.expected.counted_on and self.testable

    @property
    def result(self) -> str:
        if not self.testable:
            return "not counted"
        if self.match:
            return "match"
        e = self.expected
        if e.bound:
            return f"miss: {limit_side(e, self.here)} the {'range' if e.bound == 'inside' else 'limit'}"
        if e.regime and regime_of(e.regime, self.here) != regime_of(e.regime, e.target):
            return f"miss: {regime_of(e.regime, self.here)} against {regime_of(e.regime, e.target)}"
        return "miss"


def compare(notebook: str, metrics: dict) -> list[Row]:
    """The rows of a notebook's comparison table that its record computes (a profile may compute fewer)."""
    rows = []
    for e in EXPECTED.get(notebook, []):
        here = metrics.get(e.key)
        if here is None or here != here:
            continue  # not computed at this profile (a smaller grid, say)
        e = replace(e, quantity=e.quantity.format_map(metrics))  # the setting the page ran, where the row names it
        authors = metrics.get(e.authors_key or f"authors_{e.key}")
        authors = None if authors is None or authors != authors else float(authors)
        match = agrees(e, float(here), e.target)
        why = untestable(e.testable, metrics) if e.testable else ""
        if why:
            rows.append(Row(e, float(here), authors, False, why, testable=False))
            continue
        cause = "" if match else miss_cause(e, authors, float(here))
        if notebook in CONSTRUCTED:
            cause = {AUTHORS_AGREE: CONSTRUCTION_AGREES, OURS_DIFFER: CONSTRUCTION_DIFFERS,
                     AUTHORS_MISS: CONSTRUCTION_MISSES}.get(cause, cause)
        rows.append(Row(e, float(here), authors, match, cause))
    return rows


def misses_words(rows: list[Row]) -> str:
    """Which rows of a comparison miss, as a page says it: 'every row lies within its tolerance', 'the row
    “large signal (d = 1000, ‖μ‖ = 80): train accuracy” misses and the other 6 lie within their tolerances'."""
    missed = [f"“{r.expected.quantity}”" for r in rows if r.testable and not r.match]
    if not missed:
        return "every row lies within its tolerance" if rows else "no row is compared"
    rest = len(rows) - len(missed)
    said = f"the row {missed[0]} misses" if len(missed) == 1 else f"the rows {and_list(missed)} miss"
    return said + ("" if not rest else " and the other one lies within its tolerance" if rest == 1 else
                   f" and the other {rest} lie within their tolerances")


def counts(rows: list[Row]) -> dict[str, tuple[int, int]]:
    """(matches, compared) per kind of target, each number counted once."""
    out = {}
    for row in rows:
        if row.counted:
            hits, total = out.get(row.expected.kind, (0, 0))
            out[row.expected.kind] = (hits + row.match, total + 1)
    return {kind: out[kind] for kind in KINDS if kind in out}


def accuracies(prefix: str, label: str, train: float, test: float, test_tolerance: str, n: int, n_test: int,
               **extra) -> list[Expected]:
    """A setting's train accuracy (a count of n fitted labels) and test accuracy (chance or above, on n_test)."""
    return [Expected(f"{prefix}_train_acc", f"{label}: train accuracy", train, "count", regime=f"count:{n}", **extra),
            Expected(f"{prefix}_test_acc", f"{label}: test accuracy", test, test_tolerance, regime=f"chance:{n_test}",
                     **{k: v for k, v in extra.items() if k != "note"})]


def over_draws(rows: list[Expected]) -> list[Expected]:
    """`accuracies` rows compared with the median over the page's data draws (`benign.draws.spread`:
    `{prefix}_draws_{quantity}_median`, the draws counted by `{prefix}_draws`) instead of one draw: the paper's number
    is one draw of its data, and a single draw of ours lands on either side of a regime boundary the median does
    not straddle. The authors' number stays their one draw (`authors_{prefix}_{quantity}`)."""
    out = []
    for e in rows:
        prefix, quantity = next((e.key.removesuffix(f"_{q}"), q) for q in ("train_acc", "test_acc")
                                if e.key.endswith(f"_{q}"))
        out.append(replace(e, key=f"{prefix}_draws_{quantity}_median", authors_key=f"authors_{e.key}",
                           quantity=f"{e.quantity}, median over {{{prefix}_draws:.0f}} data draws"))
    return out


# Paper 1. Sources: ../shared/paper-facts.md. Figure 1 uses n = n_test = 100; the others 20 and 1000.
FIG1, TEXT = dict(n=100, n_test=100, where="read off Figure 1"), dict(n=20, n_test=1000, where="text")
EXPECTED = {
    "fig1_token_selection": over_draws([
        *accuracies("harmful", "harmful (c = 1)", 1.0, 0.62, "test100_mid", **FIG1),
        *accuracies("benign", "benign (c = 0.06)", 1.0, 1.0, "test100", **FIG1),
        *accuracies("not_overfitting", "not overfitting (c = 0.001)", 0.8, 1.0, "test100", **FIG1,
                    note="1 − η, η = 0.2: the noisy samples are not fitted"),
    ]),
    "fig3_dynamics": [
        *accuracies("balanced", "balanced (d = 2000, ‖μ‖ = 20)", 1.0, 0.996, "test1000_high", **TEXT),
        Expected("balanced_train_loss", "balanced (d = 2000, ‖μ‖ = 20): final train loss", 0.4526, "loss", AUTHORS,
                 note="the target: one run of the authors' main.py at its default config (seed 42, W₀ unseeded), as "
                 "this machine logged it; the authors' code column: the same script with W₀ drawn after "
                 "torch.manual_seed(42), 0.4532"),
        *accuracies("large_noise", "large noise (d = 4500, ‖μ‖ = 5)", 1.0, 0.867, "test1000_low", **TEXT),
        *accuracies("large_signal", "large signal (d = 1000, ‖μ‖ = 80)", 0.8, 1.0, "test1000_high", **TEXT,
                    note="the paper's setting of this panel is not stated in its text (unverified)"),
    ],
    "fig5_heatmap": [  # Figure 3's settings as cells of the grid (one seed each): shown here, counted there
        *accuracies("balanced", "cell d = 2000, ‖μ‖ = 20", 1.0, 0.996, "test1000_high", **TEXT, counted_on="fig3_dynamics"),
        *accuracies("large_noise", "cell d = 4500, ‖μ‖ = 5", 1.0, 0.867, "test1000_low", **TEXT, counted_on="fig3_dynamics"),
        *accuracies("large_signal", "cell d = 1000, ‖μ‖ = 80", 0.8, 1.0, "test1000_high", **TEXT, counted_on="fig3_dynamics"),
    ],
    "conditions_heatmap": [
        Expected("eq10_min_ratio", "Eq. 10 class ratio: smallest over the grid, one-sided (a match at or above the "
                 "bar's lower end, less the tolerance)", 0.5, "colour", LIMIT,
                 where="the appendix's colour bar, lower end", bound="lower"),
        Expected("eq10_max_ratio", "Eq. 10 class ratio: largest over the grid, one-sided (a match at or below the "
                 "bar's upper end, plus the tolerance)", 2.5, "colour", LIMIT,
                 where="the appendix's colour bar, upper end", bound="upper"),
    ],
    "eta_sweep": [  # the appendix does not state n: each row names the n the page ran; a miss's cause is what the
        # authors' script at that n decides (the page's sweep over n says whether another n would match)
        Expected("largest_eta_ratio_above_1", "largest η with Eq. 9 ratio > 1 (here n = {n_train:.0f})", 0.6, "eta",
                 where="appendix text", note="the appendix does not state n"),
        Expected("min_test_acc_ratio_above_1", "smallest test accuracy while the ratio is > 1 (here n = "
                 "{n_train:.0f})", 0.986, "test1000_high", where="appendix text", regime="chance:1000",
                 note="the appendix does not state n"),
        Expected("noise_ratio_0.65_frak_ratio", "η = 0.65: Eq. 9 ratio (here n = {n_train:.0f})", 0.78, "ratio",
                 where="appendix text", regime="ratio1", note="the appendix does not state n"),
        Expected("noise_ratio_0.65_test_acc", "η = 0.65: test accuracy (here n = {n_train:.0f})", 0.579,
                 "test1000_mid", where="appendix text", regime="chance:1000",
                 note="the appendix does not state n"),
        Expected("noise_ratio_0.70_frak_ratio", "η = 0.70: Eq. 9 ratio (here n = {n_train:.0f})", 0.50, "ratio",
                 where="appendix text", regime="ratio1", note="the appendix does not state n"),
        Expected("noise_ratio_0.70_test_acc", "η = 0.70: test accuracy (here n = {n_train:.0f})", 0.505,
                 "test1000_mid", where="appendix text", regime="chance:1000",
                 note="the appendix does not state n"),
    ],
    "fig7_one_layer_heatmap": [  # each end of our range against the paper's whole colour range: inside it or not
        Expected(key, label, limits[end], "plot", LIMIT, bound="inside", limits=limits,
                 where=f"Figure 7's colour bar, {limits[0]:g}–{limits[1]:g}",
                 note="the paper's colour range, a setting of its plot rather than a value it reports: a value of ours "
                 "matches when it lies inside the range; the authors' code's number is over the three named cells it "
                 "was run at, not over the whole grid")
        for key, label, limits, end in [
            ("train_loss_min", "final train loss: smallest over the grid", (0.405, 0.55), 0),
            ("train_loss_max", "final train loss: largest over the grid", (0.405, 0.55), 1),
            ("test_loss_min", "final test loss: smallest over the grid", (0.41, 0.64), 0),
            ("test_loss_max", "final test loss: largest over the grid", (0.41, 0.64), 1)]
    ],
}

# Paper 2 (Magen et al.): the paper's own numbers for these experiments were not recovered (paper-facts.md), and the
# public example notebook states no result; its rows are what its theorems state and the book's own estimates: its
# reading of two small steps (the example notebook's step size), its hypothesis that a first step too large is
# harmful (not a claim of the paper) and its first-step estimate. The small steps' rows count the clean and the
# flipped labels apart, so that their targets hold whatever number of labels the draw flips (η is a probability).
SMALL_STEPS = "the book's reading of two small steps (the two-step page's text)"
EXPECTED["paper2_two_steps"] = [
    Expected("benign_steps_train_acc", "β = (0.01, 1): train accuracy", 1.0, "count", THEOREM,
             note="interpolation", regime="count:200"),
    Expected("benign_steps_test_acc", "β = (0.01, 1): test accuracy (clean labels)", 1.0, "exact1000_high", THEOREM,
             note="near-optimal test error", regime="chance:1000"),
    Expected("small_steps_clean_fitted", "β = (0.01, 0.01): share of the clean training labels fitted", 1.0,
             "fitted_share", ESTIMATE, note=SMALL_STEPS + ", the step size of a public example notebook: "
             "attention stays near 1/2 and a clean input's signal value outweighs its noise value, so every clean "
             "label is fitted"),
    Expected("small_steps_flipped_fitted", "β = (0.01, 0.01): share of the {flipped_count:.0f} flipped training "
             "labels fitted", 0.0, "fitted_share", ESTIMATE,
             note=SMALL_STEPS + ": no flipped label is fitted (no overfitting)"),
    Expected("small_steps_test_acc", "β = (0.01, 0.01): test accuracy", 1.0, "exact1000_high", ESTIMATE,
             note=SMALL_STEPS + ": fresh inputs are classified by their signal", regime="chance:1000"),
    Expected("harmful_steps_train_acc", "β = (0.5, 1): train accuracy", 1.0, "count", ESTIMATE,
             note="the book's hypothesis, not the paper's: a first step too large still fits every label",
             regime="count:200"),
    Expected("harmful_steps_test_acc", "β = (0.5, 1): test accuracy", 0.5, "exact1000_chance", ESTIMATE,
             note="the book's hypothesis, not the paper's: chance, every input attending to its noise token",
             regime="chance:1000"),
]
EXPECTED["paper2_snr_heatmap"] = [
    Expected("edge_sqrt_n_snr_tail_mean", "√n·SNR where benign starts: mean over the large-n tail", 1.49,
             "edge_grid", ESTIMATE, note="√(2/(1 − 2η)) at η = 0.05: the book's reading of the first step (the dashed "
             "line of the map), not a number of the paper"),
]


# Table 2 / 6 of the paper (real data): base accuracy (%) and, per (η, n), (train loss, test accuracy %, its std or
# None where the paper gives none). Protocol: paper-facts.md "Real-data protocol".
TABLE2 = {
    "mnist": (95.03, {(0.0, 20): (0.00, 90.8, 1.5), (0.0, 200): (0.00, 91.8, 0.1), (0.0, 1000): (0.00, 93.9, 0.1),
                      (0.2, 20): (0.00, 84.0, 7.2), (0.2, 200): (0.04, 87.3, 1.2), (0.2, 1000): (0.14, 88.4, 0.1)}),
    "cifar10": (96.19, {(0.0, 20): (0.00, 96.0, None), (0.0, 200): (0.00, 95.9, None), (0.0, 1000): (0.00, 96.3, None),
                        (0.2, 20): (0.18, 95.5, 0.4), (0.2, 200): (0.18, 94.3, 0.3), (0.2, 1000): (0.33, 93.2, 0.1)}),
    "stl10": (99.49, {(0.0, 20): (0.00, 99.5, None), (0.0, 200): (0.00, 99.4, None), (0.0, 1000): (0.00, 99.4, None),
                      (0.2, 20): (0.08, 98.3, 1.2), (0.2, 200): (0.24, 98.5, 0.3), (0.2, 1000): (0.37, 98.3, 0.2)}),
    "pneumoniamnist": (83.33, {(0.0, 20): (0.00, 80.4, 3.1), (0.0, 200): (0.00, 79.0, 2.0),
                               (0.0, 1000): (0.00, 81.5, 0.9), (0.2, 20): (0.03, 79.2, 7.0),
                               (0.2, 200): (0.02, 81.2, 2.2), (0.2, 1000): (0.07, 82.5, 0.7)}),
    "breastmnist": (77.14, {(0.0, 20): (0.08, 74.4, 1.4), (0.0, 200): (0.12, 78.4, 1.1),
                            (0.2, 20): (0.12, 74.8, 2.0), (0.2, 200): (0.17, 76.3, 2.3)}),
    "sst2": (71.94, {(0.0, 20): (0.00, 74.2, 1.1), (0.0, 200): (0.02, 71.9, 1.0), (0.0, 1000): (0.05, 69.6, 1.8),
                     (0.2, 20): (0.10, 72.9, 2.2), (0.2, 200): (0.08, 69.0, 1.2), (0.2, 1000): (0.11, 66.3, 1.5)}),
    "agnews": (83.05, {(0.0, 20): (0.00, 84.0, 0.3), (0.0, 200): (0.00, 85.9, 0.5), (0.0, 1000): (0.00, 85.5, 0.3),
                       (0.2, 20): (0.00, 82.5, 0.7), (0.2, 200): (0.00, 77.8, 0.6), (0.2, 1000): (0.00, 69.6, 1.1)}),
    "trec": (82.87, {(0.0, 20): (0.00, 81.4, 0.3), (0.0, 200): (0.00, 78.7, 0.5), (0.0, 1000): (0.00, 82.8, 0.4),
                     (0.2, 20): (0.24, 79.2, 2.4), (0.2, 200): (0.11, 73.3, 0.8), (0.2, 1000): (0.12, 69.1, 1.7)}),
}
# The offline substitutes and the paper rows nearest to each, the first one compared with (a different model and
# data: a rough guide only). Rotten Tomatoes fresh/rotten is a sentiment task like SST-2; with the plot summaries
# as a third class it is a multi-class text task like TREC (6 question types) and AG-news (4 topics); the digits and
# Fashion-MNIST are 28×28 grey ten-class images like MNIST.
TABLE2_NEAREST = {"rotten_tomatoes": ("sst2",), "rotten_tomatoes_3class": ("trec", "agnews"), "mnist_5k": ("mnist",),
                  "fashion_mnist": ("mnist",)}
TABLE2_SAME_DATA = {"mnist_5k"}  # rows on a subset of their nearest paper row's data set: only the backbone differs


def table2_key(dataset: str, noise_ratio: float, n: int, quantity: str) -> str:
    """The metrics.json key of one Table-2 cell, e.g. mnist_noise0.2_n200_test_acc."""
    return f"{dataset}_noise{noise_ratio:g}_n{n}_{quantity}"


def _table2_entries() -> list[Expected]:
    rows = [(ds, ds, PAPER) for ds in TABLE2] + [(ours, near[0], NEAREST) for ours, near in TABLE2_NEAREST.items()]
    out = []
    for ours, paper, kind in rows:
        nearest, label = kind == NEAREST, reader_name(ours)
        extra = dict(kind=kind, where="Table 2", cause=SUBSTITUTE if nearest else "",
                     note=f"against {reader_name(paper)}: another backbone" +
                     (", on a subset of its data set" if ours in TABLE2_SAME_DATA else " and data set")
                     if nearest else "")
        base, cells = TABLE2[paper]
        # against another data set (±0.1) the paper's accuracies read to the point, as ours do (0.72, not 0.7194)
        share = (lambda percent: round(percent / 100, 2)) if nearest else (lambda percent: percent / 100)  # noqa: E731
        # a row that cannot test the claim is counted nowhere, its base accuracy included
        out.append(Expected(f"{ours}_base_acc", f"{label}: base accuracy (phase 1)", share(base),
                            "nearest" if nearest else "table2", testable=ours, **extra))
        for (eta, n), (loss, acc, std) in cells.items():  # the cells count only where the runs test the claim
            out.append(Expected(table2_key(ours, eta, n, "train_loss"), f"{label}, η = {eta:g}, n = {n}: train loss", loss,
                                "nearest_loss" if nearest else "table2_loss", testable=ours, **extra))
            spread = None if nearest else max(0.02, 2 * (std or 0) / 100)
            out.append(Expected(table2_key(ours, eta, n, "test_acc"), f"{label}, η = {eta:g}, n = {n}: test accuracy",
                                share(acc), "nearest" if nearest else "table2_std", tolerance_value=spread,
                                testable=ours, **extra))
    return out


EXPECTED["table2_finetune"] = _table2_entries()
