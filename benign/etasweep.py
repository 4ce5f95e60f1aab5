"""The label-noise (η) sweep of paper 1's appendix: the points it runs and where its Eq. 9 ratio collapses.

The Eq. 9 ratio is the clean samples' cumulative 𝔖 over the noisy samples'. The paper reports it above one up to
η = 0.6, then 0.78 at η = 0.65 and 0.50 at η = 0.7, with test accuracy 0.579 and 0.505 there (at least 0.986 below).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import thresholds
from .data import noise_mask
from .words import and_list

PAPER_LAST_ABOVE, PAPER_FIRST_BELOW, PAPER_SECOND_BELOW = 0.6, 0.65, 0.7  # η: the paper's ratio > 1, then < 1 twice
AUTHORS_SETTINGS = ("d", "signal_norm", "seed", "n", "n_test", "T", "rho", "noise_ratio", "learning_rate", "num_steps",
                    "n_relevant", "dtype")  # what their main_math_frak.py takes (`benign.authors.math_frak_chunk`)


def replicate_points(points: list[dict], seeds: list[int], noise_ratio: float) -> list[dict]:
    """The page's own points at η = `noise_ratio`, once per seed (every other setting, the model's included, kept)."""
    at = [p for p in points if math.isclose(p["noise_ratio"], noise_ratio)]
    if not at:
        raise ValueError(f"no point of the sweep has noise_ratio {noise_ratio}")
    return [dict(p, seed=s) for s in seeds for p in at]


def in_authors_setting(point: dict) -> bool:
    """Whether a point is main_math_frak.py's setting: p alone trained from W = I, as many weakly relevant tokens of
    each kind as relevant ones."""
    return not point["train_W"] and point["W_init"] == "identity" and point["n_weak"] == point["n_relevant"]


def authors_points(points: list[dict]) -> list[dict]:
    """The page's points as the transcription of main_math_frak.py takes them (only the settings it knows)."""
    if not all(in_authors_setting(p) for p in points):
        raise ValueError("main_math_frak.py trains p alone from W = I with n_weak = n_relevant: a point differs")
    return [{k: p[k] for k in AUTHORS_SETTINGS if k in p} for p in points]


def at_eta(table: pd.DataFrame, noise_ratio: float, column: str) -> float:
    """The value of `column` at η = `noise_ratio` in a table of one sweep (NaN where the grid lacks that η)."""
    rows = table[np.isclose(table.noise_ratio.to_numpy(dtype=float), noise_ratio)]
    return float(rows[column].iloc[0]) if len(rows) else math.nan


def ratio_above_one_up_to(noise_ratio, ratio) -> float:
    """The largest η of the grid up to which the ratio stays above one at every η (NaN if it is not above one at the
    smallest η); the grid's largest η if it never falls."""
    order = np.argsort(np.asarray(noise_ratio, dtype=float))
    eta, r = np.asarray(noise_ratio, dtype=float)[order], np.asarray(ratio, dtype=float)[order]
    falls = np.flatnonzero(~(r > 1))  # NaN counts as not above one
    last = len(eta) - 1 if len(falls) == 0 else falls[0] - 1
    return float(eta[last]) if last >= 0 else math.nan


def same_run(n: int, eta_a: float, eta_b: float, label_noise: str = "deterministic", seed: int = 0) -> bool:
    """Whether two noise rates flip the same training samples (then the runs are one run)."""
    return bool((noise_mask(n, eta_a, label_noise, seed) == noise_mask(n, eta_b, label_noise, seed)).all())


def collapse(table: pd.DataFrame, n: int, label_noise: str = "deterministic", seed: int = 0) -> dict:
    """Where the Eq. 9 ratio (`frak_ratio`) of one sweep over η at `n` training samples collapses, against the paper.

    `up_to`: the largest η up to which the ratio stays above one; the ratio and test accuracy at η = 0.65 and 0.7;
    `same_run`: whether η = 0.6 and 0.65 flip the same samples; `ratio_as_paper`: the paper's collapse of the ratio,
    above one at every η ≤ 0.6 and below one at 0.65 and 0.7; `as_paper`: that, and the test accuracy below
    `thresholds.NEAR_CHANCE` at 0.65 and 0.7.
    """
    up_to = ratio_above_one_up_to(table.noise_ratio, table.frak_ratio)
    out = {"up_to": up_to, "same_run": same_run(n, PAPER_LAST_ABOVE, PAPER_FIRST_BELOW, label_noise, seed)}
    for eta in (PAPER_FIRST_BELOW, PAPER_SECOND_BELOW):
        out[f"ratio_{eta:.2f}"] = at_eta(table, eta, "frak_ratio")
        out[f"test_acc_{eta:.2f}"] = at_eta(table, eta, "test_acc")
    after = (PAPER_FIRST_BELOW, PAPER_SECOND_BELOW)
    out["ratio_as_paper"] = bool(math.isclose(up_to, PAPER_LAST_ABOVE) and all(out[f"ratio_{eta:.2f}"] < 1
                                                                             for eta in after))
    near_chance = thresholds.NEAR_CHANCE.value
    out["as_paper"] = out["ratio_as_paper"] and all(out[f"test_acc_{eta:.2f}"] < near_chance for eta in after)
    return out


