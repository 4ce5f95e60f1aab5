"""What Table 2's runs show, in numbers and words: whether each row can test the paper's claim (its checks), what
each cell with noise fitted and cost against its controls (its findings), and the sentences the page and the backbone
study say of them; `read_table2` gathers the page's reading as one typed result (`Table2Reading`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import thresholds, timing
from ..words import and_list, count, decimals, percent, reader_name, share_words, signed, slope_words, span_of
from .backbones import BACKBONE_LABELS
from .report import summarize, table_metrics
from .runs import Protocol, Task


REACH_TESTS_CLAIM = thresholds.MAJORITY.value  # a row tests the paper's claim only if free scores reach most flipped
CLEAN_FITTED = thresholds.REAL_FITTED.value  # labels … and phase 2 fits (nearly) all its clean labels


def stopped_by_cap(fitted, n, epochs, max_epochs: int, max_epochs_from_n: int):
    """Which cells (their shares of labels `fitted`, sizes `n` and most `epochs` a seed ran) the epoch cap
    (`max_epochs` for n ≥ `max_epochs_from_n`; 0: no cap) stopped before they fitted `thresholds.REAL_FITTED` of
    their labels: how many the whole schedule would fit is not measured there."""
    return bool(max_epochs) & (fitted < CLEAN_FITTED) & (n >= max_epochs_from_n) & (epochs <= max_epochs)


def row_checks(summary: pd.DataFrame, max_epochs: int = 0, max_epochs_from_n: int = 0) -> pd.DataFrame:
    """Per data set: can its runs test the paper's claim at all? Columns: dataset, clean_train_acc (mean over its
    cells without noise whose fit is measured: those the epoch cap stopped before fitting, `stopped_by_cap`, are left
    out), reach_free and reach_token (mean over its cells with noise: shares of the flipped labels free scores can
    fit and a single token gives), fitted_noisy (the share phase 2 fitted, over its cells with noise whose fit is
    measured, as the clean ones), test_minus_base (points, mean over its
    cells with noise), tests_claim, why not, and clean_capped (how many clean cells were left out).

    A row whose clean labels phase 2 does not fit, or most of whose flipped labels no attention over the last
    layer's tokens can fit, does not test "attention fits the noise and stays accurate": it is not a miss of the
    claim but a backbone that cannot show it."""
    rows = []
    for ds, part in summary.groupby("dataset", sort=False):
        clean, noisy = part[part.noise_ratio == 0], part[part.noise_ratio > 0]
        capped_clean = stopped_by_cap(clean.train_acc, clean.n, clean.epochs_max, max_epochs, max_epochs_from_n)
        clean = clean[~capped_clean]
        measured = noisy[~stopped_by_cap(noisy.fitted_noisy, noisy.n, noisy.epochs_max, max_epochs, max_epochs_from_n)]
        acc = float(clean.train_acc.mean()) if len(clean) else np.nan
        reach = float(noisy.reach_free.mean()) if len(noisy) and noisy.reach_free.notna().any() else np.nan
        why = ""
        if acc == acc and acc < CLEAN_FITTED:
            why = "phase 2 does not fit its clean labels"
        elif reach == reach and reach < REACH_TESTS_CLAIM:
            why = "most flipped labels are out of reach of any attention over its last layer's tokens"
        rows.append({"dataset": ds, "clean_train_acc": acc, "reach_free": reach,
                     "reach_token": float(noisy.reach_token.mean()) if len(noisy) else np.nan,
                     "fitted_noisy": float(measured.fitted_noisy.mean()) if len(measured) else np.nan,
                     "test_minus_base": float(100 * (noisy.test_acc - noisy.base_acc).mean()) if len(noisy) else np.nan,
                     "tests_claim": not why, "why": why, "clean_capped": int(capped_clean.sum())})
    return pd.DataFrame(rows)


def check_metrics(checks: pd.DataFrame) -> dict:
    """<dataset>_clean_train_acc, _reach_free_mean, _reach_token_mean, _tests_claim (1 or 0): what
    `expected.untestable` reads."""
    out = {}
    for _, r in checks.iterrows():
        out.update({f"{r.dataset}_clean_train_acc": r.clean_train_acc, f"{r.dataset}_reach_free_mean": r.reach_free,
                    f"{r.dataset}_reach_token_mean": r.reach_token, f"{r.dataset}_tests_claim": float(r.tests_claim)})
    return {k: float(v) for k, v in out.items() if v == v}


def clean_fit_words(clean_train_acc: float, capped: int = 0) -> str:
    """How much of its clean labels phase 2 fits (training accuracy at η = 0), against `thresholds.REAL_FITTED`,
    and how many clean cells the epoch cap stopped before fitting (`capped`, left out): 'on clean labels phase 2
    fits 92% of the training labels, fewer than the 95% that count as fitted'."""
    if clean_train_acc != clean_train_acc:
        return "this profile runs no cell without noise, so whether phase 2 fits clean labels is not measured"
    side = "at least" if clean_train_acc >= CLEAN_FITTED else "fewer than"
    left = (f" over the clean cells whose fit is measured ({count(capped, 'cell')} that the epoch cap stopped before "
            "fitting left out)" if capped else "")
    return (f"on clean labels phase 2 fits {percent(clean_train_acc)} of the training labels{left}, {side} the "
            f"{percent(CLEAN_FITTED)} that count as fitted")


