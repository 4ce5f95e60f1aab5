"""The appendix's conditions on the cumulative 𝔖 over Figure 5's grid, as a typed result (`Conditions`): Eq. 9, the
clean samples' 𝔖 over the noisy samples'; Eq. 10, class +1's over class −1's among the clean samples; each beside its
control, the ratio fixed at step 0 by the split of the labels alone, and beside the authors' script where it ran.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .data import balanced_labels, noise_mask
from .words import count, share_words, span

EQ10_BAR = (0.5, 2.5)  # the paper's Eq. 10 colour bar


def ratios(table: pd.DataFrame) -> pd.DataFrame:
    """A grid's runs with their Eq. 9 and Eq. 10 ratios: from `synthetic.grid_chunk`'s sums (frak_clean, frak_noisy,
    frak_clean_pos, frak_clean_neg) or from the authors' script's (`authors.math_frak_chunk`: per class, _1 and _2)."""
    if "frak_clean_1" in table:
        return table.assign(eq9_ratio=(table.frak_clean_1 + table.frak_clean_2)
                            / (table.frak_noisy_1 + table.frak_noisy_2),
                            eq10_ratio=table.frak_clean_1 / table.frak_clean_2)
    return table.assign(eq9_ratio=table.frak_clean / table.frak_noisy,  # clean over noisy cumulative 𝔖
                        eq10_ratio=table.frak_clean_pos / table.frak_clean_neg)  # class +1 over class −1 (clean)


def label_split(point: dict) -> tuple[np.ndarray, int]:
    """The observed labels (±1) of a grid's clean training samples and how many samples are flipped: the split every
    cell of the grid shares (`data.noise_mask` of the point's n, η, label noise and seed; `point` with every setting
    of `synthetic.GRID_DEFAULTS`)."""
    noisy = noise_mask(point["n"], point["noise_ratio"], point["label_noise"], point["seed"])
    return balanced_labels(len(noisy))[~noisy].numpy(), int(noisy.sum())


def smallest_cell(table: pd.DataFrame, column: str) -> str:
    """Where a grid's table (columns d, signal_norm) holds its smallest `column`, as a page says it:
    '(d, ‖μ‖) = (1000, 95)'."""
    row = table.loc[table[column].idxmin()]
    return f"(d, ‖μ‖) = ({row.d:g}, {row.signal_norm:g})"


def bar_words(low: float, high: float, bar: tuple[float, float] = EQ10_BAR) -> str:
    """Where a range of values lies against a colour bar's ends `bar`: 'reaches below its lower end 0.5 and stays
    short of its upper end 2.5', 'stays above its lower end 0.5 and reaches above its upper end 2.5'."""
    below = f"reaches below its lower end {bar[0]:g}" if low < bar[0] else f"stays above its lower end {bar[0]:g}"
    above = f"reaches above its upper end {bar[1]:g}" if high > bar[1] else f"stays short of its upper end {bar[1]:g}"
    return f"{below} and {above}"


def readings(table: pd.DataFrame, label: str = "") -> dict:
    """Eq. 9 and Eq. 10 over a table's cells (`ratios`), under keys prefixed `label`: the share of cells where Eq. 9
    holds (ratio above one), its smallest ratio, Eq. 10's range and the share within the paper's bar."""
    eq9, eq10 = table.eq9_ratio, table.eq10_ratio
    return {f"{label}eq9_share_holds": float((eq9 > 1).mean()), f"{label}eq9_min_ratio": float(eq9.min()),
            f"{label}eq10_min_ratio": float(eq10.min()), f"{label}eq10_max_ratio": float(eq10.max()),
            f"{label}eq10_share_within_0.5_2.5": float(eq10.between(*EQ10_BAR).mean()),
            f"{label}eq9_holds_words": share_words(int((eq9 > 1).sum()), len(eq9), "cell", "cells"),
            f"{label}eq10_span": span(f"{eq10.min():.2f}", f"{eq10.max():.2f}")}


@dataclass(frozen=True)
class Conditions:
    """The conditions page's reading (`metrics()`: the keys it glues and the claims ledger's Eq. 9 and Eq. 10 rules
    read). `cells`: our runs with their ratios (`ratios`); `clean_labels` and `noisy_samples`: the grid's split of
    its labels (`label_split`); `theirs`: the authors' script's runs at their cells, with their ratios (None where
    it did not run)."""

    cells: pd.DataFrame
    clean_labels: np.ndarray
    noisy_samples: int
    theirs: pd.DataFrame | None = None

    def metrics(self) -> dict:
        cells, clean = self.cells, len(self.clean_labels)
        out = readings(cells) | {"grid_cells": len(cells), "clean_samples": clean, "noisy_samples": self.noisy_samples}
        # the controls: at step 0 every sample's 𝔖 is the same, so each ratio is a count of samples
        out["eq10_ratio_step0"] = float((self.clean_labels > 0).sum() / (self.clean_labels < 0).sum())
        out["eq9_ratio_step0"] = clean / self.noisy_samples
        below = int((cells.eq9_ratio < out["eq9_ratio_step0"]).sum())
        out |= {"eq9_below_step0_share": below / len(cells),
                "eq9_below_step0_words": share_words(below, len(cells), "cell", "cells")}
        overturned = int((cells.eq9_ratio <= 1).sum())
        out["eq9_control_words"] = (
            "in none below one: Eq. 9 holding here says that training does not overturn the clean samples' majority, "
            "not that it builds one" if overturned == 0 else
            f"below one in {share_words(overturned, len(cells), 'cell', 'cells')}: there training overturns the clean "
            "samples' majority")
        out["eq10_bar_words"] = bar_words(cells.eq10_ratio.min(), cells.eq10_ratio.max())
        if self.theirs is not None:
            theirs = self.theirs
            same = cells.merge(theirs[["d", "signal_norm"]], on=["d", "signal_norm"])  # ours at the cells they ran
            out |= readings(theirs, "authors_") | readings(same, "ours_on_their_cells_")
            out |= {"authors_cells": len(theirs), "authors_cells_words": count(len(theirs), "cell"),
                    "authors_eq10_bar_words": bar_words(theirs.eq10_ratio.min(), theirs.eq10_ratio.max())}
            ours_at, their_at = smallest_cell(same, "eq10_ratio"), smallest_cell(theirs, "eq10_ratio")
            out["eq10_smallest_words"] = (f"at the same cell, {ours_at}" if ours_at == their_at else
                                          f"at different cells: ours at {ours_at}, theirs at {their_at}")
        return out