NO_FLIP = "no label flipped"  # the Eq. 9 ratio where no label is flipped: no noisy sample to divide by


def digits(value: float, spec: str = ".3f") -> str:
    """A number of the page's tables to a fixed number of digits, so a column's numbers line up ('1.370', not
    '1.37'); '—' where it was not measured (NaN)."""
    return "—" if value != value else format(value, spec)


def ratio_cells(ratio) -> list[str]:
    """An Eq. 9 ratio column as a table shows it: each ratio to three decimals (`digits`), and `NO_FLIP` where the
    noisy samples' sum is empty (the ratio is infinite), never '∞'."""
    return [NO_FLIP if np.isinf(r) else digits(r) for r in np.asarray(ratio, dtype=float)]


def at_least_words(values, fmt: str = ".3f", top: float = 1.0) -> str:
    """The lowest of `values` as 'at least 0.986'; where it reads as `top` (every test sample right), that number
    alone ('1.000'): 'at least 1.000' says less than it seems."""
    low = format(float(np.min(values)), fmt)
    return low if low == format(top, fmt) else f"at least {low}"


def edge_crossing(by_n: dict[int, dict]) -> tuple[int, int] | None:
    """The first two neighbouring n of a sweep (`collapse` results by n) between which the η up to which the ratio
    stays above one passes the paper's 0.6, from above it to below it; None where it does not."""
    ns = sorted(by_n)
    up_to = {m: by_n[m].get("up_to", math.nan) for m in ns}
    return next(((a, b) for a, b in zip(ns, ns[1:]) if up_to[a] > PAPER_LAST_ABOVE > up_to[b]), None)


def collapse_sentence(rows: dict[str, dict[int, dict]]) -> str:
    """A sentence saying which n reproduces the paper's collapse, per trainer: `rows` maps a trainer's name (as the
    sentence says it) to its `collapse` results by n. Where none does, it names those reproducing the ratio's collapse
    alone, or else between which two n of the sweep the η up to which the ratio stays above one crosses the paper's
    0.6, if it does."""
    parts = []
    for who, by_n in rows.items():
        if not by_n:
            continue
        ns = sorted(by_n)
        hits = [m for m in ns if by_n[m]["as_paper"]]
        tried = and_list([f"{m:,}" for m in ns])
        if hits:
            parts.append(f"{who} reproduces it at n = {and_list([f'{m:,}' for m in hits])} (of n = {tried})")
            continue
        ratio_hits = [m for m in ns if by_n[m]["ratio_as_paper"]]
        if ratio_hits:
            parts.append(f"{who} reproduces the ratio's collapse at n = {and_list([f'{m:,}' for m in ratio_hits])} but "
                         f"not the fall of the test accuracy (of n = {tried})")
            continue
        part = (f"{who} does not reproduce it at n = {tried}, the only n it ran" if len(ns) == 1 else
                f"{who} reproduces it at none of n = {tried}")
        crossing = edge_crossing(by_n)
        if crossing:
            a, b = crossing
            part += (f": its ratio stays above one up to η = {by_n[a]['up_to']:.2f} at n = {a:,} and only up to "
                     f"{by_n[b]['up_to']:.2f} at n = {b:,}, so the paper's edge lies between these two n")
        parts.append(part)
    return "; ".join(parts) + "." if parts else ""


def unstated_n_said(by_n: dict[int, dict]) -> str:
    """Whether the appendix's unstated n can account for the comparison table's misses, from this page's trainer's
    `collapse` results by n: 'The sweep over n above reproduces the paper's collapse at n = 200, so the unstated n
    can account for the table's misses.'; where no n does, that the unstated n does not account for them — unless the
    η up to which the ratio stays above one passes the paper's 0.6 between two n run (`edge_crossing`): then an n
    between them, not run, might."""
    ns = sorted(by_n)
    hits = [m for m in ns if by_n[m]["as_paper"]]
    if hits:
        return (f"The sweep over n above reproduces the paper's collapse at n = {and_list([f'{m:,}' for m in hits])}, "
                "so the unstated n can account for the table's misses.")
    none = f"the sweep over n above reproduces the paper's collapse at none of n = {and_list([f'{m:,}' for m in ns])}"
    crossing = edge_crossing(by_n)
    if crossing:
        return (f"None of the n run here accounts for the table's misses: {none}. But the ratio's edge passes "
                f"η = 0.6 between n = {crossing[0]:,} and {crossing[1]:,}, so an n between them, not run here, might.")
    return f"The unstated n does not account for the table's misses: {none}."