def why_words(r) -> str:
    """Why a `row_checks` row does not test the claim, with its measured numbers and the thresholds ('' if it does)."""
    if r.tests_claim:
        return ""
    if r.clean_train_acc == r.clean_train_acc and r.clean_train_acc < CLEAN_FITTED:
        return clean_fit_words(r.clean_train_acc, r.clean_capped)
    return (f"free attention over its last layer's tokens reaches {percent(r.reach_free)} of its flipped labels, "
            f"below the {percent(REACH_TESTS_CLAIM)} a test of the claim needs")


def check_words(checks: pd.DataFrame) -> dict[str, str]:
    """Glued words of the page: fashion_reading, whether the Fashion-MNIST row is counted (its clean fit against
    `thresholds.REAL_FITTED` where it is; where it is not, the row's reading, `rows_reading`, has said why), or that
    this profile does not run it."""
    fashion = checks[checks.dataset == "fashion_mnist"]
    if fashion.empty:
        return {"fashion_reading": "this profile does not run it"}
    r = fashion.iloc[0]
    return {"fashion_reading": (
        f"{clean_fit_words(r.clean_train_acc, r.clean_capped)}, and the row tests the claim and is counted"
        if r.tests_claim else
        "as its reading above says, the row does not test the claim: it stays in the table for what it shows, "
        "outside the paper-vs-here count")}


def rows_reading(found: pd.DataFrame, checks: pd.DataFrame, stopped: pd.Series | None = None) -> dict[str, str]:
    """Glued words of the page (numbers in them are measured, never typed): <kind>_rows_reading, per row of a kind of
    `found`, the shares of its flipped labels within reach, given by a single token and fitted, and its test minus
    base accuracy, all over the same cells — those whose fit is measured (the cells the epoch cap stopped before they
    fitted, `stopped` from `capped`, left out and named) —, then whether it tests the claim (`row_checks`, and why
    not, once)."""
    stopped = pd.Series(False, index=found.index) if stopped is None else stopped
    share = lambda v: share_said(v / 100)  # noqa: E731
    words = {}
    for kind, part in found.groupby("kind"):
        parts = []
        for dataset, cells in part.groupby("dataset", sort=False):
            r = checks[checks.dataset == dataset].iloc[0]
            measured = cells[~stopped[cells.index]]
            over = ("" if len(measured) == len(cells) else
                    f" over its {count(len(measured), 'cell')} with noise whose fit is measured")
            mean = lambda column: measured[column].mean()  # noqa: E731
            verdict = "tests the claim" if r.tests_claim else f"not testable with this backbone: {why_words(r)}"
            parts.append(f"{reader_name(dataset)}{over}: {share(mean('within reach of free attention (%)'))} of the "
                         f"flipped labels within reach, {share(mean('a single token gives it (%)'))} given by a single "
                         f"token, {share(mean('flipped labels fitted (%)'))} fitted by phase 2, test minus base "
                         f"{signed(mean('test − base (points)'), '+.1f')} points ({verdict})")
        words[f"{kind}_rows_reading"] = "; ".join(parts)
    return words


def row_title(task: Task) -> str:
    """A row's title on a figure: the data set's reader name and the backbone's short name (its label up to the
    parenthesis: 'Rotten Tomatoes · all-MiniLM-L6-v2')."""
    return f"{reader_name(task.dataset)} · {BACKBONE_LABELS.get(task.backbone, task.backbone).split(' (')[0]}"


def findings(summary: pd.DataFrame, kinds: dict[str, str], checks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per data set and n, with label noise: were the noisy labels fitted, and what did it cost the test accuracy?
    (`kinds`: each data set's kind, "text" or "image".)

    Columns: dataset, kind (text or image), η, n, whether the row tests the claim (`row_checks`), the shares of
    flipped labels within reach (free scores; a single token) and fitted (means over seeds), the
    training accuracy, the phase-2 epochs (most of the seeds), the seeds and how many of them stopped because they
    fitted, and the test accuracy minus the base accuracy and
    minus the same cell without noise (percentage points).
    """
    testable = dict(zip(checks.dataset, checks.tests_claim)) if checks is not None else {}
    clean = summary[summary.noise_ratio == 0].set_index(["dataset", "n"]).test_acc
    rows = []
    pct = lambda v: 100 * v if pd.notna(v) else np.nan  # noqa: E731
    for _, r in summary[summary.noise_ratio > 0].iterrows():
        rows.append({"dataset": r.dataset, "kind": kinds[r.dataset], "η": r.noise_ratio, "n": r.n,
                     "tests the claim": testable.get(r.dataset, True),
                     "within reach of free attention (%)": pct(r.reach_free),
                     "a single token gives it (%)": pct(r.reach_token),
                     "flipped labels fitted (%)": pct(r.fitted_noisy),
                     "train accuracy (%)": 100 * r.train_acc, "epochs": r.epochs_max,
                     "seeds": r.seeds, "seeds fitted": r.fitted,
                     "test − base (points)": 100 * (r.test_acc - r.base_acc),
                     "test − clean cell (points)": 100 * (r.test_acc - clean.get((r.dataset, r.n), np.nan))})
    return pd.DataFrame(rows)


def capped(found: pd.DataFrame, max_epochs: int, max_epochs_from_n: int) -> pd.Series:
    """Which cells of `found` the epoch cap stopped before they fitted their flipped labels (`stopped_by_cap`)."""
    return stopped_by_cap(found["flipped labels fitted (%)"] / 100, found.n, found.epochs, max_epochs,
                          max_epochs_from_n)


def finding_metrics(found: pd.DataFrame, stopped: pd.Series | None = None) -> dict:
    """The numbers the page's reading quotes, per kind of row (text, image), over all its rows: how many rows and how
    many of them test the claim (`row_checks`), the shares of flipped labels within reach (free scores, a single
    token), cells with noise, how many fitted every flipped label in every seed and the share of flipped labels
    fitted (both over the cells whose fit is measured: those the epoch cap stopped before they fitted, `stopped`
    from `capped`, are left out), the most epochs a cell ran, and the test accuracy's change against the base accuracy (mean, worst, and at the
    largest n) and against the clean cell; the same as <kind>_testing_… over the cells of the rows that test the
    claim whose fit is measured, with the stopped ones counted as <kind>_testing_capped_cells.
    """
    stopped = pd.Series(False, index=found.index) if stopped is None else stopped
    out = {}
    for kind, every in found.groupby("kind"):
        claim = every[every["tests the claim"].astype(bool)]
        testing = claim[~stopped[claim.index]]
        out.update({f"{kind}_rows": float(every.dataset.nunique()),
                    f"{kind}_rows_testing": float(claim.dataset.nunique()),
                    f"{kind}_testing_capped_cells": float(stopped[claim.index].sum()),
                    f"{kind}_reach_free_mean": float(every["within reach of free attention (%)"].mean()),
                    f"{kind}_reach_token_mean": float(every["a single token gives it (%)"].mean())})
        for prefix, part in ((kind, every), (f"{kind}_testing", testing)):
            if part.empty:
                continue
            fitted = part["flipped labels fitted (%)"][~stopped[part.index]]  # whose fit is measured
            drop = part["test − base (points)"]
            largest = part[part.n == part.n.max()]
            out.update({f"{prefix}_noisy_cells": float(len(part)),
                        f"{prefix}_noisy_cells_all_fitted": float((fitted >= 100 - 1e-9).sum()),
                        f"{prefix}_flipped_fitted_mean": float(fitted.mean()),
                        f"{prefix}_epochs_max": float(part.epochs.max()),
                        f"{prefix}_test_vs_base_mean": float(drop.mean()),
                        f"{prefix}_test_vs_base_worst": float(drop.min()),
                        f"{prefix}_test_vs_base_largest_n": float(largest["test − base (points)"].mean()),
                        f"{prefix}_test_vs_clean_mean": float(part["test − clean cell (points)"].mean()),
                        f"{prefix}_test_vs_clean_worst": float(part["test − clean cell (points)"].min()),
                        **cost_trend(part, prefix)})
    return out


def finding_words(found: pd.DataFrame, num_epochs: int, stopped: pd.Series | None = None) -> dict[str, str]:
    """The page's reading of `findings` in words, per kind of row (text, image), numbers measured: <kind>_cells_fitted
    ('all 6 cells with noise', '4 of the 6 …'), <kind>_epochs_left (how many more epochs the schedule of `num_epochs`
    had at least after each cell: `epochs_left` after the longest), <kind>_test_vs_base_by_n (test minus base
    accuracy per n, mean over the rows) and <kind>_cost_trend (how the cost against the clean cell moves with n:
    `cost_trend` read by `words.trend`), the mean shares of flipped labels within reach, given by a single token and
    fitted ('none', 'all', '49%': <kind>_reach_free_words, _reach_token_words, _flipped_fitted_words; the cells
    fitted and the three shares over the same cells, those whose fit is measured: the ones the epoch cap stopped
    before they fitted, `stopped` from `capped`, are left out), the mean test
    accuracy against base and clean cell in points with a true minus sign (<kind>_test_vs_base_words,
    _test_vs_clean_words) and the latter per row and n (<kind>_cost_by_row: `cost_by_row_words`)."""
    stopped = pd.Series(False, index=found.index) if stopped is None else stopped
    out = {}
    for kind, part in found.groupby("kind"):
        measured = part["flipped labels fitted (%)"][~stopped[part.index]]
        fitted = int((measured >= 100 - 1e-9).sum())
        by_n = part.groupby("n")["test − base (points)"].mean()
        slope, se = cost_trend(part, kind).values()
        share = lambda column: percent(part[column][~stopped[part.index]].mean() / 100)  # noqa: E731 - as fitted
        cells = ("cell with noise", "cells with noise") if len(measured) == len(part) else (
            "cell with noise whose fit is measured", "cells with noise whose fit is measured")
        out.update({f"{kind}_cells_fitted": share_words(fitted, len(measured), *cells),
                    f"{kind}_epochs_left": epochs_left(num_epochs - int(part.epochs.max())),
                    f"{kind}_test_vs_base_by_n": and_list([f"{signed(v, '+.1f')} points at n = {n}"
                                                           for n, v in by_n.items()]),
                    f"{kind}_cost_trend": ("is measured at one n only" if slope != slope else
                                           slope_words(-slope, se, "grows with n", "shrinks as n grows",
                                                       "does not change measurably with n")),  # the cost: −(test − clean)
                    f"{kind}_reach_free_words": share("within reach of free attention (%)"),
                    f"{kind}_reach_token_words": share("a single token gives it (%)"),
                    f"{kind}_flipped_fitted_words": share_said(measured.mean() / 100),
                    f"{kind}_test_vs_base_words": signed(part["test − base (points)"].mean(), ".1f"),
                    f"{kind}_test_vs_clean_words": signed(part["test − clean cell (points)"].mean(), ".1f"),
                    f"{kind}_cost_by_row": cost_by_row_words(part)})
    return out


def epochs_left(left: int) -> str:
    """What the schedule had left after the longest of the cells: 'at least 1894 more epochs', 'no more epochs'."""
    return "no more epochs" if left <= 0 else f"at least {count(left, 'more epoch', 'more epochs')}"


def cost_trend(part: pd.DataFrame, prefix: str) -> dict:
    """How test − clean cell (points; the flipped labels' cost is its negative) moves with n: a least-squares slope against log n
    over the cells, with its standard error (`timing.line_fit`: NaN below two values of n, the error below three
    cells)."""
    cost = part["test − clean cell (points)"].to_numpy(dtype=float)
    keep = np.isfinite(cost)
    slope, se = timing.line_fit(np.log(part.n.to_numpy(dtype=float))[keep], cost[keep])
    return {f"{prefix}_cost_slope_log_n": slope, f"{prefix}_cost_slope_log_n_se": se}


HARM_COST = thresholds.REAL_COST.value  # points below the clean cell from which fitting flipped labels is harmful


def share_said(share: float) -> str:
    """A share (of 1) as prose says it: 'none', 'all', '63%', or to as many decimals as keep it on its side of
    `thresholds.REAL_FITTED` ('95.3%', never the '95%' it passes); 'an unmeasured share' for NaN."""
    return "an unmeasured share" if share != share else percent(share, f".{decimals(100 * share, 100 * CLEAN_FITTED, 0)}%")


def fitted_percent(share: float) -> str:
    """A share of labels fitted in % as a table shows it: whole, or to as many decimals as keep it on its side of
    `thresholds.REAL_FITTED` (`decimals`); '—' for NaN."""
    return "—" if share != share else f"{100 * share:.{decimals(100 * share, 100 * CLEAN_FITTED, 0)}f}"


def cost_points(points: float) -> str:
    """Test accuracy minus the clean cell's, in signed points to the tenth, or to as many decimals as keep it on its
    side of the harmful line −`thresholds.REAL_COST` (`decimals`): '−2.8', '−4.97', '+0.4'; '—' for NaN."""
    return "—" if points != points else signed(points, f"+.{decimals(points, -HARM_COST, 1)}f")


def findings_table(found: pd.DataFrame) -> pd.DataFrame:
    """`findings` as the page shows it: shares in whole % (fitted: `fitted_percent`), points signed with a true minus
    sign (the cost: `cost_points`)."""
    share = lambda v: "—" if v != v else f"{v:.0f}"  # noqa: E731
    return pd.DataFrame({
        "data set": found.dataset, "kind": found.kind, "η": found["η"], "n": found.n,
        "tests the claim": found["tests the claim"],
        "within reach of free attention (%)": found["within reach of free attention (%)"].map(share),
        "a single token gives it (%)": found["a single token gives it (%)"].map(share),
        "flipped labels fitted (%)": (found["flipped labels fitted (%)"] / 100).map(fitted_percent),
        "train accuracy (%)": (found["train accuracy (%)"] / 100).map(fitted_percent), "epochs": found.epochs,
        "test − base (points)": found["test − base (points)"].map(lambda v: "—" if v != v else signed(v, "+.1f")),
        "test − clean cell (points)": found["test − clean cell (points)"].map(cost_points)})


def cap_words(max_epochs: int, max_epochs_from_n: int) -> str:
    """Where the epoch cap stops a run, for the protocol's sentence: 'a run at n ≥ 1000 also stops after 300 epochs
    at the latest, what a CPU can afford for every row', 'every run also stops …', 'no epoch cap cuts a run
    short'."""
    if not max_epochs:
        return "no epoch cap cuts a run short"
    runs = f"a run at n ≥ {max_epochs_from_n}" if max_epochs_from_n else "every run"
    return f"{runs} also stops after {count(max_epochs, 'epoch')} at the latest, what a CPU can afford for every row"


def _cell_shares(r, num_epochs: int = 0) -> str:
    """'MNIST digits at n = 200 (98% within reach, 91% fitted)', and with `num_epochs` how many of its seeds ran
    that whole schedule (those that did not stop fitted): '…, all 3 seeds ran the whole schedule)'."""
    schedule = (f"; {share_words(r.seeds - r.seeds_fitted, r.seeds, 'seed', 'seeds')} ran the whole schedule"
                if num_epochs else "")
    return (f"{reader_name(r.dataset)} at n = {r.n} ({percent(r.reach / 100)} within reach, "
            f"{percent(r.fitted / 100)} fitted{schedule})")


def unfitted_words(found: pd.DataFrame, num_epochs: int, max_epochs: int, max_epochs_from_n: int) -> str:
    """What stopped the cells of `found` that fit fewer than `thresholds.REAL_FITTED` of their flipped labels, each
    with its shares within reach of free attention and fitted: most flipped labels out of reach of any attention
    (`REACH_TESTS_CLAIM`); or within reach and the run stopped by the epoch cap (`capped`), so what the schedule
    would fit is not measured; or, after the whole schedule of `num_epochs` (each cell says how many of its seeds ran
    it), labels within reach left unfitted, or as many fitted as are within reach (the rest out of reach)."""
    cells = found.rename(columns={"within reach of free attention (%)": "reach",
                                  "flipped labels fitted (%)": "fitted", "seeds fitted": "seeds_fitted"})
    short = cells[cells.fitted < 100 * CLEAN_FITTED]
    if cells.empty:
        return "no such cell runs at this profile"
    if short.empty:
        return "every cell fits its flipped labels"
    out = short.reach < 100 * REACH_TESTS_CLAIM
    cap = ~out & capped(found, max_epochs, max_epochs_from_n)[short.index]
    whole = ~out & ~cap & (short.epochs >= num_epochs)
    reached = whole & (short.fitted.round() >= short.reach.round())  # fitted as many as reach allows
    named = lambda rows: and_list([_cell_shares(r) for r in rows.itertuples()])  # noqa: E731
    parts = []
    if out.any():
        parts.append(f"in {named(short[out])} most flipped labels are out of reach of any attention over the last "
                     "layer's tokens, so no query and key can fit them")
    if cap.any():
        parts.append(f"{named(short[cap])} stopped at the {max_epochs}-epoch cap with most of them within reach: "
                     f"how many the whole schedule of {num_epochs} epochs would fit is not measured")
    scheduled = lambda rows: and_list([_cell_shares(r, num_epochs) for r in rows.itertuples()])  # noqa: E731
    schedule = f"after the whole schedule of {num_epochs} epochs"
    if (whole & ~reached).any():
        parts.append(f"{scheduled(short[whole & ~reached])} left flipped labels unfitted that are within reach "
                     f"{schedule}")
    if reached.any():
        parts.append(f"{scheduled(short[reached])} fitted, {schedule}, as many flipped labels as are within reach "
                     "(the rest are out of reach of any attention over the last layer's tokens)")
    if (rest := short[~out & ~cap & ~whole]).size:
        parts.append(f"{named(rest)} stopped at epoch {and_list([str(e) for e in rest.epochs])} with most of them "
                     "within reach")
    return "; ".join(parts) + ("" if out.any() else ": in none of them are most flipped labels out of reach")


def cost_by_row_words(found: pd.DataFrame) -> str:
    """Per row of `found`, test accuracy minus the clean cell's at each n (`cost_points`): 'Rotten Tomatoes −1.6,
    −4.0 and −8.6 points at n = 20, 200 and 1000; …'."""
    return "; ".join(f"{reader_name(ds)} {and_list([cost_points(v) for v in part['test − clean cell (points)']])} "
                     f"points at n = {and_list([str(n) for n in part.n])}"
                     for ds, part in found.groupby("dataset", sort=False))


def seed_costs(grid: pd.DataFrame, sizes: list[int]) -> pd.Series:
    """Per data set and seed of Table 2's runs (`grid`, one row per run), test accuracy with noise minus the same
    seed's clean cell, in points, mean over the n of `sizes`."""
    at = grid[grid.n.isin(sizes)].set_index(["dataset", "seed", "n"])
    clean, noisy = at[at.noise_ratio == 0].test_acc, at[at.noise_ratio > 0].test_acc
    return (100 * (noisy - clean.reindex(noisy.index).to_numpy())).groupby(level=["dataset", "seed"], sort=False).mean()


def study_words(found: pd.DataFrame, sizes: list[int], per_seed: pd.Series | None = None) -> str:
    """How the backbone study, which reads the runs of `found` at its own `sizes` of n only, sees their test accuracy
    against the clean cell: its means per row there, against its harmful line (−`thresholds.REAL_COST`), with the
    rows whose seeds (`per_seed`, from `seed_costs`) lie on both sides of the line named, and what the cells at the
    n it leaves out give, beside the page's mean over every n."""
    cost = "test − clean cell (points)"
    at = found[found.n.isin(sizes)]
    if at.empty:
        return "at none of the n of this run, so it does not read them at this profile"
    means = at.groupby("dataset", sort=False)[cost].mean()
    above = int((means > -HARM_COST).sum())
    out = (f"at n = {and_list([str(n) for n in sorted(sizes)])} only, the n of its image backbones: there test "
           "accuracy minus the clean cell's averages " +
           and_list([f"{cost_points(v)} points in {reader_name(ds)}" for ds, v in means.items()]) +
           f", {share_words(above, len(means), 'row', 'rows')} above {signed(-HARM_COST, 'g')}, the line at or below "
           "which its rule calls fitting the flipped labels harmful")
    spread = [] if per_seed is None else [
        f"{reader_name(ds)} (per seed {span_of(per_seed[ds], cost_points, ' to ')} points)" for ds in means.index
        if ds in per_seed.index.get_level_values(0) and per_seed[ds].min() <= -HARM_COST <= per_seed[ds].max()]
    if spread:
        out += f", though the seeds of {and_list(spread)} lie on both sides of it"
    left = found[~found.n.isin(sizes)]
    if left.empty:
        return out
    return out + (f"; the cells it leaves out, at n = {and_list([str(n) for n in sorted(set(left.n))])}, give "
                  f"{and_list([cost_points(v) for v in left[cost]])} points, and over every n of this page the "
                  f"rows average {cost_points(found[cost].mean())} points")


def study_sizes(parameters: dict, studies: list[tuple[dict, dict]]) -> list[int]:
    """The n at which the backbone study reads the runs of these Table-2 `parameters`: the sample sizes of the first
    of `studies` (each a profile of the study's parameters, with the Table-2 parameters its `table2_profile` resolves
    to) whose Table-2 parameters are these (the protocol and the rows; how the runs are computed aside), or none."""
    how = {"device", "processes", "progress", "cpu_threads", "out_dir"}
    same = lambda a, b: all(a[k] == b.get(k) for k in a if k not in how)  # noqa: E731
    return next((list(study["sample_sizes"]) for study, table2 in studies if same(table2, parameters)), [])


@dataclass(frozen=True)
class Table2Reading:
    """What the Table-2 page reads off its runs: the cells (`summary`, from `report.summarize`), per row whether it
    can test the claim (`checks`: `row_checks`), per cell with noise what it fitted and cost (`found`: `findings`)
    and whether the epoch cap stopped it before it fitted (`stopped`: `capped`; the claim is judged without those,
    whose fit is not measured), under the `protocol` that ran them
    on a ViT of `vit_layers`; and the n at which the backbone study reads the text rows (`study_n`) with their costs
    per seed there (`study_costs`: `seed_costs`). `metrics()` gives every number and sentence the page saves, under
    the keys it glues and the claims ledger reads."""

    summary: pd.DataFrame
    checks: pd.DataFrame
    found: pd.DataFrame
    stopped: pd.Series
    protocol: Protocol
    vit_layers: int
    study_n: list[int]
    study_costs: pd.Series

    def metrics(self) -> dict:
        """The record's numbers and the page's words (a row's checks after the cells', as the ledger reads them)."""
        p, found, checks, stopped = self.protocol, self.found, self.checks, self.stopped
        text, image = found[found.kind == "text"], found[found.kind == "image"]
        return {**table_metrics(self.summary, p.num_epochs), **finding_metrics(found, stopped),
                **finding_words(found, p.num_epochs, stopped), "num_epochs": p.num_epochs,
                **check_metrics(checks), **check_words(checks), **rows_reading(found, checks, stopped),
                "vit_depth": count(self.vit_layers, "layer"),  # the small ViT's depth
                "cap_words": cap_words(p.max_epochs, p.max_epochs_from_n),
                "image_unfitted": unfitted_words(image, p.num_epochs, p.max_epochs, p.max_epochs_from_n),
                "text_study_reading": study_words(text, self.study_n, self.study_costs)}


def read_table2(grid: pd.DataFrame, kinds: dict[str, str], protocol: Protocol, vit_layers: int,
                study_n: list[int]) -> Table2Reading:
    """The page's reading of Table 2's runs (`grid`, one row per run) under `protocol`; `kinds` gives each data set's
    kind ("text" or "image"), `study_n` the n at which the backbone study reads them (`study_sizes`)."""
    summary = summarize(grid)
    checks = row_checks(summary, protocol.max_epochs, protocol.max_epochs_from_n)
    found = findings(summary, kinds, checks)
    return Table2Reading(summary, checks, found, capped(found, protocol.max_epochs, protocol.max_epochs_from_n),
                         protocol, vit_layers, study_n, seed_costs(grid, study_n))
